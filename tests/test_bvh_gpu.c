/* The CUDA BVH builder (engine/cuda/bvh/build.cu), through
 * prism_geometry_upload with no host BVH, against the host builder (the
 * oracle). Skipped (77) without a CUDA device.
 *
 * On the bundled assets and the generated detector: the device-built tree,
 * read back, passes prism_bvh_check; closest hits agree with the host
 * tree's on random rays (1M on the detector): same scene triangle, or the
 * same distance within 1e-6 relative where triangles tie; its SAH is
 * printed beside the host tree's; rendered images agree; propagation's
 * flag histograms agree within 5 sigma. Hostile scenes (tests/bvh_hostile.h)
 * build valid trees, with PLOC's passes (the default) and with H-PLOC,
 * which also meet on the detector. Placements that want the nodes in mapped memory get
 * them moved there, with identical images. Too little device memory falls
 * back to the host build (AUTO) or fails clearly (CUDA). Bad triangles are
 * named. Two builds give the same bytes. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bvh_hostile.h"
#include "engine/upload/geometry_internal.h"
#include "prism/propagate.h"
#include "prism/render.h"
#include "prism/scene.h"

static prism_context *cuda;
/* Builds with H-PLOC's one launch (prism_geometry_desc.cuda_bvh_hploc)
 * instead of PLOC's passes, the default. */
static bool use_hploc;

/* PRISM_TEST_SMALL (compute-sanitizer runs, which are slow): fewer rays
 * and photons, and the tiny detector instead of the generated one. */
static bool small_run(void)
{
    return getenv("PRISM_TEST_SMALL") != NULL;
}

static prism_scene *load(const char *path)
{
    prism_scene *s = NULL;
    char error[512] = "";
    prism_load_desc d = {.error = error, .error_size = sizeof error};
    if (prism_scene_load(path, &d, &s) != PRISM_SUCCESS) {
        printf("# %s: %s\n", path, error);
        return NULL;
    }
    return s;
}

static prism_geometry *upload(prism_scene *s, prism_bvh_builder builder,
                              prism_placement_policy policy, size_t budget, prism_result *result)
{
    prism_geometry_desc d = {.policy = policy,
                             .builder = builder,
                             .budget = budget,
                             .skip_optics = s->materials_count == 0,
                             .cuda_bvh_hploc = use_hploc};
    if (budget)
        d.reserve = PRISM_PLACEMENT_NO_RESERVE;
    prism_geometry *g = NULL;
    prism_result r = prism_geometry_upload(cuda, s, NULL, &d, &g);
    if (result)
        *result = r;
    return g;
}

/* A host-built tree over the same triangles, uploaded as given. */
static prism_geometry *upload_given(prism_scene *s, const prism_bvh *bvh)
{
    prism_geometry_desc d = {.policy = PRISM_PLACEMENT_DEVICE,
                             .skip_optics = s->materials_count == 0};
    prism_geometry *g = NULL;
    assert_int_equal(prism_geometry_upload(cuda, s, bvh, &d, &g), PRISM_SUCCESS);
    return g;
}

