/* Ray-traced rendering on the host backend: a known scene gives known
 * pixels (the cube's face colour in the middle, background at the
 * corners), x-ray layers blend as computed by hand, the matrix camera
 * equals the look-at camera, row order and strides, hidden solids (the
 * world box) seen through, the errors, and the CUDA render's variant
 * choice kept per context. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kernels_test_scene.h"
#include "prism/geometry.h"
#include "prism/kernels.h"
#include "prism/memory.h"
#include "engine/launch/render_internal.h"
#include "engine/launch/render_tuning.h"

static prism_context *ctx;
static kt_scene cube;
static const uint8_t colors[2][4] = {{255, 0, 0, 255}, {0, 255, 0, 255}};

static int setup(void **state)
{
    (void)state;
    ctx = kt_host_context();
    if (ctx == NULL)
        return -1;
    const float lo[3] = {-1, -1, -1}, hi[3] = {1, 1, 1};
    kt_box(&cube, lo, hi, 0, 0, PRISM_NONE, PRISM_NONE);
    return kt_build(&cube, ctx);
}

static int teardown(void **state)
{
    (void)state;
    kt_free(&cube, ctx);
    return prism_context_destroy(ctx) == PRISM_SUCCESS ? 0 : -1;
}

/* Render with the host backend into a fresh image (row stride = width). */
static uint32_t *render(const prism_camera *cam, const prism_render_desc *d)
{
    prism_render_params p;
    assert_int_equal(prism__render_params(ctx, cam, d, &p), PRISM_SUCCESS);
    uint32_t *colors_table = prism__render_colors(d, 64);
    p.colors = colors_table;
    p.color_count = 64;
    uint32_t *img = calloc((size_t)d->width * d->height, sizeof *img);
    unsigned launches = 0;
    assert_int_equal(prism__render_launch(ctx, &cube.view, &p, img, &launches), PRISM_SUCCESS);
    assert_true(launches >= 1);
    free(colors_table);
    return img;
}

static uint32_t rgba(uint8_t r, uint8_t g, uint8_t b, uint8_t a)
{
    return (uint32_t)r | (uint32_t)g << 8 | (uint32_t)b << 16 | (uint32_t)a << 24;
}

static const prism_camera front = {.eye = {0, 0, 5}, .look_at = {0, 0, 0}};

static void test_known_pixels(void **state)
{
    (void)state;
    prism_render_desc d = {.width = 64,
                           .height = 48,
                           .background = {10, 20, 30, 255},
                           .material_colors = colors,
                           .material_colors_count = 2};
    uint32_t *img = render(&front, &d);
    /* The face looks straight at the camera: light = 0.2 + 0.8 * 1. */
    assert_int_equal(img[24 * 64 + 32], rgba(255, 0, 0, 255));
    assert_int_equal(img[23 * 64 + 31], rgba(255, 0, 0, 255));
    uint32_t bg = rgba(10, 20, 30, 255);
    assert_int_equal(img[0], bg);
    assert_int_equal(img[63], bg);
    assert_int_equal(img[47 * 64], bg);
    assert_int_equal(img[47 * 64 + 63], bg);
    free(img);
}

/* Seen at an angle, the face is darker by the headlight's cosine. */
static void test_headlight(void **state)
{
    (void)state;
    prism_camera cam = {.eye = {0, 0, 5}, .look_at = {0, 0, 0}};
    float a = 0.5f; /* rotate the eye about y by 0.5 rad, centre ray hits the +z face */
    cam.eye[0] = 5 * sinf(a);
    cam.eye[2] = 5 * cosf(a);
    prism_render_desc d = {.width = 33,
                           .height = 33,
                           .material_colors = colors,
                           .material_colors_count = 1,
                           .ambient = 0.5f};
    uint32_t *img = render(&cam, &d);
    uint32_t px = img[16 * 33 + 16];
    float expect = 255.0f * (0.5f + 0.5f * cosf(a));
    assert_true(abs((int)(px & 0xFF) - (int)lrintf(expect)) <= 1);
    free(img);
}

