/* The per-photon physics against theory, on the host (the device headers'
 * functions called directly, and full propagations on small scenes):
 * Fresnel reflectance for s and p light and total internal reflection,
 * Rayleigh's angular law and polarisation, the exponential free paths,
 * Geant4's surface models (unified lobes, dielectric_metal's R/E split,
 * the facet spread against sigma_alpha, painted finishes), bulk reemission
 * (fraction, spectrum, decay times) and the history bits.
 *
 * Statistics: every count is checked against its expectation within 4
 * standard deviations of its binomial (or sample-mean) error, and binned
 * shapes by chi^2 below the 1e-4 tail of their degrees of freedom; the
 * seeds are fixed, so a run is reproducible. Each test states N, the
 * expected value and the tolerance. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/launch/propagate_internal.h"
#include "kernels_test_scene.h"
#include "physics_tables.h"
#include "prism/device/photon.h"

#define C_LIGHT 0.299792458
#define PI 3.14159265358979323846

/* k of n against probability p, 4 binomial sigma. */
static void check_fraction(const char *what, size_t k, size_t n, double p)
{
    double f = (double)k / (double)n, sigma = sqrt(p * (1.0 - p) / (double)n);
    printf("# %-34s %.5f expected %.5f +- %.5f (4 sigma, N=%zu)\n", what, f, p, 4 * sigma, n);
    if (fabs(f - p) > 4.0 * sigma + 1e-12)
        fail_msg("%s: fraction %.5f, expected %.5f +- %.5f", what, f, p, 4 * sigma);
}

/* A sample mean against mu, 4 standard errors (sd: the population's). */
static void check_mean(const char *what, double mean, size_t n, double mu, double sd)
{
    double tol = 4.0 * sd / sqrt((double)n);
    printf("# %-34s %.5f expected %.5f +- %.5f (4 sigma, N=%zu)\n", what, mean, mu, tol, n);
    if (fabs(mean - mu) > tol)
        fail_msg("%s: mean %.5f, expected %.5f +- %.5f", what, mean, mu, tol);
}

static prism_rng rng(uint64_t seed, uint64_t i)
{
    return prism_rng_make(seed, i, 1u, PRISM_RNG_PROPAGATE);
}

static pv3 v3(double x, double y, double z)
{
    return pv3_normalize(pv3_make((float)x, (float)y, (float)z));
}

/* ------------------------------------------------------------------ */
/* A one-surface optics view for direct calls of the surface models.  */

typedef struct mini_optics {
    prism_optics_view v;
    float rows[PRISM_SURF_COUNT_ * 2];
    prism_surface_params sp;
} mini_optics;

static void mini_make(mini_optics *m, const pt_surface *s)
{
    memset(m, 0, sizeof *m);
    m->v.wavelength_start = 100.0f;
    m->v.wavelength_step = 800.0f;
    m->v.wavelength_count = 2;
    m->v.surface_count = 1;
    m->v.surfaces = m->rows;
    m->v.surface_params = &m->sp;
    pt_surface_rows(s, m->rows, 2);
    m->sp = pt_params(s);
}

/* One boundary event of surface `s` for photon (d, pol) on normal nn
 * (against d), from index n1 into n2. */
static uint32_t mini_hit(const mini_optics *m, prism_ray_state *st, pv3 nn, float n1, float n2,
                         prism_rng *r)
{
    const float *t = prism_optics_surface_table(&m->v, 0);
    assert_non_null(t);
    return prism_surface_geant4(st, nn, &m->v, t, prism_optics_lerp_at(&m->v, 420.0f), m->sp, n1,
                                n2, r);
}

/* ------------------------------------------------------------------ */
/* Fresnel                                                            */

static double fresnel_rs(double n1, double n2, double c1)
{
    double s2 = n1 / n2 * sqrt(1.0 - c1 * c1);
    if (s2 >= 1.0)
        return 1.0;
    double c2 = sqrt(1.0 - s2 * s2), a = (n1 * c1 - n2 * c2) / (n1 * c1 + n2 * c2);
    return a * a;
}

static double fresnel_rp(double n1, double n2, double c1)
{
    double s2 = n1 / n2 * sqrt(1.0 - c1 * c1);
    if (s2 >= 1.0)
        return 1.0;
    double c2 = sqrt(1.0 - s2 * s2), a = (n2 * c1 - n1 * c2) / (n2 * c1 + n1 * c2);
    return a * a;
}

/* Photons at angle theta onto the plane z = 0 (normal +z against them),
 * s-polarised (along y, perpendicular to the plane of incidence xz) or
 * p-polarised (in it). Through the bare boundary (prism_fresnel, Chroma's
 * s/p choice) and Geant4's polished dielectric_dielectric (amplitudes),
 * the reflected fraction is R_s or R_p of Fresnel's equations; N = 100000
 * each, 4 sigma. Transmitted photons obey Snell's law, s stays s. */
