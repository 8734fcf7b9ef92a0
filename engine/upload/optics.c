/* Optics tables: every material's RINDEX, ABSLENGTH and RAYLEIGH and every
 * surface's detect / absorb / reflect probabilities, resampled onto one
 * wavelength grid so the kernels interpolate with one multiply, as Chroma
 * did with its standard wavelengths. Property tables are interpolated
 * linearly and held constant beyond their ends. */
#include "optics_tables.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/backend.h"

static float grid_wavelength(unsigned i)
{
    return PRISM_OPTICS_WAVELENGTH_START + PRISM_OPTICS_WAVELENGTH_STEP * (float)i;
}

static float property_at(const prism_property *p, float wl)
{
    if (p->count == 0)
        return 0.0f;
    if (wl <= p->wavelength_nm[0])
        return p->value[0];
    for (size_t i = 1; i < p->count; i++) {
        if (wl <= p->wavelength_nm[i]) {
            float w0 = p->wavelength_nm[i - 1], w1 = p->wavelength_nm[i];
            float f = w1 > w0 ? (wl - w0) / (w1 - w0) : 1.0f;
            return p->value[i - 1] + (p->value[i] - p->value[i - 1]) * f;
        }
    }
    return p->value[p->count - 1];
}

static const prism_property *find(const prism_property *props, size_t n, const char *a,
                                  const char *b)
{
    for (size_t i = 0; i < n; i++)
        if (props[i].name != NULL && props[i].count > 0 &&
            (strcmp(props[i].name, a) == 0 || (b != NULL && strcmp(props[i].name, b) == 0)))
            return &props[i];
    return NULL;
}

/* Row of `n` grid values of `p`, or `fallback` when p is NULL; lengths
 * that are zero or negative mean "never" (Geant4 files use 0 for unset). */
static void fill_row(const prism_property *p, float fallback, bool length, float *row)
{
    for (unsigned i = 0; i < PRISM_OPTICS_WAVELENGTH_COUNT; i++) {
        float v = p != NULL ? property_at(p, grid_wavelength(i)) : fallback;
        if (length && !(v > 0.0f && v < PRISM_LENGTH_INFINITE))
            v = PRISM_LENGTH_INFINITE;
        row[i] = v;
    }
}

static float clamp01(float v)
{
    return v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v);
}

void prism__optics_resample_material(const prism_material *m, float *table)
{
    const unsigned n = PRISM_OPTICS_WAVELENGTH_COUNT;
    const prism_property *props = m != NULL ? m->properties : NULL;
    size_t count = m != NULL ? m->properties_count : 0;
    float *rindex = table + PRISM_MAT_RINDEX * n;
    fill_row(find(props, count, "RINDEX", "refractive_index"), 1.0f, false, rindex);
    for (unsigned i = 0; i < n; i++) /* an index of 0 or less (unset) would give NaN angles */
        if (!(rindex[i] > 0.0f && rindex[i] < 1e6f))
            rindex[i] = 1.0f;
    fill_row(find(props, count, "ABSLENGTH", "absorption_length"), PRISM_LENGTH_INFINITE, true,
             table + PRISM_MAT_ABSLENGTH * n);
    fill_row(find(props, count, "RAYLEIGH", "scattering_length"), PRISM_LENGTH_INFINITE, true,
             table + PRISM_MAT_RAYLEIGH * n);
    float *reemit = table + PRISM_MAT_REEMISSIONPROB * n;
    fill_row(find(props, count, "REEMISSIONPROB", NULL), 0.0f, false, reemit);
    for (unsigned i = 0; i < n; i++)
        reemit[i] = clamp01(reemit[i]);
}

/* Chroma's own names, when a file carries them: taken as given. */
static bool resample_chroma_surface(const prism_surface *s, float *table)
{
    static const char *const names[] = {"detect", "absorb", "reflect_specular", "reflect_diffuse"};
    const unsigned n = PRISM_OPTICS_WAVELENGTH_COUNT;
    bool any = false;
    for (int k = 0; k < 4; k++) {
        const prism_property *p = find(s->properties, s->properties_count, names[k], NULL);
        any = any || p != NULL;
        fill_row(p, 0.0f, false, table + k * n);
    }
    return any;
}

/* Geant4's: a photon is reflected with REFLECTIVITY (default 1), otherwise
 * absorbed and then detected with EFFICIENCY (default 0); polished finishes
 * (0..2) reflect specularly, ground ones (3..5) diffusely. Whatever Geant4
 * would hand to its dielectric_dielectric Fresnel model is transmitted. */
void prism__optics_resample_surface(const prism_surface *s, float *table,
                                    prism_surface_params *params)
{
    const unsigned n = PRISM_OPTICS_WAVELENGTH_COUNT;
    params->model = PRISM_SURFACE_MODEL_CHROMA;
    params->type = (uint32_t)s->type;
    params->finish = (uint32_t)s->finish;
    params->sigma_alpha = (float)s->value;
    if (resample_chroma_surface(s, table))
        return;
    const prism_property *refl = find(s->properties, s->properties_count, "REFLECTIVITY", NULL);
    const prism_property *eff = find(s->properties, s->properties_count, "EFFICIENCY", NULL);
    bool metal = s->type == 0;
    if (refl == NULL && eff == NULL && !metal) {
        table[PRISM_SURF_DETECT * n] = -1.0f; /* changes nothing: bare boundary */
        return;
    }
    bool ground = s->finish >= 3;
    for (unsigned i = 0; i < n; i++) {
        float r = clamp01(refl != NULL ? property_at(refl, grid_wavelength(i)) : 1.0f);
        float e = clamp01(eff != NULL ? property_at(eff, grid_wavelength(i)) : 0.0f);
        table[PRISM_SURF_DETECT * n + i] = (1.0f - r) * e;
        table[PRISM_SURF_ABSORB * n + i] = (1.0f - r) * (1.0f - e);
        table[PRISM_SURF_REFLECT_SPECULAR * n + i] = ground ? 0.0f : r;
        table[PRISM_SURF_REFLECT_DIFFUSE * n + i] = ground ? r : 0.0f;
    }
}