/* Two layers (front and back face) of alpha 0.5 over opaque black:
 * colour 0.5 + 0.25 of red (both faces face the ray), alpha 1. */
static void test_xray(void **state)
{
    (void)state;
    prism_render_desc d = {.width = 15,
                           .height = 15,
                           .mode = PRISM_RENDER_XRAY,
                           .xray_alpha = 0.5f,
                           .background = {0, 0, 0, 255},
                           .material_colors = colors,
                           .material_colors_count = 1};
    uint32_t *img = render(&front, &d);
    assert_int_equal(img[7 * 15 + 7], rgba(191, 0, 0, 255));
    d.xray_layers = 1;
    free(img);
    img = render(&front, &d);
    assert_int_equal(img[7 * 15 + 7], rgba(128, 0, 0, 255));
    free(img);
}

/* The matrix camera (inverse view matrix, column-major) gives the same
 * picture as look-at. */
static void test_matrix_camera(void **state)
{
    (void)state;
    prism_camera m = {.use_matrix = true,
                      .vfov_degrees = 45,
                      .matrix = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 5, 1}};
    prism_render_desc d = {
        .width = 40, .height = 30, .material_colors = colors, .material_colors_count = 1};
    uint32_t *a = render(&front, &d), *b = render(&m, &d);
    assert_memory_equal(a, b, 40 * 30 * sizeof *a);
    free(a);
    free(b);
}

/* bottom_row_first flips rows; a camera looking up at the cube's bottom
 * edge shows the cube in the upper half only. */
static void test_row_order(void **state)
{
    (void)state;
    prism_camera cam = {.eye = {0, 1.5f, 5}, .look_at = {0, 1.5f, 0}};
    prism_render_desc d = {.width = 20,
                           .height = 20,
                           .material_colors = colors,
                           .material_colors_count = 1,
                           .background = {0, 0, 255, 255}};
    uint32_t *top = render(&cam, &d);
    d.bottom_row_first = true;
    uint32_t *bottom = render(&cam, &d);
    for (int y = 0; y < 20; y++)
        assert_memory_equal(top + y * 20, bottom + (19 - y) * 20, 20 * sizeof *top);
    assert_int_equal(top[0] & 0xFF, 0);                    /* top row: background */
    assert_true((top[19 * 20 + 10] & 0xFF) > 200);         /* bottom row: the cube, */
    assert_int_equal((top[19 * 20 + 10] >> 16) & 0xFF, 0); /* not the background */
    free(top);
    free(bottom);
}

/* A wide image is cut into bands of whole 8x4 tiles (the last band here
 * is 10 rows, so its tiles stick out): every pixel is written once, and
 * the picture is symmetric about its middle, as the scene is. */
static void test_bands(void **state)
{
    (void)state;
    enum { BW = 16384, BH = 138 };
    prism_render_desc d = {.width = BW, .height = BH, .background = {1, 2, 3, 4}};
    prism_camera cam = {.eye = {0, 0, 1.2f}, .look_at = {0, 0, 0}, .vfov_degrees = 10};
    prism_render_params p;
    assert_int_equal(prism__render_params(ctx, &cam, &d, &p), PRISM_SUCCESS);
    uint32_t *table = prism__render_colors(&d, 64);
    p.colors = table;
    p.color_count = 64;
    uint32_t *img = malloc((size_t)BW * BH * 4);
    for (size_t i = 0; i < (size_t)BW * BH; i++)
        img[i] = 0xDEADBEEFu;
    unsigned launches = 0;
    assert_int_equal(prism__render_launch(ctx, &cube.view, &p, img, &launches), PRISM_SUCCESS);
    assert_int_equal(launches, 2);
    for (size_t y = 0; y < BH; y++)
        for (size_t x = 0; x < BW; x++) {
            assert_int_not_equal(img[y * BW + x], 0xDEADBEEFu);
            if (x < BW / 2 && y < BH / 2)
                assert_true(abs((int)(img[y * BW + x] & 0xFF) -
                                (int)(img[(BH - 1 - y) * BW + (BW - 1 - x)] & 0xFF)) <= 1);
        }
    free(img);
    free(table);
}

