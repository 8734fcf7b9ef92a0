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
    } else if (BOX == 1) {
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

/* Closest hit along `p` (p.tmin .. tmax) on any triangle but `skip`; the
 * hit's t and index (u, v are not computed). */
template <bool PACKED, int BOX>
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
    float t0, t1;
    if ((__float_as_uint(rb.w) == 0 && __float_as_uint(ra.w) == 0) ||
        !prism_gpu_box<0>(p, ra, rb, p.tmin, p.tmax, t0))
        return false;
    prism_gpu_entry<PACKED> stack[PRISM_BVH_STACK];
    int sp = 0;
    uint32_t first = __float_as_uint(ra.w), count = __float_as_uint(rb.w);
    for (;;) {
        if (count == 0) {
            const float4 *c0 = prism_gpu_node(g, first);
            const float4 *c1 = first + 1 == g.nodes_split ? (const float4 *)g.nodes_tail : c0 + 2;
            const float4 a0 = __ldg(c0), b0 = __ldg(c0 + 1), a1 = __ldg(c1), b1 = __ldg(c1 + 1);
            const bool h0 = prism_gpu_box<BOX>(p, a0, b0, p.tmin, hit.t, t0);
            const bool h1 = prism_gpu_box<BOX>(p, a1, b1, p.tmin, hit.t, t1);
            if (h0 || h1) {
                const bool swap = !h0 || (h1 && t1 < t0);
                if (h0 && h1)
                    stack[sp++].set(__float_as_uint(swap ? a0.w : a1.w),
                                    __float_as_uint(swap ? b0.w : b1.w), swap ? t0 : t1);
                first = __float_as_uint(swap ? a1.w : a0.w);
                count = __float_as_uint(swap ? b1.w : b0.w);
                continue;
            }
        } else {
            for (uint32_t i = first; i < first + count; i++) {
                float t;
                if (i != skip && prism_gpu_triangle(g, p, i, p.tmin, hit.t, t)) {
                    hit.t = t;
                    hit.index = i;
                }
            }
        }
        bool popped = false;
        while (sp > 0 && !popped) {
            uint32_t f, c;
            if (stack[--sp].get(f, c) <= hit.t) {
                first = f;
                count = c;
                popped = true;
            }
        }
        if (!popped)
            break;
    }
    return hit.index != PRISM_TRACE_NONE;
}

#endif /* __CUDACC__ */
#endif
