/* Helpers of the BVH suite: soups, brute force, invariants, ray comparison. */
#include <dirent.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "geometry/bvh/internal.h"
#include "bvh_test_util.h"
#include "prism/device/bvh_traverse.h"
#include "prism/device/ray_triangle.h"

float rng_float(rng *r)
{
    r->s ^= r->s << 13;
    r->s ^= r->s >> 7;
    r->s ^= r->s << 17;
    return (float)(r->s >> 40) * (1.0f / 16777216.0f);
}

float rng_range(rng *r, float lo, float hi)
{
    return lo + (hi - lo) * rng_float(r);
}

void soup_free(soup *s)
{
    free(s->pos);
    free(s->idx);
    memset(s, 0, sizeof *s);
}

uint32_t soup_vertex(soup *s, float x, float y, float z)
{
    if (s->nv == s->cap_v) {
        s->cap_v = s->cap_v ? 2 * s->cap_v : 64;
        s->pos = realloc(s->pos, s->cap_v * 3 * sizeof(float));
        assert_non_null(s->pos);
    }
    float *p = s->pos + 3 * s->nv;
    p[0] = x;
    p[1] = y;
    p[2] = z;
    return (uint32_t)s->nv++;
}

void soup_triangle(soup *s, uint32_t a, uint32_t b, uint32_t c)
{
    if (s->nt == s->cap_t) {
        s->cap_t = s->cap_t ? 2 * s->cap_t : 64;
        s->idx = realloc(s->idx, s->cap_t * 3 * sizeof(uint32_t));
        assert_non_null(s->idx);
    }
    uint32_t *t = s->idx + 3 * s->nt++;
    t[0] = a;
    t[1] = b;
    t[2] = c;
}

static uint32_t rand_vertex(soup *s, rng *r, const float c[3], float size, float scale,
                            const float off[3])
{
    return soup_vertex(s, (c[0] + rng_range(r, -size, size)) * scale + off[0],
                       (c[1] + rng_range(r, -size, size)) * scale + off[1],
                       (c[2] + rng_range(r, -size, size)) * scale + off[2]);
}

static void random_one(soup *s, soup_kind kind, rng *r, float scale, const float off[3])
{
    float c[3] = {rng_range(r, -1, 1), rng_range(r, -1, 1), rng_range(r, -1, 1)};
    uint32_t a = rand_vertex(s, r, c, 0.05f, scale, off), b, d;
    switch (kind) {
    case SOUP_THIN: { /* a long edge and a third vertex a hair off it */
        float e[3] = {rng_range(r, -1, 1), rng_range(r, -1, 1), rng_range(r, -1, 1)};
        const float pa[3] = {s->pos[3 * a], s->pos[3 * a + 1], s->pos[3 * a + 2]};
        b = soup_vertex(s, pa[0] + e[0] * scale, pa[1] + e[1] * scale, pa[2] + e[2] * scale);
        d = soup_vertex(s, pa[0] + 0.5f * e[0] * scale, pa[1] + 0.5f * e[1] * scale + 1e-3f * scale,
                        pa[2] + 0.5f * e[2] * scale);
        break;
    }
    case SOUP_HUGE:
        b = rand_vertex(s, r, c, 40.0f, scale, off);
        d = rand_vertex(s, r, c, 40.0f, scale, off);
        break;
    case SOUP_DEGENERATE:
        if (rng_float(r) < 0.5f) { /* repeated vertex */
            b = a;
            d = rand_vertex(s, r, c, 0.1f, scale, off);
        } else { /* collinear: the midpoint of a segment */
            b = rand_vertex(s, r, c, 0.1f, scale, off);
            float m[3];
            for (int k = 0; k < 3; k++)
                m[k] = 0.5f * (s->pos[3 * a + k] + s->pos[3 * b + k]);
            d = soup_vertex(s, m[0], m[1], m[2]);
        }
        break;
    case SOUP_COINCIDENT:
        b = rand_vertex(s, r, c, 0.1f, scale, off);
        d = rand_vertex(s, r, c, 0.1f, scale, off);
        soup_triangle(s, a, b, d);
        soup_triangle(s, d, b, a); /* the same triangle, the other way round */
        b = rand_vertex(s, r, c, 0.1f, scale, off);
        break; /* and one sharing two vertices */
    default:
        b = rand_vertex(s, r, c, 0.1f, scale, off);
        d = rand_vertex(s, r, c, 0.1f, scale, off);
        break;
    }
    soup_triangle(s, a, b, d);
}

