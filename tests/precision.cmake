# Precision at detector scale: the generated detector centred, moved 30 m
# and moved 1 km detects the same fraction of photons and renders the same
# picture (host backend; the same kernels run on CUDA).
prism_test(NAME precision SOURCES test_precision.c kernels_test_scene.c TIMEOUT 300)
if(TARGET prism-gen-detector)
  add_dependencies(test_precision prism-gen-detector)
endif()
