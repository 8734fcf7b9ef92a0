/* A headless GL context for the suites that need one: the EGL device of
 * the NVIDIA driver (it names a CUDA device, so interop works), or Mesa's
 * surfaceless platform (llvmpipe, CI). No GL library is linked: entry
 * points come from eglGetProcAddress. */
#ifndef PRISM_EGL_TEST_UTIL_H
#define PRISM_EGL_TEST_UTIL_H

#include <stdbool.h>
#include <stddef.h>

#include <EGL/egl.h>

typedef enum test_egl_platform {
    TEST_EGL_CUDA,        /* the NVIDIA EGL device only */
    TEST_EGL_SURFACELESS, /* Mesa's surfaceless platform only */
    TEST_EGL_ANY          /* the NVIDIA device, else surfaceless */
} test_egl_platform;

/* The GL buffer entry points the suites use, from eglGetProcAddress. */
typedef struct test_gl {
    void (*gen_buffers)(int, unsigned *);
    void (*bind_buffer)(unsigned, unsigned);
    void (*buffer_data)(unsigned, ptrdiff_t, const void *, unsigned);
    void (*get_buffer_sub_data)(unsigned, ptrdiff_t, ptrdiff_t, void *);
    void (*delete_buffers)(int, const unsigned *);
} test_gl;

typedef struct test_egl {
    EGLDisplay display;
    EGLContext context;
    EGLSurface surface; /* a small pbuffer, only where surfaceless contexts are refused */
    test_gl gl;         /* loaded once the context is current */
} test_egl;

/* Make a GL context current (desktop GL, at least `major`.`minor` core when
 * major > 0). On false, what was made is released and the caller skips. */
bool test_egl_open(test_egl *egl, test_egl_platform platform, int major, int minor);
/* A new GL buffer on `target` of `size` bytes (from `data`, or undefined
 * when NULL) with `usage`; unbound on return. */
unsigned test_egl_buffer(const test_egl *egl, unsigned target, size_t size, const void *data,
                         unsigned usage);
/* Read `size` bytes of `buffer` back into `out`. */
void test_egl_read(const test_egl *egl, unsigned target, unsigned buffer, size_t size, void *out);
/* Release everything test_egl_open made. Safe on a failed or zeroed one. */
void test_egl_close(test_egl *egl);

#endif
