/* The optics tables' host side (engine/upload/optics.c): scintillation
 * constants and the inverse emission CDF from a material's properties,
 * Geant4 surfaces to the glisur/unified rows and parameters, what is
 * refused or clamped (and logged), G4DAE's constant properties as the
 * loader reads them, and the generated detector's scintillator. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "engine/upload/optics_tables.h"
#include "prism/context.h"
#include "prism/scene.h"

#define N PRISM_OPTICS_WAVELENGTH_COUNT
#define ICDF PRISM_OPTICS_ICDF_COUNT

/* ---- a context whose warnings the test reads ---- */

typedef struct logbook {
    int warnings;
    char text[8][512];
} logbook;

static void record(void *user, prism_log_level level, const char *msg)
{
    logbook *b = user;
    if (level != PRISM_LOG_WARNING)
        return;
    if (b->warnings < 8)
        snprintf(b->text[b->warnings], sizeof b->text[0], "%s", msg);
    b->warnings++;
}

static prism_context *logging_context(logbook *b)
{
    memset(b, 0, sizeof *b);
    prism_context_desc d = {.backend = PRISM_BACKEND_HOST, .log = record, .log_user = b};
    prism_context *ctx = NULL;
    assert_int_equal(prism_context_create(&d, &ctx), PRISM_SUCCESS);
    return ctx;
}

/* Whether some warning holds all of a, b (b may be NULL). */
static bool logged(const logbook *b, const char *x, const char *y)
{
    for (int i = 0; i < b->warnings && i < 8; i++)
        if (strstr(b->text[i], x) != NULL && (y == NULL || strstr(b->text[i], y) != NULL))
            return true;
    return false;
}

static void assert_near(double got, double want, double tol, const char *what)
{
    if (!(fabs(got - want) <= tol))
        print_error("%s: got %.9g, want %.9g (+-%g)\n", what, got, want, tol);
    assert_true(fabs(got - want) <= tol);
}

/* ---- hand-made properties ---- */

static prism_property prop(const char *name, const float *wl, const float *v, size_t n)
{
    return (prism_property){
        .name = (char *)name, .wavelength_nm = (float *)wl, .value = (float *)v, .count = n};
}

/* A constant as the loader stores one: one point at wavelength 0. */
static const float zero_wl[1] = {0.0f};
#define CONST(name, v) prop(name, zero_wl, (const float[]){v}, 1)

static prism_material material(const char *name, prism_property *p, size_t n)
{
    return (prism_material){.name = (char *)name, .properties = p, .properties_count = n};
}

/* The wavelength at u of a density flat in photon energy between a and b
 * nm (x = 1/lambda uniform): the energy-density reading of a flat table. */
static double flat_in_energy(double a, double b, double u)
{
    return 1.0 / (1.0 / a - u * (1.0 / a - 1.0 / b));
}

static double icdf_at(const float *icdf, double u)
{
    prism_optics_view v = {.emission_icdf = icdf};
    return prism_optics_emission_wavelength(&v, 0, (float)u);
}

/* A flat table between 400 and 500 nm is flat per unit energy, as Geant4
 * reads it: 1/lambda is uniform in u, so the median is 444.4 nm (the
 * harmonic mean), not the 450 nm a density per nanometre would give. */
static void test_flat_spectrum(void **state)
{
    (void)state;
    float wl[3] = {400, 450, 500}, v[3] = {2, 2, 2};
    prism_property p[1] = {prop("FASTCOMPONENT", wl, v, 3)};
    prism_material m = material("flat", p, 1);
    prism_material_params mp;
    float icdf[ICDF];
    prism__optics_material_params(NULL, &m, &mp, icdf);
    assert_int_equal(mp.has_spectrum, 1);
    assert_near(icdf[0], 400.0, 1e-3, "u=0");
    assert_near(icdf[ICDF - 1], 500.0, 1e-3, "u=1");
    for (unsigned k = 0; k < ICDF; k++)
        assert_near(icdf[k], flat_in_energy(400, 500, k / (double)(ICDF - 1)), 1e-3, "flat");
    assert_near(icdf_at(icdf, 0.5), 2.0 / (1.0 / 400 + 1.0 / 500), 1e-3, "median");
    /* No scintillation constants: yield 0, resolution 1, ratio 1. */
    assert_true(mp.yield == 0.0f);
    assert_true(mp.resolution_scale == 1.0f);
    assert_true(mp.yield_ratio == 1.0f);
    assert_true(mp.time_fast == 0.0f && mp.time_slow == 0.0f);
}

/* A density rising linearly in energy from 0 at 500 nm to its top at
 * 400 nm: with s = (x - x500) / (x400 - x500), the CDF from the short end
 * is 1 - s^2, so x(u) = x500 + (x400 - x500) sqrt(1 - u): the inversion is
 * exact inside a segment, not a straight line between the points. */