static void test_palette(void **state)
{
    (void)state;
    uint8_t a[4], b[4];
    prism_render_palette_color(0, a);
    prism_render_palette_color(1, b);
    assert_int_equal(a[3], 255);
    assert_memory_not_equal(a, b, 4);
    prism_render_desc d = {.width = 9, .height = 9};
    uint32_t *img = render(&front, &d); /* no colours: the palette, material 0 */
    uint32_t p0 = rgba(a[0], a[1], a[2], a[3]);
    assert_int_equal(img[4 * 9 + 4], p0);
    free(img);
}

/* The public path: upload the scene, render into host memory with padded
 * rows and into a device buffer; both equal the internal render. */
static void test_public_path(void **state)
{
    (void)state;
    prism_geometry *geom = NULL;
    assert_int_equal(prism_geometry_upload(ctx, &cube.scene, cube.bvh, NULL, &geom), PRISM_SUCCESS);
    prism_render_desc d = {.width = 31,
                           .height = 17,
                           .material_colors = colors,
                           .material_colors_count = 2,
                           .background = {1, 2, 3, 4}};
    uint32_t *ref = render(&front, &d);
    enum { PAD = 40 };
    uint32_t *padded = calloc(PAD * 17, sizeof *padded);
    prism_target t = {.kind = PRISM_TARGET_HOST, .host = padded, .row_bytes = PAD * 4};
    prism_render_stats st;
    assert_int_equal(prism_render(ctx, geom, &front, &d, &t, &st), PRISM_SUCCESS);
    for (int y = 0; y < 17; y++)
        assert_memory_equal(padded + y * PAD, ref + y * 31, 31 * 4);
    assert_int_equal(padded[PAD - 1], 0); /* padding untouched */
    assert_int_equal(st.launches, 1);
    assert_false(st.interop);
    prism_buffer *buf = NULL;
    assert_int_equal(prism_buffer_create_device(ctx, 64 + 31 * 17 * 4, "test.image", &buf),
                     PRISM_SUCCESS);
    prism_target bt = {.kind = PRISM_TARGET_BUFFER, .buffer = buf, .offset = 64};
    assert_int_equal(prism_render(ctx, geom, &front, &d, &bt, NULL), PRISM_SUCCESS);
    uint32_t *back = calloc(31 * 17, sizeof *back);
    assert_int_equal(prism_buffer_read(buf, 64, back, 31 * 17 * 4), PRISM_SUCCESS);
    assert_memory_equal(back, ref, 31 * 17 * 4);
    bt.offset = 68; /* one pixel too far */
    assert_int_equal(prism_render(ctx, geom, &front, &d, &bt, NULL), PRISM_ERROR_OUT_OF_RANGE);
    t.row_bytes = 30 * 4;
    assert_int_equal(prism_render(ctx, geom, &front, &d, &t, NULL), PRISM_ERROR_INVALID_ARGUMENT);
    t.host = NULL;
    t.row_bytes = 0;
    assert_int_equal(prism_render(ctx, geom, &front, &d, &t, NULL), PRISM_SUCCESS); /* discarded */
    /* The colour table is kept between frames; a new one must replace it. */
    prism_render_desc d2 = d;
    const uint8_t blue[1][4] = {{0, 0, 255, 255}};
    d2.material_colors = blue;
    d2.material_colors_count = 1;
    t.host = padded;
    t.row_bytes = PAD * 4;
    assert_int_equal(prism_render(ctx, geom, &front, &d2, &t, NULL), PRISM_SUCCESS);
    assert_int_equal(padded[8 * PAD + 15], rgba(0, 0, 255, 255));
    assert_int_equal(prism_render(ctx, geom, &front, &d, &t, NULL), PRISM_SUCCESS);
    assert_int_equal(padded[8 * PAD + 15], rgba(255, 0, 0, 255));
    prism_context *other = kt_host_context();
    assert_int_equal(prism_render(other, geom, &front, &d, &t, NULL), PRISM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(prism_context_last_error(other), "another context"));
    prism_context_destroy(other);
    prism_target none = {.kind = PRISM_TARGET_BUFFER};
    assert_int_equal(prism_render(ctx, geom, &front, &d, &none, NULL),
                     PRISM_ERROR_INVALID_ARGUMENT);
    prism_buffer_release(buf);
    free(back);
    free(padded);
    free(ref);
    prism_geometry_destroy(geom);
}