static void fresnel_case(double n1, double n2, double theta_deg, int s_pol)
{
    const size_t N = 100000;
    double th = theta_deg * PI / 180.0, c1 = cos(th);
    double expect = s_pol ? fresnel_rs(n1, n2, c1) : fresnel_rp(n1, n2, c1);
    pv3 d = v3(sin(th), 0, -cos(th)), nn = pv3_make(0, 0, 1);
    pv3 pol = s_pol ? pv3_make(0, 1, 0) : v3(cos(th), 0, sin(th));
    pt_surface g4 = {.model = PRISM_SURFACE_MODEL_UNIFIED,
                     .type = PRISM_SURFACE_DIELECTRIC_DIELECTRIC,
                     .finish = PRISM_FINISH_POLISHED,
                     .reflectivity = 1.0f};
    mini_optics m;
    mini_make(&m, &g4);
    for (int path = 0; path < 2; path++) {
        size_t refl = 0;
        for (size_t i = 0; i < N; i++) {
            prism_rng r = rng(11 + path, i);
            prism_ray_state st = {d, pol};
            uint32_t bits = path == 0 ? prism_fresnel(&st, nn, (float)n1, (float)n2, &r)
                                      : mini_hit(&m, &st, nn, (float)n1, (float)n2, &r);
            if (bits & PRISM_REFLECT_SPECULAR) {
                refl++;
                assert_true(st.dir.z > 0.0f);
                assert_float_equal(st.dir.x, d.x, 1e-6); /* mirror: x kept, z reversed */
                assert_float_equal(st.dir.z, -d.z, 1e-6);
                assert_int_equal((bits & PRISM_TOTAL_INTERNAL) != 0, expect == 1.0);
            } else {
                assert_int_equal(bits, PRISM_REFRACT);
                double sin_t = sqrt(st.dir.x * st.dir.x + st.dir.y * st.dir.y);
                assert_float_equal(sin_t * n2, sin(th) * n1, 1e-5); /* Snell */
                assert_true(st.dir.z < 0.0f);
                if (s_pol && theta_deg > 0)
                    assert_float_equal(fabsf(st.pol.y), 1.0f, 1e-5); /* s stays s */
            }
            assert_float_equal(pv3_dot(st.pol, st.dir), 0.0f, 1e-5);
            assert_float_equal(pv3_length(st.pol), 1.0f, 1e-5);
        }
        char what[96];
        snprintf(what, sizeof what, "%s R_%c %.1f->%.1f at %.0f deg", path == 0 ? "bare" : "geant4",
                 s_pol ? 's' : 'p', n1, n2, theta_deg);
        if (expect == 1.0) {
            assert_int_equal(refl, N); /* total: no photon crosses */
        } else if (expect < 1e-6) {    /* Brewster's p: float rounding of T = 1 at most */
            printf("# %-34s %zu of %zu reflected (expected %.1e)\n", what, refl, N, expect);
            assert_true(refl <= 2);
        } else
            check_fraction(what, refl, N, expect);
    }
}

static void test_fresnel_s_and_p(void **state)
{
    (void)state;
    for (int s = 0; s < 2; s++) {
        fresnel_case(1.0, 1.5, 0.0, s);  /* R = 0.04 for both */
        fresnel_case(1.0, 1.5, 45.0, s); /* R_s 0.0920, R_p 0.0085 */
        fresnel_case(1.5, 1.0, 30.0, s); /* R_s 0.1058, R_p 0.0046 */
        fresnel_case(1.5, 1.0, 45.0, s); /* beyond 41.8 deg: total */
        fresnel_case(1.0, 1.5, 56.3, s); /* Brewster: R_p ~ 0 */
    }
}

/* ------------------------------------------------------------------ */
/* Rayleigh                                                           */

/* Unpolarised light (a random polarisation per photon): the scattering
 * angle's cosine c has density 3/8 (1 + c^2); 20 bins, chi^2 with 19
 * degrees of freedom below 50 (its 1e-4 tail is ~49); <c^2> = 0.4 within
 * 4 sigma (sd of c^2: sqrt(<c^4> - 0.16), <c^4> = 3/8 (2/5 + 2/7)).
 * Polarised light: the dipole law, <(pol.d')^2> = 0.2 (sd sqrt(3/35 -
 * 0.04)). The new polarisation is perpendicular to the new direction and
 * in the plane of the old polarisation and the new direction. N = 200000. */
static void test_rayleigh_angular_law_and_polarisation(void **state)
{
    (void)state;
    const size_t N = 200000;
    enum { B = 20 };
    size_t bins[B] = {0};
    double c2sum = 0, x2sum = 0;
    pv3 d0 = v3(0.3, -0.2, 0.9);
    for (size_t i = 0; i < N; i++) {
        prism_rng r = rng(21, i);
        prism_ray_state st;
        st.dir = d0;
        st.pol = prism_sample_polarisation(&r, d0);
        pv3 pol0 = st.pol;
        prism_rayleigh(&st, &r);
        double c = pv3_dot(st.dir, d0), x = pv3_dot(pol0, st.dir);
        int b = (int)((c + 1.0) * 0.5 * B);
        bins[b < 0 ? 0 : (b >= B ? B - 1 : b)]++;
        c2sum += c * c;
        x2sum += x * x;
        assert_float_equal(pv3_dot(st.pol, st.dir), 0.0f, 1e-5);
        assert_float_equal(pv3_length(st.pol), 1.0f, 1e-5);
        /* in the plane of (old pol, new dir): normal to their cross product */
        pv3 plane = pv3_cross(pol0, st.dir);
        if (pv3_length(plane) > 1e-3f)
            assert_float_equal(pv3_dot(st.pol, pv3_normalize(plane)), 0.0f, 1e-4);
        assert_true(pv3_dot(st.pol, pol0) >= 0.0f); /* the projection, not its opposite */
    }
    double chi2 = 0;
    for (int b = 0; b < B; b++) {
        double lo = -1.0 + 2.0 * b / B, hi = lo + 2.0 / B;
        double p = 3.0 / 8.0 * ((hi - lo) + (hi * hi * hi - lo * lo * lo) / 3.0);
        double e = p * (double)N;
        chi2 += ((double)bins[b] - e) * ((double)bins[b] - e) / e;
    }
    printf("# rayleigh 1+cos^2: chi2 %.1f for 19 dof (limit 50)\n", chi2);
    assert_true(chi2 < 50.0);
    double c4 = 3.0 / 8.0 * (2.0 / 5.0 + 2.0 / 7.0);
    check_mean("rayleigh <cos^2>", c2sum / N, N, 0.4, sqrt(c4 - 0.16));
    check_mean("rayleigh dipole <(pol.d')^2>", x2sum / N, N, 0.2, sqrt(3.0 / 35.0 - 0.04));
}

