# prism-bench propagate and render --device-budget on the host backend (no
# GPU needed): the option, the rows' labels and placement, the split tree's
# photons.
if(TARGET prism-bench)
  prism_test(NAME bench_budget SOURCES test_bench_budget.c exec_util.c
    ENVIRONMENT PRISM_BENCH=$<TARGET_FILE:prism-bench> TIMEOUT 120)
  add_dependencies(test_bench_budget prism-bench)
endif()
