/* The optics tables' host side: resampling a scene's material and surface
 * properties onto the kernels' uniform wavelength grid (Chroma's
 * standard_wavelengths: 60 to 800 nm in 20 nm steps), and the view the
 * kernels get. Built by optics.c, placed on the device by engine/cuda/optics.c. */
#ifndef PRISM_OPTICS_TABLES_H
#define PRISM_OPTICS_TABLES_H

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
 * (PRISM_OPTICS_ICDF_COUNT floats). */
void prism__optics_material_params(const prism_material *m, prism_material_params *params,
                                   float *icdf);
/* Fill `table` (PRISM_SURF_COUNT_ x n floats) and `params` for surface s; a
 * surface that changes nothing (no probabilities given) gets detect = -1,
 * which the kernels read as "no surface": a bare Fresnel boundary. */
void prism__optics_resample_surface(const prism_surface *s, float *table,
                                    prism_surface_params *params);
/* Point the view's arrays into one block of floats laid out as the host
 * copy is (material and surface counts already set): materials, surfaces,
 * emission CDFs, material parameters, surface parameters. */
void prism__optics_layout(prism_optics_view *v, const float *base);

/* The CUDA backend's optics_upload and optics_release (engine/cuda/optics.c):
 * copy optics->host to device memory and point optics->view at it. */
prism_result prism__cuda_optics_upload(prism_context *ctx, prism_optics *optics);
void prism__cuda_optics_release(prism_optics *optics);

#endif
