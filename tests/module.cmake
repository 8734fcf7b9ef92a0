# Runtime compilation: the kernel cache's key and files (no GPU), the API
# on the host backend, the embedded headers and NVRTC without a device;
# (label gpu) compiling, launching, both caches, several processes, the
# device view of every placement against Prism's own trace and render.
prism_test(NAME module_cache SOURCES test_module_cache.c)
prism_test(NAME module SOURCES test_module.c kernels_test_scene.c)
if(PRISM_HAVE_CUDA)
  prism_test(NAME module_gpu SOURCES test_module_gpu.c module_gpu_kernels.cu kernels_test_scene.c
             LABELS gpu TIMEOUT 600)
endif()
