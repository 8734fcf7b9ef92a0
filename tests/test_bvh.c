/* The BVH builder and the CPU ray queries: input errors, structural
 * invariants, agreement with brute force on random rays over triangle soups
 * of every awkward kind, the edge cases of the issue, and watertightness.
 *
 * Documented exact ties: where two triangles are hit at exactly the same
 * distance (coincident triangles, a ray through a shared edge or vertex),
 * the BVH may report either; the comparison then accepts the BVH's triangle
 * if brute force hits it at that same distance. Everything else must agree
 * exactly (same triangle, same t, same barycentrics). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "geometry/bvh/internal.h"
#include "bvh_scalar.h"
#include "bvh_test_util.h"
#include "prism/device/bvh_traverse.h"

typedef struct log_capture {
    char text[2048];
    int errors;
} log_capture;

static void capture(void *user, prism_log_level level, const char *message)
{
    log_capture *c = user;
    if (level == PRISM_LOG_ERROR)
        c->errors++;
    snprintf(c->text, sizeof c->text, "%s", message);
}

static void test_bad_input(void **state)
{
    (void)state;
    const float pos[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
    uint32_t idx[3] = {0, 1, 2};
    prism_bvh *bvh = (prism_bvh *)&bvh; /* must be reset to NULL on failure */
    log_capture log = {0};
    prism_bvh_desc d = {.log = capture, .log_user = &log};
    assert_int_equal(prism_bvh_build(pos, 3, idx, 1, &d, NULL), PRISM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(prism_bvh_build(NULL, 3, idx, 1, &d, &bvh), PRISM_ERROR_INVALID_ARGUMENT);
    assert_null(bvh);
    assert_int_equal(prism_bvh_build(pos, 3, NULL, 1, &d, &bvh), PRISM_ERROR_INVALID_ARGUMENT);
    idx[2] = 3;
    assert_int_equal(prism_bvh_build(pos, 3, idx, 1, &d, &bvh), PRISM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(log.text, "triangle 0: vertex index 3 >= vertex count 3"));
    idx[2] = 2;
    float nan_pos[9] = {0, 0, 0, 1, 0, 0, 0, NAN, 0};
    assert_int_equal(prism_bvh_build(nan_pos, 3, idx, 1, &d, &bvh), PRISM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(log.text, "vertex 2 has a non-finite coordinate"));
    prism_bvh_desc bad[] = {
        {.max_leaf_size = 65}, {.quality = 4}, {.bins = 1}, {.bins = 257}, {.threads = -1}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        bad[i].log = capture;
        bad[i].log_user = &log;
        assert_int_equal(prism_bvh_build(pos, 3, idx, 1, &bad[i], &bvh),
                         PRISM_ERROR_INVALID_ARGUMENT);
        assert_null(bvh);
    }
    assert_int_equal(log.errors, 9);
    prism_bvh_free(NULL);
    prism_ray ray = {.dir = {0, 0, 1}, .tmax = 1};
    prism_hit hit;
    assert_false(prism_bvh_intersect(NULL, &ray, &hit));
    assert_int_equal(hit.triangle, PRISM_BVH_MISS);
    assert_false(prism_bvh_occluded(NULL, &ray));
}

static void test_empty(void **state)
{
    (void)state;
    prism_bvh *bvh = NULL;
    assert_int_equal(prism_bvh_build(NULL, 0, NULL, 0, NULL, &bvh), PRISM_SUCCESS);
    assert_int_equal(bvh->node_count, 1);
    assert_true(bvh->nodes[0].lo[0] > bvh->nodes[0].hi[0]);
    assert_int_equal(bvh->stats.leaves, 0);
    assert_true(bvh->stats.sah_cost == 0.0);
    prism_ray rays[] = {{.dir = {0, 0, 1}, .tmax = INFINITY},
                        {.dir = {1, 0, 0}, .tmax = 1},
                        {.org = {1e30f, 0, 0}, .dir = {-1, 0, 0}, .tmax = INFINITY}};
    for (size_t i = 0; i < 3; i++) {
        prism_hit hit;
        assert_false(prism_bvh_intersect(bvh, &rays[i], &hit));
        assert_int_equal(hit.triangle, PRISM_BVH_MISS);
        assert_false(prism_bvh_occluded(bvh, &rays[i]));
    }
    /* Even a view that forgets triangle_count == 0 misses: the root box is empty. */
    prism_geometry_view v;
    prism__bvh_view(bvh, &v);
    v.triangle_count = 1;
    prism_hit hit;
    assert_false(prism_bvh_closest(&v, &rays[0], &hit));
    prism_bvh_free(bvh);
}

