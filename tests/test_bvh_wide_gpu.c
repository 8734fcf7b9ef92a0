/* The wide BVH on a CUDA device (label gpu; skipped without one): 1M rays
 * through the generated 2.56M-triangle detector, and rays through every
 * hostile scene, traced on the device by the binary walk, the render's
 * tuned binary walk, the wide walk and the wide walk a step at a time.
 * The closest hits must be the same triangle at the same t, bit for bit,
 * but for exact ties (the same t on another triangle), which the
 * smaller-index rule settles alike on all of them unless a box is entered
 * a rounding late: at most 1 in 10^4 rays. Every 8th ray is also traced on
 * the host (the reference): the same hit. Any-hit verdicts must agree.
 * PRISM_TEST_SMALL=1 (for compute-sanitizer): 20k rays on the detector. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bvh_hostile.h"
#include "bvh_internal.h"
#include "bvh_traverse.h"
#include "bvh_wide.h"
#include "bvh_wide_gpu.h"
#include "prism/scene.h"

static int no_device;

static uint64_t next(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 33;
}

static float uniform(uint64_t *s, float lo, float hi)
{
    return lo + (hi - lo) * (float)next(s) / 2147483648.0f;
}

/* n rays: half from anywhere in the box grown by 20%, half from its middle
 * tenth (inside a detector), directions uniform in a cube. */
static prism_ray *make_rays(const prism_bvh *b, size_t n, uint64_t seed)
{
    prism_ray *rays = malloc(n * sizeof *rays);
    assert_non_null(rays);
    const prism_bvh_node *root = &b->nodes[0];
    for (size_t i = 0; i < n; i++) {
        for (int k = 0; k < 3; k++) {
            const float lo = root->lo[k], hi = root->hi[k], c = 0.5f * (lo + hi), e = hi - lo;
            rays[i].org[k] = !(lo <= hi) ? 0.0f
                             : i % 2 ? uniform(&seed, lo - 0.2f * e, hi + 0.2f * e)
                                     : uniform(&seed, c - 0.05f * e, c + 0.05f * e);
            rays[i].dir[k] = uniform(&seed, -1.0f, 1.0f);
        }
        rays[i].tmin = 0.0f;
        rays[i].tmax = INFINITY;
    }
    return rays;
}

static bool same(uint32_t a, float ta, uint32_t b, float tb, size_t *ties)
{
    if (a == b)
        return memcmp(&ta, &tb, sizeof ta) == 0;
    if (a != PRISM_BVH_MISS && b != PRISM_BVH_MISS && ta == tb) {
        (*ties)++;
        return true;
    }
    return false;
}

