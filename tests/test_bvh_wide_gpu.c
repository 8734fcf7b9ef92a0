/* The wide BVH on a CUDA device (label gpu; skipped without one): 1M rays
 * through the generated 2.56M-triangle detector, and rays through every
 * hostile scene, traced on the device by the binary walk, the render's
 * tuned binary walk, the wide walk and the wide walk a step at a time.
 * The closest hits must be the same triangle at the same t, bit for bit,
 * but for exact ties (the same t on another triangle), which the
 * smaller-index rule settles alike on all of them unless a box is entered
 * a rounding late: at most 1 in 10^4 rays. Every 8th ray is also traced on
 * the host (the reference): the same hit. Any-hit verdicts must agree.
 *
 * The device's collapse (engine/cuda/bvh/wide.cu), after the device build,
 * through prism_geometry_upload with the nodes in device and in mapped
 * memory: read back, the same bytes as the host collapse of the same
 * binary tree, the structure checked (bvh_wide_check.h), and on the
 * detector 1M rays through it against the binary walks as above. A
 * malformed binary tree is refused, with nothing left allocated. The
 * read-back path (desc.wide_collapse_on_host) makes the same bytes; both
 * times are printed. PRISM_TEST_WIDE_DETECTOR=FILE.dae adds a larger
 * detector to the collapse's checks.
 * PRISM_TEST_SMALL=1 (for compute-sanitizer): 20k rays on the detector.
 * PRISM_TEST_SMALL=2 (for racecheck, whose shared-memory tracking is
 * slow): the collapse alone, on the hostile scenes of at most 5000
 * triangles. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/cuda/bvh/build.h"
#include "bvh_hostile.h"
#include "geometry/bvh/internal.h"
#include "prism/device/bvh_traverse.h"
#include "prism/device/bvh_wide.h"
#include "bvh_wide_check.h"
#include "bvh_wide_gpu.h"
#include "engine/upload/geometry_internal.h"
#include "prism/context.h"
#include "prism/scene.h"

static int no_device;
static prism_context *cuda;

static int small_level(void)
{
    const char *small = getenv("PRISM_TEST_SMALL");
    return small && (small[0] == '1' || small[0] == '2') ? small[0] - '0' : 0;
}

static bool small_run(void)
{
    return small_level() > 0;
}

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
                             : i % 2     ? uniform(&seed, lo - 0.2f * e, hi + 0.2f * e)
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

/* Trace n rays through b and its wide tree w both ways on the device and
 * compare. */
static void check_rays(const char *name, const prism_bvh *b, const prism_bvh_wide *w, size_t n,
                       uint64_t seed)
{
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
            fail_msg(
                "%s ray %zu: binary %u t %.9g, tuned %u t %.9g, wide %u t %.9g, step %u t %.9g",
                name, i, r->binary.triangle, (double)r->binary.t, r->tuned, (double)r->tuned_t,
                r->wide.triangle, (double)r->wide.t, r->step, (double)r->step_t);
        assert_int_equal(r->any_binary != PRISM_BVH_MISS, r->any_wide != PRISM_BVH_MISS);
        assert_int_equal(r->any_wide != PRISM_BVH_MISS, r->wide.triangle != PRISM_BVH_MISS);
        hits += r->wide.triangle != PRISM_BVH_MISS;
    }
    printf("# %s: %zu rays, %zu hit, exact ties reported differently: %zu binary, %zu tuned, "
           "%zu host (of %zu); "
           "%zu wide nodes (%zu bytes) for %zu binary nodes (%zu bytes)\n",
           name, n, hits, ties, tuned_ties, host_ties, (n + 7) / 8, w->node_count,
           w->node_count * sizeof *w->nodes, b->node_count, b->node_count * sizeof *b->nodes);
    assert_true(ties <= n / 10000 + 1 && tuned_ties <= n / 10000 + 1 &&
                host_ties <= n / 10000 + 1 && step_ties <= n / 10000 + 1);
    free(out);
    free(rays);
}

static void check(const char *name, const prism_bvh *b, size_t n, uint64_t seed)
{
    prism_bvh_wide *w = NULL;
    assert_int_equal(prism__bvh_collapse(b, &w), PRISM_SUCCESS);
    check_rays(name, b, w, n, seed);
    prism__bvh_wide_free(w);
}