static void test_one_triangle(void **state)
{
    (void)state;
    const float pos[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
    const uint32_t idx[3] = {0, 1, 2};
    prism_bvh *bvh = NULL;
    assert_int_equal(prism_bvh_build(pos, 3, idx, 1, NULL, &bvh), PRISM_SUCCESS);
    assert_int_equal(bvh->node_count, 1);
    assert_int_equal(bvh->nodes[0].count, 1);
    prism_ray ray = {.org = {0.25f, 0.5f, 2.0f}, .dir = {0, 0, -2}, .tmax = INFINITY};
    prism_hit hit;
    assert_true(prism_bvh_intersect(bvh, &ray, &hit));
    assert_int_equal(hit.triangle, 0);
    assert_float_equal(hit.t, 1.0f, 1e-6f);
    assert_float_equal(hit.u, 0.25f, 1e-6f);
    assert_float_equal(hit.v, 0.5f, 1e-6f);
    ray.tmax = 0.99f; /* beyond tmax */
    assert_false(prism_bvh_intersect(bvh, &ray, &hit));
    assert_false(prism_bvh_occluded(bvh, &ray));
    ray.tmax = 1.0f; /* tmax inclusive */
    assert_true(prism_bvh_occluded(bvh, &ray));
    ray.tmax = INFINITY;
    ray.tmin = 1.01f; /* before tmin */
    assert_false(prism_bvh_intersect(bvh, &ray, &hit));
    ray.tmin = 0;
    ray.dir[2] = 2; /* pointing away */
    assert_false(prism_bvh_intersect(bvh, &ray, &hit));
    ray = (prism_ray){.org = {0.75f, 0.75f, 1}, .dir = {0, 0, -1}, .tmax = INFINITY}; /* outside */
    assert_false(prism_bvh_intersect(bvh, &ray, &hit));
    ray = (prism_ray){.org = {-1, 0.2f, 0}, .dir = {1, 0, 0}, .tmax = INFINITY}; /* in its plane */
    assert_false(prism_bvh_intersect(bvh, &ray, &hit));
    ray =
        (prism_ray){.org = {0.2f, 0.2f, 1}, .dir = {0, 0, 0}, .tmax = INFINITY}; /* no direction */
    assert_false(prism_bvh_intersect(bvh, &ray, &hit));
    assert_false(prism_bvh_occluded(bvh, &ray));
    prism_bvh_free(bvh);
}

static void soup_case(soup_kind kind, size_t n, unsigned leaf, unsigned quality, uint64_t seed)
{
    rng r = {seed};
    soup s = {0};
    soup_random(&s, kind, n, &r, 1.0f, NULL);
    prism_bvh *bvh = build_soup(&s, leaf, quality, 0);
    check_invariants(bvh, &s, leaf ? leaf : 4);
    size_t hits = compare_random_rays(bvh, &s, 1500, &r, 0.2f, false);
    assert_true(hits > 0);
    compare_random_rays(bvh, &s, 300, &r, 0.2f, true);
    prism_bvh_free(bvh);
    soup_free(&s);
}

static void test_soup_mixed(void **state)
{
    (void)state;
    soup_case(SOUP_MIXED, 3000, 0, 0, 1);
    soup_case(SOUP_MIXED, 2000, 1, PRISM_BVH_QUALITY_FAST, 2);
    soup_case(SOUP_MIXED, 2000, 16, PRISM_BVH_QUALITY_HIGH, 3);
}

static void test_soup_thin(void **state)
{
    (void)state;
    soup_case(SOUP_THIN, 2000, 0, 0, 4);
}

static void test_soup_huge(void **state)
{
    (void)state;
    soup_case(SOUP_HUGE, 500, 0, 0, 5);
}

static void test_soup_degenerate(void **state)
{
    (void)state;
    rng r = {6};
    soup s = {0};
    soup_random(&s, SOUP_DEGENERATE, 1000, &r, 1.0f, NULL);
    prism_bvh *bvh = build_soup(&s, 0, 0, 0);
    check_invariants(bvh, &s, 4);
    assert_int_equal(compare_random_rays(bvh, &s, 1000, &r, 0.2f, false), 0); /* zero area */
    prism_bvh_free(bvh);
    soup_free(&s);
}

static void test_soup_coincident(void **state)
{
    (void)state;
    soup_case(SOUP_COINCIDENT, 1000, 0, 0, 7);
}

static void test_soup_small(void **state)
{
    (void)state;
    soup_case(SOUP_SMALL, 4000, 0, 0, 8);
}

/* Many triangles with one centroid: no bin can split them, so the builder
 * must split at the median and still respect the leaf size. */
static void test_one_centroid(void **state)
{
    (void)state;
    soup s = {0};
    for (int i = 0; i < 1000; i++) {
        float k = 1.0f + (float)i;
        uint32_t a = soup_vertex(&s, -k, -k, 0), b = soup_vertex(&s, k, -k, 0),
                 c = soup_vertex(&s, 0, 2 * k, 0);
        soup_triangle(&s, a, b, c);
    }
    prism_bvh *bvh = build_soup(&s, 0, 0, 0);
    check_invariants(bvh, &s, 4);
    rng r = {9};
    compare_random_rays(bvh, &s, 500, &r, 0.1f, false);
    prism_bvh_free(bvh);
    soup_free(&s);
}

/* Triangles at geometrically growing distances: SAH peels off one at a time,
 * which would go deeper than the traversal stack; the depth guard must stop it. */
static void test_depth_guard(void **state)
{
    (void)state;
    soup s = {0};
    float x = 1.0f;
    for (int i = 0; i < 110; i++, x *= 2.0f) {
        uint32_t a = soup_vertex(&s, x, 0, 0), b = soup_vertex(&s, x, 1, 0),
                 c = soup_vertex(&s, x, 0, 1);
        soup_triangle(&s, a, b, c);
    }
    prism_bvh *bvh = build_soup(&s, 1, 0, 0);
    check_invariants(bvh, &s, 1);
    assert_true(bvh->stats.max_depth <= PRISM_BVH_MAX_DEPTH);
    for (size_t i = 0; i < s.nt; i++) { /* a ray down onto each triangle */
        const float *p = s.pos + 3 * s.idx[3 * i];
        prism_ray ray = {.org = {p[0], 0.25f, 0.25f}, .dir = {-1, 0, 0}, .tmax = INFINITY};
        ray.org[0] = p[0] * 1.25f;
        compare_ray(bvh, &s, &ray);
        prism_hit hit;
        assert_true(prism_bvh_intersect(bvh, &ray, &hit));
        assert_int_equal(hit.triangle, i);
    }
    prism_bvh_free(bvh);
    soup_free(&s);
}

static void test_coplanar(void **state)
{
    (void)state;
    rng r = {10};
    soup s = {0};
    for (int i = 0; i < 2000; i++) {
        float cx = rng_range(&r, -1, 1), cy = rng_range(&r, -1, 1);
        uint32_t a = soup_vertex(&s, cx, cy, 0.5f);
        uint32_t b = soup_vertex(&s, cx + rng_range(&r, -0.1f, 0.1f),
                                 cy + rng_range(&r, -0.1f, 0.1f), 0.5f);
        uint32_t c = soup_vertex(&s, cx + rng_range(&r, -0.1f, 0.1f),
                                 cy + rng_range(&r, -0.1f, 0.1f), 0.5f);
        soup_triangle(&s, a, b, c);
    }
    prism_bvh *bvh = build_soup(&s, 0, 0, 0);
    check_invariants(bvh, &s, 4);
    assert_true(compare_random_rays(bvh, &s, 1500, &r, 0.5f, false) > 0);
    compare_random_rays(bvh, &s, 500, &r, 0.5f, true);
    for (int i = 0; i < 200; i++) { /* rays in the plane itself */
        prism_ray ray = {.org = {rng_range(&r, -1.5f, 1.5f), rng_range(&r, -1.5f, 1.5f), 0.5f},
                         .dir = {rng_range(&r, -1, 1), rng_range(&r, -1, 1), 0},
                         .tmax = INFINITY};
        compare_ray(bvh, &s, &ray);
    }
    prism_bvh_free(bvh);
    soup_free(&s);
}

static void test_far_from_origin(void **state)
{
    (void)state;
    const float offsets[][3] = {{1e5f, -2e5f, 3e5f}, {-4e6f, 0, 0}};
    for (int k = 0; k < 2; k++) {
        rng r = {11 + (uint64_t)k};
        soup s = {0};
        soup_random(&s, SOUP_MIXED, 2000, &r, 10.0f, offsets[k]);
        prism_bvh *bvh = build_soup(&s, 0, 0, 0);
        check_invariants(bvh, &s, 4);
        assert_true(compare_random_rays(bvh, &s, 1000, &r, 0.2f, false) > 0);
        prism_bvh_free(bvh);
        soup_free(&s);
    }
}

/* Two parallel grids: a ray that starts on the lower one hits it at t = 0
 * with tmin = 0, and the upper one with tmin > 0. */
static void test_ray_on_surface(void **state)
{
    (void)state;
    soup s = {0};
    const float lo0[3] = {-1, -1, 0}, hi0[3] = {1, 1, 0}, lo1[3] = {-1, -1, 1}, hi1[3] = {1, 1, 1};
    soup_box(&s, lo0, hi0, 8); /* flat boxes: both faces of each plane, plus zero-area sides */
    soup_box(&s, lo1, hi1, 8);
    prism_bvh *bvh = build_soup(&s, 0, 0, 0);
    check_invariants(bvh, &s, 4);
    rng r = {12};
    for (int i = 0; i < 300; i++) {
        prism_ray ray = {.org = {rng_range(&r, -0.9f, 0.9f), rng_range(&r, -0.9f, 0.9f), 0},
                         .dir = {rng_range(&r, -0.05f, 0.05f), rng_range(&r, -0.05f, 0.05f), 1},
                         .tmax = INFINITY};
        prism_hit hit;
        compare_ray(bvh, &s, &ray);
        assert_true(prism_bvh_intersect(bvh, &ray, &hit));
        assert_true(hit.t == 0.0f);
        ray.tmin = 1e-4f;
        compare_ray(bvh, &s, &ray);
        assert_true(prism_bvh_intersect(bvh, &ray, &hit));
        assert_float_equal(hit.t, 1.0f, 1e-5f);
    }
    prism_bvh_free(bvh);
    soup_free(&s);
}

/* A lattice of unit cubes; rays along the axes from lattice points and
 * half-way points run exactly along box faces and edges. */
static void test_axis_aligned_edges(void **state)
{
    (void)state;
    soup s = {0};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 3; k++) {
                float lo[3] = {(float)(2 * i), (float)(2 * j), (float)(2 * k)};
                float hi[3] = {lo[0] + 1, lo[1] + 1, lo[2] + 1};
                soup_box(&s, lo, hi, 1);
            }
    prism_bvh *bvh = build_soup(&s, 1, 0, 0);
    check_invariants(bvh, &s, 1);
    size_t hits = 0;
    for (int a = 0; a < 3; a++)
        for (int sign = -1; sign <= 1; sign += 2)
            for (int u = -1; u <= 12; u++)
                for (int v = -1; v <= 12; v++) {
                    prism_ray ray = {.tmax = INFINITY};
                    ray.dir[a] = (float)sign;
                    ray.org[a] = sign > 0 ? -1.0f : 7.0f;
                    ray.org[(a + 1) % 3] = 0.5f * (float)u;
                    ray.org[(a + 2) % 3] = 0.5f * (float)v;
                    compare_ray(bvh, &s, &ray);
                    prism_hit hit;
                    bool h = prism_bvh_intersect(bvh, &ray, &hit);
                    assert_false(isnan(hit.t));
                    hits += h;
                    /* Through a cube's face or along its edge: must hit. */
                    int cu = u >= 0 && u <= 10 && (u % 4 <= 2),
                        cv = v >= 0 && v <= 10 && (v % 4 <= 2);
                    if (cu && cv)
                        assert_true(h);
                }
    assert_true(hits > 0);
    prism_bvh_free(bvh);
    soup_free(&s);
}

