/* Gensteps made by Prism itself: a muon's straight track through an
 * uploaded geometry, as Cerenkov and scintillation gensteps
 * (prism/device/genstep.h) ready for a GENSTEPS source, so a detector can
 * be tried with the light of a real particle before Geant4 is wired in.
 *
 * Functions: prism_gensteps_muon, prism_gensteps_free,
 *            prism_cerenkov_photons_per_metre. */
#ifndef PRISM_GENSTEPS_H
#define PRISM_GENSTEPS_H

#include <stddef.h>
#include <stdint.h>

#include "context.h"
#include "geometry.h"
#include "result.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The muon's mass, GeV (PDG 2022). */
#define PRISM_MUON_MASS_GEV 0.1056583755
/* Defaults of prism_muon_desc. */
#define PRISM_MUON_MAX_STEP 0.1f         /* m */
#define PRISM_MUON_WAVELENGTH_MIN 200.0f /* nm */
#define PRISM_MUON_WAVELENGTH_MAX 800.0f /* nm */
#define PRISM_MUON_DEDX 2.0f             /* MeV/cm */

/* Defaults (all-zero but position, direction, energy): 0.1 m gensteps, the
 * Cerenkov band 200 to 800 nm, 2 MeV/cm deposited in scintillators, the
 * whole track through the geometry, time 0, seed 0.
 *
 * The track: straight from `position` along `direction`, at the speed of
 * `energy_gev` (the total energy; a mu-, charge -1) all along: the energy
 * lost (about 2 MeV/cm of water) is not taken off, and multiple scattering
 * and secondaries are not followed, so it suits muons of a few GeV and
 * more over detector sizes. Each material crossed (the side of the
 * boundaries it is on, as photons see them) gives, per piece of at most
 * max_step:
 *  - a Cerenkov genstep where beta n > 1 somewhere in the band: mean
 *    photons per metre from the Frank-Tamm formula, dN/dx = 2 pi alpha z^2
 *    integral of (1 - 1/(beta^2 n^2)) d(1/lambda) over the band where beta
 *    n > 1, on the geometry's RINDEX table (prism_cerenkov_photons_per_metre);
 *    photons Poisson-drawn (Geant4's G4Poisson);
 *  - a scintillation genstep where the material's yield (photons/MeV,
 *    prism_material_params) is > 0: mean photons = yield x dE/dx x length,
 *    dE/dx the same `dedx_mev_per_cm` in every scintillator (2 MeV/cm:
 *    minimum ionising in a density of about 1 g/cm^3; Birks quenching
 *    left out), drawn as Geant4's G4Scintillation does (Poisson up to a
 *    mean of 10, else Gaussian of sigma resolution_scale x sqrt(mean)).
 * Gensteps that drew no photon are left out. Geant4 takes the Cerenkov
 * band from the RINDEX table's range; Prism's tables are resampled on 60
 * to 800 nm and hold their end values beyond a property's range, so the
 * default band starts at 200 nm, below which water and glass absorb. */
typedef struct prism_muon_desc {
    float position[3];  /* m */
    float direction[3]; /* need not be normalised; not zero */
    double energy_gev;  /* total energy, above the muon's mass */
    float time;         /* ns at `position` */
    uint64_t seed;      /* the photon counts' draws */
    float max_step;     /* m: the longest genstep; 0 = PRISM_MUON_MAX_STEP */
    float wavelength_min_nm, wavelength_max_nm; /* the Cerenkov band; 0 = 200, 800 */
    float dedx_mev_per_cm;                      /* in scintillators; 0 = 2 */
    float max_length; /* m of track at most; 0 = until it leaves the geometry */
} prism_muon_desc;

/* Gensteps and what they hold. */
typedef struct prism_gensteps {
    float *data;  /* count x 6 x 4 float32 (prism_genstep); prism_gensteps_free */
    size_t count; /* gensteps */
    uint64_t photons, cerenkov_photons, scintillation_photons;
    size_t segments; /* boundaries-to-boundary pieces of track inside a material */
    double length;   /* metres of track inside materials */
} prism_gensteps;

/** A muon's gensteps through `geometry` (its tree read back to the host
 * once, the optics tables it was uploaded with): see prism_muon_desc.
 * Deterministic: the same desc gives the same gensteps, bytes and all.
 * A track that meets no material gives no gensteps (count 0, success).
 * @errors PRISM_ERROR_INVALID_ARGUMENT (NULL geometry/desc/out, a zero or
 *   non-finite direction or position, an energy not above the muon's mass,
 *   a negative or non-finite max_step, max_length or dedx, a band not 0 <
 *   min < max), PRISM_ERROR_OUT_OF_MEMORY, PRISM_ERROR_CUDA (reading the
 *   tree back); reported on the geometry's context.
 * @thread_safety As the geometry's context: one thread at a time.
 * @pointer_lifetime out->data is the caller's until prism_gensteps_free. */
PRISM_API prism_result prism_gensteps_muon(const prism_geometry *geometry,
                                           const prism_muon_desc *desc, prism_gensteps *out);

/** Free out->data and zero *g. Accepts NULL and a zeroed struct.
 * @errors None.
 * @thread_safety Any thread. */
PRISM_API void prism_gensteps_free(prism_gensteps *g);

/** The Frank-Tamm mean number of Cerenkov photons per metre of a particle
 * of charge z (in e) and speed beta in material `material` of the
 * geometry's optics tables, between wavelength_min and wavelength_max nm:
 * 2 pi alpha z^2 times the integral of max(0, 1 - 1/(beta^2 n^2)) over 1/lambda
 * (per metre), n the table's RINDEX, integrated in 1/lambda by the
 * trapezoid rule on 4096 intervals (exact for a constant index). 0 for a
 * material outside the tables.
 * @errors PRISM_ERROR_INVALID_ARGUMENT (NULL geometry/out, beta not in (0,
 *   1], a band not 0 < min < max).
 * @thread_safety Any thread (reads the host copy of the tables). */
PRISM_API prism_result prism_cerenkov_photons_per_metre(const prism_geometry *geometry,
                                                        uint32_t material, double charge,
                                                        double beta, double wavelength_min,
                                                        double wavelength_max, double *out);

#ifdef __cplusplus
}
#endif

#endif