static void test_sloped_spectrum(void **state)
{
    (void)state;
    float wl[2] = {400, 500}, v[2] = {3, 0};
    prism_property p[1] = {prop("SCINTILLATIONCOMPONENT1", wl, v, 2)};
    prism_material m = material("slope", p, 1);
    prism_material_params mp;
    float icdf[ICDF];
    prism__optics_material_params(NULL, &m, &mp, icdf);
    assert_int_equal(mp.has_spectrum, 1);
    for (unsigned k = 0; k < ICDF; k++) {
        double u = k / (double)(ICDF - 1);
        double x = 1.0 / 500 + (1.0 / 400 - 1.0 / 500) * sqrt(1.0 - u);
        assert_near(icdf[k], 1.0 / x, 2e-3, "slope");
    }
}

/* Two components in separate bands, the second 10 times as bright (the
 * normalisation must undo that): YIELDRATIO 0.7 puts 70% of the photons
 * in 400-420 nm and 30% in 480-500 nm, each flat in energy. */
static void test_two_components(void **state)
{
    (void)state;
    float w1[2] = {400, 420}, v1[2] = {1, 1}, w2[2] = {480, 500}, v2[2] = {10, 10};
    prism_property p[7] = {prop("FASTCOMPONENT", w1, v1, 2), prop("SLOWCOMPONENT", w2, v2, 2),
                           CONST("YIELDRATIO", 0.7f),        CONST("FASTTIMECONSTANT", 4.9f),
                           CONST("SLOWTIMECONSTANT", 20.6f), CONST("SCINTILLATIONYIELD", 1e4f),
                           CONST("RESOLUTIONSCALE", 0.5f)};
    prism_material m = material("two", p, 7);
    prism_material_params mp;
    float icdf[ICDF];
    prism__optics_material_params(NULL, &m, &mp, icdf);
    assert_int_equal(mp.has_spectrum, 1);
    assert_near(mp.yield, 1e4, 0, "yield");
    assert_near(mp.resolution_scale, 0.5, 0, "resolution");
    assert_near(mp.time_fast, 4.9, 1e-6, "fast");
    assert_near(mp.time_slow, 20.6, 1e-6, "slow");
    assert_near(mp.yield_ratio, 0.7, 1e-7, "ratio");
    assert_near(icdf_at(icdf, 0.35), flat_in_energy(400, 420, 0.5), 0.05, "first's median");
    assert_near(icdf_at(icdf, 0.85), flat_in_energy(480, 500, 0.5), 0.05, "second's median");
    unsigned blue = 0;
    for (unsigned k = 0; k < ICDF; k++) {
        assert_true(icdf[k] >= 400.0f - 1e-3f && icdf[k] <= 500.0f + 1e-3f);
        assert_true(k == 0 || icdf[k] >= icdf[k - 1]);
        assert_false(icdf[k] > 420.001f && icdf[k] < 479.999f); /* nothing emitted between */
        blue += icdf[k] < 450.0f;
    }
    assert_int_equal(blue, 179); /* u = k/255 < 0.7: k = 0..178 */

    /* Geant4 11's names: relative yields 3 : 1, time constants 1 and 2. */
    prism_property q[6] = {
        prop("SCINTILLATIONCOMPONENT1", w1, v1, 2), prop("SCINTILLATIONCOMPONENT2", w2, v2, 2),
        CONST("SCINTILLATIONYIELD1", 3.0f),         CONST("SCINTILLATIONYIELD2", 1.0f),
        CONST("SCINTILLATIONTIMECONSTANT1", 2.0f),  CONST("SCINTILLATIONTIMECONSTANT2", 30.0f)};
    m = material("g4-11", q, 6);
    prism__optics_material_params(NULL, &m, &mp, icdf);
    assert_near(mp.yield_ratio, 0.75, 1e-7, "relative yields");
    assert_near(mp.time_fast, 2.0, 0, "constant 1");
    assert_near(mp.time_slow, 30.0, 0, "constant 2");
    assert_near(icdf_at(icdf, 0.75 * 0.5), flat_in_energy(400, 420, 0.5), 0.05, "3:1");

    /* One time constant: both components take it, and the ratio is 1. */
    prism_property r[2] = {prop("SLOWCOMPONENT", w2, v2, 2), CONST("SLOWTIMECONSTANT", 7.0f)};
    m = material("one", r, 2);
    prism__optics_material_params(NULL, &m, &mp, icdf);
    assert_near(mp.time_fast, 7.0, 0, "one: fast");
    assert_near(mp.time_slow, 7.0, 0, "one: slow");
    assert_near(mp.yield_ratio, 1.0, 0, "one: ratio");
    assert_near(icdf[0], 480.0, 1e-3, "one: start");
    assert_near(icdf[ICDF - 1], 500.0, 1e-3, "one: end");

    /* Ratio 1: the second component has no photons, its band none either. */
    p[2] = CONST("YIELDRATIO", 1.0f);
    m = material("ratio-1", p, 7);
    prism__optics_material_params(NULL, &m, &mp, icdf);
    assert_near(icdf[ICDF - 1], 420.0, 1e-3, "ratio 1: end");
}

/* Spectra and constants Prism cannot use: refused or clamped, with a
 * warning naming the material and the property. */
