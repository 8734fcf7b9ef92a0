/* A GENSTEPS source on the host: read, numbered, checked, cut to a call's
 * range (gensteps_source.h). */
#include "gensteps_source.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/backend.h"
#include "engine/memory/internal.h"
#include "engine/upload/geometry_internal.h"
#include "engine/upload/optics_tables.h"

prism_result prism__gensteps_open(prism_context *ctx, const prism_photon_source *s,
                                  const char *what, prism__genstep_run *run)
{
    memset(run, 0, sizeof *run);
    if (s->gensteps == NULL || s->genstep_count == 0)
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                            "%s: a GENSTEPS source without gensteps (%zu of them)", what,
                            s->genstep_count);
    if (s->genstep_count >= UINT32_MAX)
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                            "%s: %zu gensteps: at most 2^32-2 in a source", what, s->genstep_count);
    const size_t n = s->genstep_count, bytes = n * sizeof(prism_genstep);
    run->count = n;
    run->offsets = malloc((n + 1) * sizeof *run->offsets);
    if (run->offsets == NULL)
        return prism__error(ctx, PRISM_ERROR_OUT_OF_MEMORY, "%s: no memory for %zu gensteps", what,
                            n);
    if (ctx->backend == PRISM_BACKEND_CUDA) {
        /* they may be device memory: the backend's copy reads either */
        run->owned = malloc(bytes);
        if (run->owned == NULL) {
            prism__gensteps_close(run);
            return prism__error(ctx, PRISM_ERROR_OUT_OF_MEMORY, "%s: no memory for %zu gensteps",
                                what, n);
        }
        prism_result r = ctx->be->memory->copy(ctx, run->owned, s->gensteps, bytes, NULL, false);
        if (r != PRISM_SUCCESS) {
            prism__gensteps_close(run);
            return prism__error(ctx, r, "%s: the gensteps could not be read", what);
        }
        run->all = run->owned;
    } else {
        run->all = (const prism_genstep *)(const void *)s->gensteps;
    }
    uint64_t total = 0;
    for (size_t k = 0; k < n; k++) {
        run->offsets[k] = total;
        total += run->all[k].photons;
        if (total > PRISM_PROPAGATE_MAX_PHOTON_INDEX) {
            prism__gensteps_close(run);
            return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                                "%s: the gensteps up to %zu hold more than 2^56 photons", what, k);
        }
    }
    run->offsets[n] = total;
    run->total = total;
    return PRISM_SUCCESS;
}

void prism__gensteps_close(prism__genstep_run *run)
{
    free(run->owned);
    free(run->offsets);
    memset(run, 0, sizeof *run);
}

prism_result prism__gensteps_resolve(prism_context *ctx, const prism__genstep_run *run,
                                     uint64_t first, size_t *count, const char *what)
{
    if (first >= run->total)
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                            "%s: the gensteps make %llu photons; photon %llu asked for", what,
                            (unsigned long long)run->total, (unsigned long long)first);
    const uint64_t left = run->total - first;
    if (*count == 0)
        *count = (size_t)left;
    else if ((uint64_t)*count > left)
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                            "%s: photon count %zu from photon %llu, but the gensteps' photon "
                            "counts sum to %llu",
                            what, *count, (unsigned long long)first,
                            (unsigned long long)run->total);
    return PRISM_SUCCESS;
}

void prism__gensteps_range(const prism__genstep_run *run, uint64_t first, uint64_t count,
                           size_t *g0, size_t *g1)
{
    const uint32_t n = (uint32_t)run->count;
    *g0 = first == 0 ? 0 : prism_genstep_find(run->offsets, n, first);
    *g1 = first + count >= run->total ? run->count - 1
                                      : prism_genstep_find(run->offsets, n, first + count - 1);
}

static bool finite_all(const float *v, int n)
{
    for (int i = 0; i < n; i++)
        if (!isfinite(v[i]))
            return false;
    return true;
}