/* Every placement policy, the split node array included, gives the same
 * picture. */
static void test_placement_policies(void **state)
{
    (void)state;
    kt_scene s = {0};
    const float c[3] = {0, 0, 0}, lo[3] = {-2, -2, -2}, hi[3] = {2, 2, 2};
    kt_sphere(&s, c, 1.0f, 64, 1, 1, 0, PRISM_NONE);
    kt_box(&s, lo, hi, 0, 0, PRISM_NONE, PRISM_NONE);
    assert_int_equal(kt_build(&s, ctx), 0);
    prism_camera cam = {.eye = {0.3f, 0.5f, 1.9f}, .look_at = {0, 0, 0}, .vfov_degrees = 70};
    prism_render_desc d = {.width = 64, .height = 64, .mode = PRISM_RENDER_XRAY};
    uint32_t *ref = NULL, *img = calloc(64 * 64, 4);
    const prism_placement_policy policies[] = {PRISM_PLACEMENT_AUTO, PRISM_PLACEMENT_DEVICE,
                                               PRISM_PLACEMENT_MAPPED, PRISM_PLACEMENT_CHROMA};
    for (int i = 0; i < 5; i++) {
        prism_geometry *g = kt_upload(&s, ctx, policies[i % 4], i == 4);
        assert_non_null(g);
        prism_target t = {.kind = PRISM_TARGET_HOST, .host = img};
        assert_int_equal(prism_render(ctx, g, &cam, &d, &t, NULL), PRISM_SUCCESS);
        if (ref == NULL) {
            ref = img;
            img = calloc(64 * 64, 4);
        } else {
            assert_memory_equal(img, ref, 64 * 64 * 4);
        }
        prism_geometry_destroy(g);
    }
    free(img);
    free(ref);
    kt_free(&s, ctx);
}

/* A red world box (solid 0) around a green cube (solid 1), seen from
 * outside the world. Hiding solid 0 shows the cube in the middle and the
 * background where only the world was; the crossing limit stops a ray
 * that has crossed too many hidden surfaces; the mask is rebuilt when the
 * list changes between frames. */
