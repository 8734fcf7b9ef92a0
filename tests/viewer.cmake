# prism-view's suites, when the viewer is built: the command line and
# headless EGL (no display needed), a GLFW window (re-runs itself under
# xvfb-run where there is no display, else skips), and the GPU checks.
if(TARGET prism-view)
  find_package(PNG QUIET)
  set(viewer_env "PRISM_VIEW=$<TARGET_FILE:prism-view>")
  prism_test(NAME viewer SOURCES test_viewer.c test_viewer_support.c
    LIBRARIES PNG::PNG ENVIRONMENT ${viewer_env} TIMEOUT 300)
  prism_test(NAME viewer_window SOURCES test_viewer_window.c test_viewer_support.c
    LIBRARIES PNG::PNG ENVIRONMENT ${viewer_env} TIMEOUT 300)
  prism_test(NAME viewer_gpu SOURCES test_viewer_gpu.c test_viewer_support.c
    LIBRARIES PNG::PNG ENVIRONMENT ${viewer_env} LABELS gpu TIMEOUT 300)
  add_dependencies(test_viewer prism-view)
endif()
