# prism-bench render FILE: primary rays per second at 1920x1080 from inside
# and outside the detector, per placement policy, CUDA and host backends.
target_sources(prism-bench PRIVATE ${CMAKE_CURRENT_LIST_DIR}/bench_render.c
  ${CMAKE_CURRENT_LIST_DIR}/bench_kernels.c)
target_compile_definitions(prism-bench PRIVATE PRISM_BENCH_RENDER)
