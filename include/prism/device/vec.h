/* Three-vectors for the per-ray and per-photon code: plain C structs and
 * PRISM_HD functions, the same under nvcc and the C compiler (no CUDA
 * float3, no cglm: both backends must do the same arithmetic). */
#ifndef PRISM_KERNELS_VEC_H
#define PRISM_KERNELS_VEC_H

#include <math.h>

#include "prism_hd.h"

typedef struct pv3 {
    float x, y, z;
} pv3;

PRISM_HD pv3 pv3_make(float x, float y, float z)
{
    pv3 r;
    r.x = x;
    r.y = y;
    r.z = z;
    return r;
}
PRISM_HD pv3 pv3_load(const float *p)
{
    return pv3_make(p[0], p[1], p[2]);
}
PRISM_HD void pv3_store(pv3 a, float *p)
{
    p[0] = a.x;
    p[1] = a.y;
    p[2] = a.z;
}
PRISM_HD pv3 pv3_add(pv3 a, pv3 b)
{
    return pv3_make(a.x + b.x, a.y + b.y, a.z + b.z);
}
PRISM_HD pv3 pv3_sub(pv3 a, pv3 b)
{
    return pv3_make(a.x - b.x, a.y - b.y, a.z - b.z);
}
PRISM_HD pv3 pv3_scale(pv3 a, float s)
{
    return pv3_make(a.x * s, a.y * s, a.z * s);
}
/* a + b * s */
PRISM_HD pv3 pv3_madd(pv3 a, pv3 b, float s)
{
    return pv3_make(a.x + b.x * s, a.y + b.y * s, a.z + b.z * s);
}
PRISM_HD float pv3_dot(pv3 a, pv3 b)
{
    return a.x * b.x + a.y * b.y + a.z * b.z;
}
PRISM_HD pv3 pv3_cross(pv3 a, pv3 b)
{
    return pv3_make(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}
PRISM_HD float pv3_length(pv3 a)
{
    return sqrtf(pv3_dot(a, a));
}
/* a / |a|; a zero vector stays zero rather than becoming NaN. */
PRISM_HD pv3 pv3_normalize(pv3 a)
{
    float l2 = pv3_dot(a, a);
    return l2 > 0.0f ? pv3_scale(a, 1.0f / sqrtf(l2)) : a;
}
PRISM_HD int pv3_finite(pv3 a)
{
    return isfinite(a.x) && isfinite(a.y) && isfinite(a.z);
}

/* A unit vector perpendicular to unit `n` (Duff et al. 2017, branchless). */
PRISM_HD pv3 pv3_perpendicular(pv3 n)
{
    float s = n.z >= 0.0f ? 1.0f : -1.0f;
    float a = -1.0f / (s + n.z);
    float b = n.x * n.y * a;
    return pv3_make(1.0f + s * n.x * n.x * a, s * b, -s * n.x);
}

#endif