void soup_random(soup *s, soup_kind kind, size_t n, rng *r, float scale, const float offset[3])
{
    static const float zero[3] = {0, 0, 0};
    if (!offset)
        offset = zero;
    for (size_t i = 0; i < n; i++) {
        soup_kind k = kind;
        if (kind == SOUP_MIXED)
            k = (soup_kind)(1 + (int)(rng_float(r) * 5.0f));
        random_one(s, k, r, scale, offset);
    }
}

static uint32_t mid_vertex(soup *s, uint32_t a, uint32_t b, const float c[3], float radius)
{
    float m[3];
    for (int k = 0; k < 3; k++)
        m[k] = 0.5f * (s->pos[3 * a + k] + s->pos[3 * b + k]) - c[k];
    float l = sqrtf(m[0] * m[0] + m[1] * m[1] + m[2] * m[2]);
    for (uint32_t v = 0; v < s->nv; v++) { /* reuse: the mesh must share its edges */
        const float *p = s->pos + 3 * v;
        if (p[0] == m[0] / l * radius + c[0] && p[1] == m[1] / l * radius + c[1] &&
            p[2] == m[2] / l * radius + c[2])
            return v;
    }
    return soup_vertex(s, m[0] / l * radius + c[0], m[1] / l * radius + c[1],
                       m[2] / l * radius + c[2]);
}

void soup_sphere(soup *s, int levels, const float c[3], float radius)
{
    const float p = 1.6180339887f, k = radius / sqrtf(1.0f + p * p);
    const float v[12][3] = {{-1, p, 0}, {1, p, 0}, {-1, -p, 0}, {1, -p, 0},
                            {0, -1, p}, {0, 1, p}, {0, -1, -p}, {0, 1, -p},
                            {p, 0, -1}, {p, 0, 1}, {-p, 0, -1}, {-p, 0, 1}};
    const uint32_t f[20][3] = {{0, 11, 5}, {0, 5, 1},  {0, 1, 7},   {0, 7, 10}, {0, 10, 11},
                               {1, 5, 9},  {5, 11, 4}, {11, 10, 2}, {10, 7, 6}, {7, 1, 8},
                               {3, 9, 4},  {3, 4, 2},  {3, 2, 6},   {3, 6, 8},  {3, 8, 9},
                               {4, 9, 5},  {2, 4, 11}, {6, 2, 10},  {8, 6, 7},  {9, 8, 1}};
    soup m = {0};
    for (int i = 0; i < 12; i++)
        soup_vertex(&m, v[i][0] * k + c[0], v[i][1] * k + c[1], v[i][2] * k + c[2]);
    for (int i = 0; i < 20; i++)
        soup_triangle(&m, f[i][0], f[i][1], f[i][2]);
    for (int l = 0; l < levels; l++) {
        soup next = {0};
        for (size_t i = 0; i < m.nv; i++)
            soup_vertex(&next, m.pos[3 * i], m.pos[3 * i + 1], m.pos[3 * i + 2]);
        for (size_t t = 0; t < m.nt; t++) {
            uint32_t a = m.idx[3 * t], b = m.idx[3 * t + 1], d = m.idx[3 * t + 2];
            uint32_t ab = mid_vertex(&next, a, b, c, radius),
                     bd = mid_vertex(&next, b, d, c, radius),
                     da = mid_vertex(&next, d, a, c, radius);
            soup_triangle(&next, a, ab, da);
            soup_triangle(&next, ab, b, bd);
            soup_triangle(&next, da, bd, d);
            soup_triangle(&next, ab, bd, da);
        }
        soup_free(&m);
        m = next;
    }
    uint32_t base = (uint32_t)s->nv;
    for (size_t i = 0; i < m.nv; i++)
        soup_vertex(s, m.pos[3 * i], m.pos[3 * i + 1], m.pos[3 * i + 2]);
    for (size_t t = 0; t < m.nt; t++)
        soup_triangle(s, base + m.idx[3 * t], base + m.idx[3 * t + 1], base + m.idx[3 * t + 2]);
    soup_free(&m);
}

/* One face of soup_box: axis `a` fixed at `at`, a grid over the other two. */
static void box_face(soup *s, const float lo[3], const float hi[3], int a, float at, int n)
{
    int u = (a + 1) % 3, v = (a + 2) % 3;
    uint32_t base = (uint32_t)s->nv;
    for (int j = 0; j <= n; j++)
        for (int i = 0; i <= n; i++) {
            float p[3];
            p[a] = at;
            p[u] = i == n ? hi[u] : lo[u] + (hi[u] - lo[u]) * (float)i / (float)n;
            p[v] = j == n ? hi[v] : lo[v] + (hi[v] - lo[v]) * (float)j / (float)n;
            soup_vertex(s, p[0], p[1], p[2]);
        }
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            uint32_t q = base + (uint32_t)(j * (n + 1) + i);
            soup_triangle(s, q, q + 1, q + (uint32_t)n + 2);
            soup_triangle(s, q, q + (uint32_t)n + 2, q + (uint32_t)n + 1);
        }
}