static void test_hidden_solids(void **state)
{
    (void)state;
    kt_scene s = {0};
    const float wlo[3] = {-3, -3, -3}, whi[3] = {3, 3, 3}, lo[3] = {-1, -1, -1}, hi[3] = {1, 1, 1};
    kt_box(&s, wlo, whi, 0, 0, PRISM_NONE, PRISM_NONE);
    kt_box(&s, lo, hi, 1, 1, 0, PRISM_NONE);
    assert_int_equal(kt_build(&s, ctx), 0);
    prism_geometry *g = kt_upload(&s, ctx, PRISM_PLACEMENT_AUTO, false);
    assert_non_null(g);
    const prism_camera cam = {.eye = {0, 0, 10}, .look_at = {0, 0, 0}, .vfov_degrees = 40};
    const uint32_t world[1] = {0}, both[2] = {1, 0};
    prism_render_desc d = {.width = 32,
                           .height = 32,
                           .background = {10, 20, 30, 255},
                           .material_colors = colors,
                           .material_colors_count = 2};
    uint32_t img[32 * 32];
    prism_target t = {.kind = PRISM_TARGET_HOST, .host = img};
    const uint32_t red = rgba(255, 0, 0, 255), green = rgba(0, 255, 0, 255),
                   bg = rgba(10, 20, 30, 255);
    assert_int_equal(prism_render(ctx, g, &cam, &d, &t, NULL), PRISM_SUCCESS);
    assert_int_equal(img[16 * 32 + 16], red);                      /* the world's face hides all */
    assert_int_equal(img[1 * 32 + 16] & 0xFFFFFF00u, 0xFF000000u); /* red, seen at an angle */
    assert_true((img[1 * 32 + 16] & 0xFFu) > 200);
    d.hidden_solids = world;
    d.hidden_solids_count = 1;
    assert_int_equal(prism_render(ctx, g, &cam, &d, &t, NULL), PRISM_SUCCESS);
    assert_int_equal(img[16 * 32 + 16], green);
    assert_int_equal(img[1 * 32 + 16], bg); /* through both world faces */
    d.mode = PRISM_RENDER_XRAY;             /* x-ray: the world adds no layer */
    d.xray_layers = 1;
    d.xray_alpha = 1.0f;
    assert_int_equal(prism_render(ctx, g, &cam, &d, &t, NULL), PRISM_SUCCESS);
    assert_int_equal(img[16 * 32 + 16], green);
    d.mode = PRISM_RENDER_SHADED;
    d.hidden_solids = both;
    d.hidden_solids_count = 2;
    assert_int_equal(prism_render(ctx, g, &cam, &d, &t, NULL), PRISM_SUCCESS);
    assert_int_equal(img[16 * 32 + 16], bg); /* 4 hidden crossings, all allowed */
    d.hidden_solids_count = 0;               /* a changed list reaches the kernels */
    assert_int_equal(prism_render(ctx, g, &cam, &d, &t, NULL), PRISM_SUCCESS);
    assert_int_equal(img[16 * 32 + 16], red);
    /* The internal path: past the limit a ray sees nothing more. */
    prism_render_params p;
    d.hidden_solids = world;
    d.hidden_solids_count = 1;
    assert_int_equal(prism__render_params(ctx, &cam, &d, &p), PRISM_SUCCESS);
    assert_int_equal(p.max_hidden_crossings, PRISM_RENDER_MAX_HIDDEN_CROSSINGS);
    uint32_t *table = prism__render_colors(&d, 64 + prism__render_hidden_words(&d));
    prism__render_hidden_mask(&d, table + 64, prism__render_hidden_words(&d));
    assert_int_equal(table[64], 1u);
    p.colors = table;
    p.color_count = 64;
    p.hidden = table + 64;
    p.hidden_bits = 32;
    p.max_hidden_crossings = 0;
    assert_int_equal(prism__render_launch(ctx, &s.view, &p, img, NULL), PRISM_SUCCESS);
    assert_int_equal(img[16 * 32 + 16], bg);
    p.max_hidden_crossings = 1;
    assert_int_equal(prism__render_launch(ctx, &s.view, &p, img, NULL), PRISM_SUCCESS);
    assert_int_equal(img[16 * 32 + 16], green);
    free(table);
    /* Bad lists. */
    d.hidden_solids = NULL;
    assert_int_equal(prism_render(ctx, g, &cam, &d, &t, NULL), PRISM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(prism_context_last_error(ctx), "1 hidden solids but no array"));
    const uint32_t huge[2] = {0, PRISM_RENDER_MAX_SOLID_ID};
    d.hidden_solids = huge;
    d.hidden_solids_count = 2;
    assert_int_equal(prism_render(ctx, g, &cam, &d, &t, NULL), PRISM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(prism_context_last_error(ctx), "hidden solid 1 has id"));
    prism_geometry_destroy(g);
    kt_free(&s, ctx);
}

