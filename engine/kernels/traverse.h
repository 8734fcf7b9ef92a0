/* Closest hit for the kernels, built on the BVH module's traversal pieces
 * (geometry/bvh_traverse.h: robust box test, watertight triangle test,
 * near-first stack walk) with one addition photons need: a triangle to
 * skip, the one the photon stands on, so it never hits the surface it
 * starts from or just reflected off, and (on the GPU) node loads done as
 * two 16-byte loads. The loop is prism_bvh_closest's with those two
 * changes; keep the two in step. */
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

/* Node i in two 16-byte loads through the read-only cache on the device
 * (the node arrays are 16-byte aligned in every kind of memory and the
 * split lands on a whole node); the plain struct read on the host. */
PRISM_HD prism_bvh_node prism_trace_node(const prism_geometry_view *g, uint32_t i)
{
#if defined(__CUDA_ARCH__)
    const prism_bvh_node *n =
        i < g->nodes_split ? g->nodes_head + i : g->nodes_tail + (i - g->nodes_split);
    const float4 a = __ldg((const float4 *)n), b = __ldg((const float4 *)n + 1);
    prism_bvh_node r;
    r.lo[0] = a.x;
    r.lo[1] = a.y;
    r.lo[2] = a.z;
    r.first = __float_as_uint(a.w);
    r.hi[0] = b.x;
    r.hi[1] = b.y;
    r.hi[2] = b.z;
    r.count = __float_as_uint(b.w);
    return r;
#else
    return prism_view_node(g, i);
#endif
}

/* The next node: on the host the BVH module's prism__trav_next (SSE box
 * pairs); on the device the same steps with the node loads above. */
PRISM_HD int prism_trace_next(const prism_geometry_view *g, const prism_ray_pre *p,
                              const prism__box_ray *br, uint32_t *first, uint32_t *count,
                              float tmax, prism__trav_entry *stack, int *sp)
{
#if defined(__CUDA_ARCH__)
    if (*count == 0) {
        const prism_bvh_node c0 = prism_trace_node(g, *first);
        const prism_bvh_node c1 = prism_trace_node(g, *first + 1);
        float t0, t1;
        const int h = prism__box2(br, p, &c0, &c1, p->tmin, tmax, &t0, &t1);
        if (h) {
            const int swap = (h == 2) | ((h == 3) & (t1 < t0));
            prism__trav_entry *e = &stack[*sp];
            e->first = swap ? c0.first : c1.first;
            e->count = swap ? c0.count : c1.count;
            e->t = swap ? t0 : t1;
            *sp += h == 3;
            *first = swap ? c1.first : c0.first;
            *count = swap ? c1.count : c0.count;
            return 1;
        }
    }
    while (*sp > 0) {
        const prism__trav_entry *e = &stack[--(*sp)];
        if (e->t <= tmax) {
            *first = e->first;
            *count = e->count;
            return 1;
        }
    }
    return 0;
#else
    return prism__trav_next(g, p, br, first, count, tmax, stack, sp);
#endif
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
    const prism_bvh_node root = prism_trace_node(g, 0);
    if (prism_bvh_empty_root(&root) || !prism_ray_box(&p, &root, p.tmin, p.tmax, &t_root))
        return 0;
    prism__trav_entry stack[PRISM_BVH_STACK];
    int sp = 0;
    prism__box_ray br;
    prism__box_ray_init(&br, &p);
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
    } while (prism_trace_next(g, &p, &br, &first, &count, hit->t, stack, &sp));
    return hit->index != PRISM_TRACE_NONE;
}

#endif
