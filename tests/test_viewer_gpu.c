/* prism-view on the GPU test machine (label gpu; skipped without a CUDA
 * device): interop is active in a window (Xvfb with NVIDIA GL) and
 * headless (EGL device platform), as the API reports it; VBO and copy
 * modes draw pixel-identical photons for the same seed; the CUDA
 * ray-traced view matches the host backend's; the BVH is built on the
 * device by default, and its picture matches the host-built tree's. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <prism/context.h>

#include "test_viewer_support.h"

#define SCENE PRISM_ASSETS "/tiny_detector.dae"
#define INTEROP "interop: ray-traced image yes, photons yes (VBO mode)"

static void test_headless_interop_active(void **state)
{
    viewer_run r;
    viewer_exec(&r, (const char *[]){"--headless", "--backend", "cuda", "--mode", "vbo", "--size",
                                     "320x240", "--photons", "10000", SCENE, NULL});
    assert_int_equal(r.exit_code, 0);
    assert_non_null(strstr(r.output, "EGL device (NVIDIA)"));
    assert_non_null(strstr(r.output, INTEROP));
}

static void test_window_interop_active(void **state)
{
    const char *d = getenv("DISPLAY");
    if (!d || !d[0])
        skip(); /* the GPU machine's setup starts Xvfb :99 with NVIDIA GLX */
    viewer_run r;
    viewer_exec(&r, (const char *[]){"--backend", "cuda", "--mode", "vbo", "--frames", "3",
                                     "--size", "320x240", "--photons", "10000", SCENE, NULL});
    assert_int_equal(r.exit_code, 0);
    assert_non_null(strstr(r.output, "GLFW window"));
    assert_non_null(strstr(r.output, INTEROP));
}

static void render(const char *png, const char *backend, const char *mode, const char *view,
                   const char *photons)
{
    viewer_run r;
    viewer_exec(&r, (const char *[]){"--headless", "--backend", backend, "--mode", mode, "--view",
                                     view, "--size", "640x480", "--photons", photons,
                                     "--screenshot", png, SCENE, NULL});
    assert_int_equal(r.exit_code, 0);
}

static double compare(const char *a_path, const char *b_path, int tol)
{
    viewer_image a, b;
    assert_true(viewer_image_read(a_path, &a));
    assert_true(viewer_image_read(b_path, &b));
    double d = viewer_image_difference(&a, &b, tol);
    viewer_image_free(&a);
    viewer_image_free(&b);
    fprintf(stderr, "%s vs %s: %.4f%% of pixels differ (tolerance %d)\n", a_path, b_path, d * 100,
            tol);
    return d;
}

static void test_vbo_and_copy_identical(void **state)
{
    char vbo[160], copy[160];
    snprintf(vbo, sizeof vbo, "%s/vbo.png", viewer_tmpdir());
    snprintf(copy, sizeof copy, "%s/copy.png", viewer_tmpdir());
    render(vbo, "cuda", "vbo", "raster", "100000");
    render(copy, "cuda", "copy", "raster", "100000");
    assert_true(compare(vbo, copy, 0) == 0.0);
}

/* Same kernels on both backends; fast-math on the GPU may move an edge
 * pixel, so a few in ten thousand may differ. */
static void test_raytrace_matches_host(void **state)
{
    char gpu[160], host[160];
    snprintf(gpu, sizeof gpu, "%s/rt_cuda.png", viewer_tmpdir());
    snprintf(host, sizeof host, "%s/rt_host.png", viewer_tmpdir());
    render(gpu, "cuda", "copy", "raytrace", "0");
    render(host, "host", "copy", "raytrace", "0");
    assert_true(compare(gpu, host, 2) < 0.001);
}

/* A 640x480 screenshot of `view` on CUDA with the BVH built by `bvh`. */
static void shot_with_bvh(const char *png, const char *bvh, const char *view)
{
    viewer_run r;
    viewer_exec(&r, (const char *[]){"--headless", "--backend", "cuda", "--bvh", bvh, "--view",
                                     view, "--size", "640x480", "--photons", "0", "--screenshot",
                                     png, SCENE, NULL});
    assert_int_equal(r.exit_code, 0);
}

/* The default build is the device's (the bench says where, and no scene
 * thread waits on a host build); --bvh host restores the host build; both
 * trees draw the same picture. */
static void test_bvh_on_device(void **state)
{
    const char *where[2][2] = {{"auto", "\"bvh_builder\":\"cuda\""},
                               {"host", "\"bvh_builder\":\"host (scene thread)\""}};
    for (int i = 0; i < 2; i++) {
        viewer_run r;
        viewer_exec(&r, (const char *[]){"--bench", "--json", "--backend", "cuda", "--bvh",
                                         where[i][0], "--size", "320x240", "--frames", "3",
                                         "--photons", "1000", SCENE, NULL});
        assert_int_equal(r.exit_code, 0);
        if (!strstr(r.output, where[i][1]))
            fail_msg("--bvh %s: no %s in: %s", where[i][0], where[i][1], r.output);
    }
    char dev[160], host[160];
    snprintf(dev, sizeof dev, "%s/rt_bvh_cuda.png", viewer_tmpdir());
    snprintf(host, sizeof host, "%s/rt_bvh_host.png", viewer_tmpdir());
    shot_with_bvh(dev, "cuda", "raytrace");
    shot_with_bvh(host, "host", "raytrace");
    assert_true(compare(dev, host, 0) < 0.0001);
    /* the raster view from buffers the upload wrote through interop is the
     * one drawn from buffers filled from host memory (--bvh host keeps the
     * viewer's own glBufferData) */
    snprintf(dev, sizeof dev, "%s/raster_by_upload.png", viewer_tmpdir());
    snprintf(host, sizeof host, "%s/raster_by_viewer.png", viewer_tmpdir());
    shot_with_bvh(dev, "auto", "raster");
    shot_with_bvh(host, "host", "raster");
    assert_true(compare(dev, host, 0) == 0.0);
    viewer_run r;
    viewer_exec(&r, (const char *[]){"--bench", "--json", "--backend", "cuda", "--size", "320x240",
                                     "--frames", "2", "--photons", "0", SCENE, NULL});
    assert_int_equal(r.exit_code, 0);
    if (!strstr(r.output, "\"raster_buffers\":\"upload\""))
        fail_msg("the upload did not write the raster buffers: %s", r.output);
}

int main(void)
{
    if (!viewer_path() || prism_cuda_device_count() == 0) {
        fprintf(stderr, "no CUDA device (or PRISM_VIEW unset): skipped\n");
        return 77;
    }
    setenv("PRISM_VIEW_HUD", "0", 1);
    setenv("PRISM_VIEW_VERBOSE", "1", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_headless_interop_active),
        cmocka_unit_test(test_window_interop_active),
        cmocka_unit_test(test_vbo_and_copy_identical),
        cmocka_unit_test(test_raytrace_matches_host),
        cmocka_unit_test(test_bvh_on_device),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
