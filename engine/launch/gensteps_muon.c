/* prism_gensteps_muon: a straight muon track walked through the geometry on
 * the host, boundary to boundary with the photons' own trace (the same
 * tree walk, the same rule for the material on each side), and each
 * material piece turned into Cerenkov and scintillation gensteps
 * (prism/gensteps.h says what is assumed). */
#include "gensteps_muon.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/upload/geometry_internal.h"
#include "engine/upload/optics_tables.h"
#include "prism/bvh.h"
#include "prism/device/genstep.h"
#include "prism/device/photon.h"

#define FINE_STRUCTURE 7.2973525693e-3 /* CODATA 2018 */
#define TWO_PI 6.283185307179586
#define LIGHT_M_PER_NS 0.299792458
#define FRANK_TAMM_INTERVALS 4096
/* The photon counts' draws: a Philox purpose of their own, apart from the
 * photons' GENERATE and PROPAGATE streams. */
#define RNG_PHOTON_COUNTS 3u
/* A track crossing more boundaries than this is stopped (a trace that
 * makes no progress, on a broken mesh). */
#define MAX_CROSSINGS 10000000u
#define MUON_PDG_CODE 13 /* mu- */

double prism__cerenkov_per_metre(const prism_optics_view *o, uint32_t material, double charge,
                                 double beta, double wavelength_min, double wavelength_max)
{
    if (o == NULL || material >= o->material_count || o->wavelength_count == 0)
        return 0.0;
    /* dN/dx = 2 pi alpha z^2 int (1 - 1/(beta n)^2) d(1/lambda) (Frank-Tamm;
     * Jackson, Classical Electrodynamics, 13.4), in 1/lambda per nm */
    const double u0 = 1.0 / wavelength_max, u1 = 1.0 / wavelength_min;
    const double du = (u1 - u0) / FRANK_TAMM_INTERVALS;
    double sum = 0.0;
    for (int k = 0; k <= FRANK_TAMM_INTERVALS; k++) {
        const double u = k == FRANK_TAMM_INTERVALS ? u1 : u0 + k * du;
        const double n = prism_optics_material(o, material, (float)(1.0 / u)).rindex;
        double f = 1.0 - 1.0 / (beta * beta * n * n);
        if (f < 0.0)
            f = 0.0;
        sum += (k == 0 || k == FRANK_TAMM_INTERVALS) ? 0.5 * f : f;
    }
    return TWO_PI * FINE_STRUCTURE * charge * charge * sum * du * 1e9; /* per nm -> per m */
}

/* The highest RINDEX of `material` in the band: the table is linear between
 * its grid points, so at a grid point inside or at an end. */
static float max_rindex(const prism_optics_view *o, uint32_t material, float w0, float w1)
{
    float most = fmaxf(prism_optics_material(o, material, w0).rindex,
                       prism_optics_material(o, material, w1).rindex);
    for (uint32_t i = 0; i < o->wavelength_count; i++) {
        const float w = o->wavelength_start + o->wavelength_step * (float)i;
        if (w > w0 && w < w1)
            most = fmaxf(most, prism_optics_material(o, material, w).rindex);
    }
    return most;
}

/* Poisson (Geant4's G4Poisson: the sum of the probabilities up to a mean
 * of 16, a rounded Gaussian above). */
static double gauss(prism_rng *r)
{
    /* Box-Muller, with Prism's own log, sine and cosine: the same counts
     * whatever the libm */
    const float u = prism_rng_uniform(r), v = prism_rng_uniform(r);
    float s, c;
    prism_sincos_turn(v, &s, &c);
    return sqrt(-2.0 * (double)prism_logf(u)) * (double)c;
}

static uint32_t poisson(prism_rng *r, double mean)
{
    if (!(mean > 0.0))
        return 0;
    if (mean > 16.0) {
        const double n = floor(mean + sqrt(mean) * gauss(r) + 0.5);
        return n < 0.0 ? 0u : n > 4e9 ? 4000000000u : (uint32_t)n;
    }
    const double u = prism_rng_uniform(r);
    double p = exp(-mean), cumulative = p;
    uint32_t n = 0;
    while (u > cumulative && n < 200u) {
        n++;
        p *= mean / n;
        cumulative += p;
    }
    return n;
}

/* Geant4's G4Scintillation: Poisson up to a mean of 10, else a Gaussian of
 * sigma resolution_scale sqrt(mean), rounded. */
static uint32_t scintillation_count(prism_rng *r, double mean, double resolution)
{
    if (mean <= 10.0)
        return poisson(r, mean);
    const double n = floor(mean + resolution * sqrt(mean) * gauss(r) + 0.5);
    return n < 0.0 ? 0u : n > 4e9 ? 4000000000u : (uint32_t)n;
}