static void test_errors(void **state)
{
    (void)state;
    prism_render_params p;
    prism_render_desc d = {.width = 0, .height = 10};
    assert_int_equal(prism__render_params(ctx, &front, &d, &p), PRISM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(prism_context_last_error(ctx), "0x10"));
    d.width = 10;
    prism_camera same = {.eye = {1, 1, 1}, .look_at = {1, 1, 1}};
    assert_int_equal(prism__render_params(ctx, &same, &d, &p), PRISM_ERROR_INVALID_ARGUMENT);
    prism_camera up = {.eye = {0, 5, 0}, .look_at = {0, 0, 0}};
    assert_int_equal(prism__render_params(ctx, &up, &d, &p), PRISM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(prism_context_last_error(ctx), "parallel"));
    prism_camera fov = {.eye = {0, 0, 5}, .vfov_degrees = 180};
    assert_int_equal(prism__render_params(ctx, &fov, &d, &p), PRISM_ERROR_INVALID_ARGUMENT);
    d.xray_alpha = 2;
    assert_int_equal(prism__render_params(ctx, &front, &d, &p), PRISM_ERROR_INVALID_ARGUMENT);
    d.xray_alpha = 0;
    d.material_colors_count = 3;
    assert_int_equal(prism__render_params(ctx, &front, &d, &p), PRISM_ERROR_INVALID_ARGUMENT);
    d.material_colors_count = 0;
    assert_int_equal(prism__render_params(ctx, NULL, &d, &p), PRISM_ERROR_INVALID_ARGUMENT);
    prism_target t = {.kind = PRISM_TARGET_HOST};
    assert_int_equal(prism_render(ctx, NULL, &front, &d, &t, NULL), PRISM_ERROR_INVALID_ARGUMENT);
    /* Occupancy: the host backend has no kernels; names are checked first. */
    prism_occupancy o;
    assert_int_equal(prism_kernel_occupancy(ctx, "render", 128, &o), PRISM_ERROR_UNSUPPORTED);
    assert_int_equal(prism_kernel_occupancy(ctx, "nope", 128, &o), PRISM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(prism_kernel_occupancy(ctx, NULL, 128, &o), PRISM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(prism_kernel_occupancy(ctx, "render", 128, NULL),
                     PRISM_ERROR_INVALID_ARGUMENT);
}

/* The CUDA render's variant is a context's own: choosing it for one
 * leaves another's default (a build without CUDA has no variants). */
static void test_render_choice_per_context(void **state)
{
    (void)state;
    if (prism__cuda_render_variants() == 0) {
        assert_int_equal(prism__cuda_render_tuning(ctx, 0, 64), 0);
        return;
    }
    prism_context *other = kt_host_context();
    assert_non_null(other);
    int v0, v;
    unsigned b0, b;
    prism__cuda_render_tuning_get(other, &v0, &b0);
    assert_true(prism__cuda_render_tuning(ctx, 1, 64));
    prism__cuda_render_tuning_get(ctx, &v, &b);
    assert_int_equal(v, 1);
    assert_int_equal(b, 64);
    prism__cuda_render_tuning_get(other, &v, &b);
    assert_int_equal(v, v0);
    assert_int_equal(b, b0);
    assert_false(prism__cuda_render_tuning(NULL, 1, 64));
    assert_int_equal(prism_context_destroy(other), PRISM_SUCCESS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_pixels),
        cmocka_unit_test(test_headlight),
        cmocka_unit_test(test_xray),
        cmocka_unit_test(test_matrix_camera),
        cmocka_unit_test(test_row_order),
        cmocka_unit_test(test_palette),
        cmocka_unit_test(test_bands),
        cmocka_unit_test(test_public_path),
        cmocka_unit_test(test_placement_policies),
        cmocka_unit_test(test_hidden_solids),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_render_choice_per_context),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
