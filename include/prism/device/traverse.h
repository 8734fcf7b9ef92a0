/* Closest hit for the kernels: the BVH module's walk (geometry/
 * prism/device/bvh_traverse.h: robust box test, watertight triangle test, near-first
 * stack, read-only-cache node loads on the device) with the triangle a
 * photon stands on skipped, so it never hits the surface it starts from or
 * just reflected off. The render's GPU path has its own loop
 * (traverse_gpu.h) that must find the same hits. */
#ifndef PRISM_KERNELS_TRAVERSE_H
#define PRISM_KERNELS_TRAVERSE_H

#include <stddef.h>
#include <stdint.h>

#include "bvh_traverse.h"
#include "bvh_wide_traverse.h"
#include "vec.h"

#define PRISM_TRACE_NONE 0xFFFFFFFFu
PRISM_STATIC_ASSERT(PRISM_TRACE_NONE == PRISM_BVH_MISS, "a miss is a miss on both sides");

typedef struct prism_trace_hit {
    float t;
    uint32_t index; /* triangle in leaf order; PRISM_TRACE_NONE when missed */
    float u, v;
} prism_trace_hit;

PRISM_HD pv3 prism_trace_vertex(const prism_geometry_view *g, uint32_t v)
{
    return pv3_load(g->vertices + 3u * (size_t)v);
}

/* Closest triangle along o + t d, t in [tmin, tmax], other than `skip` (the
 * surface a photon stands on). Returns whether one was hit. The walk is the
 * BVH module's, on both backends: the wide tree's where the view has one
 * (the same hits), else the binary one's. */
PRISM_HD int prism_trace_closest(const prism_geometry_view *g, pv3 o, pv3 d, float tmin, float tmax,
                                 uint32_t skip, prism_trace_hit *hit)
{
    prism_ray ray;
    pv3_store(o, ray.org);
    pv3_store(d, ray.dir);
    ray.tmin = tmin;
    ray.tmax = tmax;
    prism_hit h;
    const int found = g->wide_count ? prism_wide_closest_skip(g, &ray, skip, &h)
                                    : prism_bvh_closest_skip(g, &ray, skip, &h);
    hit->t = h.t;
    hit->index = h.triangle; /* PRISM_BVH_MISS == PRISM_TRACE_NONE */
    hit->u = h.u;
    hit->v = h.v;
    return found;
}

#endif
