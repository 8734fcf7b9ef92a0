# The programs' manners on the command line (issue 28) where they are not
# prism-propagate's own (propagate_tool.cmake): messages, --help, units.
# Each program is passed in when it was built; the suite skips the others.
set(tools_cli_env "")
set(tools_cli_programs "")
foreach(pair "PRISM_INFO;prism-info" "PRISM_BENCH;prism-bench" "PRISM_PROPAGATE;prism-propagate"
             "PRISM_VIEW;prism-view")
  list(GET pair 0 variable)
  list(GET pair 1 program)
  if(TARGET ${program})
    list(APPEND tools_cli_env "${variable}=$<TARGET_FILE:${program}>")
    list(APPEND tools_cli_programs ${program})
  endif()
endforeach()
prism_test(NAME tools_cli SOURCES test_tools_cli.c exec_util.c ENVIRONMENT ${tools_cli_env}
  TIMEOUT 120)
if(tools_cli_programs)
  add_dependencies(test_tools_cli ${tools_cli_programs})
endif()
