# prism-bench propagate FILE: photon propagation throughput.
target_sources(prism-bench PRIVATE ${CMAKE_CURRENT_LIST_DIR}/bench_propagate.c
  ${CMAKE_CURRENT_LIST_DIR}/bench_propagate_multi.c)
target_compile_definitions(prism-bench PRIVATE PRISM_BENCH_PROPAGATE)