static void test_bad_spectra(void **state)
{
    (void)state;
    logbook b;
    prism_context *ctx = logging_context(&b);
    prism_material_params mp;
    float icdf[ICDF];

    /* All zeros: no spectrum, and the yield it cannot use is dropped. */
    float wl[3] = {400, 450, 500}, zero[3] = {0, 0, 0};
    prism_property p[2] = {prop("FASTCOMPONENT", wl, zero, 3), CONST("SCINTILLATIONYIELD", 500)};
    prism_material m = material("dark", p, 2);
    prism__optics_material_params(ctx, &m, &mp, icdf);
    assert_int_equal(mp.has_spectrum, 0);
    assert_true(mp.yield == 0.0f);
    assert_true(icdf[0] == 0.0f && icdf[ICDF - 1] == 0.0f);
    assert_int_equal(b.warnings, 2);
    assert_true(logged(&b, "\"dark\": FASTCOMPONENT is no emission spectrum", "zero everywhere"));
    assert_true(logged(&b, "\"dark\": SCINTILLATIONYIELD 500 without an emission spectrum",
                       "yield taken as 0"));

    /* Negative values count as 0: -1 at 400 nm, so the density rises from
     * 0 at 400 nm to 1 at 450 nm and stays 1 to 500 nm. */
    memset(&b, 0, sizeof b);
    float neg[3] = {-1, 1, 1};
    p[0] = prop("FASTCOMPONENT", wl, neg, 3);
    m = material("negative", p, 1);
    prism__optics_material_params(ctx, &m, &mp, icdf);
    assert_int_equal(mp.has_spectrum, 1);
    assert_int_equal(b.warnings, 1);
    assert_true(logged(&b, "\"negative\": FASTCOMPONENT has negative values", "taken as 0"));
    double x400 = 1.0 / 400, x450 = 1.0 / 450, x500 = 1.0 / 500;
    double first = 0.5 * (x400 - x450), second = x450 - x500; /* masses of the two segments */
    assert_near(icdf[0], 400.0, 1e-3, "negative: start");
    assert_near(icdf_at(icdf, first / (first + second)), 450.0, 0.05, "negative: knee");
    for (unsigned k = 1; k < ICDF; k++)
        assert_true(icdf[k] >= icdf[k - 1]);

    /* One point, or wavelengths out of order: no spectrum. The second
     * component stands alone then, whatever the ratio. */
    memset(&b, 0, sizeof b);
    float back[3] = {500, 450, 400}, ones[3] = {1, 1, 1};
    prism_property q[3] = {prop("FASTCOMPONENT", wl, ones, 1), prop("SLOWCOMPONENT", wl, ones, 3),
                           CONST("YIELDRATIO", 0.9f)};
    m = material("single", q, 3);
    prism__optics_material_params(ctx, &m, &mp, icdf);
    assert_int_equal(mp.has_spectrum, 1);
    assert_near(icdf[0], 400.0, 1e-3, "single: second alone");
    assert_near(icdf_at(icdf, 0.5), flat_in_energy(400, 500, 0.5), 0.05, "single: second alone");
    assert_true(logged(&b, "\"single\": FASTCOMPONENT is no emission spectrum", "two points"));
    q[1] = prop("SLOWCOMPONENT", back, ones, 3);
    m = material("backwards", q + 1, 1);
    prism__optics_material_params(ctx, &m, &mp, icdf);
    assert_int_equal(mp.has_spectrum, 0);
    assert_true(logged(&b, "\"backwards\": SLOWCOMPONENT is no emission spectrum", "increasing"));

    /* Constants: negative refused (default kept), a ratio above 1 clamped,
     * a table where a constant belongs gives its first value. */
    memset(&b, 0, sizeof b);
    float tw[2] = {300, 600}, tv[2] = {3, 5};
    prism_property c[4] = {CONST("SCINTILLATIONYIELD", -5), CONST("RESOLUTIONSCALE", -1),
                           CONST("YIELDRATIO", 1.5f), prop("FASTTIMECONSTANT", tw, tv, 2)};
    m = material("constants", c, 4);
    prism__optics_material_params(ctx, &m, &mp, icdf);
    assert_true(mp.yield == 0.0f);
    assert_true(mp.resolution_scale == 1.0f);
    assert_true(mp.yield_ratio == 1.0f);
    assert_true(mp.time_fast == 3.0f && mp.time_slow == 3.0f);
    assert_int_equal(b.warnings, 4);
    assert_true(logged(&b, "SCINTILLATIONYIELD is -5", "ignored"));
    assert_true(logged(&b, "RESOLUTIONSCALE is -1", "ignored"));
    assert_true(logged(&b, "yield ratio 1.5 is above 1", "taken as 1"));
    assert_true(logged(&b, "FASTTIMECONSTANT varies with wavelength", "first value 3"));
    prism_context_destroy(ctx);
}

/* ---- surfaces ---- */

static float row(const float *t, int r, unsigned i)
{
    return t[r * N + i];
}

static prism_surface geant4_surface(const char *name, int model, int type, int finish, double value,
                                    prism_property *p, size_t n)
{
    return (prism_surface){.name = (char *)name,
                           .model = model,
                           .type = type,
                           .finish = finish,
                           .value = value,
                           .properties = p,
                           .properties_count = n};
}

