/* The render kernel's closest-hit traversal on the GPU (CUDA only): the
 * walk of prism/device/traverse.h (near child first, far child deferred with its
 * entry distance, skip one triangle) with what made it cheaper on the GPU
 * as compile-time options, so engine/cuda/kernels.cu can instantiate and
 * compare them (prism-bench render --variants; the README has the figures):
 *   BOX   1: slab min/max as fminf/fmaxf (one instruction each instead of a
 *         compare and a select); used
 *         only for rays whose reciprocal direction is finite, where no slab
 *         product is NaN and the result is the compare-selects' exactly;
 *         the kernel gives other rays BOX 0.
 *   LOOP  0: a node or a leaf per step; 1: inner nodes until the lane holds
 *         a leaf, then the leaf ("while-while", Aila and Laine 2009: the
 *         lanes of a warp test triangles together: most of a gain where
 *         rays cross many leaves, as from inside the detector).
 * The hits are prism_trace_closest's: the same boxes entered, the same
 * triangle test (less the barycentrics, which shading does not use), and
 * among triangles hit at exactly the same t the smallest leaf-order index
 * wins in both, whatever order LOOP tests them in.
 * Tried and dropped (measured): 8-byte stack entries (no gain: the stack
 * is not the limit), the speculative while-while (a warp vote per step
 * cost more than it saved), slab distances as one fma each (a small gain,
 * but outside the robust traversal's error bound), tighter register caps
 * for more occupancy (48 and 40 registers: the spills cost what the
 * occupancy gave). */
#ifndef PRISM_KERNELS_TRAVERSE_GPU_H
#define PRISM_KERNELS_TRAVERSE_GPU_H

#if defined(__CUDACC__)

#include "traverse.h"
#include "bvh_wide_traverse.h"

/* Node i's two halves: (lo, first) and (hi, count). */
__device__ __forceinline__ const float4 *prism_gpu_node(const prism_geometry_view &g, uint32_t i)
{
    return (const float4 *)(i < g.nodes_split ? g.nodes_head + i
                                              : g.nodes_tail + (i - g.nodes_split));
}

/* Whether the ray's reciprocal direction is finite on every axis, so that
 * no slab product is NaN and BOX 1's fminf/fmaxf slabs give the
 * compare-selects' answer exactly. */
__device__ __forceinline__ bool prism_gpu_slabs_finite(const prism_ray_pre &pre)
{
    const uint32_t e = 0x7F800000u;
    return (__float_as_uint(pre.inv[0]) & e) != e && (__float_as_uint(pre.inv[1]) & e) != e &&
           (__float_as_uint(pre.inv[2]) & e) != e;
}

/* prism_ray_box on a node given as its two halves. */
template <int BOX>
__device__ __forceinline__ bool prism_gpu_box(const prism_ray_pre &p, float4 a, float4 b,
                                              float tmin, float tmax, float &t_near)
{
    const float tfar = tmax * PRISM_BVH_BOX_WIDEN;
    const float lx = (a.x - p.org[0]) * p.inv_lo[0], hx = (b.x - p.org[0]) * p.inv_hi[0];
    const float ly = (a.y - p.org[1]) * p.inv_lo[1], hy = (b.y - p.org[1]) * p.inv_hi[1];
    const float lz = (a.z - p.org[2]) * p.inv_lo[2], hz = (b.z - p.org[2]) * p.inv_hi[2];
    float tn, tf;
    if (BOX == 1) {
        tn = fmaxf(fmaxf(fminf(lx, hx), fminf(ly, hy)), fmaxf(fminf(lz, hz), tmin));
        tf = fminf(fminf(fmaxf(lx, hx), fmaxf(ly, hy)), fminf(fmaxf(lz, hz), tfar));
    } else {
        const float lo[3] = {lx, ly, lz}, hi[3] = {hx, hy, hz};
        tn = tmin;
        tf = tfar;
        for (int k = 0; k < 3; k++) { /* NaN behaviour as prism_ray_box's */
            const float n = hi[k] < lo[k] ? hi[k] : lo[k];
            const float f = lo[k] > hi[k] ? lo[k] : hi[k];
            tn = n > tn ? n : tn;
            tf = f < tf ? f : tf;
        }
    }
    t_near = tn;
    return tn <= tf;
}

