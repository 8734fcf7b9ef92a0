/* `prism-bench bvh FILE`: Prism's BVH against Embree 3 on the same
 * triangles in the same run: build time, SAH cost of both trees (costed by
 * Prism's formula), and closest-hit single-ray rates on the same camera rays
 * and random rays, with ratios. FILE is a COLLADA file, or `soup:N` for N
 * random triangles (a stand-in that needs no loader). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <omp.h>

#include "bench_bvh.h"
#include "bench_util.h"
#include "cli.h"
#include "prism/bvh.h"
#include "prism/scene.h"

typedef struct options {
    const char *file;
    bool json;
    int threads, ray_threads, repeat;
    unsigned leaf, quality, order;
    int width, height;
    size_t random_rays;
    prism_length_unit unit;
} options;

typedef struct owned_scene {
    bvh_bench_scene s;
    float *pos;
    uint32_t *idx;
    prism_scene *loaded;
} owned_scene;

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: prism-bench bvh FILE.dae|soup:N [--json] [--threads N] [--ray-threads N]\n"
        "       [--repeat N] [--leaf N] [--quality 0..3] [--order bfs|dfs] [--width W] [--height H]\n"
        "       [--rays N] [--unit m|cm|mm|auto]\n"
        "Builds Prism's BVH and Embree 3's on the same triangles (build threads: --threads,\n"
        "default all; best of --repeat, default 3, Prism's and Embree's builds taking turns),\n"
        "then traces the same camera and random rays one at a time\n"
        "(--ray-threads, default 1) with prism_bvh_intersect and rtcIntersect1.\n" PRISM_BENCH_UNIT_HELP);
}

static bool parse(int argc, char **argv, options *o)
{
    if (argc < 2 || argv[1][0] == '-')
        return false;
    o->file = argv[1];
    o->json = prism_bench_has_flag(argc, argv, "--json");
    o->threads = atoi(prism_bench_option(argc, argv, "--threads", "0"));
    o->ray_threads = atoi(prism_bench_option(argc, argv, "--ray-threads", "1"));
    o->repeat = atoi(prism_bench_option(argc, argv, "--repeat", "3"));
    o->leaf = (unsigned)atoi(prism_bench_option(argc, argv, "--leaf", "4"));
    o->quality = (unsigned)atoi(prism_bench_option(argc, argv, "--quality", "0"));
    const char *order = prism_bench_option(argc, argv, "--order", "bfs");
    o->order = strcmp(order, "dfs") == 0 ? PRISM_BVH_ORDER_DFS : PRISM_BVH_ORDER_BFS;
    if (strcmp(order, "dfs") != 0 && strcmp(order, "bfs") != 0)
        return false;
    o->width = atoi(prism_bench_option(argc, argv, "--width", "640"));
    o->height = atoi(prism_bench_option(argc, argv, "--height", "480"));
    o->random_rays = (size_t)atol(prism_bench_option(argc, argv, "--rays", "262144"));
    if (!prism_bench_unit(argc, argv, "bvh", &o->unit))
        return false;
    if (o->threads <= 0)
        o->threads = omp_get_max_threads();
    if (o->ray_threads <= 0)
        o->ray_threads = 1;
    return o->repeat > 0 && o->leaf >= 1 && o->leaf <= 32 && o->width > 0 && o->height > 0;
}

double bvh_bench_clock(int threads)
{
    if (threads > 1)
        return prism_bench_now();
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- scenes ------------------------------------------------------------- */

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static float rng_unit(uint64_t *s)
{
    return (float)(rng_next(s) >> 40) * (1.0f / 16777216.0f);
}

/* N small random triangles in [-1, 1]^3, sized so they cover a few percent
 * of any line of sight (a dense soup, harder than a detector's surfaces). */
