# The CUDA BVH builder against the host builder (label gpu): the bundled
# assets, hostile scenes and the generated 2.5M-triangle detector (20000
# PMTs, made by a fixture only when this suite runs).
prism_test(NAME bvh_gpu SOURCES test_bvh_gpu.c bvh_hostile.c LABELS gpu TIMEOUT 900)
if(TARGET prism-gen-detector)
  set(PRISM_BVH_GPU_DETECTOR ${CMAKE_CURRENT_BINARY_DIR}/detector_20000.dae)
  target_compile_definitions(test_bvh_gpu PRIVATE PRISM_BVH_GPU_DETECTOR="${PRISM_BVH_GPU_DETECTOR}")
  add_dependencies(test_bvh_gpu prism-gen-detector)
  add_test(NAME bvh_gpu_detector COMMAND prism-gen-detector --pmts 20000 -o ${PRISM_BVH_GPU_DETECTOR})
  set_tests_properties(bvh_gpu_detector PROPERTIES FIXTURES_SETUP bvh_gpu_detector LABELS gpu)
  set_tests_properties(bvh_gpu PROPERTIES FIXTURES_REQUIRED bvh_gpu_detector)
else()
  target_compile_definitions(test_bvh_gpu PRIVATE
    PRISM_BVH_GPU_DETECTOR="${PRISM_ASSETS}/tiny_detector.dae")
endif()
# The wide BVH on the device (label gpu): 1M rays through the 2.5M-triangle
# detector and rays through the hostile scenes, the wide walk against both
# binary walks.
if(PRISM_HAVE_CUDA)
  prism_test(NAME bvh_wide_gpu SOURCES test_bvh_wide_gpu.c bvh_wide_check.c bvh_wide_gpu_kernels.cu bvh_hostile.c
             LABELS gpu TIMEOUT 600)
  if(TARGET prism-gen-detector)
    target_compile_definitions(test_bvh_wide_gpu PRIVATE
      PRISM_BVH_WIDE_GPU_DETECTOR="${PRISM_BVH_GPU_DETECTOR}")
    set_tests_properties(bvh_wide_gpu PROPERTIES FIXTURES_REQUIRED bvh_gpu_detector)
  else()
    target_compile_definitions(test_bvh_wide_gpu PRIVATE
      PRISM_BVH_WIDE_GPU_DETECTOR="${PRISM_ASSETS}/tiny_detector.dae")
  endif()
endif()
