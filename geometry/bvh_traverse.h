/* Stack-based BVH traversal, closest hit and any hit, over the arrays a
 * prism_geometry_view points at. Shared by the CPU reference queries
 * (geometry/bvh_query.c) and the CUDA kernels: plain C, PRISM_HD, no libc.
 *
 * Both walk the tree near child first and keep the far child on a stack of
 * PRISM_BVH_STACK entries together with its entry distance, so a popped node
 * that lies beyond the closest hit found since is skipped unread. The stack
 * cannot overflow: the builder keeps leaves at depth <= PRISM_BVH_MAX_DEPTH
 * and at most one entry is pushed per inner node on the path.
 *
 * Box tests are robust: the far distance of each box is widened by
 * 1 + 2*gamma(3) (Ize, "Robust BVH Ray Traversal", JCGT 2013), so rounding in
 * the slab test cannot cull a box that a triangle test would hit (a ray
 * grazing a box face or edge, a flat box holding one axis-aligned triangle).
 * Zero direction components give infinite reciprocals; where a ray runs
 * exactly in a slab's plane the product is 0 * inf = NaN, which the min/max
 * below ignore (a NaN compares false, so the old bound is kept), so the ray
 * counts as inside that slab, as it is. Nothing loops on NaN.
 *
 * Results are leaf-order triangle indices: map them to scene triangles with
 * view->triangle_info[i].id (or prism_bvh.triangle_ids[i] on the CPU). */
#ifndef PRISM_BVH_TRAVERSE_H
#define PRISM_BVH_TRAVERSE_H

#include <stdint.h>

#include "geometry_view.h"
#include "prism_hd.h"
#include "ray_triangle.h"

#define PRISM_BVH_STACK PRISM_BVH_MAX_DEPTH

/* 1 + 2 * gamma(3), gamma(n) = n*eps/(1 - n*eps), eps = 2^-24. */
#define PRISM_BVH_BOX_WIDEN 1.0000003576279f

/* Node i, wherever its part of the array lives. */
PRISM_HD prism_bvh_node prism_view_node(const prism_geometry_view *g, uint32_t i)
{
    return i < g->nodes_split ? g->nodes_head[i] : g->nodes_tail[i - g->nodes_split];
}

/* Slab test of `n`'s box against the ray over [tmin, tmax]. Returns whether
 * it is hit, and the entry distance in *t_near. */
PRISM_HD int prism_ray_box(const prism_ray_pre *p, const prism_bvh_node *n, float tmin, float tmax,
                           float *t_near)
{
    float tn = tmin, tf = tmax;
    for (int a = 0; a < 3; a++) {
        const float inv = p->inv[a];
        const float lo = inv < 0.0f ? n->hi[a] : n->lo[a];
        const float hi = inv < 0.0f ? n->lo[a] : n->hi[a];
        const float t0 = (lo - p->org[a]) * inv;
        const float t1 = (hi - p->org[a]) * inv * PRISM_BVH_BOX_WIDEN;
        tn = t0 > tn ? t0 : tn; /* NaN: keep tn */
        tf = t1 < tf ? t1 : tf; /* NaN: keep tf */
    }
    *t_near = tn;
    return tn <= tf;
}

/* The triangle at leaf-order index i. */
PRISM_HD int prism_view_triangle(const prism_geometry_view *g, const prism_ray_pre *p, uint32_t i,
                                 float tmin, float tmax, float *t, float *u, float *v)
{
    const uint32_t *tri = g->triangles + 3u * (uint64_t)i;
    const float *a = g->vertices + 3u * (uint64_t)tri[0];
    const float *b = g->vertices + 3u * (uint64_t)tri[1];
    const float *c = g->vertices + 3u * (uint64_t)tri[2];
    return prism_ray_triangle(p, a, b, c, tmin, tmax, t, u, v);
}

/* Traversal state: the node in hand and the stack of deferred far children. */
typedef struct prism__trav_entry {
    uint32_t node;
    float t;
} prism__trav_entry;

