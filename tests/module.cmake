# Runtime compilation: the kernel cache's key and files (no GPU), the API
# on the host backend, the embedded headers and NVRTC without a device;
# (label gpu) compiling, launching, both caches, several processes, the
# device view of every placement against Prism's own trace and render.
prism_test(NAME module_cache SOURCES test_module_cache.c exec_util.c)
prism_test(NAME module SOURCES test_module.c kernels_test_scene.c exec_util.c)
if(PRISM_HAVE_CUDA)
  prism_test(NAME module_gpu SOURCES test_module_gpu.c module_gpu_kernels.cu kernels_test_scene.c exec_util.c
             LABELS gpu TIMEOUT 600)
endif()

# The custom-kernel example against the installed package: built anywhere
# (host), run where there is a CUDA device (gpu), both forms, the second
# runtime-compiled run from the disk cache.
if(PRISM_SANITIZE)
  set(custom_kernel_flags "-fsanitize=${PRISM_SANITIZE}")
endif()
set(custom_kernel_work ${CMAKE_CURRENT_BINARY_DIR}/custom-kernel-work)
add_test(NAME custom_kernel_build COMMAND ${CMAKE_COMMAND} -DMODE=build
  -DPRISM_BUILD=${PROJECT_BINARY_DIR} -DWORK=${custom_kernel_work}
  -DSOURCE=${PROJECT_SOURCE_DIR}/examples/custom_kernel -DGENERATOR=${CMAKE_GENERATOR}
  -DC_FLAGS=${custom_kernel_flags} -P ${PROJECT_SOURCE_DIR}/examples/custom_kernel/check.cmake)
set_tests_properties(custom_kernel_build PROPERTIES LABELS "host;install" TIMEOUT 300
  FIXTURES_SETUP custom_kernel PASS_REGULAR_EXPRESSION "custom_kernel: built")
add_test(NAME custom_kernel_run COMMAND ${CMAKE_COMMAND} -DMODE=run -DWORK=${custom_kernel_work}
  -DSCENE=${PROJECT_SOURCE_DIR}/assets/tiny_detector.dae
  -P ${PROJECT_SOURCE_DIR}/examples/custom_kernel/check.cmake)
set_tests_properties(custom_kernel_run PROPERTIES LABELS gpu TIMEOUT 300
  FIXTURES_REQUIRED custom_kernel PASS_REGULAR_EXPRESSION "custom_kernel: run ok"
  SKIP_REGULAR_EXPRESSION "no CUDA device, not run")
