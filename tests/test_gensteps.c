/* Gensteps on the host backend: the Cerenkov cone (cos theta = 1/(beta n)
 * photon by photon, for a constant and a dispersive index), the Frank-Tamm
 * yield of the muon source against the formula computed here, the 1/lambda^2
 * spectrum, the scintillation time profile (two exponentials in the yield
 * ratio), isotropy and positions on the step, the same photons whatever
 * the batches (first_photon, prism_propagate_stream), and the errors that
 * name the genstep at fault. Statistical checks state N and a tolerance of
 * 4 standard deviations (the seeds are fixed: a run is reproducible).
 *
 * Photons are generated, not propagated, where a check needs their first
 * state: they start in a scene whose one small box is far off their way,
 * so every photon ends NO_HIT at once, where it was made. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/launch/gensteps_muon.h"
#include "engine/launch/propagate_internal.h"
#include "engine/upload/geometry_internal.h"
#include "kernels_test_scene.h"
#include "prism/device/genstep.h"
#include "prism/gensteps.h"
#include "prism/geometry.h"
#include "prism/propagate.h"

#define ALPHA 7.2973525693e-3
#define PI 3.141592653589793

static void assert_near(double got, double want, double tol, const char *what)
{
    if (!(fabs(got - want) <= tol))
        fail_msg("%s: %.9g, expected %.9g +- %.3g", what, got, want, tol);
}

static void assert_fraction(size_t k, size_t n, double p, const char *what)
{
    const double f = (double)k / (double)n, sigma = sqrt(p * (1.0 - p) / (double)n);
    assert_near(f, p, 4.0 * sigma, what);
}

/* A material's RINDEX replaced by n(lambda) = a + b / lambda (nm) on
 * 200..800 nm every 20 nm (before kt_build). */
static void dispersive_rindex(kt_scene *s, uint32_t m, float a, float b)
{
    prism_material *mat = &s->scene.materials[m];
    for (size_t i = 0; i < mat->properties_count; i++) {
        prism_property *p = &mat->properties[i];
        if (strcmp(p->name, "RINDEX") != 0)
            continue;
        free(p->wavelength_nm);
        free(p->value);
        p->count = 31;
        p->wavelength_nm = malloc(p->count * sizeof(float));
        p->value = malloc(p->count * sizeof(float));
        for (size_t k = 0; k < p->count; k++) {
            p->wavelength_nm[k] = 200.0f + 20.0f * (float)k;
            p->value[k] = a + b / p->wavelength_nm[k];
        }
    }
}

/* A scene for generation only: materials 0 (n = 1.5), 1 (dispersive),
 * 2 (a scintillator whose constants the test sets in the tables), one
 * small box 1 km away. */
static void generation_scene(kt_scene *s)
{
    memset(s, 0, sizeof *s);
    kt_material(s, "glass", 1.5f, 0, 0);
    uint32_t disp = kt_material(s, "dispersive", 1.0f, 0, 0);
    kt_material(s, "scintillator", 1.5f, 0, 0);
    dispersive_rindex(s, disp, 1.3f, 30.0f);
    const float lo[3] = {1000, 1000, 1000}, hi[3] = {1000.01f, 1000.01f, 1000.01f};
    kt_box(s, lo, hi, 0, 0, PRISM_NONE, PRISM_NONE);
    assert_int_equal(kt_build(s, kt_ctx), 0);
}

static prism_material_params *material_params(kt_scene *s, uint32_t m)
{
    return (prism_material_params *)(void *)&s->optics->view.material_params[m];
}

static prism_genstep cerenkov(uint32_t material, uint32_t photons, float beta)
{
    prism_genstep g;
    memset(&g, 0, sizeof g);
    g.gentype = PRISM_GENSTEP_CERENKOV;
    g.track_id = 1;
    g.material = material;
    g.photons = photons;
    g.pos[0] = 1.0f, g.pos[1] = 2.0f, g.pos[2] = 3.0f;
    g.time = 5.0f;
    const float d[3] = {0.3f, -0.4f, 0.5f};
    memcpy(g.delta, d, sizeof d);
    g.step_length = sqrtf(0.5f);
    g.code = 13;
    g.charge = -1.0f;
    g.weight = 1.0f;
    g.pre_velocity = g.cerenkov.post_velocity = beta * 0.299792458f;
    g.cerenkov.beta_inverse = 1.0f / beta;
    g.cerenkov.wavelength_min = 200.0f;
    g.cerenkov.wavelength_max = 800.0f;
    g.cerenkov.max_cos = g.cerenkov.beta_inverse / 1.5f;
    g.cerenkov.max_sin2 = (1.0f - g.cerenkov.max_cos) * (1.0f + g.cerenkov.max_cos);
    g.cerenkov.mean_photons1 = g.cerenkov.mean_photons2 = 100.0f;
    return g;
}