/* Unified ground metal: DETECT (1-R)E, ABSORB (1-R)(1-E), the REFLECT rows
 * 0, the lobes in Geant4's order with the last truncated so they sum to at
 * most 1; params as the file gave them. Grid point 11 is 280 nm (below the
 * table: R 0.2), point 16 is 380 nm (R 0.36). */
static void test_unified_surface(void **state)
{
    (void)state;
    float wl[2] = {300, 500}, refl[2] = {0.2f, 0.6f}, eff[2] = {0.5f, 0.5f};
    float spike[2] = {0.1f, 0.1f}, lobe[2] = {0.5f, 0.5f}, back[2] = {0.6f, 0.6f};
    float rindex[2] = {1.6f, 1.6f};
    prism_property p[6] = {
        prop("REFLECTIVITY", wl, refl, 2),           prop("EFFICIENCY", wl, eff, 2),
        prop("SPECULARSPIKECONSTANT", wl, spike, 2), prop("SPECULARLOBECONSTANT", wl, lobe, 2),
        prop("BACKSCATTERCONSTANT", wl, back, 2),    prop("RINDEX", wl, rindex, 2)};
    prism_surface s = geant4_surface("reflector", PRISM_SURFACE_MODEL_UNIFIED,
                                     PRISM_SURFACE_DIELECTRIC_METAL, PRISM_FINISH_GROUND, 0.2, p,
                                     6);
    float t[PRISM_SURF_COUNT_ * N];
    prism_surface_params sp;
    assert_int_equal(prism__optics_surface_support(&s), PRISM_OPTICS_SURFACE_GEANT4);
    prism__optics_resample_surface(NULL, &s, t, &sp);
    assert_int_equal(sp.model, PRISM_SURFACE_MODEL_UNIFIED);
    assert_int_equal(sp.type, PRISM_SURFACE_DIELECTRIC_METAL);
    assert_int_equal(sp.finish, PRISM_FINISH_GROUND);
    assert_near(sp.sigma_alpha, 0.2, 1e-7, "sigma_alpha");
    assert_near(row(t, PRISM_SURF_DETECT, 11), 0.4, 1e-6, "detect");
    assert_near(row(t, PRISM_SURF_ABSORB, 11), 0.4, 1e-6, "absorb");
    assert_near(row(t, PRISM_SURF_DETECT, 16), 0.32, 1e-6, "detect 380");
    assert_near(row(t, PRISM_SURF_ABSORB, 37), 0.2, 1e-6, "absorb 800");
    for (unsigned i = 0; i < N; i++) {
        assert_true(row(t, PRISM_SURF_REFLECT_SPECULAR, i) == 0.0f);
        assert_true(row(t, PRISM_SURF_REFLECT_DIFFUSE, i) == 0.0f);
        assert_near(row(t, PRISM_SURF_SPECULAR_SPIKE, i), 0.1, 1e-7, "spike");
        assert_near(row(t, PRISM_SURF_SPECULAR_LOBE, i), 0.5, 1e-7, "lobe");
        assert_near(row(t, PRISM_SURF_BACKSCATTER, i), 0.4, 1e-6, "backscatter, truncated");
        assert_true(row(t, PRISM_SURF_RINDEX, i) == 0.0f); /* not backpainted: unread */
    }
    assert_true(prism__optics_surface_uses(&s, "SPECULARLOBECONSTANT"));
    assert_true(prism__optics_surface_uses(&s, "EFFICIENCY"));
    assert_false(prism__optics_surface_uses(&s, "RINDEX"));
    assert_false(prism__optics_surface_uses(&s, "detect"));

    /* glisur has no lobes: the rows stay 0 and the constants are ignored. */
    s.model = PRISM_SURFACE_MODEL_GLISUR;
    prism__optics_resample_surface(NULL, &s, t, &sp);
    assert_int_equal(sp.model, PRISM_SURFACE_MODEL_GLISUR);
    assert_true(row(t, PRISM_SURF_SPECULAR_LOBE, 5) == 0.0f);
    assert_true(row(t, PRISM_SURF_SPECULAR_SPIKE, 5) == 0.0f);
    assert_near(row(t, PRISM_SURF_DETECT, 11), 0.4, 1e-6, "glisur detect");
    assert_false(prism__optics_surface_uses(&s, "SPECULARLOBECONSTANT"));

    /* A backpainted dielectric_dielectric reads the layer's RINDEX. */
    s = geant4_surface("painted", PRISM_SURFACE_MODEL_UNIFIED, PRISM_SURFACE_DIELECTRIC_DIELECTRIC,
                       PRISM_FINISH_GROUND_BACKPAINTED, 0.1, p + 5, 1);
    prism__optics_resample_surface(NULL, &s, t, &sp);
    assert_near(row(t, PRISM_SURF_RINDEX, 20), 1.6, 1e-6, "layer index");
    assert_true(row(t, PRISM_SURF_DETECT, 0) == 0.0f); /* R default 1: nothing absorbed */
    assert_true(prism__optics_surface_uses(&s, "RINDEX"));
}

