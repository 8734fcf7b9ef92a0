/* prism/device.cuh: Prism's geometry for a renderer's own CUDA kernels,
 * compiled with nvcc against the installed package or at run time with
 * prism_module_compile (prism/module.h), which hands NVRTC this header.
 *
 * Header-only: every function is inline device code, so a kernel needs no
 * separable compilation (-rdc) and no device library to link; it includes
 * this file and is built as any .cu file. The host side passes a
 * prism_device_view (prism_geometry_device_view) to the kernel by value.
 *
 * What it gives, each the function Prism's own kernels run (the headers
 * under prism/device/, installed as they are in the source tree):
 *   prism_trace_closest(view, ...)  closest hit, with the triangle's codes
 *   prism_trace_any(view, ...)      any hit (shadow and occlusion rays)
 *   prism_device_normal(view, i)    a triangle's unit normal
 *   prism_rng_make, prism_rng_u32, prism_rng_uniform
 *                                   Philox4x32-10, counter-based
 *   prism_optics_material, prism_optics_surface
 *                                   the optics tables at a wavelength
 * and, for kernels that want Prism's own pieces, the internal level they
 * are built on: prism_trace_closest(&view.geometry, pv3 ...) returning a
 * prism_trace_hit (prism/device/traverse.h), prism_bvh_closest_skip and
 * prism_bvh_any (prism/device/bvh_traverse.h), their wide-tree forms
 * prism_wide_closest_skip and prism_wide_any (prism/device/
 * prism/device/bvh_wide_traverse.h, where view.geometry.wide_count is not 0), pv3
 * arithmetic (vec.h).
 *
 * Directions need not be normalised: distances are in units of the
 * direction's length (metres for a unit direction). Triangle `index` is in
 * the BVH's leaf order, as view.geometry.triangles and triangle_info are;
 * hit.triangle is the scene's triangle id. */
#ifndef PRISM_DEVICE_CUH
#define PRISM_DEVICE_CUH

#if !defined(__CUDACC__)
#error                                                                                             \
    "prism/device.cuh is CUDA: build it with nvcc or prism_module_compile (C code: prism/device_view.h)"
#endif

#include "prism/device_view.h"
#include "prism/device/optics_view.h"
#include "prism/device/philox.h"
#include "prism/device/photon.h"
#include "prism/device/traverse.h"

/* Philox stream purposes from here up are the renderer's: Prism's own
 * photons draw from purposes PRISM_RNG_GENERATE and PRISM_RNG_PROPAGATE,
 * so a renderer's streams never repeat theirs. */
#define PRISM_RNG_USER 0x10000u

/* A closest hit and the codes of the triangle hit (prism_triangle_info).
 * On a miss: distance = tmax, index = PRISM_TRACE_NONE, codes none. */
typedef struct prism_device_hit {
    float distance;          /* the hit is origin + distance * direction */
    float u, v;              /* barycentrics: (1 - u - v) v0 + u v1 + v v2 */
    uint32_t index;          /* leaf order; the `skip` that traces on past the hit */
    uint32_t triangle;       /* scene triangle id */
    uint32_t solid;          /* scene solid, PRISM_NONE for none */
    uint32_t material_inner; /* material inside the solid, PRISM_NO_MATERIAL for none */
    uint32_t material_outer; /* material outside it (the normal's side) */
    uint32_t surface;        /* optical surface, PRISM_NONE for none */
} prism_device_hit;

/* Closest triangle along origin + t direction, t in [tmin, tmax], other
 * than leaf-order triangle `skip` (PRISM_TRACE_NONE: none; the index of
 * the last hit, to go on from a surface without hitting it again).
 * Returns whether one was hit. It is the walk of Prism's propagation
 * (prism_trace_closest of prism/device/traverse.h), hits for hits. */
__device__ __forceinline__ bool prism_trace_closest(const prism_device_view *view, float3 origin,
                                                    float3 direction, float tmin, float tmax,
                                                    uint32_t skip, prism_device_hit *hit)
{
    prism_trace_hit h;
    const bool found = prism_trace_closest(&view->geometry, pv3_make(origin.x, origin.y, origin.z),
                                           pv3_make(direction.x, direction.y, direction.z), tmin,
                                           tmax, skip, &h) != 0;
    hit->distance = h.t;
    hit->u = h.u;
    hit->v = h.v;
    hit->index = h.index;
    prism_triangle_info info;
    if (found) {
        info = view->geometry.triangle_info[h.index];
    } else {
        info.id = info.solid = info.surface = PRISM_NONE;
        info.materials = prism_materials_pack(PRISM_NONE, PRISM_NONE);
    }
    hit->triangle = info.id;
    hit->solid = info.solid;
    hit->material_inner = prism_materials_inner(info.materials);
    hit->material_outer = prism_materials_outer(info.materials);
    hit->surface = info.surface;
    return found;
}

/* Whether any triangle lies along origin + t direction, t in [tmin, tmax]:
 * the walk stops at the first one found (prism_wide_any where the upload
 * made a wide tree, else prism_bvh_any). */
__device__ __forceinline__ bool prism_trace_any(const prism_device_view *view, float3 origin,
                                                float3 direction, float tmin, float tmax)
{
    prism_ray ray;
    ray.org[0] = origin.x;
    ray.org[1] = origin.y;
    ray.org[2] = origin.z;
    ray.dir[0] = direction.x;
    ray.dir[1] = direction.y;
    ray.dir[2] = direction.z;
    ray.tmin = tmin;
    ray.tmax = tmax;
    return (view->geometry.wide_count ? prism_wide_any(&view->geometry, &ray)
                                      : prism_bvh_any(&view->geometry, &ray)) != PRISM_BVH_MISS;
}

/* Unit normal of leaf-order triangle `index`, (v1 - v0) x (v2 - v0): it
 * points out of the triangle's solid, to the material_outer side. */
__device__ __forceinline__ float3 prism_device_normal(const prism_device_view *view, uint32_t index)
{
    const pv3 n = prism_triangle_normal(&view->geometry, index);
    return make_float3(n.x, n.y, n.z);
}

#endif
