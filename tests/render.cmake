# Ray-traced rendering on the host backend (known pixels of a known scene)
# and (label gpu) the CUDA backend and GL targets against the host.
prism_test(NAME render SOURCES test_render.c kernels_test_scene.c)
prism_test(NAME render_gpu SOURCES test_render_gpu.c gpu_compare.c kernels_test_scene.c LABELS gpu
           TIMEOUT 600)

# GL interop targets (PBO, VBO) through headless EGL: only where EGL is found.
find_package(OpenGL QUIET COMPONENTS EGL)
if(TARGET OpenGL::EGL)
  prism_test(NAME kernels_gl SOURCES test_kernels_gl.c kernels_test_scene.c egl_test_util.c LABELS gpu
             LIBRARIES OpenGL::EGL TIMEOUT 600)
endif()
if(TARGET test_kernels_gl)
  add_test(NAME kernels_gl_copy COMMAND test_kernels_gl --copy-path)
  set_tests_properties(kernels_gl_copy PROPERTIES SKIP_RETURN_CODE 77 LABELS host)
endif()
