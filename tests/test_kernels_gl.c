/* GL targets through a headless EGL context: an image rendered into a GL
 * pixel-unpack buffer, and step records written into a GL vertex buffer,
 * equal what the device-memory targets receive.
 *   (default)     CUDA backend on the NVIDIA EGL device: interop, written
 *                 in place. Skipped (77) without a CUDA device or an EGL
 *                 device of the NVIDIA driver.
 *   --copy-path   host backend on whatever EGL offers (Mesa surfaceless in
 *                 CI): the copy path (glBufferSubData at unmap). Skipped
 *                 (77) without EGL. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "egl_test_util.h"
#include "kernels_test_scene.h"
#include "prism/memory.h"
#include "prism/propagate.h"
#include "prism/render.h"

/* GL entry points, taken from EGL (no GL library linked). */
#define GL_ARRAY_BUFFER 0x8892
#define GL_PIXEL_UNPACK_BUFFER 0x88EC
#define GL_DYNAMIC_DRAW 0x88E8

static test_egl egl;
static prism_context *host;

static bool egl_start(bool any)
{
    return test_egl_open(&egl, any ? TEST_EGL_ANY : TEST_EGL_CUDA, 0, 0);
}

static prism_gl_proc get_proc(const char *name)
{
    return (prism_gl_proc)eglGetProcAddress(name);
}

static unsigned gl_buffer(unsigned target, size_t size)
{
    return test_egl_buffer(&egl, target, size, NULL, GL_DYNAMIC_DRAW);
}

static void *gl_read(unsigned target, unsigned b, size_t size)
{
    void *p = malloc(size);
    test_egl_read(&egl, target, b, size, p);
    return p;
}

/* The context under test: CUDA (interop) or host (copy path). */
static prism_context *subject;
static bool copy_path;

static void test_pbo_equals_device(void **state)
{
    (void)state;
    prism_context *cuda = subject;
    kt_scene s = {0};
    kt_rich_scene(&s, 64);
    assert_int_equal(kt_build(&s, host), 0);
    prism_geometry *g = kt_upload(&s, cuda, PRISM_PLACEMENT_DEVICE, false);
    enum { W = 320, H = 200 };
    prism_camera cam = {.eye = {0.5f, 1, 2.8f}, .look_at = {0, 0, 0}, .vfov_degrees = 80};
    prism_render_desc d = {.width = W,
                           .height = H,
                           .mode = PRISM_RENDER_XRAY,
                           .bottom_row_first = true,
                           .background = {0, 0, 0, 255}};
    prism_buffer *dev = NULL, *pbo = NULL;
    assert_int_equal(prism_buffer_create_device(cuda, W * H * 4, "test.image", &dev),
                     PRISM_SUCCESS);
    unsigned gl = gl_buffer(GL_PIXEL_UNPACK_BUFFER, W * H * 4);
    assert_int_equal(prism_buffer_create_gl(cuda, gl, W * H * 4, PRISM_GL_WRITE_DISCARD, get_proc,
                                            "test.pbo", &pbo),
                     PRISM_SUCCESS);
    prism_target td = {.kind = PRISM_TARGET_BUFFER, .buffer = dev};
    prism_target tp = {.kind = PRISM_TARGET_BUFFER, .buffer = pbo};
    prism_render_stats st;
    assert_int_equal(prism_render(cuda, g, &cam, &d, &td, NULL), PRISM_SUCCESS);
    assert_int_equal(prism_render(cuda, g, &cam, &d, &tp, &st), PRISM_SUCCESS);
    printf("# PBO written %s\n", st.interop ? "in place (interop)" : "by the copy path");
    assert_true(st.interop != copy_path);
    uint32_t *a = malloc(W * H * 4), *b = gl_read(GL_PIXEL_UNPACK_BUFFER, gl, W * H * 4);
    assert_int_equal(prism_buffer_read(dev, 0, a, W * H * 4), PRISM_SUCCESS);
    assert_memory_equal(a, b, W * H * 4);
    free(a);
    free(b);
    prism_buffer_release(pbo);
    prism_buffer_release(dev);
    egl.gl.delete_buffers(1, &gl);
    prism_geometry_destroy(g);
    kt_free(&s, host);
}

static void test_vbo_equals_device(void **state)
{
    (void)state;
    prism_context *cuda = subject;
    kt_scene s = {0};
    kt_rich_scene(&s, 64);
    assert_int_equal(kt_build(&s, host), 0);
    prism_geometry *g = kt_upload(&s, cuda, PRISM_PLACEMENT_DEVICE, false);
    enum { N = 100000, K = 10 };
    const size_t bytes = (size_t)N * K * sizeof(prism_step_record);
    prism_photon_source src = {.kind = PRISM_SOURCE_POINT, .count = N};
    prism_propagate_desc d = {.seed = 8, .record_steps = K};
    prism_buffer *dev = NULL, *vbo = NULL;
    assert_int_equal(prism_buffer_create_device(cuda, bytes, "test.records", &dev), PRISM_SUCCESS);
    unsigned gl = gl_buffer(GL_ARRAY_BUFFER, bytes);
    assert_int_equal(prism_buffer_create_gl(cuda, gl, bytes, PRISM_GL_WRITE_DISCARD, get_proc,
                                            "test.vbo", &vbo),
                     PRISM_SUCCESS);
    prism_propagate_outputs od = {.records = {.kind = PRISM_TARGET_BUFFER, .buffer = dev}};
    prism_propagate_outputs ov = {.records = {.kind = PRISM_TARGET_BUFFER, .buffer = vbo}};
    assert_int_equal(prism_propagate(cuda, g, &src, &d, &od, NULL), PRISM_SUCCESS);
    assert_int_equal(prism_propagate(cuda, g, &src, &d, &ov, NULL), PRISM_SUCCESS);
    void *a = malloc(bytes), *b = gl_read(GL_ARRAY_BUFFER, gl, bytes);
    assert_int_equal(prism_buffer_read(dev, 0, a, bytes), PRISM_SUCCESS);
    assert_memory_equal(a, b, bytes);
    free(a);
    free(b);
    prism_buffer_release(vbo);
    prism_buffer_release(dev);
    egl.gl.delete_buffers(1, &gl);
    prism_geometry_destroy(g);
    kt_free(&s, host);
}

int main(int argc, char **argv)
{
    copy_path = argc > 1 && strcmp(argv[1], "--copy-path") == 0;
    if ((!copy_path && prism_cuda_device_count() == 0) || !egl_start(copy_path)) {
        printf("no %s: skipped\n", copy_path ? "EGL display" : "CUDA device or NVIDIA EGL device");
        return 77;
    }
    prism_context_desc cd = {.backend = copy_path ? PRISM_BACKEND_HOST : PRISM_BACKEND_CUDA,
                             .share_gl = !copy_path};
    if (prism_context_create(&cd, &subject) != PRISM_SUCCESS)
        return 1;
    host = kt_host_context();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pbo_equals_device),
        cmocka_unit_test(test_vbo_equals_device),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    prism_context_destroy(host);
    prism_result r = prism_context_destroy(subject);
    test_egl_close(&egl);
    return r == PRISM_SUCCESS ? failed : 1;
}
