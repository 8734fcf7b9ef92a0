# prism-bench bvh-gpu FILE: the CUDA BVH build against the host build, and
# render/propagate rates on each tree (needs a CUDA device at run time).
target_sources(prism-bench PRIVATE ${CMAKE_CURRENT_LIST_DIR}/bench_bvh_gpu.c
  ${CMAKE_CURRENT_LIST_DIR}/bench_kernels.c)
target_compile_definitions(prism-bench PRIVATE PRISM_BENCH_BVH_GPU)
target_link_libraries(prism-bench PRIVATE OpenMP::OpenMP_C)
