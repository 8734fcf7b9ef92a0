# Memory: buffer kinds, views, fills, copies, pools, the GL copy path and the
# ledger on the host backend; the same on a GPU (label gpu), with kernels
# that read mapped memory and a captured graph that allocates.
prism_test(NAME memory SOURCES test_memory.c)
if(PRISM_HAVE_CUDA)
  prism_test(NAME memory_gpu SOURCES test_memory_gpu.c memory_gpu_kernels.cu LABELS gpu TIMEOUT 600)
endif()

# A GL buffer round trip through headless EGL: the copy path on the host
# backend (Mesa surfaceless, runs in CI), interop on the NVIDIA EGL device.
find_package(OpenGL QUIET COMPONENTS EGL)
if(TARGET OpenGL::EGL)
  prism_test(NAME memory_gl SOURCES test_memory_gl.c egl_test_util.c LIBRARIES OpenGL::EGL)
  if(PRISM_HAVE_CUDA)
    add_test(NAME memory_gl_gpu COMMAND test_memory_gl --cuda)
    set_tests_properties(memory_gl_gpu PROPERTIES SKIP_RETURN_CODE 77 LABELS gpu)
  endif()
endif()