static uint64_t splitmix(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static float unit(uint64_t *x)
{
    return (float)(splitmix(x) >> 40) / 16777216.0f;
}

/* n random rays from points in the scene's box (grown by a tenth) in
 * random directions; the ones whose hits disagree (different triangle and
 * distance beyond 1e-6 relative, or hit against miss) are counted. */
static size_t compare_rays(const prism_bvh *a, const prism_bvh *b, const float lo[3],
                           const float hi[3], size_t n, size_t *hits)
{
    size_t bad = 0, hit = 0;
#pragma omp parallel for reduction(+ : bad, hit) schedule(static)
    for (long i = 0; i < (long)n; i++) {
        uint64_t x = 0x5EED0000ull + (uint64_t)i * 7919u;
        prism_ray ray = {.tmin = 0.0f, .tmax = INFINITY};
        float len = 0;
        for (int k = 0; k < 3; k++) {
            float ext = hi[k] - lo[k];
            ray.org[k] = lo[k] - 0.05f * ext + 1.1f * ext * unit(&x);
            ray.dir[k] = 2.0f * unit(&x) - 1.0f;
            len += ray.dir[k] * ray.dir[k];
        }
        if (len == 0)
            ray.dir[0] = 1;
        prism_hit ha, hb;
        bool in_a = prism_bvh_intersect(a, &ray, &ha), in_b = prism_bvh_intersect(b, &ray, &hb);
        hit += in_a;
        if (in_a != in_b)
            bad++;
        else if (in_a && ha.triangle != hb.triangle &&
                 fabsf(ha.t - hb.t) > 1e-6f * fmaxf(fabsf(ha.t), fabsf(hb.t)))
            bad++;
    }
    *hits = hit;
    return bad;
}

static void check_tree(const prism_geometry *g, prism_bvh **out)
{
    prism_bvh *b = NULL;
    assert_int_equal(prism__geometry_download(g, &b), PRISM_SUCCESS);
    char msg[512] = "";
    prism_result r = prism_bvh_check(b, msg, sizeof msg);
    if (r != PRISM_SUCCESS)
        printf("# invalid tree: %s\n", msg);
    assert_int_equal(r, PRISM_SUCCESS);
    assert_true(b->stats.max_depth <= PRISM_BVH_MAX_DEPTH);
    *out = b;
}

static uint32_t *render(prism_geometry *g, const prism_camera *cam, int w, int h)
{
    prism_render_desc d = {.width = w, .height = h, .background = {20, 20, 40, 255}};
    uint32_t *img = calloc((size_t)w * h, sizeof *img);
    prism_target t = {.kind = PRISM_TARGET_HOST, .host = img};
    assert_int_equal(prism_render(cuda, g, cam, &d, &t, NULL), PRISM_SUCCESS);
    return img;
}

static size_t differing(const uint32_t *a, const uint32_t *b, size_t n)
{
    size_t d = 0;
    for (size_t i = 0; i < n; i++)
        d += a[i] != b[i];
    return d;
}

static prism_camera camera_of(const prism_scene *s, bool inside)
{
    prism_camera c = {.vfov_degrees = 60};
    for (int k = 0; k < 3; k++) {
        float mid = 0.5f * (s->bbox_min[k] + s->bbox_max[k]), ext = s->bbox_max[k] - s->bbox_min[k];
        c.look_at[k] = mid;
        c.eye[k] = inside ? mid + 0.05f * ext : mid + (k == 2 ? 1.6f : 0.9f) * ext;
    }
    return c;
}

static void compare_histograms(prism_geometry *a, prism_geometry *b, size_t count)
{
    prism_photon_source src = {.kind = PRISM_SOURCE_POINT, .count = count};
    prism_propagate_desc d = {.seed = 77, .max_steps = 60};
    prism_photon *pa = calloc(count, sizeof *pa), *pb = calloc(count, sizeof *pb);
    prism_propagate_outputs oa = {.photons = {.kind = PRISM_TARGET_HOST, .host = pa}};
    prism_propagate_outputs ob = {.photons = {.kind = PRISM_TARGET_HOST, .host = pb}};
    prism_propagate_stats sa, sb;
    assert_int_equal(prism_propagate(cuda, a, &src, &d, &oa, &sa), PRISM_SUCCESS);
    assert_int_equal(prism_propagate(cuda, b, &src, &d, &ob, &sb), PRISM_SUCCESS);
    printf("# propagate %zu photons: cuda-built tree %.4f s, host-built tree %.4f s\n", count,
           sb.seconds, sa.seconds);
    for (int bit = 0; bit < 32; bit++) {
        size_t na = 0, nb = 0;
        for (size_t i = 0; i < count; i++) {
            na += (pa[i].history >> bit) & 1u;
            nb += (pb[i].history >> bit) & 1u;
        }
        if (na + nb == 0)
            continue;
        double diff = fabs((double)na - (double)nb), tol = 5.0 * sqrt((double)(na + nb)) + 1.0;
        printf("#   %-18s host-built %8zu cuda-built %8zu (tolerance %.0f)\n",
               prism_history_flag_name(1u << bit), na, nb, tol);
        assert_true(diff <= tol);
    }
    free(pa);
    free(pb);
}

/* The whole comparison on one file. */
static void against_host(const char *path, size_t rays, size_t photons)
{
    if (small_run()) {
        rays /= 100;
        photons /= 100;
    }
    prism_scene *s = load(path);
    assert_non_null(s);
    prism_geometry *gc = upload(s, PRISM_BVH_BUILDER_CUDA, PRISM_PLACEMENT_DEVICE, 0, NULL);
    assert_non_null(gc);
    const prism_upload_report *rep = prism_geometry_report(gc);
    assert_int_equal(rep->bvh.builder, PRISM_BVH_BUILDER_CUDA);
    prism_bvh *dev = NULL, *host = NULL;
    check_tree(gc, &dev);
    assert_int_equal(prism_bvh_build(s->positions, s->vertices_count, s->indices,
                                     s->triangles_count, NULL, &host),
                     PRISM_SUCCESS);
    const double ratio = host->stats.sah_cost > 0 ? dev->stats.sah_cost / host->stats.sah_cost
                                                  : 1.0;
    printf("# %s: %zu triangles; cuda %.2f ms (%u passes%s), SAH %.2f, %zu nodes, depth %u; "
           "host SAH %.2f, %zu nodes, depth %u; SAH ratio %.3f\n",
           path, s->triangles_count, rep->bvh.seconds * 1e3, rep->bvh.iterations,
           rep->bvh.balanced ? ", balanced" : "", dev->stats.sah_cost, dev->node_count,
           dev->stats.max_depth, host->stats.sah_cost, host->node_count, host->stats.max_depth,
           ratio);
    /* the bench holds the 1.10 goal; this catches a broken clustering */
    assert_true(ratio <= 1.25);
    const double peak = rep->bvh.stats.node_bytes
                            ? (double)rep->bvh.peak_device_bytes / (double)rep->bvh.stats.node_bytes
                            : 0.0;
    printf("# peak device %.1f MB, %.2f x the node array\n", rep->bvh.peak_device_bytes / 1e6,
           peak);
    /* The builder's arena and outputs come to 106 bytes a triangle beside
     * the node array (engine/cuda/bvh/build.cu, plan_arena): 4.3x the node
     * array where, as on the generated detector, there are about as many
     * nodes as triangles. Small scenes are ruled by its constant parts. */
    if (s->triangles_count >= 1000000)
        assert_true(peak <= 4.5);
    size_t hits = 0, bad = compare_rays(dev, host, s->bbox_min, s->bbox_max, rays, &hits);
    printf("# %zu rays, %zu hits, %zu disagree\n", rays, hits, bad);
    assert_int_equal(bad, 0);

    prism_geometry *gh = upload_given(s, host);
    const int w = 640, h = 480;
    for (int inside = 0; inside < 2; inside++) {
        prism_camera cam = camera_of(s, inside);
        uint32_t *a = render(gh, &cam, w, h), *b = render(gc, &cam, w, h);
        size_t d = differing(a, b, (size_t)w * h);
        printf("# image %s: %zu of %d pixels differ\n", inside ? "inside" : "outside", d, w * h);
        /* a ray through an edge shared by two triangles may report either */
        assert_true(d <= (size_t)(w * h) / 10000);
        free(a);
        free(b);
    }
    if (photons && s->materials_count)
        compare_histograms(gh, gc, photons);
    prism_geometry_destroy(gh);
    prism_geometry_destroy(gc);
    prism_bvh_free(dev);
    prism_bvh_free(host);
    prism_scene_free(s);
}

static void test_assets(void **state)
{
    (void)state;
    static const char *const names[] = {"cube.dae", "sphere.dae", "box_with_hole.dae",
                                        "tiny_detector.dae"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", PRISM_ASSETS, names[i]);
        against_host(path, 100000, i == 3 ? 1000000 : 0);
    }
}

static void test_generated_detector(void **state)
{
    (void)state;
    if (small_run())
        against_host(PRISM_ASSETS "/tiny_detector.dae", 1000000, 1000000);
    else
        against_host(PRISM_BVH_GPU_DETECTOR, 1000000, 1000000);
}

static prism_scene scene_of(float *positions, size_t nv, uint32_t *indices, size_t nt)
{
    prism_scene s = {
        .positions = positions, .vertices_count = nv, .indices = indices, .triangles_count = nt};
    return s;
}

static void hostile_scenes(void)
{
    printf("# hostile scenes, %s\n", use_hploc ? "H-PLOC" : "PLOC's passes");
    for (const char *const *name = bvh_hostile_names; *name; name++) {
        float *p = NULL;
        uint32_t *t = NULL;
        size_t nv = 0, nt = 0;
        assert_int_equal(bvh_hostile_scene(*name, &p, &nv, &t, &nt), BVH_HOSTILE_OK);
        if (small_run() && nt > 20000) { /* under compute-sanitizer: the small ones only */
            printf("# %-12s %8zu triangles: left out (PRISM_TEST_SMALL)\n", *name, nt);
            free(p);
            free(t);
            continue;
        }
        prism_scene s = scene_of(p, nv, t, nt);
        prism_geometry_desc d = {.builder = PRISM_BVH_BUILDER_CUDA,
                                 .skip_optics = true,
                                 .cuda_bvh_hploc = use_hploc};
        prism_geometry *g = NULL;
        prism_result r = prism_geometry_upload(cuda, &s, NULL, &d, &g);
        if (r != PRISM_SUCCESS)
            printf("# %s: %s\n", *name, prism_context_last_error(cuda));
        assert_int_equal(r, PRISM_SUCCESS);
        const prism_upload_report *rep = prism_geometry_report(g);
        prism_bvh *dev = NULL, *host = NULL;
        check_tree(g, &dev);
        assert_int_equal(prism_bvh_build(p, nv, t, nt, NULL, &host), PRISM_SUCCESS);
        float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
        for (size_t i = 0; i < nv; i++)
            for (int k = 0; k < 3; k++) {
                lo[k] = fminf(lo[k], p[3 * i + k]);
                hi[k] = fmaxf(hi[k], p[3 * i + k]);
            }
        size_t hits = 0, bad = nt ? compare_rays(dev, host, lo, hi, 20000, &hits) : 0;
        printf("# %-12s %8zu triangles: %u passes%s, %zu nodes, depth %u, SAH %.3g (host %.3g), "
               "%zu of 20000 rays hit, %zu disagree\n",
               *name, nt, rep->bvh.iterations, rep->bvh.balanced ? " (balanced)" : "",
               dev->node_count, dev->stats.max_depth, dev->stats.sah_cost, host->stats.sah_cost,
               hits, bad);
        assert_int_equal(bad, 0);
        if (nt == 0)
            assert_int_equal(dev->node_count, 1);
        prism_bvh_free(dev);
        prism_bvh_free(host);
        prism_geometry_destroy(g);
        free(p);
        free(t);
    }
}

static void test_hostile(void **state)
{
    (void)state;
    hostile_scenes();
}

static void test_hostile_hploc(void **state)
{
    (void)state;
    use_hploc = true;
    hostile_scenes();
    use_hploc = false;
}

static void assert_same_tree(const prism_geometry *a, const prism_geometry *b);

/* The two clusterings on one scene: each tree valid and agreeing with the
 * host's on rays, H-PLOC's the same bytes in two builds (its node ids come
 * from an atomic counter, its tree must not), in one launch where the
 * passes take dozens, and
 * its SAH near theirs (H-PLOC's merges see 32 clusters at a time, the
 * passes a window over all of them). */
static void test_hploc_against_passes(void **state)
{
    (void)state;
    prism_scene *s = load(small_run() ? PRISM_ASSETS "/tiny_detector.dae" : PRISM_BVH_GPU_DETECTOR);
    assert_non_null(s);
    prism_bvh *host = NULL, *tree[2] = {NULL, NULL};
    assert_int_equal(prism_bvh_build(s->positions, s->vertices_count, s->indices,
                                     s->triangles_count, NULL, &host),
                     PRISM_SUCCESS);
    unsigned launches[2];
    double seconds[2];
    for (int k = 0; k < 2; k++) {
        use_hploc = k == 0;
        prism_geometry *g = upload(s, PRISM_BVH_BUILDER_CUDA, PRISM_PLACEMENT_DEVICE, 0, NULL);
        use_hploc = false;
        assert_non_null(g);
        const prism_upload_report *rep = prism_geometry_report(g);
        launches[k] = rep->bvh.iterations;
        seconds[k] = rep->bvh.phase_seconds[2] + rep->bvh.phase_seconds[3];
        assert_false(rep->bvh.balanced);
        assert_int_equal(rep->bvh.hploc, k == 0);
        check_tree(g, &tree[k]);
        if (k == 0) {
            use_hploc = true;
            prism_geometry *again = upload(s, PRISM_BVH_BUILDER_CUDA, PRISM_PLACEMENT_DEVICE, 0,
                                           NULL);
            use_hploc = false;
            assert_non_null(again);
            assert_same_tree(g, again);
            prism_geometry_destroy(again);
        }
        prism_geometry_destroy(g);
        size_t hits = 0, bad = compare_rays(tree[k], host, s->bbox_min, s->bbox_max,
                                            small_run() ? 2000 : 200000, &hits);
        assert_int_equal(bad, 0);
    }
    const double ratio = tree[0]->stats.sah_cost / tree[1]->stats.sah_cost;
    printf("# %zu triangles: H-PLOC %u launch, SAH %.2f, %zu nodes, depth %u, hierarchy and "
           "top-down %.3f ms; passes %u, SAH %.2f, %zu nodes, depth %u, %.3f ms; SAH ratio %.3f\n",
           s->triangles_count, launches[0], tree[0]->stats.sah_cost, tree[0]->node_count,
           tree[0]->stats.max_depth, seconds[0] * 1e3, launches[1], tree[1]->stats.sah_cost,
           tree[1]->node_count, tree[1]->stats.max_depth, seconds[1] * 1e3, ratio);
    assert_int_equal(launches[0], 1);
    assert_true(launches[1] > 1);
    assert_true(ratio <= 1.10);
    for (int k = 0; k < 2; k++)
        prism_bvh_free(tree[k]);
    prism_bvh_free(host);
    prism_scene_free(s);
}

/* Nodes wanted in mapped memory (all, or a tail) are built on the device
 * and moved; the images are the same bit for bit. */
static void test_placements(void **state)
{
    (void)state;
    char path[1024];
    snprintf(path, sizeof path, "%s/tiny_detector.dae", PRISM_ASSETS);
    prism_scene *s = load(path);
    assert_non_null(s);
    prism_geometry *ref = upload(s, PRISM_BVH_BUILDER_CUDA, PRISM_PLACEMENT_DEVICE, 0, NULL);
    prism_geometry *mapped = upload(s, PRISM_BVH_BUILDER_CUDA, PRISM_PLACEMENT_MAPPED, 0, NULL);
    prism_geometry *split = upload(s, PRISM_BVH_BUILDER_CUDA, PRISM_PLACEMENT_CHROMA, 0, NULL);
    assert_non_null(ref);
    assert_non_null(mapped);
    assert_non_null(split);
    assert_false(prism_geometry_report(ref)->bvh.nodes_moved);
    assert_true(prism_geometry_report(mapped)->bvh.nodes_moved);
    assert_int_equal(prism_geometry_report(mapped)->arrays[0].device_bytes, 0);
    char text[4096];
    prism_geometry_report_format(prism_geometry_report(split), text, sizeof text);
    printf("%s", text);
    prism_camera cam = camera_of(s, false);
    uint32_t *a = render(ref, &cam, 320, 240), *b = render(mapped, &cam, 320, 240),
             *c = render(split, &cam, 320, 240);
    assert_int_equal(differing(a, b, 320 * 240), 0);
    assert_int_equal(differing(a, c, 320 * 240), 0);
    free(a);
    free(b);
    free(c);
    prism_geometry_destroy(ref);
    prism_geometry_destroy(mapped);
    prism_geometry_destroy(split);
    prism_scene_free(s);
}

/* Too little device memory: AUTO builds on the host and says why; CUDA
 * asked for fails with the reason. */
static void test_fallback(void **state)
{
    (void)state;
    char path[1024];
    snprintf(path, sizeof path, "%s/tiny_detector.dae", PRISM_ASSETS);
    prism_scene *s = load(path);
    assert_non_null(s);
    prism_result r;
    prism_geometry *g = upload(s, PRISM_BVH_BUILDER_AUTO, PRISM_PLACEMENT_AUTO, 4096, &r);
    assert_int_equal(r, PRISM_SUCCESS);
    const prism_upload_report *rep = prism_geometry_report(g);
    printf("# AUTO with a 4 KB budget: %s build (%s)\n", prism_bvh_builder_name(rep->bvh.builder),
           rep->bvh.why);
    assert_int_equal(rep->bvh.builder, PRISM_BVH_BUILDER_HOST);
    assert_non_null(strstr(rep->bvh.why, "needs"));
    prism_geometry_destroy(g);
    g = upload(s, PRISM_BVH_BUILDER_CUDA, PRISM_PLACEMENT_AUTO, 4096, &r);
    assert_null(g);
    assert_int_equal(r, PRISM_ERROR_OUT_OF_DEVICE_MEMORY);
    assert_non_null(strstr(prism_context_last_error(cuda), "CUDA BVH builder"));
    /* AUTO with room: the device */
    g = upload(s, PRISM_BVH_BUILDER_AUTO, PRISM_PLACEMENT_AUTO, 0, &r);
    assert_int_equal(prism_geometry_report(g)->bvh.builder, PRISM_BVH_BUILDER_CUDA);
    prism_geometry_destroy(g);
    prism_scene_free(s);
}

static void test_bad_triangles(void **state)
{
    (void)state;
    float p[] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, NAN};
    uint32_t t[] = {0, 1, 2, 0, 1, 7};
    prism_scene s = scene_of(p, 4, t, 2);
    prism_geometry_desc d = {.builder = PRISM_BVH_BUILDER_CUDA, .skip_optics = true};
    prism_geometry *g = NULL;
    assert_int_equal(prism_geometry_upload(cuda, &s, NULL, &d, &g), PRISM_ERROR_INVALID_ARGUMENT);
    printf("# %s\n", prism_context_last_error(cuda));
    assert_non_null(strstr(prism_context_last_error(cuda), "triangle 1: vertex index 7"));
    t[5] = 3; /* the NaN vertex */
    assert_int_equal(prism_geometry_upload(cuda, &s, NULL, &d, &g), PRISM_ERROR_INVALID_ARGUMENT);
    printf("# %s\n", prism_context_last_error(cuda));
    assert_non_null(
        strstr(prism_context_last_error(cuda), "triangle 1: vertex 3 has a non-finite"));
    assert_null(g);
}