static prism_genstep scintillation(uint32_t material, uint32_t photons)
{
    prism_genstep g;
    memset(&g, 0, sizeof g);
    g.gentype = PRISM_GENSTEP_SCINTILLATION;
    g.material = material;
    g.photons = photons;
    g.pos[0] = -1.0f;
    g.time = 10.0f;
    g.delta[0] = 1.0f; /* one metre along x */
    g.step_length = 1.0f;
    g.charge = -1.0f;
    g.weight = 1.0f;
    g.pre_velocity = 0.25f;
    return g;
}

static prism_photon_source genstep_source(const prism_genstep *g, size_t n, size_t count)
{
    prism_photon_source src = {.kind = PRISM_SOURCE_GENSTEPS,
                               .count = count,
                               .gensteps = (const float *)(const void *)g,
                               .genstep_count = n};
    return src;
}

/* The photons of `src` as generated (they end NO_HIT where they start). */
static prism_photon *generate(kt_scene *s, const prism_photon_source *src, size_t count,
                              uint64_t first, uint64_t seed)
{
    prism_photon *ph = calloc(count, sizeof *ph);
    assert_non_null(ph);
    prism_propagate_desc d = {.seed = seed, .first_photon = first};
    prism_propagate_stats st;
    prism_result r = prism__propagate_view(kt_ctx, &s->view, prism__optics_view(s->optics), src, &d,
                                           ph, NULL, NULL, &st);
    if (r != PRISM_SUCCESS)
        fail_msg("propagate: %s", prism_context_last_error(kt_ctx));
    for (size_t i = 0; i < count; i++)
        if (ph[i].history != PRISM_NO_HIT || ph[i].steps != 0)
            fail_msg("photon %zu: history %#x steps %u: not where it was made", i, ph[i].history,
                     ph[i].steps);
    return ph;
}

static double dot3(const float *a, const float *b)
{
    return (double)a[0] * b[0] + (double)a[1] * b[1] + (double)a[2] * b[2];
}

/* The cone of a constant index: every photon's cos theta to the step is
 * 1/(beta n) to float rounding (2e-6), its polarisation is unit,
 * perpendicular to it and in the plane of step and photon, pointing away
 * from the step (Geant4's -sin theta along the track); it starts on the
 * step at the time the speed gives. */
static void test_cerenkov_cone_constant_index(void **state)
{
    (void)state;
    kt_scene s;
    generation_scene(&s);
    const float beta = 0.95f;
    prism_genstep g = cerenkov(0, 20000, beta);
    prism_photon_source src = genstep_source(&g, 1, 0);
    prism_photon *ph = generate(&s, &src, g.photons, 0, 7);
    const float len = sqrtf(0.5f);
    const float axis[3] = {g.delta[0] / len, g.delta[1] / len, g.delta[2] / len};
    const double want = (1.0 / beta) / 1.5;
    for (size_t i = 0; i < g.photons; i++) {
        const prism_photon *p = &ph[i];
        assert_near(dot3(p->dir, axis), want, 2e-6, "cos theta");
        assert_near(dot3(p->dir, p->dir), 1.0, 2e-6, "|dir|^2");
        assert_near(dot3(p->pol, p->pol), 1.0, 2e-6, "|pol|^2");
        assert_near(dot3(p->pol, p->dir), 0.0, 2e-6, "pol . dir");
        const float n[3] = {axis[1] * p->dir[2] - axis[2] * p->dir[1],
                            axis[2] * p->dir[0] - axis[0] * p->dir[2],
                            axis[0] * p->dir[1] - axis[1] * p->dir[0]};
        assert_near(dot3(p->pol, n), 0.0, 2e-6, "pol out of the plane of step and photon");
        assert_near(dot3(p->pol, axis), -sqrt(1.0 - want * want), 2e-6, "pol . step");
        /* on the step: pos = x0 + f delta, f in [0, 1] */
        const double f = ((p->pos[0] - g.pos[0]) * axis[0] + (p->pos[1] - g.pos[1]) * axis[1] +
                          (p->pos[2] - g.pos[2]) * axis[2]) /
                         len;
        assert_true(f >= -1e-6 && f <= 1.0 + 1e-6);
        for (int k = 0; k < 3; k++)
            assert_near(p->pos[k], g.pos[k] + f * g.delta[k], 1e-5, "position off the step");
        assert_near(p->time, g.time + f * len / g.pre_velocity, 1e-4, "time");
        assert_true(p->wavelength >= 200.0f && p->wavelength <= 800.0f);
    }
    free(ph);
    kt_free(&s, kt_ctx);
}

