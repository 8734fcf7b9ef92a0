/* A GL buffer as a prism_buffer, through a headless EGL context: data put
 * in with glBufferData reads back through the mapped pointer, a fill made
 * while mapped lands in the GL buffer after unmap. Without arguments it
 * runs the copy path on the host backend (Mesa's surfaceless EGL, as in CI);
 * with --cuda it needs the NVIDIA EGL device, shares it with a CUDA context
 * and asserts that CUDA-GL interop is really used (label gpu). Skipped (77)
 * where no such EGL display exists. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <EGL/egl.h>
#include <EGL/eglext.h>

#include "prism/context.h"
#include "prism/memory.h"

#ifndef EGL_PLATFORM_SURFACELESS_MESA
#define EGL_PLATFORM_SURFACELESS_MESA 0x31DD
#endif

#define GL_ARRAY_BUFFER 0x8892u
#define GL_DYNAMIC_DRAW 0x88E8u

typedef void (*gen_buffers_fn)(int, unsigned *);
typedef void (*delete_buffers_fn)(int, const unsigned *);
typedef void (*bind_buffer_fn)(unsigned, unsigned);
typedef void (*buffer_data_fn)(unsigned, ptrdiff_t, const void *, unsigned);
typedef void (*get_buffer_sub_data_fn)(unsigned, ptrdiff_t, ptrdiff_t, void *);
typedef void (*finish_fn)(void);

static bool use_cuda;
static EGLDisplay dpy = EGL_NO_DISPLAY;
static EGLContext egl_ctx = EGL_NO_CONTEXT;
static EGLSurface surface = EGL_NO_SURFACE;

static EGLDisplay cuda_display(void)
{
    PFNEGLQUERYDEVICESEXTPROC query =
        (PFNEGLQUERYDEVICESEXTPROC)eglGetProcAddress("eglQueryDevicesEXT");
    PFNEGLQUERYDEVICESTRINGEXTPROC query_string =
        (PFNEGLQUERYDEVICESTRINGEXTPROC)eglGetProcAddress("eglQueryDeviceStringEXT");
    PFNEGLGETPLATFORMDISPLAYEXTPROC platform =
        (PFNEGLGETPLATFORMDISPLAYEXTPROC)eglGetProcAddress("eglGetPlatformDisplayEXT");
    EGLDeviceEXT devices[8];
    EGLint n = 0;
    if (!query || !query_string || !platform || !query(8, devices, &n))
        return EGL_NO_DISPLAY;
    for (EGLint i = 0; i < n; i++) {
        const char *ext = query_string(devices[i], EGL_EXTENSIONS);
        if (ext && strstr(ext, "EGL_NV_device_cuda"))
            return platform(EGL_PLATFORM_DEVICE_EXT, devices[i], NULL);
    }
    return EGL_NO_DISPLAY;
}

static EGLDisplay mesa_display(void)
{
    PFNEGLGETPLATFORMDISPLAYEXTPROC platform =
        (PFNEGLGETPLATFORMDISPLAYEXTPROC)eglGetProcAddress("eglGetPlatformDisplayEXT");
    return platform ? platform(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, NULL)
                    : EGL_NO_DISPLAY;
}

/* A current GL context, or false (the suite is then skipped). */
static bool open_gl(void)
{
    EGLint major, minor;
    dpy = use_cuda ? cuda_display() : mesa_display();
    if (dpy == EGL_NO_DISPLAY || !eglInitialize(dpy, &major, &minor))
        return false;
    const EGLint config_attrs[] = {EGL_SURFACE_TYPE, EGL_PBUFFER_BIT, EGL_RENDERABLE_TYPE,
                                   EGL_OPENGL_BIT, EGL_NONE};
    EGLConfig config;
    EGLint count = 0;
    if (!eglChooseConfig(dpy, config_attrs, &config, 1, &count) || count < 1 ||
        !eglBindAPI(EGL_OPENGL_API))
        return false;
    egl_ctx = eglCreateContext(dpy, config, EGL_NO_CONTEXT, NULL);
    if (egl_ctx == EGL_NO_CONTEXT)
        return false;
    const EGLint pb_attrs[] = {EGL_WIDTH, 1, EGL_HEIGHT, 1, EGL_NONE};
    if (eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, egl_ctx))
        return true;
    surface = eglCreatePbufferSurface(dpy, config, pb_attrs);
    return surface != EGL_NO_SURFACE && eglMakeCurrent(dpy, surface, surface, egl_ctx);
}

