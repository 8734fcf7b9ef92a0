/* Every hostile scene (bvh_hostile.h) through every BVH builder: the build
 * succeeds, prism_bvh_validate accepts the tree (so its depth is within the
 * traversal stack), and the closest hits of a few thousand rays agree with
 * brute force over all triangles. "empty" must give the documented empty
 * BVH. Builders sit in a table so the CUDA builder can join the host one;
 * a builder known to fail a scene is listed in `known_failures` and that
 * case is skipped with the reason, rather than failing the suite (or
 * crashing it, which a skip cannot undo once the build has run). */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <omp.h>

#include "bvh_hostile.h"
#include "prism/device/ray_triangle.h"

#include "prism/bvh.h"

/* ---- builders ---------------------------------------------------------- */

/* One build configuration; a builder honours what it can. */
typedef struct build_config {
    unsigned leaf;    /* max leaf size, 1..64 */
    unsigned quality; /* PRISM_BVH_QUALITY_* */
    unsigned order;   /* PRISM_BVH_ORDER_* */
} build_config;

/* A builder gives a prism_bvh in host memory (a device builder copies its
 * nodes back), so one validator and one CPU traversal check them all. */
typedef prism_result (*build_fn)(const float *positions, size_t vertex_count,
                                 const uint32_t *indices, size_t triangle_count,
                                 const build_config *config, prism_bvh **out);

typedef struct builder {
    const char *name;
    build_fn build;
} builder;

static prism_result build_host(const float *positions, size_t vertex_count, const uint32_t *indices,
                               size_t triangle_count, const build_config *config, prism_bvh **out)
{
    const prism_bvh_desc desc = {.max_leaf_size = config->leaf,
                                 .quality = config->quality,
                                 .order = config->order};
    return prism_bvh_build(positions, vertex_count, indices, triangle_count, &desc, out);
}

static const builder builders[] = {{"host", build_host}};

static const build_config configs[] = {{1, PRISM_BVH_QUALITY_MEDIUM, PRISM_BVH_ORDER_BFS},
                                       {4, PRISM_BVH_QUALITY_FAST, PRISM_BVH_ORDER_BFS},
                                       {64, PRISM_BVH_QUALITY_HIGH, PRISM_BVH_ORDER_DFS}};

/* Builder/scene pairs that fail today, with what goes wrong; skipped. */
typedef struct known_failure {
    const char *builder, *scene, *why;
} known_failure;

static const known_failure known_failures[] = {{NULL, NULL, NULL}};

static const char *known_failure_of(const char *builder_name, const char *scene)
{
    for (const known_failure *k = known_failures; k->builder; k++)
        if (strcmp(k->builder, builder_name) == 0 && strcmp(k->scene, scene) == 0)
            return k->why;
    return NULL;
}

/* ---- the scene and its reference hits ---------------------------------- */

typedef struct hostile {
    const char *name;
    float *pos;
    uint32_t *idx;
    size_t nv, nt;
    prism_ray *rays;
    prism_hit *expect; /* brute force's closest hit of each ray */
    size_t ray_count, hits;
    double brute_seconds;
} hostile;

#define RAYS 3000

static uint64_t next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static double uniform(uint64_t *s)
{
    return (double)(next(s) >> 11) * (1.0 / 9007199254740992.0);
}

static void scene_box(const hostile *h, double lo[3], double hi[3])
{
    for (int a = 0; a < 3; a++)
        lo[a] = DBL_MAX, hi[a] = -DBL_MAX;
    for (size_t v = 0; v < h->nv; v++)
        for (int a = 0; a < 3; a++) {
            lo[a] = fmin(lo[a], h->pos[3 * v + a]);
            hi[a] = fmax(hi[a], h->pos[3 * v + a]);
        }
}

/* A point inside a random triangle. */
static void target(const hostile *h, uint64_t *s, double p[3])
{
    const uint32_t *t = h->idx + 3 * (next(s) % h->nt);
    double u = uniform(s), v = uniform(s);
    if (u + v > 1.0)
        u = 1.0 - u, v = 1.0 - v;
    for (int a = 0; a < 3; a++) {
        const double x = h->pos[3 * t[0] + a], y = h->pos[3 * t[1] + a], z = h->pos[3 * t[2] + a];
        p[a] = x + u * (y - x) + v * (z - x);
    }
}

