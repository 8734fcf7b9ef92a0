/* Gensteps: what a charged particle's step leaves for the optical photons
 * it makes, in Opticks's layout (sysrap/scerenkov.h, sysrap/sscint.h), so
 * that the photons are generated where they are propagated and nothing
 * photon-sized crosses PCIe. A genstep is 6 quads of 4 32-bit words, an
 * array (N, 6, 4) of float32 as Opticks writes it (the integer words stored
 * bit for bit, as in prism_photon):
 *
 *   quad  words
 *   0     gentype, track id, material index, photon count   (int32 / uint32 bits)
 *   1     x, y, z of the step's start (m), its time t0 (ns)
 *   2     dx, dy, dz: the step's displacement (m, not normalised), step length (m)
 *   3     particle code (int32 bits, PDG; not read), charge (e), weight (not
 *         read), velocity at the step's start (m/ns: Opticks's preVelocity,
 *         Geant4's G4StepPoint::GetVelocity; the scintillation genstep's
 *         meanVelocity)
 *   Cerenkov (gentype PRISM_GENSTEP_CERENKOV):
 *   4     BetaInverse (1/beta), Wmin, Wmax (nm: the wavelength range, Opticks's
 *         newer form of Geant4's Pmin/Pmax), maxCos (BetaInverse / nMax; not read)
 *   5     maxSin2 (1 - maxCos^2, the rejection bound), MeanNumberOfPhotons1 and 2
 *         (Geant4's mean photon counts at the step's start and end), velocity at
 *         the step's end (m/ns)
 *   Scintillation (gentype PRISM_GENSTEP_SCINTILLATION):
 *   4     component (int32 bits, Opticks's scnt; not read), fallback wavelength
 *         (nm; Prism's: see below), 0, 0
 *   5     ScintillationTime (ns), 0, 0, 0
 *
 * Where Prism differs from Opticks: lengths are metres and velocities metres
 * per nanosecond (Opticks: mm, mm/ns); the material index is the scene's
 * (prism_scene.materials, the optics tables' index), not a Geant4 material
 * line; gentypes are Opticks's current generic values (OpticksGenstep.h:
 * CERENKOV 15, SCINTILLATION 16), the older per-process codes are refused.
 * A scintillation genstep's ScintillationTime > 0 is one decay constant
 * (Opticks's one genstep per component); 0 draws the material's two
 * components, time_fast with probability yield_ratio else time_slow
 * (prism_material_params). A material without an emission spectrum
 * (has_spectrum 0) emits at quad 4's second word when it is > 0, else at
 * 420 nm (prism_photon_source's default).
 *
 * Photon i of a run is made from the genstep whose photons hold it (the
 * prefix sums of the photon counts), with Philox stream (seed, i, 0,
 * GENERATE): the same photon whatever the batch, the device or the rank.
 * Only + - * / sqrtf fminf fmaxf and kmath.h's functions are used, so the
 * exact CUDA kernels make the host backend's bits. */
#ifndef PRISM_KERNELS_GENSTEP_H
#define PRISM_KERNELS_GENSTEP_H

#include <stdint.h>

#include "prism/export.h"

#include "kmath.h"
#include "optics_view.h"
#include "philox.h"
#include "prism_hd.h"
#include "vec.h"

enum { PRISM_GENSTEP_CERENKOV = 15, PRISM_GENSTEP_SCINTILLATION = 16 };

/* Floats a genstep, and the default wavelength of a scintillator without a
 * spectrum. */
#define PRISM_GENSTEP_FLOATS 24
#define PRISM_GENSTEP_DEFAULT_WAVELENGTH 420.0f
/* Rejection loops give up after this many tries (a genstep whose bounds
 * admit no sample: its photon keeps the last one). Opticks stops at 100. */
#define PRISM_GENSTEP_MAX_TRIES 1000

typedef struct prism_genstep_cerenkov {
    float beta_inverse;
    float wavelength_min, wavelength_max; /* nm */
    float max_cos;
    float max_sin2;
    float mean_photons1, mean_photons2;
    float post_velocity; /* m/ns */
} prism_genstep_cerenkov;

