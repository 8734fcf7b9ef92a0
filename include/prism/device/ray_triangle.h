/* Watertight ray/triangle intersection (Woop, Benthin, Wald, "Watertight
 * Ray/Triangle Intersection", JCGT 2(1), 2013), per-ray code shared by the
 * CPU reference queries and the CUDA kernels: plain C, PRISM_HD, no libc.
 *
 * The ray is sheared and scaled once so that it runs along +z from the
 * origin; each triangle is then tested with three 2D edge functions that are
 * computed the same way for both triangles sharing an edge, so a ray through
 * the edge (or a shared vertex) gets a zero on it and hits one of the two
 * triangles: no ray slips between the triangles of a closed mesh. Edge
 * functions that come out exactly zero are recomputed in double, as the
 * paper does, so that the sign is right where float rounding would lose it.
 * Rays with zero direction components are fine: the shear divides only by
 * the largest component. */
#ifndef PRISM_RAY_TRIANGLE_H
#define PRISM_RAY_TRIANGLE_H

#include <stdint.h>

#include "prism/bvh.h"
#include "prism_hd.h"

/* 1 + 2 * gamma(3), gamma(n) = n*eps/(1 - n*eps), eps = 2^-24: how much a
 * box's far distance is widened so rounding cannot cull a box the ray hits
 * (Ize, "Robust BVH Ray Traversal", JCGT 2013). */
#define PRISM_RAY_BOX_WIDEN 1.0000003576279f

/* A ray prepared for box and triangle tests. kx, ky, kz permute the axes so
 * that kz is the direction's largest component (the axis of the shear). */
typedef struct prism_ray_pre {
    float org[3];
    float dir[3];
    float inv[3]; /* 1/dir, never -0 based: +inf for zero components; boxes handle that */
    float inv_lo[3], inv_hi[3]; /* inv, times PRISM_RAY_BOX_WIDEN on the far plane's side */
    float tmin, tmax;
    int kx, ky, kz;
    float ox, oy, oz; /* org[kx], org[ky], org[kz] */
    float sx, sy, sz; /* shear: dir[kx]/dir[kz], dir[ky]/dir[kz], 1/dir[kz] */
} prism_ray_pre;

PRISM_HD float prism__absf(float x)
{
    return x < 0.0f ? -x : x;
}

/* Component k of a 3-float vector in registers, by selects rather than a
 * dynamic index, which on the GPU would push the vector to local memory.
 * (Vertices are read from memory with a dynamic index: that is a load.) */
PRISM_HD float prism__comp(const float *v, int k)
{
    return k == 0 ? v[0] : (k == 1 ? v[1] : v[2]);
}

/* Fill `p` from `r`. A zero direction gives a ray that hits nothing (its
 * shear is infinite and every triangle test fails), never a NaN loop. */
PRISM_HD void prism_ray_prepare(const prism_ray *r, prism_ray_pre *p)
{
    float ax = prism__absf(r->dir[0]), ay = prism__absf(r->dir[1]), az = prism__absf(r->dir[2]);
    int kz = (ax >= ay && ax >= az) ? 0 : (ay >= az ? 1 : 2);
    int kx = kz == 2 ? 0 : kz + 1;
    int ky = kx == 2 ? 0 : kx + 1;
    if (r->dir[kz] < 0.0f) { /* keep the winding of the 2D edge functions */
        int k = kx;
        kx = ky;
        ky = k;
    }
    for (int i = 0; i < 3; i++) {
        p->org[i] = r->org[i];
        p->dir[i] = r->dir[i];
        /* -0 + 0 = +0: a zero component gives +inf, never -inf, which the
         * slab test in prism/device/bvh_traverse.h relies on. */
        p->inv[i] = 1.0f / (r->dir[i] + 0.0f);
        /* The far plane is hi where inv > 0 and lo where inv < 0: widening
         * its reciprocal widens the far distance (see prism/device/bvh_traverse.h). */
        p->inv_lo[i] = p->inv[i] < 0.0f ? p->inv[i] * PRISM_RAY_BOX_WIDEN : p->inv[i];
        p->inv_hi[i] = p->inv[i] < 0.0f ? p->inv[i] : p->inv[i] * PRISM_RAY_BOX_WIDEN;
    }
    p->ox = prism__comp(r->org, kx);
    p->oy = prism__comp(r->org, ky);
    p->oz = prism__comp(r->org, kz);
    p->tmin = r->tmin;
    p->tmax = r->tmax;
    p->kx = kx;
    p->ky = ky;
    p->kz = kz;
    p->sz = prism__comp(p->inv,
                        kz); /* 1/dir[kz]: dir[kz] is the largest, so not 0 unless all are */
    p->sx = r->dir[kx] * p->sz;
    p->sy = r->dir[ky] * p->sz;
}