/* Closed meshes: rays aimed exactly at shared edges and vertices, from
 * inside and from outside, must all hit. */
static void test_watertight(void **state)
{
    (void)state;
    const float c[3] = {0.1f, -0.2f, 0.3f}, out[3] = {3.1f, 2.7f, -4.3f};
    const float lo[3] = {-1, -2, -0.5f}, hi[3] = {2, 1, 0.25f}, box_in[3] = {0.3f, -0.4f, -0.1f};
    soup sphere = {0}, box = {0};
    soup_sphere(&sphere, 3, c, 1.0f);
    soup_box(&box, lo, hi, 6);
    prism_bvh *bs = build_soup(&sphere, 0, 0, 0), *bb = build_soup(&box, 2, 0, 0);
    check_invariants(bs, &sphere, 4);
    check_invariants(bb, &box, 2);
    assert_int_equal(fire_at_edges(bs, &sphere, c, c, true), sphere.nt * 15);
    assert_int_equal(fire_at_edges(bb, &box, box_in, box_in, true), box.nt * 15);
    assert_true(fire_at_edges(bs, &sphere, out, c, false) > sphere.nt * 3);
    prism_bvh_free(bs);
    prism_bvh_free(bb);
    soup_free(&sphere);
    soup_free(&box);
}

/* A node array split into head and tail traverses like the whole one. */
static void test_split_view(void **state)
{
    (void)state;
    rng r = {13};
    soup s = {0};
    soup_random(&s, SOUP_SMALL, 3000, &r, 1.0f, NULL);
    prism_bvh *bvh = build_soup(&s, 0, 0, 0);
    prism_bvh_node *tail_copy = malloc(bvh->node_count * sizeof *tail_copy);
    assert_non_null(tail_copy);
    const uint32_t splits[] = {0, 1, 7, (uint32_t)bvh->node_count / 3, (uint32_t)bvh->node_count};
    for (size_t k = 0; k < 5; k++) {
        prism_geometry_view whole, split;
        prism__bvh_view(bvh, &whole);
        prism__bvh_view_split(bvh, splits[k], &split);
        /* the tail in other memory, as a mapped tail would be */
        size_t tail = bvh->node_count - split.nodes_split;
        memcpy(tail_copy, bvh->nodes + split.nodes_split, tail * sizeof *tail_copy);
        split.nodes_tail = tail_copy;
        for (int i = 0; i < 300; i++) {
            prism_ray ray = {.org = {rng_range(&r, -1.2f, 1.2f), rng_range(&r, -1.2f, 1.2f), -2},
                             .dir = {rng_range(&r, -0.5f, 0.5f), rng_range(&r, -0.5f, 0.5f), 1},
                             .tmax = INFINITY};
            prism_hit a, b;
            assert_int_equal(prism_bvh_closest(&whole, &ray, &a),
                             prism_bvh_closest(&split, &ray, &b));
            assert_int_equal(a.triangle, b.triangle);
            assert_true(a.t == b.t);
            assert_int_equal(prism_bvh_any(&whole, &ray) == PRISM_BVH_MISS,
                             prism_bvh_any(&split, &ray) == PRISM_BVH_MISS);
        }
    }
    free(tail_copy);
    prism_bvh_free(bvh);
    soup_free(&s);
}

