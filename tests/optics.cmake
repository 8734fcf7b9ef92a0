# The optics tables' host side: scintillation constants and emission
# spectra, Geant4 surfaces to the glisur/unified rows, what is refused and
# logged, G4DAE's constants, the generated detector's scintillator.
prism_test(NAME optics SOURCES test_optics.c TIMEOUT 120)
if(TARGET prism-gen-detector)
  add_dependencies(test_optics prism-gen-detector)
endif()