/* Constant index: the spectrum is uniform in photon energy (dN/dlambda ~
 * 1/lambda^2): the mean of 1/lambda is (1/200 + 1/800)/2 = 3.125e-3 /nm,
 * and 2/3 of the photons are below 400 nm. N = 20000. */
static void test_cerenkov_spectrum(void **state)
{
    (void)state;
    kt_scene s;
    generation_scene(&s);
    prism_genstep g = cerenkov(0, 20000, 0.99f);
    prism_photon_source src = genstep_source(&g, 1, 0);
    prism_photon *ph = generate(&s, &src, g.photons, 0, 3);
    double sum = 0.0;
    size_t below = 0;
    for (size_t i = 0; i < g.photons; i++) {
        sum += 1.0 / ph[i].wavelength;
        below += ph[i].wavelength < 400.0f;
    }
    const double sd = (1.0 / 200 - 1.0 / 800) / sqrt(12.0);
    print_message("mean 1/lambda %.6g /nm (expected 3.125e-3), below 400 nm %.4f (2/3)\n",
                  sum / g.photons, (double)below / g.photons);
    assert_near(sum / g.photons, 0.5 * (1.0 / 200 + 1.0 / 800), 4 * sd / sqrt(g.photons),
                "mean 1/lambda");
    assert_fraction(below, g.photons, 2.0 / 3.0, "below 400 nm");
    free(ph);
    kt_free(&s, kt_ctx);
}

/* A dispersive index, n = 1.3 + 30/lambda, BetaInverse 1.35: each photon's
 * angle is its wavelength's, cos theta = BetaInverse / n(lambda) (the
 * table's n, 2e-6), and no photon is where beta n < 1 (lambda above 600 nm). */
static void test_cerenkov_cone_dispersive(void **state)
{
    (void)state;
    kt_scene s;
    generation_scene(&s);
    const prism_optics_view *o = prism__optics_view(s.optics);
    prism_genstep g = cerenkov(1, 20000, 1.0f / 1.35f);
    g.cerenkov.max_cos = 1.35f / (1.3f + 30.0f / 200.0f);
    g.cerenkov.max_sin2 = (1.0f - g.cerenkov.max_cos) * (1.0f + g.cerenkov.max_cos);
    prism_photon_source src = genstep_source(&g, 1, 0);
    prism_photon *ph = generate(&s, &src, g.photons, 0, 5);
    const float len = sqrtf(0.5f);
    const float axis[3] = {g.delta[0] / len, g.delta[1] / len, g.delta[2] / len};
    size_t short_half = 0;
    for (size_t i = 0; i < g.photons; i++) {
        const float n = prism_optics_material(o, 1, ph[i].wavelength).rindex;
        assert_true(n >= 1.35f);
        assert_true(ph[i].wavelength <= 600.5f);
        assert_near(dot3(ph[i].dir, axis), 1.35 / n, 2e-6, "cos theta at the photon's wavelength");
        short_half += ph[i].wavelength < 400.0f;
    }
    /* the weight sin^2 theta falls to 0 at 600 nm: most photons are short */
    assert_true(short_half > g.photons / 2);
    free(ph);
    kt_free(&s, kt_ctx);
}

/* The muon source in a 10 m cube of water (n = 1.33), 10 GeV: one segment,
 * 10 m long; each Cerenkov genstep's mean photons per metre is the
 * Frank-Tamm 2 pi alpha (1 - 1/(beta n)^2)(1/lambda1 - 1/lambda2) (rel.
 * 1e-5); the photons drawn add up to it times 10 m within 4 sigma
 * (Poisson); the gensteps lie on the track, 0.1 m each. */