static void test_stats_and_sah(void **state)
{
    (void)state;
    rng r = {14};
    soup s = {0};
    soup_random(&s, SOUP_MIXED, 5000, &r, 1.0f, NULL);
    prism_bvh *bvh = build_soup(&s, 0, 0, 0);
    const prism_bvh_stats *st = &bvh->stats;
    assert_int_equal(st->node_bytes, bvh->node_count * 32);
    assert_int_equal(st->vertex_bytes, s.nv * 12);
    assert_int_equal(st->triangle_bytes, s.nt * 12);
    assert_int_equal(st->id_bytes, s.nt * 4);
    assert_true(fabs(st->mean_leaf_triangles - (double)s.nt / (double)st->leaves) < 1e-9);
    assert_true(st->sah_cost == prism_bvh_sah_cost(bvh->nodes, bvh->node_count));
    assert_true(st->sah_cost > 1.0 && st->sah_cost < (double)s.nt);
    assert_true(st->build_seconds >= 0.0);
    /* Better quality buys no worse a tree here. */
    prism_bvh *fast = build_soup(&s, 0, PRISM_BVH_QUALITY_FAST, 0);
    prism_bvh *high = build_soup(&s, 0, PRISM_BVH_QUALITY_HIGH, 0);
    assert_true(high->stats.sah_cost <= fast->stats.sah_cost * 1.02);
    prism_bvh_free(fast);
    prism_bvh_free(high);
    /* A hand-made tree: root [0,2]^3 with two leaves [0,1]^3 (3 triangles) and
     * [1,2]x[0,2]x[0,2] (1 triangle). Areas (x 1/2): 12, 3, 8. */
    prism_bvh_node n[3] = {{{0, 0, 0}, 1, {2, 2, 2}, 0},
                           {{0, 0, 0}, 0, {1, 1, 1}, 3},
                           {{1, 0, 0}, 3, {2, 2, 2}, 1}};
    assert_float_equal(prism_bvh_sah_cost(n, 3), 1.0 + 3.0 / 12.0 * 3 + 8.0 / 12.0 * 1, 1e-12);
    assert_true(prism_bvh_sah_cost(NULL, 0) == 0.0);
    prism_bvh_free(bvh);
    soup_free(&s);
}