/* ------------------------------------------------------------------ */
/* Free paths                                                         */

/* Photons from the centre of a 1 km box of a material with absorption
 * length La = 2 m and Rayleigh length Ls = 3 m, one step each: the first
 * interaction is at an exponential distance of mean 1 / (1/La + 1/Ls) =
 * 1.2 m (sd the same), absorbed with probability (1/La) / (1/La + 1/Ls) =
 * 0.6; the distances in 10 bins of equal expected content, chi^2 (9 dof)
 * below 35 (its 1e-4 tail is at 33.7); the time is distance x n / c. Then
 * absorption alone (La = 2: mean 2 m, all absorbed) and scattering alone
 * (Ls = 1.5: mean 1.5 m, none absorbed). N = 100000 each. */
static void free_path_case(float la, float ls, double mean, double p_abs, uint64_t seed)
{
    kt_scene s = {0};
    uint32_t mat = kt_material(&s, "medium", 1.25f, la, ls);
    const float lo[3] = {-500, -500, -500}, hi[3] = {500, 500, 500};
    kt_box(&s, lo, hi, 1, mat, PRISM_NONE, PRISM_NONE);
    assert_int_equal(kt_build(&s, kt_ctx), 0);
    const size_t N = 100000;
    prism_photon_source src = {.kind = PRISM_SOURCE_POINT, .count = N};
    prism_propagate_desc d = {.seed = seed, .max_steps = 1};
    prism_photon *ph = calloc(N, sizeof *ph);
    prism_propagate_stats st;
    assert_int_equal(prism__propagate_view(kt_ctx, &s.view, prism__optics_view(s.optics), &src, &d,
                                           ph, NULL, NULL, &st),
                     PRISM_SUCCESS);
    enum { B = 10 };
    size_t bins[B] = {0}, absorbed = 0;
    double sum = 0;
    for (size_t i = 0; i < N; i++) {
        double x = ph[i].pos[0], y = ph[i].pos[1], z = ph[i].pos[2];
        double dist = sqrt(x * x + y * y + z * z);
        sum += dist;
        int b = (int)(-(double)B * expm1(-dist / mean) + 0.0);
        bins[b >= B ? B - 1 : b]++;
        assert_float_equal(ph[i].time, dist * 1.25 / C_LIGHT, 1e-5 * (1.0 + ph[i].time));
        if (ph[i].history & PRISM_BULK_ABSORB) {
            absorbed++;
            assert_int_equal(ph[i].history, PRISM_BULK_ABSORB);
        } else {
            assert_int_equal(ph[i].history, PRISM_RAYLEIGH_SCATTER | PRISM_STEP_LIMIT);
        }
    }
    check_mean("free path mean (m)", sum / N, N, mean, mean);
    double chi2 = 0, e = (double)N / B;
    for (int b = 0; b < B; b++)
        chi2 += ((double)bins[b] - e) * ((double)bins[b] - e) / e;
    printf("# free path exponential: chi2 %.1f for 9 dof (limit 35)\n", chi2);
    assert_true(chi2 < 35.0);
    check_fraction("absorbed first", absorbed, N, p_abs);
    free(ph);
    kt_free(&s, kt_ctx);
}

static void test_free_paths_exponential(void **state)
{
    (void)state;
    free_path_case(2.0f, 3.0f, 1.2, 0.6, 31);
    free_path_case(2.0f, 0.0f, 2.0, 1.0 - 1e-12, 32);
    free_path_case(0.0f, 1.5f, 1.5, 1e-12, 33);
}

/* ------------------------------------------------------------------ */
/* Geant4's surface models, called directly                           */

enum { K_DETECT, K_ABSORB, K_SPIKE, K_LOBE, K_BACK, K_LAMBERT, K_CROSS, K_N };

/* What one event did: by its bits and where the photon went (a spike is
 * the mirror direction about nn, a backscatter the reversed one). */
static int classify(uint32_t bits, pv3 d, pv3 nn, const prism_ray_state *st)
{
    if (bits == PRISM_SURFACE_DETECT)
        return K_DETECT;
    if (bits == PRISM_SURFACE_ABSORB)
        return K_ABSORB;
    if (pv3_dot(st->dir, nn) < 0.0f)
        return K_CROSS;
    if (bits & PRISM_REFLECT_DIFFUSE)
        return K_LAMBERT;
    assert_true(bits & PRISM_REFLECT_SPECULAR);
    pv3 mirror = prism_reflect(d, nn);
    if (pv3_length(pv3_sub(st->dir, mirror)) < 1e-5f)
        return K_SPIKE;
    if (pv3_length(pv3_add(st->dir, d)) < 1e-5f)
        return K_BACK;
    return K_LOBE;
}

/* dielectric_metal, unified, ground, sigma_alpha 0.2: R = 0.9, E = 0.5,
 * spike 0.2, lobe 0.3, backscatter 0.1 (Lambertian 0.4). Fractions:
 * detect (1-R)E = 0.05, absorb (1-R)(1-E) = 0.05, spike 0.18, lobe 0.27,
 * backscatter 0.09, Lambertian 0.36; none crosses; N = 200000, 4 sigma.
 * Lambertian directions have <cos> = 2/3 (sd sqrt(1/2 - 4/9)). */