static void test_muon_frank_tamm(void **state)
{
    (void)state;
    kt_scene s;
    memset(&s, 0, sizeof s);
    uint32_t water = kt_material(&s, "water", 1.33f, 0, 0);
    const float lo[3] = {-5, -5, -5}, hi[3] = {5, 5, 5};
    kt_box(&s, lo, hi, 0, water, PRISM_NONE, PRISM_NONE);
    assert_int_equal(kt_build(&s, kt_ctx), 0);
    prism_geometry *geo = kt_upload(&s, kt_ctx, PRISM_PLACEMENT_AUTO, false);
    assert_non_null(geo);
    const double e = 10.0, gamma = e / PRISM_MUON_MASS_GEV, beta = sqrt(1 - 1 / (gamma * gamma));
    const double per_m = 2 * PI * ALPHA * (1 - 1 / (beta * beta * 1.33 * 1.33)) *
                         (1 / 300e-9 - 1 / 600e-9);
    prism_muon_desc d = {.position = {0.1f, 0.2f, -20},
                         .direction = {0, 0, 1},
                         .energy_gev = e,
                         .seed = 9,
                         .wavelength_min_nm = 300,
                         .wavelength_max_nm = 600};
    prism_gensteps out;
    assert_int_equal(prism_gensteps_muon(geo, &d, &out), PRISM_SUCCESS);
    assert_int_equal(out.segments, 1);
    assert_near(out.length, 10.0, 1e-5, "track length in water");
    assert_int_equal(out.count, 100);
    assert_int_equal(out.scintillation_photons, 0);
    const prism_genstep *g = (const prism_genstep *)(const void *)out.data;
    uint64_t sum = 0;
    for (size_t k = 0; k < out.count; k++) {
        assert_int_equal(g[k].gentype, PRISM_GENSTEP_CERENKOV);
        assert_int_equal(g[k].material, water);
        assert_near(g[k].cerenkov.mean_photons1, per_m, 1e-5 * per_m, "Frank-Tamm per metre");
        assert_near(g[k].cerenkov.beta_inverse, 1 / beta, 1e-6, "BetaInverse");
        assert_near(g[k].step_length, 0.1, 1e-6, "genstep length");
        assert_near(g[k].pos[2], -5.0 + 0.1 * k, 1e-5, "genstep start");
        assert_near(g[k].time, (15.0 + 0.1 * k) / (beta * 0.299792458), 1e-3, "genstep time");
        sum += g[k].photons;
    }
    assert_int_equal(sum, out.photons);
    const double mean = per_m * 10.0;
    print_message("Frank-Tamm %.6g /m, genstep %.6g /m; photons over 10 m %llu, mean %.1f\n", per_m,
                  (double)g[0].cerenkov.mean_photons1, (unsigned long long)sum, mean);
    assert_near((double)sum, mean, 4 * sqrt(mean), "photons over 10 m");
    double api = 0;
    assert_int_equal(prism_cerenkov_photons_per_metre(geo, water, 1.0, beta, 300, 600, &api),
                     PRISM_SUCCESS);
    assert_near(api, per_m, 1e-6 * per_m, "prism_cerenkov_photons_per_metre");
    /* the same desc, the same bytes */
    prism_gensteps again;
    assert_int_equal(prism_gensteps_muon(geo, &d, &again), PRISM_SUCCESS);
    assert_int_equal(again.count, out.count);
    assert_memory_equal(again.data, out.data, out.count * sizeof(prism_genstep));
    /* they generate: photons on the track's cone, in the water */
    prism_photon_source src = {.kind = PRISM_SOURCE_GENSTEPS,
                               .gensteps = out.data,
                               .genstep_count = out.count};
    prism_photon *ph = calloc(1000, sizeof *ph);
    prism_propagate_outputs o = {.photons = {.kind = PRISM_TARGET_HOST, .host = ph}};
    prism_propagate_stats st;
    src.count = 1000;
    assert_int_equal(prism_propagate(kt_ctx, geo, &src, NULL, &o, &st), PRISM_SUCCESS);
    free(ph);
    /* a track that misses: no gensteps, success */
    d.position[0] = 50;
    prism_gensteps none;
    assert_int_equal(prism_gensteps_muon(geo, &d, &none), PRISM_SUCCESS);
    assert_int_equal(none.count, 0);
    prism_gensteps_free(&none);
    prism_gensteps_free(&again);
    prism_gensteps_free(&out);
    /* the muon's own mistakes */
    d.energy_gev = 0.1;
    assert_int_equal(prism_gensteps_muon(geo, &d, &out), PRISM_ERROR_INVALID_ARGUMENT);
    d.energy_gev = 1;
    d.direction[2] = 0;
    assert_int_equal(prism_gensteps_muon(geo, &d, &out), PRISM_ERROR_INVALID_ARGUMENT);
    prism_geometry_destroy(geo);
    kt_free(&s, kt_ctx);
}

