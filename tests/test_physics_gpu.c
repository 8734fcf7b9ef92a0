/* The physics of test_physics.c through the public prism_propagate on the
 * CUDA backend, and the CUDA exact kernels against the host backend on a
 * scene that uses Geant4's surface models and bulk reemission. Skipped
 * (77) without a CUDA device.
 *
 * - Exact arithmetic: every photon and record bit for bit the host's, with
 *   either CUDA step scheme (the megakernel, the wavefront), on
 *   a scene with unified ground metal walls, a unified ground
 *   dielectric_dielectric scintillator sphere that reemits, a ground
 *   back-painted and a polished front-painted glass slab, a glisur ground
 *   metal plate; fast arithmetic agrees in every history bit's count
 *   within 5 sigma of the two-sample difference.
 * - On CUDA alone, against theory (4 sigma): Fresnel R_s and R_p at 45
 *   degrees (bare boundary and Geant4's polished dielectric_dielectric),
 *   a unified polished metal sphere's detected fraction (1-R)E / (1-R),
 *   the reemitted fraction and spectrum mean of a scintillator.
 * With PRISM_TEST_SMALL set the photon counts are divided by 50. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/launch/propagate_scheme.h"
#include "engine/upload/geometry_internal.h"
#include "gpu_compare.h"
#include "physics_tables.h"
#include "prism/memory.h"
#include "prism/propagate.h"

#define PI 3.14159265358979323846

static void check_fraction(const char *what, size_t k, size_t n, double p)
{
    double f = (double)k / (double)n, sigma = sqrt(p * (1.0 - p) / (double)n);
    printf("# %-34s %.5f expected %.5f +- %.5f (4 sigma, N=%zu)\n", what, f, p, 4 * sigma, n);
    if (fabs(f - p) > 4.0 * sigma)
        fail_msg("%s: fraction %.5f, expected %.5f +- %.5f", what, f, p, 4 * sigma);
}

/* The tables of an uploaded geometry made the suite's: surfaces[i] for
 * surface i (model CHROMA left alone), reemission for material `ls`. */
typedef struct g4_tables {
    const pt_surface *surfaces;
    uint32_t surface_count;
    uint32_t ls; /* PRISM_NONE: no reemission */
    float reemit;
} g4_tables;

static void patch(prism_context *ctx, prism_geometry *g, const g4_tables *t)
{
    prism_optics *o = prism__geometry_optics(g);
    assert_non_null(o);
    for (uint32_t i = 0; i < t->surface_count; i++)
        pt_set_surface(o, i, &t->surfaces[i]);
    if (t->ls != PRISM_NONE)
        pt_set_reemission(o, t->ls, t->reemit, 2.0f, 20.0f, 0.7f, 1);
    assert_int_equal(pt_reupload(ctx, o), PRISM_SUCCESS);
}

static void upload_both(kt_scene *s, const g4_tables *t, prism_geometry **hg, prism_geometry **cg)
{
    gc_upload_both(s, PRISM_PLACEMENT_DEVICE, hg, cg);
    patch(gc_host, *hg, t);
    patch(gc_cuda, *cg, t);
}