/* prism_ray_triangle without the barycentrics: t of a hit in [tmin, tmax]. */
__device__ __forceinline__ bool prism_gpu_triangle(const prism_geometry_view &g,
                                                   const prism_ray_pre &p, uint32_t i, float tmin,
                                                   float tmax, float &t_out)
{
    const uint32_t *tri = g.triangles + 3u * (size_t)i;
    const float *a = g.vertices + 3u * (size_t)__ldg(tri);
    const float *b = g.vertices + 3u * (size_t)__ldg(tri + 1);
    const float *c = g.vertices + 3u * (size_t)__ldg(tri + 2);
    const int kx = p.kx, ky = p.ky, kz = p.kz;
    const float az = __ldg(a + kz) - p.oz, bz = __ldg(b + kz) - p.oz, cz = __ldg(c + kz) - p.oz;
    const float ax = (__ldg(a + kx) - p.ox) - prism__mul(p.sx, az);
    const float ay = (__ldg(a + ky) - p.oy) - prism__mul(p.sy, az);
    const float bx = (__ldg(b + kx) - p.ox) - prism__mul(p.sx, bz);
    const float by = (__ldg(b + ky) - p.oy) - prism__mul(p.sy, bz);
    const float cx = (__ldg(c + kx) - p.ox) - prism__mul(p.sx, cz);
    const float cy = (__ldg(c + ky) - p.oy) - prism__mul(p.sy, cz);
    float U = prism__mul(cx, by) - prism__mul(cy, bx); /* unfused, as on the host */
    float V = prism__mul(ax, cy) - prism__mul(ay, cx);
    float W = prism__mul(bx, ay) - prism__mul(by, ax);
    if (U == 0.0f || V == 0.0f || W == 0.0f) {
        U = prism__edge_double(cx, cy, bx, by, U);
        V = prism__edge_double(ax, ay, cx, cy, V);
        W = prism__edge_double(bx, by, ax, ay, W);
    }
    if ((U < 0.0f || V < 0.0f || W < 0.0f) && (U > 0.0f || V > 0.0f || W > 0.0f))
        return false;
    const float det = U + V + W;
    if (det == 0.0f)
        return false;
    const float T = (prism__mul(U, az) + prism__mul(V, bz) + prism__mul(W, cz)) * p.sz;
    const float t = T * (1.0f / det);
    if (!(t >= tmin && t <= tmax))
        return false;
    t_out = t;
    return true;
}

/* The deferred far child: its (first, count), so popping it reads no node,
 * and its entry distance, so it is skipped once a closer hit is found. */
struct prism_gpu_entry {
    uint32_t first, count;
    float t;
};

/* An inner node's children: the nearer one hit becomes (first, count), the
 * other, if also hit, is pushed. Returns whether either was hit. */
template <int BOX>
__device__ __forceinline__ bool prism_gpu_inner(const prism_geometry_view &g,
                                                const prism_ray_pre &p, float tmax, uint32_t &first,
                                                uint32_t &count, prism_gpu_entry *stack, int &sp)
{
    const float4 *c0 = prism_gpu_node(g, first);
    const float4 *c1 = first + 1 == g.nodes_split ? (const float4 *)g.nodes_tail : c0 + 2;
    const float4 a0 = __ldg(c0), b0 = __ldg(c0 + 1), a1 = __ldg(c1), b1 = __ldg(c1 + 1);
    float t0, t1;
    const bool h0 = prism_gpu_box<BOX>(p, a0, b0, p.tmin, tmax, t0);
    const bool h1 = prism_gpu_box<BOX>(p, a1, b1, p.tmin, tmax, t1);
    if (!(h0 || h1))
        return false;
    const bool swap = !h0 || (h1 && t1 < t0);
    if (h0 && h1) {
        prism_gpu_entry *e = &stack[sp++];
        e->first = __float_as_uint(swap ? a0.w : a1.w);
        e->count = __float_as_uint(swap ? b0.w : b1.w);
        e->t = swap ? t0 : t1;
    }
    first = __float_as_uint(swap ? a1.w : a0.w);
    count = __float_as_uint(swap ? b1.w : b0.w);
    return true;
}

/* The nearest deferred node not beyond tmax into (first, count); false
 * when there is none. */
__device__ __forceinline__ bool prism_gpu_pop(prism_gpu_entry *stack, int &sp, float tmax,
                                              uint32_t &first, uint32_t &count)
{
    while (sp > 0) {
        const prism_gpu_entry *e = &stack[--sp];
        /* widened as the box test's far side: a box's entry distance can
         * round above the t of a triangle inside it (a ray through a
         * vertex on the box's face) */
        if (e->t <= tmax * PRISM_BVH_BOX_WIDEN) {
            first = e->first;
            count = e->count;
            return true;
        }
    }
    return false;
}

/* A leaf's triangles but `skip` against the hit so far. */
__device__ __forceinline__ void prism_gpu_leaf(const prism_geometry_view &g, const prism_ray_pre &p,
                                               uint32_t first, uint32_t count, uint32_t skip,
                                               prism_trace_hit &hit)
{
    for (uint32_t i = first; i < first + count; i++) {
        float t;
        if (i != skip && prism_gpu_triangle(g, p, i, p.tmin, hit.t, t) &&
            (t < hit.t || i < hit.index)) { /* ties: the smaller index */
            hit.t = t;
            hit.index = i;
        }
    }
}

/* Closest hit along `p` (p.tmin .. tmax) on any triangle but `skip`; the
 * hit's t and index (u, v are not computed). ROOT 1 tests the root's box
 * first (a ray from a camera outside the scene ends there); ROOT 0 does
 * not, as prism_bvh_closest_skip does not, so a leaf root's triangles are
 * tested whatever its box says (photons start inside the scene anyway). */