/* A scintillator (yield 1000/MeV) in the muon source, its constants set in
 * the tables by hand: 2 MeV/cm x 1 m x 1000/MeV = 2e5 photons a metre,
 * within 4 sigma (Gaussian of resolution 1). */
static void test_muon_scintillation_yield(void **state)
{
    (void)state;
    kt_scene s;
    memset(&s, 0, sizeof s);
    uint32_t ls = kt_material(&s, "ls", 1.5f, 0, 0);
    const float lo[3] = {-1, -1, -1}, hi[3] = {1, 1, 1};
    kt_box(&s, lo, hi, 0, ls, PRISM_NONE, PRISM_NONE);
    assert_int_equal(kt_build(&s, kt_ctx), 0);
    *material_params(&s, ls) = (prism_material_params){
        .yield = 1000, .resolution_scale = 1, .time_fast = 5, .time_slow = 50, .yield_ratio = 0.7f};
    prism_muon_desc d = {.position = {0, 0, -3}, .direction = {0, 0, 1}, .energy_gev = 4};
    prism_gensteps out;
    assert_int_equal(prism__gensteps_muon_view(kt_ctx, &s.view, prism__optics_view(s.optics), &d,
                                               &out),
                     PRISM_SUCCESS);
    assert_int_equal(out.segments, 1);
    const double mean = 1000.0 * 200.0 * 2.0;
    print_message("scintillation photons %llu, mean %.0f; Cerenkov %llu\n",
                  (unsigned long long)out.scintillation_photons, mean,
                  (unsigned long long)out.cerenkov_photons);
    assert_near((double)out.scintillation_photons, mean, 4 * sqrt(mean), "scintillation photons");
    assert_true(out.cerenkov_photons > 0);
    size_t scint = 0;
    const prism_genstep *g = (const prism_genstep *)(const void *)out.data;
    for (size_t k = 0; k < out.count; k++)
        scint += g[k].gentype == PRISM_GENSTEP_SCINTILLATION;
    assert_int_equal(scint, 20); /* 2 m in 0.1 m pieces */
    prism_gensteps_free(&out);
    kt_free(&s, kt_ctx);
}

/* Scintillation: the delay after the step's own time is two exponentials,
 * 5 ns with probability 0.7 and 50 ns: mean 0.7 x 5 + 0.3 x 50 = 18.5 ns
 * (sd 34.5), and 0.7(1 - e^-2) + 0.3(1 - e^-0.2) = 0.65965 of it below 10
 * ns; directions isotropic (mean of each component 0, of z^2 1/3), the
 * polarisation a unit vector across the direction, positions on the step
 * (mean fraction 1/2), the wavelength 420 nm (no spectrum). N = 40000. */
