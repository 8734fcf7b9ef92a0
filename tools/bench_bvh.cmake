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
# Scenes from files need the COLLADA loader (geometry/); until it is in the
# tree the bench takes soup:N only.
file(GLOB _prism_bvh_geometry ${PROJECT_SOURCE_DIR}/geometry/*.c)
foreach(_f IN LISTS _prism_bvh_geometry)
  file(STRINGS ${_f} _def REGEX "^(prism_result )?prism_scene_load\\(")
  if(_def)
    target_compile_definitions(prism-bench PRIVATE PRISM_BENCH_BVH_LOADER)
    break()
  endif()
endforeach()