/* A third of the rays random across the scene's box, a third aimed at a
 * point of a random triangle from a distance log-uniform over nine decades
 * below the scene's size (tiny triangles are only ever hit on purpose), a
 * third the same along an axis (zero direction components meet flat boxes). */
static void make_ray(const hostile *h, uint64_t *s, size_t i, const double lo[3],
                     const double hi[3], prism_ray *ray)
{
    double diag = 0.0, p[3], d[3];
    for (int a = 0; a < 3; a++)
        diag = fmax(diag, hi[a] - lo[a]);
    diag = diag > 0.0 ? diag : 1.0;
    if (i % 3 == 0) {
        for (int a = 0; a < 3; a++) {
            const double m = 0.1 * (hi[a] - lo[a]);
            ray->org[a] = (float)(lo[a] - m + uniform(s) * (hi[a] - lo[a] + 2 * m));
            ray->dir[a] = (float)(2.0 * uniform(s) - 1.0);
        }
    } else {
        target(h, s, p);
        const double dist = diag * pow(10.0, -9.0 * uniform(s));
        if (i % 3 == 1) {
            for (int a = 0; a < 3; a++)
                d[a] = 2.0 * uniform(s) - 1.0;
        } else {
            d[0] = d[1] = d[2] = 0.0;
            d[next(s) % 3] = next(s) % 2 ? 1.0 : -1.0;
        }
        const double len = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
        for (int a = 0; a < 3; a++) {
            ray->dir[a] = (float)(d[a] / len);
            ray->org[a] = (float)(p[a] - dist * d[a] / len);
        }
    }
    ray->tmin = 0.0f;
    ray->tmax = INFINITY;
}

/* Brute force tests every triangle, but 3000 rays x 1M triangles of the
 * exact test is half a minute on two cores. So each ray first culls, in
 * double, the triangles whose bounding sphere it passes far from, and the
 * exact test (the one the traversal uses) runs on the rest. The cull is
 * conservative by a wide margin: the float test's rounding moves a hit by
 * a few ulps of the coordinates relative to the origin (~1e-6 of |v| +
 * |org|), and the sphere is grown by 1e-5 of that. It culls the garbage
 * hits on zero-area triangles only where the ray passes far from them. */
typedef struct spheres {
    double *c[3], *r; /* centre and radius of each triangle's box's sphere */
} spheres;

static int make_spheres(const hostile *h, spheres *sp)
{
    for (int a = 0; a < 3; a++)
        sp->c[a] = malloc((h->nt + 1) * sizeof(double));
    sp->r = malloc((h->nt + 1) * sizeof(double));
    if (!sp->c[0] || !sp->c[1] || !sp->c[2] || !sp->r)
        return 0;
    for (size_t t = 0; t < h->nt; t++) {
        double r2 = 0.0;
        for (int a = 0; a < 3; a++) {
            double lo = INFINITY, hi = -INFINITY;
            for (int k = 0; k < 3; k++) {
                const double x = h->pos[3 * (size_t)h->idx[3 * t + k] + a];
                lo = fmin(lo, x);
                hi = fmax(hi, x);
            }
            sp->c[a][t] = 0.5 * (lo + hi);
            r2 += 0.25 * (hi - lo) * (hi - lo);
        }
        sp->r[t] = sqrt(r2) * (1.0 + 1e-9);
    }
    return 1;
}

static void free_spheres(spheres *sp)
{
    for (int a = 0; a < 3; a++)
        free(sp->c[a]);
    free(sp->r);
}

/* Closest hit over every triangle, in scene order (ids are scene ids);
 * `near` is scratch of triangle_count bytes. */