static bool make_soup(size_t n, owned_scene *o)
{
    o->pos = malloc(n * 9 * sizeof(float));
    o->idx = malloc(n * 3 * sizeof(uint32_t));
    if (!o->pos || !o->idx || n == 0)
        return false;
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    float size = 2.0f / cbrtf((float)n);
    for (size_t t = 0; t < n; t++) {
        float c[3] = {2 * rng_unit(&seed) - 1, 2 * rng_unit(&seed) - 1, 2 * rng_unit(&seed) - 1};
        for (int k = 0; k < 3; k++) {
            for (int a = 0; a < 3; a++)
                o->pos[9 * t + 3 * k + a] = c[a] + size * (rng_unit(&seed) - 0.5f);
            o->idx[3 * t + k] = (uint32_t)(3 * t + k);
        }
    }
    o->s = (bvh_bench_scene){o->pos, 3 * n, o->idx, n};
    return true;
}

static bool get_scene(const char *file, prism_length_unit unit, owned_scene *o)
{
    memset(o, 0, sizeof *o);
    if (strncmp(file, "soup:", 5) == 0)
        return make_soup((size_t)atol(file + 5), o);
    char err[512] = "";
    prism_load_desc d = {.error = err, .error_size = sizeof err, .length_unit = unit};
    tool_env_load(&d);
    if (prism_scene_load(file, &d, &o->loaded) != PRISM_SUCCESS) {
        fprintf(stderr, "prism-bench bvh: %s\n", err);
        return false;
    }
    o->s = (bvh_bench_scene){o->loaded->positions, o->loaded->vertices_count, o->loaded->indices,
                             o->loaded->triangles_count};
    return true;
}

static void free_scene(owned_scene *o)
{
    free(o->pos);
    free(o->idx);
    prism_scene_free(o->loaded);
}

/* ---- rays --------------------------------------------------------------- */

/* A pinhole camera inside the scene's box, at a third of its diagonal,
 * looking at the far corner: for a detector, the view from inside the tank. */
static bvh_bench_rays camera_rays(const prism_bvh *bvh, int w, int h)
{
    bvh_bench_rays set = {"camera", malloc((size_t)w * (size_t)h * sizeof(prism_ray)),
                          (size_t)w * h};
    const float *lo = bvh->nodes[0].lo, *hi = bvh->nodes[0].hi;
    float eye[3], fwd[3], up[3] = {0, 0, 1}, right[3], len = 0;
    for (int a = 0; a < 3; a++) {
        eye[a] = lo[a] + 0.3f * (hi[a] - lo[a]);
        fwd[a] = 0.75f * (hi[a] - lo[a]) + lo[a] - eye[a];
        len += fwd[a] * fwd[a];
    }
    for (int a = 0; a < 3; a++)
        fwd[a] /= sqrtf(len > 0 ? len : 1);
    right[0] = fwd[1] * up[2] - fwd[2] * up[1];
    right[1] = fwd[2] * up[0] - fwd[0] * up[2];
    right[2] = fwd[0] * up[1] - fwd[1] * up[0];
    up[0] = right[1] * fwd[2] - right[2] * fwd[1];
    up[1] = right[2] * fwd[0] - right[0] * fwd[2];
    up[2] = right[0] * fwd[1] - right[1] * fwd[0];
    for (size_t i = 0; set.rays && i < set.n; i++) {
        float x = (2.0f * ((float)(i % (size_t)w) + 0.5f) / (float)w - 1.0f) * (float)w / (float)h;
        float y = 1.0f - 2.0f * ((float)(i / (size_t)w) + 0.5f) / (float)h;
        prism_ray *r = &set.rays[i];
        for (int a = 0; a < 3; a++) {
            r->org[a] = eye[a];
            r->dir[a] = fwd[a] + 0.6f * (x * right[a] + y * up[a]);
        }
        r->tmin = 0.0f;
        r->tmax = INFINITY;
    }
    return set;
}