typedef struct prism_genstep_scintillation {
    int32_t component;
    float wavelength; /* nm, used without an emission spectrum; 0 = 420 */
    float reserved4[2];
    float time; /* ns: ScintillationTime; 0 = the material's two components */
    float reserved5[3];
} prism_genstep_scintillation;

/* One genstep: 96 bytes, the (6, 4) float32 block of the array. */
typedef struct prism_genstep {
    uint32_t gentype;
    int32_t track_id;
    uint32_t material;
    uint32_t photons;
    float pos[3];
    float time;
    float delta[3];
    float step_length;
    int32_t code;
    float charge;
    float weight;
    float pre_velocity;
    union {
        prism_genstep_cerenkov cerenkov;
        prism_genstep_scintillation scintillation;
    };
} prism_genstep;

PRISM_STATIC_ASSERT(sizeof(prism_genstep) == PRISM_GENSTEP_FLOATS * 4,
                    "a genstep is 6 quads of 4 words");

/* The genstep of run photon `index`: the last k in [0, n) with
 * offsets[k] <= index (offsets: n + 1 run indices, genstep k's photons
 * [offsets[k], offsets[k + 1]); gensteps without photons are passed over). */
PRISM_HD uint32_t prism_genstep_find(const uint64_t *offsets, uint32_t n, uint64_t index)
{
    uint32_t lo = 0, hi = n; /* offsets[lo] <= index < offsets[hi] */
    while (hi - lo > 1u) {
        uint32_t mid = lo + (hi - lo) / 2u;
        if (offsets[mid] <= index)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* A photon as a genstep makes it. */
typedef struct prism_genstep_photon {
    pv3 pos, dir, pol;
    float wavelength, time;
} prism_genstep_photon;

/* Two unit vectors a, b with (a, b, axis) right-handed and orthonormal. */
PRISM_HD void prism_genstep_frame(pv3 axis, pv3 *a, pv3 *b)
{
    *a = pv3_perpendicular(axis);
    *b = pv3_cross(axis, *a);
}

/* Cerenkov (Geant4's G4Cerenkov::PostStepDoIt, Opticks's qcerenkov.h): the
 * wavelength uniform in photon energy between the limits, kept with
 * probability sin^2(theta) / maxSin2 where cos(theta) = BetaInverse / n
 * (the Frank-Tamm weight); the direction on the cone of that angle around
 * the step; the polarisation in the plane of the step and the photon,
 * perpendicular to the photon (Geant4's (cos t cos p, cos t sin p, -sin t)
 * in the step's frame); the place along the step drawn against the mean
 * photon count's linear change from its start to its end, the time from
 * the mean of the velocities there. */
PRISM_HD prism_genstep_photon prism_genstep_cerenkov_photon(const prism_genstep *gs,
                                                            const prism_optics_view *o,
                                                            prism_rng *r)
{
    const prism_genstep_cerenkov *ck = &gs->cerenkov;
    const pv3 axis = pv3_normalize(pv3_load(gs->delta));
    float wl = ck->wavelength_min, cos_t = 1.0f, sin2_t = 0.0f;
    for (int tries = 0; tries < PRISM_GENSTEP_MAX_TRIES; tries++) {
        /* uniform w in [Wmin, Wmax] makes Wmin Wmax / w uniform in 1/lambda */
        const float w = ck->wavelength_min +
                        prism_rng_uniform(r) * (ck->wavelength_max - ck->wavelength_min);
        wl = ck->wavelength_min * ck->wavelength_max / w;
        const float n = prism_optics_material(o, gs->material, wl).rindex;
        cos_t = ck->beta_inverse / n;
        sin2_t = fmaxf(0.0f, (1.0f - cos_t) * (1.0f + cos_t));
        if (prism_rng_uniform(r) * ck->max_sin2 <= sin2_t)
            break;
    }
    prism_genstep_photon p;
    const float sin_t = sqrtf(sin2_t);
    float sin_p, cos_p;
    prism_sincos_turn(prism_rng_uniform(r), &sin_p, &cos_p);
    pv3 a, b;
    prism_genstep_frame(axis, &a, &b);
    const pv3 radial = pv3_madd(pv3_scale(a, cos_p), b, sin_p);
    p.dir = pv3_normalize(pv3_madd(pv3_scale(radial, sin_t), axis, cos_t));
    p.pol = pv3_normalize(pv3_madd(pv3_scale(radial, cos_t), axis, -sin_t));
    p.wavelength = wl;
    const float m1 = ck->mean_photons1, m2 = ck->mean_photons2;
    const float most = fmaxf(m1, m2), change = m1 - m2;
    float f = 0.5f;
    for (int tries = 0; tries < PRISM_GENSTEP_MAX_TRIES; tries++) {
        f = prism_rng_uniform(r);
        if (prism_rng_uniform(r) * most <= m1 - f * change)
            break;
    }
    const float mid_velocity = gs->pre_velocity + f * (ck->post_velocity - gs->pre_velocity) * 0.5f;
    p.pos = pv3_madd(pv3_load(gs->pos), pv3_load(gs->delta), f);
    p.time = gs->time + f * gs->step_length / mid_velocity;
    return p;
}

/* Scintillation (Geant4's G4Scintillation, Opticks's qscint.h): isotropic,
 * a random polarisation perpendicular to the direction, the wavelength
 * from the material's emission spectrum, uniform along the step (at its
 * end for a neutral particle, as Opticks does), emitted after the time to
 * get there plus an exponential decay. */
PRISM_HD prism_genstep_photon prism_genstep_scintillation_photon(const prism_genstep *gs,
                                                                 const prism_optics_view *o,
                                                                 prism_rng *r)
{
    const prism_genstep_scintillation *sc = &gs->scintillation;
    prism_genstep_photon p;
    const float cos_t = 1.0f - 2.0f * prism_rng_uniform(r);
    const float sin_t = sqrtf(fmaxf(0.0f, (1.0f - cos_t) * (1.0f + cos_t)));
    float sin_p, cos_p;
    prism_sincos_turn(prism_rng_uniform(r), &sin_p, &cos_p);
    p.dir = pv3_make(sin_t * cos_p, sin_t * sin_p, cos_t);
    pv3 a, b;
    prism_genstep_frame(p.dir, &a, &b);
    prism_sincos_turn(prism_rng_uniform(r), &sin_p, &cos_p);
    p.pol = pv3_normalize(pv3_madd(pv3_scale(a, cos_p), b, sin_p));
    const prism_material_params *mp = prism_optics_material_params(o, gs->material);
    const float u_wl = prism_rng_uniform(r);
    if (mp != 0 && mp->has_spectrum)
        p.wavelength = prism_optics_emission_wavelength(o, gs->material, u_wl);
    else
        p.wavelength = sc->wavelength > 0.0f ? sc->wavelength : PRISM_GENSTEP_DEFAULT_WAVELENGTH;
    const float f = gs->charge == 0.0f ? 1.0f : prism_rng_uniform(r);
    p.pos = pv3_madd(pv3_load(gs->pos), pv3_load(gs->delta), f);
    const float u_component = prism_rng_uniform(r);
    float tau = sc->time;
    if (!(tau > 0.0f) && mp != 0)
        tau = u_component < mp->yield_ratio ? mp->time_fast : mp->time_slow;
    const float decay = tau > 0.0f ? -tau * prism_logf(prism_rng_uniform(r)) : 0.0f;
    p.time = gs->time + f * gs->step_length / gs->pre_velocity + decay;
    return p;
}

PRISM_HD prism_genstep_photon prism_genstep_photon_make(const prism_genstep *gs,
                                                        const prism_optics_view *o, prism_rng *r)
{
    return gs->gentype == PRISM_GENSTEP_CERENKOV ? prism_genstep_cerenkov_photon(gs, o, r)
                                                 : prism_genstep_scintillation_photon(gs, o, r);
}

#endif