static const pt_surface g4_surfaces[5] = {
    /* 0: walls, unified ground metal */
    {.model = PRISM_SURFACE_MODEL_UNIFIED,
     .type = PRISM_SURFACE_DIELECTRIC_METAL,
     .finish = PRISM_FINISH_GROUND,
     .sigma_alpha = 0.3f,
     .reflectivity = 0.8f,
     .efficiency = 0.3f,
     .spike = 0.3f,
     .lobe = 0.4f,
     .back = 0.05f},
    /* 1: the scintillator sphere, unified ground dielectric */
    {.model = PRISM_SURFACE_MODEL_UNIFIED,
     .type = PRISM_SURFACE_DIELECTRIC_DIELECTRIC,
     .finish = PRISM_FINISH_GROUND,
     .sigma_alpha = 0.2f,
     .reflectivity = 0.98f,
     .efficiency = 0.5f,
     .spike = 0.2f,
     .lobe = 0.6f,
     .back = 0.1f},
    /* 2: a glass slab, ground back-painted, layer 1.45 */
    {.model = PRISM_SURFACE_MODEL_UNIFIED,
     .type = PRISM_SURFACE_DIELECTRIC_DIELECTRIC,
     .finish = PRISM_FINISH_GROUND_BACKPAINTED,
     .sigma_alpha = 0.1f,
     .reflectivity = 0.9f,
     .efficiency = 0.5f,
     .rindex = 1.45f},
    /* 3: a glass slab, polished front-painted */
    {.model = PRISM_SURFACE_MODEL_UNIFIED,
     .type = PRISM_SURFACE_DIELECTRIC_DIELECTRIC,
     .finish = PRISM_FINISH_POLISHED_FRONTPAINTED,
     .reflectivity = 0.85f,
     .efficiency = 0.2f},
    /* 4: a glisur ground metal plate, polish 0.7 */
    {.model = PRISM_SURFACE_MODEL_GLISUR,
     .type = PRISM_SURFACE_DIELECTRIC_METAL,
     .finish = PRISM_FINISH_GROUND,
     .sigma_alpha = 0.7f,
     .reflectivity = 0.6f,
     .efficiency = 0.9f},
};

static void g4_scene(kt_scene *s, uint32_t *ls)
{
    uint32_t vac = kt_material(s, "vacuum", 1.0f, 0, 0);
    *ls = kt_material(s, "scintillator", 1.5f, 2.0f, 4.0f);
    uint32_t glass = kt_material(s, "glass", 1.5f, 5.0f, 0);
    uint32_t sf[5];
    for (int i = 0; i < 5; i++)
        sf[i] = kt_surface(s, "g4", 0, 0, 0, 0);
    const float lo[3] = {-3, -3, -3}, hi[3] = {3, 3, 3}, c[3] = {0.2f, 0, 0};
    const float alo[3] = {-2.5f, -2.5f, 2.0f}, ahi[3] = {2.5f, 2.5f, 2.5f};
    const float blo[3] = {-2.5f, -2.5f, -2.5f}, bhi[3] = {2.5f, 2.5f, -2.0f};
    const float p0[3] = {2.5f, -1, -1}, p1[3] = {2.5f, 1, -1}, p2[3] = {2.5f, 1, 1},
                p3[3] = {2.5f, -1, 1};
    kt_box(s, lo, hi, 1, vac, PRISM_NONE, sf[0]);
    kt_sphere(s, c, 1.5f, 48, 2, *ls, vac, sf[1]);
    kt_box(s, alo, ahi, 3, glass, vac, sf[2]);
    kt_box(s, blo, bhi, 4, glass, vac, sf[3]);
    kt_quad(s, p0, p1, p2, p3, 5, vac, vac, sf[4]);
}

/* Exact arithmetic: CUDA's photons and records are the host's, bit for
 * bit, on the Geant4 scene with reemission; fast arithmetic agrees in
 * every history bit's count within 5 sigma (sqrt(a + b)) + 1. */
