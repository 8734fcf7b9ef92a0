# prism-propagate's measure of a rank's launch (tools/propagate_launch.c):
# a process's start against its parent's, and the note it gives mpirun.
prism_test(NAME propagate_launch SOURCES test_propagate_launch.c
  ${PROJECT_SOURCE_DIR}/tools/propagate_launch.c TIMEOUT 30)
target_include_directories(test_propagate_launch PRIVATE ${PROJECT_SOURCE_DIR}/tools)