/* A product rounded on its own on every compiler. nvcc would otherwise fuse
 * a*b - c*d into an fma where it likes, differently in each inlined copy of
 * the test; for a (nearly) degenerate triangle that decides hit or miss, so
 * the host (the reference) and each device walk would report different
 * triangles (seen on the collinear hostile scene). */
PRISM_HD float prism__mul(float a, float b)
{
#if defined(__CUDA_ARCH__)
    return __fmul_rn(a, b);
#else
    return a * b;
#endif
}

/* Edge function fallback in double, for results that are exactly zero. */
PRISM_HD float prism__edge_double(float ax, float ay, float bx, float by, float e)
{
    if (e != 0.0f)
        return e;
    return (float)((double)ax * (double)by - (double)ay * (double)bx);
}

/* Test triangle (a, b, c) (pointers to 3 floats in memory) against `p`,
 * accepting a hit at t in [tmin, tmax].
 * On a hit writes t and the barycentrics u (weight of b) and v (weight of c)
 * and returns 1. Degenerate (zero-area) triangles never hit. */
PRISM_HD int prism_ray_triangle(const prism_ray_pre *p, const float *a, const float *b,
                                const float *c, float tmin, float tmax, float *t_out, float *u_out,
                                float *v_out)
{
    const int kx = p->kx, ky = p->ky, kz = p->kz;
    const float az = a[kz] - p->oz, bz = b[kz] - p->oz, cz = c[kz] - p->oz;
    const float ax = (a[kx] - p->ox) - prism__mul(p->sx, az);
    const float ay = (a[ky] - p->oy) - prism__mul(p->sy, az);
    const float bx = (b[kx] - p->ox) - prism__mul(p->sx, bz);
    const float by = (b[ky] - p->oy) - prism__mul(p->sy, bz);
    const float cx = (c[kx] - p->ox) - prism__mul(p->sx, cz);
    const float cy = (c[ky] - p->oy) - prism__mul(p->sy, cz);
    float U = prism__mul(cx, by) - prism__mul(cy, bx);
    float V = prism__mul(ax, cy) - prism__mul(ay, cx);
    float W = prism__mul(bx, ay) - prism__mul(by, ax);
    if (U == 0.0f || V == 0.0f || W == 0.0f) {
        U = prism__edge_double(cx, cy, bx, by, U);
        V = prism__edge_double(ax, ay, cx, cy, V);
        W = prism__edge_double(bx, by, ax, ay, W);
    }
    if ((U < 0.0f || V < 0.0f || W < 0.0f) && (U > 0.0f || V > 0.0f || W > 0.0f))
        return 0;
    const float det = U + V + W;
    if (det == 0.0f)
        return 0;
    const float T = (prism__mul(U, az) + prism__mul(V, bz) + prism__mul(W, cz)) * p->sz;
    const float inv_det = 1.0f / det;
    const float t = T * inv_det;
    if (!(t >= tmin && t <= tmax)) /* also rejects NaN */
        return 0;
    *t_out = t;
    *u_out = V * inv_det;
    *v_out = W * inv_det;
    return 1;
}

#endif