/* Origins uniform in the scene's box, directions uniform on the sphere. */
static bvh_bench_rays random_rays(const prism_bvh *bvh, size_t n)
{
    bvh_bench_rays set = {"random", malloc(n * sizeof(prism_ray)), n};
    uint64_t seed = 0x243f6a8885a308d3ull;
    const float *lo = bvh->nodes[0].lo, *hi = bvh->nodes[0].hi;
    for (size_t i = 0; set.rays && i < n; i++) {
        prism_ray *r = &set.rays[i];
        float z = 2 * rng_unit(&seed) - 1, phi = 6.2831853f * rng_unit(&seed), s = sqrtf(1 - z * z);
        for (int a = 0; a < 3; a++)
            r->org[a] = lo[a] + (hi[a] - lo[a]) * rng_unit(&seed);
        r->dir[0] = s * cosf(phi);
        r->dir[1] = s * sinf(phi);
        r->dir[2] = z;
        r->tmin = 0.0f;
        r->tmax = INFINITY;
    }
    return set;
}

/* ---- Prism's side --------------------------------------------------------- */

static double min_of(const double *v, int n)
{
    double m = v[0];
    for (int i = 1; i < n; i++)
        m = v[i] < m ? v[i] : m;
    return m;
}

/* The builds, Prism's and Embree's in turn, `repeat` times each; best times.
 * Returns Prism's last BVH. */
static prism_bvh *builds(const bvh_bench_scene *s, const options *o, bvh_bench_embree *em,
                         double *prism_s)
{
    double tp[32] = {0}, td[32] = {0}, tb[32] = {0};
    int reps = o->repeat > 32 ? 32 : o->repeat < 1 ? 1 : o->repeat;
    prism_bvh *bvh = NULL;
    prism_bvh_desc d = {
        .max_leaf_size = o->leaf, .quality = o->quality, .threads = o->threads, .order = o->order};
    for (int i = 0; i < reps; i++) {
        prism_bvh_free(bvh);
        bvh = NULL;
        prism_bench_settle(); /* the other side's spinning threads */
        double t0 = prism_bench_now();
        if (prism_bvh_build(s->pos, s->nv, s->idx, s->nt, &d, &bvh) != PRISM_SUCCESS)
            return NULL;
        tp[i] = prism_bench_now() - t0;
        if (em->available) {
            prism_bench_settle();
            td[i] = bvh_bench_embree_build_default(em);
            prism_bench_settle();
            tb[i] = bvh_bench_embree_build_binary(em, i == reps - 1);
        }
    }
    *prism_s = min_of(tp, reps);
    if (em->available) {
        em->default_build_s = min_of(td, reps);
        em->binary_build_s = min_of(tb, reps);
    }
    return bvh;
}

static void prism_trace(const prism_bvh *bvh, const bvh_bench_rays *set, int threads,
                        bvh_bench_trace *tr)
{
    tr->ids = malloc(set->n * sizeof *tr->ids);
    size_t hits = 0;
    double t0 = bvh_bench_clock(threads);
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1024) reduction(+ : hits)
    for (long i = 0; i < (long)set->n; i++) {
        prism_hit h;
        bool hit = prism_bvh_intersect(bvh, &set->rays[i], &h);
        hits += hit;
        if (tr->ids)
            tr->ids[i] = h.triangle;
    }
    double t = bvh_bench_clock(threads) - t0;
    tr->rays_per_second = t > 0 ? (double)set->n / t : 0.0;
    tr->hits = hits;
}

static double agreement(const bvh_bench_trace *a, const bvh_bench_trace *b, size_t n)
{
    if (!a->ids || !b->ids || n == 0)
        return 0.0;
    size_t same = 0;
    for (size_t i = 0; i < n; i++)
        same += a->ids[i] == b->ids[i];
    return (double)same / (double)n;
}

/* ---- report --------------------------------------------------------------- */

typedef struct report {
    const options *o;
    const bvh_bench_scene *s;
    const prism_bvh *bvh;
    double build_s;
    bvh_bench_trace trace[2];
    const bvh_bench_rays *sets;
    const bvh_bench_embree *em;
    const char *em_error;
} report;

