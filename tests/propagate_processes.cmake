# prism-propagate --processes N (forked ranks, no MPI): the files against
# one process's, a failing rank, a killed rank and bad process counts.
if(TARGET prism-propagate)
  prism_test(NAME propagate_processes SOURCES test_propagate_processes.c exec_util.c rank_shares.c
    LIBRARIES prism_tool_support TIMEOUT 120
    ENVIRONMENT "PRISM_PROPAGATE=$<TARGET_FILE:prism-propagate>")
  add_dependencies(test_propagate_processes prism-propagate)
endif()
