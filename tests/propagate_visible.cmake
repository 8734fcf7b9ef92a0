# prism-propagate's plan for CUDA_VISIBLE_DEVICES (tools/propagate_visible.c):
# which devices a run lets CUDA start, and its list renumbered to match.
prism_test(NAME propagate_visible SOURCES test_propagate_visible.c
  ${PROJECT_SOURCE_DIR}/tools/propagate_visible.c TIMEOUT 30)
target_include_directories(test_propagate_visible PRIVATE ${PROJECT_SOURCE_DIR}/tools)
