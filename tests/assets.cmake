# The shipped assets and the generated 192-PMT detector, checked against
# hand-derived figures. The detector is written by a setup test (a ctest
# fixture), so `ctest -R assets` regenerates it before loading it.
prism_test(NAME assets SOURCES test_assets.c)
if(TARGET prism-gen-detector)
  set(PRISM_ASSETS_DETECTOR ${CMAKE_CURRENT_BINARY_DIR}/detector_192.dae)
  add_dependencies(test_assets prism-gen-detector)
  target_compile_definitions(test_assets PRIVATE
    PRISM_GENERATED_DETECTOR="${PRISM_ASSETS_DETECTOR}")
  set(PRISM_ASSETS_UNIQUE ${CMAKE_CURRENT_BINARY_DIR}/detector_192_unique.dae)
  target_compile_definitions(test_assets PRIVATE
    PRISM_GENERATED_UNIQUE="${PRISM_ASSETS_UNIQUE}")
  add_test(NAME assets_generate COMMAND sh -c
    "\"$0\" --pmts 192 -o \"$1\" && \"$0\" --pmts 192 --unique -o \"$2\""
    $<TARGET_FILE:prism-gen-detector> ${PRISM_ASSETS_DETECTOR} ${PRISM_ASSETS_UNIQUE})
  set_tests_properties(assets_generate PROPERTIES FIXTURES_SETUP assets_detector LABELS host)
  set_tests_properties(assets PROPERTIES FIXTURES_REQUIRED assets_detector)

  # The generator's command line: deterministic output, exit 2 with a
  # message on bad options, a truthful --help.
  add_test(NAME assets_generate_deterministic COMMAND sh -c
    "\"$0\" --pmts 37 -o gen_detector_a.dae && \"$0\" --pmts=37 > gen_detector_b.dae && cmp gen_detector_a.dae gen_detector_b.dae"
    $<TARGET_FILE:prism-gen-detector>)
  add_test(NAME assets_generate_bad_options COMMAND sh -c
    "for o in --bogus '--pmts x' '--pmts -1' '--pmts 1000001' --pmts extra '--offset 1,2' \
              '--offset x,0,0' '--offset 0,0,2e6' '--offset 1,2,3,4'; do \
       \"$0\" $o > /dev/null 2> gen_detector_err.txt; rc=$?; \
       [ $rc -eq 2 ] || { echo \"$o: exit $rc\"; exit 1; }; \
       grep -q prism-gen-detector gen_detector_err.txt || { echo \"$o: no message\"; exit 1; }; \
     done"
    $<TARGET_FILE:prism-gen-detector>)
  add_test(NAME assets_generate_help COMMAND prism-gen-detector --help)
  set_tests_properties(assets_generate_help PROPERTIES
    PASS_REGULAR_EXPRESSION "World triangles: 768 \\+ 128 N")
  set_tests_properties(assets_generate_deterministic assets_generate_bad_options
    assets_generate_help PROPERTIES LABELS host WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
endif()

# prism-bench load on the smallest asset: the subcommand runs, loads with
# Prism and prints one JSON object with Prism's world triangle count.
if(TARGET prism-bench)
  add_test(NAME assets_bench_load COMMAND prism-bench load ${PROJECT_SOURCE_DIR}/assets/cube.dae
    --repeat 1 --json)
  set_tests_properties(assets_bench_load PROPERTIES LABELS host
    PASS_REGULAR_EXPRESSION "\"prism\":{\"measured\":true,[^}]*\"triangles\":12,"
    FAIL_REGULAR_EXPRESSION "prism load:")
  # PRISM_LOAD_TRACE: each stage's wall time, CPU time and page faults.
  add_test(NAME assets_load_trace COMMAND prism-bench load
    ${PROJECT_SOURCE_DIR}/assets/tiny_detector.dae --repeat 1 --no-assimp)
  set_tests_properties(assets_load_trace PROPERTIES LABELS host
    ENVIRONMENT "PRISM_LOAD_TRACE=1"
    PASS_REGULAR_EXPRESSION "prism load: write world +[0-9.]+ ms +\\(CPU +[0-9.]+ ms user +[0-9.]+ ms system, +[0-9]+ faults\\)")
endif()
