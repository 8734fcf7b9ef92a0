/* Closest hit for the kernels, built on the BVH module's traversal pieces
 * (geometry/bvh_traverse.h: robust box test, watertight triangle test,
 * near-first stack walk) with one addition photons need: a triangle to
 * skip, the one the photon stands on, so it never hits the surface it
 * starts from or just reflected off. The loop is prism_bvh_closest's with
 * that one test added; keep the two in step. */
#ifndef PRISM_KERNELS_TRAVERSE_H
#define PRISM_KERNELS_TRAVERSE_H

#include <stddef.h>
#include <stdint.h>

#include "bvh_traverse.h"
#include "vec.h"

#define PRISM_TRACE_NONE 0xFFFFFFFFu

typedef struct prism_trace_hit {
    float t;
    uint32_t index; /* triangle in leaf order; PRISM_TRACE_NONE when missed */
    float u, v;
} prism_trace_hit;

PRISM_HD pv3 prism_trace_vertex(const prism_geometry_view *g, uint32_t v)
{
    return pv3_load(g->vertices + 3u * (size_t)v);
}

/* Closest triangle along o + t d, t in [tmin, tmax], other than `skip`.
 * Returns whether one was hit. */
PRISM_HD int prism_trace_closest(const prism_geometry_view *g, pv3 o, pv3 d, float tmin,
                                 float tmax, uint32_t skip, prism_trace_hit *hit)
{
    prism_ray ray;
    pv3_store(o, ray.org);
    pv3_store(d, ray.dir);
    ray.tmin = tmin;
    ray.tmax = tmax;
    prism_ray_pre p;
    prism_ray_prepare(&ray, &p);
    hit->t = tmax;
    hit->index = PRISM_TRACE_NONE;
    hit->u = hit->v = 0.0f;
    float t_root;
    if (g->triangle_count == 0 || g->node_count == 0)
        return 0;
    const prism_bvh_node root = prism_view_node(g, 0);
    if (prism_bvh_empty_root(&root) || !prism_ray_box(&p, &root, p.tmin, p.tmax, &t_root))
        return 0;
    prism__trav_entry stack[PRISM_BVH_STACK];
    int sp = 0;
    uint32_t first = root.first, count = root.count;
    do {
        for (uint32_t i = first; i < first + count; i++) {
            float t, u, v;
            if (i != skip && prism_view_triangle(g, &p, i, p.tmin, hit->t, &t, &u, &v)) {
                hit->t = t;
                hit->index = i;
                hit->u = u;
                hit->v = v;
            }
        }
    } while (prism__trav_next(g, &p, &first, &count, hit->t, stack, &sp));
    return hit->index != PRISM_TRACE_NONE;
}

#endif
