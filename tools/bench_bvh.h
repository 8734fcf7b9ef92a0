/* Shared pieces of `prism-bench bvh`: the scene and rays both sides run on,
 * and the Embree 3 half (bench_bvh_embree.c; stubs when Embree is absent). */
#ifndef PRISM_BENCH_BVH_H
#define PRISM_BENCH_BVH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "prism/bvh.h"

typedef struct bvh_bench_scene {
    const float *pos;
    size_t nv;
    const uint32_t *idx;
    size_t nt;
} bvh_bench_scene;

typedef struct bvh_bench_rays {
    const char *name;
    prism_ray *rays;
    size_t n;
} bvh_bench_rays;

/* Per ray set: rays per second and what was hit (scene triangle ids, or
 * PRISM_BVH_MISS), so the two sides can be compared ray by ray. */
typedef struct bvh_bench_trace {
    double rays_per_second;
    size_t hits;
    uint32_t *ids;
} bvh_bench_trace;

typedef struct bvh_bench_embree {
    bool available;
    char version[64];
    double default_build_s; /* rtcCommitScene, default (MEDIUM) quality: best of the repeats */
    double binary_build_s;  /* rtcBuildBVH, 2-wide SAH tree we can read: best of the repeats */
    double binary_sah;      /* that tree, costed by prism_bvh_sah_cost */
    size_t binary_nodes, binary_leaves;
    bvh_bench_trace trace[2];     /* camera, random; rtcIntersect1 on the default scene */
    void *device, *scene, *prims; /* Embree's objects between the calls below */
    const bvh_bench_scene *s;
    unsigned leaf;
} bvh_bench_embree;

/* Embree's side, one step at a time so the caller can interleave Embree's
 * builds with Prism's (a shared machine's load then falls on both alike).
 * open: false with a message in `err` (no Embree in this build, no device). */
bool bvh_bench_embree_open(const bvh_bench_scene *s, int threads, unsigned leaf,
                           bvh_bench_embree *out, char *err, size_t err_size);
/* One default scene build (kept for tracing); returns seconds. */
double bvh_bench_embree_build_default(bvh_bench_embree *e);
/* One rtcBuildBVH build; with `cost`, fills binary_sah/nodes/leaves. */
double bvh_bench_embree_build_binary(bvh_bench_embree *e, bool cost);
/* rtcIntersect1 over a ray set on the last default scene. */
void bvh_bench_embree_trace(bvh_bench_embree *e, const bvh_bench_rays *set, int threads,
                            bvh_bench_trace *out);
void bvh_bench_embree_close(bvh_bench_embree *e);

/* The clock ray rates are measured with: with one thread, that thread's CPU
 * time (a shared machine's other load then does not count against either
 * side); with more, wall time. */
double bvh_bench_clock(int threads);

#endif
