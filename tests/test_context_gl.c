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

#include <GLFW/glfw3.h>

#include "egl_test_util.h"
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

static void test_egl_headless(void **state)
{
    (void)state;
    if (expect_not_cuda)
        skip();
    test_egl egl;
    if (!test_egl_open(&egl, TEST_EGL_CUDA, 4, 5))
        skip();
    assert_int_equal(share(&egl_device), PRISM_SUCCESS);
    printf("share_gl through headless EGL (%s): cuda:%d\n", eglQueryString(egl.display, EGL_VENDOR),
           egl_device);
    test_egl_close(&egl);
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
