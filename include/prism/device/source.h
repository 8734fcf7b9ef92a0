/* Photon generation for prism_propagate: isotropic point, torch (disc and
 * cone), photons given by the caller, normalised, or Cerenkov and
 * scintillation photons from gensteps (genstep.h). Photon i (its index in
 * the whole run: the call's first_photon plus its place in the call) draws
 * from Philox stream (seed, i, 0, GENERATE), so both backends, and any
 * split of a run into calls, make the same photons. */
#ifndef PRISM_KERNELS_SOURCE_H
#define PRISM_KERNELS_SOURCE_H

#include "prism/propagate.h"

#include "genstep.h"
#include "kmath.h"
#include "optics_view.h"
#include "philox.h"
#include "vec.h"

typedef struct prism_source_params {
    uint32_t kind;           /* prism_source_kind */
    pv3 position, direction; /* direction normalised */
    float radius, cos_divergence;
    float wavelength_min, wavelength_max, time;
    uint64_t seed;
    /* GENSTEPS: the gensteps the call's photons come from (where the
     * kernels read), and their photon offsets: genstep k makes run photons
     * [genstep_offsets[k], genstep_offsets[k + 1]), genstep_count + 1 of
     * them. */
    const prism_genstep *gensteps;
    const uint64_t *genstep_offsets;
    uint32_t genstep_count;
} prism_source_params;

/* Uniform direction in the cone cos(theta) in [cos_max, 1] around unit axis. */
PRISM_HD pv3 prism_sample_cone(prism_rng *r, pv3 axis, float cos_max)
{
    float c = 1.0f - prism_rng_uniform(r) * (1.0f - cos_max);
    float s = sqrtf(fmaxf(0.0f, 1.0f - c * c)), sin_phi, cos_phi;
    prism_sincos_turn(prism_rng_uniform(r), &sin_phi, &cos_phi);
    pv3 a = pv3_perpendicular(axis), b = pv3_cross(axis, a);
    return pv3_normalize(pv3_madd(pv3_madd(pv3_scale(axis, c), a, s * cos_phi), b, s * sin_phi));
}

/* A random unit vector perpendicular to unit d. */
PRISM_HD pv3 prism_sample_polarisation(prism_rng *r, pv3 d)
{
    float sin_phi, cos_phi;
    prism_sincos_turn(prism_rng_uniform(r), &sin_phi, &cos_phi);
    pv3 a = pv3_perpendicular(d), b = pv3_cross(d, a);
    return pv3_normalize(pv3_madd(pv3_scale(a, cos_phi), b, sin_phi));
}

/* pol made a unit vector perpendicular to unit d, or a random one. */
PRISM_HD pv3 prism_fix_polarisation(prism_rng *r, pv3 pol, pv3 d)
{
    pv3 p = pv3_madd(pol, d, -pv3_dot(pol, d));
    float l = pv3_length(p);
    return l > 1e-6f ? pv3_scale(p, 1.0f / l) : prism_sample_polarisation(r, d);
}

PRISM_HD void prism_photon_clear(prism_photon *p)
{
    p->history = 0;
    p->solid = 0xFFFFFFFFu;
    p->triangle = 0xFFFFFFFFu;
    p->steps = 0;
    p->reserved = 0xFFFFFFFFu; /* no triangle to skip */
}

/* Photon `index` of the run; `given` is the caller's photon (PHOTONS only);
 * `o` the optics tables (GENSTEPS reads RINDEX and the emission spectra;
 * NULL: vacuum). */
PRISM_HD void prism_generate_photon(const prism_source_params *s, const prism_optics_view *o,
                                    uint64_t index, const prism_photon *given, prism_photon *out)
{
    prism_rng r = prism_rng_make(s->seed, index, 0, PRISM_RNG_GENERATE);
    pv3 pos, dir, pol;
    float wl, t;
    if (s->kind == PRISM_SOURCE_GENSTEPS) {
        const uint32_t k = prism_genstep_find(s->genstep_offsets, s->genstep_count, index);
        prism_genstep_photon g = prism_genstep_photon_make(&s->gensteps[k], o, &r);
        pos = g.pos;
        dir = g.dir;
        pol = g.pol;
        wl = g.wavelength;
        t = g.time;
    } else if (s->kind == PRISM_SOURCE_PHOTONS) {
        pos = pv3_load(given->pos);
        dir = pv3_normalize(pv3_load(given->dir));
        pol = prism_fix_polarisation(&r, pv3_load(given->pol), dir);
        wl = given->wavelength;
        t = given->time;
    } else {
        pos = s->position;
        dir = s->kind == PRISM_SOURCE_BEAM ? s->direction : pv3_make(0.0f, 0.0f, 1.0f);
        float cos_max = s->kind == PRISM_SOURCE_BEAM ? s->cos_divergence : -1.0f;
        if (s->kind == PRISM_SOURCE_BEAM && s->radius > 0.0f) {
            float rad = s->radius * sqrtf(prism_rng_uniform(&r)), sin_phi, cos_phi;
            prism_sincos_turn(prism_rng_uniform(&r), &sin_phi, &cos_phi);
            pv3 a = pv3_perpendicular(dir), b = pv3_cross(dir, a);
            pos = pv3_madd(pv3_madd(pos, a, rad * cos_phi), b, rad * sin_phi);
        }
        if (cos_max < 1.0f)
            dir = prism_sample_cone(&r, dir, cos_max);
        pol = prism_sample_polarisation(&r, dir);
        wl = s->wavelength_min;
        if (s->wavelength_max > s->wavelength_min)
            wl += (s->wavelength_max - s->wavelength_min) * prism_rng_uniform(&r);
        t = s->time;
    }
    pv3_store(pos, out->pos);
    pv3_store(dir, out->dir);
    pv3_store(pol, out->pol);
    out->wavelength = wl;
    out->time = t;
    prism_photon_clear(out);
}

#endif