static prism_hit brute_closest(const hostile *h, const spheres *sp, const prism_ray *ray,
                               unsigned char *near)
{
    prism_ray_pre p;
    prism_ray_prepare(ray, &p);
    prism_hit best = {.t = ray->tmax, .triangle = PRISM_BVH_MISS};
    const double o[3] = {ray->org[0], ray->org[1], ray->org[2]};
    double d[3] = {ray->dir[0], ray->dir[1], ray->dir[2]};
    const double len = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
    if (len == 0.0)
        return best; /* hits nothing (prism_ray_prepare) */
    for (int a = 0; a < 3; a++)
        d[a] /= len;
    const double omax = fmax(fabs(o[0]), fmax(fabs(o[1]), fabs(o[2])));
    const long n = (long)h->nt;
    for (long t = 0; t < n; t++) { /* branch-free: vectorises */
        const double vx = sp->c[0][t] - o[0], vy = sp->c[1][t] - o[1], vz = sp->c[2][t] - o[2];
        const double cx = vy * d[2] - vz * d[1], cy = vz * d[0] - vx * d[2],
                     cz = vx * d[1] - vy * d[0];
        const double vmax = fmax(fabs(vx), fmax(fabs(vy), fabs(vz)));
        const double R = sp->r[t] + 1e-5 * (vmax + omax + sp->r[t]);
        near[t] = (cx * cx + cy * cy + cz * cz <= R * R) &
                  (vx * d[0] + vy * d[1] + vz * d[2] >= -R);
    }
    for (size_t t = 0; t < h->nt; t++) {
        if (!near[t])
            continue;
        const uint32_t *v = h->idx + 3 * t;
        float tt, u, w;
        if (prism_ray_triangle(&p, h->pos + 3 * (size_t)v[0], h->pos + 3 * (size_t)v[1],
                               h->pos + 3 * (size_t)v[2], ray->tmin, best.t, &tt, &u, &w) &&
            (best.triangle == PRISM_BVH_MISS || tt < best.t))
            best = (prism_hit){.t = tt, .triangle = (uint32_t)t, .u = u, .v = w};
    }
    return best;
}

/* The culled brute force against the plain one on the first rays, so a
 * cull that drops a real hit cannot hide behind the builders' agreement. */
static void check_cull(const hostile *h, size_t rays)
{
    for (size_t i = 0; i < rays && i < h->ray_count; i++) {
        prism_ray_pre p;
        prism_ray_prepare(&h->rays[i], &p);
        float best = INFINITY;
        for (size_t t = 0; t < h->nt; t++) {
            const uint32_t *v = h->idx + 3 * t;
            float tt, u, w;
            if (prism_ray_triangle(&p, h->pos + 3 * (size_t)v[0], h->pos + 3 * (size_t)v[1],
                                   h->pos + 3 * (size_t)v[2], 0.0f, best, &tt, &u, &w))
                best = fminf(best, tt);
        }
        if (best != h->expect[i].t)
            fail_msg("scene %s ray %zu: culled brute force t=%.9g, plain t=%.9g", h->name, i,
                     h->expect[i].t, best);
    }
}

static int setup(void **state)
{
    hostile *h = calloc(1, sizeof *h);
    if (!h)
        return -1;
    h->name = *state;
    if (bvh_hostile_scene(h->name, &h->pos, &h->nv, &h->idx, &h->nt) != BVH_HOSTILE_OK) {
        free(h);
        return -1;
    }
    /* A thousand rays where each costs ~1M triangle tests (huge_tiny's brute
     * force; identical's traversal, which must test every copy), to keep
     * the suite to seconds. */
    const bool costly = h->nt > 500000 || strcmp(h->name, "identical") == 0;
    h->ray_count = !h->nt ? 100 : costly ? RAYS / 3 : RAYS;
    h->rays = malloc(h->ray_count * sizeof *h->rays);
    h->expect = malloc(h->ray_count * sizeof *h->expect);
    if (!h->rays || !h->expect)
        return -1;
    double lo[3] = {-1, -1, -1}, hi[3] = {1, 1, 1};
    if (h->nv)
        scene_box(h, lo, hi);
    uint64_t s = 0x5eedf00du;
    for (size_t i = 0; i < h->ray_count; i++)
        make_ray(h, &s, h->nt ? i : 0, lo, hi, &h->rays[i]);
    spheres sp;
    if (!make_spheres(h, &sp))
        return -1;
    const double t0 = omp_get_wtime();
    size_t hits = 0;
    const long n = (long)h->ray_count;
    int oom = 0;
#pragma omp parallel reduction(+ : hits) reduction(| : oom)
    {
        unsigned char *near = malloc(h->nt + 1);
        oom = !near;
#pragma omp for schedule(dynamic, 16)
        for (long i = 0; i < n; i++) {
            h->expect[i] = near ? brute_closest(h, &sp, &h->rays[i], near)
                                : (prism_hit){.triangle = PRISM_BVH_MISS};
            hits += h->expect[i].triangle != PRISM_BVH_MISS;
        }
        free(near);
    }
    free_spheres(&sp);
    h->hits = hits;
    h->brute_seconds = omp_get_wtime() - t0;
    if (oom)
        return -1;
    *state = h;
    return 0;
}