typedef struct builder {
    prism_genstep *data;
    size_t count, capacity;
    uint64_t draws; /* the counts' random streams, one a piece */
} builder;

static prism_genstep *append(builder *b)
{
    if (b->count == b->capacity) {
        size_t cap = b->capacity ? 2 * b->capacity : 256;
        prism_genstep *d = realloc(b->data, cap * sizeof *d);
        if (d == NULL)
            return NULL;
        b->data = d;
        b->capacity = cap;
    }
    prism_genstep *g = &b->data[b->count++];
    memset(g, 0, sizeof *g);
    return g;
}

/* What the track's pieces share. */
typedef struct track {
    pv3 dir;
    double beta, velocity; /* m/ns */
    float w0, w1, dedx_per_m, max_step;
    uint64_t seed;
    const prism_optics_view *o;
    double *cerenkov_per_m; /* per material, < 0 until computed */
} track;

static void common(prism_genstep *g, uint32_t gentype, uint32_t material, pv3 pos, double time,
                   const track *t, float length)
{
    g->gentype = gentype;
    g->track_id = 1; /* Geant4's first primary */
    g->material = material;
    pv3_store(pos, g->pos);
    g->time = (float)time;
    pv3_store(pv3_scale(t->dir, length), g->delta);
    g->step_length = length;
    g->code = MUON_PDG_CODE;
    g->charge = -1.0f;
    g->weight = 1.0f;
    g->pre_velocity = (float)t->velocity;
}

/* The gensteps of one piece of track inside `material`. */
static prism_result piece(builder *b, const track *t, uint32_t material, pv3 pos, double time,
                          float length, prism_gensteps *out)
{
    prism_rng r = prism_rng_make(t->seed, b->draws++, 0, RNG_PHOTON_COUNTS);
    const double per_m = t->cerenkov_per_m[material];
    const uint32_t ck = poisson(&r, per_m * length);
    if (ck > 0) {
        prism_genstep *g = append(b);
        if (g == NULL)
            return PRISM_ERROR_OUT_OF_MEMORY;
        common(g, PRISM_GENSTEP_CERENKOV, material, pos, time, t, length);
        g->photons = ck;
        prism_genstep_cerenkov *c = &g->cerenkov;
        c->beta_inverse = (float)(1.0 / t->beta);
        c->wavelength_min = t->w0;
        c->wavelength_max = t->w1;
        c->max_cos = c->beta_inverse / max_rindex(t->o, material, t->w0, t->w1);
        c->max_sin2 = (1.0f - c->max_cos) * (1.0f + c->max_cos);
        c->mean_photons1 = c->mean_photons2 = (float)per_m; /* Geant4's: per length */
        c->post_velocity = (float)t->velocity;
        out->cerenkov_photons += ck;
    }
    const prism_material_params *mp = prism_optics_material_params(t->o, material);
    if (mp != NULL && mp->yield > 0.0f) {
        const double mean = (double)mp->yield * t->dedx_per_m * length;
        const uint32_t sc = scintillation_count(&r, mean, mp->resolution_scale);
        if (sc > 0) {
            prism_genstep *g = append(b);
            if (g == NULL)
                return PRISM_ERROR_OUT_OF_MEMORY;
            common(g, PRISM_GENSTEP_SCINTILLATION, material, pos, time, t, length);
            g->photons = sc;
            out->scintillation_photons += sc;
        }
    }
    return PRISM_SUCCESS;
}

/* A boundary-to-boundary segment, in pieces of at most max_step. */
static prism_result segment(builder *b, track *t, uint32_t material, pv3 start, double time,
                            double length, prism_gensteps *out)
{
    const prism_optics_view *o = t->o;
    if (o == NULL || material >= o->material_count || !(length > 0.0))
        return PRISM_SUCCESS; /* outside the tables: vacuum, no light */
    out->segments++;
    out->length += length;
    if (t->cerenkov_per_m[material] < 0.0) {
        const float n_max = max_rindex(o, material, t->w0, t->w1);
        t->cerenkov_per_m[material] = t->beta * n_max > 1.0
                                          ? prism__cerenkov_per_metre(o, material, 1.0, t->beta,
                                                                      t->w0, t->w1)
                                          : 0.0;
    }
    const double pieces = ceil(length / t->max_step);
    const double each = length / pieces;
    for (double k = 0; k < pieces; k++) {
        const pv3 pos = pv3_madd(start, t->dir, (float)(k * each));
        prism_result r = piece(b, t, material, pos, time + k * each / t->velocity, (float)each,
                               out);
        if (r != PRISM_SUCCESS)
            return r;
    }
    return PRISM_SUCCESS;
}

