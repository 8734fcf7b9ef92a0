# prism-propagate end to end on the bundled detector (host backend), and
# (label gpu) its --validate on CUDA: exit 4, reported skipped, without a
# device; 200k photons must agree photon by photon with one.
if(TARGET prism-propagate)
  prism_test(NAME propagate_tool SOURCES test_propagate_tool.c exec_util.c
    LIBRARIES prism_tool_support ENVIRONMENT "PRISM_PROPAGATE=$<TARGET_FILE:prism-propagate>"
    TIMEOUT 120)
  add_dependencies(test_propagate_tool prism-propagate)
  add_test(NAME propagate_tool_validate COMMAND prism-propagate
    ${PRISM_ASSETS}/tiny_detector.dae --validate --count 200000 --seed 11)
  set_tests_properties(propagate_tool_validate PROPERTIES LABELS gpu SKIP_RETURN_CODE 4
    TIMEOUT 300)
endif()
