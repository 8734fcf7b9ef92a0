# mpirun -np 2 prism-propagate (label mpi): the gathered files against one
# process's, and a failing rank. Reported skipped, with the reason, in a
# build without MPI.
if(TARGET prism-propagate AND PRISM_HAVE_MPI)
  prism_test(NAME propagate_mpi SOURCES test_propagate_mpi.c exec_util.c rank_shares.c
    LIBRARIES prism_tool_support LABELS mpi TIMEOUT 120
    ENVIRONMENT "PRISM_PROPAGATE=$<TARGET_FILE:prism-propagate>;PRISM_MPIRUN=${MPIEXEC_EXECUTABLE}")
  add_dependencies(test_propagate_mpi prism-propagate)
elseif(TARGET prism-propagate)
  add_test(NAME propagate_mpi COMMAND ${CMAKE_COMMAND} -E echo
    "skipped: this build has no MPI (PRISM_MPI=${PRISM_MPI}; Debian: libopenmpi-dev openmpi-bin)")
  # echo exits 0: a property makes the skip explicit
  set_tests_properties(propagate_mpi PROPERTIES LABELS mpi SKIP_REGULAR_EXPRESSION "skipped:")
endif()
