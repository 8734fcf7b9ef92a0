# prism-bench bvh: Prism's BVH against Embree 3 (optional: without
# libembree-dev the subcommand still builds and says Embree was not measured).
target_sources(prism-bench PRIVATE ${CMAKE_CURRENT_LIST_DIR}/bench_bvh.c
  ${CMAKE_CURRENT_LIST_DIR}/bench_bvh_embree.c)
target_compile_definitions(prism-bench PRIVATE PRISM_BENCH_BVH)
target_link_libraries(prism-bench PRIVATE OpenMP::OpenMP_C m)
find_package(embree 3 QUIET)
if(embree_FOUND)
  target_compile_definitions(prism-bench PRIVATE PRISM_BENCH_HAVE_EMBREE)
  target_link_libraries(prism-bench PRIVATE embree)
else()
  message(STATUS "prism-bench bvh: Embree 3 not found; the bench will report Prism only")
endif()