static void test_unified_metal_lobes(void **state)
{
    (void)state;
    const size_t N = 200000;
    pt_surface g = {.model = PRISM_SURFACE_MODEL_UNIFIED,
                    .type = PRISM_SURFACE_DIELECTRIC_METAL,
                    .finish = PRISM_FINISH_GROUND,
                    .sigma_alpha = 0.2f,
                    .reflectivity = 0.9f,
                    .efficiency = 0.5f,
                    .spike = 0.2f,
                    .lobe = 0.3f,
                    .back = 0.1f};
    mini_optics m;
    mini_make(&m, &g);
    size_t k[K_N] = {0}, lambert = 0;
    double lambert_cos = 0;
    pv3 d = v3(0.5, 0.1, -1), nn = pv3_make(0, 0, 1);
    for (size_t i = 0; i < N; i++) {
        prism_rng r = rng(41, i);
        prism_ray_state st = {d, prism_sample_polarisation(&r, d)};
        uint32_t bits = mini_hit(&m, &st, nn, 1.0f, 1.0f, &r);
        int c = classify(bits, d, nn, &st);
        k[c]++;
        if (c == K_LAMBERT) {
            lambert++;
            lambert_cos += st.dir.z;
        }
        if (c >= K_SPIKE) {
            assert_float_equal(pv3_dot(st.pol, st.dir), 0.0f, 1e-5);
            assert_true(st.dir.z >= 0.0f); /* every reflection leaves the surface */
        }
    }
    check_fraction("metal detect (1-R)E", k[K_DETECT], N, 0.05);
    check_fraction("metal absorb (1-R)(1-E)", k[K_ABSORB], N, 0.05);
    check_fraction("unified spike", k[K_SPIKE], N, 0.18);
    check_fraction("unified lobe", k[K_LOBE], N, 0.27);
    check_fraction("unified backscatter", k[K_BACK], N, 0.09);
    check_fraction("unified Lambertian", k[K_LAMBERT], N, 0.36);
    assert_int_equal(k[K_CROSS], 0);
    check_mean("Lambertian <cos>", lambert_cos / lambert, lambert, 2.0 / 3.0,
               sqrt(0.5 - 4.0 / 9.0));
}

/* Polished metal (unified and glisur) reflects every photon it does not
 * take as a mirror; R = 0.7, E = 0.4: detect 0.12, absorb 0.18, spike
 * 0.7. Glisur ground with polish 1 is a mirror too; with polish 0.5 its
 * facets tilt at most asin(0.5) = 30 degrees, so the reflection leaves
 * within 60 degrees of the mirror direction, and always off the surface. */
static void test_metal_polished_and_glisur(void **state)
{
    (void)state;
    const size_t N = 100000;
    pv3 d = v3(-0.3, 0.4, -1), nn = pv3_make(0, 0, 1), mirror = prism_reflect(d, nn);
    for (int model = 0; model < 2; model++) {
        pt_surface g = {.model = (uint32_t)model,
                        .type = PRISM_SURFACE_DIELECTRIC_METAL,
                        .finish = PRISM_FINISH_POLISHED,
                        .sigma_alpha = model == 0 ? 1.0f : 0.3f,
                        .reflectivity = 0.7f,
                        .efficiency = 0.4f,
                        .lobe = 1.0f};
        mini_optics m;
        mini_make(&m, &g);
        size_t k[K_N] = {0};
        for (size_t i = 0; i < N; i++) {
            prism_rng r = rng(51 + model, i);
            prism_ray_state st = {d, prism_sample_polarisation(&r, d)};
            k[classify(mini_hit(&m, &st, nn, 1.0f, 1.0f, &r), d, nn, &st)]++;
        }
        check_fraction(model ? "unified polished detect" : "glisur polished detect", k[K_DETECT], N,
                       0.12);
        check_fraction("polished metal absorb", k[K_ABSORB], N, 0.18);
        assert_int_equal(k[K_SPIKE], N - k[K_DETECT] - k[K_ABSORB]);
    }
    for (int polish = 0; polish < 2; polish++) {
        pt_surface g = {.model = PRISM_SURFACE_MODEL_GLISUR,
                        .type = PRISM_SURFACE_DIELECTRIC_METAL,
                        .finish = PRISM_FINISH_GROUND,
                        .sigma_alpha = polish ? 1.0f : 0.5f,
                        .reflectivity = 1.0f};
        mini_optics m;
        mini_make(&m, &g);
        size_t spikes = 0;
        double max_angle = 0;
        for (size_t i = 0; i < N; i++) {
            prism_rng r = rng(53 + polish, i);
            prism_ray_state st = {d, prism_sample_polarisation(&r, d)};
            uint32_t bits = mini_hit(&m, &st, nn, 1.0f, 1.0f, &r);
            assert_int_equal(bits, PRISM_REFLECT_SPECULAR);
            assert_true(st.dir.z >= 0.0f);
            double a = acos(fmin(1.0, pv3_dot(st.dir, mirror)));
            max_angle = fmax(max_angle, a);
            spikes += a < 1e-3;
        }
        if (polish)
            assert_int_equal(spikes, N);
        else
            assert_true(max_angle <= 2.0 * asin(0.5) + 1e-3 && max_angle > 0.3);
    }
}

/* The unified facet's angle alpha to the normal, at normal incidence
 * (where no facet is redrawn), has density g(alpha; 0, sigma) sin(alpha)
 * on (0, pi/2): its mean, computed here by quadrature, within 4 standard
 * errors, for sigma 0.05, 0.2 and 0.5 rad (about sigma sqrt(pi/2) while
 * small). At 60 degrees' incidence every facet faces the photon. Glisur
 * with polish 1 and unified with sigma 0 give the normal itself.
 * N = 100000 each. */