static void test_g4_scene_exact_bit_identical(void **state)
{
    (void)state;
    kt_scene s = {0};
    uint32_t ls;
    g4_scene(&s, &ls);
    g4_tables t = {g4_surfaces, 5, ls, 0.5f};
    prism_geometry *hg, *cg;
    upload_both(&s, &t, &hg, &cg);
    const size_t N = gc_photons(300000);
    enum { K = 6 };
    prism_photon_source src = {.kind = PRISM_SOURCE_POINT,
                               .count = N,
                               .position = {0.1f, 0.2f, 0.3f},
                               .wavelength_nm = 380,
                               .wavelength_max_nm = 520};
    prism_propagate_desc d = {.seed = 77, .record_steps = K, .max_steps = 80};
    prism_step_record *ra = calloc(N * K, sizeof *ra), *rb = calloc(N * K, sizeof *rb);
    prism_photon *a = gc_propagate(gc_host, hg, &src, &d, ra, NULL), *b = NULL;
    uint32_t or_ = 0;
    for (size_t i = 0; i < N; i++)
        or_ |= a[i].history;
    const uint32_t want = PRISM_SURFACE_DETECT | PRISM_SURFACE_ABSORB | PRISM_BULK_ABSORB |
                          PRISM_BULK_REEMIT | PRISM_REFLECT_DIFFUSE | PRISM_REFLECT_SPECULAR |
                          PRISM_REFRACT | PRISM_RAYLEIGH_SCATTER;
    assert_int_equal(or_ & want, want); /* the scene exercises what it should */
    for (int k = 0; k < GC_SCHEMES; k++) {
        char label[96];
        snprintf(label, sizeof label, "Geant4 surfaces and reemission, scheme %s",
                 gc_scheme(gc_schemes[k]));
        memset(rb, 0, N * K * sizeof *rb);
        b = gc_propagate(gc_cuda, cg, &src, &d, rb, NULL);
        gc_expect_exact(label, "", a, b, N, ra, rb, K);
        free(b);
    }
    gc_scheme(PRISM__SCHEME_AUTO);
    d.math = PRISM_PROPAGATE_MATH_FAST;
    d.record_steps = 0;
    b = gc_propagate(gc_cuda, cg, &src, &d, NULL, NULL);
    gc_expect_history_counts("fast ", a, b, N);
    free(a);
    free(b);
    free(ra);
    free(rb);
    gc_free_both(&s, hg, cg);
}

/* Photons given (PHOTONS source) at 45 degrees onto glass n 1.5 from
 * vacuum, s- or p-polarised, one step on CUDA: reflected R_s = 0.09202,
 * R_p = 0.00847; through the bare boundary and a polished unified
 * dielectric_dielectric surface (R = 1). N = 200000, 4 sigma. */
static void test_fresnel_on_cuda(void **state)
{
    (void)state;
    const size_t N = gc_photons(200000);
    double c1 = cos(PI / 4), s2 = sin(PI / 4) / 1.5, c2 = sqrt(1 - s2 * s2);
    double rs = pow((c1 - 1.5 * c2) / (c1 + 1.5 * c2), 2);
    double rp = pow((1.5 * c1 - c2) / (1.5 * c1 + c2), 2);
    prism_photon *in = calloc(N, sizeof *in);
    for (int surface = 0; surface < 2; surface++) {
        kt_scene s = {0};
        uint32_t vac = kt_material(&s, "vacuum", 1.0f, 0, 0);
        uint32_t glass = kt_material(&s, "glass", 1.5f, 0, 0);
        uint32_t sf = kt_surface(&s, "g4", 0, 0, 0, 0);
        const float lo[3] = {-10, -10, -1}, hi[3] = {10, 10, 0};
        kt_box(&s, lo, hi, 1, glass, vac, surface ? sf : PRISM_NONE);
        pt_surface g = {.model = PRISM_SURFACE_MODEL_UNIFIED,
                        .type = PRISM_SURFACE_DIELECTRIC_DIELECTRIC,
                        .finish = PRISM_FINISH_POLISHED,
                        .reflectivity = 1.0f};
        g4_tables t = {&g, 1, PRISM_NONE, 0};
        prism_geometry *hg, *cg;
        upload_both(&s, &t, &hg, &cg);
        for (int p = 0; p < 2; p++) {
            for (size_t i = 0; i < N; i++) {
                prism_photon *q = &in[i];
                memset(q, 0, sizeof *q);
                q->pos[0] = 0.001f * (float)(i % 1000) - 1.0f;
                q->pos[2] = 1.0f;
                q->dir[0] = 1.0f;
                q->dir[2] = -1.0f;
                q->pol[1] = p ? 0.0f : 1.0f; /* s: along y */
                q->pol[0] = p ? 1.0f : 0.0f; /* p: in the xz plane */
                q->pol[2] = p ? 1.0f : 0.0f;
                q->wavelength = 420.0f;
            }
            prism_photon_source src = {.kind = PRISM_SOURCE_PHOTONS, .count = N, .photons = in};
            prism_propagate_desc d = {.seed = 5 + p, .max_steps = 1};
            prism_photon *ph = gc_propagate(gc_cuda, cg, &src, &d, NULL, NULL);
            size_t refl = 0;
            for (size_t i = 0; i < N; i++)
                refl += (ph[i].history & PRISM_REFLECT_SPECULAR) != 0;
            check_fraction(p ? "cuda R_p 45 deg" : "cuda R_s 45 deg", refl, N, p ? rp : rs);
            free(ph);
        }
        gc_free_both(&s, hg, cg);
    }
    free(in);
}

