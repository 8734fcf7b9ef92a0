/* The wide BVH (prism/device/bvh_wide.h): the collapse's structure (every node
 * reached once from the root, children after their parent and consecutive,
 * every triangle in exactly one leaf, each decoded box holding the
 * triangles below it, the depth bound) and the wide traversal against the
 * binary one: the same closest hit (triangle, t, u, v, bit for bit, ties to
 * the smaller leaf-order index on both), the same any-hit verdict, the
 * host's SSE box tests giving the plain C's bits, with the
 * nodes split at any point, on soups of every awkward kind, the hostile
 * scenes, the bundled assets, and a tree too deep to collapse. */
#include <math.h>
#include <stdbool.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bvh_hostile.h"
#include "geometry/bvh/internal.h"
#include "bvh_scalar.h"
#include "bvh_test_util.h"
#include "bvh_wide_check.h"
#include "prism/device/bvh_traverse.h"
#include "prism/device/bvh_wide.h"
#include "prism/device/bvh_wide_traverse.h"
#include "prism/scene.h"

/* ---- hits --------------------------------------------------------------- */

static void random_ray(const prism_bvh *b, rng *r, float margin, int kind, prism_ray *ray)
{
    const prism_bvh_node *root = &b->nodes[0];
    for (int k = 0; k < 3; k++) {
        const float lo = root->lo[k], hi = root->hi[k], m = (hi - lo) * margin;
        ray->org[k] = lo <= hi ? rng_range(r, lo - m, hi + m) : 0.0f;
        ray->dir[k] = rng_range(r, -1.0f, 1.0f);
    }
    if (kind == 1) { /* along an axis: zero components, rays in box planes */
        const int a = (int)(rng_float(r) * 3.0f) % 3;
        for (int k = 0; k < 3; k++)
            ray->dir[k] = k == a ? (rng_float(r) < 0.5f ? -1.0f : 1.0f) : 0.0f;
    }
    ray->tmin = 0.0f;
    ray->tmax = kind == 2 ? rng_range(r, 0.0f, 2.0f) : INFINITY;
}

/* Whether leaf-order triangle i is hit at exactly t. */
static bool hits_at(const prism_geometry_view *g, const prism_ray *ray, uint32_t i, float t)
{
    prism_ray_pre p;
    prism_ray_prepare(ray, &p);
    float tt, u, v;
    return prism_view_triangle(g, &p, i, ray->tmin, ray->tmax, &tt, &u, &v) && tt == t;
}

/* The same hit: triangle, t, u, v bit for bit; or an exact tie (the same t,
 * the other tree's triangle hit at it too), which a box entered a rounding
 * later than the triangle's t lets the binary walk cull where the wide one's
 * larger quantised box is entered. Ties are counted. */
static size_t ties;

static void same_hit(const prism_geometry_view *bin, const prism_ray *ray, const prism_hit *a,
                     const prism_hit *w)
{
    if (a->triangle != w->triangle && a->triangle != PRISM_BVH_MISS &&
        w->triangle != PRISM_BVH_MISS && a->t == w->t && hits_at(bin, ray, w->triangle, w->t)) {
        ties++;
        return;
    }
    if (a->triangle != w->triangle)
        print_message("binary %u t %.9g, wide %u t %.9g; binary hits wide's at its t: %d\n",
                      a->triangle, (double)a->t, w->triangle, (double)w->t,
                      (int)hits_at(bin, ray, w->triangle, w->t));
    assert_int_equal(a->triangle, w->triangle);
    assert_memory_equal(a, w, sizeof *a);
}

/* n random rays: the wide view's closest and any hit against the binary
 * view's. Returns how many hit. */
