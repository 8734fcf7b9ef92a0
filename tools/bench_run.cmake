# prism-bench run FILE: prism-propagate timed whole in each layout of a run
# (it runs the prism-propagate built beside it).
target_sources(prism-bench PRIVATE ${CMAKE_CURRENT_LIST_DIR}/bench_run.c)
target_compile_definitions(prism-bench PRIVATE PRISM_BENCH_RUN)