/* Which surfaces change nothing (detect -1: a bare Fresnel boundary). */
static void test_bare_surfaces(void **state)
{
    (void)state;
    float wl[2] = {300, 500}, one[2] = {1, 1}, some[2] = {0.9f, 0.9f}, half[2] = {0.5f, 0.5f};
    prism_property r1[2] = {prop("REFLECTIVITY", wl, one, 2), prop("EFFICIENCY", wl, half, 2)};
    prism_property r9[1] = {prop("REFLECTIVITY", wl, some, 2)};
    float t[PRISM_SURF_COUNT_ * N];
    prism_surface_params sp;
    static const struct {
        int model, type, finish, props; /* props: 0 none, 1 R=1 and E, 2 R=0.9 */
        bool bare;
    } cases[] = {
        {0, 1, PRISM_FINISH_POLISHED, 0, true},  /* glisur polished dd, nothing given */
        {1, 1, PRISM_FINISH_POLISHED, 0, true},  /* unified, the same */
        {1, 1, PRISM_FINISH_POLISHED, 1, true},  /* R = 1: E never applies */
        {1, 1, PRISM_FINISH_POLISHED, 2, false}, /* absorbs 10% */
        {1, 1, PRISM_FINISH_GROUND, 0, false},   /* facet normals: not bare */
        {0, 1, PRISM_FINISH_GROUND, 0, false},   /* glisur ground: polish perturbs */
        {1, 1, PRISM_FINISH_POLISHED_FRONTPAINTED, 0, false},
        {1, 1, PRISM_FINISH_POLISHED_BACKPAINTED, 0, false},
        {1, 0, PRISM_FINISH_POLISHED, 0, false}, /* metal: a mirror (R default 1) */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        prism_property *p = cases[c].props == 1 ? r1 : cases[c].props == 2 ? r9 : NULL;
        size_t n = cases[c].props == 1 ? 2 : cases[c].props == 2 ? 1 : 0;
        prism_surface s = geant4_surface("case", cases[c].model, cases[c].type, cases[c].finish,
                                         0.0, p, n);
        prism__optics_resample_surface(NULL, &s, t, &sp);
        if ((t[0] < 0.0f) != cases[c].bare)
            print_error("case %zu: detect[0] %g\n", c, (double)t[0]);
        assert_int_equal(t[0] < 0.0f, cases[c].bare);
        if (!cases[c].bare) { /* the rest of the table: a real surface */
            prism_optics_view v = {.wavelength_start = PRISM_OPTICS_WAVELENGTH_START,
                                   .wavelength_step = PRISM_OPTICS_WAVELENGTH_STEP,
                                   .wavelength_count = N,
                                   .surface_count = 1,
                                   .surfaces = t,
                                   .surface_params = &sp};
            float out[PRISM_SURF_COUNT_];
            assert_int_equal(prism_optics_surface(&v, 0, 420.0f, out), 1);
            prism_surface_params got = prism_optics_surface_params(&v, 0);
            assert_int_equal(got.model, (uint32_t)cases[c].model);
            assert_int_equal(got.finish, (uint32_t)cases[c].finish);
        }
    }
    /* The metal mirror: R 1 absorbs and detects nothing. */
    prism_surface mirror = geant4_surface("mirror", 1, PRISM_SURFACE_DIELECTRIC_METAL,
                                          PRISM_FINISH_POLISHED, 0.0, NULL, 0);
    prism__optics_resample_surface(NULL, &mirror, t, &sp);
    for (unsigned i = 0; i < N; i++)
        assert_true(row(t, PRISM_SURF_DETECT, i) == 0.0f && row(t, PRISM_SURF_ABSORB, i) == 0.0f);
}

/* Chroma's names win: the four probabilities as given, model CHROMA. */
static void test_chroma_surface(void **state)
{
    (void)state;
    float wl[2] = {300, 500}, d[2] = {0.3f, 0.3f}, r[2] = {0.5f, 0.5f};
    prism_property p[3] = {prop("detect", wl, d, 2), prop("reflect_diffuse", wl, r, 2),
                           prop("REFLECTIVITY", wl, d, 2)};
    prism_surface s = geant4_surface("chroma", 1, 0, 3, 0.0, p, 3);
    float t[PRISM_SURF_COUNT_ * N];
    prism_surface_params sp;
    assert_int_equal(prism__optics_surface_support(&s), PRISM_OPTICS_SURFACE_CHROMA);
    prism__optics_resample_surface(NULL, &s, t, &sp);
    assert_int_equal(sp.model, PRISM_SURFACE_MODEL_CHROMA);
    assert_near(row(t, PRISM_SURF_DETECT, 20), 0.3, 1e-7, "detect");
    assert_near(row(t, PRISM_SURF_REFLECT_DIFFUSE, 20), 0.5, 1e-7, "diffuse");
    assert_true(row(t, PRISM_SURF_ABSORB, 20) == 0.0f);
    assert_true(row(t, PRISM_SURF_SPECULAR_LOBE, 20) == 0.0f);
    assert_true(prism__optics_surface_uses(&s, "detect"));
    assert_false(prism__optics_surface_uses(&s, "REFLECTIVITY"));
}

/* A model, type or finish Prism lacks: a bare boundary, one warning naming
 * the surface and saying so, through the upload's table build. */
