prism_test(NAME context SOURCES test_context.c)
prism_test(NAME device_choice SOURCES test_device_choice.c)
prism_test(NAME occupancy SOURCES test_occupancy.c)
# Contexts on a real device, checked against the CUDA runtime's own answers
# (context_gpu_cuda.cu): built with CUDA only, as the other GPU suites that
# call the runtime.
if(PRISM_HAVE_CUDA)
  prism_test(NAME context_gpu SOURCES test_context_gpu.c context_gpu_cuda.cu LABELS gpu)
  add_test(NAME context_gpu_prewarm COMMAND test_context_gpu --prewarm)
  set_tests_properties(context_gpu_prewarm PROPERTIES SKIP_RETURN_CODE 77 LABELS gpu)
endif()

# GL sharing needs a GL context: a GLFW window (under Xvfb) and a headless
# EGL context. Only where GLFW and EGL are found.
find_package(glfw3 3.3 QUIET)
find_package(OpenGL QUIET COMPONENTS OpenGL EGL)
if(glfw3_FOUND AND TARGET OpenGL::EGL AND TARGET OpenGL::GL)
  prism_test(NAME context_gl SOURCES test_context_gl.c egl_test_util.c LABELS gpu
             LIBRARIES glfw OpenGL::EGL OpenGL::GL)
endif()
if(TARGET test_context_gl)
  add_test(NAME context_gl_mesa COMMAND test_context_gl --expect-not-cuda)
  set_tests_properties(context_gl_mesa PROPERTIES SKIP_RETURN_CODE 77 LABELS gpu
    ENVIRONMENT "__GLX_VENDOR_LIBRARY_NAME=mesa")
endif()