static size_t compare_views(const prism_geometry_view *bin, const prism_geometry_view *wide,
                            const prism_bvh *b, size_t n, uint64_t seed)
{
    rng r = {seed};
    size_t hits = 0;
    for (size_t i = 0; i < n; i++) {
        prism_ray ray;
        random_ray(b, &r, 0.2f, (int)(i % 3), &ray);
        prism_hit a, w;
        const int ha = prism_bvh_closest(bin, &ray, &a),
                  hw = prism_wide_closest_skip(wide, &ray, PRISM_BVH_MISS, &w);
        assert_int_equal(ha, hw);
        same_hit(bin, &ray, &a, &w);
        assert_int_equal(prism_bvh_any(bin, &ray) != PRISM_BVH_MISS,
                         prism_wide_any(wide, &ray) != PRISM_BVH_MISS);
        /* the host's SSE box tests against the plain C the GPU runs: the same bits */
        prism_hit sc;
        assert_int_equal(scalar_wide_closest(wide, &ray, &sc), hw);
        assert_memory_equal(&sc, &w, sizeof sc);
        assert_int_equal(scalar_wide_any(wide, &ray), prism_wide_any(wide, &ray));
        if (!ha)
            continue;
        hits++;
        /* skipping the surface a photon stands on */
        const int sa = prism_bvh_closest_skip(bin, &ray, a.triangle, &a);
        const int sw = prism_wide_closest_skip(wide, &ray, w.triangle, &w);
        assert_int_equal(sa, sw);
        same_hit(bin, &ray, &a, &w);
    }
    return hits;
}

static prism_bvh_wide *collapse_ok(const prism_bvh *b)
{
    prism_bvh_wide *w = (prism_bvh_wide *)&w;
    assert_int_equal(prism__bvh_collapse(b, &w), PRISM_SUCCESS);
    assert_non_null(w);
    check_wide(b, w);
    return w;
}

/* Collapse b, check it, and compare hits whole and split. */
static size_t check_bvh(const prism_bvh *b, size_t rays, uint64_t seed)
{
    prism_bvh_wide *w = collapse_ok(b);
    prism_geometry_view bin, wide;
    prism__bvh_view(b, &bin);
    prism__bvh_view_wide(b, w, (uint32_t)w->node_count, &wide);
    const size_t hits = compare_views(&bin, &wide, b, rays, seed);
    /* a device head and a mapped tail: the split anywhere gives the same hits */
    const uint32_t splits[3] = {1, (uint32_t)(w->node_count / 2), (uint32_t)w->node_count - 1};
    for (int i = 0; i < 3; i++) {
        prism__bvh_view_wide(b, w, splits[i], &wide);
        compare_views(&bin, &wide, b, rays / 4, seed + 1 + (uint64_t)i);
    }
    prism__bvh_wide_free(w);
    return hits;
}

static prism_bvh *build(const soup *s, unsigned leaf, unsigned order)
{
    prism_bvh_desc d = {.max_leaf_size = leaf, .order = order};
    prism_bvh *b = NULL;
    assert_int_equal(prism_bvh_build(s->pos, s->nv, s->idx, s->nt, &d, &b), PRISM_SUCCESS);
    return b;
}

/* ---- tests -------------------------------------------------------------- */

static void test_soups(void **state)
{
    (void)state;
    const soup_kind kinds[] = {SOUP_MIXED,      SOUP_THIN,       SOUP_HUGE,
                               SOUP_DEGENERATE, SOUP_COINCIDENT, SOUP_SMALL};
    const unsigned leaves[] = {1, 4, 7, 64};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        for (size_t l = 0; l < sizeof leaves / sizeof leaves[0]; l++) {
            soup s = {0};
            rng r = {17 + k};
            const float off[3] = {0, 0, 0};
            soup_random(&s, kinds[k], 3000, &r, 1.0f, off);
            prism_bvh *b = build(&s, leaves[l], l & 1 ? PRISM_BVH_ORDER_DFS : PRISM_BVH_ORDER_BFS);
            const size_t hits = check_bvh(b, 3000, 100 + k * 10 + l);
            /* the comparison must not be vacuous (slivers are seldom hit) */
            if (kinds[k] != SOUP_DEGENERATE)
                assert_true(hits > (kinds[k] == SOUP_THIN ? 5u : 100u));
            prism_bvh_free(b);
            soup_free(&s);
        }
}

/* Closed meshes hit through shared edges and vertices: the exact ties that
 * the smaller-index rule settles the same way on both trees. */
