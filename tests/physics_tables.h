/* Optics tables for the physics suites, written in place: a surface of
 * Geant4's glisur or unified model with its constants, a material's
 * reemission (REEMISSIONPROB, decay constants, an emission spectrum). The
 * scene loader's tables (engine/upload/optics.c) fill these from G4DAE
 * files; the suites set them directly so that each test states its own
 * constants. On the CUDA backend the tables are copied to the device
 * again (pt_reupload). */
#ifndef PHYSICS_TABLES_H
#define PHYSICS_TABLES_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "engine/backend.h"
#include "engine/context_internal.h"
#include "engine/upload/optics_tables.h"
#include "prism/device/surface_model.h"

/* The rows of a surface as one struct: (1-R)E and (1-R)(1-E) come from
 * reflectivity R and efficiency E, as engine/upload/optics.c builds them. */
typedef struct pt_surface {
    uint32_t model, type, finish;
    float sigma_alpha;
    float reflectivity, efficiency;
    float spike, lobe, back; /* unified lobe constants */
    float rindex;            /* back-painted layer; 0 = the next material's */
} pt_surface;

static inline void pt_surface_rows(const pt_surface *s, float *rows, size_t n)
{
    float v[PRISM_SURF_COUNT_] = {0};
    v[PRISM_SURF_DETECT] = (1.0f - s->reflectivity) * s->efficiency;
    v[PRISM_SURF_ABSORB] = (1.0f - s->reflectivity) * (1.0f - s->efficiency);
    v[PRISM_SURF_SPECULAR_LOBE] = s->lobe;
    v[PRISM_SURF_SPECULAR_SPIKE] = s->spike;
    v[PRISM_SURF_BACKSCATTER] = s->back;
    v[PRISM_SURF_RINDEX] = s->rindex;
    for (int k = 0; k < PRISM_SURF_COUNT_; k++)
        for (size_t i = 0; i < n; i++)
            rows[(size_t)k * n + i] = v[k];
}

static inline prism_surface_params pt_params(const pt_surface *s)
{
    prism_surface_params p;
    p.model = s->model;
    p.type = s->type;
    p.finish = s->finish;
    p.sigma_alpha = s->sigma_alpha;
    return p;
}

/* A view of the host copy of `o` (on CUDA o->view points at the device's). */
static inline prism_optics_view pt_host_view(const prism_optics *o)
{
    prism_optics_view h = o->view;
    prism__optics_layout(&h, o->host);
    return h;
}

/* Surface `index` of built tables `o` (host copy) made `s`. */
static inline void pt_set_surface(prism_optics *o, uint32_t index, const pt_surface *s)
{
    prism_optics_view h = pt_host_view(o);
    const size_t n = h.wavelength_count;
    float *rows = (float *)(uintptr_t)(h.surfaces + (size_t)index * PRISM_SURF_COUNT_ * n);
    pt_surface_rows(s, rows, n);
    prism_surface_params *p = (prism_surface_params *)(uintptr_t)(h.surface_params + index);
    *p = pt_params(s);
}

/* The triangular emission spectrum of the suites: density rising linearly
 * from 0 at lo to its peak at hi, CDF ((l - lo) / (hi - lo))^2, so the
 * inverse CDF is lo + (hi - lo) sqrt(u): mean lo + 2/3 (hi - lo), quartile
 * points lo + (hi - lo) sqrt(k / 4). */
#define PT_EMIT_LO 400.0f
#define PT_EMIT_HI 500.0f

/* Material `m` of built tables `o`: reemission probability `prob` at every
 * wavelength, decay constants, the triangular spectrum (has_spectrum 0
 * leaves the spectrum out). */
static inline void pt_set_reemission(prism_optics *o, uint32_t m, float prob, float fast,
                                     float slow, float ratio, uint32_t has_spectrum)
{
    prism_optics_view h = pt_host_view(o);
    const size_t n = h.wavelength_count;
    float *t = (float *)(uintptr_t)(h.materials + (size_t)m * PRISM_MAT_COUNT_ * n);
    for (size_t i = 0; i < n; i++)
        t[PRISM_MAT_REEMISSIONPROB * n + i] = prob;
    prism_material_params *p = (prism_material_params *)(uintptr_t)(h.material_params + m);
    memset(p, 0, sizeof *p);
    p->resolution_scale = 1.0f;
    p->time_fast = fast;
    p->time_slow = slow;
    p->yield_ratio = ratio;
    p->has_spectrum = has_spectrum;
    float *icdf = (float *)(uintptr_t)(h.emission_icdf + (size_t)m * PRISM_OPTICS_ICDF_COUNT);
    for (unsigned k = 0; k < PRISM_OPTICS_ICDF_COUNT; k++)
        icdf[k] = PT_EMIT_LO + (PT_EMIT_HI - PT_EMIT_LO) *
                                   (float)sqrt((double)k / (PRISM_OPTICS_ICDF_COUNT - 1u));
}

/* After pt_set_*: the device copy made again from the host copy (CUDA);
 * nothing to do on the host backend, whose kernels read the host copy. */
static inline prism_result pt_reupload(prism_context *ctx, prism_optics *o)
{
    if (ctx->be->optics_upload == NULL)
        return PRISM_SUCCESS;
    if (ctx->be->optics_release != NULL)
        ctx->be->optics_release(o);
    return ctx->be->optics_upload(ctx, o);
}

#endif