/* The two geometries hold the same tree: nodes, leaf order, vertices. */
static void assert_same_tree(const prism_geometry *a, const prism_geometry *b)
{
    prism_bvh *ta = NULL, *tb = NULL;
    assert_int_equal(prism__geometry_download(a, &ta), PRISM_SUCCESS);
    assert_int_equal(prism__geometry_download(b, &tb), PRISM_SUCCESS);
    assert_int_equal(ta->node_count, tb->node_count);
    assert_memory_equal(ta->nodes, tb->nodes, ta->node_count * sizeof *ta->nodes);
    assert_memory_equal(ta->triangle_ids, tb->triangle_ids, ta->triangle_count * 4);
    assert_memory_equal(ta->vertices, tb->vertices, ta->vertex_count * 12);
    prism_bvh_free(ta);
    prism_bvh_free(tb);
}

static void test_deterministic(void **state)
{
    (void)state;
    prism_scene *s = load(small_run() ? PRISM_ASSETS "/tiny_detector.dae" : PRISM_BVH_GPU_DETECTOR);
    assert_non_null(s);
    prism_geometry *a = upload(s, PRISM_BVH_BUILDER_CUDA, PRISM_PLACEMENT_DEVICE, 0, NULL);
    prism_geometry *b = upload(s, PRISM_BVH_BUILDER_CUDA, PRISM_PLACEMENT_DEVICE, 0, NULL);
    assert_same_tree(a, b);
    prism_geometry_destroy(a);
    prism_geometry_destroy(b);
    prism_scene_free(s);
}