static double ratio(double a, double b)
{
    return b > 0 ? a / b : 0.0;
}

static void print_table(const report *r)
{
    const prism_bvh_stats *st = &r->bvh->stats;
    const bvh_bench_embree *em = r->em;
    printf("prism-bench bvh: %s: %zu triangles, %zu vertices; build threads %d, ray threads %d, "
           "best of %d builds\n",
           r->o->file, r->s->nt, r->s->nv, r->o->threads, r->o->ray_threads, r->o->repeat);
    printf("Prism BVH: %zu nodes, %zu leaves, depth %u, %.2f tri/leaf (max %u), leaf limit %u, "
           "%s order\n",
           st->nodes, st->leaves, st->max_depth, st->mean_leaf_triangles, st->max_leaf_triangles,
           r->o->leaf, r->o->order == PRISM_BVH_ORDER_DFS ? "dfs" : "bfs");
    printf("  bytes: nodes %zu, vertices %zu, triangles %zu, ids %zu\n", st->node_bytes,
           st->vertex_bytes, st->triangle_bytes, st->id_bytes);
    if (!em->available) {
        printf("Embree 3: not measured: %s\n", r->em_error);
        printf("%-34s %14.4f\n", "build seconds (Prism)", r->build_s);
        printf("%-34s %14.3f\n", "SAH cost (Prism)", st->sah_cost);
        for (int k = 0; k < 2; k++)
            printf("%-27s %6s %14.0f\n", "closest-hit rays/s (Prism)", r->sets[k].name,
                   r->trace[k].rays_per_second);
        return;
    }
    printf(
        "Embree %s (the default scene: rtcCommitScene; readable tree: rtcBuildBVH, 2-wide, MEDIUM)\n",
        em->version);
    printf("%-36s %14s %14s %10s\n", "", "Prism", "Embree", "Prism/Embree");
    printf("%-36s %14.4f %14.4f %10.3f\n", "build s (default scene)", r->build_s,
           em->default_build_s, ratio(r->build_s, em->default_build_s));
    printf("%-36s %14.4f %14.4f %10.3f\n", "build s (rtcBuildBVH, 2-wide tree)", r->build_s,
           em->binary_build_s, ratio(r->build_s, em->binary_build_s));
    printf("%-36s %14.3f %14.3f %10.3f\n", "SAH cost (Prism's formula)", st->sah_cost,
           em->binary_sah, ratio(st->sah_cost, em->binary_sah));
    printf("%-36s %14s %14s\n", "SAH cost of the default scene's tree", "",
           "not readable"); /* BVH4/8 internals are not exposed by Embree 3's API */
    printf("%-36s %14zu %14zu\n", "nodes / leaves (2-wide trees)", st->nodes, em->binary_nodes);
    for (int k = 0; k < 2; k++) {
        char label[64];
        snprintf(label, sizeof label, "rays/s, %s (%zu rays)", r->sets[k].name, r->sets[k].n);
        printf("%-36s %14.0f %14.0f %10.3f\n", label, r->trace[k].rays_per_second,
               em->trace[k].rays_per_second,
               ratio(r->trace[k].rays_per_second, em->trace[k].rays_per_second));
        printf("%-36s %14zu %14zu   same triangle on %.4f of rays\n", "  hits", r->trace[k].hits,
               em->trace[k].hits, agreement(&r->trace[k], &em->trace[k], r->sets[k].n));
    }
}

/* The file name as a JSON string body: quotes, backslashes and control
 * characters escaped. */
static void json_string(const char *text)
{
    for (const unsigned char *c = (const unsigned char *)text; *c; c++) {
        if (*c == '"' || *c == '\\')
            printf("\\%c", *c);
        else if (*c < 0x20)
            printf("\\u%04x", *c);
        else
            putchar(*c);
    }
}

