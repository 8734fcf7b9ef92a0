# prism-bench run on the host backend: prism-propagate timed in each layout
# (mpirun's where the build has MPI), the hits compared, a failing run, the
# options' mistakes.
if(TARGET prism-bench AND TARGET prism-propagate)
  set(_bench_run_env "PRISM_BENCH=$<TARGET_FILE:prism-bench>")
  if(PRISM_HAVE_MPI)
    list(APPEND _bench_run_env "PRISM_MPIRUN=${MPIEXEC_EXECUTABLE}")
  endif()
  prism_test(NAME bench_run SOURCES test_bench_run.c exec_util.c TIMEOUT 120
    ENVIRONMENT "${_bench_run_env}")
  add_dependencies(test_bench_run prism-bench prism-propagate)
endif()