static void test_scintillation_profile(void **state)
{
    (void)state;
    kt_scene s;
    generation_scene(&s);
    *material_params(&s, 2) = (prism_material_params){
        .yield = 1000, .resolution_scale = 1, .time_fast = 5, .time_slow = 50, .yield_ratio = 0.7f};
    prism_genstep g = scintillation(2, 40000);
    prism_photon_source src = genstep_source(&g, 1, 0);
    prism_photon *ph = generate(&s, &src, g.photons, 0, 11);
    const size_t n = g.photons;
    double delay = 0, f_sum = 0, d[3] = {0, 0, 0}, z2 = 0;
    size_t early = 0;
    for (size_t i = 0; i < n; i++) {
        const prism_photon *p = &ph[i];
        const double f = p->pos[0] - g.pos[0];
        assert_true(f >= 0.0 && f <= 1.0);
        assert_true(p->pos[1] == 0.0f && p->pos[2] == 0.0f);
        const double t = p->time - g.time - f / g.pre_velocity;
        assert_true(t >= -1e-4);
        delay += t;
        early += t < 10.0;
        f_sum += f;
        for (int k = 0; k < 3; k++)
            d[k] += p->dir[k];
        z2 += (double)p->dir[2] * p->dir[2];
        assert_near(dot3(p->dir, p->dir), 1.0, 2e-6, "|dir|^2");
        assert_near(dot3(p->pol, p->pol), 1.0, 2e-6, "|pol|^2");
        assert_near(dot3(p->pol, p->dir), 0.0, 2e-6, "pol . dir");
        assert_true(p->wavelength == PRISM_GENSTEP_DEFAULT_WAVELENGTH);
    }
    const double sd = sqrt(0.7 * 2 * 25 + 0.3 * 2 * 2500 - 18.5 * 18.5);
    print_message("mean delay %.4f ns (18.5), below 10 ns %.5f (0.65965), mean z^2 %.5f (1/3), "
                  "mean fraction %.5f (0.5)\n",
                  delay / n, (double)early / n, z2 / n, f_sum / n);
    assert_near(delay / n, 18.5, 4 * sd / sqrt(n), "mean delay, ns");
    assert_fraction(early, n, 0.7 * (1 - exp(-2.0)) + 0.3 * (1 - exp(-0.2)), "delay below 10 ns");
    assert_near(f_sum / n, 0.5, 4 * sqrt(1 / 12.0 / n), "mean place on the step");
    for (int k = 0; k < 3; k++)
        assert_near(d[k] / n, 0.0, 4 * sqrt(1 / 3.0 / n), "mean direction");
    assert_near(z2 / n, 1 / 3.0, 4 * sqrt(4 / 45.0 / n), "mean dir_z^2");
    free(ph);
    /* one decay constant given (Opticks's per-component genstep): mean 7 ns;
     * and an emission spectrum: its inverse CDF 400 + 100 u nm, mean 450 */
    g.scintillation.time = 7.0f;
    material_params(&s, 2)->has_spectrum = 1;
    float *icdf = (float *)(void *)(s.optics->view.emission_icdf + 2 * PRISM_OPTICS_ICDF_COUNT);
    for (unsigned k = 0; k < PRISM_OPTICS_ICDF_COUNT; k++)
        icdf[k] = 400.0f + 100.0f * (float)k / (PRISM_OPTICS_ICDF_COUNT - 1);
    g.photons = 20000;
    ph = generate(&s, &src, g.photons, 0, 12);
    double wl = 0;
    delay = 0;
    for (size_t i = 0; i < g.photons; i++) {
        delay += ph[i].time - g.time - (ph[i].pos[0] - g.pos[0]) / g.pre_velocity;
        wl += ph[i].wavelength;
        assert_true(ph[i].wavelength >= 400.0f && ph[i].wavelength <= 500.0f);
    }
    assert_near(delay / g.photons, 7.0, 4 * 7.0 / sqrt(g.photons), "one decay constant");
    assert_near(wl / g.photons, 450.0, 4 * 100 / sqrt(12.0 * g.photons), "spectrum mean");
    free(ph);
    kt_free(&s, kt_ctx);
}

/* Several gensteps, some without photons: photon i is the same bits
 * whatever the call it is made in (first_photon, count 0 for the rest). */
static void test_batches_bit_identical(void **state)
{
    (void)state;
    kt_scene s;
    generation_scene(&s);
    *material_params(&s, 2) = (prism_material_params){
        .yield = 1, .resolution_scale = 1, .time_fast = 3, .time_slow = 30, .yield_ratio = 0.5f};
    prism_genstep g[5] = {cerenkov(0, 700, 0.9f), scintillation(2, 0), scintillation(2, 1200),
                          cerenkov(1, 0, 0.99f), cerenkov(1, 1100, 0.99f)};
    g[4].cerenkov.max_cos = 1.0f / 0.99f / 1.45f;
    g[4].cerenkov.max_sin2 = (1 - g[4].cerenkov.max_cos) * (1 + g[4].cerenkov.max_cos);
    const size_t total = 3000;
    prism_photon_source src = genstep_source(g, 5, 0);
    prism_photon *whole = generate(&s, &src, total, 0, 42);
    const size_t cuts[] = {1, 699, 700, 701, 1900, 2999};
    for (size_t c = 0; c < sizeof cuts / sizeof cuts[0]; c++) {
        src.count = cuts[c];
        prism_photon *a = generate(&s, &src, cuts[c], 0, 42);
        src.count = 0; /* the rest */
        prism_photon *b = generate(&s, &src, total - cuts[c], cuts[c], 42);
        assert_memory_equal(a, whole, cuts[c] * sizeof *a);
        assert_memory_equal(b, whole + cuts[c], (total - cuts[c]) * sizeof *b);
        free(a);
        free(b);
    }
    /* another seed, other photons */
    src.count = total;
    prism_photon *other = generate(&s, &src, total, 0, 43);
    assert_true(memcmp(other, whole, total * sizeof *other) != 0);
    free(other);
    free(whole);
    kt_free(&s, kt_ctx);
}