static void test_facet_spread(void **state)
{
    (void)state;
    const size_t N = 100000;
    const float sigmas[3] = {0.05f, 0.2f, 0.5f};
    pv3 nn = pv3_make(0, 0, 1), down = pv3_make(0, 0, -1), oblique = v3(sin(PI / 3), 0, -0.5);
    for (int k = 0; k < 3; k++) {
        double sg = sigmas[k], w = 0, m1 = 0, m2 = 0;
        for (int i = 0; i < 20000; i++) { /* midpoint rule on (0, pi/2) */
            double a = (i + 0.5) * (PI / 2) / 20000;
            double p = exp(-a * a / (2 * sg * sg)) * sin(a);
            w += p;
            m1 += p * a;
            m2 += p * a * a;
        }
        double mean = m1 / w, sd = sqrt(m2 / w - mean * mean);
        prism_g4_surface s = {.model = PRISM_SURFACE_MODEL_UNIFIED, .sigma = sigmas[k]};
        double sum = 0;
        for (size_t i = 0; i < N; i++) {
            prism_rng r = rng(61 + k, i);
            pv3 f = prism_g4_facet(&s, down, nn, &r);
            assert_float_equal(pv3_length(f), 1.0f, 1e-5);
            sum += acos(fmin(1.0, f.z));
            prism_rng r2 = rng(64 + k, i);
            assert_true(pv3_dot(oblique, prism_g4_facet(&s, oblique, nn, &r2)) < 0.0f);
        }
        char what[64];
        snprintf(what, sizeof what, "facet mean alpha, sigma %.2f", sg);
        check_mean(what, sum / N, N, mean, sd);
    }
    prism_rng r = rng(67, 0);
    prism_g4_surface flat = {.model = PRISM_SURFACE_MODEL_UNIFIED, .sigma = 0.0f};
    prism_g4_surface polished = {.model = PRISM_SURFACE_MODEL_GLISUR, .sigma = 1.0f};
    pv3 f = prism_g4_facet(&flat, oblique, nn, &r);
    assert_true(f.x == 0.0f && f.y == 0.0f && f.z == 1.0f);
    f = prism_g4_facet(&polished, oblique, nn, &r);
    assert_true(f.x == 0.0f && f.y == 0.0f && f.z == 1.0f);
}

/* dielectric_dielectric, unified ground with sigma 0 (facets = normal) at
 * 60 degrees from glass n 1.5 onto n 1.0: every photon the surface keeps
 * (R = 0.95, E = 0.2: detect 0.01, absorb 0.04) is totally reflected,
 * its kind from the constants spike 0.5, lobe 0.2, backscatter 0.1,
 * Lambertian 0.2: spike+lobe (the same direction here) 0.665, backscatter
 * 0.095, Lambertian 0.19, each TOTAL_INTERNAL. With no constants given
 * (Geant4's default) every reflection of a unified ground surface is
 * Lambertian: at normal incidence 1.0 -> 1.5, R = 1, Lambertian 0.04,
 * crossing 0.96. N = 200000. */
static void test_dielectric_unified_reflection_kinds(void **state)
{
    (void)state;
    const size_t N = 200000;
    pt_surface g = {.model = PRISM_SURFACE_MODEL_UNIFIED,
                    .type = PRISM_SURFACE_DIELECTRIC_DIELECTRIC,
                    .finish = PRISM_FINISH_GROUND,
                    .reflectivity = 0.95f,
                    .efficiency = 0.2f,
                    .spike = 0.5f,
                    .lobe = 0.2f,
                    .back = 0.1f};
    mini_optics m;
    mini_make(&m, &g);
    size_t k[K_N] = {0};
    pv3 d = v3(sin(PI / 3), 0, -0.5), nn = pv3_make(0, 0, 1);
    for (size_t i = 0; i < N; i++) {
        prism_rng r = rng(71, i);
        prism_ray_state st = {d, prism_sample_polarisation(&r, d)};
        uint32_t bits = mini_hit(&m, &st, nn, 1.5f, 1.0f, &r);
        int c = classify(bits, d, nn, &st);
        k[c]++;
        if (c >= K_SPIKE && c <= K_LAMBERT)
            assert_true(bits & PRISM_TOTAL_INTERNAL);
    }
    check_fraction("dielectric detect", k[K_DETECT], N, 0.01);
    check_fraction("dielectric absorb", k[K_ABSORB], N, 0.04);
    check_fraction("TIR spike+lobe", k[K_SPIKE] + k[K_LOBE], N, 0.665);
    check_fraction("TIR backscatter", k[K_BACK], N, 0.095);
    check_fraction("TIR Lambertian", k[K_LAMBERT], N, 0.19);
    assert_int_equal(k[K_CROSS], 0);

    pt_surface bare = {.model = PRISM_SURFACE_MODEL_UNIFIED,
                       .type = PRISM_SURFACE_DIELECTRIC_DIELECTRIC,
                       .finish = PRISM_FINISH_GROUND,
                       .reflectivity = 1.0f};
    mini_make(&m, &bare);
    memset(k, 0, sizeof k);
    pv3 down = pv3_make(0, 0, -1);
    for (size_t i = 0; i < N; i++) {
        prism_rng r = rng(72, i);
        prism_ray_state st = {down, prism_sample_polarisation(&r, down)};
        uint32_t bits = mini_hit(&m, &st, nn, 1.0f, 1.5f, &r);
        int c = classify(bits, down, nn, &st);
        k[c]++;
        if (c == K_CROSS)
            assert_int_equal(bits, PRISM_REFRACT);
    }
    check_fraction("default lobes: Lambertian", k[K_LAMBERT], N, 0.04);
    check_fraction("default lobes: crossed", k[K_CROSS], N, 0.96);
}

/* Front-painted dielectric_dielectric surfaces never transmit: R = 0.8,
 * E = 0.25: detect 0.05, absorb 0.15, the rest reflected, as a mirror
 * (polished) or Lambertian (ground, <cos> = 2/3). Back-painted polished,
 * layer n 1.5 from n 1.0 at normal incidence, paint R = 0.9: the layer's
 * face reflects R0 = 0.04; the paint absorbs a = 0.1 of what reaches it
 * and a photon bounces between paint and face (face reflectance R0 from
 * inside too), so absorption = (1 - R0) a / (1 - (1 - a) R0) = 0.09959;
 * nothing crosses. Back-painted ground: nothing crosses either, and the
 * layer traps part of the paint's Lambertian light (beyond the critical
 * angle), so it absorbs more than the polished one. N = 100000. */