static int bad_float(float x, bool zero_ok)
{
    return !isfinite(x) || x < 0.0f || (!zero_ok && x == 0.0f);
}

static prism_result check_desc(prism_context *ctx, const prism_muon_desc *d)
{
    const pv3 dir = pv3_load(d->direction), pos = pv3_load(d->position);
    if (!pv3_finite(dir) || !(pv3_length(dir) > 0.0f) || !pv3_finite(pos) || !isfinite(d->time))
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                            "gensteps_muon: the position, time or direction is not finite, or "
                            "the direction is zero");
    if (!(d->energy_gev > PRISM_MUON_MASS_GEV) || !isfinite(d->energy_gev))
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                            "gensteps_muon: energy %g GeV is not above the muon's mass (%g GeV; "
                            "the total energy)",
                            d->energy_gev, PRISM_MUON_MASS_GEV);
    if (bad_float(d->max_step, true) || bad_float(d->max_length, true) ||
        bad_float(d->dedx_mev_per_cm, true) || bad_float(d->wavelength_min_nm, true) ||
        bad_float(d->wavelength_max_nm, true))
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                            "gensteps_muon: max_step, max_length, dedx and the band must be "
                            "finite and >= 0");
    const float w0 = d->wavelength_min_nm > 0.0f ? d->wavelength_min_nm : PRISM_MUON_WAVELENGTH_MIN;
    const float w1 = d->wavelength_max_nm > 0.0f ? d->wavelength_max_nm : PRISM_MUON_WAVELENGTH_MAX;
    if (!(w0 < w1))
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                            "gensteps_muon: the band %g to %g nm is not min < max", (double)w0,
                            (double)w1);
    return PRISM_SUCCESS;
}

/* Both entries' start: the arguments checked, *out emptied. */
static prism_result begin(prism_context *ctx, const void *geometry, const prism_muon_desc *desc,
                          prism_gensteps *out)
{
    if (geometry == NULL || desc == NULL || out == NULL)
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                            "gensteps_muon: NULL geometry, desc or out");
    memset(out, 0, sizeof *out);
    return check_desc(ctx, desc);
}

prism_result prism__gensteps_muon_view(prism_context *ctx, const prism_geometry_view *g,
                                       const prism_optics_view *o, const prism_muon_desc *desc,
                                       prism_gensteps *out)
{
    prism_result r = begin(ctx, g, desc, out);
    if (r != PRISM_SUCCESS)
        return r;
    const double gamma = desc->energy_gev / PRISM_MUON_MASS_GEV;
    track t = {
        .dir = pv3_normalize(pv3_load(desc->direction)),
        .beta = sqrt(1.0 - 1.0 / (gamma * gamma)),
        .w0 = desc->wavelength_min_nm > 0.0f ? desc->wavelength_min_nm : PRISM_MUON_WAVELENGTH_MIN,
        .w1 = desc->wavelength_max_nm > 0.0f ? desc->wavelength_max_nm : PRISM_MUON_WAVELENGTH_MAX,
        .dedx_per_m = 100.0f *
                      (desc->dedx_mev_per_cm > 0.0f ? desc->dedx_mev_per_cm : PRISM_MUON_DEDX),
        .max_step = desc->max_step > 0.0f ? desc->max_step : PRISM_MUON_MAX_STEP,
        .seed = desc->seed,
        .o = o};
    t.velocity = t.beta * LIGHT_M_PER_NS;
    const uint32_t materials = o != NULL ? o->material_count : 0;
    t.cerenkov_per_m = malloc((materials + 1) * sizeof *t.cerenkov_per_m);
    if (t.cerenkov_per_m == NULL)
        return prism__error(ctx, PRISM_ERROR_OUT_OF_MEMORY, "gensteps_muon: no memory");
    for (uint32_t m = 0; m < materials; m++)
        t.cerenkov_per_m[m] = -1.0;
    builder b = {0};
    pv3 pos = pv3_load(desc->position);
    double travelled = 0.0;
    const double limit = desc->max_length > 0.0f ? desc->max_length : INFINITY;
    uint32_t on = PRISM_TRACE_NONE; /* the triangle the track stands on */
    for (uint32_t crossing = 0; crossing < MAX_CROSSINGS && travelled < limit; crossing++) {
        const pv3 org = prism_photon_origin(g, on, pos, t.dir);
        prism_trace_hit hit;
        if (!prism_trace_closest(g, org, t.dir, prism_photon_tmin(org), INFINITY, on, &hit))
            break; /* out of the geometry: what lies beyond is no material */
        double d = (double)hit.t + (double)pv3_dot(pv3_sub(org, pos), t.dir);
        const uint32_t mats = g->triangle_info[hit.index].materials;
        const int entering = pv3_dot(t.dir, prism_triangle_normal(g, hit.index)) < 0.0f;
        const uint32_t material = entering ? prism_materials_outer(mats)
                                           : prism_materials_inner(mats);
        const bool last = travelled + d >= limit;
        if (last)
            d = limit - travelled;
        r = segment(&b, &t, material, pos, desc->time + travelled / t.velocity, d, out);
        if (r != PRISM_SUCCESS || last)
            break;
        pos = prism_photon_hit_point(g, &hit);
        travelled += d;
        on = hit.index;
    }
    free(t.cerenkov_per_m);
    if (r != PRISM_SUCCESS) {
        free(b.data);
        memset(out, 0, sizeof *out);
        return prism__error(ctx, r, "gensteps_muon: no memory for %zu gensteps", b.count);
    }
    out->data = (float *)(void *)b.data;
    out->count = b.count;
    out->photons = out->cerenkov_photons + out->scintillation_photons;
    return PRISM_SUCCESS;
}