static void test_closed_meshes(void **state)
{
    (void)state;
    soup s = {0};
    const float c[3] = {0, 0, 0}, lo[3] = {-2, -2, -2}, hi[3] = {2, 2, 2};
    soup_sphere(&s, 4, c, 1.0f);
    soup_box(&s, lo, hi, 16);
    prism_bvh *b = build(&s, 4, PRISM_BVH_ORDER_BFS);
    prism_bvh_wide *w = collapse_ok(b);
    prism_geometry_view bin, wide;
    prism__bvh_view(b, &bin);
    prism__bvh_view_wide(b, w, (uint32_t)w->node_count, &wide);
    /* rays from the centre through every vertex: all hit, many on a tie */
    for (size_t v = 0; v < s.nv; v++) {
        prism_ray ray = {
            {0, 0, 0}, 0.0f, {s.pos[3 * v], s.pos[3 * v + 1], s.pos[3 * v + 2]}, INFINITY};
        prism_hit a, h;
        assert_true(prism_bvh_closest(&bin, &ray, &a));
        assert_true(prism_wide_closest_skip(&wide, &ray, PRISM_BVH_MISS, &h));
        same_hit(&bin, &ray, &a, &h);
    }
    /* the rule settles most ties the same way on both trees */
    print_message("closed meshes: %zu rays through vertices, %zu exact ties reported differently\n",
                  s.nv, ties);
    assert_true(ties < s.nv / 20);
    prism__bvh_wide_free(w);
    prism_bvh_free(b);
    soup_free(&s);
}

static void test_small_and_empty(void **state)
{
    (void)state;
    /* empty: one node with no child, every ray misses */
    prism_bvh *b = NULL;
    assert_int_equal(prism_bvh_build(NULL, 0, NULL, 0, NULL, &b), PRISM_SUCCESS);
    prism_bvh_wide *w = collapse_ok(b);
    assert_int_equal(w->node_count, 1);
    prism_geometry_view v;
    prism__bvh_view_wide(b, w, 1, &v);
    prism_ray ray = {{0, 0, -1}, 0.0f, {0, 0, 1}, INFINITY};
    prism_hit h;
    assert_false(prism_wide_closest_skip(&v, &ray, PRISM_BVH_MISS, &h));
    assert_int_equal(h.triangle, PRISM_BVH_MISS);
    assert_true(h.t == INFINITY);
    assert_int_equal(prism_wide_any(&v, &ray), PRISM_BVH_MISS);
    prism__bvh_wide_free(w);
    prism_bvh_free(b);
    /* 1..40 triangles: a root leaf, a root of leaves, a second level */
    for (size_t n = 1; n <= 40; n += 3) {
        soup s = {0};
        rng r = {n};
        const float off[3] = {0, 0, 0};
        soup_random(&s, SOUP_SMALL, n, &r, 1.0f, off);
        b = build(&s, 4, PRISM_BVH_ORDER_BFS);
        check_bvh(b, 400, n);
        prism_bvh_free(b);
        soup_free(&s);
    }
}

static void test_bad_input(void **state)
{
    (void)state;
    prism_bvh_wide *w = (prism_bvh_wide *)&w;
    assert_int_equal(prism__bvh_collapse(NULL, &w), PRISM_ERROR_INVALID_ARGUMENT);
    assert_null(w);
    soup s = {0};
    rng r = {5};
    const float off[3] = {0, 0, 0};
    soup_random(&s, SOUP_SMALL, 200, &r, 1.0f, off);
    prism_bvh *b = build(&s, 4, PRISM_BVH_ORDER_BFS);
    assert_int_equal(prism__bvh_collapse(b, NULL), PRISM_ERROR_INVALID_ARGUMENT);
    /* a given tree whose child lies outside its array */
    const uint32_t first = b->nodes[0].first;
    b->nodes[0].first = (uint32_t)b->node_count;
    w = (prism_bvh_wide *)&w;
    assert_int_equal(prism__bvh_collapse(b, &w), PRISM_ERROR_INVALID_ARGUMENT);
    assert_null(w);
    b->nodes[0].first = first;
    /* a leaf that names triangles past the end */
    size_t leaf = 0;
    while (b->nodes[leaf].count == 0)
        leaf++;
    b->nodes[leaf].first = (uint32_t)b->triangle_count;
    assert_int_equal(prism__bvh_collapse(b, &w), PRISM_ERROR_INVALID_ARGUMENT);
    assert_null(w);
    prism_bvh_free(b);
    soup_free(&s);
}

/* A given chain-shaped tree deeper than the wide stack allows is refused,
 * not traversed past its stack. */
