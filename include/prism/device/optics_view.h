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
enum {
    PRISM_MAT_RINDEX = 0,
    PRISM_MAT_ABSLENGTH,
    PRISM_MAT_RAYLEIGH,
    PRISM_MAT_REEMISSIONPROB, /* probability that a bulk absorption reemits (0: never;
                                 all 0 when the material has no emission spectrum) */
    PRISM_MAT_COUNT_
};
/* Per surface, `wavelength_count` floats each. For PRISM_SURFACE_MODEL_CHROMA
 * the first four are probabilities that sum to <= 1 (the rest transmits).
 * For Geant4's models (glisur, unified) DETECT and ABSORB are what the
 * surface takes before its model acts ((1-R)E and (1-R)(1-E) with R its
 * REFLECTIVITY, E its EFFICIENCY), the two REFLECT rows are unused, and the
 * unified model's lobe constants follow (the Lambertian lobe is the rest;
 * clamped so that spike + lobe + backscatter <= 1, truncated in that order
 * as Geant4's successive draws do; all 0 for glisur), then the index of a
 * back-painted surface's layer (0: the next material's; 0 unless the
 * surface is a backpainted dielectric_dielectric). */
enum {
    PRISM_SURF_DETECT = 0,
    PRISM_SURF_ABSORB,
    PRISM_SURF_REFLECT_SPECULAR,
    PRISM_SURF_REFLECT_DIFFUSE,
    PRISM_SURF_SPECULAR_LOBE,
    PRISM_SURF_SPECULAR_SPIKE,
    PRISM_SURF_BACKSCATTER,
    PRISM_SURF_RINDEX,
    PRISM_SURF_COUNT_
};

/* Points of a material's inverse emission CDF: wavelength (nm) at
 * u = k / (PRISM_OPTICS_ICDF_COUNT - 1). */
#define PRISM_OPTICS_ICDF_COUNT 256u

/* A material's scintillation and reemission constants (G4DAE's
 * SCINTILLATIONYIELD, RESOLUTIONSCALE, FASTTIMECONSTANT, SLOWTIMECONSTANT,
 * YIELDRATIO, or SCINTILLATIONTIMECONSTANT1/2 and SCINTILLATIONYIELD1/2).
 * The emission spectrum is one per material: with two components, their
 * normalised spectra summed with weights yield_ratio and 1 - yield_ratio,
 * so a photon's wavelength is drawn apart from its time component. The
 * host guarantees yield > 0 and a nonzero REEMISSIONPROB row only with
 * has_spectrum. */
typedef struct prism_material_params {
    float yield;            /* photons per MeV; 0: does not scintillate */
    float resolution_scale; /* 1 when not given */
    float time_fast;        /* ns, decay constant of the first component (0: none given) */
    float time_slow;        /* ns, of the second (= time_fast when one) */
    float yield_ratio;      /* fraction of photons in the first component */
    uint32_t has_spectrum;  /* 1: emission_icdf holds the material's spectrum */
    uint32_t reserved[2];
} prism_material_params;

/* Geant4's enum values (G4OpticalSurfaceModel, G4SurfaceType,
 * G4OpticalSurfaceFinish) as the G4DAE file writes them, and Prism's own
 * CHROMA model: the four probabilities taken as given. */
enum {
    PRISM_SURFACE_MODEL_GLISUR = 0,
    PRISM_SURFACE_MODEL_UNIFIED = 1,
    PRISM_SURFACE_MODEL_CHROMA = 0xFFu
};
enum { PRISM_SURFACE_DIELECTRIC_METAL = 0, PRISM_SURFACE_DIELECTRIC_DIELECTRIC = 1 };
enum {
    PRISM_FINISH_POLISHED = 0,
    PRISM_FINISH_POLISHED_FRONTPAINTED,
    PRISM_FINISH_POLISHED_BACKPAINTED,
    PRISM_FINISH_GROUND,
    PRISM_FINISH_GROUND_FRONTPAINTED,
    PRISM_FINISH_GROUND_BACKPAINTED
};

/* A surface's model as the file gave it (CHROMA for Chroma's names). A
 * surface stored as bare (detect -1), one Prism does not model included
 * (model LUT, say), keeps the file's values here: they mean nothing, and a
 * kernel asks prism_optics_surface (which returns 0 for it) first. */
typedef struct prism_surface_params {
    uint32_t model;    /* PRISM_SURFACE_MODEL_* */
    uint32_t type;     /* PRISM_SURFACE_DIELECTRIC_* */
    uint32_t finish;   /* PRISM_FINISH_* */
    float sigma_alpha; /* unified: facet slope spread, radians; glisur: polish in [0,1] */
} prism_surface_params;

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
    const prism_material_params *material_params; /* [material] */
    const float *emission_icdf;                   /* [material][PRISM_OPTICS_ICDF_COUNT] */
    const prism_surface_params *surface_params;   /* [surface] */
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

/* The probability that a bulk absorption in material m at `wavelength`
 * reemits the photon (0 outside the tables). */