/* One thread and several build the same tree: binning, the sample of large
 * nodes and the sweep do not depend on the order of references, and the node
 * order is breadth-first. */
static void test_threads_agree(void **state)
{
    (void)state;
    rng r = {15};
    soup s = {0};
    /* above the parallel-partition and the sampled-binning sizes */
    soup_random(&s, SOUP_SMALL, 140000, &r, 1.0f, NULL);
    prism_bvh *one = build_soup(&s, 0, 0, 1), *two = build_soup(&s, 0, 0, 2);
    check_invariants(two, &s, 4);
    assert_int_equal(one->node_count, two->node_count);
    assert_memory_equal(one->nodes, two->nodes, one->node_count * sizeof *one->nodes);
    compare_random_rays(two, &s, 100, &r, 0.1f, false);
    prism_bvh_free(one);
    prism_bvh_free(two);
    soup_free(&s);
}

/* Closest hit skipping one triangle (the one a photon stands on) agrees with
 * brute force over the others. */
static void test_skip(void **state)
{
    (void)state;
    rng r = {17};
    soup s = {0};
    soup_random(&s, SOUP_SMALL, 3000, &r, 1.0f, NULL);
    prism_bvh *bvh = build_soup(&s, 0, 0, 0);
    prism_geometry_view v;
    prism__bvh_view(bvh, &v);
    size_t checked = 0;
    for (int i = 0; i < 1000; i++) {
        prism_ray ray = {.org = {rng_range(&r, -1, 1), rng_range(&r, -1, 1), rng_range(&r, -1, 1)},
                         .dir = {rng_range(&r, -1, 1), rng_range(&r, -1, 1), rng_range(&r, -1, 1)},
                         .tmax = INFINITY};
        prism_hit first, next;
        if (!prism_bvh_closest(&v, &ray, &first))
            continue;
        /* brute force without the first triangle: leave it out of a copy */
        soup rest = s;
        uint32_t id = bvh->triangle_ids[first.triangle];
        rest.idx = malloc(3 * s.nt * sizeof *rest.idx);
        assert_non_null(rest.idx);
        memcpy(rest.idx, s.idx, 3 * s.nt * sizeof *rest.idx);
        rest.idx[3 * id + 1] = rest.idx[3 * id + 2] = rest.idx[3 * id]; /* degenerate: no hit */
        prism_hit b;
        bool bhit = brute_closest(&rest, &ray, &b);
        bool hit = prism_bvh_closest_skip(&v, &ray, first.triangle, &next);
        assert_int_equal(hit, bhit);
        if (hit) {
            assert_int_not_equal(next.triangle, first.triangle);
            assert_true(next.t == b.t);
            assert_true(bvh->triangle_ids[next.triangle] == b.triangle ||
                        brute_hits_at(&rest, &ray, bvh->triangle_ids[next.triangle], next.t));
        }
        free(rest.idx);
        checked++;
    }
    assert_true(checked > 100);
    prism_bvh_free(bvh);
    soup_free(&s);
}

