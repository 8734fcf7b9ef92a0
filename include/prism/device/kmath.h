/* The logarithm and the sine and cosine of the per-photon code, written
 * here in plain float arithmetic so that both backends compute the same
 * bits. libm's logf/sinf/cosf and CUDA's agree only to an ulp or two, and
 * a photon that draws a distance one ulp apart can cross a boundary on one
 * backend and not on the other. + - * / and sqrtf are correctly rounded
 * (IEEE 754) on the CPU and, in kernels built without fused multiply-adds
 * and with IEEE division and square root, on the GPU (see
 * engine/CMakeLists.txt), so these functions give one answer everywhere.
 *
 * Kernels built for speed (PRISM_KERNEL_FAST_MATH, nvcc --use_fast_math)
 * use the GPU's hardware approximations instead: faster, but they agree
 * with the host only statistically. */
#ifndef PRISM_KERNELS_KMATH_H
#define PRISM_KERNELS_KMATH_H

#include <math.h>
#include <stdint.h>

#include "prism_hd.h"

#if defined(__CUDA_ARCH__) && defined(PRISM_KERNEL_FAST_MATH)
#define PRISM_KMATH_HARDWARE 1
#else
#define PRISM_KMATH_HARDWARE 0
#endif

#define PRISM_TWO_PI 6.283185307179586f

/* A float's bits and back (CUDA's intrinsics; a union in C). */
typedef union prism_float_word {
    float f;
    uint32_t u;
} prism_float_word;

PRISM_HD uint32_t prism_float_bits(float x)
{
#if defined(__CUDA_ARCH__)
    return __float_as_uint(x);
#else
    prism_float_word w;
    w.f = x;
    return w.u;
#endif
}

PRISM_HD float prism_bits_float(uint32_t u)
{
#if defined(__CUDA_ARCH__)
    return __uint_as_float(u);
#else
    prism_float_word w;
    w.u = u;
    return w.f;
#endif
}

/* Natural logarithm, within about 2 ulp. x = m 2^e with m in [sqrt(1/2),
 * sqrt(2)); log(m) = 2 atanh(s), s = (m - 1) / (m + 1), |s| < 0.172, whose
 * odd series to s^9 leaves less than 1e-9; ln 2 is split in a head with
 * trailing zero bits (e * head is exact) and a tail. */
PRISM_HD float prism_logf(float x)
{
#if PRISM_KMATH_HARDWARE
    return __logf(x);
#else
    if (!(x > 0.0f))
        return x == 0.0f ? -INFINITY : NAN;
    if (x == INFINITY)
        return x;
    int e = 0;
    if (x < 1.17549435e-38f) { /* subnormal: make it normal */
        x *= 8388608.0f;
        e = -23;
    }
    uint32_t b = prism_float_bits(x);
    e += (int)(b >> 23) - 127;
    float m = prism_bits_float((b & 0x007FFFFFu) | 0x3F800000u); /* [1, 2) */
    if (m > 1.41421356f) {
        m *= 0.5f;
        e++;
    }
    const float f = m - 1.0f; /* exact: m is within a factor 2 of 1 */
    const float s = f / (2.0f + f), z = s * s;
    const float series = z * (0.66666667f + z * (0.4f + z * (0.28571429f + z * 0.22222222f)));
    const float ln2_head = 0.693115234f, ln2_tail = 3.19461833e-5f; /* head 0x3F317000 */
    return (float)e * ln2_head + ((2.0f * s + s * series) + (float)e * ln2_tail);
#endif
}

/* sin and cos of t turns (2 pi t radians), t in [0, 1], within about 2 ulp.
 * The quarter turn k nearest t is taken off exactly (4t - k has no
 * rounding), which leaves an angle within pi/4, where the Taylor series
 * of sin to x^9 and of cos to x^10 leave less than 1e-9. */
PRISM_HD void prism_sincos_turn(float t, float *s, float *c)
{
#if PRISM_KMATH_HARDWARE
    __sincosf(PRISM_TWO_PI * t, s, c);
#else
    const int k = (int)(4.0f * t + 0.5f);
    const float x = (4.0f * t - (float)k) * 1.57079637f, x2 = x * x;
    const float sn =
        x +
        x * x2 * (-0.16666667f + x2 * (8.3333333e-3f + x2 * (-1.9841270e-4f + x2 * 2.7557319e-6f)));
    const float cs = 1.0f + x2 * (-0.5f + x2 * (4.1666667e-2f +
                                                x2 * (-1.3888889e-3f +
                                                      x2 * (2.4801587e-5f + x2 * -2.7557319e-7f))));
    switch (k & 3) {
    case 0:
        *s = sn;
        *c = cs;
        break;
    case 1:
        *s = cs;
        *c = -sn;
        break;
    case 2:
        *s = -sn;
        *c = -cs;
        break;
    default:
        *s = -cs;
        *c = sn;
        break;
    }
#endif
}

#endif