typedef struct collected {
    prism_photon *photons;
    size_t count;
    uint64_t next;
} collected;

static prism_result sink(void *user, const prism_propagate_batch *b)
{
    collected *c = user;
    if (b->first != c->next)
        return PRISM_ERROR_INVALID_ARGUMENT;
    memcpy(c->photons + c->count, b->photons, b->count * sizeof *b->photons);
    c->count += b->count;
    c->next += b->count;
    return PRISM_SUCCESS;
}

/* Through a real detector (the water tank of kt_detector_scene): one
 * prism_propagate call against prism_propagate_stream with batches of
 * 1000, 777 and 5000 photons: the same final photons, byte for byte; a
 * stream with gensteps needs no fill. */
static void test_stream_bit_identical(void **state)
{
    (void)state;
    kt_scene s;
    memset(&s, 0, sizeof s);
    kt_detector_scene(&s);
    assert_int_equal(kt_build(&s, kt_ctx), 0);
    prism_geometry *geo = kt_upload(&s, kt_ctx, PRISM_PLACEMENT_AUTO, false);
    assert_non_null(geo);
    prism_genstep g[3] = {cerenkov(1, 2500, 0.99f), cerenkov(1, 0, 0.99f), cerenkov(1, 2000, 0.8f)};
    for (int k = 0; k < 3; k++) {
        g[k].pos[0] = 0.5f * k - 3.0f, g[k].pos[1] = 1.5f, g[k].pos[2] = -3.5f;
        g[k].cerenkov.max_cos = g[k].cerenkov.beta_inverse / 1.33f;
        g[k].cerenkov.max_sin2 = (1 - g[k].cerenkov.max_cos) * (1 + g[k].cerenkov.max_cos);
    }
    const size_t total = 4500;
    prism_photon_source src = genstep_source(g, 3, 0);
    prism_photon *one = calloc(total, sizeof *one);
    prism_propagate_outputs o = {.photons = {.kind = PRISM_TARGET_HOST, .host = one}};
    prism_propagate_desc d = {.seed = 5};
    assert_int_equal(prism_propagate(kt_ctx, geo, &src, &d, &o, NULL), PRISM_SUCCESS);
    size_t detected = 0;
    for (size_t i = 0; i < total; i++)
        detected += (one[i].history & (PRISM_BULK_ABSORB | PRISM_NO_HIT)) != 0;
    assert_true(detected > 0); /* they went somewhere */
    const size_t batches[] = {1000, 777, 5000};
    for (size_t b = 0; b < 3; b++) {
        collected c = {.photons = calloc(total, sizeof(prism_photon))};
        prism_propagate_stream_desc sd = {
            .batch = batches[b], .photons = true, .sink = sink, .user = &c};
        prism_context *ctxs[1] = {kt_ctx};
        const prism_geometry *geos[1] = {geo};
        prism_result r = prism_propagate_stream(ctxs, geos, 1, &src, &d, &sd, NULL, NULL);
        if (r != PRISM_SUCCESS)
            fail_msg("stream: %s", prism_context_last_error(kt_ctx));
        assert_int_equal(c.count, total);
        assert_memory_equal(c.photons, one, total * sizeof *one);
        free(c.photons);
    }
    /* prism_propagate_multi too */
    prism_photon *multi = calloc(total, sizeof *multi);
    prism_propagate_outputs mo = {.photons = {.kind = PRISM_TARGET_HOST, .host = multi}};
    prism_context *ctxs[1] = {kt_ctx};
    const prism_geometry *geos[1] = {geo};
    assert_int_equal(prism_propagate_multi(ctxs, geos, 1, &src, &d, &mo, NULL, NULL),
                     PRISM_SUCCESS);
    assert_memory_equal(multi, one, total * sizeof *one);
    free(multi);
    /* a bad genstep stops a stream before any batch */
    g[2].material = 99;
    collected c = {.photons = calloc(total, sizeof(prism_photon))};
    prism_propagate_stream_desc sd = {.batch = 1000, .photons = true, .sink = sink, .user = &c};
    assert_int_equal(prism_propagate_stream(ctxs, geos, 1, &src, &d, &sd, NULL, NULL),
                     PRISM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(prism_context_last_error(kt_ctx), "genstep 2"));
    assert_int_equal(c.count, 0);
    free(c.photons);
    free(one);
    prism_geometry_destroy(geo);
    kt_free(&s, kt_ctx);
}

