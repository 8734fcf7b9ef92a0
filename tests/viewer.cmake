# prism-view's suites, when the viewer is built: the command line and
# headless EGL (no display needed), a GLFW window (re-runs itself under
# xvfb-run where there is no display, else skips), and the GPU checks.
if(TARGET prism-view)
  find_package(PNG QUIET)
  set(viewer_env "PRISM_VIEW=$<TARGET_FILE:prism-view>")
  prism_test(NAME viewer SOURCES test_viewer.c test_viewer_support.c exec_util.c
    LIBRARIES PNG::PNG ENVIRONMENT ${viewer_env} TIMEOUT 300)
  prism_test(NAME viewer_window SOURCES test_viewer_window.c test_viewer_support.c exec_util.c
    LIBRARIES PNG::PNG ENVIRONMENT ${viewer_env} TIMEOUT 300)
  prism_test(NAME viewer_gpu SOURCES test_viewer_gpu.c test_viewer_support.c exec_util.c
    LIBRARIES PNG::PNG ENVIRONMENT ${viewer_env} LABELS gpu TIMEOUT 300)
  add_dependencies(test_viewer prism-view)
  prism_test(NAME viewer_camera SOURCES test_viewer_camera.c ${PROJECT_SOURCE_DIR}/viewer/camera.c
    LIBRARIES m)
endif()

# The embedding example against the installed package (examples/embed).
if(TARGET prism-view AND EXISTS ${PROJECT_SOURCE_DIR}/examples/embed/check.cmake)
  if(PRISM_SANITIZE)
    set(embed_flags "-fsanitize=${PRISM_SANITIZE}")
  endif()
  add_test(NAME viewer_embed COMMAND ${CMAKE_COMMAND}
    -DPRISM_BUILD=${PROJECT_BINARY_DIR}
    -DWORK=${CMAKE_CURRENT_BINARY_DIR}/embed-work
    -DSOURCE=${PROJECT_SOURCE_DIR}/examples/embed
    -DGENERATOR=${CMAKE_GENERATOR}
    -DC_FLAGS=${embed_flags}
    -DSCENE=${PROJECT_SOURCE_DIR}/assets/tiny_detector.dae
    -P ${PROJECT_SOURCE_DIR}/examples/embed/check.cmake)
  set_tests_properties(viewer_embed PROPERTIES LABELS "host;install" TIMEOUT 300
    PASS_REGULAR_EXPRESSION "embed: run ok|embed: no display and no xvfb-run")
endif()