static void test_painted_surfaces(void **state)
{
    (void)state;
    const size_t N = 100000;
    pv3 d = v3(0.4, -0.3, -1), nn = pv3_make(0, 0, 1), down = pv3_make(0, 0, -1);
    for (int ground = 0; ground < 2; ground++) {
        pt_surface g = {.model = PRISM_SURFACE_MODEL_UNIFIED,
                        .type = PRISM_SURFACE_DIELECTRIC_DIELECTRIC,
                        .finish = ground ? PRISM_FINISH_GROUND_FRONTPAINTED
                                         : PRISM_FINISH_POLISHED_FRONTPAINTED,
                        .sigma_alpha = 0.3f,
                        .reflectivity = 0.8f,
                        .efficiency = 0.25f,
                        .spike = 1.0f};
        mini_optics m;
        mini_make(&m, &g);
        size_t k[K_N] = {0};
        double cs = 0;
        for (size_t i = 0; i < N; i++) {
            prism_rng r = rng(81 + ground, i);
            prism_ray_state st = {d, prism_sample_polarisation(&r, d)};
            k[classify(mini_hit(&m, &st, nn, 1.0f, 1.5f, &r), d, nn, &st)]++;
            cs += st.dir.z > 0 ? st.dir.z : 0;
        }
        assert_int_equal(k[K_CROSS], 0);
        check_fraction("frontpainted detect", k[K_DETECT], N, 0.05);
        check_fraction("frontpainted absorb", k[K_ABSORB], N, 0.15);
        size_t kept = k[ground ? K_LAMBERT : K_SPIKE];
        assert_int_equal(kept, N - k[K_DETECT] - k[K_ABSORB]);
        if (ground)
            check_mean("frontpainted Lambertian <cos>", cs / kept, kept, 2.0 / 3.0,
                       sqrt(0.5 - 4.0 / 9.0));
    }
    size_t absorbed_polished = 0;
    for (int ground = 0; ground < 2; ground++) {
        pt_surface g = {.model = PRISM_SURFACE_MODEL_UNIFIED,
                        .type = PRISM_SURFACE_DIELECTRIC_DIELECTRIC,
                        .finish = ground ? PRISM_FINISH_GROUND_BACKPAINTED
                                         : PRISM_FINISH_POLISHED_BACKPAINTED,
                        .reflectivity = 0.9f,
                        .spike = 1.0f,
                        .rindex = 1.5f};
        mini_optics m;
        mini_make(&m, &g);
        size_t k[K_N] = {0};
        for (size_t i = 0; i < N; i++) {
            prism_rng r = rng(83 + ground, i);
            prism_ray_state st = {down, prism_sample_polarisation(&r, down)};
            /* the next material's index (1.33) is not the layer's */
            k[classify(mini_hit(&m, &st, nn, 1.0f, 1.33f, &r), down, nn, &st)]++;
        }
        assert_int_equal(k[K_CROSS], 0);
        assert_int_equal(k[K_DETECT], 0);
        if (!ground) {
            check_fraction("backpainted polished absorbed", k[K_ABSORB], N,
                           0.96 * 0.1 / (1.0 - 0.9 * 0.04));
            absorbed_polished = k[K_ABSORB];
            assert_int_equal(k[K_SPIKE] + k[K_ABSORB], N);
        } else {
            printf("# backpainted ground absorbed %.5f (polished %.5f)\n", (double)k[K_ABSORB] / N,
                   (double)absorbed_polished / N);
            assert_true(k[K_ABSORB] > absorbed_polished + 4 * sqrt((double)absorbed_polished));
            assert_true(k[K_LAMBERT] > 0);
        }
    }
}

/* The tables' error paths: a model, type or finish Prism does not model
 * reads as CHROMA (the four probabilities); a surface outside the tables
 * or marked bare has no table; the parameters of a surface outside the
 * tables read CHROMA; prism_optics_lerp_row gives prism_optics_sample's
 * bits at, below, above and between grid points. */