template <int BOX, int LOOP, int ROOT = 1>
__device__ __forceinline__ bool prism_gpu_closest(const prism_geometry_view &g,
                                                  const prism_ray_pre &p, float tmax, uint32_t skip,
                                                  prism_trace_hit &hit)
{
    hit.t = tmax;
    hit.index = PRISM_TRACE_NONE;
    hit.u = hit.v = 0.0f;
    if (g.triangle_count == 0 || g.node_count == 0)
        return false;
    const float4 *r = prism_gpu_node(g, 0);
    const float4 ra = __ldg(r), rb = __ldg(r + 1);
    float t_root;
    if ((__float_as_uint(rb.w) == 0 && __float_as_uint(ra.w) == 0) ||
        (ROOT && !prism_gpu_box<0>(p, ra, rb, p.tmin, p.tmax, t_root)))
        return false;
    prism_gpu_entry stack[PRISM_BVH_STACK];
    int sp = 0;
    uint32_t first = __float_as_uint(ra.w), count = __float_as_uint(rb.w);
    if (LOOP == 0) {
        for (;;) {
            if (count == 0) {
                if (prism_gpu_inner<BOX>(g, p, hit.t, first, count, stack, sp))
                    continue;
            } else {
                prism_gpu_leaf(g, p, first, count, skip, hit);
            }
            if (!prism_gpu_pop(stack, sp, hit.t, first, count))
                break;
        }
    } else {
        for (;;) {
            while (count == 0)
                if (!prism_gpu_inner<BOX>(g, p, hit.t, first, count, stack, sp) &&
                    !prism_gpu_pop(stack, sp, hit.t, first, count))
                    return hit.index != PRISM_TRACE_NONE;
            prism_gpu_leaf(g, p, first, count, skip, hit);
            if (!prism_gpu_pop(stack, sp, hit.t, first, count))
                break;
        }
    }
    return hit.index != PRISM_TRACE_NONE;
}

/* prism_trace_closest's answer for a photon's ray on the tuned binary
 * walk (BOX 1 where the ray's reciprocals are finite, else BOX 0; LOOP 1),
 * barycentrics included: the walk finds the hit's t and index (the closest
 * t, ties to the smallest leaf-order index, whichever tree and order:
 * prism/device/bvh_wide_traverse.h), then the one triangle is tested again
 * by prism_ray_triangle for u and v, which it computes from the same
 * operands as the walk's t. t is the walk's. */
template <int LOOP>
__device__ __forceinline__ bool prism_gpu_trace_closest(const prism_geometry_view &g, pv3 o, pv3 d,
                                                        float tmin, float tmax, uint32_t skip,
                                                        prism_trace_hit &hit)
{
    prism_ray ray;
    pv3_store(o, ray.org);
    pv3_store(d, ray.dir);
    ray.tmin = tmin;
    ray.tmax = tmax;
    prism_ray_pre pre;
    prism_ray_prepare(&ray, &pre);
    const bool found = prism_gpu_slabs_finite(pre)
                           ? prism_gpu_closest<1, LOOP, 0>(g, pre, tmax, skip, hit)
                           : prism_gpu_closest<0, LOOP, 0>(g, pre, tmax, skip, hit);
    if (found) {
        float t;
        prism_view_triangle(&g, &pre, hit.index, -INFINITY, INFINITY, &t, &hit.u, &hit.v);
    }
    return found;
}

/* The wide walk (prism/device/bvh_wide_traverse.h) with one piece of work a
 * step, a node visit or one triangle, so a lane with a leaf of many
 * triangles does not hold the others of its warp through all of them
 * (prism_wide_closest_pre tests a node's triangles together). The same
 * hits: the same boxes against the same distances, ties to the smaller
 * index. */
__device__ __forceinline__ bool prism_gpu_wide_closest(const prism_geometry_view &g,
                                                       const prism_ray_pre &p, uint32_t skip,
                                                       prism_trace_hit &hit)
{
    hit.t = p.tmax;
    hit.index = PRISM_TRACE_NONE;
    hit.u = hit.v = 0.0f;
    if (g.triangle_count == 0 || g.wide_count == 0)
        return false;
    const uint32_t octant = prism__wide_octant(&p);
    prism__wide_entry stack[PRISM_WIDE_STACK];
    int sp = 0;
    uint32_t base = 0;
    uint32_t tris = prism__wide_visit(&g, &p, 0, hit.t, octant, stack, &sp, &base);
    for (;;) {
        if (tris) {
            const uint32_t j = prism__ctz(tris);
            tris &= tris - 1u;
            float t, u, v;
            uint32_t index;
            if (prism__wide_triangle(&g.wide_triangles[base + j], &p, p.tmin, hit.t, &index, &t, &u,
                                     &v) &&
                index != skip && (t < hit.t || index < hit.index)) {
                hit.t = t;
                hit.index = index;
            }
            continue;
        }
        uint32_t node;
        if (!prism__wide_pop(stack, &sp, octant, &node))
            break;
        tris = prism__wide_visit(&g, &p, node, hit.t, octant, stack, &sp, &base);
    }
    return hit.index != PRISM_TRACE_NONE;
}

#endif /* __CUDACC__ */
#endif