/* On CUDA: a vacuum sphere with a unified polished metal surface (R 0.7,
 * E 0.4) detects 0.12 / 0.3 = 0.4 of the photons from its centre; a 1 km
 * box of scintillator (absorption length 1 m, REEMISSIONPROB 0.4) reemits
 * 0.4 of them at the first step, their wavelengths of mean 466.67 nm (sd
 * 23.57). N = 200000, 4 sigma. */
static void test_surface_and_reemission_on_cuda(void **state)
{
    (void)state;
    const size_t N = gc_photons(200000);
    {
        kt_scene s = {0};
        uint32_t vac = kt_material(&s, "vacuum", 1.0f, 0, 0);
        uint32_t sf = kt_surface(&s, "g4", 0, 0, 0, 0);
        const float c[3] = {0, 0, 0};
        kt_sphere(&s, c, 2.0f, 48, 3, vac, PRISM_NONE, sf);
        pt_surface g = {.model = PRISM_SURFACE_MODEL_UNIFIED,
                        .type = PRISM_SURFACE_DIELECTRIC_METAL,
                        .finish = PRISM_FINISH_POLISHED,
                        .reflectivity = 0.7f,
                        .efficiency = 0.4f};
        g4_tables t = {&g, 1, PRISM_NONE, 0};
        prism_geometry *hg, *cg;
        upload_both(&s, &t, &hg, &cg);
        prism_photon_source src = {.kind = PRISM_SOURCE_POINT, .count = N};
        prism_propagate_desc d = {.seed = 91, .max_steps = 200};
        prism_photon *ph = gc_propagate(gc_cuda, cg, &src, &d, NULL, NULL);
        size_t det = 0;
        for (size_t i = 0; i < N; i++)
            det += (ph[i].history & PRISM_SURFACE_DETECT) != 0;
        check_fraction("cuda sphere detected", det, N, 0.4);
        free(ph);
        gc_free_both(&s, hg, cg);
    }
    kt_scene s = {0};
    uint32_t ls = kt_material(&s, "scintillator", 1.5f, 1.0f, 0);
    const float lo[3] = {-500, -500, -500}, hi[3] = {500, 500, 500};
    kt_box(&s, lo, hi, 1, ls, PRISM_NONE, PRISM_NONE);
    g4_tables t = {NULL, 0, ls, 0.4f};
    prism_geometry *hg, *cg;
    upload_both(&s, &t, &hg, &cg);
    prism_photon_source src = {.kind = PRISM_SOURCE_POINT, .count = N};
    prism_propagate_desc d = {.seed = 101, .max_steps = 1};
    prism_photon *ph = gc_propagate(gc_cuda, cg, &src, &d, NULL, NULL);
    size_t re = 0;
    double wl = 0;
    for (size_t i = 0; i < N; i++)
        if (ph[i].history & PRISM_BULK_REEMIT) {
            re++;
            wl += ph[i].wavelength;
            assert_int_equal(ph[i].history, PRISM_BULK_REEMIT | PRISM_STEP_LIMIT);
        } else {
            assert_int_equal(ph[i].history, PRISM_BULK_ABSORB);
        }
    check_fraction("cuda reemitted", re, N, 0.4);
    double tol = 4.0 * 100.0 / sqrt(18.0) / sqrt((double)re);
    printf("# cuda reemitted mean %.3f nm, expected 466.667 +- %.3f\n", wl / re, tol);
    assert_true(fabs(wl / re - (400.0 + 200.0 / 3.0)) <= tol);
    free(ph);
    gc_free_both(&s, hg, cg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_g4_scene_exact_bit_identical),
        cmocka_unit_test(test_fresnel_on_cuda),
        cmocka_unit_test(test_surface_and_reemission_on_cuda),
    };
    return gc_run_group_tests(tests, NULL, NULL);
}
