# Memory: buffer kinds, views, fills, copies, pools, the GL copy path and the
# ledger on the host backend; the same on a GPU (label gpu), with kernels
# that read mapped memory and a captured graph that allocates.
prism_test(NAME memory SOURCES test_memory.c)
if(PRISM_HAVE_CUDA)
  prism_test(NAME memory_gpu SOURCES test_memory_gpu.c memory_gpu_kernels.cu LABELS gpu TIMEOUT 600)
endif()