static void test_tables_error_paths(void **state)
{
    (void)state;
    prism_surface_params sp = {PRISM_SURFACE_MODEL_UNIFIED, PRISM_SURFACE_DIELECTRIC_METAL,
                               PRISM_FINISH_GROUND, 0.1f};
    assert_true(prism_surface_is_geant4(sp));
    sp.model = 2; /* Geant4's LUT model */
    assert_false(prism_surface_is_geant4(sp));
    sp.model = PRISM_SURFACE_MODEL_CHROMA;
    assert_false(prism_surface_is_geant4(sp));
    sp.model = PRISM_SURFACE_MODEL_GLISUR;
    sp.type = 2; /* dielectric_LUT */
    assert_false(prism_surface_is_geant4(sp));
    sp.type = PRISM_SURFACE_DIELECTRIC_DIELECTRIC;
    sp.finish = 6;
    assert_false(prism_surface_is_geant4(sp));
    pt_surface g = {.model = PRISM_SURFACE_MODEL_UNIFIED, .reflectivity = 0.5f};
    mini_optics m;
    mini_make(&m, &g);
    assert_non_null(prism_optics_surface_table(&m.v, 0));
    assert_null(prism_optics_surface_table(&m.v, 1));
    assert_null(prism_optics_surface_table(NULL, 0));
    assert_int_equal(prism_optics_surface_params(&m.v, 1).model, PRISM_SURFACE_MODEL_CHROMA);
    m.v.surface_params = NULL;
    assert_int_equal(prism_optics_surface_params(&m.v, 0).model, PRISM_SURFACE_MODEL_CHROMA);
    m.rows[0] = -1.0f; /* bare */
    assert_null(prism_optics_surface_table(&m.v, 0));
    /* the row read against prism_optics_sample */
    kt_scene s = {0};
    kt_material(&s, "glass", 1.5f, 3.0f, 0);
    const float lo[3] = {0, 0, 0}, hi[3] = {1, 1, 1};
    kt_box(&s, lo, hi, 0, 0, PRISM_NONE, PRISM_NONE);
    assert_int_equal(kt_build(&s, kt_ctx), 0);
    const prism_optics_view *o = prism__optics_view(s.optics);
    float *rindex = (float *)(uintptr_t)o->materials;
    for (uint32_t i = 0; i < o->wavelength_count; i++)
        rindex[i] = 1.3f + 0.01f * (float)(i * i % 7);
    const float wl[7] = {10.0f, 60.0f, 61.3f, 333.3f, 799.9f, 800.0f, 2000.0f};
    for (int i = 0; i < 7; i++) {
        float a = prism_optics_sample(o, rindex, wl[i]);
        float b = prism_optics_lerp_row(rindex, prism_optics_lerp_at(o, wl[i]));
        assert_memory_equal(&a, &b, sizeof a);
        float c = prism_optics_rindex(o, 0, wl[i]);
        assert_memory_equal(&a, &c, sizeof a);
    }
    assert_true(prism_optics_rindex(o, 5, 400.0f) == 1.0f);
    kt_free(&s, kt_ctx);
}

/* ------------------------------------------------------------------ */
/* Full propagations: a Geant4 surface and bulk reemission            */

/* Photons from the centre of a vacuum sphere (r 2 m) whose surface is
 * unified polished dielectric_metal with R = 0.7, E = 0.4: at each visit
 * detect 0.12, absorb 0.18, reflect 0.7 (back through the centre, as a
 * mirror of a sphere does). Final: detected 0.12 / 0.3 = 0.4 of the
 * photons, absorbed 0.6; a detected photon's history is SURFACE_DETECT
 * alone or with REFLECT_SPECULAR, never SURFACE_ABSORB. N = 100000. */
static void test_propagate_unified_metal_sphere(void **state)
{
    (void)state;
    kt_scene s = {0};
    uint32_t vac = kt_material(&s, "vacuum", 1.0f, 0, 0);
    uint32_t surf = kt_surface(&s, "g4", 0, 0, 0, 0);
    const float c[3] = {0, 0, 0};
    kt_sphere(&s, c, 2.0f, 48, 3, vac, PRISM_NONE, surf);
    assert_int_equal(kt_build(&s, kt_ctx), 0);
    pt_surface g = {.model = PRISM_SURFACE_MODEL_UNIFIED,
                    .type = PRISM_SURFACE_DIELECTRIC_METAL,
                    .finish = PRISM_FINISH_POLISHED,
                    .reflectivity = 0.7f,
                    .efficiency = 0.4f};
    pt_set_surface(s.optics, surf, &g);
    const size_t N = 100000;
    prism_photon_source src = {.kind = PRISM_SOURCE_POINT, .count = N};
    prism_propagate_desc d = {.seed = 91, .max_steps = 200};
    prism_photon *ph = calloc(N, sizeof *ph);
    prism_propagate_stats st;
    assert_int_equal(prism__propagate_view(kt_ctx, &s.view, prism__optics_view(s.optics), &src, &d,
                                           ph, NULL, NULL, &st),
                     PRISM_SUCCESS);
    size_t det = 0, abs_ = 0;
    for (size_t i = 0; i < N; i++) {
        uint32_t h = ph[i].history;
        assert_int_equal(
            h & ~(PRISM_SURFACE_DETECT | PRISM_SURFACE_ABSORB | PRISM_REFLECT_SPECULAR), 0);
        assert_true(((h & PRISM_SURFACE_DETECT) != 0) != ((h & PRISM_SURFACE_ABSORB) != 0));
        det += (h & PRISM_SURFACE_DETECT) != 0;
        abs_ += (h & PRISM_SURFACE_ABSORB) != 0;
        assert_int_equal(ph[i].solid, 3);
    }
    check_fraction("sphere detected 0.12/0.3", det, N, 0.4);
    assert_int_equal(det + abs_, N);
    free(ph);
    kt_free(&s, kt_ctx);
}

/* A 1 km box of scintillator (n 1.5, absorption length 1 m, no
 * scattering), REEMISSIONPROB 0.4, decay 2 ns (yield ratio 0.7) and 20 ns,
 * the triangular spectrum on [400, 500] nm; photons of 420 nm from the
 * centre, two steps each. After the first absorption: reemitted 0.4
 * (history BULK_REEMIT, never BULK_ABSORB), the rest BULK_ABSORB. The
 * reemitted wavelengths: mean 466.67 nm (sd 100/sqrt(18)), below 450 nm
 * a quarter; the delay (time less the path's n d / c): mean 0.7 x 2 + 0.3
 * x 20 = 7.4 ns (sd sqrt(245.6 - 7.4^2)), below 2 ns 0.7 (1 - e^-1) + 0.3
 * (1 - e^-0.1) = 0.47106; directions isotropic (<z> = 0, sd 1/sqrt(3)),
 * polarisation perpendicular. A reemitted photon goes on (its second step
 * is an interaction). Without a spectrum, or with probability 0, none is
 * reemitted. N = 100000. */