void soup_box(soup *s, const float lo[3], const float hi[3], int n)
{
    /* Faces are separate grids whose border vertices coincide exactly with
     * the neighbouring face's: the same coordinates, so the same edges. */
    for (int a = 0; a < 3; a++) {
        box_face(s, lo, hi, a, lo[a], n);
        box_face(s, lo, hi, a, hi[a], n);
    }
}

prism_bvh *build_soup(const soup *s, unsigned leaf, unsigned quality, int threads)
{
    prism_bvh_desc d = {.max_leaf_size = leaf, .quality = quality, .threads = threads};
    prism_bvh *bvh = NULL;
    assert_int_equal(prism_bvh_build(s->pos, s->nv, s->idx, s->nt, &d, &bvh), PRISM_SUCCESS);
    assert_non_null(bvh);
    return bvh;
}

static bool brute_test(const soup *s, const prism_ray_pre *p, size_t t, float tmax, float *tt,
                       float *u, float *v)
{
    const uint32_t *i = s->idx + 3 * t;
    return prism_ray_triangle(p, s->pos + 3 * i[0], s->pos + 3 * i[1], s->pos + 3 * i[2], p->tmin,
                              tmax, tt, u, v);
}

bool brute_closest(const soup *s, const prism_ray *ray, prism_hit *hit)
{
    prism_ray_pre p;
    prism_ray_prepare(ray, &p);
    *hit = (prism_hit){.t = ray->tmax, .triangle = PRISM_BVH_MISS};
    for (size_t t = 0; t < s->nt; t++) {
        float tt, u, v;
        if (brute_test(s, &p, t, hit->t, &tt, &u, &v) &&
            (hit->triangle == PRISM_BVH_MISS || tt < hit->t))
            *hit = (prism_hit){.t = tt, .triangle = (uint32_t)t, .u = u, .v = v};
    }
    return hit->triangle != PRISM_BVH_MISS;
}

bool brute_hits_at(const soup *s, const prism_ray *ray, uint32_t id, float t)
{
    prism_ray_pre p;
    prism_ray_prepare(ray, &p);
    float tt, u, v;
    return brute_test(s, &p, id, ray->tmax, &tt, &u, &v) && tt == t;
}

static void check_leaf_contents(const prism_bvh *bvh, const soup *s, const prism_bvh_node *n,
                                uint8_t *seen)
{
    assert_true((size_t)n->first + n->count <= bvh->triangle_count);
    for (uint32_t i = n->first; i < n->first + n->count; i++) {
        assert_int_equal(seen[i], 0); /* in exactly one leaf */
        seen[i] = 1;
        uint32_t id = bvh->triangle_ids[i];
        assert_true(id < s->nt);
        for (int k = 0; k < 3; k++) {
            uint32_t v = bvh->triangles[3 * (size_t)i + k];
            assert_true(v < bvh->vertex_count);
            /* the same vertex, renumbered */
            assert_memory_equal(bvh->vertices + 3 * (size_t)v,
                                s->pos + 3 * (size_t)s->idx[3 * (size_t)id + k], 3 * sizeof(float));
            for (int a = 0; a < 3; a++) { /* the leaf box holds the triangle */
                assert_true(bvh->vertices[3 * (size_t)v + a] >= n->lo[a]);
                assert_true(bvh->vertices[3 * (size_t)v + a] <= n->hi[a]);
            }
        }
    }
}

static void check_children(const prism_bvh *bvh, size_t i, uint32_t *parent, unsigned *depth)
{
    const prism_bvh_node *n = &bvh->nodes[i];
    assert_true(n->first > i);         /* children after their parent: prefix property */
    assert_int_equal(n->first % 2, 0); /* a sibling pair is one 64-byte line */
    assert_true((size_t)n->first + 1 < bvh->node_count);
    for (uint32_t c = n->first; c <= n->first + 1; c++) {
        assert_int_equal(parent[c], UINT32_MAX); /* one parent each */
        parent[c] = (uint32_t)i;
        depth[c] = depth[i] + 1;
        for (int a = 0; a < 3; a++) {
            assert_true(bvh->nodes[c].lo[a] >= n->lo[a]);
            assert_true(bvh->nodes[c].hi[a] <= n->hi[a]);
        }
    }
}

