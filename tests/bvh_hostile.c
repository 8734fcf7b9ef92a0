/* Hostile scenes for BVH builders (see bvh_hostile.h for the list and why
 * each one is there). Each generator knows its counts up front, so the
 * arrays are allocated once and filled without checks. */
#include "bvh_hostile.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const bvh_hostile_names[] = {"identical", "collinear", "collinear_x", "points",
                                         "huge_tiny", "extreme",   "chain",       "overlap",
                                         "plane",     "minuscule", "single",      "empty",
                                         NULL};

typedef struct scene {
    float *pos;
    uint32_t *idx;
    size_t nv, nt;
    uint64_t rng;
} scene;

static int reserve(scene *s, size_t nv, size_t nt)
{
    s->pos = nv ? malloc(nv * 3 * sizeof *s->pos) : NULL;
    s->idx = nt ? malloc(nt * 3 * sizeof *s->idx) : NULL;
    return (!nv || s->pos) && (!nt || s->idx);
}

/* [0, 1), xorshift64: the same scenes on every platform. */
static double uniform(scene *s)
{
    s->rng ^= s->rng << 13;
    s->rng ^= s->rng >> 7;
    s->rng ^= s->rng << 17;
    return (double)(s->rng >> 11) * (1.0 / 9007199254740992.0);
}

static double range(scene *s, double lo, double hi)
{
    return lo + (hi - lo) * uniform(s);
}

/* Log-uniform in [lo, hi]: every scale of the interval equally likely. */
static double log_range(scene *s, double lo, double hi)
{
    return lo * pow(hi / lo, uniform(s));
}

static uint32_t vertex(scene *s, double x, double y, double z)
{
    float *p = s->pos + 3 * s->nv;
    p[0] = (float)x;
    p[1] = (float)y;
    p[2] = (float)z;
    return (uint32_t)s->nv++;
}

static void triangle(scene *s, uint32_t a, uint32_t b, uint32_t c)
{
    uint32_t *t = s->idx + 3 * s->nt++;
    t[0] = a;
    t[1] = b;
    t[2] = c;
}

/* A triangle of three vertices at c + random offsets of up to `size` per axis. */
static void blob(scene *s, const double c[3], double size)
{
    uint32_t v[3];
    for (int k = 0; k < 3; k++)
        v[k] = vertex(s, c[0] + range(s, -size, size), c[1] + range(s, -size, size),
                      c[2] + range(s, -size, size));
    triangle(s, v[0], v[1], v[2]);
}

static int identical(scene *s)
{
    enum { N = 100000 };
    if (!reserve(s, 3, N))
        return 0;
    vertex(s, 0.1, 0.2, 0.3);
    vertex(s, 1.1, 0.25, 0.35);
    vertex(s, 0.3, 0.9, 0.6);
    for (size_t i = 0; i < N; i++)
        triangle(s, 0, 1, 2);
    return 1;
}

/* Points (k, 2k, 4k) / 1024 for integer k: exact in float, so the vertices
 * are on the line to the last bit, not merely close to it. Each triangle
 * spans up to 0.1 m of the 10 m line (the "overlap" scene is the one
 * where everything overlaps). */
static int collinear(scene *s)
{
    enum { N = 100000 };
    if (!reserve(s, 3 * N, N))
        return 0;
    for (size_t i = 0; i < N; i++) {
        uint32_t v[3];
        const double k0 = floor(range(s, 0.0, 10240.0));
        for (int k = 0; k < 3; k++) {
            double x = (k0 + floor(range(s, 0.0, 100.0))) / 1024.0;
            v[k] = vertex(s, x, 2.0 * x, 4.0 * x);
        }
        triangle(s, v[0], v[1], v[2]);
    }
    return 1;
}

static int collinear_x(scene *s)
{
    enum { N = 100000 };
    if (!reserve(s, 3 * N, N))
        return 0;
    for (size_t i = 0; i < N; i++) {
        double x = range(s, -5.0, 5.0);
        uint32_t a = vertex(s, x, 0.5, 0.5), b = vertex(s, x + range(s, 0.0, 0.1), 0.5, 0.5),
                 c = vertex(s, x + range(s, -0.1, 0.1), 0.5, 0.5);
        triangle(s, a, b, c);
    }
    return 1;
}

/* Half the points are one vertex used thrice, half three vertices at the
 * same place: a builder may treat the two differently. */
static int points(scene *s)
{
    enum { N = 100000 };
    if (!reserve(s, 2 * N, N)) /* N/2 points of one vertex, N/2 of three */
        return 0;
    for (size_t i = 0; i < N; i++) {
        double x = range(s, -1, 1), y = range(s, -1, 1), z = range(s, -1, 1);
        if (i % 2) {
            uint32_t a = vertex(s, x, y, z);
            triangle(s, a, a, a);
        } else {
            uint32_t a = vertex(s, x, y, z), b = vertex(s, x, y, z), c = vertex(s, x, y, z);
            triangle(s, a, b, c);
        }
    }
    return 1;
}

static int huge_tiny(scene *s)
{
    enum { N = 1000000 };
    if (!reserve(s, 3 + 3 * (size_t)N, 1 + (size_t)N))
        return 0;
    /* In the plane z = 0.001, through the middle of the cube. */
    triangle(s, vertex(s, -500, -500, 0.001), vertex(s, 500, -500, 0.001),
             vertex(s, 0, 500, 0.001));
    for (size_t i = 0; i < N; i++) {
        const double c[3] = {range(s, -0.005, 0.005), range(s, -0.005, 0.005),
                             range(s, -0.005, 0.005)};
        blob(s, c, 0.5e-6);
    }
    return 1;
}

/* Far triangles are 10 m .. 100 km across: at 1e7 m a float's step is 1 m,
 * so anything smaller would collapse to a point or a line there. */
