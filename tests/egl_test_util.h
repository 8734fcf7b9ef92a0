/* A headless GL context for the suites that need one: the EGL device of
 * the NVIDIA driver (it names a CUDA device, so interop works), or Mesa's
 * surfaceless platform (llvmpipe, CI). No GL library is linked: entry
 * points come from eglGetProcAddress. */
#ifndef PRISM_EGL_TEST_UTIL_H
#define PRISM_EGL_TEST_UTIL_H

#include <stdbool.h>

#include <EGL/egl.h>

typedef enum test_egl_platform {
    TEST_EGL_CUDA,        /* the NVIDIA EGL device only */
    TEST_EGL_SURFACELESS, /* Mesa's surfaceless platform only */
    TEST_EGL_ANY          /* the NVIDIA device, else surfaceless */
} test_egl_platform;

typedef struct test_egl {
    EGLDisplay display;
    EGLContext context;
    EGLSurface surface; /* a small pbuffer, only where surfaceless contexts are refused */
} test_egl;

/* Make a GL context current (desktop GL, at least `major`.`minor` core when
 * major > 0). On false, what was made is released and the caller skips. */
bool test_egl_open(test_egl *egl, test_egl_platform platform, int major, int minor);
/* Release everything test_egl_open made. Safe on a failed or zeroed one. */
void test_egl_close(test_egl *egl);

#endif