void check_invariants(const prism_bvh *bvh, const soup *s, unsigned leaf)
{
    check_invariants_order(bvh, s, leaf, UINT_MAX);
}

void check_invariants_order(const prism_bvh *bvh, const soup *s, unsigned leaf, unsigned bfs_levels)
{
    assert_int_equal(bvh->triangle_count, s->nt);
    assert_int_equal(bvh->vertex_count, s->nv);
    assert_true(bvh->node_count >= 1);
    if (s->nt == 0)
        return;
    uint8_t *seen = calloc(s->nt, 1);
    uint8_t *id_seen = calloc(s->nt, 1);
    uint32_t *parent = malloc(bvh->node_count * sizeof *parent);
    unsigned *depth = calloc(bvh->node_count, sizeof *depth);
    assert_true(seen && id_seen && parent && depth);
    memset(parent, 0xff, bvh->node_count * sizeof *parent);
    size_t leaves = 0;
    unsigned max_depth = 0, max_leaf = 0;
    bool deep = false;
    for (size_t i = 0; i < bvh->node_count; i++) {
        const prism_bvh_node *n = &bvh->nodes[i];
        if (i == 1 && bvh->node_count > 1) { /* the padding node */
            assert_int_equal(n->count, 0);
            assert_int_equal(n->first, 0);
            assert_true(n->lo[0] > n->hi[0]);
            depth[1] = 1;
            continue;
        }
        if (i > 0) {
            assert_int_not_equal(parent[i], UINT32_MAX); /* reached before it is read */
            if (depth[i] <= bfs_levels) {                /* breadth-first down there */
                assert_false(deep);
                assert_true(depth[i] >= depth[i - 1]);
            }
            deep |= depth[i] > bfs_levels;
        }
        max_depth = depth[i] > max_depth ? depth[i] : max_depth;
        if (n->count) {
            leaves++;
            max_leaf = n->count > max_leaf ? n->count : max_leaf;
            check_leaf_contents(bvh, s, n, seen);
        } else {
            check_children(bvh, i, parent, depth);
        }
    }
    for (size_t i = 0; i < s->nt; i++) {
        assert_int_equal(seen[i], 1);
        assert_int_equal(id_seen[bvh->triangle_ids[i]], 0); /* ids are a permutation */
        id_seen[bvh->triangle_ids[i]] = 1;
    }
    assert_true(max_leaf <= leaf);
    assert_true(max_depth <= PRISM_BVH_MAX_DEPTH);
    assert_int_equal(bvh->stats.nodes, bvh->node_count);
    assert_int_equal(bvh->stats.leaves, leaves);
    assert_int_equal(bvh->stats.max_depth, max_depth);
    assert_int_equal(bvh->stats.max_leaf_triangles, max_leaf);
    assert_int_equal(bvh->node_count, 2 * leaves - 1 + (leaves > 1)); /* + padding */
    assert_int_equal((uintptr_t)bvh->nodes % 64, 0);                  /* pairs in one line */
    free(seen);
    free(id_seen);
    free(parent);
    free(depth);
}

void compare_ray(const prism_bvh *bvh, const soup *s, const prism_ray *ray)
{
    prism_hit h, b;
    bool hit = prism_bvh_intersect(bvh, ray, &h);
    bool bhit = brute_closest(s, ray, &b);
    if (hit != bhit || (hit && (h.t != b.t || h.triangle != b.triangle))) {
        bool tie = hit && bhit && h.t == b.t && brute_hits_at(s, ray, h.triangle, h.t);
        if (!tie)
            print_error(
                "ray org (%.9g %.9g %.9g) dir (%.9g %.9g %.9g) [%g %g]: bvh %d t=%.9g tri=%u,"
                " brute %d t=%.9g tri=%u\n",
                ray->org[0], ray->org[1], ray->org[2], ray->dir[0], ray->dir[1], ray->dir[2],
                ray->tmin, ray->tmax, hit, h.t, h.triangle, bhit, b.t, b.triangle);
        assert_true(tie);
    }
    if (hit && h.triangle == b.triangle) {
        assert_true(h.u == b.u && h.v == b.v);
    }
    /* Any hit: some hit exactly when the closest query hits, none below it. */
    assert_int_equal(prism_bvh_occluded(bvh, ray), bhit);
    if (bhit && b.t > ray->tmin) {
        prism_ray shorter = *ray;
        shorter.tmax = b.t * 0.999f > ray->tmin ? b.t * 0.999f : ray->tmin;
        if (shorter.tmax < b.t)
            assert_false(prism_bvh_occluded(bvh, &shorter));
    }
}

