/* The optics tables as the kernels read them: every material and surface
 * property resampled on one uniform wavelength grid (built by
 * engine/upload/optics.c), and linear interpolation on that grid. Materials or
 * surfaces outside the tables read as vacuum / no surface. */
#ifndef PRISM_KERNELS_OPTICS_VIEW_H
#define PRISM_KERNELS_OPTICS_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include "prism_hd.h"

/* Per material, in this order, `wavelength_count` floats each. */
enum { PRISM_MAT_RINDEX = 0, PRISM_MAT_ABSLENGTH, PRISM_MAT_RAYLEIGH, PRISM_MAT_COUNT_ };
/* Per surface: probabilities that sum to <= 1; the rest is transmission. */
enum {
    PRISM_SURF_DETECT = 0,
    PRISM_SURF_ABSORB,
    PRISM_SURF_REFLECT_SPECULAR,
    PRISM_SURF_REFLECT_DIFFUSE,
    PRISM_SURF_COUNT_
};

/* An absorption or scattering length that never happens (metres). */
#define PRISM_LENGTH_INFINITE 1e30f
#define PRISM_NO_MATERIAL 0xFFFFu

typedef struct prism_optics_view {
    float wavelength_start; /* nm, grid point 0 */
    float wavelength_step;  /* nm */
    uint32_t wavelength_count;
    uint32_t material_count;
    uint32_t surface_count;
    const float *materials; /* [material][PRISM_MAT_COUNT_][wavelength_count] */
    const float *surfaces;  /* [surface][PRISM_SURF_COUNT_][wavelength_count] */
} prism_optics_view;

/* Linear interpolation of table `y` (n points on the grid), clamped at
 * both ends. */
PRISM_HD float prism_optics_sample(const prism_optics_view *o, const float *y, float wavelength)
{
    float x = (wavelength - o->wavelength_start) / o->wavelength_step;
    if (!(x > 0.0f))
        return y[0];
    uint32_t last = o->wavelength_count - 1u;
    if (x >= (float)last)
        return y[last];
    uint32_t i = (uint32_t)x;
    float f = x - (float)i;
    return y[i] + (y[i + 1] - y[i]) * f;
}

typedef struct prism_material_sample {
    float rindex, absorption_length, scattering_length;
} prism_material_sample;

PRISM_HD prism_material_sample prism_optics_material(const prism_optics_view *o, uint32_t m,
                                                     float wavelength)
{
    prism_material_sample s;
    s.rindex = 1.0f;
    s.absorption_length = PRISM_LENGTH_INFINITE;
    s.scattering_length = PRISM_LENGTH_INFINITE;
    if (o == 0 || m >= o->material_count || o->wavelength_count == 0)
        return s;
    const float *t = o->materials + (size_t)m * PRISM_MAT_COUNT_ * o->wavelength_count;
    s.rindex = prism_optics_sample(o, t + PRISM_MAT_RINDEX * o->wavelength_count, wavelength);
    s.absorption_length = prism_optics_sample(o, t + PRISM_MAT_ABSLENGTH * o->wavelength_count,
                                              wavelength);
    s.scattering_length = prism_optics_sample(o, t + PRISM_MAT_RAYLEIGH * o->wavelength_count,
                                              wavelength);
    return s;
}

/* The four probabilities of surface `s` at `wavelength` (out[PRISM_SURF_*]).
 * Returns 0 when the triangle has no surface in the tables, or one that
 * changes nothing (detect stored as -1). */
PRISM_HD int prism_optics_surface(const prism_optics_view *o, uint32_t s, float wavelength,
                                  float out[PRISM_SURF_COUNT_])
{
    if (o == 0 || s >= o->surface_count || o->wavelength_count == 0)
        return 0;
    const float *t = o->surfaces + (size_t)s * PRISM_SURF_COUNT_ * o->wavelength_count;
    if (t[0] < 0.0f) /* a surface that changes nothing: a bare boundary */
        return 0;
    for (int k = 0; k < PRISM_SURF_COUNT_; k++)
        out[k] = prism_optics_sample(o, t + k * o->wavelength_count, wavelength);
    return 1;
}

#endif