prism_result prism_gensteps_muon(const prism_geometry *geometry, const prism_muon_desc *desc,
                                 prism_gensteps *out)
{
    prism_context *ctx = geometry != NULL ? prism__geometry_context(geometry) : NULL;
    /* checked before the geometry is read back, as the view's call does */
    prism_result r = begin(ctx, geometry, desc, out);
    if (r != PRISM_SUCCESS)
        return r;
    /* the tree and the triangles' records where the host reads them */
    prism_bvh *tree = NULL;
    r = prism__geometry_download(geometry, &tree);
    prism_triangle_info *info = NULL;
    if (r == PRISM_SUCCESS) {
        info = malloc((tree->triangle_count ? tree->triangle_count : 1) * sizeof *info);
        r = info != NULL ? prism__geometry_download_info(geometry, info)
                         : PRISM_ERROR_OUT_OF_MEMORY;
    }
    if (r != PRISM_SUCCESS) {
        free(info);
        prism_bvh_free(tree);
        return prism__error(ctx, r, "gensteps_muon: the geometry could not be read back: %s",
                            prism_result_string(r));
    }
    prism_geometry_view view;
    memset(&view, 0, sizeof view);
    view.nodes_head = tree->nodes;
    view.nodes_split = view.node_count = (uint32_t)tree->node_count;
    view.vertices = tree->vertices;
    view.triangles = tree->triangles;
    view.triangle_info = info;
    view.vertex_count = (uint32_t)tree->vertex_count;
    view.triangle_count = (uint32_t)tree->triangle_count;
    /* the optics tables' host copy (the kernels' may be device memory) */
    const prism_optics *optics = prism__geometry_optics(geometry);
    prism_optics_view tables;
    if (optics != NULL) {
        tables = optics->view;
        prism__optics_layout(&tables, optics->host);
    }
    r = prism__gensteps_muon_view(ctx, &view, optics != NULL ? &tables : NULL, desc, out);
    free(info);
    prism_bvh_free(tree);
    return r;
}

void prism_gensteps_free(prism_gensteps *g)
{
    if (g == NULL)
        return;
    free(g->data);
    memset(g, 0, sizeof *g);
}

prism_result prism_cerenkov_photons_per_metre(const prism_geometry *geometry, uint32_t material,
                                              double charge, double beta, double wavelength_min,
                                              double wavelength_max, double *out)
{
    prism_context *ctx = geometry != NULL ? prism__geometry_context(geometry) : NULL;
    if (geometry == NULL || out == NULL)
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                            "cerenkov_photons_per_metre: NULL geometry or out");
    if (!(beta > 0.0 && beta <= 1.0) || !(wavelength_min > 0.0 && wavelength_min < wavelength_max))
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                            "cerenkov_photons_per_metre: beta %g not in (0, 1] or the band %g to "
                            "%g nm not 0 < min < max",
                            beta, wavelength_min, wavelength_max);
    const prism_optics *optics = prism__geometry_optics(geometry);
    *out = 0.0;
    if (optics == NULL)
        return PRISM_SUCCESS;
    prism_optics_view tables = optics->view;
    prism__optics_layout(&tables, optics->host);
    *out = prism__cerenkov_per_metre(&tables, material, charge, beta, wavelength_min,
                                     wavelength_max);
    return PRISM_SUCCESS;
}
