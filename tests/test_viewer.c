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
#include <unistd.h>

#include "test_viewer_support.h"

#define CUBE PRISM_ASSETS "/cube.dae"

static void test_help_documents_every_option(void **state)
{
    viewer_run r;
    viewer_exec(&r, (const char *[]){"--help", NULL});
    assert_int_equal(r.exit_code, 0);
    const char *options[] = {"--headless",
                             "--size WxH",
                             "--frames N",
                             "--screenshot",
                             "--photons N",
                             "--source point:",
                             "beam:",
                             "--mode vbo|copy",
                             "--view raster|raytrace",
                             "--camera",
                             "--backend auto|cuda|host",
                             "--placement auto|device|mapped|chroma",
                             "--reserve MB",
                             "--bvh auto|host|cuda",
                             "--unit m|cm|mm|auto",
                             "--show-world",
                             "--bench",
                             "--json",
                             "--help"};
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
        {{"--bvh", "embree", CUBE}, "--bvh: expected auto, host or cuda"},
        {{"--source", "line:1,2", CUBE}, "--source: expected point:x,y,z"},
        {{"--source", "beam:0,0,0,0,0,0", CUBE}, "--source: expected"},
        {{"--camera", "1,2,3", CUBE}, "--camera: expected ten numbers"},
        {{"--reserve", "-1", CUBE}, "--reserve: expected megabytes"},
        {{"--photons", "lots", CUBE}, "--photons: expected an integer"},
        {{"--unit", "km", CUBE}, "--unit: expected m, cm, mm or auto, got 'km'"},
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
    /* The draw reads the PBO in place (a buffer texture); the old copy
     * into a 2D texture (PRISM_VIEW_PBO_COPY=1) shows the same picture. */
    char copied[160];
    snprintf(copied, sizeof copied, "%s/headless_rt_copy.png", viewer_tmpdir());
    setenv("PRISM_VIEW_PBO_COPY", "1", 1);
    viewer_exec(&r, (const char *[]){"--headless", "--backend", "host", "--size", "320x240",
                                     "--photons", "0", "--view", "raytrace", "--screenshot", copied,
                                     CUBE, NULL});
    unsetenv("PRISM_VIEW_PBO_COPY");
    assert_int_equal(r.exit_code, 0);
    viewer_image a, b;
    assert_true(viewer_image_read(png, &a));
    assert_true(viewer_image_read(copied, &b));
    assert_true(viewer_image_difference(&a, &b, 0) == 0.0);
    viewer_image_free(&a);
    viewer_image_free(&b);
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

/* A headless run of the cube (HUD text off) with `keys` pressed from the
 * second frame on; extra arguments before the file. */
static void keyed_run(const char *png, const char *keys, const char *photons, long frames,
                      const char *extra, viewer_run *r)
{
    char n[16];
    snprintf(n, sizeof n, "%ld", frames);
    if (keys)
        setenv("PRISM_VIEW_KEYS", keys, 1);
    const char *args[16] = {"--headless", "--backend", "host",     "--size", "160x120",
                            "--photons",  photons,     "--frames", n,        "--screenshot",
                            png};
    int k = 11;
    if (extra)
        args[k++] = extra;
    args[k++] = CUBE;
    args[k] = NULL;
    viewer_exec(r, args);
    unsetenv("PRISM_VIEW_KEYS");
    assert_int_equal(r->signal, 0);
    assert_int_equal(r->exit_code, 0);
}

static double png_difference(const char *a_path, const char *b_path)
{
    viewer_image a, b;
    assert_true(viewer_image_read(a_path, &a));
    assert_true(viewer_image_read(b_path, &b));
    double d = viewer_image_difference(&a, &b, 2);
    viewer_image_free(&a);
    viewer_image_free(&b);
    return d;
}

static void tmp_png(char *out, size_t size, const char *name)
{
    snprintf(out, size, "%s/%s.png", viewer_tmpdir(), name);
}

/* R cycles raster -> ray-traced (the picture of --view raytrace) -> x-ray
 * -> raster. */
static void test_key_r_switches_view(void **state)
{
    char keyed[160], direct[160];
    tmp_png(keyed, sizeof keyed, "key_r");
    tmp_png(direct, sizeof direct, "view_rt");
    viewer_run r;
    keyed_run(keyed, "R", "0", 2, NULL, &r);
    keyed_run(direct, NULL, "0", 2, "--view=raytrace", &r);
    assert_true(png_difference(keyed, direct) < 1e-4);
    /* Pressed again: x-ray layers, a different picture; a third time: raster. */
    char xray[160], raster[160], back[160];
    tmp_png(xray, sizeof xray, "key_rr");
    tmp_png(raster, sizeof raster, "raster");
    tmp_png(back, sizeof back, "key_rrr");
    keyed_run(xray, "RR", "0", 3, NULL, &r);
    keyed_run(back, "RRR", "0", 4, NULL, &r);
    keyed_run(raster, NULL, "0", 4, NULL, &r);
    assert_true(png_difference(xray, direct) > 1e-3);
    assert_true(png_difference(back, raster) < 1e-4);
}

/* F filters to SURFACE_DETECT: the cube has no detecting surface, so no
 * photon is left and the picture is the one without photons. */
static void test_key_f_filters(void **state)
{
    char filtered[160], none[160], all[160];
    tmp_png(filtered, sizeof filtered, "key_f");
    tmp_png(none, sizeof none, "no_photons");
    tmp_png(all, sizeof all, "all_photons");
    viewer_run r;
    keyed_run(filtered, "F", "2000", 2, NULL, &r);
    keyed_run(none, NULL, "0", 2, NULL, &r);
    keyed_run(all, NULL, "2000", 2, NULL, &r);
    assert_true(png_difference(filtered, none) < 1e-4);
    assert_true(png_difference(all, none) > 1e-3);
}

/* H shows the help overlay; S writes prism-view-1.png in the current folder. */
static void test_keys_h_and_s(void **state)
{
    char help[160], plain[160], shot[200], cwd[512];
    tmp_png(help, sizeof help, "key_h");
    tmp_png(plain, sizeof plain, "plain");
    viewer_run r;
    keyed_run(help, "H", "0", 2, NULL, &r);
    keyed_run(plain, NULL, "0", 2, NULL, &r);
    assert_true(png_difference(help, plain) > 0.05);
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(viewer_tmpdir()), 0);
    keyed_run(plain, "S", "0", 2, NULL, &r);
    assert_int_equal(chdir(cwd), 0);
    assert_non_null(strstr(r.output, "wrote prism-view-1.png"));
    snprintf(shot, sizeof shot, "%s/prism-view-1.png", viewer_tmpdir());
    viewer_image img;
    assert_true(viewer_image_read(shot, &img));
    assert_int_equal(img.width, 160);
    viewer_image_free(&img);
}

