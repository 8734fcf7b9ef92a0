/* Rendering on the CUDA backend against the host backend (the reference),
 * across placement policies and output targets. Skipped (77) without a
 * CUDA device.
 *
 * Tolerance between backends: the CUDA build uses --use_fast_math
 * (approximate division, square root, tangent), so a shade may round one
 * level apart, and a ray through a triangle edge may pick the neighbour;
 * at most 0.1% of pixels may differ by more than one level. Between
 * placement policies and targets on CUDA the code and arithmetic are the
 * same: pixel-exact. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_compare.h"
#include "prism/kernels.h"
#include "prism/memory.h"
#include "prism/render.h"
#include "engine/launch/render_tuning.h"

enum { W = 640, H = 480 };

static kt_scene scene;
static prism_geometry *host_geom, *cuda_geom;

static int setup(void **state)
{
    (void)state;
    kt_detector_scene(&scene);
    if (kt_build(&scene, gc_host) != 0)
        return -1;
    host_geom = kt_upload(&scene, gc_host, PRISM_PLACEMENT_AUTO, false);
    cuda_geom = kt_upload(&scene, gc_cuda, PRISM_PLACEMENT_DEVICE, false);
    return host_geom != NULL && cuda_geom != NULL ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    prism_geometry_destroy(host_geom);
    prism_geometry_destroy(cuda_geom);
    kt_free(&scene, gc_host);
    return 0;
}

static const prism_camera outside = {.eye = {7, 5, 9}, .look_at = {0, 0, 0}, .vfov_degrees = 50};
static const prism_camera inside = {.eye = {0.5f, 0.3f, 3.5f},
                                    .look_at = {0, 0, 0},
                                    .vfov_degrees = 70};

static uint32_t *render(prism_context *ctx, prism_geometry *g, const prism_camera *cam,
                        prism_render_mode mode)
{
    prism_render_desc d = {.width = W, .height = H, .mode = mode, .background = {20, 20, 40, 255}};
    uint32_t *img = calloc(W * H, sizeof *img);
    prism_target t = {.kind = PRISM_TARGET_HOST, .host = img};
    assert_int_equal(prism_render(ctx, g, cam, &d, &t, NULL), PRISM_SUCCESS);
    return img;
}

static void compare(const uint32_t *a, const uint32_t *b, const char *what)
{
    size_t off = 0, max = 0;
    for (size_t i = 0; i < (size_t)W * H; i++) {
        size_t worst = 0;
        for (int c = 0; c < 4; c++) {
            int d = abs((int)((a[i] >> (8 * c)) & 0xFF) - (int)((b[i] >> (8 * c)) & 0xFF));
            worst = (size_t)d > worst ? (size_t)d : worst;
        }
        off += worst > 1;
        max = worst > max ? worst : max;
    }
    printf("# %s: %zu of %d pixels differ by more than one level (max %zu)\n", what, off, W * H,
           max);
    assert_true(off * 1000 <= (size_t)W * H);
}

static void test_same_images_both_backends(void **state)
{
    (void)state;
    const prism_camera *cams[2] = {&outside, &inside};
    for (int c = 0; c < 2; c++)
        for (int m = 0; m < 2; m++) {
            uint32_t *a = render(gc_host, host_geom, cams[c], (prism_render_mode)m);
            uint32_t *b = render(gc_cuda, cuda_geom, cams[c], (prism_render_mode)m);
            compare(a, b,
                    c == 0 ? (m ? "outside x-ray" : "outside shaded")
                           : (m ? "inside x-ray" : "inside shaded"));
            free(a);
            free(b);
        }
}

static void test_placement_policies_identical(void **state)
{
    (void)state;
    uint32_t *ref = render(gc_cuda, cuda_geom, &inside, PRISM_RENDER_XRAY);
    const prism_placement_policy p[3] = {PRISM_PLACEMENT_MAPPED, PRISM_PLACEMENT_CHROMA,
                                         PRISM_PLACEMENT_AUTO};
    for (int i = 0; i < 3; i++) {
        prism_geometry *g = kt_upload(&scene, gc_cuda, p[i], i == 1);
        assert_non_null(g);
        uint32_t *img = render(gc_cuda, g, &inside, PRISM_RENDER_XRAY);
        assert_memory_equal(img, ref, W * H * 4);
        free(img);
        prism_geometry_destroy(g);
    }
    free(ref);
}

/* Host memory, device memory, mapped pinned memory: the same pixels. */
static void test_targets_identical(void **state)
{
    (void)state;
    uint32_t *ref = render(gc_cuda, cuda_geom, &outside, PRISM_RENDER_SHADED);
    prism_render_desc d = {.width = W, .height = H, .background = {20, 20, 40, 255}};
    prism_buffer *dev = NULL, *mapped = NULL;
    assert_int_equal(prism_buffer_create_device(gc_cuda, W * H * 4, "test.image", &dev),
                     PRISM_SUCCESS);
    assert_int_equal(prism_buffer_create_pinned(gc_cuda, W * H * 4, PRISM_HOST_MAPPED,
                                                "test.mapped", &mapped),
                     PRISM_SUCCESS);
    prism_buffer *bufs[2] = {dev, mapped};
    uint32_t *img = calloc(W * H, 4);
    for (int i = 0; i < 2; i++) {
        prism_target t = {.kind = PRISM_TARGET_BUFFER, .buffer = bufs[i]};
        assert_int_equal(prism_render(gc_cuda, cuda_geom, &outside, &d, &t, NULL), PRISM_SUCCESS);
        assert_int_equal(prism_buffer_read(bufs[i], 0, img, W * H * 4), PRISM_SUCCESS);
        assert_memory_equal(img, ref, W * H * 4);
    }
    free(img);
    free(ref);
    prism_buffer_release(dev);
    prism_buffer_release(mapped);
}