/* The generated detector and the host builder's tree over it. */
static prism_scene *detector_and_tree(prism_bvh **b)
{
    prism_scene *s = NULL;
    assert_int_equal(prism_scene_load(PRISM_BVH_WIDE_GPU_DETECTOR, NULL, &s), PRISM_SUCCESS);
    assert_int_equal(prism_bvh_build(s->positions, s->vertices_count, s->indices,
                                     s->triangles_count, NULL, b),
                     PRISM_SUCCESS);
    return s;
}

static void test_detector(void **state)
{
    (void)state;
    if (no_device || small_level() == 2) /* racecheck: the collapse alone */
        skip();
    prism_bvh *b = NULL;
    prism_scene *s = detector_and_tree(&b);
    check("detector", b, small_run() ? 20000 : 1000000, 1);
    prism_bvh_free(b);
    prism_scene_free(s);
}

static void test_hostile(void **state)
{
    (void)state;
    if (no_device || small_level() == 2) /* racecheck: the collapse alone */
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

/* ---- the device's collapse */

/* s built and collapsed on the device (nodes placed by `policy`): the
 * host collapse's bytes, a sound structure, and `rays` rays through it. */
static void device_collapse(const char *name, const prism_scene *s, prism_placement_policy policy,
                            size_t rays)
{
    prism_geometry_desc d = {.policy = policy,
                             .builder = PRISM_BVH_BUILDER_CUDA,
                             .skip_optics = true,
                             .traversal = PRISM_TRAVERSAL_WIDE};
    prism_geometry *g = NULL;
    const prism_result r = prism_geometry_upload(cuda, s, NULL, &d, &g);
    if (r != PRISM_SUCCESS)
        printf("# %s: %s\n", name, prism_context_last_error(cuda));
    assert_int_equal(r, PRISM_SUCCESS);
    const prism_upload_report *rep = prism_geometry_report(g);
    assert_true(rep->wide_on_device);
    assert_int_equal(rep->wide_mapped, policy == PRISM_PLACEMENT_MAPPED);
    prism_bvh *b = NULL;
    prism_bvh_wide *dev = NULL, *host = NULL;
    assert_int_equal(prism__geometry_download(g, &b), PRISM_SUCCESS);
    assert_int_equal(prism__geometry_download_wide(g, &dev), PRISM_SUCCESS);
    assert_non_null(dev);
    assert_int_equal(prism__bvh_collapse(b, &host), PRISM_SUCCESS);
    assert_int_equal(dev->node_count, host->node_count);
    assert_int_equal(dev->depth, host->depth);
    assert_memory_equal(dev->nodes, host->nodes, host->node_count * sizeof *host->nodes);
    assert_memory_equal(dev->triangles, host->triangles,
                        host->triangle_count * sizeof *host->triangles);
    check_wide(b, dev);
    printf("# %s, %s memory: %zu triangles, %zu wide nodes, depth %u: the host's bytes; "
           "collapsed and placed on the device in %.4f s\n",
           name, policy == PRISM_PLACEMENT_MAPPED ? "mapped" : "device", b->triangle_count,
           dev->node_count, dev->depth, rep->wide_seconds);
    /* the read-back (wide_collapse_on_host): the same bytes, and its time */
    d.wide_collapse_on_host = true;
    prism_geometry *gh = NULL;
    assert_int_equal(prism_geometry_upload(cuda, s, NULL, &d, &gh), PRISM_SUCCESS);
    assert_false(prism_geometry_report(gh)->wide_on_device);
    prism_bvh_wide *back = NULL;
    assert_int_equal(prism__geometry_download_wide(gh, &back), PRISM_SUCCESS);
    assert_non_null(back);
    assert_int_equal(back->node_count, host->node_count);
    assert_memory_equal(back->nodes, host->nodes, host->node_count * sizeof *host->nodes);
    printf("#   read back and collapsed on the host instead: %.4f s\n",
           prism_geometry_report(gh)->wide_seconds);
    prism__bvh_wide_free(back);
    prism_geometry_destroy(gh);
    if (rays)
        check_rays(name, b, dev, rays, 3);
    prism__bvh_wide_free(dev);
    prism__bvh_wide_free(host);
    prism_bvh_free(b);
    prism_geometry_destroy(g);
}

static void test_collapse_detector(void **state)
{
    (void)state;
    if (!cuda)
        skip();
    if (small_run()) { /* compute-sanitizer: the hostile scenes run the same kernels */
        printf("# left out (PRISM_TEST_SMALL)\n");
        skip();
    }
    prism_scene *s = NULL;
    assert_int_equal(prism_scene_load(PRISM_BVH_WIDE_GPU_DETECTOR, NULL, &s), PRISM_SUCCESS);
    device_collapse("detector", s, PRISM_PLACEMENT_DEVICE, 1000000);
    device_collapse("detector", s, PRISM_PLACEMENT_MAPPED, 0);
    prism_scene_free(s);
    /* PRISM_TEST_WIDE_DETECTOR: a larger one too (the 25.6M-triangle
     * detector, for the collapse's time there) */
    const char *big = getenv("PRISM_TEST_WIDE_DETECTOR");
    if (big && big[0]) {
        s = NULL;
        assert_int_equal(prism_scene_load(big, NULL, &s), PRISM_SUCCESS);
        device_collapse(big, s, PRISM_PLACEMENT_DEVICE, 0);
        device_collapse(big, s, PRISM_PLACEMENT_MAPPED, 0);
        prism_scene_free(s);
    }
}

/* AUTO on CUDA with the binary nodes all on the device: the wide tree is
 * made there too (the photons' trace walks it) where it fits; a device
 * budget with no room for it leaves the binary walk, the geometry still
 * all on the device; BINARY makes none. */
static void test_auto_on_device(void **state)
{
    (void)state;
    if (!cuda || small_level() == 2) /* racecheck: the collapse alone */
        skip();
    /* the host's tree, so that the placement plans its exact arrays */
    prism_bvh *b = NULL;
    prism_scene *s = detector_and_tree(&b);
    prism_geometry_desc d = {.policy = PRISM_PLACEMENT_DEVICE, .skip_optics = true};
    prism_geometry *g = NULL;
    assert_int_equal(prism_geometry_upload(cuda, s, b, &d, &g), PRISM_SUCCESS);
    const prism_upload_report *rep = prism_geometry_report(g);
    const prism_geometry_view *v = prism__geometry_view(g);
    assert_true(rep->wide_nodes > 0 && v->wide_count == rep->wide_nodes);
    assert_false(rep->wide_mapped);
    assert_true(v->device_resident);
    const size_t binary_bytes = rep->device_bytes;
    printf("# AUTO, device: %zu wide nodes (%.1f MB with the triangles) beside %.1f MB\n",
           rep->wide_nodes, (rep->wide_node_bytes + rep->wide_triangle_bytes) / 1e6,
           binary_bytes / 1e6);
    prism_geometry_destroy(g);
    /* a device budget of the binary arrays exactly: all of them on the
     * device, no room for the wide tree (a budget, not a reserve, so that
     * the other GPU suites' memory, running beside this one, changes
     * nothing) */
    d.policy = PRISM_PLACEMENT_AUTO;
    d.device_budget = binary_bytes;
    assert_int_equal(prism_geometry_upload(cuda, s, b, &d, &g), PRISM_SUCCESS);
    rep = prism_geometry_report(g);
    assert_int_equal(rep->mapped_bytes, 0);
    assert_int_equal(rep->wide_nodes, 0);
    assert_int_equal(prism__geometry_view(g)->wide_count, 0);
    prism_geometry_destroy(g);
    d.device_budget = 0;
    d.traversal = PRISM_TRAVERSAL_BINARY;
    assert_int_equal(prism_geometry_upload(cuda, s, b, &d, &g), PRISM_SUCCESS);
    assert_int_equal(prism_geometry_report(g)->wide_nodes, 0);
    prism_geometry_destroy(g);
    prism_bvh_free(b);
    prism_scene_free(s);
}

static void test_collapse_hostile(void **state)
{
    (void)state;
    if (!cuda)
        skip();
    for (const char *const *name = bvh_hostile_names; *name; name++) {
        float *pos = NULL;
        uint32_t *idx = NULL;
        size_t nv = 0, nt = 0;
        assert_int_equal(bvh_hostile_scene(*name, &pos, &nv, &idx, &nt), BVH_HOSTILE_OK);
        if ((small_level() == 1 && nt > 20000) || (small_level() == 2 && nt > 5000)) {
            free(pos);
            free(idx);
            continue;
        }
        prism_scene s = {
            .positions = pos, .vertices_count = nv, .indices = idx, .triangles_count = nt};
        device_collapse(*name, &s, PRISM_PLACEMENT_DEVICE, 0);
        device_collapse(*name, &s, PRISM_PLACEMENT_MAPPED, 0);
        free(pos);
        free(idx);
    }
}

static prism_result place_nothing(void *user, size_t nodes, size_t triangles, void **pn, void **pt)
{
    (void)nodes;
    (void)triangles;
    (void)pn;
    (void)pt;
    (*(int *)user)++;
    return PRISM_ERROR_UNSUPPORTED;
}

/* A binary tree whose leaves hold more triangles than there are, and one
 * whose root's children lie outside its nodes: refused before anything is
 * placed (a sound one reaches `place`). */
static void test_collapse_bad_tree(void **state)
{
    (void)state;
    if (!cuda)
        skip();
    const float v[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
    const uint32_t t[6] = {0, 1, 2, 0, 1, 2};
    prism_bvh_node nodes[4] = {{{0, 0, 0}, 2, {1, 1, 0}, 0},
                               {{0, 0, 0}, 0, {0, 0, 0}, 0},
                               {{0, 0, 0}, 0, {1, 1, 0}, 1},
                               {{0, 0, 0}, 0, {1, 1, 0}, 1}};
    prism_buffer *bn = NULL, *bv = NULL, *bt = NULL;
    assert_int_equal(prism_buffer_create_device(cuda, sizeof nodes, "test.nodes", &bn),
                     PRISM_SUCCESS);
    assert_int_equal(prism_buffer_create_device(cuda, sizeof v, "test.vertices", &bv),
                     PRISM_SUCCESS);
    assert_int_equal(prism_buffer_create_device(cuda, sizeof t, "test.triangles", &bt),
                     PRISM_SUCCESS);
    assert_int_equal(prism_buffer_write(bv, 0, v, sizeof v), PRISM_SUCCESS);
    assert_int_equal(prism_buffer_write(bt, 0, t, sizeof t), PRISM_SUCCESS);
    prism_geometry_view view = {0};
    view.nodes_head = prism_buffer_device_pointer(bn);
    view.node_count = view.nodes_split = 4;
    view.vertices = prism_buffer_device_pointer(bv);
    view.triangles = prism_buffer_device_pointer(bt);
    view.vertex_count = 3;
    view.triangle_count = 2;
    int placed = 0;
    prism__device_wide out;
    /* sound: each leaf one of the two triangles; refused only by place */
    nodes[3].first = 1;
    assert_int_equal(prism_buffer_write(bn, 0, nodes, sizeof nodes), PRISM_SUCCESS);
    assert_int_equal(prism__cuda_bvh_collapse(cuda, &view, place_nothing, &placed, &out),
                     PRISM_ERROR_UNSUPPORTED);
    assert_int_equal(placed, 1);
    /* leaves holding 3 triangles of 2 */
    nodes[3].first = 0;
    nodes[3].count = 2;
    assert_int_equal(prism_buffer_write(bn, 0, nodes, sizeof nodes), PRISM_SUCCESS);
    assert_int_equal(prism__cuda_bvh_collapse(cuda, &view, place_nothing, &placed, &out),
                     PRISM_ERROR_INVALID_ARGUMENT);
    printf("# %s\n", prism_context_last_error(cuda));
    /* children at 3 and 4 of 4 nodes */
    nodes[3].first = 1;
    nodes[3].count = 1;
    nodes[0].first = 3;
    assert_int_equal(prism_buffer_write(bn, 0, nodes, sizeof nodes), PRISM_SUCCESS);
    assert_int_equal(prism__cuda_bvh_collapse(cuda, &view, place_nothing, &placed, &out),
                     PRISM_ERROR_INVALID_ARGUMENT);
    printf("# %s\n", prism_context_last_error(cuda));
    assert_int_equal(placed, 1);
    prism_buffer_release(bn);
    prism_buffer_release(bv);
    prism_buffer_release(bt);
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
    prism_context_desc d = {.backend = PRISM_BACKEND_CUDA};
    if (!no_device && prism_context_create(&d, &cuda) != PRISM_SUCCESS)
        cuda = NULL;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_detector),          cmocka_unit_test(test_hostile),
        cmocka_unit_test(test_collapse_detector), cmocka_unit_test(test_collapse_hostile),
        cmocka_unit_test(test_collapse_bad_tree), cmocka_unit_test(test_auto_on_device),
    };
    const int failed = cmocka_run_group_tests(tests, NULL, NULL);
    /* every byte returned: a live allocation fails the destroy */
    const prism_result destroyed = cuda ? prism_context_destroy(cuda) : PRISM_SUCCESS;
    if (destroyed != PRISM_SUCCESS)
        printf("context destroy: %s\n", prism_result_string(destroyed));
    return failed || destroyed != PRISM_SUCCESS;
}