static void test_unsupported_surfaces(void **state)
{
    (void)state;
    logbook b;
    prism_context *ctx = logging_context(&b);
    float wl[2] = {300, 500}, r[2] = {0.5f, 0.5f};
    prism_property p[1] = {prop("REFLECTIVITY", wl, r, 2)};
    prism_surface s[4] = {
        geant4_surface("lut", 2, 1, 0, 0.0, p, 1),      /* model LUT */
        geant4_surface("dichroic", 1, 4, 0, 0.0, p, 1), /* type dielectric_dichroic */
        geant4_surface("lumirror", 1, 1, 6, 0.0, p, 1), /* a LUT finish */
        geant4_surface("fine", 1, 0, 3, 0.0, p, 1),
    };
    prism_scene scene = {.surfaces = s, .surfaces_count = 4};
    prism_optics *o = NULL;
    assert_int_equal(prism__optics_create(ctx, &scene, &o), PRISM_SUCCESS);
    const prism_optics_view *v = prism__optics_view(o);
    float out[PRISM_SURF_COUNT_];
    for (uint32_t i = 0; i < 3; i++) {
        assert_int_equal(prism__optics_surface_support(&s[i]), PRISM_OPTICS_SURFACE_UNSUPPORTED);
        assert_int_equal(prism_optics_surface(v, i, 420.0f, out), 0);
        assert_false(prism__optics_surface_uses(&s[i], "REFLECTIVITY"));
    }
    assert_int_equal(prism_optics_surface(v, 3, 420.0f, out), 1);
    assert_int_equal(b.warnings, 3);
    assert_true(logged(&b, "surface \"lut\": model 2 (LUT)", "bare Fresnel boundary"));
    assert_true(logged(&b, "surface \"dichroic\"", "type 4 (dielectric_dichroic)"));
    assert_true(logged(&b, "surface \"lumirror\"", "finish 6 (LUT finish)"));
    prism__optics_destroy(ctx, o);
    prism_context_destroy(ctx);
}

/* ---- materials through the upload's build ---- */

/* REEMISSIONPROB without a spectrum: turned off, one warning; with one,
 * kept. The tables clamp RINDEX and lengths as before. */
static void test_material_tables(void **state)
{
    (void)state;
    logbook b;
    prism_context *ctx = logging_context(&b);
    float wl[2] = {300, 500}, re[2] = {0.5f, 1.5f}, one[2] = {1, 1}, zero[2] = {0, 0};
    prism_property a[1] = {prop("REEMISSIONPROB", wl, re, 2)};
    prism_property c[2] = {prop("REEMISSIONPROB", wl, re, 2), prop("FASTCOMPONENT", wl, one, 2)};
    prism_property z[1] = {prop("RINDEX", wl, zero, 2)};
    prism_material m[4] = {material("no-spectrum", a, 1), material("scintillator", c, 2),
                           material("zero-index", z, 1), material("none", NULL, 0)};
    prism_scene scene = {.materials = m, .materials_count = 4};
    prism_optics *o = NULL;
    assert_int_equal(prism__optics_create(ctx, &scene, &o), PRISM_SUCCESS);
    const prism_optics_view *v = prism__optics_view(o);
    assert_int_equal(b.warnings, 1);
    assert_true(logged(&b, "\"no-spectrum\": REEMISSIONPROB without an emission spectrum",
                       "reemission turned off"));
    assert_true(prism_optics_reemission_prob(v, 0, 400.0f) == 0.0f);
    assert_near(prism_optics_reemission_prob(v, 1, 300.0f), 0.5, 1e-6, "kept");
    assert_near(prism_optics_reemission_prob(v, 1, 600.0f), 1.0, 0, "clamped to 1");
    assert_int_equal(prism_optics_material_params(v, 1)->has_spectrum, 1);
    assert_near(prism_optics_emission_wavelength(v, 1, 0.0f), 300.0, 1e-3, "icdf in the view");
    assert_near(prism_optics_material(v, 2, 400.0f).rindex, 1.0, 0, "index 0: vacuum");
    prism_material_sample none = prism_optics_material(v, 3, 400.0f);
    assert_near(none.rindex, 1.0, 0, "none: index");
    assert_true(none.absorption_length >= PRISM_LENGTH_INFINITE);
    assert_true(prism__optics_material_uses(&m[1], "FASTCOMPONENT"));
    assert_true(prism__optics_material_uses(&m[1], "REEMISSIONPROB"));
    assert_false(prism__optics_material_uses(&m[0], "REEMISSIONPROB")); /* no spectrum */
    assert_true(prism__optics_material_uses(&m[0], "RINDEX"));
    assert_false(prism__optics_material_uses(&m[1], "GROUPVEL"));
    prism__optics_destroy(ctx, o);
    prism_context_destroy(ctx);
}

/* ---- the loader and the generated detector ---- */

/* G4DAE writes Geant4's constants as tables over energies -1 and 1: the
 * loader keeps one point at wavelength 0, the tables read it. */
