# The COLLADA loader: fixtures in tests/data/collada, every bad-input case.
prism_test(NAME collada SOURCES test_collada.c TIMEOUT 120)
prism_test(NAME collada_bad SOURCES test_collada_bad.c TIMEOUT 120)
# Files from the wild: the unit rules (Geant4's millimetres), the quirks
# forgiven with a warning, scenes without optics.
prism_test(NAME collada_wild SOURCES test_collada_wild.c TIMEOUT 120)
# The chunked parse on all cores: the same scenes, warnings and errors as serial.
prism_test(NAME collada_parallel SOURCES test_collada_parallel.c TIMEOUT 300)

# prism-info on a fixture: the JSON fields the issue names, and a clean
# failure (exit status, message naming file and element) on bad input.
if(TARGET prism-info)
  add_test(NAME prism_info_json
    COMMAND prism-info --json ${PRISM_TEST_DATA}/collada/cube.dae)
  set_tests_properties(prism_info_json PROPERTIES LABELS host PASS_REGULAR_EXPRESSION
    "\"triangles\": 48, \"vertices\": 32.*\"solids\": 4.*\"bbox\": \\[\\[-0.08, -0.02, -0.01\\], \\[0.08, 0.02, 0.12\\]\\], \"up_axis\": \"Z_UP\", \"unit_meter\": 0.01.*\"materials\": \\[\\{\"name\": \"Steel\".*\"surfaces\": \\[\\].*\"load_seconds\": ")
  add_test(NAME prism_info_human
    COMMAND prism-info ${PRISM_TEST_DATA}/collada/g4dae_mini.dae)
  set_tests_properties(prism_info_human PROPERTIES LABELS host PASS_REGULAR_EXPRESSION
    "triangles  24 unique, 36 in the world.*Water0x1 \\[RINDEX ABSLENGTH\\].*CathodeSkin0xd \\(skin\\) \\[EFFICIENCY\\]")
  add_test(NAME prism_info_bad
    COMMAND prism-info --json ${PRISM_TEST_DATA}/collada/bad_cycle.dae)
  set_tests_properties(prism_info_bad PROPERTIES LABELS host PASS_REGULAR_EXPRESSION
    "bad_cycle.dae:17:18: <instance_node>: cycle: node \"a\" is placed inside itself \\(PRISM_ERROR_PARSE\\)")
endif()
