/* The render kernel's closest-hit traversal on the GPU (CUDA only): the
 * walk of kernels/traverse.h (near child first, far child deferred with its
 * entry distance, skip one triangle) with the choices that make it cheaper
 * there as compile-time options, so engine/cuda_kernels.cu can instantiate
 * and compare them:
 *   PACKED  stack entries of 8 bytes (first << 7 | count, t) instead of 12;
 *           valid while node and triangle indices are below 2^25 and leaves
 *           hold at most 127 triangles (the launcher checks);
 *   BOX     1: slab min/max as fminf/fmaxf (one instruction each instead of
 *           a compare and a select); used only for rays whose reciprocal
 *           direction is finite, where no slab product is NaN and the result
 *           is the compare-selects' exactly; other rays take BOX 0.
 *           2: as 1 with each slab distance one fma (lo*inv - org*inv),
 *           cheaper but outside the robust-traversal error bound (kept for
 *           the bench's comparison only).
 *           3: as 1 for every ray, zero direction components included
 *           (bench only: is one traversal in the code worth more than the
 *           exact NaN behaviour).
 * Both leave the hits what prism_trace_closest finds: same boxes entered,
 * same triangle test (less the barycentrics, which shading does not use). */
#ifndef PRISM_KERNELS_TRAVERSE_GPU_H
#define PRISM_KERNELS_TRAVERSE_GPU_H

#if defined(__CUDACC__)

#include "traverse.h"

#define PRISM_GPU_PACK_LIMIT (1u << 25)
#define PRISM_GPU_PACK_COUNT 127u

/* Node i's two halves: (lo, first) and (hi, count). */
__device__ __forceinline__ const float4 *prism_gpu_node(const prism_geometry_view &g, uint32_t i)
{
    return (const float4 *)(i < g.nodes_split ? g.nodes_head + i
                                              : g.nodes_tail + (i - g.nodes_split));
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
    if (BOX == 2) { /* one fma a plane: cheaper, but not the robust bound */
        const float lx2 = fmaf(a.x, p.inv_lo[0], -p.org[0] * p.inv_lo[0]);
        const float hx2 = fmaf(b.x, p.inv_hi[0], -p.org[0] * p.inv_hi[0]);
        const float ly2 = fmaf(a.y, p.inv_lo[1], -p.org[1] * p.inv_lo[1]);
        const float hy2 = fmaf(b.y, p.inv_hi[1], -p.org[1] * p.inv_hi[1]);
        const float lz2 = fmaf(a.z, p.inv_lo[2], -p.org[2] * p.inv_lo[2]);
        const float hz2 = fmaf(b.z, p.inv_hi[2], -p.org[2] * p.inv_hi[2]);
        tn = fmaxf(fmaxf(fminf(lx2, hx2), fminf(ly2, hy2)), fmaxf(fminf(lz2, hz2), tmin));
        tf = fminf(fminf(fmaxf(lx2, hx2), fmaxf(ly2, hy2)), fminf(fmaxf(lz2, hz2), tfar));
    } else if (BOX == 1 || BOX == 3) {
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
                                                   const prism_ray_pre &p, uint32_t i,
                                                   float tmin, float tmax, float &t_out)
{
    const uint32_t *tri = g.triangles + 3u * (size_t)i;
    const float *a = g.vertices + 3u * (size_t)__ldg(tri);
    const float *b = g.vertices + 3u * (size_t)__ldg(tri + 1);
    const float *c = g.vertices + 3u * (size_t)__ldg(tri + 2);
    const int kx = p.kx, ky = p.ky, kz = p.kz;
    const float az = __ldg(a + kz) - p.oz, bz = __ldg(b + kz) - p.oz, cz = __ldg(c + kz) - p.oz;
    const float ax = (__ldg(a + kx) - p.ox) - p.sx * az;
    const float ay = (__ldg(a + ky) - p.oy) - p.sy * az;
    const float bx = (__ldg(b + kx) - p.ox) - p.sx * bz;
    const float by = (__ldg(b + ky) - p.oy) - p.sy * bz;
    const float cx = (__ldg(c + kx) - p.ox) - p.sx * cz;
    const float cy = (__ldg(c + ky) - p.oy) - p.sy * cz;
    float U = cx * by - cy * bx;
    float V = ax * cy - ay * cx;
    float W = bx * ay - by * ax;
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
    const float T = (U * az + V * bz + W * cz) * p.sz;
    const float t = T * (1.0f / det);
    if (!(t >= tmin && t <= tmax))
        return false;
    t_out = t;
    return true;
}

/* The deferred far child. */
template <bool PACKED> struct prism_gpu_entry {
    uint32_t first, count;
    float t;
    __device__ __forceinline__ void set(uint32_t f, uint32_t c, float tt)
    {
        first = f;
        count = c;
        t = tt;
    }
    __device__ __forceinline__ float get(uint32_t &f, uint32_t &c) const
    {
        f = first;
        c = count;
        return t;
    }
};
template <> struct prism_gpu_entry<true> {
    uint2 v; /* one 8-byte store and load */
    __device__ __forceinline__ void set(uint32_t f, uint32_t c, float tt)
    {
        v = make_uint2(f << 7 | c, __float_as_uint(tt));
    }
    __device__ __forceinline__ float get(uint32_t &f, uint32_t &c) const
    {
        const uint2 e = v;
        f = e.x >> 7;
        c = e.x & PRISM_GPU_PACK_COUNT;
        return __uint_as_float(e.y);
    }
};

/* An inner node's children: the nearer one hit becomes (first, count), the
 * other, if also hit, is pushed. Returns whether either was hit. */
template <bool PACKED, int BOX>
__device__ __forceinline__ bool prism_gpu_inner(const prism_geometry_view &g,
                                                const prism_ray_pre &p, float tmax,
                                                uint32_t &first, uint32_t &count,
                                                prism_gpu_entry<PACKED> *stack, int &sp)
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
    if (h0 && h1)
        stack[sp++].set(__float_as_uint(swap ? a0.w : a1.w), __float_as_uint(swap ? b0.w : b1.w),
                        swap ? t0 : t1);
    first = __float_as_uint(swap ? a1.w : a0.w);
    count = __float_as_uint(swap ? b1.w : b0.w);
    return true;
}