static void close_gl(void)
{
    if (dpy == EGL_NO_DISPLAY)
        return;
    eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    if (surface != EGL_NO_SURFACE)
        eglDestroySurface(dpy, surface);
    if (egl_ctx != EGL_NO_CONTEXT)
        eglDestroyContext(dpy, egl_ctx);
    eglTerminate(dpy);
}

static void test_round_trip(void **state)
{
    (void)state;
    gen_buffers_fn gen = (gen_buffers_fn)eglGetProcAddress("glGenBuffers");
    delete_buffers_fn del = (delete_buffers_fn)eglGetProcAddress("glDeleteBuffers");
    bind_buffer_fn bind = (bind_buffer_fn)eglGetProcAddress("glBindBuffer");
    buffer_data_fn data = (buffer_data_fn)eglGetProcAddress("glBufferData");
    get_buffer_sub_data_fn get = (get_buffer_sub_data_fn)eglGetProcAddress("glGetBufferSubData");
    finish_fn finish = (finish_fn)eglGetProcAddress("glFinish");
    assert_true(gen && del && bind && data && get && finish);

    enum { N = 4096 };
    static uint32_t words[N], back[N];
    for (uint32_t i = 0; i < N; i++)
        words[i] = i * 3u + 1u;
    unsigned vbo = 0;
    gen(1, &vbo);
    bind(GL_ARRAY_BUFFER, vbo);
    data(GL_ARRAY_BUFFER, sizeof words, words, GL_DYNAMIC_DRAW);
    bind(GL_ARRAY_BUFFER, 0);
    finish();

    prism_context_desc desc = {.backend = use_cuda ? PRISM_BACKEND_CUDA : PRISM_BACKEND_HOST,
                               .share_gl = use_cuda};
    prism_context *ctx = NULL;
    assert_int_equal(prism_context_create(&desc, &ctx), PRISM_SUCCESS);
    prism_buffer *b = NULL;
    assert_int_equal(prism_buffer_create_gl(ctx, vbo, sizeof words, PRISM_GL_NONE,
                                            eglGetProcAddress, "test.vbo", &b),
                     PRISM_SUCCESS);
    printf("GL buffer through %s: interop %s\n", eglQueryString(dpy, EGL_VENDOR),
           prism_buffer_gl_interop(b) ? "active" : "unavailable (copy path)");
    assert_int_equal(prism_buffer_gl_interop(b), use_cuda);
    void *k = NULL;
    assert_int_equal(prism_buffer_gl_map(b, NULL, &k), PRISM_SUCCESS);
    assert_non_null(k);
    assert_int_equal(prism_buffer_read(b, 0, back, sizeof back), PRISM_SUCCESS);
    assert_memory_equal(back, words, sizeof words);
    uint32_t pattern[2] = {0xDEADBEEFu, 0x01234567u};
    assert_int_equal(prism_buffer_fill(b, 64, 8 * 100, pattern, 8), PRISM_SUCCESS);
    assert_int_equal(prism_buffer_gl_unmap(b, NULL), PRISM_SUCCESS);
    finish();
    bind(GL_ARRAY_BUFFER, vbo);
    get(GL_ARRAY_BUFFER, 0, sizeof back, back);
    bind(GL_ARRAY_BUFFER, 0);
    for (uint32_t i = 0; i < N; i++) {
        uint32_t want = i >= 16 && i < 16 + 200 ? pattern[(i - 16) % 2] : words[i];
        assert_int_equal(back[i], want);
    }
    prism_buffer_release(b);
    assert_int_equal(prism_context_destroy(ctx), PRISM_SUCCESS);
    del(1, &vbo);
}

int main(int argc, char **argv)
{
    use_cuda = argc > 1 && strcmp(argv[1], "--cuda") == 0;
    if (use_cuda && prism_cuda_device_count() == 0) {
        printf("no CUDA device: skipped\n");
        return 77;
    }
    if (!open_gl()) {
        printf("no %s EGL display: skipped\n", use_cuda ? "NVIDIA" : "Mesa surfaceless");
        close_gl();
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    close_gl();
    return rc;
}