static void expect_error(kt_scene *s, prism_photon_source *src, uint64_t first, const char *text)
{
    prism_photon ph[8];
    prism_propagate_desc d = {.first_photon = first};
    prism_propagate_stats st;
    const prism_result r = prism__propagate_view(kt_ctx, &s->view, prism__optics_view(s->optics),
                                                 src, &d, ph, NULL, NULL, &st);
    assert_int_equal(r, PRISM_ERROR_INVALID_ARGUMENT);
    if (strstr(prism_context_last_error(kt_ctx), text) == NULL)
        fail_msg("message '%s' does not say '%s'", prism_context_last_error(kt_ctx), text);
}

/* Each refusal names the genstep (by its index) and what is wrong. */
static void test_errors(void **state)
{
    (void)state;
    kt_scene s;
    generation_scene(&s);
    prism_genstep g[3] = {cerenkov(0, 2, 0.9f), scintillation(2, 3), cerenkov(0, 3, 0.9f)};
    prism_photon_source src = genstep_source(g, 3, 8);
    prism_photon ph[8];
    prism_propagate_stats st;
    assert_int_equal(prism__propagate_view(kt_ctx, &s.view, prism__optics_view(s.optics), &src,
                                           NULL, ph, NULL, NULL, &st),
                     PRISM_SUCCESS);
    g[1].material = 3; /* three materials in the tables */
    expect_error(&s, &src, 0, "genstep 1: material 3, the optics tables hold 3 materials");
    g[1].material = 2;
    g[2].pos[1] = NAN;
    expect_error(&s, &src, 0, "genstep 2: a position");
    g[2].pos[1] = 0;
    g[2].cerenkov.max_sin2 = INFINITY;
    expect_error(&s, &src, 0, "genstep 2: a Cerenkov parameter");
    g[2].cerenkov.max_sin2 = 0.5f;
    g[0].gentype = 1; /* Opticks's older G4Cerenkov_1042 layout: refused */
    expect_error(&s, &src, 0, "genstep 0: gentype 1");
    g[0].gentype = PRISM_GENSTEP_CERENKOV;
    src.count = 9; /* the photon counts sum to 8 */
    expect_error(&s, &src, 0, "sum to 8");
    src.count = 2;
    expect_error(&s, &src, 7, "sum to 8");
    src.count = 0;
    expect_error(&s, &src, 8, "photon 8 asked for");
    src.count = 8;
    g[1].pre_velocity = 0;
    expect_error(&s, &src, 0, "genstep 1: its velocity");
    g[1].pre_velocity = 0.25f;
    src.gensteps = NULL;
    expect_error(&s, &src, 0, "without gensteps");
    src.gensteps = (const float *)(const void *)g;
    src.genstep_count = 0;
    expect_error(&s, &src, 0, "without gensteps");
    /* a call checks the gensteps it uses: genstep 2 is not among photons 0..1 */
    src.genstep_count = 3;
    g[2].material = 77;
    src.count = 2;
    assert_int_equal(prism__propagate_view(kt_ctx, &s.view, prism__optics_view(s.optics), &src,
                                           NULL, ph, NULL, NULL, &st),
                     PRISM_SUCCESS);
    kt_free(&s, kt_ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cerenkov_cone_constant_index),
        cmocka_unit_test(test_cerenkov_spectrum),
        cmocka_unit_test(test_cerenkov_cone_dispersive),
        cmocka_unit_test(test_muon_frank_tamm),
        cmocka_unit_test(test_muon_scintillation_yield),
        cmocka_unit_test(test_scintillation_profile),
        cmocka_unit_test(test_batches_bit_identical),
        cmocka_unit_test(test_stream_bit_identical),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, kt_host_setup, kt_host_teardown);
}