/* Every CUDA render kernel variant (engine/launch/render_tuning.h), in blocks of
 * 256, 128 and 64, against the host, shaded and x-ray, from both cameras,
 * and with the hall hidden (rays step over its surfaces). */
static void test_every_kernel_variant(void **state)
{
    (void)state;
    int v0;
    unsigned b0;
    prism__cuda_render_tuning_get(gc_cuda, &v0, &b0);
    const prism_camera *cams[2] = {&outside, &inside};
    const uint32_t hall = 0;
    uint32_t *ref[5];
    for (int i = 0; i < 4; i++)
        ref[i] = render(gc_host, host_geom, cams[i / 2], (prism_render_mode)(i % 2));
    prism_render_desc hd = {.width = W,
                            .height = H,
                            .background = {20, 20, 40, 255},
                            .hidden_solids = &hall,
                            .hidden_solids_count = 1};
    ref[4] = calloc(W * H, 4);
    prism_target ht = {.kind = PRISM_TARGET_HOST, .host = ref[4]};
    assert_int_equal(prism_render(gc_host, host_geom, &outside, &hd, &ht, NULL), PRISM_SUCCESS);
    const unsigned blocks[3] = {256, 128, 64};
    for (int v = 0; v < prism__cuda_render_variants(); v++)
        for (int b = 0; b < 3; b++) {
            assert_true(prism__cuda_render_tuning(gc_cuda, v, blocks[b]));
            char what[64];
            for (int i = 0; i < 4; i++) {
                uint32_t *img = render(gc_cuda, cuda_geom, cams[i / 2], (prism_render_mode)(i % 2));
                snprintf(what, sizeof what, "variant %d/%u view %d", v, blocks[b], i);
                compare(ref[i], img, what);
                free(img);
            }
            uint32_t *img = calloc(W * H, 4);
            prism_target t = {.kind = PRISM_TARGET_HOST, .host = img};
            assert_int_equal(prism_render(gc_cuda, cuda_geom, &outside, &hd, &t, NULL),
                             PRISM_SUCCESS);
            snprintf(what, sizeof what, "variant %d/%u hall hidden", v, blocks[b]);
            compare(ref[4], img, what);
            free(img);
        }
    for (int i = 0; i < 5; i++)
        free(ref[i]);
    /* out of range: refused, the choice unchanged */
    assert_true(prism__cuda_render_tuning(gc_cuda, v0, b0));
    assert_false(prism__cuda_render_tuning(gc_cuda, prism__cuda_render_variants(), 256));
    assert_false(prism__cuda_render_tuning(gc_cuda, -1, 256));
    assert_false(prism__cuda_render_tuning(gc_cuda, 0, 48));
    assert_false(prism__cuda_render_tuning(gc_cuda, 0, 512));
    int v;
    unsigned b;
    prism__cuda_render_tuning_get(gc_cuda, &v, &b);
    assert_int_equal(v, v0);
    assert_int_equal(b, b0);
}

static void test_occupancy_report(void **state)
{
    (void)state;
    const char *names[3] = {"render", "generate", "propagate"};
    for (int i = 0; i < 3; i++) {
        prism_occupancy o;
        int regs = 0;
        size_t shared = 0;
        assert_int_equal(prism_kernel_resources(gc_cuda, names[i], &regs, &shared), PRISM_SUCCESS);
        assert_int_equal(prism_kernel_occupancy(gc_cuda, names[i], 128, &o), PRISM_SUCCESS);
        printf("# %s: %d registers, %zu shared bytes, occupancy %.2f (limited by %s)\n", names[i],
               regs, shared, o.occupancy, prism_occupancy_limit_name(o.limited_by));
        assert_true(regs > 0 && o.occupancy > 0.0);
    }
    prism_occupancy o;
    assert_int_equal(prism_kernel_occupancy(gc_cuda, "nope", 128, &o),
                     PRISM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(prism_kernel_occupancy(gc_host, "render", 128, &o), PRISM_ERROR_UNSUPPORTED);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_images_both_backends),
        cmocka_unit_test(test_placement_policies_identical),
        cmocka_unit_test(test_targets_identical),
        cmocka_unit_test(test_every_kernel_variant),
        cmocka_unit_test(test_occupancy_report),
    };
    return gc_run_group_tests(tests, setup, teardown);
}