static void random_ray(const prism_bvh *bvh, rng *r, float margin, bool axis_aligned,
                       prism_ray *ray)
{
    const prism_bvh_node *root = &bvh->nodes[0];
    for (int a = 0; a < 3; a++) {
        float ext = root->hi[a] - root->lo[a];
        ray->org[a] = rng_range(r, root->lo[a] - margin * ext, root->hi[a] + margin * ext);
        ray->dir[a] = axis_aligned ? 0.0f : rng_range(r, -1.0f, 1.0f);
    }
    if (axis_aligned)
        ray->dir[(int)(rng_float(r) * 3.0f)] = rng_float(r) < 0.5f ? -1.0f : 1.0f;
    ray->tmin = 0.0f;
    ray->tmax = INFINITY;
}

size_t compare_random_rays(const prism_bvh *bvh, const soup *s, size_t n, rng *r, float margin,
                           bool axis_aligned)
{
    size_t hits = 0;
    for (size_t i = 0; i < n; i++) {
        prism_ray ray;
        random_ray(bvh, r, margin, axis_aligned, &ray);
        compare_ray(bvh, s, &ray);
        prism_hit h;
        hits += prism_bvh_intersect(bvh, &ray, &h);
    }
    return hits;
}

static bool faces_viewer(const soup *s, size_t t, const float centre[3], const float dir[3])
{
    const float *r0 = s->pos + 3 * s->idx[3 * t], *r1 = s->pos + 3 * s->idx[3 * t + 1],
                *r2 = s->pos + 3 * s->idx[3 * t + 2];
    float e1[3], e2[3], n[3], out = 0.0f, nn = 0.0f, dd = 0.0f, nd = 0.0f;
    for (int a = 0; a < 3; a++) {
        e1[a] = r1[a] - r0[a];
        e2[a] = r2[a] - r0[a];
    }
    n[0] = e1[1] * e2[2] - e1[2] * e2[1];
    n[1] = e1[2] * e2[0] - e1[0] * e2[2];
    n[2] = e1[0] * e2[1] - e1[1] * e2[0];
    for (int a = 0; a < 3; a++) {
        out += n[a] * ((r0[a] + r1[a] + r2[a]) / 3.0f - centre[a]);
        nn += n[a] * n[a];
        dd += dir[a] * dir[a];
        nd += n[a] * dir[a];
    }
    if (out < 0.0f) /* orient the normal outwards */
        nd = -nd;
    return -nd > 0.3f * sqrtf(nn * dd);
}

size_t fire_at_edges(const prism_bvh *bvh, const soup *s, const float from[3],
                     const float centre[3], bool inside)
{
    size_t fired = 0;
    for (size_t t = 0; t < s->nt; t++)
        for (int e = 0; e < 3; e++) {
            const float *p = s->pos + 3 * s->idx[3 * t + e];
            const float *q = s->pos + 3 * s->idx[3 * t + (e + 1) % 3];
            for (int k = 0; k <= 4; k++) { /* the vertex, points along the edge */
                float w = (float)k / 8.0f;
                prism_ray ray = {.org = {from[0], from[1], from[2]}, .tmax = INFINITY};
                for (int a = 0; a < 3; a++)
                    ray.dir[a] = (p[a] + w * (q[a] - p[a])) - from[a];
                if (!inside && !faces_viewer(s, t, centre, ray.dir))
                    continue; /* only clearly front-facing triangles: no silhouettes */
                prism_hit hit;
                if (!prism_bvh_intersect(bvh, &ray, &hit))
                    print_error(
                        "slipped through: triangle %zu edge %d at %g (%s), brute force %d\n", t, e,
                        (double)w, inside ? "inside" : "outside", brute_closest(s, &ray, &hit));
                assert_true(prism_bvh_intersect(bvh, &ray, &hit));
                assert_true(prism_bvh_occluded(bvh, &ray));
                fired++;
            }
        }
    return fired;
}

void for_each_asset(void (*fn)(const char *path, void *user), void *user)
{
    DIR *dir = opendir(PRISM_ASSETS);
    if (!dir)
        fail_msg("cannot open %s", PRISM_ASSETS);
    size_t seen = 0;
    struct dirent *e;
    while ((e = readdir(dir))) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".dae") != 0)
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", PRISM_ASSETS, e->d_name);
        fn(path, user);
        seen++;
    }
    closedir(dir);
    if (seen == 0)
        fail_msg("no .dae files in %s", PRISM_ASSETS);
}