static void test_g4dae_constants(void **state)
{
    (void)state;
    static const char doc[] =
        "<COLLADA><library_materials><material id=\"ls\"><extra>"
        "<matrix coldim=\"2\" name=\"Y0x1\">-1 11522 1 11522</matrix>"
        "<property name=\"SCINTILLATIONYIELD\" ref=\"Y0x1\"/>"
        "<matrix coldim=\"2\" name=\"R0x2\">-1 0.86 1 0.86</matrix>"
        "<property name=\"YIELDRATIO\" ref=\"R0x2\"/>"
        "<matrix coldim=\"2\" name=\"F0x3\">2.4797e-06 1 3.0996e-06 1</matrix>"
        "<property name=\"FASTCOMPONENT\" ref=\"F0x3\"/>"
        "</extra></material></library_materials></COLLADA>";
    prism_scene *s = NULL;
    char err[256] = "";
    prism_load_desc d = {.error = err, .error_size = sizeof err};
    assert_int_equal(prism_scene_load_memory(doc, sizeof doc - 1, "constants.dae", &d, &s),
                     PRISM_SUCCESS);
    assert_int_equal(s->materials_count, 1);
    const prism_property *y = prism_material_property(&s->materials[0], "SCINTILLATIONYIELD");
    assert_non_null(y);
    assert_int_equal(y->count, 1);
    assert_true(y->wavelength_nm[0] == 0.0f);
    assert_true(y->value[0] == 11522.0f);
    prism_material_params mp;
    float icdf[ICDF];
    prism__optics_material_params(NULL, &s->materials[0], &mp, icdf);
    assert_true(mp.yield == 11522.0f);
    assert_near(mp.yield_ratio, 0.86, 1e-7, "ratio");
    assert_int_equal(mp.has_spectrum, 1);
    assert_near(icdf[0], 1239.84198e-6 / 3.0996e-6, 0.01, "400 nm");
    assert_near(icdf[ICDF - 1], 1239.84198e-6 / 2.4797e-6, 0.01, "500 nm");
    prism_scene_free(s);
}

/* g4dae_optics.dae (tests/data/collada): a scintillator with G4DAE's
 * constants, water with REEMISSIONPROB and no spectrum, and four skin
 * surfaces: LUT (unsupported), a bare polished dielectric_dielectric,
 * Chroma's names, a groundbackpainted layer. The build warns twice. */
static void test_g4dae_optics_file(void **state)
{
    (void)state;
    char err[512] = "";
    prism_load_desc d = {.error = err, .error_size = sizeof err};
    prism_scene *s = NULL;
    assert_int_equal(prism_scene_load(PRISM_TEST_DATA "/collada/g4dae_optics.dae", &d, &s),
                     PRISM_SUCCESS);
    logbook b;
    prism_context *ctx = logging_context(&b);
    prism_optics *o = NULL;
    assert_int_equal(prism__optics_create(ctx, s, &o), PRISM_SUCCESS);
    const prism_optics_view *v = prism__optics_view(o);
    assert_int_equal(b.warnings, 2);
    assert_true(logged(&b, "\"Water0x9\": REEMISSIONPROB without an emission spectrum", NULL));
    assert_true(logged(&b, "surface \"LutSkin0x21\": model 2 (LUT)", "bare"));
    const prism_material_params *ls = prism_optics_material_params(v, 0);
    assert_true(ls->yield == 11522.0f);
    assert_near(ls->time_fast, 3.64, 1e-6, "fast");
    assert_near(ls->time_slow, 3.64, 1e-6, "one constant: slow = fast");
    assert_int_equal(ls->has_spectrum, 1);
    assert_near(prism_optics_reemission_prob(v, 0, 420.0f), 0.8, 1e-6, "LS reemits");
    assert_true(prism_optics_reemission_prob(v, 1, 420.0f) == 0.0f);
    float out[PRISM_SURF_COUNT_];
    assert_int_equal(prism_optics_surface(v, 0, 420.0f, out), 0); /* LUT: bare */
    assert_int_equal(prism_optics_surface(v, 1, 420.0f, out), 0); /* bare */
    assert_int_equal(prism_optics_surface(v, 2, 420.0f, out), 1);
    assert_int_equal(prism_optics_surface_params(v, 2).model, PRISM_SURFACE_MODEL_CHROMA);
    assert_near(out[PRISM_SURF_DETECT], 0.2, 1e-6, "chroma detect");
    assert_true(out[PRISM_SURF_ABSORB] == 0.0f); /* its REFLECTIVITY is not read */
    assert_int_equal(prism_optics_surface(v, 3, 420.0f, out), 1);
    assert_near(out[PRISM_SURF_RINDEX], 1.6, 1e-6, "paint layer");
    assert_int_equal(prism_optics_surface_params(v, 3).finish, PRISM_FINISH_GROUND_BACKPAINTED);
    prism__optics_destroy(ctx, o);
    prism_context_destroy(ctx);
    prism_scene_free(s);
}

static prism_scene *generated_detector(void)
{
    char gen[1024], out[1024], cmd[2200];
    snprintf(gen, sizeof gen, "%s/tools/prism-gen-detector", PRISM_BINARY_DIR);
    if (access(gen, X_OK) != 0)
        return NULL;
    snprintf(out, sizeof out, "%s/test_optics_%ld.dae", PRISM_BINARY_DIR, (long)getpid());
    snprintf(cmd, sizeof cmd, "'%s' --pmts 8 --output '%s'", gen, out);
    assert_int_equal(system(cmd), 0);
    char err[512] = "";
    prism_load_desc d = {.error = err, .error_size = sizeof err};
    prism_scene *s = NULL;
    prism_result r = prism_scene_load(out, &d, &s);
    remove(out);
    if (r != PRISM_SUCCESS)
        print_error("%s\n", err);
    assert_int_equal(r, PRISM_SUCCESS);
    return s;
}

