/* Optics tables: every material's RINDEX, ABSLENGTH, RAYLEIGH and
 * REEMISSIONPROB and every surface's rows, resampled onto one wavelength
 * grid so the kernels interpolate with one multiply, as Chroma did with its
 * standard wavelengths; per material its scintillation constants and the
 * inverse CDF of its emission spectrum, per surface its Geant4 model.
 * Property tables are interpolated linearly and held constant beyond their
 * ends (emission spectra excepted: nothing is emitted outside them). */
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

static const char *name_of(const char *name)
{
    return name != NULL ? name : "";
}

static float clamp01(float v)
{
    return !(v > 0.0f) ? 0.0f : (v > 1.0f ? 1.0f : v); /* NaN: 0 */
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
static const char *const chroma_names[] = {"detect", "absorb", "reflect_specular",
                                           "reflect_diffuse"};

static bool has_chroma_names(const prism_surface *s)
{
    for (int k = 0; k < 4; k++)
        if (find(s->properties, s->properties_count, chroma_names[k], NULL) != NULL)
            return true;
    return false;
}

static void resample_chroma_surface(const prism_surface *s, float *table)
{
    const unsigned n = PRISM_OPTICS_WAVELENGTH_COUNT;
    for (int k = 0; k < 4; k++)
        fill_row(find(s->properties, s->properties_count, chroma_names[k], NULL), 0.0f, false,
                 table + k * n);
}

const char *prism__optics_model_name(int model)
{
    static const char *const names[] = {"glisur", "unified", "LUT", "DAVIS", "dichroic"};
    return model >= 0 && model < 5 ? names[model] : "unknown";
}

const char *prism__optics_type_name(int type)
{
    static const char *const names[] = {"dielectric_metal",
                                        "dielectric_dielectric",
                                        "dielectric_LUT",
                                        "dielectric_LUTDAVIS",
                                        "dielectric_dichroic",
                                        "firsov",
                                        "x_ray"};
    return type >= 0 && type < 7 ? names[type] : "unknown";
}

const char *prism__optics_finish_name(int finish)
{
    static const char *const names[] = {"polished", "polishedfrontpainted", "polishedbackpainted",
                                        "ground",   "groundfrontpainted",   "groundbackpainted"};
    /* 6 and up are the LUT model's finishes (polishedlumirrorair, ...) */
    return finish >= 0 && finish < 6 ? names[finish] : "LUT finish";
}

prism_optics_surface_support prism__optics_surface_support(const prism_surface *s)
{
    if (has_chroma_names(s))
        return PRISM_OPTICS_SURFACE_CHROMA;
    bool model = s->model == PRISM_SURFACE_MODEL_GLISUR || s->model == PRISM_SURFACE_MODEL_UNIFIED;
    bool type = s->type == PRISM_SURFACE_DIELECTRIC_METAL ||
                s->type == PRISM_SURFACE_DIELECTRIC_DIELECTRIC;
    bool finish = s->finish >= PRISM_FINISH_POLISHED &&
                  s->finish <= PRISM_FINISH_GROUND_BACKPAINTED;
    return model && type && finish ? PRISM_OPTICS_SURFACE_GEANT4 : PRISM_OPTICS_SURFACE_UNSUPPORTED;
}

static bool backpainted(const prism_surface *s)
{
    return s->type == PRISM_SURFACE_DIELECTRIC_DIELECTRIC &&
           (s->finish == PRISM_FINISH_POLISHED_BACKPAINTED ||
            s->finish == PRISM_FINISH_GROUND_BACKPAINTED);
}

bool prism__optics_surface_uses(const prism_surface *s, const char *name)
{
    switch (prism__optics_surface_support(s)) {
    case PRISM_OPTICS_SURFACE_CHROMA:
        for (int k = 0; k < 4; k++)
            if (strcmp(name, chroma_names[k]) == 0)
                return true;
        return false;
    case PRISM_OPTICS_SURFACE_GEANT4:
        if (strcmp(name, "REFLECTIVITY") == 0 || strcmp(name, "EFFICIENCY") == 0)
            return true;
        if (strcmp(name, "SPECULARLOBECONSTANT") == 0 ||
            strcmp(name, "SPECULARSPIKECONSTANT") == 0 || strcmp(name, "BACKSCATTERCONSTANT") == 0)
            return s->model == PRISM_SURFACE_MODEL_UNIFIED;
        return strcmp(name, "RINDEX") == 0 && backpainted(s);
    default: return false;
    }
}

/* Geant4's surfaces (G4OpBoundaryProcess): a photon is absorbed with
 * 1 - REFLECTIVITY (default 1) and the absorbed one detected with
 * EFFICIENCY (default 0); what is not absorbed meets the surface's model.
 * The unified model's reflection picks the specular spike, the specular
 * lobe and the backscatter with their constants in that order, the
 * Lambertian lobe taking the rest; a sum above 1 truncates the later ones,
 * as Geant4's successive comparisons do. */
static void resample_geant4_surface(const prism_surface *s, float *table)
{
    const unsigned n = PRISM_OPTICS_WAVELENGTH_COUNT;
    const prism_property *props = s->properties;
    size_t count = s->properties_count;
    const prism_property *refl = find(props, count, "REFLECTIVITY", NULL);
    const prism_property *eff = find(props, count, "EFFICIENCY", NULL);
    bool unified = s->model == PRISM_SURFACE_MODEL_UNIFIED;
    const prism_property *spike = unified ? find(props, count, "SPECULARSPIKECONSTANT", NULL)
                                          : NULL;
    const prism_property *lobe = unified ? find(props, count, "SPECULARLOBECONSTANT", NULL) : NULL;
    const prism_property *back = unified ? find(props, count, "BACKSCATTERCONSTANT", NULL) : NULL;
    const prism_property *rindex = backpainted(s) ? find(props, count, "RINDEX", NULL) : NULL;
    for (unsigned i = 0; i < n; i++) {
        float wl = grid_wavelength(i);
        float r = clamp01(refl != NULL ? property_at(refl, wl) : 1.0f);
        float e = clamp01(eff != NULL ? property_at(eff, wl) : 0.0f);
        float ss = clamp01(spike != NULL ? property_at(spike, wl) : 0.0f);
        float sl = clamp01(lobe != NULL ? property_at(lobe, wl) : 0.0f);
        float bs = clamp01(back != NULL ? property_at(back, wl) : 0.0f);
        sl = fminf(sl, 1.0f - ss);
        bs = fminf(bs, 1.0f - ss - sl);
        float ri = rindex != NULL ? property_at(rindex, wl) : 0.0f;
        table[PRISM_SURF_DETECT * n + i] = (1.0f - r) * e;
        table[PRISM_SURF_ABSORB * n + i] = (1.0f - r) * (1.0f - e);
        table[PRISM_SURF_REFLECT_SPECULAR * n + i] = 0.0f;
        table[PRISM_SURF_REFLECT_DIFFUSE * n + i] = 0.0f;
        table[PRISM_SURF_SPECULAR_SPIKE * n + i] = ss;
        table[PRISM_SURF_SPECULAR_LOBE * n + i] = sl;
        table[PRISM_SURF_BACKSCATTER * n + i] = bs;
        table[PRISM_SURF_RINDEX * n + i] = ri > 0.0f && ri < 1e6f ? ri : 0.0f;
    }
}

/* A polished dielectric_dielectric surface that never absorbs hands every
 * photon to Fresnel between the two materials, as no surface would: glisur
 * and unified alike leave the facet normal alone when polished. */
static bool changes_nothing(const prism_surface *s, const float *table)
{
    const unsigned n = PRISM_OPTICS_WAVELENGTH_COUNT;
    if (s->type != PRISM_SURFACE_DIELECTRIC_DIELECTRIC || s->finish != PRISM_FINISH_POLISHED)
        return false;
    for (unsigned i = 0; i < n; i++)
        if (table[PRISM_SURF_DETECT * n + i] != 0.0f || table[PRISM_SURF_ABSORB * n + i] != 0.0f)
            return false;
    return true;
}

void prism__optics_resample_surface(const prism_context *ctx, const prism_surface *s, float *table,
                                    prism_surface_params *params)
{
    const unsigned n = PRISM_OPTICS_WAVELENGTH_COUNT;
    memset(table, 0, PRISM_SURF_COUNT_ * n * sizeof(float));
    params->model = (uint32_t)s->model;
    params->type = (uint32_t)s->type;
    params->finish = (uint32_t)s->finish;
    params->sigma_alpha = isfinite(s->value) ? (float)s->value : 0.0f;
    switch (prism__optics_surface_support(s)) {
    case PRISM_OPTICS_SURFACE_CHROMA:
        params->model = PRISM_SURFACE_MODEL_CHROMA;
        resample_chroma_surface(s, table);
        return;
    case PRISM_OPTICS_SURFACE_GEANT4:
        resample_geant4_surface(s, table);
        if (changes_nothing(s, table))
            table[PRISM_SURF_DETECT * n] = -1.0f;
        return;
    default:
        prism__log(ctx, PRISM_LOG_WARNING,
                   "optics: surface \"%s\": model %d (%s), type %d (%s), finish %d (%s) is not "
                   "one Prism models (glisur or unified; dielectric_metal or "
                   "dielectric_dielectric; finishes 0-5): treated as no surface, a bare Fresnel "
                   "boundary between its two materials",
                   name_of(s->name), s->model, prism__optics_model_name(s->model), s->type,
                   prism__optics_type_name(s->type), s->finish,
                   prism__optics_finish_name(s->finish));
        table[PRISM_SURF_DETECT * n] = -1.0f;
        return;
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

/* ---- scintillation constants and the emission spectrum ---- */

/* The material properties the tables read; prism-info lists the others.
 * The first six always; the rest only with an emission spectrum, without
 * which nothing is emitted. */
static const char *const material_names[] = {"RINDEX",
                                             "refractive_index",
                                             "ABSLENGTH",
                                             "absorption_length",
                                             "RAYLEIGH",
                                             "scattering_length",
                                             "REEMISSIONPROB",
                                             "SCINTILLATIONYIELD",
                                             "RESOLUTIONSCALE",
                                             "FASTTIMECONSTANT",
                                             "SLOWTIMECONSTANT",
                                             "SCINTILLATIONTIMECONSTANT1",
                                             "SCINTILLATIONTIMECONSTANT2",
                                             "YIELDRATIO",
                                             "SCINTILLATIONYIELD1",
                                             "SCINTILLATIONYIELD2",
                                             "FASTCOMPONENT",
                                             "SLOWCOMPONENT",
                                             "SCINTILLATIONCOMPONENT1",
                                             "SCINTILLATIONCOMPONENT2"};

bool prism__optics_material_uses(const prism_material *m, const char *name)
{
    for (size_t i = 0; i < sizeof material_names / sizeof *material_names; i++) {
        if (strcmp(name, material_names[i]) != 0)
            continue;
        if (i < 6)
            return true;
        prism_material_params params;
        float icdf[PRISM_OPTICS_ICDF_COUNT];
        prism__optics_material_params(NULL, m, &params, icdf);
        return params.has_spectrum != 0;
    }
    return false;
}

/* A constant property (Geant4's const properties: one point at wavelength
 * 0, see prism_property) into *out. Absent: false. A table given where a
 * constant belongs gives its first value, and a negative or non-finite
 * value is refused (false), each with a warning. */
static bool constant(const prism_context *ctx, const prism_material *m, const char *a,
                     const char *b, float *out)
{
    const prism_property *p = find(m->properties, m->properties_count, a, b);
    if (p == NULL)
        return false;
    float v = p->value[0];
    for (size_t i = 1; i < p->count; i++)
        if (p->value[i] != v) {
            prism__log(ctx, PRISM_LOG_WARNING,
                       "optics: material \"%s\": %s varies with wavelength where Geant4 has one "
                       "number: its first value %g taken",
                       name_of(m->name), p->name, (double)v);
            break;
        }
    if (!(v >= 0.0f && isfinite(v))) {
        prism__log(ctx, PRISM_LOG_WARNING,
                   "optics: material \"%s\": %s is %g: negative or not finite, ignored",
                   name_of(m->name), p->name, (double)v);
        return false;
    }
    *out = v;
    return true;
}

/* One emission component: a density per unit photon energy (Geant4's
 * G4Scintillation integrates it over energy, so do we), given at the file's
 * wavelengths and linear in energy between them, as Geant4 interpolates.
 * Energy is hc/lambda; the constant hc cancels in the normalisation, so
 * the integrals run over x = 1/lambda (nm^-1). */
typedef struct spectrum {
    const prism_property *p;
    double total;  /* integral of the density over x */
    double weight; /* share of the photons */
} spectrum;

static double x_of(double wavelength)
{
    return 1.0 / wavelength;
}

/* Negative densities mean nothing: they count as 0 (with a warning). */
static double density_point(const prism_property *p, size_t i)
{
    return p->value[i] > 0.0f ? (double)p->value[i] : 0.0;
}

/* Check component p and integrate it; 0 when it cannot be a spectrum
 * (why, logged). */
static double spectrum_total(const prism_context *ctx, const prism_material *m,
                             const prism_property *p)
{
    const char *why = NULL;
    bool negative = false;
    double total = 0.0;
    if (p->count < 2)
        why = "fewer than two points";
    for (size_t i = 0; why == NULL && i < p->count; i++) {
        float w = p->wavelength_nm[i], v = p->value[i];
        if (!(w > 0.0f && isfinite(w)) || (i > 0 && !(w >= p->wavelength_nm[i - 1])))
            why = "wavelengths not positive and increasing";
        else if (!isfinite(v))
            why = "values not finite";
        negative = negative || v < 0.0f;
        if (why == NULL && i > 0)
            total += 0.5 * (density_point(p, i - 1) + density_point(p, i)) *
                     (x_of(p->wavelength_nm[i - 1]) - x_of(w));
    }
    if (why == NULL && negative)
        prism__log(ctx, PRISM_LOG_WARNING,
                   "optics: material \"%s\": %s has negative values: taken as 0", name_of(m->name),
                   p->name);
    if (why == NULL && !(total > 0.0))
        why = "zero everywhere";
    if (why != NULL) {
        prism__log(ctx, PRISM_LOG_WARNING,
                   "optics: material \"%s\": %s is no emission spectrum (%s): left out",
                   name_of(m->name), p->name, why);
        return 0.0;
    }
    return total;
}

/* The density of component p at wavelength w, seen from the side of w
 * that `right` names (the two differ where the table starts or ends and
 * where it steps, at a repeated wavelength); 0 outside the table, where
 * Geant4 never emits. */
static double density_at(const prism_property *p, double w, bool right)
{
    const float *wl = p->wavelength_nm;
    size_t n = p->count;
    if (right ? !(w >= wl[0] && w < wl[n - 1]) : !(w > wl[0] && w <= wl[n - 1]))
        return 0.0;
    /* i: the first point past w (right) or at or past it (left), 1..n-1;
     * the density is linear in x between points i-1 and i */
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (right ? wl[mid] > w : wl[mid] >= w)
            hi = mid;
        else
            lo = mid + 1;
    }
    size_t i = lo;
    double x0 = x_of(wl[i - 1]), x1 = x_of(wl[i]), x = x_of(w);
    double f = x0 != x1 ? (x - x0) / (x1 - x0) : 1.0;
    return density_point(p, i - 1) + (density_point(p, i) - density_point(p, i - 1)) * f;
}

/* The first wavelength of any component beyond `after` (INFINITY: none). */
static double next_break(const spectrum *sp, int k, double after)
{
    double best = INFINITY;
    for (int c = 0; c < k; c++) {
        const float *wl = sp[c].p->wavelength_nm;
        size_t lo = 0, hi = sp[c].p->count;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (wl[mid] > after)
                hi = mid;
            else
                lo = mid + 1;
        }
        if (lo < sp[c].p->count && wl[lo] < best)
            best = wl[lo];
    }
    return best;
}

/* The normalised mixture's density at w (from the side `right` names). */
static double mixture_at(const spectrum *sp, int k, double w, bool right)
{
    double d = 0.0;
    for (int c = 0; c < k; c++)
        d += sp[c].weight / sp[c].total * density_at(sp[c].p, w, right);
    return d;
}

/* Between consecutive break points a < b of the mixture its density is
 * linear in x, from ga at x(a) to gb at x(b), dx = x(a) - x(b): the
 * fraction t of the way for which the integral from a reaches `mass`. */
static double solve_in_segment(double ga, double gb, double dx, double mass)
{
    /* dx (ga t + (gb - ga) t^2 / 2) = mass; the form below is stable for
     * every sign of gb - ga and for ga = 0. */
    double qa = 0.5 * (gb - ga) * dx, qb = ga * dx;
    double disc = qb * qb + 4.0 * qa * mass;
    double den = qb + sqrt(disc > 0.0 ? disc : 0.0);
    double t = den > 0.0 ? 2.0 * mass / den : 0.0;
    return t < 0.0 ? 0.0 : (t > 1.0 ? 1.0 : t);
}

/* The inverse CDF of the mixture of the k components, from the shortest
 * wavelength up, at PRISM_OPTICS_ICDF_COUNT evenly spaced u: exact for the
 * piecewise-linear density (the CDF is quadratic in x between breaks). */
static void inverse_cdf(const spectrum *sp, int k, float *icdf)
{
    const unsigned N = PRISM_OPTICS_ICDF_COUNT;
    double whole = 0.0; /* the mixture's integral (1 up to rounding), summed as below */
    for (double a = next_break(sp, k, -INFINITY), b; isfinite(b = next_break(sp, k, a)); a = b)
        whole += 0.5 * (mixture_at(sp, k, a, true) + mixture_at(sp, k, b, false)) *
                 (x_of(a) - x_of(b));
    unsigned j = 0;
    double below = 0.0, last = 0.0; /* mass below a; the end of the last segment with mass */
    for (double a = next_break(sp, k, -INFINITY), b; j < N && isfinite(b = next_break(sp, k, a));
         a = b) {
        double ga = mixture_at(sp, k, a, true), gb = mixture_at(sp, k, b, false);
        double dx = x_of(a) - x_of(b), mass = 0.5 * (ga + gb) * dx;
        if (!(mass > 0.0))
            continue; /* no emission here: no u lands in it */
        for (; j < N; j++) {
            /* the same sums in the same order: u = 1 lands in the last segment */
            double target = whole * (double)j / (double)(N - 1u);
            if (target > below + mass)
                break;
            double t = solve_in_segment(ga, gb, dx, fmax(target - below, 0.0));
            icdf[j] = (float)(1.0 / (x_of(a) - t * dx));
        }
        below += mass;
        last = b;
    }
    for (; j < N; j++) /* not reached; kept so that every point is written */
        icdf[j] = (float)last;
}

void prism__optics_material_params(const prism_context *ctx, const prism_material *m,
                                   prism_material_params *params, float *icdf)
{
    memset(params, 0, sizeof *params);
    params->resolution_scale = 1.0f;
    for (unsigned j = 0; j < PRISM_OPTICS_ICDF_COUNT; j++)
        icdf[j] = 0.0f;
    if (m == NULL)
        return;
    float v;
    if (constant(ctx, m, "SCINTILLATIONYIELD", NULL, &v))
        params->yield = v;
    if (constant(ctx, m, "RESOLUTIONSCALE", NULL, &v))
        params->resolution_scale = v;
    float fast = 0.0f, slow = 0.0f;
    bool has_fast = constant(ctx, m, "FASTTIMECONSTANT", "SCINTILLATIONTIMECONSTANT1", &fast);
    bool has_slow = constant(ctx, m, "SLOWTIMECONSTANT", "SCINTILLATIONTIMECONSTANT2", &slow);
    params->time_fast = has_fast ? fast : slow;
    params->time_slow = has_slow ? slow : fast;
    /* Geant4 11 gives relative yields (SCINTILLATIONYIELD1, 2; defaults 1
     * and 0) where Geant4 10 gave the fast fraction (YIELDRATIO). */
    float y1 = 1.0f, y2 = 0.0f, ratio = 1.0f;
    bool g4_11 = constant(ctx, m, "SCINTILLATIONYIELD1", NULL, &y1);
    g4_11 = constant(ctx, m, "SCINTILLATIONYIELD2", NULL, &y2) || g4_11;
    if (g4_11)
        ratio = y1 + y2 > 0.0f ? y1 / (y1 + y2) : 1.0f;
    else if (constant(ctx, m, "YIELDRATIO", NULL, &v))
        ratio = v;
    if (ratio > 1.0f) {
        prism__log(ctx, PRISM_LOG_WARNING,
                   "optics: material \"%s\": yield ratio %g is above 1: taken as 1",
                   name_of(m->name), (double)ratio);
        ratio = 1.0f;
    }
    params->yield_ratio = ratio;

    /* The spectrum: one component, or with both the yield-ratio-weighted
     * sum of the two, each normalised first. The physics then draws the
     * wavelength and the time constant apart: one spectrum per material,
     * as Opticks keeps. */
    const prism_property *c1 = find(m->properties, m->properties_count, "FASTCOMPONENT",
                                    "SCINTILLATIONCOMPONENT1");
    const prism_property *c2 = find(m->properties, m->properties_count, "SLOWCOMPONENT",
                                    "SCINTILLATIONCOMPONENT2");
    spectrum sp[2];
    int k = 0;
    double t1 = c1 != NULL ? spectrum_total(ctx, m, c1) : 0.0;
    double t2 = c2 != NULL ? spectrum_total(ctx, m, c2) : 0.0;
    /* A component without photons is left out: its table may be anything. */
    bool use1 = t1 > 0.0 && (t2 <= 0.0 || ratio > 0.0f);
    bool use2 = t2 > 0.0 && (t1 <= 0.0 || ratio < 1.0f);
    if (use1)
        sp[k++] = (spectrum){c1, t1, use2 ? ratio : 1.0};
    if (use2)
        sp[k++] = (spectrum){c2, t2, use1 ? 1.0 - ratio : 1.0};
    if (k > 0) {
        inverse_cdf(sp, k, icdf);
        params->has_spectrum = 1;
    } else if (params->yield > 0.0f) {
        prism__log(ctx, PRISM_LOG_WARNING,
                   "optics: material \"%s\": SCINTILLATIONYIELD %g without an emission spectrum "
                   "(FASTCOMPONENT, SLOWCOMPONENT or SCINTILLATIONCOMPONENT1/2): it cannot "
                   "scintillate, yield taken as 0",
                   name_of(m->name), (double)params->yield);
        params->yield = 0.0f;
    }
}

/* A reemitted photon needs a wavelength from the material's spectrum;
 * without one Prism does not guess (the absorbed wavelength, say) but
 * turns reemission off, and says so. */
static void no_reemission_without_spectrum(const prism_context *ctx, const prism_material *m,
                                           const prism_material_params *params, float *row)
{
    if (params->has_spectrum)
        return;
    bool any = false;
    for (unsigned i = 0; i < PRISM_OPTICS_WAVELENGTH_COUNT; i++) {
        any = any || row[i] > 0.0f;
        row[i] = 0.0f;
    }
    if (any)
        prism__log(ctx, PRISM_LOG_WARNING,
                   "optics: material \"%s\": REEMISSIONPROB without an emission spectrum "
                   "(FASTCOMPONENT, SLOWCOMPONENT or SCINTILLATIONCOMPONENT1/2): reemission "
                   "turned off",
                   name_of(m->name));
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
        const prism_material *mat = &scene->materials[m];
        float *table = o->host + m * PRISM_MAT_COUNT_ * n;
        prism_material_params *params =
            (prism_material_params *)(void *)&o->view.material_params[m];
        prism__optics_resample_material(mat, table);
        prism__optics_material_params(ctx, mat, params,
                                      (float *)(void *)(o->view.emission_icdf +
                                                        m * PRISM_OPTICS_ICDF_COUNT));
        no_reemission_without_spectrum(ctx, mat, params, table + PRISM_MAT_REEMISSIONPROB * n);
    }
    float *surf = o->host + mats * PRISM_MAT_COUNT_ * n;
    for (size_t s = 0; s < surfs; s++)
        prism__optics_resample_surface(ctx, &scene->surfaces[s], surf + s * PRISM_SURF_COUNT_ * n,
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
