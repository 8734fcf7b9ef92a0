/* prism-view in a GLFW window (CI: Xvfb with Mesa; this test re-runs
 * itself under xvfb-run when there is no display): the window opens and
 * renders a bundled scene, and the headless EGL context gives the same
 * picture. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_viewer_support.h"

#define CUBE PRISM_ASSETS "/cube.dae"

static void render_view(const char *png, bool headless, const char *view)
{
    viewer_run r;
    const char *window_args[] = {"--backend", "host",      "--size", "320x240", "--frames",
                                 "3",         "--photons", "0",      view,      "--screenshot",
                                 png,         CUBE,        NULL};
    const char *headless_args[] = {"--headless",   "--backend", "host",      "--size", "320x240",
                                   "--frames",     "3",         "--photons", "0",      view,
                                   "--screenshot", png,         CUBE,        NULL};
    viewer_exec(&r, headless ? headless_args : window_args);
    assert_int_equal(r.signal, 0);
    assert_int_equal(r.exit_code, 0);
    if (!headless)
        assert_non_null(strstr(r.output, "GLFW window")); /* not silently headless */
}

static void render(const char *png, bool headless)
{
    render_view(png, headless, "--view=raster");
}

static void test_window_renders_the_scene(void **state)
{
    char png[160];
    snprintf(png, sizeof png, "%s/window.png", viewer_tmpdir());
    render(png, false);
    viewer_image img;
    assert_true(viewer_image_read(png, &img));
    assert_int_equal(img.width, 320);
    assert_int_equal(img.height, 240);
    const uint8_t *c = viewer_pixel(&img, 160, 120);
    assert_false(viewer_pixel_near(c, VIEWER_BACKGROUND, 8));
    assert_true(c[0] + c[1] + c[2] > 60);
    const int corners[4][2] = {{0, 0}, {319, 0}, {0, 239}, {319, 239}};
    for (int i = 0; i < 4; i++)
        assert_true(viewer_pixel_near(viewer_pixel(&img, corners[i][0], corners[i][1]),
                                      VIEWER_BACKGROUND, 2));
    viewer_image_free(&img);
}

/* Same program, same scene, same camera: the window and the headless EGL
 * context draw the same picture (both Mesa here; a few edge pixels may
 * round differently). */
static void test_headless_matches_window(void **state)
{
    char win[160], egl[160];
    snprintf(win, sizeof win, "%s/window_cmp.png", viewer_tmpdir());
    snprintf(egl, sizeof egl, "%s/egl_cmp.png", viewer_tmpdir());
    render(win, false);
    render(egl, true);
    viewer_image a, b;
    assert_true(viewer_image_read(win, &a));
    assert_true(viewer_image_read(egl, &b));
    double d = viewer_image_difference(&a, &b, 4);
    viewer_image_free(&a);
    viewer_image_free(&b);
    fprintf(stderr, "window vs headless: %.4f%% of pixels differ\n", d * 100);
    assert_true(d < 0.005);
}

/* A window draws its first frame before the BVH is built (raster, even
 * when the ray-traced view is asked for); by the last frame the ray-traced
 * view is there and matches the headless one, which waits for it. */
static void test_window_raytrace_after_early_frame(void **state)
{
    char win[160], egl[160];
    snprintf(win, sizeof win, "%s/window_rt.png", viewer_tmpdir());
    snprintf(egl, sizeof egl, "%s/egl_rt.png", viewer_tmpdir());
    render_view(win, false, "--view=raytrace");
    render_view(egl, true, "--view=raytrace");
    viewer_image a, b;
    assert_true(viewer_image_read(win, &a));
    assert_true(viewer_image_read(egl, &b));
    double d = viewer_image_difference(&a, &b, 2);
    viewer_image_free(&a);
    viewer_image_free(&b);
    assert_true(d < 1e-4);
}

int main(int argc, char **argv)
{
    if (!viewer_path()) {
        fprintf(stderr, "PRISM_VIEW is not set: skipped\n");
        return 77;
    }
    viewer_require_display(argc, argv);
    setenv("PRISM_VIEW_HUD", "0", 1);
    setenv("PRISM_VIEW_VERBOSE", "1", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_window_renders_the_scene),
        cmocka_unit_test(test_headless_matches_window),
        cmocka_unit_test(test_window_raytrace_after_early_frame),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