/* What is wrong with genstep g, or NULL. */
static const char *genstep_fault(const prism_genstep *g, uint32_t material_count, char *buf,
                                 size_t size)
{
    if (g->gentype != PRISM_GENSTEP_CERENKOV && g->gentype != PRISM_GENSTEP_SCINTILLATION) {
        snprintf(buf, size, "gentype %u is neither Cerenkov (%d) nor scintillation (%d)",
                 g->gentype, PRISM_GENSTEP_CERENKOV, PRISM_GENSTEP_SCINTILLATION);
        return buf;
    }
    if (g->material >= material_count) {
        snprintf(buf, size, "material %u, the optics tables hold %u material%s", g->material,
                 material_count, material_count == 1 ? "" : "s");
        return buf;
    }
    const float common[10] = {g->pos[0],   g->pos[1],   g->pos[2],      g->time,   g->delta[0],
                              g->delta[1], g->delta[2], g->step_length, g->charge, g->weight};
    if (!finite_all(common, 10) || !isfinite(g->pre_velocity))
        return "a position, time, displacement, length, charge or weight is not finite";
    if (!(g->pre_velocity > 0.0f))
        return "its velocity (quad 3, word 3; m/ns) is not above 0";
    if (!(g->step_length >= 0.0f))
        return "its step length is negative";
    if (g->gentype == PRISM_GENSTEP_CERENKOV) {
        const prism_genstep_cerenkov *c = &g->cerenkov;
        const float v[8] = {c->beta_inverse,  c->wavelength_min, c->wavelength_max,
                            c->max_cos,       c->max_sin2,       c->mean_photons1,
                            c->mean_photons2, c->post_velocity};
        if (!finite_all(v, 8))
            return "a Cerenkov parameter (quads 4 and 5) is not finite";
        if (!(g->delta[0] != 0.0f || g->delta[1] != 0.0f || g->delta[2] != 0.0f))
            return "a Cerenkov step without a displacement (no direction for the cone)";
        if (!(c->beta_inverse > 0.0f))
            return "BetaInverse is not above 0";
        if (!(c->wavelength_min > 0.0f && c->wavelength_min < c->wavelength_max))
            return "its wavelengths are not 0 < Wmin < Wmax (nm)";
        if (!(c->max_sin2 > 0.0f && c->max_sin2 <= 1.0f))
            return "maxSin2 is not in (0, 1]";
        if (!(c->mean_photons1 >= 0.0f && c->mean_photons2 >= 0.0f))
            return "a mean photon count is negative";
        if (!(c->post_velocity > 0.0f))
            return "its velocity at the step's end (quad 5, word 3; m/ns) is not above 0";
    } else {
        const prism_genstep_scintillation *s = &g->scintillation;
        if (!isfinite(s->time) || !isfinite(s->wavelength))
            return "its ScintillationTime or wavelength is not finite";
        if (!(s->time >= 0.0f))
            return "its ScintillationTime is negative";
        if (!(s->wavelength >= 0.0f))
            return "its wavelength is negative";
    }
    return NULL;
}

prism_result prism__gensteps_check(prism_context *ctx, const prism__genstep_run *run, size_t g0,
                                   size_t g1, uint32_t material_count, const char *what)
{
    char buf[160];
    for (size_t k = g0; k <= g1 && k < run->count; k++) {
        const char *fault = genstep_fault(&run->all[k], material_count, buf, sizeof buf);
        if (fault != NULL)
            return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT, "%s: genstep %zu: %s", what, k,
                                fault);
    }
    return PRISM_SUCCESS;
}

prism_result prism__gensteps_run_source(prism_context *ctx, const prism_geometry *geometry,
                                        const prism_photon_source *in, uint64_t desc_first,
                                        prism_photon_source *out, const char *what)
{
    *out = *in;
    if (in->kind != PRISM_SOURCE_GENSTEPS)
        return PRISM_SUCCESS;
    prism__genstep_run run;
    prism_result r = prism__gensteps_open(ctx, in, what, &run);
    if (r != PRISM_SUCCESS)
        return r;
    r = prism__gensteps_resolve(ctx, &run, desc_first, &out->count, what);
    const prism_optics_view *o = prism__optics_view(prism__geometry_optics(geometry));
    if (r == PRISM_SUCCESS)
        r = prism__gensteps_check(ctx, &run, 0, run.count - 1, o != NULL ? o->material_count : 0,
                                  what);
    prism__gensteps_close(&run);
    return r;
}

prism_result prism__gensteps_run_sources(prism_context *const *contexts,
                                         const prism_geometry *const *geometries, size_t n,
                                         const prism_photon_source *in, uint64_t desc_first,
                                         prism_photon_source *out, const char *what)
{
    if (in == NULL)
        return PRISM_SUCCESS;
    *out = *in;
    if (in->kind != PRISM_SOURCE_GENSTEPS || contexts == NULL || geometries == NULL || n == 0 ||
        contexts[0] == NULL || geometries[0] == NULL)
        return PRISM_SUCCESS;
    return prism__gensteps_run_source(contexts[0], geometries[0], in, desc_first, out, what);
}