/* V asks for VBO mode: without interop it says so and stays on the copy
 * path; P propagates again (time restarts); space, [ and ] pause and scrub. */
static void test_keys_v_p_space_scrub(void **state)
{
    char a[160], b[160];
    tmp_png(a, sizeof a, "key_v");
    tmp_png(b, sizeof b, "key_p");
    viewer_run r;
    keyed_run(a, "V", "500", 3, NULL, &r);
    assert_non_null(strstr(r.output, "photons use the copy path"));
    keyed_run(b, "P []]", "500", 7, NULL, &r);
    keyed_run(a, NULL, "500", 7, NULL, &r);
    assert_true(png_difference(a, b) > 1e-4); /* P restarted time: photons elsewhere */
}

/* A headless run of tiny_detector.dae (an Air world box around a tank) with
 * `keys` pressed from the second frame on and up to two extra options. */
static void detector_run(const char *png, const char *keys, const char *extra1, const char *extra2)
{
    if (keys)
        setenv("PRISM_VIEW_KEYS", keys, 1);
    const char *args[16] = {"--headless", "--backend",    "host", "--size",
                            "160x120",    "--photons",    "0",    "--frames",
                            "3",          "--screenshot", png};
    int k = 11;
    if (extra1)
        args[k++] = extra1;
    if (extra2)
        args[k++] = extra2;
    args[k++] = PRISM_ASSETS "/tiny_detector.dae";
    args[k] = NULL;
    viewer_run r;
    viewer_exec(&r, args);
    unsetenv("PRISM_VIEW_KEYS");
    assert_int_equal(r.signal, 0);
    assert_int_equal(r.exit_code, 0);
}

/* The world box is hidden by default in both views: the centre shows the
 * detector inside (not the world's colour, not background) and the
 * corners background; --show-world and the G key show it again (G keeps
 * the camera framed on the detector, so the world fills the centre with
 * the same face), and G again hides it. */
