# The COLLADA loader: fixtures in tests/data/collada, every bad-input case.
prism_test(NAME collada SOURCES test_collada.c TIMEOUT 120)
prism_test(NAME collada_bad SOURCES test_collada_bad.c TIMEOUT 120)
# Files from the wild: the unit rules (Geant4's millimetres), the quirks
# forgiven with a warning, scenes without optics.
prism_test(NAME collada_wild SOURCES test_collada_wild.c TIMEOUT 120)
# The chunked parse on all cores: the same scenes, warnings and errors as serial.
prism_test(NAME collada_parallel SOURCES test_collada_parallel.c exec_util.c TIMEOUT 300)

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
  # The unit rule, in words and in JSON, and --unit overriding it.
  add_test(NAME prism_info_unit_rule
    COMMAND prism-info ${PRISM_TEST_DATA}/collada/unit_g4_meta.dae)
  set_tests_properties(prism_info_unit_rule PROPERTIES LABELS host PASS_REGULAR_EXPRESSION
    "bbox \\(m\\)   \\[-1 -1 -1\\] .. \\[1 1 1\\].*unit       0.001 m, up axis Y_UP\n  unit rule  Geant4 export \\(<meta> extras\\): millimetres.*materials  0 \\(no RINDEX anywhere: every material is vacuum\\)")
  add_test(NAME prism_info_unit_user
    COMMAND prism-info --json --unit m ${PRISM_TEST_DATA}/collada/unit_g4_pointer_ids.dae)
  set_tests_properties(prism_info_unit_user PROPERTIES LABELS host PASS_REGULAR_EXPRESSION
    "\"bbox\": \\[\\[-1000, -1000, -1000\\], \\[1000, 1000, 1000\\]\\].*\"unit_meter\": 1,.*\"unit_source\": \"user\", \"unit_rule\": \"m \\(user's choice\\)\", \"geant4_marks\": \\[\"pointer_ids\"\\], \"has_optics\": false")
  add_test(NAME prism_info_unit_bad
    COMMAND sh -c "\"$0\" --unit km \"$1\" 2>&1; echo \"exit $?\""
    $<TARGET_FILE:prism-info> ${PRISM_TEST_DATA}/collada/unit_none.dae)
  set_tests_properties(prism_info_unit_bad PROPERTIES LABELS host PASS_REGULAR_EXPRESSION
    "prism-info: --unit: expected m, cm, mm or auto, got 'km'\nexit 2")
  add_test(NAME prism_info_bad
    COMMAND prism-info --json ${PRISM_TEST_DATA}/collada/bad_cycle.dae)
  set_tests_properties(prism_info_bad PROPERTIES LABELS host PASS_REGULAR_EXPRESSION
    "bad_cycle.dae:17:18: <instance_node>: cycle: node \"a\" is placed inside itself \\(PRISM_ERROR_PARSE\\)")
endif()

# --unit on every prism-bench stage that loads a file: one parser, one
# message, exit 2 on a unit it does not know; a known one loads.
if(TARGET prism-bench)
  add_test(NAME bench_unit_option COMMAND sh -c
    "for s in load bvh bvh-gpu upload render propagate; do \
       \"$0\" $s \"$1\" --unit km > /dev/null 2> bench_unit_err.txt; rc=$?; \
       [ $rc -eq 2 ] || { echo \"$s: exit $rc\"; exit 1; }; \
       grep -q \"prism-bench $s: --unit: expected m, cm, mm or auto, got 'km'\" bench_unit_err.txt \
         || { echo \"$s: no message\"; cat bench_unit_err.txt; exit 1; }; \
     done; \"$0\" load \"$1\" --unit mm --repeat 1 --no-assimp --json"
    $<TARGET_FILE:prism-bench> ${PRISM_TEST_DATA}/collada/unit_none.dae)
  set_tests_properties(bench_unit_option PROPERTIES LABELS host
    WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}
    PASS_REGULAR_EXPRESSION "\"prism\":{\"measured\":true,[^}]*\"triangles\":12,")
endif()