static void print_json(const report *r)
{
    const prism_bvh_stats *st = &r->bvh->stats;
    const bvh_bench_embree *em = r->em;
    printf("{\"file\":\"");
    json_string(r->o->file);
    printf("\",\"triangles\":%zu,\"vertices\":%zu,\"threads\":%d,\"ray_threads\":%d,"
           "\"prism\":{\"build_s\":%.6f,\"sah\":%.4f,\"nodes\":%zu,\"leaves\":%zu,\"max_depth\":%u,"
           "\"node_bytes\":%zu,\"camera_rays_per_s\":%.0f,\"random_rays_per_s\":%.0f},",
           r->s->nt, r->s->nv, r->o->threads, r->o->ray_threads, r->build_s, st->sah_cost,
           st->nodes, st->leaves, st->max_depth, st->node_bytes, r->trace[0].rays_per_second,
           r->trace[1].rays_per_second);
    if (!em->available) {
        printf("\"embree\":null,\"embree_error\":\"%s\"}\n", r->em_error);
        return;
    }
    printf(
        "\"embree\":{\"version\":\"%s\",\"default_build_s\":%.6f,\"binary_build_s\":%.6f,"
        "\"binary_sah\":%.4f,\"default_sah\":null,\"camera_rays_per_s\":%.0f,"
        "\"random_rays_per_s\":%.0f},\"ratios\":{\"build_vs_default\":%.4f,\"sah_vs_binary\":%.4f,"
        "\"camera_rays\":%.4f,\"random_rays\":%.4f},\"agreement\":{\"camera\":%.5f,\"random\":%.5f}}\n",
        em->version, em->default_build_s, em->binary_build_s, em->binary_sah,
        em->trace[0].rays_per_second, em->trace[1].rays_per_second,
        ratio(r->build_s, em->default_build_s), ratio(st->sah_cost, em->binary_sah),
        ratio(r->trace[0].rays_per_second, em->trace[0].rays_per_second),
        ratio(r->trace[1].rays_per_second, em->trace[1].rays_per_second),
        agreement(&r->trace[0], &em->trace[0], r->sets[0].n),
        agreement(&r->trace[1], &em->trace[1], r->sets[1].n));
}

static int run(const options *o, const bvh_bench_scene *s)
{
    report r = {.o = o, .s = s};
    bvh_bench_embree em;
    char err[256] = "";
    bvh_bench_embree_open(s, o->threads, o->leaf, &em, err, sizeof err);
    r.em = &em;
    r.em_error = err;
    prism_bvh *bvh = builds(s, o, &em, &r.build_s);
    if (!bvh) {
        fprintf(stderr, "prism-bench bvh: the build failed\n");
        bvh_bench_embree_close(&em);
        return 1;
    }
    bvh_bench_rays sets[2] = {camera_rays(bvh, o->width, o->height),
                              random_rays(bvh, o->random_rays)};
    r.bvh = bvh;
    r.sets = sets;
    int status = 1;
    if (sets[0].rays && sets[1].rays) {
        for (int k = 0; k < 2; k++) {
            prism_trace(bvh, &sets[k], o->ray_threads, &r.trace[k]);
            if (em.available)
                bvh_bench_embree_trace(&em, &sets[k], o->ray_threads, &em.trace[k]);
        }
        (o->json ? print_json : print_table)(&r);
        status = 0;
    }
    for (int k = 0; k < 2; k++) {
        free(sets[k].rays);
        free(r.trace[k].ids);
    }
    bvh_bench_embree_close(&em);
    prism_bvh_free(bvh);
    return status;
}

int prism_bench_bvh(int argc, char **argv)
{
    options o = {0};
    if (prism_bench_wants_help(argc, argv)) {
        usage(stdout);
        return 0;
    }
    if (!parse(argc, argv, &o)) {
        usage(stderr);
        return 2;
    }
    owned_scene sc;
    if (!get_scene(o.file, o.unit, &sc)) {
        free_scene(&sc);
        return 1;
    }
    int status = run(&o, &sc.s);
    free_scene(&sc);
    return status;
}
