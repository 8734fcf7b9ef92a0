/* GL sharing (label gpu): a context made with share_gl lands on the CUDA
 * device of the current GL context, through a GLFW window (GLX under Xvfb)
 * and through a headless EGL context; both must pick the same device. A GL
 * context that is not on a CUDA device (Mesa's llvmpipe: run with
 * "--expect-not-cuda" and __GLX_VENDOR_LIBRARY_NAME=mesa) gives
 * PRISM_ERROR_GL_NOT_ON_CUDA_DEVICE. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GLFW/glfw3.h>

#include "prism/context.h"

static int window_device = -2, egl_device = -2;
static int expect_not_cuda;

static prism_result share(int *device)
{
    prism_context_desc desc = {.backend = PRISM_BACKEND_CUDA, .share_gl = true};
    prism_context *ctx = NULL;
    prism_result r = prism_context_create(&desc, &ctx);
    *device = -1;
    if (r == PRISM_SUCCESS) {
        assert_true(prism_context_gl_shared(ctx));
        *device = prism_context_device(ctx)->index;
        assert_int_equal(prism_context_destroy(ctx), PRISM_SUCCESS);
    } else {
        assert_null(ctx);
    }
    return r;
}

static void test_no_current_context(void **state)
{
    (void)state;
    int device;
    assert_int_equal(share(&device), PRISM_ERROR_NO_GL_CONTEXT);
}

static void test_glfw_window(void **state)
{
    (void)state;
    if (!getenv("DISPLAY") || !glfwInit())
        skip();
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
    glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
    glfwWindowHint(GLFW_VISIBLE, GLFW_FALSE);
    GLFWwindow *w = glfwCreateWindow(64, 64, "prism test", NULL, NULL);
    assert_non_null(w);
    glfwMakeContextCurrent(w);
    const char *renderer = (const char *)glGetString(GL_RENDERER);
    printf("GLFW window: GL_RENDERER = %s\n", renderer ? renderer : "?");
    prism_result r = share(&window_device);
    if (expect_not_cuda) {
        assert_int_equal(r, PRISM_ERROR_GL_NOT_ON_CUDA_DEVICE);
        printf("share_gl on a non-CUDA GL context: %s\n", prism_result_string(r));
    } else {
        assert_int_equal(r, PRISM_SUCCESS);
        printf("share_gl through the window: cuda:%d\n", window_device);
    }
    glfwMakeContextCurrent(NULL);
    glfwDestroyWindow(w);
    glfwTerminate();
}

/* The EGL device of the NVIDIA driver: glvnd may list Mesa's software
 * device too, so pick the one that names a CUDA device. */
static EGLDisplay device_display(void)
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
        printf("EGL device %d: %s\n", (int)i, ext ? ext : "(no extensions)");
        if (ext && strstr(ext, "EGL_NV_device_cuda"))
            return platform(EGL_PLATFORM_DEVICE_EXT, devices[i], NULL);
    }
    return EGL_NO_DISPLAY;
}

static void test_egl_headless(void **state)
{
    (void)state;
    if (expect_not_cuda)
        skip();
    EGLDisplay dpy = device_display();
    EGLint major, minor;
    if (dpy == EGL_NO_DISPLAY || !eglInitialize(dpy, &major, &minor))
        skip();
    const EGLint config_attrs[] = {EGL_SURFACE_TYPE, EGL_PBUFFER_BIT, EGL_RENDERABLE_TYPE,
                                   EGL_OPENGL_BIT, EGL_NONE};
    EGLConfig config;
    EGLint count = 0;
    assert_true(eglChooseConfig(dpy, config_attrs, &config, 1, &count) && count == 1);
    const EGLint pb_attrs[] = {EGL_WIDTH, 16, EGL_HEIGHT, 16, EGL_NONE};
    EGLSurface surface = eglCreatePbufferSurface(dpy, config, pb_attrs);
    assert_true(surface != EGL_NO_SURFACE);
    assert_true(eglBindAPI(EGL_OPENGL_API));
    const EGLint ctx_attrs[] = {EGL_CONTEXT_MAJOR_VERSION, 4, EGL_CONTEXT_MINOR_VERSION, 5,
                                EGL_CONTEXT_OPENGL_PROFILE_MASK, EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT,
                                EGL_NONE};
    EGLContext ctx = eglCreateContext(dpy, config, EGL_NO_CONTEXT, ctx_attrs);
    assert_true(ctx != EGL_NO_CONTEXT);
    if (!eglMakeCurrent(dpy, surface, surface, ctx))
        fail_msg("eglMakeCurrent: EGL error 0x%x", (unsigned)eglGetError());
    assert_int_equal(share(&egl_device), PRISM_SUCCESS);
    printf("share_gl through headless EGL (%s): cuda:%d\n", eglQueryString(dpy, EGL_VENDOR), egl_device);
    eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    eglDestroyContext(dpy, ctx);
    eglDestroySurface(dpy, surface);
    eglTerminate(dpy);
}

static void test_same_device(void **state)
{
    (void)state;
    if (window_device < 0 || egl_device < 0)
        skip();
    assert_int_equal(window_device, egl_device);
}

int main(int argc, char **argv)
{
    expect_not_cuda = argc > 1 && strcmp(argv[1], "--expect-not-cuda") == 0;
    if (prism_cuda_device_count() == 0) {
        printf("no CUDA device: skipped\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_current_context),
        cmocka_unit_test(test_glfw_window),
        cmocka_unit_test(test_egl_headless),
        cmocka_unit_test(test_same_device),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
