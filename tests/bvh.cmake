# The BVH suites: builder invariants, CPU queries against brute force, edge
# cases, watertightness (bvh_test_util.c holds the soups and the reference),
# and the same checks on the bundled assets and a generated detector.
prism_test(NAME bvh SOURCES test_bvh.c bvh_test_util.c bvh_scalar.c TIMEOUT 600)
prism_test(NAME bvh_scenes SOURCES test_bvh_scenes.c bvh_test_util.c TIMEOUT 600)
# The build's progress callback: calls, cancel, an unchanged tree.
prism_test(NAME bvh_progress SOURCES test_bvh_progress.c bvh_test_util.c TIMEOUT 300)
if(TARGET prism-gen-detector)
  add_dependencies(test_bvh_scenes prism-gen-detector)
endif()
# prism-bench bvh runs and reports (figures are not checked: CI timing is noise).
if(TARGET prism-bench)
  add_test(NAME bench_bvh_smoke COMMAND prism-bench bvh soup:3000 --repeat 1 --json
           --width 32 --height 24 --rays 2000)
  set_tests_properties(bench_bvh_smoke PROPERTIES LABELS host TIMEOUT 120
    PASS_REGULAR_EXPRESSION "\"prism\":\\{\"build_s\":")
endif()
# prism_bvh_validate: it accepts every tree the builder makes and names the
# node and rule of each corruption.
prism_test(NAME bvh_validate SOURCES test_bvh_validate.c bvh_test_util.c TIMEOUT 300)
# Hostile scenes (bvh_hostile.c, shared with the GPU builder's tests) through
# every builder: a valid tree, and brute-force agreement on rays.
prism_test(NAME bvh_hostile SOURCES test_bvh_hostile.c bvh_hostile.c TIMEOUT 600)
# The wide BVH: the collapse's structure and the wide traversal's hits
# against the binary one's, on soups, hostile scenes and the assets.
prism_test(NAME bvh_wide SOURCES test_bvh_wide.c bvh_wide_check.c bvh_test_util.c bvh_hostile.c bvh_scalar.c TIMEOUT 300)