/* A scene born pinned (prism_pinned_allocator): its arrays go up in one
 * DMA each and the codes are packed on the device; the tree, the leaf
 * order and the pictures equal those of the same file loaded into
 * malloc'd arrays and staged. */
static void test_born_pinned(void **state)
{
    (void)state;
    const char *path = small_run() ? PRISM_ASSETS "/tiny_detector.dae" : PRISM_BVH_GPU_DETECTOR;
    prism_scene *plain = load(path), *born = NULL;
    assert_non_null(plain);
    prism_allocator pinned;
    assert_int_equal(prism_pinned_allocator(cuda, &pinned), PRISM_SUCCESS);
    prism_load_desc ld = {.arrays = &pinned};
    assert_int_equal(prism_scene_load(path, &ld, &born), PRISM_SUCCESS);
    assert_int_equal(born->triangles_count, plain->triangles_count);
    prism_geometry *a = upload(plain, PRISM_BVH_BUILDER_CUDA, PRISM_PLACEMENT_DEVICE, 0, NULL);
    prism_geometry *b = upload(born, PRISM_BVH_BUILDER_CUDA, PRISM_PLACEMENT_DEVICE, 0, NULL);
    assert_non_null(a);
    assert_non_null(b);
    const prism_upload_report *ra = prism_geometry_report(a), *rb = prism_geometry_report(b);
    printf("# build inputs: %s %.2f GB/s, %s %.2f GB/s (%.1f MB)\n", ra->inputs_path,
           ra->inputs_gbps, rb->inputs_path, rb->inputs_gbps, rb->inputs_bytes / 1e6);
    assert_string_equal(ra->inputs_path, "staged");
    assert_string_equal(rb->inputs_path, "pinned DMA");
    assert_int_equal(ra->inputs_bytes, rb->inputs_bytes);
    assert_same_tree(a, b);
    for (int inside = 0; inside < 2; inside++) { /* shading reads the packed codes */
        prism_camera cam = camera_of(plain, inside);
        uint32_t *ia = render(a, &cam, 320, 200), *ib = render(b, &cam, 320, 200);
        assert_int_equal(differing(ia, ib, 320 * 200), 0);
        free(ia);
        free(ib);
    }
    /* photons read the codes at every boundary: the same, bit for bit */
    enum { N = 20000 };
    prism_photon_source src = {.kind = PRISM_SOURCE_POINT, .count = N};
    for (int k = 0; k < 3; k++)
        src.position[k] = 0.5f * (plain->bbox_min[k] + plain->bbox_max[k]);
    prism_propagate_desc pd = {.seed = 5, .max_steps = 60};
    prism_photon *pa = calloc(N, sizeof *pa), *pb = calloc(N, sizeof *pb);
    prism_propagate_outputs oa = {.photons = {.kind = PRISM_TARGET_HOST, .host = pa}};
    prism_propagate_outputs ob = {.photons = {.kind = PRISM_TARGET_HOST, .host = pb}};
    assert_int_equal(prism_propagate(cuda, a, &src, &pd, &oa, NULL), PRISM_SUCCESS);
    assert_int_equal(prism_propagate(cuda, b, &src, &pd, &ob, NULL), PRISM_SUCCESS);
    assert_memory_equal(pa, pb, N * sizeof *pa);
    free(pa);
    free(pb);
    prism_geometry_destroy(a);
    prism_geometry_destroy(b);
    prism_scene_free(born); /* before the context: its arrays are the context's memory */
    prism_scene_free(plain);
}

int main(void)
{
    if (prism_cuda_device_count() == 0) {
        printf("no CUDA device: skipped\n");
        return 77;
    }
    prism_context_desc d = {.backend = PRISM_BACKEND_CUDA};
    if (prism_context_create(&d, &cuda) != PRISM_SUCCESS) {
        printf("no CUDA context: skipped\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_triangles),
        cmocka_unit_test(test_fallback),
        cmocka_unit_test(test_placements),
        cmocka_unit_test(test_assets),
        cmocka_unit_test(test_hostile),
        cmocka_unit_test(test_hostile_hploc),
        cmocka_unit_test(test_hploc_against_passes),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_generated_detector),
        cmocka_unit_test(test_born_pinned),
    };
    /* PRISM_TEST_FILTER=test_hostile_hploc: one test (a sanitizer's run) */
    if (getenv("PRISM_TEST_FILTER") != NULL)
        cmocka_set_test_filter(getenv("PRISM_TEST_FILTER"));
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    /* every byte returned: a live allocation fails the destroy */
    prism_result r = prism_context_destroy(cuda);
    if (r != PRISM_SUCCESS)
        printf("context destroy: %s\n", prism_result_string(r));
    return failed || r != PRISM_SUCCESS;
}