static int extreme(scene *s)
{
    enum { N = 50000 };
    if (!reserve(s, 6 * (size_t)N, 2 * (size_t)N))
        return 0;
    for (size_t i = 0; i < N; i++) {
        double size = log_range(s, 10.0, 1e5), c[3];
        for (int a = 0; a < 3; a++) {
            c[a] = range(s, -1e7, 1e7);
            /* every eighth hugs a face of the +-1e7 cube */
            if (i % 8 == 0 && a == (int)(i / 8 % 3))
                c[a] = (i / 24) % 2 ? 1e7 - size : -1e7 + size;
        }
        blob(s, c, size);
        const double near[3] = {range(s, -1, 1), range(s, -1, 1), range(s, -1, 1)};
        blob(s, near, log_range(s, 1e-3, 1.0));
    }
    return 1;
}

/* Triangle i at x = 1e-3 * 1.001^i (to ~5e5 m), each 0.3 of its gap
 * across, tilted so rays along any axis can hit it. The top bin of a
 * binned split holds only the last few, so SAH splits peel them off one
 * level at a time. */
static int chain(scene *s)
{
    enum { N = 20000 };
    if (!reserve(s, 3 * (size_t)N, N))
        return 0;
    for (size_t i = 0; i < N; i++) {
        double x = 1e-3 * pow(1.001, (double)i), h = 0.3 * (x * 0.001);
        triangle(s, vertex(s, x, -h, -h), vertex(s, x, h, -h), vertex(s, x + h, 0, h));
    }
    return 1;
}

/* Slivers from a random point of a sphere of radius 100 m to near its
 * antipode, 1 cm wide: all cross the middle, every box overlaps. */
static int overlap(scene *s)
{
    enum { N = 20000 };
    if (!reserve(s, 3 * (size_t)N, N))
        return 0;
    for (size_t i = 0; i < N; i++) {
        double d[3], len = 0.0;
        do {
            len = 0.0;
            for (int a = 0; a < 3; a++) {
                d[a] = range(s, -1, 1);
                len += d[a] * d[a];
            }
        } while (len > 1.0 || len < 1e-4);
        len = 100.0 / sqrt(len);
        const double off = range(s, -0.3, 0.3);
        triangle(s, vertex(s, d[0] * len, d[1] * len, d[2] * len),
                 vertex(s, -d[0] * len + off, -d[1] * len, -d[2] * len),
                 vertex(s, -d[0] * len + off, -d[1] * len + 0.01, -d[2] * len + 0.01));
    }
    return 1;
}

static int plane(scene *s)
{
    enum { G = 224 }; /* 2 * 224^2 = 100352 triangles */
    if (!reserve(s, (size_t)(G + 1) * (G + 1), 2 * (size_t)G * G))
        return 0;
    for (int y = 0; y <= G; y++)
        for (int x = 0; x <= G; x++)
            vertex(s, (double)x / G, (double)y / G, 0.0);
    for (uint32_t y = 0; y < G; y++)
        for (uint32_t x = 0; x < G; x++) {
            uint32_t a = y * (G + 1) + x, b = a + 1, c = a + G + 1, d = c + 1;
            triangle(s, a, b, d);
            triangle(s, a, d, c);
        }
    return 1;
}

/* Coordinates of 1e-11 m, triangles of 1e-12 m: the ray test's distances
 * are products of three coordinate differences (~1e-36), at the edge of
 * float's normal range. (Smaller, they underflow: below ~1e-19 m nothing
 * can be hit, and in between a triangle behind the origin comes out at
 * t = -0, a hit. That is the float ray test's limit, not a builder's.) */
static int minuscule(scene *s)
{
    enum { N = 10000 };
    if (!reserve(s, 3 * (size_t)N, N))
        return 0;
    for (size_t i = 0; i < N; i++) {
        const double c[3] = {range(s, -1e-11, 1e-11), range(s, -1e-11, 1e-11),
                             range(s, -1e-11, 1e-11)};
        blob(s, c, 1e-12);
    }
    return 1;
}

static int single(scene *s)
{
    if (!reserve(s, 3, 1))
        return 0;
    triangle(s, vertex(s, 0, 0, 0), vertex(s, 1, 0, 0), vertex(s, 0, 1, 0.5));
    return 1;
}

static int empty(scene *s)
{
    (void)s;
    return 1;
}

typedef struct generator {
    const char *name;
    int (*make)(scene *s);
} generator;

static const generator generators[] = {
    {"identical", identical}, {"collinear", collinear}, {"collinear_x", collinear_x},
    {"points", points},       {"huge_tiny", huge_tiny}, {"extreme", extreme},
    {"chain", chain},         {"overlap", overlap},     {"plane", plane},
    {"minuscule", minuscule}, {"single", single},       {"empty", empty}};

int bvh_hostile_scene(const char *name, float **positions, size_t *vertex_count, uint32_t **indices,
                      size_t *triangle_count)
{
    *positions = NULL;
    *indices = NULL;
    *vertex_count = *triangle_count = 0;
    for (size_t g = 0; name && g < sizeof generators / sizeof generators[0]; g++) {
        if (strcmp(name, generators[g].name) != 0)
            continue;
        scene s = {.rng = 0x9e3779b97f4a7c15u ^ (uint64_t)(g + 1)};
        if (!generators[g].make(&s)) {
            free(s.pos);
            free(s.idx);
            return BVH_HOSTILE_OUT_OF_MEMORY;
        }
        *positions = s.pos;
        *indices = s.idx;
        *vertex_count = s.nv;
        *triangle_count = s.nt;
        return BVH_HOSTILE_OK;
    }
    return BVH_HOSTILE_UNKNOWN;
}
