/* The optics tables' host side: resampling a scene's material and surface
 * properties onto the kernels' uniform wavelength grid (Chroma's
 * standard_wavelengths: 60 to 800 nm in 20 nm steps), and the view the
 * kernels get. Built by optics.c, placed on the device by engine/cuda/optics.c. */
#ifndef PRISM_OPTICS_TABLES_H
#define PRISM_OPTICS_TABLES_H

#include <stdbool.h>

#include "prism/device/optics_view.h"
#include "optics.h"

#define PRISM_OPTICS_WAVELENGTH_START 60.0f
#define PRISM_OPTICS_WAVELENGTH_STEP 20.0f
#define PRISM_OPTICS_WAVELENGTH_COUNT 38u

struct prism_optics {
    prism_optics_view view; /* pointers the kernels read (device or host) */
    float *host;            /* materials then surfaces, on the heap */
    size_t host_floats;
    void *device_buffer; /* prism_buffer * holding them on CUDA, else NULL */
};

/* The view the kernels get; NULL optics gives NULL (vacuum everywhere). */
const prism_optics_view *prism__optics_view(const prism_optics *optics);

/* Fill `table` (PRISM_MAT_COUNT_ x n floats) for material m, on the grid. */
void prism__optics_resample_material(const prism_material *m, float *table);
/* Fill material m's scintillation constants and its inverse emission CDF
 * (PRISM_OPTICS_ICDF_COUNT floats; zeros without a spectrum). Constants:
 * SCINTILLATIONYIELD, RESOLUTIONSCALE (default 1), FASTTIMECONSTANT or
 * SCINTILLATIONTIMECONSTANT1, SLOWTIMECONSTANT or SCINTILLATIONTIMECONSTANT2
 * (one given: both), YIELDRATIO or Geant4 11's relative SCINTILLATIONYIELD1/2
 * (default 1). The spectrum: FASTCOMPONENT or SCINTILLATIONCOMPONENT1,
 * SLOWCOMPONENT or SCINTILLATIONCOMPONENT2, each a density per unit photon
 * energy (Geant4's meaning), normalised, the two summed with weights
 * yield_ratio and 1 - yield_ratio. A yield without a spectrum becomes 0.
 * What it cannot use (negative values, a table that is no spectrum) it
 * logs as a warning on ctx (NULL: silent), naming the material. */
void prism__optics_material_params(const prism_context *ctx, const prism_material *m,
                                   prism_material_params *params, float *icdf);
/* Fill `table` (PRISM_SURF_COUNT_ x n floats) and `params` for surface s.
 * Chroma's names (detect, absorb, reflect_*) are taken as given; otherwise
 * Geant4's glisur or unified model with REFLECTIVITY, EFFICIENCY, the
 * unified lobe constants and a backpainted layer's RINDEX. A surface that
 * changes nothing (polished dielectric_dielectric that never absorbs) and
 * one whose model, type or finish Prism lacks (logged on ctx, naming it)
 * get detect = -1, which the kernels read as "no surface": a bare Fresnel
 * boundary. */
void prism__optics_resample_surface(const prism_context *ctx, const prism_surface *s, float *table,
                                    prism_surface_params *params);

/* How Prism takes a surface. */
typedef enum prism_optics_surface_support {
    PRISM_OPTICS_SURFACE_CHROMA,     /* Chroma's probabilities, as given */
    PRISM_OPTICS_SURFACE_GEANT4,     /* glisur or unified; metal or dielectric; finish 0-5 */
    PRISM_OPTICS_SURFACE_UNSUPPORTED /* anything else: a bare boundary */
} prism_optics_surface_support;
prism_optics_surface_support prism__optics_surface_support(const prism_surface *s);
/* Whether the tables read the property `name` of material m (the
 * scintillation and reemission ones only with an emission spectrum) or of
 * surface s (as s is taken: a CHROMA surface reads only Chroma's names, an
 * unsupported one nothing); prism-info lists the others as ignored. */
bool prism__optics_material_uses(const prism_material *m, const char *name);
bool prism__optics_surface_uses(const prism_surface *s, const char *name);
/* Geant4's names of the enum values a G4DAE file writes. */
const char *prism__optics_model_name(int model);
const char *prism__optics_type_name(int type);
const char *prism__optics_finish_name(int finish);

/* Point the view's arrays into one block of floats laid out as the host
 * copy is (material and surface counts already set): materials, surfaces,
 * emission CDFs, material parameters, surface parameters. */
void prism__optics_layout(prism_optics_view *v, const float *base);

/* The CUDA backend's optics_upload and optics_release (engine/cuda/optics.c):
 * copy optics->host to device memory and point optics->view at it. */
prism_result prism__cuda_optics_upload(prism_context *ctx, prism_optics *optics);
void prism__cuda_optics_release(prism_optics *optics);

#endif
