# The batch cursor and CUDA-start turns that the processes of a node share
# (tools/propagate_cursor.c), mapped from one file by several processes.
prism_test(NAME propagate_cursor SOURCES test_propagate_cursor.c
  ${PROJECT_SOURCE_DIR}/tools/propagate_cursor.c LIBRARIES prism_tool_support TIMEOUT 30)
target_include_directories(test_propagate_cursor PRIVATE ${PROJECT_SOURCE_DIR}/tools)