PRISM_HD float prism_optics_reemission_prob(const prism_optics_view *o, uint32_t m,
                                            float wavelength)
{
    if (o == 0 || m >= o->material_count || o->wavelength_count == 0)
        return 0.0f;
    const float *t = o->materials + (size_t)m * PRISM_MAT_COUNT_ * o->wavelength_count;
    return prism_optics_sample(o, t + PRISM_MAT_REEMISSIONPROB * o->wavelength_count, wavelength);
}

/* Material m's scintillation constants, or NULL outside the tables. */
PRISM_HD const prism_material_params *prism_optics_material_params(const prism_optics_view *o,
                                                                   uint32_t m)
{
    if (o == 0 || m >= o->material_count || o->material_params == 0)
        return 0;
    return o->material_params + m;
}

/* A wavelength (nm) from material m's emission spectrum for uniform u in
 * [0, 1): the inverse CDF, interpolated linearly between its points. The
 * caller checks has_spectrum first. */
PRISM_HD float prism_optics_emission_wavelength(const prism_optics_view *o, uint32_t m, float u)
{
    const float *t = o->emission_icdf + (size_t)m * PRISM_OPTICS_ICDF_COUNT;
    float x = u * (float)(PRISM_OPTICS_ICDF_COUNT - 1u);
    if (!(x > 0.0f))
        return t[0];
    if (x >= (float)(PRISM_OPTICS_ICDF_COUNT - 1u))
        return t[PRISM_OPTICS_ICDF_COUNT - 1u];
    uint32_t i = (uint32_t)x;
    float f = x - (float)i;
    return t[i] + (t[i + 1] - t[i]) * f;
}

/* Surface s's model, type, finish and roughness; the CHROMA model outside
 * the tables. */
PRISM_HD prism_surface_params prism_optics_surface_params(const prism_optics_view *o, uint32_t s)
{
    prism_surface_params p;
    p.model = PRISM_SURFACE_MODEL_CHROMA;
    p.type = PRISM_SURFACE_DIELECTRIC_METAL;
    p.finish = PRISM_FINISH_POLISHED;
    p.sigma_alpha = 0.0f;
    if (o != 0 && s < o->surface_count && o->surface_params != 0)
        p = o->surface_params[s];
    return p;
}

/* The PRISM_SURF_COUNT_ rows of surface `s` at `wavelength` (out[PRISM_SURF_*]).
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

/* Cheaper reads for the hot kernel: where `wavelength` falls on the grid,
 * found once, then any row read with one multiply-add. A row read this way
 * gives the bits prism_optics_sample gives (at the clamped ends i == j and
 * f == 0, so y[i] + 0 is y[i]), for the finite values the tables hold. */
typedef struct prism_optics_lerp {
    uint32_t i, j;
    float f;
} prism_optics_lerp;

PRISM_HD prism_optics_lerp prism_optics_lerp_at(const prism_optics_view *o, float wavelength)
{
    prism_optics_lerp l;
    l.i = l.j = 0;
    l.f = 0.0f;
    float x = (wavelength - o->wavelength_start) / o->wavelength_step;
    uint32_t last = o->wavelength_count - 1u;
    if (!(x > 0.0f))
        return l;
    if (x >= (float)last) {
        l.i = l.j = last;
        return l;
    }
    l.i = (uint32_t)x;
    l.j = l.i + 1u;
    l.f = x - (float)l.i;
    return l;
}

PRISM_HD float prism_optics_lerp_row(const float *y, prism_optics_lerp l)
{
    return y[l.i] + (y[l.j] - y[l.i]) * l.f;
}

/* Surface s's rows (row k at + k * wavelength_count), or NULL when the
 * triangle has no surface in the tables or one that changes nothing
 * (prism_optics_surface's rule). */
PRISM_HD const float *prism_optics_surface_table(const prism_optics_view *o, uint32_t s)
{
    if (o == 0 || s >= o->surface_count || o->wavelength_count == 0)
        return 0;
    const float *t = o->surfaces + (size_t)s * PRISM_SURF_COUNT_ * o->wavelength_count;
    return t[0] < 0.0f ? 0 : t;
}

/* Row `row` (PRISM_SURF_*) of a surface table at grid point l. */
PRISM_HD float prism_optics_surface_row(const prism_optics_view *o, const float *t, int row,
                                        prism_optics_lerp l)
{
    return prism_optics_lerp_row(t + (size_t)row * o->wavelength_count, l);
}

/* Material m's refractive index alone (1 outside the tables): what a
 * boundary needs, without the two lengths prism_optics_material reads. */
PRISM_HD float prism_optics_rindex(const prism_optics_view *o, uint32_t m, float wavelength)
{
    if (o == 0 || m >= o->material_count || o->wavelength_count == 0)
        return 1.0f;
    const float *t = o->materials + (size_t)m * PRISM_MAT_COUNT_ * o->wavelength_count;
    return prism_optics_sample(o, t + PRISM_MAT_RINDEX * o->wavelength_count, wavelength);
}

#endif