static int teardown(void **state)
{
    hostile *h = *state;
    free(h->pos);
    free(h->idx);
    free(h->rays);
    free(h->expect);
    free(h);
    return 0;
}

/* ---- checks ------------------------------------------------------------ */

/* The scenes whose every triangle has zero area. The ray test does report
 * hits on a collinear triangle where a ray passes through its segment, but
 * at a distance its rounding makes up (a ray aimed at x = 0.004 along the
 * segment hit it at t = 0.092), so "closest" means little there: a BVH
 * rightly never opens the leaf whose box lies beyond its first hit. There
 * the check is that the BVH invents nothing: each hit it reports is one
 * the ray test reports for that triangle at that t, and where brute force
 * finds nothing, neither does the BVH. */
static bool zero_area(const char *name)
{
    return strcmp(name, "collinear") == 0 || strcmp(name, "collinear_x") == 0 ||
           strcmp(name, "points") == 0;
}

static bool triangle_hit_at(const hostile *h, const prism_ray *ray, uint32_t id, float t)
{
    if (id >= h->nt)
        return false;
    prism_ray_pre p;
    prism_ray_prepare(ray, &p);
    const uint32_t *v = h->idx + 3 * (size_t)id;
    float tt, u, w;
    return prism_ray_triangle(&p, h->pos + 3 * (size_t)v[0], h->pos + 3 * (size_t)v[1],
                              h->pos + 3 * (size_t)v[2], ray->tmin, ray->tmax, &tt, &u, &w) &&
           tt == t;
}

static bool agrees(const hostile *h, size_t i, bool any, const prism_hit *hit)
{
    const prism_hit *e = &h->expect[i];
    const bool expected = e->triangle != PRISM_BVH_MISS;
    if (zero_area(h->name))
        return any ? triangle_hit_at(h, &h->rays[i], hit->triangle, hit->t) : true;
    return any == expected && (!any || fabsf(hit->t - e->t) <= 1e-6f * fabsf(e->t));
}

/* The same hit or miss, at the same distance within 1e-6 relative (where
 * coincident triangles tie, either may be reported), and an occlusion
 * query that agrees. Returns the index of the first ray that disagrees, or
 * the ray count. */
static size_t first_disagreement(const hostile *h, const prism_bvh *bvh, prism_hit *got)
{
    size_t bad = h->ray_count;
    const long n = (long)h->ray_count;
#pragma omp parallel for schedule(dynamic, 64) reduction(min : bad)
    for (long i = 0; i < n; i++) {
        prism_hit hit;
        const bool any = prism_bvh_intersect(bvh, &h->rays[i], &hit);
        const bool occluded = prism_bvh_occluded(bvh, &h->rays[i]);
        if ((!agrees(h, (size_t)i, any, &hit) || occluded != any) && (size_t)i < bad)
            bad = (size_t)i;
    }
    if (bad < h->ray_count)
        prism_bvh_intersect(bvh, &h->rays[bad], got);
    return bad;
}

static void check_empty_bvh(const prism_bvh *bvh)
{
    assert_int_equal(bvh->node_count, 1);
    assert_int_equal(bvh->nodes[0].count, 0);
    assert_int_equal(bvh->nodes[0].first, 0);
    for (int a = 0; a < 3; a++)
        assert_true(bvh->nodes[0].lo[a] > bvh->nodes[0].hi[a]);
}

