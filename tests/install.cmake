# A project outside this tree builds against the installed package, through
# find_package(Prism) and through pkg-config, and runs.
if(PRISM_SANITIZE)
  set(consumer_flags "-fsanitize=${PRISM_SANITIZE}")
endif()
add_test(NAME install_consumer COMMAND ${CMAKE_COMMAND}
  -DPRISM_BUILD=${PROJECT_BINARY_DIR}
  -DWORK=${CMAKE_CURRENT_BINARY_DIR}/consumer-work
  -DSOURCE=${CMAKE_CURRENT_SOURCE_DIR}/consumer
  -DGENERATOR=${CMAKE_GENERATOR}
  -DC_FLAGS=${consumer_flags}
  -P ${CMAKE_CURRENT_SOURCE_DIR}/consumer/check.cmake)
set_tests_properties(install_consumer PROPERTIES LABELS "host;install" TIMEOUT 300
  PASS_REGULAR_EXPRESSION "consumer: cmake ok.*consumer: pkg-config ok")