/* The host's SSE box tests and the plain C ones the GPU runs give the same
 * hits, bit for bit, on general and axis-aligned rays. */
static void test_scalar_path(void **state)
{
    (void)state;
    rng r = {18};
    soup s = {0};
    soup_random(&s, SOUP_MIXED, 3000, &r, 1.0f, NULL);
    const float lo[3] = {-1, -1, -1}, hi[3] = {1, 1, 1};
    soup_box(&s, lo, hi, 4);
    prism_bvh *bvh = build_soup(&s, 0, 0, 0);
    prism_geometry_view v;
    prism__bvh_view(bvh, &v);
    size_t hits = 0;
    for (int i = 0; i < 3000; i++) {
        prism_ray ray = {.org = {rng_range(&r, -1.2f, 1.2f), rng_range(&r, -1.2f, 1.2f),
                                 rng_range(&r, -1.2f, 1.2f)},
                         .tmax = INFINITY};
        if (i % 3 == 0) { /* along an axis, from lattice points on the box's faces */
            int a = i / 3 % 3;
            ray.dir[a] = i % 2 ? 1.0f : -1.0f;
            ray.org[(a + 1) % 3] = 0.5f * (float)(i / 9 % 5 - 2);
        } else {
            for (int a = 0; a < 3; a++)
                ray.dir[a] = rng_range(&r, -1, 1);
        }
        prism_hit a, b;
        int ha = prism_bvh_closest(&v, &ray, &a), hb = scalar_closest(&v, &ray, &b);
        assert_int_equal(ha, hb);
        assert_int_equal(a.triangle, b.triangle);
        assert_memory_equal(&a, &b, sizeof a);
        assert_int_equal(prism_bvh_any(&v, &ray) == PRISM_BVH_MISS,
                         scalar_any(&v, &ray) == PRISM_BVH_MISS);
        hits += (size_t)ha;
    }
    assert_true(hits > 1000);
    prism_bvh_free(bvh);
    soup_free(&s);
}