/* Having tested inner node `n`'s children, pick the next node: the nearer
 * child hit (pushing the other if both are), else a popped entry nearer
 * than tmax. Returns 0 when the traversal is over. */
PRISM_HD int prism__trav_next(const prism_geometry_view *g, const prism_ray_pre *p,
                              prism_bvh_node *n, float tmax, prism__trav_entry *stack, int *sp)
{
    if (n->count == 0) {
        const uint32_t i0 = n->first;
        const prism_bvh_node c0 = prism_view_node(g, i0);
        const prism_bvh_node c1 = prism_view_node(g, i0 + 1);
        float t0, t1;
        const int h0 = prism_ray_box(p, &c0, p->tmin, tmax, &t0);
        const int h1 = prism_ray_box(p, &c1, p->tmin, tmax, &t1);
        if (h0 && h1) {
            const int near1 = t1 < t0;
            stack[*sp].node = near1 ? i0 : i0 + 1;
            stack[*sp].t = near1 ? t0 : t1;
            (*sp)++;
            *n = near1 ? c1 : c0;
            return 1;
        }
        if (h0 || h1) {
            *n = h0 ? c0 : c1;
            return 1;
        }
    }
    while (*sp > 0) {
        (*sp)--;
        if (stack[*sp].t <= tmax) {
            *n = prism_view_node(g, stack[*sp].node);
            return 1;
        }
    }
    return 0;
}

/* Closest hit in [ray->tmin, ray->tmax]. Returns 1 on a hit, with hit->triangle
 * the leaf-order index; on a miss returns 0, hit->triangle = PRISM_BVH_MISS
 * and hit->t = ray->tmax. */
PRISM_HD int prism_bvh_closest(const prism_geometry_view *g, const prism_ray *ray, prism_hit *hit)
{
    prism_ray_pre p;
    prism_ray_prepare(ray, &p);
    hit->t = ray->tmax;
    hit->triangle = PRISM_BVH_MISS;
    hit->u = hit->v = 0.0f;
    float t_root;
    if (g->triangle_count == 0 || g->node_count == 0)
        return 0;
    prism_bvh_node n = prism_view_node(g, 0);
    if (!prism_ray_box(&p, &n, p.tmin, p.tmax, &t_root))
        return 0;
    prism__trav_entry stack[PRISM_BVH_STACK];
    int sp = 0;
    do {
        if (n.count > 0) {
            for (uint32_t i = n.first; i < n.first + n.count; i++) {
                float t, u, v;
                if (prism_view_triangle(g, &p, i, p.tmin, hit->t, &t, &u, &v)) {
                    hit->t = t;
                    hit->triangle = i;
                    hit->u = u;
                    hit->v = v;
                }
            }
        }
    } while (prism__trav_next(g, &p, &n, hit->t, stack, &sp));
    return hit->triangle != PRISM_BVH_MISS;
}

/* Any hit in [ray->tmin, ray->tmax]: returns the leaf-order index of some hit
 * triangle, or PRISM_BVH_MISS. */
PRISM_HD uint32_t prism_bvh_any(const prism_geometry_view *g, const prism_ray *ray)
{
    prism_ray_pre p;
    prism_ray_prepare(ray, &p);
    float t_root;
    if (g->triangle_count == 0 || g->node_count == 0)
        return PRISM_BVH_MISS;
    prism_bvh_node n = prism_view_node(g, 0);
    if (!prism_ray_box(&p, &n, p.tmin, p.tmax, &t_root))
        return PRISM_BVH_MISS;
    prism__trav_entry stack[PRISM_BVH_STACK];
    int sp = 0;
    do {
        if (n.count > 0) {
            for (uint32_t i = n.first; i < n.first + n.count; i++) {
                float t, u, v;
                if (prism_view_triangle(g, &p, i, p.tmin, p.tmax, &t, &u, &v))
                    return i;
            }
        }
    } while (prism__trav_next(g, &p, &n, p.tmax, stack, &sp));
    return PRISM_BVH_MISS;
}

#endif