static void test_world_hidden(void **state)
{
    const char *views[2] = {"--view=raster", "--view=raytrace"};
    for (int v = 0; v < 2; v++) {
        char hidden[160], shown[160], keyed[160], twice[160];
        snprintf(hidden, sizeof hidden, "%s/world_hidden%d.png", viewer_tmpdir(), v);
        snprintf(shown, sizeof shown, "%s/world_shown%d.png", viewer_tmpdir(), v);
        snprintf(keyed, sizeof keyed, "%s/world_key_g%d.png", viewer_tmpdir(), v);
        snprintf(twice, sizeof twice, "%s/world_key_gg%d.png", viewer_tmpdir(), v);
        detector_run(hidden, NULL, views[v], NULL);
        detector_run(shown, NULL, views[v], "--show-world");
        detector_run(keyed, "G", views[v], NULL);
        detector_run(twice, "GG", views[v], NULL);
        viewer_image a, b, c;
        assert_true(viewer_image_read(hidden, &a));
        assert_true(viewer_image_read(shown, &b));
        assert_true(viewer_image_read(keyed, &c));
        const uint8_t *in = viewer_pixel(&a, 80, 60), *world = viewer_pixel(&b, 80, 60);
        assert_false(viewer_pixel_near(world, VIEWER_BACKGROUND, 8));
        assert_false(viewer_pixel_near(in, VIEWER_BACKGROUND, 8));
        assert_false(viewer_pixel_near(in, world, 8));
        assert_true(viewer_pixel_near(viewer_pixel(&a, 0, 0), VIEWER_BACKGROUND, 2));
        assert_true(viewer_pixel_near(viewer_pixel(&c, 80, 60), world, 8));
        viewer_image_free(&a);
        viewer_image_free(&b);
        viewer_image_free(&c);
        assert_true(png_difference(twice, hidden) < 1e-4);
    }
}

static size_t count_of(const char *text, const char *what)
{
    size_t n = 0;
    for (const char *p = text; (p = strstr(p, what)); p++)
        n++;
    return n;
}

/* The loader's unit rule, printed once at load, and --unit over it; a
 * scene without RINDEX said once to be vacuum, one with it not. */
static void test_unit_rule_and_no_optics(void **state)
{
    static const char *meta = PRISM_TEST_DATA "/collada/unit_g4_meta.dae";
    viewer_run r;
    viewer_exec(&r, (const char *[]){"--headless", "--backend", "host", "--size", "64x48",
                                     "--photons", "100", meta, NULL});
    assert_int_equal(r.exit_code, 0);
    assert_int_equal(count_of(r.output, "Geant4 export (<meta> extras): millimetres"), 1);
    assert_int_equal(count_of(r.output, "no RINDEX anywhere: every material is vacuum"), 1);
    viewer_exec(&r, (const char *[]){"--headless", "--backend", "host", "--size", "64x48",
                                     "--photons", "0", "--unit", "cm", meta, NULL});
    assert_int_equal(r.exit_code, 0);
    assert_int_equal(count_of(r.output, "lengths in units of 0.01 m: cm (user's choice)"), 1);
    viewer_exec(&r, (const char *[]){"--headless", "--backend", "host", "--size", "64x48",
                                     "--photons", "100", PRISM_ASSETS "/tiny_detector.dae", NULL});
    assert_int_equal(r.exit_code, 0);
    assert_int_equal(count_of(r.output,
                              "Geant4 export (G4DAE material or surface extras, <meta> extras, "
                              "pointer-suffixed ids, __dd__ paths): millimetres"),
                     1);
    assert_null(strstr(r.output, "no RINDEX"));
}

static void test_bench_json(void **state)
{
    viewer_run r;
    viewer_exec(&r, (const char *[]){"--bench", "--json", "--backend", "host", "--size", "160x120",
                                     "--frames", "3", "--photons", "500", CUBE, NULL});
    assert_int_equal(r.exit_code, 0);
    const char *keys[] = {"\"load_ms\":",
                          "\"bvh_ms\":",
                          "\"upload_ms\":",
                          "\"first_frame_ms\":",
                          "\"render_ms\":",
                          "\"raster_ms\":",
                          "\"copy\":{\"propagate_ms\":",
                          "\"vbo\":null",
                          "\"engine_ms\":",
                          "\"wait_bvh_ms\":",
                          "\"first_propagate_ms\":",
                          "\"first_complete_frame_ms\":",
                          "\"bvh_builder\":\"host (scene thread)\"",
                          "\"raster_buffers\":\"viewer\""};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        if (!strstr(r.output, keys[i]))
            fail_msg("no %s in: %s", keys[i], r.output);
    /* The first frame (raster, as soon as the scene is loaded) comes no
     * later than the first complete one (BVH, upload, photons). */
    double first = strtod(strstr(r.output, "\"first_frame_ms\":") + 17, NULL);
    double complete = strtod(strstr(r.output, "\"first_complete_frame_ms\":") + 26, NULL);
    assert_true(first > 0 && first <= complete);
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
        cmocka_unit_test_setup(test_key_r_switches_view, hide_hud),
        cmocka_unit_test_setup(test_key_f_filters, hide_hud),
        cmocka_unit_test_setup(test_keys_h_and_s, hide_hud),
        cmocka_unit_test_setup(test_keys_v_p_space_scrub, hide_hud),
        cmocka_unit_test_setup(test_world_hidden, hide_hud),
        cmocka_unit_test_setup(test_unit_rule_and_no_optics, hide_hud),
        cmocka_unit_test(test_bench_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
