/* prism-view without a display: the command line, errors on bad files,
 * and headless EGL (Mesa surfaceless in CI) pictures of a bundled scene:
 * geometry at the centre, background at the corners, photons drawn through
 * the copy path when VBO mode has no interop. */
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

static void test_help_documents_every_option(void **state)
{
    viewer_run r;
    viewer_exec(&r, (const char *[]){"--help", NULL});
    assert_int_equal(r.exit_code, 0);
    const char *options[] = {"--headless", "--size WxH", "--frames N", "--screenshot",
                             "--photons N", "--source point:", "beam:", "--mode vbo|copy",
                             "--view raster|raytrace", "--camera", "--backend auto|cuda|host",
                             "--placement auto|device|mapped|chroma", "--reserve MB",
                             "--bench", "--json", "--help"};
    for (size_t i = 0; i < sizeof options / sizeof *options; i++)
        if (!strstr(r.output, options[i]))
            fail_msg("--help does not mention %s", options[i]);
}

/* Each bad command line: exit 2, a message naming the option, no crash. */
static void test_bad_options(void **state)
{
    struct {
        const char *args[4];
        const char *message;
    } cases[] = {
        {{"--bogus", CUBE}, "unknown option '--bogus'"},
        {{"--size", "0x100", CUBE}, "--size: expected WxH"},
        {{"--size", "banana", CUBE}, "--size: expected WxH"},
        {{"--frames", "-3", CUBE}, "--frames: expected a positive integer"},
        {{"--mode", "fast", CUBE}, "--mode: expected vbo or copy"},
        {{"--view", "xray", CUBE}, "--view: expected raster or raytrace"},
        {{"--backend", "opencl", CUBE}, "--backend: expected auto, cuda or host"},
        {{"--placement", "gpu", CUBE}, "--placement: expected auto, device, mapped or chroma"},
        {{"--source", "line:1,2", CUBE}, "--source: expected point:x,y,z"},
        {{"--source", "beam:0,0,0,0,0,0", CUBE}, "--source: expected"},
        {{"--camera", "1,2,3", CUBE}, "--camera: expected ten numbers"},
        {{"--reserve", "-1", CUBE}, "--reserve: expected megabytes"},
        {{"--photons", "lots", CUBE}, "--photons: expected an integer"},
        {{"--json", CUBE}, "--json goes with --bench"},
        {{"--size"}, "--size needs a value"},
        {{"--headless"}, "no FILE.dae given"},
        {{CUBE, CUBE}, "one file only"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        viewer_run r;
        viewer_exec(&r, cases[i].args);
        assert_int_equal(r.signal, 0);
        assert_int_equal(r.exit_code, 2);
        if (!strstr(r.output, cases[i].message))
            fail_msg("case %zu: expected \"%s\" in: %s", i, cases[i].message, r.output);
        assert_non_null(strstr(r.output, "prism-view: "));
    }
}

static void test_missing_file(void **state)
{
    viewer_run r;
    viewer_exec(&r, (const char *[]){"--headless", "/nonexistent/detector.dae", NULL});
    assert_int_equal(r.signal, 0);
    assert_int_equal(r.exit_code, 1);
    assert_non_null(strstr(r.output, "/nonexistent/detector.dae"));
}

/* cube.dae with the first triangle's first index replaced by 999. */
static char *cube_with_bad_index(void)
{
    FILE *f = fopen(CUBE, "rb");
    assert_non_null(f);
    static char text[65536];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    char *p = strstr(text, "<p>");
    assert_non_null(p);
    char *out = malloc(n + 16);
    assert_non_null(out);
    size_t head = (size_t)(p - text) + 3;
    memcpy(out, text, head);
    strcpy(out + head, "999");
    const char *rest = p + 3;
    while (*rest == ' ' || *rest == '\n')
        rest++;
    while (*rest >= '0' && *rest <= '9')
        rest++;
    strcat(out, rest);
    return out;
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* Truncated XML, an empty file, not XML, and a triangle index out of range. */
static void test_corrupt_files(void **state)
{
    const char *texts[4] = {
        "<?xml version=\"1.0\"?>\n<COLLADA xmlns=\"http://www.collada.org/2005/11/COLLADASchema\">"
        "\n<library_geometries><geometry id=\"g\"><mesh>",
        "",
        "this is not XML at all\n",
        NULL,
    };
    char *bad_index = cube_with_bad_index();
    texts[3] = bad_index;
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
        char path[160];
        snprintf(path, sizeof path, "%s/corrupt%zu.dae", viewer_tmpdir(), i);
        write_file(path, texts[i]);
        viewer_run r;
        viewer_exec(&r, (const char *[]){"--headless", path, NULL});
        assert_int_equal(r.signal, 0);
        assert_int_equal(r.exit_code, 1);
        if (!strstr(r.output, path))
            fail_msg("the error does not name %s: %s", path, r.output);
    }
    free(bad_index);
}

/* Geometry colour at the centre (not background, not black), background
 * at the four corners. */
static void check_cube_picture(const char *png)
{
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

static int hide_hud(void **state)
{
    setenv("PRISM_VIEW_HUD", "0", 1);
    return 0;
}

static void test_headless_raster(void **state)
{
    char png[160];
    snprintf(png, sizeof png, "%s/headless.png", viewer_tmpdir());
    viewer_run r;
    viewer_exec(&r, (const char *[]){"--headless", "--backend", "host", "--size", "320x240",
                                     "--photons", "0", "--screenshot", png, CUBE, NULL});
    assert_int_equal(r.exit_code, 0);
    check_cube_picture(png);
}

static void test_headless_raytrace(void **state)
{
    char png[160];
    snprintf(png, sizeof png, "%s/headless_rt.png", viewer_tmpdir());
    viewer_run r;
    viewer_exec(&r, (const char *[]){"--headless", "--backend", "host", "--size", "320x240",
                                     "--photons", "0", "--view", "raytrace", "--screenshot", png,
                                     CUBE, NULL});
    assert_int_equal(r.exit_code, 0);
    assert_null(strstr(r.output, "back to the raster view"));
    check_cube_picture(png);
}

/* On the host backend there is no interop: VBO mode says so once, uses the
 * copy path, and the photons are drawn (the picture differs from the one
 * without photons, in photon colours). */
static void test_vbo_falls_back_to_copy(void **state)
{
    char with[160], without[160];
    snprintf(with, sizeof with, "%s/photons.png", viewer_tmpdir());
    snprintf(without, sizeof without, "%s/nophotons.png", viewer_tmpdir());
    viewer_run r;
    viewer_exec(&r, (const char *[]){"--headless", "--backend", "host", "--size", "320x240",
                                     "--photons", "2000", "--mode", "vbo", "--screenshot", with,
                                     CUBE, NULL});
    assert_int_equal(r.exit_code, 0);
    const char *msg = strstr(r.output, "photons use the copy path");
    assert_non_null(msg);
    assert_null(strstr(msg + 1, "photons use the copy path")); /* said once */
    viewer_exec(&r, (const char *[]){"--headless", "--backend", "host", "--size", "320x240",
                                     "--photons", "0", "--screenshot", without, CUBE, NULL});
    assert_int_equal(r.exit_code, 0);
    viewer_image a, b;
    assert_true(viewer_image_read(with, &a));
    assert_true(viewer_image_read(without, &b));
    double d = viewer_image_difference(&a, &b, 10);
    viewer_image_free(&a);
    viewer_image_free(&b);
    assert_true(d > 0.0005); /* some photons visible */
}

/* Photons move with time: frame 1 and frame 40 of the same run differ
 * (headless frames step time evenly, so each is the same picture every run). */
static void test_photons_animate(void **state)
{
    char early[160], late[160];
    snprintf(early, sizeof early, "%s/early.png", viewer_tmpdir());
    snprintf(late, sizeof late, "%s/late.png", viewer_tmpdir());
    viewer_run r;
    viewer_exec(&r, (const char *[]){"--headless", "--backend", "host", "--size", "160x120",
                                     "--photons", "500", "--frames", "1", "--screenshot", early,
                                     CUBE, NULL});
    assert_int_equal(r.exit_code, 0);
    viewer_exec(&r, (const char *[]){"--headless", "--backend", "host", "--size", "160x120",
                                     "--photons", "500", "--frames", "40", "--screenshot", late,
                                     CUBE, NULL});
    assert_int_equal(r.exit_code, 0);
    viewer_image a, b;
    assert_true(viewer_image_read(early, &a));
    assert_true(viewer_image_read(late, &b));
    double d = viewer_image_difference(&a, &b, 10);
    viewer_image_free(&a);
    viewer_image_free(&b);
    assert_true(d > 0.001);
}

static void test_bench_json(void **state)
{
    viewer_run r;
    viewer_exec(&r, (const char *[]){"--bench", "--json", "--backend", "host", "--size",
                                     "160x120", "--frames", "3", "--photons", "500", CUBE, NULL});
    assert_int_equal(r.exit_code, 0);
    const char *keys[] = {"\"load_ms\":", "\"bvh_ms\":", "\"upload_ms\":", "\"first_frame_ms\":",
                          "\"render_ms\":", "\"raster_ms\":", "\"copy\":{\"propagate_ms\":",
                          "\"vbo\":null"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        if (!strstr(r.output, keys[i]))
            fail_msg("no %s in: %s", keys[i], r.output);
}

int main(void)
{
    if (!viewer_path()) {
        fprintf(stderr, "PRISM_VIEW is not set: skipped\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_help_documents_every_option),
        cmocka_unit_test(test_bad_options),
        cmocka_unit_test(test_missing_file),
        cmocka_unit_test(test_corrupt_files),
        cmocka_unit_test_setup(test_headless_raster, hide_hud),
        cmocka_unit_test_setup(test_headless_raytrace, hide_hud),
        cmocka_unit_test_setup(test_vbo_falls_back_to_copy, hide_hud),
        cmocka_unit_test_setup(test_photons_animate, hide_hud),
        cmocka_unit_test(test_bench_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
