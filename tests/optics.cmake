# The optics tables' host side: scintillation constants and emission
# spectra, Geant4 surfaces to the glisur/unified rows, what is refused and
# logged, G4DAE's constants, the generated detector's scintillator.
prism_test(NAME optics SOURCES test_optics.c TIMEOUT 120)
if(TARGET prism-gen-detector)
  add_dependencies(test_optics prism-gen-detector)
endif()

# prism-info on a file with what Prism ignores: the ignored properties with
# their counts, each surface's model and whether Prism models it.
if(TARGET prism-info)
  add_test(NAME prism_info_optics COMMAND prism-info ${PRISM_TEST_DATA}/collada/g4dae_optics.dae)
  set_tests_properties(prism_info_optics PROPERTIES LABELS host PASS_REGULAR_EXPRESSION
    "LutSkin0x21 \\(skin\\) \\[REFLECTIVITY\\]; LUT dielectric_dielectric polished, sigma_alpha 0: NOT modelled[^\n]*bare boundary\n    BareSkin0x22 \\(skin\\) \\[\\]; unified dielectric_dielectric polished, sigma_alpha 0: modelled \\(changes nothing: a bare boundary\\)\n    ChromaSkin0x23 \\(skin\\) \\[detect REFLECTIVITY\\]; Chroma's probabilities: modelled\n    PaintSkin0x24 \\(skin\\) \\[RINDEX TRANSMITTANCE\\]; unified dielectric_dielectric groundbackpainted, sigma_alpha 0.1: modelled\n  ignored    GROUPVEL \\(2 materials\\), ReemissionFASTTIMECONSTANT \\(1 material\\), REEMISSIONPROB \\(1 material\\), REFLECTIVITY \\(2 surfaces\\), TRANSMITTANCE \\(1 surface\\)\n")
  add_test(NAME prism_info_optics_json
    COMMAND prism-info --json ${PRISM_TEST_DATA}/collada/g4dae_optics.dae)
  set_tests_properties(prism_info_optics_json PROPERTIES LABELS host PASS_REGULAR_EXPRESSION
    "\"name\": \"LutSkin0x21\", \"kind\": \"skin\", \"properties\": \\[\"REFLECTIVITY\"\\], \"model\": \"LUT\", \"type\": \"dielectric_dielectric\", \"finish\": \"polished\", \"value\": 0, \"optics\": \"unsupported\", \"modelled\": false.*\"ignored_properties\": {\"materials\": {\"GROUPVEL\": 2, \"ReemissionFASTTIMECONSTANT\": 1, \"REEMISSIONPROB\": 1}, \"surfaces\": {\"REFLECTIVITY\": 2, \"TRANSMITTANCE\": 1}}")
endif()
