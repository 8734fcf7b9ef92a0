# Vertices shared with a GL vertex buffer (desc.gl_vertex_buffer) through
# headless EGL: the fallback on the host backend (Mesa surfaceless, runs in
# CI) and interop on the NVIDIA EGL device (label gpu), each against a plain
# upload, bit for bit.
find_package(OpenGL QUIET COMPONENTS EGL)
if(TARGET OpenGL::EGL)
  prism_test(NAME geometry_gl SOURCES test_geometry_gl.c kernels_test_scene.c egl_test_util.c
             LABELS gpu LIBRARIES OpenGL::EGL TIMEOUT 600)
  add_test(NAME geometry_gl_host COMMAND test_geometry_gl --host)
  set_tests_properties(geometry_gl_host PROPERTIES SKIP_RETURN_CODE 77 LABELS host)
endif()