static void check_build(const hostile *h, const builder *b, const build_config *c)
{
    prism_bvh *bvh = NULL;
    prism_result r = b->build(h->pos, h->nv, h->idx, h->nt, c, &bvh);
    if (r != PRISM_SUCCESS)
        fail_msg("%s builder, scene %s, leaf %u: build failed: %s", b->name, h->name, c->leaf,
                 prism_result_string(r));
    char msg[256];
    r = prism_bvh_validate(bvh->nodes, bvh->node_count, bvh->vertices, bvh->vertex_count,
                           bvh->triangles, bvh->triangle_ids, bvh->triangle_count, c->leaf, msg,
                           sizeof msg);
    if (r != PRISM_SUCCESS)
        fail_msg("%s builder, scene %s, leaf %u: invalid tree: %s", b->name, h->name, c->leaf, msg);
    if (h->nt == 0)
        check_empty_bvh(bvh);
    prism_hit got = {0};
    const size_t bad = first_disagreement(h, bvh, &got);
    if (bad < h->ray_count) {
        const prism_ray *ray = &h->rays[bad];
        const prism_hit *e = &h->expect[bad];
        fail_msg(
            "%s builder, scene %s, leaf %u: ray %zu org (%.9g %.9g %.9g) dir (%.9g %.9g %.9g): "
            "bvh t=%.9g tri=%u, brute force t=%.9g tri=%u",
            b->name, h->name, c->leaf, bad, ray->org[0], ray->org[1], ray->org[2], ray->dir[0],
            ray->dir[1], ray->dir[2], got.t, got.triangle, e->t, e->triangle);
    }
    printf("  %s/%s leaf %2u: %zu nodes, depth %u, SAH %.1f, %.3f s\n", b->name, h->name, c->leaf,
           bvh->node_count, bvh->stats.max_depth, bvh->stats.sah_cost, bvh->stats.build_seconds);
    prism_bvh_free(bvh);
}

/* Scenes with surfaces must be hit by most rays, or the comparison proves
 * little. The zero-area scenes are not required to be missed: rays aimed
 * at a collinear triangle do hit it now and then (see ray_triangle.h),
 * and brute force, using the same test, agrees. */
static void check_rays_meaningful(const hostile *h)
{
    static const char *const degenerate[] = {"collinear", "collinear_x", "points", "empty"};
    for (size_t d = 0; d < sizeof degenerate / sizeof degenerate[0]; d++)
        if (strcmp(h->name, degenerate[d]) == 0)
            return;
    if (h->hits < h->ray_count / 2)
        fail_msg("scene %s: only %zu of %zu rays hit", h->name, h->hits, h->ray_count);
}

static void test_scene(void **state)
{
    const hostile *h = *state;
    printf("%s: %zu triangles, %zu vertices, %zu of %zu rays hit (brute force %.2f s)\n", h->name,
           h->nt, h->nv, h->hits, h->ray_count, h->brute_seconds);
    check_rays_meaningful(h);
    check_cull(h, h->nt > 200000 ? 20 : 200);
    int skipped = 0;
    for (size_t b = 0; b < sizeof builders / sizeof builders[0]; b++) {
        const char *why = known_failure_of(builders[b].name, h->name);
        if (why) {
            printf("SKIP %s builder, scene %s: known failure: %s\n", builders[b].name, h->name,
                   why);
            skipped++;
            continue;
        }
        for (size_t c = 0; c < sizeof configs / sizeof configs[0]; c++)
            check_build(h, &builders[b], &configs[c]);
    }
    if (skipped)
        skip();
}

static void test_unknown_scene(void **state)
{
    (void)state;
    float *p = (float *)&p;
    uint32_t *i = (uint32_t *)&i;
    size_t nv = 1, nt = 1;
    assert_int_equal(bvh_hostile_scene("no such scene", &p, &nv, &i, &nt), BVH_HOSTILE_UNKNOWN);
    assert_null(p);
    assert_null(i);
    assert_int_equal(nv + nt, 0);
}

int main(void)
{
    struct CMUnitTest tests[32];
    size_t n = 0;
    for (const char *const *name = bvh_hostile_names; *name && n < 30; name++)
        tests[n++] = (struct CMUnitTest){*name, test_scene, setup, teardown, (void *)*name};
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_unknown_scene);
    return _cmocka_run_group_tests("bvh_hostile", tests, n, NULL, NULL);
}
