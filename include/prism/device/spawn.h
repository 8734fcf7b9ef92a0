/* Where a ray that leaves a surface starts: the surface point, moved off
 * the surface along its normal, to the side the ray goes, by a distance
 * that grows with the coordinates (after Wächter and Binder, "A Fast and
 * Robust Method for Avoiding Self-Intersection", Ray Tracing Gems, 2019).
 *
 * Why: float32 keeps a coordinate of 1 km to 61 um and of 30 m to 1.9 um.
 * A boundary point computed as o + t d lands up to half of that on either
 * side of the surface. The next ray skips the triangle it left, but not
 * that triangle's neighbours: started behind the surface, it crosses their
 * plane again after (rounding / sin angle), a few millimetres at grazing
 * angles 1 km out, and there the photon meets the surface a second time (a
 * reflection undone, a detection lost). A start distance along the ray
 * cannot hide that at grazing angles; a start off the surface can.
 *
 * The point comes from the barycentrics, a + u (b - a) + v (c - a): the
 * edges of a small triangle far out are exact differences, so it is off by
 * a rounding or two of its coordinates whatever the length of the ray that
 * found it. The offset, 2^-19 of the triangle's largest coordinate (about
 * 4 to 8 of its roundings, 1.9 mm at 1 km, 4 um at 2 m), stays above that
 * error (under 2 roundings along the normal, another for the move) with
 * room to spare. Plain C, PRISM_HD: both backends run it. */
#ifndef PRISM_KERNELS_SPAWN_H
#define PRISM_KERNELS_SPAWN_H

#include "vec.h"

#define PRISM_SPAWN_SCALE (1.0f / 1048576.0f) /* 2^-20 */

/* The point of triangle (a, b, c) with barycentrics u (weight of b) and v
 * (weight of c). */
PRISM_HD pv3 prism_triangle_point(pv3 a, pv3 b, pv3 c, float u, float v)
{
    pv3 e1 = pv3_sub(b, a), e2 = pv3_sub(c, a);
    return pv3_make(a.x + (u * e1.x + v * e2.x), a.y + (u * e1.y + v * e2.y),
                    a.z + (u * e1.z + v * e2.z));
}

/* How far off triangle (a, b, c) a ray leaving it starts. */
PRISM_HD float prism_spawn_offset(pv3 a, pv3 b, pv3 c)
{
    float m = fmaxf(fmaxf(fabsf(a.x), fabsf(a.y)), fabsf(a.z));
    m = fmaxf(m, fmaxf(fmaxf(fabsf(b.x), fabsf(b.y)), fabsf(b.z)));
    m = fmaxf(m, fmaxf(fmaxf(fabsf(c.x), fabsf(c.y)), fabsf(c.z)));
    return PRISM_SPAWN_SCALE * m;
}

/* The start of a ray leaving triangle (a, b, c), unit normal n, from point
 * p on it, in direction d: p moved off the plane to d's side. */
PRISM_HD pv3 prism_spawn(pv3 p, pv3 a, pv3 b, pv3 c, pv3 n, pv3 d)
{
    float off = prism_spawn_offset(a, b, c);
    return pv3_madd(p, n, pv3_dot(d, n) >= 0.0f ? off : -off);
}

#endif