/* Trace n rays through b both ways on the device and compare. */
static void check(const char *name, const prism_bvh *b, size_t n, uint64_t seed)
{
    prism_bvh_wide *w = NULL;
    assert_int_equal(prism__bvh_collapse(b, &w), PRISM_SUCCESS);
    prism_ray *rays = make_rays(b, n, seed);
    wide_gpu_result *out = malloc(n * sizeof *out);
    assert_non_null(out);
    assert_int_equal(wide_gpu_trace(b, w, rays, n, out), 0);
    size_t hits = 0, ties = 0, tuned_ties = 0, host_ties = 0, step_ties = 0;
    prism_geometry_view host;
    prism__bvh_view(b, &host);
    for (size_t i = 0; i < n; i++) {
        const wide_gpu_result *r = &out[i];
        if (i % 8 == 0) { /* the host, the reference: the device's products are unfused too */
            prism_hit h;
            prism_bvh_closest(&host, &rays[i], &h);
            if (!same(h.triangle, h.t, r->wide.triangle, r->wide.t, &host_ties))
                fail_msg("%s ray %zu: host %u t %.9g, device wide %u t %.9g", name, i, h.triangle,
                         (double)h.t, r->wide.triangle, (double)r->wide.t);
        }
        if (!same(r->binary.triangle, r->binary.t, r->wide.triangle, r->wide.t, &ties) ||
            !same(r->tuned, r->tuned_t, r->wide.triangle, r->wide.t, &tuned_ties) ||
            !same(r->step, r->step_t, r->wide.triangle, r->wide.t, &step_ties))
            fail_msg("%s ray %zu: binary %u t %.9g, tuned %u t %.9g, wide %u t %.9g, step %u t %.9g",
                     name, i, r->binary.triangle, (double)r->binary.t, r->tuned, (double)r->tuned_t,
                     r->wide.triangle, (double)r->wide.t, r->step, (double)r->step_t);
        assert_int_equal(r->any_binary != PRISM_BVH_MISS, r->any_wide != PRISM_BVH_MISS);
        assert_int_equal(r->any_wide != PRISM_BVH_MISS, r->wide.triangle != PRISM_BVH_MISS);
        hits += r->wide.triangle != PRISM_BVH_MISS;
    }
    printf("# %s: %zu rays, %zu hit, exact ties reported differently: %zu binary, %zu tuned, "
           "%zu host (of %zu); "
           "%zu wide nodes (%zu bytes) for %zu binary nodes (%zu bytes)\n",
           name, n, hits, ties, tuned_ties, host_ties, (n + 7) / 8, w->node_count, w->node_count * sizeof *w->nodes,
           b->node_count, b->node_count * sizeof *b->nodes);
    assert_true(ties <= n / 10000 + 1 && tuned_ties <= n / 10000 + 1 && host_ties <= n / 10000 + 1 &&
                step_ties <= n / 10000 + 1);
    free(out);
    free(rays);
    prism__bvh_wide_free(w);
}

static void test_detector(void **state)
{
    (void)state;
    if (no_device)
        skip();
    prism_scene *s = NULL;
    assert_int_equal(prism_scene_load(PRISM_BVH_WIDE_GPU_DETECTOR, NULL, &s), PRISM_SUCCESS);
    prism_bvh *b = NULL;
    assert_int_equal(prism_bvh_build(s->positions, s->vertices_count, s->indices,
                                     s->triangles_count, NULL, &b),
                     PRISM_SUCCESS);
    const char *small = getenv("PRISM_TEST_SMALL");
    check("detector", b, small && small[0] == '1' ? 20000 : 1000000, 1);
    prism_bvh_free(b);
    prism_scene_free(s);
}

static void test_hostile(void **state)
{
    (void)state;
    if (no_device)
        skip();
    for (const char *const *name = bvh_hostile_names; *name; name++) {
        float *pos = NULL;
        uint32_t *idx = NULL;
        size_t nv = 0, nt = 0;
        assert_int_equal(bvh_hostile_scene(*name, &pos, &nv, &idx, &nt), BVH_HOSTILE_OK);
        prism_bvh *b = NULL;
        assert_int_equal(prism_bvh_build(pos, nv, idx, nt, NULL, &b), PRISM_SUCCESS);
        check(*name, b, 20000, 2);
        prism_bvh_free(b);
        free(pos);
        free(idx);
    }
}

int main(void)
{
    /* one empty trace finds whether there is a device */
    prism_bvh_node root = {{1, 1, 1}, 0, {0, 0, 0}, 0};
    prism_bvh b = {&root, 1, NULL, 0, NULL, NULL, 0, {0}};
    prism_bvh_wide *w = NULL;
    if (prism__bvh_collapse(&b, &w) != PRISM_SUCCESS)
        return 1;
    wide_gpu_result r;
    prism_ray ray = {{0, 0, 0}, 0.0f, {0, 0, 1}, 1.0f};
    const int rc = wide_gpu_trace(&b, w, &ray, 1, &r);
    prism__bvh_wide_free(w);
    if (rc == WIDE_GPU_NO_DEVICE) {
        printf("no CUDA device: skipped\n");
        return 77;
    }
    no_device = rc != 0;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_detector),
        cmocka_unit_test(test_hostile),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
