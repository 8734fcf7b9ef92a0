# Precision at detector scale: the generated detector centred, moved 30 m
# and moved 1 km detects the same fraction of photons and renders the same
# picture, and photons grazing a mirror reflect once at every offset: on
# the host backend, and (label gpu, skipped without a device) on CUDA.
prism_test(NAME precision SOURCES test_precision.c kernels_test_scene.c TIMEOUT 300)
add_test(NAME precision_gpu COMMAND test_precision)
set_tests_properties(precision_gpu PROPERTIES SKIP_RETURN_CODE 77 LABELS gpu TIMEOUT 300
  ENVIRONMENT "PRISM_PRECISION_BACKEND=cuda")
if(TARGET prism-gen-detector)
  add_dependencies(test_precision prism-gen-detector)
endif()