static void test_too_deep(void **state)
{
    (void)state;
    /* a chain opens 7 levels into each wide node */
    const size_t levels = 7 * PRISM_WIDE_MAX_DEPTH + 20, nt = levels + 1;
    float *pos = calloc(9 * nt, sizeof *pos);
    uint32_t *idx = malloc(3 * nt * sizeof *idx);
    prism_bvh_node *nodes = calloc(2 * levels + 2, sizeof *nodes);
    uint32_t *ids = malloc(nt * sizeof *ids);
    assert_true(pos && idx && nodes && ids);
    for (size_t t = 0; t < nt; t++) {
        const float x = (float)t;
        const float v[9] = {x, 0, 0, x + 0.5f, 0, 0, x, 1, 0};
        memcpy(pos + 9 * t, v, sizeof v);
        for (int k = 0; k < 3; k++)
            idx[3 * t + (size_t)k] = (uint32_t)(3 * t + (size_t)k);
        ids[t] = (uint32_t)t;
    }
    /* node 2i is the inner node of level i (node 0 the root), its children
     * 2i+2 (inner, or the last leaf) and 2i+3 (leaf of triangle i) */
    for (size_t i = 0; i <= levels; i++) {
        prism_bvh_node *n = &nodes[i == 0 ? 0 : 2 * i];
        const float lo[3] = {(float)i, 0, 0}, hi[3] = {(float)nt, 1, 0};
        memcpy(n->lo, lo, sizeof lo);
        memcpy(n->hi, hi, sizeof hi);
        if (i == levels) {
            n->first = (uint32_t)i;
            n->count = 1;
            continue;
        }
        n->first = (uint32_t)(2 * i + 2);
        prism_bvh_node *leaf = &nodes[2 * i + 3];
        const float llo[3] = {(float)i, 0, 0}, lhi[3] = {(float)i + 0.5f, 1, 0};
        memcpy(leaf->lo, llo, sizeof llo);
        memcpy(leaf->hi, lhi, sizeof lhi);
        leaf->first = (uint32_t)i;
        leaf->count = 1;
    }
    prism_bvh b = {nodes, 2 * levels + 2, pos, 3 * nt, idx, ids, nt, {0}};
    b.nodes[1] = (prism_bvh_node){{1, 1, 1}, 0, {0, 0, 0}, 0}; /* padding */
    prism_bvh_wide *w = (prism_bvh_wide *)&w;
    assert_int_equal(prism__bvh_collapse(&b, &w), PRISM_ERROR_LIMIT);
    assert_null(w);
    free(pos);
    free(idx);
    free(nodes);
    free(ids);
}

static void test_hostile(void **state)
{
    (void)state;
    for (const char *const *name = bvh_hostile_names; *name; name++) {
        float *pos = NULL;
        uint32_t *idx = NULL;
        size_t nv = 0, nt = 0;
        assert_int_equal(bvh_hostile_scene(*name, &pos, &nv, &idx, &nt), BVH_HOSTILE_OK);
        /* leaves of 64 cut into pieces too, where the build is quick */
        const unsigned leaves[2] = {4, 64};
        for (int l = 0; l < (nt <= 100000 ? 2 : 1); l++) {
            prism_bvh_desc d = {.max_leaf_size = leaves[l]};
            prism_bvh *b = NULL;
            assert_int_equal(prism_bvh_build(pos, nv, idx, nt, &d, &b), PRISM_SUCCESS);
            check_bvh(b, 600, 7 + (uint64_t)l);
            prism_bvh_free(b);
        }
        free(pos);
        free(idx);
    }
}

static void asset_one(const char *path, void *user)
{
    (void)user;
    prism_scene *sc = NULL;
    if (prism_scene_load(path, NULL, &sc) != PRISM_SUCCESS)
        return; /* the loader's suites say why; this one needs triangles */
    prism_bvh *b = NULL;
    assert_int_equal(prism_bvh_build(sc->positions, sc->vertices_count, sc->indices,
                                     sc->triangles_count, NULL, &b),
                     PRISM_SUCCESS);
    check_bvh(b, 2000, 3);
    prism_bvh_free(b);
    prism_scene_free(sc);
}

static void test_assets(void **state)
{
    (void)state;
    for_each_asset(asset_one, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_soups),           cmocka_unit_test(test_closed_meshes),
        cmocka_unit_test(test_small_and_empty), cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_too_deep),        cmocka_unit_test(test_hostile),
        cmocka_unit_test(test_assets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