/* The nearest deferred node not beyond tmax into (first, count); false
 * when there is none. */
template <bool PACKED>
__device__ __forceinline__ bool prism_gpu_pop(prism_gpu_entry<PACKED> *stack, int &sp, float tmax,
                                              uint32_t &first, uint32_t &count)
{
    while (sp > 0) {
        uint32_t f, c;
        if (stack[--sp].get(f, c) <= tmax) {
            first = f;
            count = c;
            return true;
        }
    }
    return false;
}

/* A leaf's triangles but `skip` against the hit so far. */
__device__ __forceinline__ void prism_gpu_leaf(const prism_geometry_view &g,
                                               const prism_ray_pre &p, uint32_t first,
                                               uint32_t count, uint32_t skip,
                                               prism_trace_hit &hit)
{
    for (uint32_t i = first; i < first + count; i++) {
        float t;
        if (i != skip && prism_gpu_triangle(g, p, i, p.tmin, hit.t, t)) {
            hit.t = t;
            hit.index = i;
        }
    }
}

/* Closest hit along `p` (p.tmin .. tmax) on any triangle but `skip`; the
 * hit's t and index (u, v are not computed). LOOP picks how a warp's lanes
 * step (Aila and Laine, "Understanding the Efficiency of Ray Traversal on
 * GPUs", 2009): 0, a node or a leaf per step; 1, inner nodes until each
 * lane holds a leaf, then leaves ("while-while"); 2, as 1, a lane that
 * found a leaf going on down the tree, the leaf put off, until every lane
 * has one (speculative). */
template <bool PACKED, int BOX, int LOOP>
__device__ __forceinline__ bool prism_gpu_closest(const prism_geometry_view &g,
                                                  const prism_ray_pre &p, float tmax,
                                                  uint32_t skip, prism_trace_hit &hit)
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
        !prism_gpu_box<0>(p, ra, rb, p.tmin, p.tmax, t_root))
        return false;
    prism_gpu_entry<PACKED> stack[PRISM_BVH_STACK];
    int sp = 0;
    uint32_t first = __float_as_uint(ra.w), count = __float_as_uint(rb.w);
    if (LOOP == 0) {
        for (;;) {
            if (count == 0) {
                if (prism_gpu_inner<PACKED, BOX>(g, p, hit.t, first, count, stack, sp))
                    continue;
            } else {
                prism_gpu_leaf(g, p, first, count, skip, hit);
            }
            if (!prism_gpu_pop<PACKED>(stack, sp, hit.t, first, count))
                break;
        }
    } else if (LOOP == 1) {
        for (;;) {
            while (count == 0)
                if (!prism_gpu_inner<PACKED, BOX>(g, p, hit.t, first, count, stack, sp) &&
                    !prism_gpu_pop<PACKED>(stack, sp, hit.t, first, count))
                    return hit.index != PRISM_TRACE_NONE;
            prism_gpu_leaf(g, p, first, count, skip, hit);
            if (!prism_gpu_pop<PACKED>(stack, sp, hit.t, first, count))
                break;
        }
    } else {
        bool have = true;      /* (first, count) is a node still to visit */
        uint32_t lf = 0, lc = 0; /* the leaf put off; lc 0: none */
        for (;;) {
            while (have && count == 0) {
                have = prism_gpu_inner<PACKED, BOX>(g, p, hit.t, first, count, stack, sp) ||
                       prism_gpu_pop<PACKED>(stack, sp, hit.t, first, count);
                if (have && count > 0 && lc == 0) {
                    lf = first;
                    lc = count;
                    have = prism_gpu_pop<PACKED>(stack, sp, hit.t, first, count);
                }
                if (!__any_sync(__activemask(), lc == 0))
                    break;
            }
            if (lc > 0) {
                prism_gpu_leaf(g, p, lf, lc, skip, hit);
                lc = 0;
            } else if (have && count > 0) {
                prism_gpu_leaf(g, p, first, count, skip, hit);
                have = prism_gpu_pop<PACKED>(stack, sp, hit.t, first, count);
            } else if (!have) {
                break;
            }
        }
    }
    return hit.index != PRISM_TRACE_NONE;
}

#endif /* __CUDACC__ */
#endif