/* Floats the tables of `mats` materials and `surfs` surfaces take, in the
 * order of prism__optics_layout. */
static size_t layout_floats(size_t mats, size_t surfs)
{
    const size_t n = PRISM_OPTICS_WAVELENGTH_COUNT;
    return mats * PRISM_MAT_COUNT_ * n + surfs * PRISM_SURF_COUNT_ * n +
           mats * PRISM_OPTICS_ICDF_COUNT + mats * (sizeof(prism_material_params) / sizeof(float)) +
           surfs * (sizeof(prism_surface_params) / sizeof(float));
}

void prism__optics_layout(prism_optics_view *v, const float *base)
{
    const size_t n = PRISM_OPTICS_WAVELENGTH_COUNT;
    size_t mats = v->material_count, surfs = v->surface_count;
    const float *p = base;
    v->materials = p;
    p += mats * PRISM_MAT_COUNT_ * n;
    v->surfaces = p;
    p += surfs * PRISM_SURF_COUNT_ * n;
    v->emission_icdf = p;
    p += mats * PRISM_OPTICS_ICDF_COUNT;
    v->material_params = (const prism_material_params *)(const void *)p;
    p += mats * (sizeof(prism_material_params) / sizeof(float));
    v->surface_params = (const prism_surface_params *)(const void *)p;
}

PRISM_STATIC_ASSERT(sizeof(prism_material_params) % sizeof(float) == 0 &&
                        sizeof(prism_surface_params) % sizeof(float) == 0,
                    "the parameter structs pack into the float block");

void prism__optics_material_params(const prism_material *m, prism_material_params *params,
                                   float *icdf)
{
    (void)m;
    (void)icdf;
    memset(params, 0, sizeof *params);
    params->resolution_scale = 1.0f;
}

static prism_result build_host(prism_context *ctx, const prism_scene *scene, prism_optics *o)
{
    const size_t n = PRISM_OPTICS_WAVELENGTH_COUNT;
    size_t mats = scene->materials_count, surfs = scene->surfaces_count;
    if (mats >= PRISM_NO_MATERIAL || surfs >= UINT32_MAX)
        return prism__error(ctx, PRISM_ERROR_LIMIT,
                            "optics: %zu materials, %zu surfaces: at most 65534 materials", mats,
                            surfs);
    o->host_floats = layout_floats(mats, surfs);
    o->host = calloc(o->host_floats > 0 ? o->host_floats : 1, sizeof(float));
    if (o->host == NULL)
        return prism__error(ctx, PRISM_ERROR_OUT_OF_MEMORY, "optics: %zu floats", o->host_floats);
    o->view.wavelength_start = PRISM_OPTICS_WAVELENGTH_START;
    o->view.wavelength_step = PRISM_OPTICS_WAVELENGTH_STEP;
    o->view.wavelength_count = (uint32_t)n;
    o->view.material_count = (uint32_t)mats;
    o->view.surface_count = (uint32_t)surfs;
    prism__optics_layout(&o->view, o->host);
    for (size_t m = 0; m < mats; m++) {
        prism__optics_resample_material(&scene->materials[m], o->host + m * PRISM_MAT_COUNT_ * n);
        prism__optics_material_params(
            &scene->materials[m], (prism_material_params *)(void *)&o->view.material_params[m],
            (float *)(void *)(o->view.emission_icdf + m * PRISM_OPTICS_ICDF_COUNT));
    }
    float *surf = o->host + mats * PRISM_MAT_COUNT_ * n;
    for (size_t s = 0; s < surfs; s++)
        prism__optics_resample_surface(&scene->surfaces[s], surf + s * PRISM_SURF_COUNT_ * n,
                                       (prism_surface_params *)(void *)&o->view.surface_params[s]);
    return PRISM_SUCCESS;
}

prism_result prism__optics_create(prism_context *ctx, const prism_scene *scene, prism_optics **out)
{
    if (out == NULL)
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT, "optics: NULL out");
    *out = NULL;
    if (scene == NULL)
        return PRISM_SUCCESS;
    prism_optics *o = calloc(1, sizeof *o);
    if (o == NULL)
        return prism__error(ctx, PRISM_ERROR_OUT_OF_MEMORY, "optics: no memory");
    prism_result r = build_host(ctx, scene, o);
    if (r == PRISM_SUCCESS && ctx != NULL && ctx->be->optics_upload != NULL)
        r = ctx->be->optics_upload(ctx, o);
    if (r != PRISM_SUCCESS) {
        prism__optics_destroy(ctx, o);
        return r;
    }
    *out = o;
    return PRISM_SUCCESS;
}

void prism__optics_destroy(prism_context *ctx, prism_optics *optics)
{
    if (optics == NULL)
        return;
    if (ctx != NULL && ctx->be->optics_release != NULL)
        ctx->be->optics_release(optics);
    free(optics->host);
    free(optics);
}

const prism_optics_view *prism__optics_view(const prism_optics *optics)
{
    return optics != NULL ? &optics->view : NULL;
}