/* The depth-first order: the same tree, the same hits, every child still
 * after its parent, breadth-first down to PRISM_BVH_DFS_BFS_LEVELS. */
static void test_dfs_order(void **state)
{
    (void)state;
    rng r = {16};
    soup s = {0};
    soup_random(&s, SOUP_MIXED, 20000, &r, 1.0f, NULL);
    prism_bvh_desc d = {.order = PRISM_BVH_ORDER_DFS};
    prism_bvh *dfs = NULL, *bfs = build_soup(&s, 0, 0, 0);
    assert_int_equal(prism_bvh_build(s.pos, s.nv, s.idx, s.nt, &d, &dfs), PRISM_SUCCESS);
    check_invariants_order(dfs, &s, 4, PRISM_BVH_DFS_BFS_LEVELS);
    assert_true(dfs->stats.max_depth > PRISM_BVH_DFS_BFS_LEVELS); /* both parts exercised */
    assert_int_equal(dfs->node_count, bfs->node_count);
    assert_int_equal(dfs->stats.max_depth, bfs->stats.max_depth);
    assert_float_equal(dfs->stats.sah_cost, bfs->stats.sah_cost, 1e-9 * bfs->stats.sah_cost);
    compare_random_rays(dfs, &s, 1000, &r, 0.2f, false);
    prism_bvh_desc three = {.order = PRISM_BVH_ORDER_DFS, .bfs_levels = 3};
    prism_bvh *shallow = NULL;
    assert_int_equal(prism_bvh_build(s.pos, s.nv, s.idx, s.nt, &three, &shallow), PRISM_SUCCESS);
    check_invariants_order(shallow, &s, 4, 3);
    compare_random_rays(shallow, &s, 300, &r, 0.2f, false);
    prism_bvh_free(shallow);
    prism_bvh_desc bad[] = {{.order = 2}, {.order = PRISM_BVH_ORDER_DFS, .bfs_levels = 65}};
    for (int i = 0; i < 2; i++) {
        prism_bvh *none = NULL;
        assert_int_equal(prism_bvh_build(s.pos, s.nv, s.idx, s.nt, &bad[i], &none),
                         PRISM_ERROR_INVALID_ARGUMENT);
        assert_null(none);
    }
    prism_bvh_free(dfs);
    prism_bvh_free(bfs);
    soup_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_one_triangle),
        cmocka_unit_test(test_soup_mixed),
        cmocka_unit_test(test_soup_thin),
        cmocka_unit_test(test_soup_huge),
        cmocka_unit_test(test_soup_degenerate),
        cmocka_unit_test(test_soup_coincident),
        cmocka_unit_test(test_soup_small),
        cmocka_unit_test(test_one_centroid),
        cmocka_unit_test(test_depth_guard),
        cmocka_unit_test(test_coplanar),
        cmocka_unit_test(test_far_from_origin),
        cmocka_unit_test(test_ray_on_surface),
        cmocka_unit_test(test_axis_aligned_edges),
        cmocka_unit_test(test_watertight),
        cmocka_unit_test(test_split_view),
        cmocka_unit_test(test_stats_and_sah),
        cmocka_unit_test(test_threads_agree),
        cmocka_unit_test(test_dfs_order),
        cmocka_unit_test(test_skip),
        cmocka_unit_test(test_scalar_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