static void reemission_run(float prob, uint32_t has_spectrum, prism_photon **out, size_t N)
{
    kt_scene s = {0};
    uint32_t ls = kt_material(&s, "scintillator", 1.5f, 1.0f, 0);
    const float lo[3] = {-500, -500, -500}, hi[3] = {500, 500, 500};
    kt_box(&s, lo, hi, 1, ls, PRISM_NONE, PRISM_NONE);
    assert_int_equal(kt_build(&s, kt_ctx), 0);
    pt_set_reemission(s.optics, ls, prob, 2.0f, 20.0f, 0.7f, has_spectrum);
    prism_photon_source src = {.kind = PRISM_SOURCE_POINT, .count = N};
    prism_propagate_desc d = {.seed = 101, .max_steps = 2, .record_steps = 3};
    prism_photon *ph = calloc(N, sizeof *ph);
    prism_step_record *rec = calloc(N * 3, sizeof *rec);
    assert_int_equal(prism__propagate_view(kt_ctx, &s.view, prism__optics_view(s.optics), &src, &d,
                                           ph, rec, NULL, NULL),
                     PRISM_SUCCESS);
    /* the state after step 1 is record 1: rebuild it as the photon */
    for (size_t i = 0; i < N; i++) {
        const prism_step_record *r1 = rec + i * 3 + 1;
        ph[i].history = r1->history;
        if (r1->history & PRISM_BULK_REEMIT) {
            assert_true(ph[i].steps == 2); /* it went on */
            ph[i].time = r1->time;
            ph[i].wavelength = r1->wavelength;
            memcpy(ph[i].pos, r1->pos, sizeof ph[i].pos);
        }
    }
    free(rec);
    kt_free(&s, kt_ctx);
    *out = ph;
}

static void test_bulk_reemission(void **state)
{
    (void)state;
    const size_t N = 100000;
    prism_photon *ph;
    reemission_run(0.4f, 1, &ph, N);
    size_t re = 0, below450 = 0, fast = 0;
    double wl = 0, delay = 0;
    for (size_t i = 0; i < N; i++) {
        uint32_t h = ph[i].history;
        if (h & PRISM_BULK_REEMIT) {
            re++;
            assert_int_equal(h & PRISM_BULK_ABSORB, 0);
            assert_true(ph[i].wavelength >= 400.0f && ph[i].wavelength <= 500.0f);
            wl += ph[i].wavelength;
            below450 += ph[i].wavelength < 450.0f;
            double x = ph[i].pos[0], y = ph[i].pos[1], z = ph[i].pos[2];
            double t = ph[i].time - sqrt(x * x + y * y + z * z) * 1.5 / C_LIGHT;
            assert_true(t >= -1e-4);
            delay += t;
            fast += t < 2.0;
        } else {
            assert_int_equal(h, PRISM_BULK_ABSORB);
            assert_true(ph[i].wavelength == 420.0f);
        }
    }
    check_fraction("reemitted = REEMISSIONPROB", re, N, 0.4);
    check_mean("reemitted wavelength (nm)", wl / re, re, 400.0 + 200.0 / 3.0, 100.0 / sqrt(18.0));
    check_fraction("reemitted below 450 nm", below450, re, 0.25);
    check_mean("reemission delay (ns)", delay / re, re, 7.4, sqrt(245.6 - 7.4 * 7.4));
    check_fraction("delay below 2 ns", fast, re, 0.7 * (1 - exp(-1.0)) + 0.3 * (1 - exp(-0.1)));
    free(ph);

    /* directions and polarisation of the reemitted photons, by the device
     * function itself (the records keep no direction) */
    prism_material_params mp = {.time_fast = 2, .time_slow = 20, .yield_ratio = 0.7f};
    float icdf[PRISM_OPTICS_ICDF_COUNT];
    for (unsigned k = 0; k < PRISM_OPTICS_ICDF_COUNT; k++)
        icdf[k] = 400.0f + 100.0f * (float)sqrt(k / 255.0);
    prism_optics_view o = {.material_count = 1, .emission_icdf = icdf, .material_params = &mp};
    double z = 0;
    for (size_t i = 0; i < N; i++) {
        prism_rng r = rng(102, i);
        prism_photon p = {.time = 1.0f};
        prism_ray_state st = {pv3_make(0, 0, 1), pv3_make(1, 0, 0)};
        prism_photon_reemit(&o, 0, &mp, &p, &st, &r);
        z += st.dir.z;
        assert_float_equal(pv3_length(st.dir), 1.0f, 1e-5);
        assert_float_equal(pv3_dot(st.dir, st.pol), 0.0f, 1e-5);
        assert_true(p.time >= 1.0f);
    }
    check_mean("reemitted <z> (isotropic)", z / N, N, 0.0, sqrt(1.0 / 3.0));

    reemission_run(0.4f, 0, &ph, 20000); /* no spectrum: absorbed */
    for (size_t i = 0; i < 20000; i++)
        assert_int_equal(ph[i].history & (PRISM_BULK_REEMIT | PRISM_BULK_ABSORB),
                         PRISM_BULK_ABSORB);
    free(ph);
    reemission_run(0.0f, 1, &ph, 20000); /* probability 0 */
    for (size_t i = 0; i < 20000; i++)
        assert_int_equal(ph[i].history & PRISM_BULK_REEMIT, 0);
    free(ph);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fresnel_s_and_p),
        cmocka_unit_test(test_rayleigh_angular_law_and_polarisation),
        cmocka_unit_test(test_free_paths_exponential),
        cmocka_unit_test(test_unified_metal_lobes),
        cmocka_unit_test(test_metal_polished_and_glisur),
        cmocka_unit_test(test_facet_spread),
        cmocka_unit_test(test_dielectric_unified_reflection_kinds),
        cmocka_unit_test(test_painted_surfaces),
        cmocka_unit_test(test_tables_error_paths),
        cmocka_unit_test(test_propagate_unified_metal_sphere),
        cmocka_unit_test(test_bulk_reemission),
    };
    return cmocka_run_group_tests(tests, kt_host_setup, kt_host_teardown);
}