/* The index of the material or surface whose name holds `part`. */
static uint32_t material_index(const prism_scene *s, const char *part)
{
    for (size_t i = 0; i < s->materials_count; i++)
        if (strstr(s->materials[i].name, part) != NULL)
            return (uint32_t)i;
    fail_msg("no material %s", part);
    return 0;
}

static uint32_t surface_index(const prism_scene *s, const char *part)
{
    for (size_t i = 0; i < s->surfaces_count; i++)
        if (strstr(s->surfaces[i].name, part) != NULL)
            return (uint32_t)i;
    fail_msg("no surface %s", part);
    return 0;
}

/* prism-gen-detector's scintillator scintillates and reemits, its tank
 * wall is a unified ground reflector, its photocathode detects; and the
 * build has nothing to warn about. */
static void test_generated_detector(void **state)
{
    (void)state;
    prism_scene *s = generated_detector();
    if (s == NULL)
        skip(); /* built without tools */
    logbook b;
    prism_context *ctx = logging_context(&b);
    prism_optics *o = NULL;
    assert_int_equal(prism__optics_create(ctx, s, &o), PRISM_SUCCESS);
    assert_int_equal(b.warnings, 0);
    const prism_optics_view *v = prism__optics_view(o);
    uint32_t ls = material_index(s, "LiquidScintillator");
    const prism_material_params *mp = prism_optics_material_params(v, ls);
    assert_true(mp->yield == 10000.0f);
    assert_int_equal(mp->has_spectrum, 1);
    assert_near(mp->time_fast, 4.9, 1e-6, "fast");
    assert_near(mp->time_slow, 20.6, 1e-5, "slow");
    assert_near(mp->yield_ratio, 0.8, 1e-7, "ratio");
    assert_near(mp->resolution_scale, 1.0, 0, "resolution");
    double median = prism_optics_emission_wavelength(v, ls, 0.5f);
    assert_true(median > 425.0 && median < 460.0);
    /* emission starts in the 350-360 nm step (0 at 350, rising) */
    assert_true(prism_optics_emission_wavelength(v, ls, 0.0f) >= 349.99f);
    assert_near(prism_optics_reemission_prob(v, ls, 380.0f), 0.8, 0.01, "reemission blue");
    assert_true(prism_optics_reemission_prob(v, ls, 520.0f) < 0.01f);
    double n430 = prism_optics_material(v, ls, 430.0f).rindex;
    assert_true(n430 > 1.48 && n430 < 1.50);
    uint32_t oil = material_index(s, "MineralOil");
    assert_true(prism_optics_material_params(v, oil)->yield == 0.0f);
    assert_int_equal(prism_optics_material_params(v, oil)->has_spectrum, 0);

    uint32_t wall = surface_index(s, "TankWallSurface");
    prism_surface_params wp = prism_optics_surface_params(v, wall);
    assert_int_equal(wp.model, PRISM_SURFACE_MODEL_UNIFIED);
    assert_int_equal(wp.type, PRISM_SURFACE_DIELECTRIC_METAL);
    assert_int_equal(wp.finish, PRISM_FINISH_GROUND);
    assert_near(wp.sigma_alpha, 0.2, 1e-7, "sigma_alpha");
    float out[PRISM_SURF_COUNT_];
    assert_int_equal(prism_optics_surface(v, wall, 420.0f, out), 1);
    assert_near(out[PRISM_SURF_ABSORB], 0.1, 1e-6, "wall absorbs 10%");
    assert_near(out[PRISM_SURF_SPECULAR_SPIKE], 0.1, 1e-6, "spike");
    assert_near(out[PRISM_SURF_SPECULAR_LOBE], 0.2, 1e-6, "lobe");
    uint32_t cathode = surface_index(s, "PmtCathodeSurface");
    assert_int_equal(prism_optics_surface(v, cathode, 400.0f, out), 1);
    assert_near(out[PRISM_SURF_DETECT], 0.25, 1e-3, "QE at 400 nm");
    assert_near(out[PRISM_SURF_DETECT] + out[PRISM_SURF_ABSORB], 1.0, 1e-6, "R = 0");
    prism__optics_destroy(ctx, o);
    prism_context_destroy(ctx);
    prism_scene_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flat_spectrum),     cmocka_unit_test(test_sloped_spectrum),
        cmocka_unit_test(test_two_components),    cmocka_unit_test(test_bad_spectra),
        cmocka_unit_test(test_unified_surface),   cmocka_unit_test(test_bare_surfaces),
        cmocka_unit_test(test_chroma_surface),    cmocka_unit_test(test_unsupported_surfaces),
        cmocka_unit_test(test_material_tables),   cmocka_unit_test(test_g4dae_constants),
        cmocka_unit_test(test_g4dae_optics_file), cmocka_unit_test(test_generated_detector),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
