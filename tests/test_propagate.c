/* Photon propagation on the host backend: analytic answers (arrival time
 * on a sphere, absorption through a slab, Fresnel at normal incidence, no
 * transmission beyond the critical angle, a detector counting every
 * photon), the traps Chroma users hit (axis-aligned photons on a box,
 * normal incidence, a photon starting on a surface, the step limit), step
 * records, determinism and error paths. Statistical checks state N and a
 * tolerance of 4 standard deviations (a false failure once in ~16000 runs;
 * the seed is fixed, so a run is reproducible). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "prism/device/kmath.h"
#include "prism/device/philox.h"
#include "kernels_test_scene.h"
#include "prism/geometry.h"
#include "prism/memory.h"
#include "engine/upload/geometry_internal.h"
#include "engine/launch/propagate_internal.h"

#define C_LIGHT 0.299792458

/* Run `src` through `s` on the host backend; returns the photons. */
static prism_photon *run(kt_scene *s, const prism_photon_source *src, const prism_propagate_desc *d,
                         prism_step_record *records, prism_propagate_stats *st)
{
    prism_photon *ph = calloc(src->count, sizeof *ph);
    assert_non_null(ph);
    prism_propagate_stats local;
    assert_int_equal(prism__propagate_view(kt_ctx, &s->view, prism__optics_view(s->optics), src, d,
                                           ph, records, NULL, st != NULL ? st : &local),
                     PRISM_SUCCESS);
    return ph;
}

static size_t count_flag(const prism_photon *ph, size_t n, uint32_t flag)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        c += (ph[i].history & flag) != 0;
    return c;
}

static void assert_fraction(size_t k, size_t n, double p)
{
    double f = (double)k / (double)n, sigma = sqrt(p * (1.0 - p) / (double)n);
    if (fabs(f - p) > 4.0 * sigma)
        fail_msg("fraction %.5f, expected %.5f +- %.5f (4 sigma, N=%zu)", f, p, 4 * sigma, n);
}

/* Random123's known answers for Philox4x32-10. */
static void test_philox_known_answers(void **state)
{
    (void)state;
    prism_philox4 c = {{0, 0, 0, 0}};
    prism_philox4 r = prism_philox4x32_10(c, 0, 0);
    assert_int_equal(r.v[0], 0x6627e8d5u);
    assert_int_equal(r.v[3], 0x9b00dbd8u);
    prism_philox4 c2 = {{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}};
    r = prism_philox4x32_10(c2, 0xa4093822u, 0x299f31d0u);
    assert_int_equal(r.v[0], 0xd16cfe09u);
    assert_int_equal(r.v[1], 0x94fdccebu);
    assert_int_equal(r.v[2], 0x5001e420u);
    assert_int_equal(r.v[3], 0x24126ea1u);
    /* Uniforms stay strictly inside (0, 1) at the extreme words. */
    prism_rng g = prism_rng_make(1, 2, 3, 4);
    g.used = 0;
    g.out.v[0] = 0;
    g.out.v[1] = 0xFFFFFFFFu;
    float lo = prism_rng_uniform(&g), hi = prism_rng_uniform(&g);
    assert_true(lo > 0.0f && lo < 1e-6f);
    assert_true(hi < 1.0f && hi > 1.0f - 1e-6f);
    assert_true(-logf(hi) > 0.0f && isfinite(-logf(lo)));
}

/* Photons from the centre of a detecting sphere of water reach it at
 * t = d n / c, d within the tessellation's sagitta of r; every one is
 * detected, on the sphere's solid. N = 20000. */
static void test_sphere_arrival_time(void **state)
{
    (void)state;
    kt_scene s = {0};
    uint32_t water = kt_material(&s, "water", 1.33f, 0, 0);
    uint32_t det = kt_surface(&s, "pmt", 1, 0, 0, 0);
    const float c[3] = {0, 0, 0};
    kt_sphere(&s, c, 2.0f, 64, 7, water, PRISM_NONE, det);
    assert_int_equal(kt_build(&s, kt_ctx), 0);
    prism_photon_source src = {.kind = PRISM_SOURCE_POINT, .count = 20000};
    prism_propagate_stats st;
    prism_photon *ph = run(&s, &src, NULL, NULL, &st);
    double sagitta = 2.0 * (1.0 - cos(3.14159265 / 64) * cos(3.14159265 / 64));
    for (size_t i = 0; i < src.count; i++) {
        assert_int_equal(ph[i].history, PRISM_SURFACE_DETECT);
        assert_int_equal(ph[i].solid, 7);
        double d = sqrt(ph[i].pos[0] * ph[i].pos[0] + ph[i].pos[1] * ph[i].pos[1] +
                        ph[i].pos[2] * ph[i].pos[2]);
        assert_true(d <= 2.0 + 1e-5 && d >= 2.0 - sagitta - 1e-5);
        assert_float_equal(ph[i].time, d * 1.33 / C_LIGHT, 1e-5 * ph[i].time);
        assert_float_equal(ph[i].time, 2.0 * 1.33 / C_LIGHT, sagitta * 1.33 / C_LIGHT + 1e-5);
    }
    assert_int_equal(st.detected, src.count);
    assert_int_equal(st.steps, src.count);
    float latest = 0;
    for (size_t i = 0; i < src.count; i++)
        latest = ph[i].time > latest ? ph[i].time : latest;
    assert_true(st.time_max == latest); /* the stats' latest final time */
    free(ph);
    kt_free(&s, kt_ctx);
}

/* A pencil beam through a slab of absorption length L = 1 m and thickness
 * d = 0.5 m (index 1 on both sides: no reflection): survival e^(-d/L) =
 * 0.6065; N = 100000, 4 sigma = 0.0062. Absorbed photons stop inside. */
static void test_absorbing_slab(void **state)
{
    (void)state;
    kt_scene s = {0};
    uint32_t vac = kt_material(&s, "vacuum", 1.0f, 0, 0);
    uint32_t absb = kt_material(&s, "absorber", 1.0f, 1.0f, 0);
    const float lo[3] = {-5, -5, 0}, hi[3] = {5, 5, 0.5f};
    kt_box(&s, lo, hi, 1, absb, vac, PRISM_NONE);
    assert_int_equal(kt_build(&s, kt_ctx), 0);
    prism_photon_source src = {.kind = PRISM_SOURCE_BEAM,
                               .count = 100000,
                               .position = {0.1f, 0.2f, -1},
                               .direction = {0, 0, 1}};
    prism_photon *ph = run(&s, &src, NULL, NULL, NULL);
    size_t absorbed = count_flag(ph, src.count, PRISM_BULK_ABSORB);
    size_t escaped = count_flag(ph, src.count, PRISM_NO_HIT);
    assert_int_equal(absorbed + escaped, src.count);
    assert_int_equal(count_flag(ph, src.count, PRISM_REFLECT_SPECULAR), 0);
    assert_fraction(escaped, src.count, exp(-0.5));
    for (size_t i = 0; i < src.count; i++)
        if (ph[i].history & PRISM_BULK_ABSORB)
            assert_true(ph[i].pos[2] >= 0.0f && ph[i].pos[2] <= 0.5f);
    free(ph);
    kt_free(&s, kt_ctx);
}

/* Normal incidence from vacuum on glass n = 1.5: reflectance
 * ((1 - 1.5)/(1 + 1.5))^2 = 0.04 on the first step; N = 100000, 4 sigma =
 * 0.0025. The beam is axis-aligned onto a box face: no NaN anywhere. */
static void test_fresnel_normal_incidence(void **state)
{
    (void)state;
    kt_scene s = {0};
    uint32_t vac = kt_material(&s, "vacuum", 1.0f, 0, 0);
    uint32_t glass = kt_material(&s, "glass", 1.5f, 0, 0);
    const float lo[3] = {-1, -1, 0}, hi[3] = {1, 1, 1};
    kt_box(&s, lo, hi, 1, glass, vac, PRISM_NONE);
    assert_int_equal(kt_build(&s, kt_ctx), 0);
    prism_photon_source src = {
        .kind = PRISM_SOURCE_BEAM, .count = 100000, .position = {0, 0, -1}, .direction = {0, 0, 1}};
    prism_propagate_desc d = {.max_steps = 1, .seed = 5};
    prism_photon *ph = run(&s, &src, &d, NULL, NULL);
    size_t refl = count_flag(ph, src.count, PRISM_REFLECT_SPECULAR);
    assert_int_equal(refl + count_flag(ph, src.count, PRISM_REFRACT), src.count);
    assert_fraction(refl, src.count, 0.04);
    assert_int_equal(count_flag(ph, src.count, PRISM_NAN_ABORT), 0);
    for (size_t i = 0; i < src.count; i++) {
        assert_true(isfinite(ph[i].dir[0]) && isfinite(ph[i].pol[0]) && isfinite(ph[i].pos[2]));
        assert_float_equal(fabsf(ph[i].dir[2]), 1.0f, 1e-6);
        assert_int_equal(ph[i].history & PRISM_STEP_LIMIT, PRISM_STEP_LIMIT);
    }
    free(ph);
    kt_free(&s, kt_ctx);
}

/* Inside glass (n = 1.5, critical angle 41.8 degrees), photons meet the
 * face at 60 degrees: every one is totally reflected, none transmitted.
 * At 30 degrees some are transmitted. */
static void test_critical_angle(void **state)
{
    (void)state;
    kt_scene s = {0};
    uint32_t vac = kt_material(&s, "vacuum", 1.0f, 0, 0);
    uint32_t glass = kt_material(&s, "glass", 1.5f, 0, 0);
    const float lo[3] = {-10, -10, -1}, hi[3] = {10, 10, 1};
    kt_box(&s, lo, hi, 1, glass, vac, PRISM_NONE);
    assert_int_equal(kt_build(&s, kt_ctx), 0);
    enum { N = 5000 };
    prism_photon *in = calloc(N, sizeof *in);
    for (int angle = 0; angle < 2; angle++) {
        float th = (angle == 0 ? 60.0f : 30.0f) * 3.14159265f / 180.0f;
        for (int i = 0; i < N; i++) {
            in[i].dir[0] = sinf(th) * cosf(i * 0.01f);
            in[i].dir[1] = sinf(th) * sinf(i * 0.01f);
            in[i].dir[2] = cosf(th);
            in[i].wavelength = 500.0f;
        }
        prism_photon_source src = {.kind = PRISM_SOURCE_PHOTONS, .count = N, .photons = in};
        prism_propagate_desc d = {.max_steps = 1};
        prism_photon *ph = run(&s, &src, &d, NULL, NULL);
        size_t refracted = count_flag(ph, N, PRISM_REFRACT);
        if (angle == 0) {
            assert_int_equal(refracted, 0);
            assert_int_equal(count_flag(ph, N, PRISM_TOTAL_INTERNAL), N);
            for (int i = 0; i < N; i++)
                assert_true(ph[i].dir[2] < 0.0f && fabsf(ph[i].pos[2] - 1.0f) < 1e-5f);
        } else {
            assert_true(refracted > N / 2);
        }
        free(ph);
    }
    free(in);
    kt_free(&s, kt_ctx);
}

/* Axis-aligned photons from the centre, from face planes, edges and
 * corners of an absorbing box: each ends in one step, no NaN, no loop. */
static void test_axis_aligned_box(void **state)
{
    (void)state;
    kt_scene s = {0};
    uint32_t vac = kt_material(&s, "vacuum", 1.0f, 0, 0);
    uint32_t black = kt_surface(&s, "black", 0, 1, 0, 0);
    const float lo[3] = {-1, -1, -1}, hi[3] = {1, 1, 1};
    kt_box(&s, lo, hi, 1, vac, vac, black);
    assert_int_equal(kt_build(&s, kt_ctx), 0);
    static const float starts[][3] = {{0, 0, 0},         {0, 1, 0},    {1, 1, 0},
                                      {0.5f, -1, 0.25f}, {-1, -1, -1}, {0, 0, 1}};
    enum { NS = sizeof starts / sizeof starts[0] };
    prism_photon in[NS * 6];
    memset(in, 0, sizeof in);
    for (int i = 0; i < NS; i++)
        for (int a = 0; a < 6; a++) {
            prism_photon *p = &in[i * 6 + a];
            memcpy(p->pos, starts[i], sizeof p->pos);
            p->dir[a / 2] = a % 2 ? -1.0f : 1.0f;
            p->wavelength = 420;
        }
    prism_photon_source src = {.kind = PRISM_SOURCE_PHOTONS, .count = NS * 6, .photons = in};
    prism_propagate_desc d = {.max_steps = 50};
    prism_photon *ph = run(&s, &src, &d, NULL, NULL);
    for (int i = 0; i < NS * 6; i++) {
        assert_int_equal(ph[i].history & (PRISM_NAN_ABORT | PRISM_STEP_LIMIT), 0);
        assert_true(ph[i].steps <= 1);
        assert_true(ph[i].history == PRISM_SURFACE_ABSORB || ph[i].history == PRISM_NO_HIT);
    }
    /* From the centre every axis direction hits a face one metre away. */
    for (int a = 0; a < 6; a++) {
        assert_int_equal(ph[a].history, PRISM_SURFACE_ABSORB);
        assert_float_equal(fabsf(ph[a].pos[a / 2]), 1.0f, 1e-6);
    }
    free(ph);
    kt_free(&s, kt_ctx);
}

/* A photon standing on a face and pointing into the box must not hit that
 * face: it is absorbed on the opposite one, 2 m away. */
static void test_start_on_surface(void **state)
{
    (void)state;
    kt_scene s = {0};
    uint32_t vac = kt_material(&s, "vacuum", 1.0f, 0, 0);
    uint32_t black = kt_surface(&s, "black", 0, 1, 0, 0);
    const float lo[3] = {-1, -1, -1}, hi[3] = {1, 1, 1};
    kt_box(&s, lo, hi, 1, vac, vac, black);
    assert_int_equal(kt_build(&s, kt_ctx), 0);
    prism_photon in[3];
    memset(in, 0, sizeof in);
    const float pos[3][3] = {{0.3f, 0.2f, -1}, {-1, 0.1f, 0.7f}, {0.25f, 1, 0.5f}};
    const float dir[3][3] = {{0.1f, 0, 1}, {1, 0.2f, 0}, {0, -1, 0.05f}};
    for (int i = 0; i < 3; i++) {
        memcpy(in[i].pos, pos[i], sizeof pos[i]);
        memcpy(in[i].dir, dir[i], sizeof dir[i]);
        in[i].wavelength = 420;
    }
    prism_photon_source src = {.kind = PRISM_SOURCE_PHOTONS, .count = 3, .photons = in};
    prism_photon *ph = run(&s, &src, NULL, NULL, NULL);
    assert_float_equal(ph[0].pos[2], 1.0f, 1e-5);
    assert_float_equal(ph[1].pos[0], 1.0f, 1e-5);
    assert_float_equal(ph[2].pos[1], -1.0f, 1e-5);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(ph[i].history, PRISM_SURFACE_ABSORB);
        assert_int_equal(ph[i].steps, 1);
        assert_true(ph[i].time > 2.0f / C_LIGHT * 0.99f);
    }
    free(ph);
    kt_free(&s, kt_ctx);
}

/* A beam at 45 degrees onto a face: a mirror reflects it exactly; a
 * diffuse surface sends it back with Lambert's law, <cos> = 2/3 (spread
 * 0.236; N = 20000, 4 sigma = 0.0067). */
static void test_surface_reflection(void **state)
{
    (void)state;
    for (int diffuse = 0; diffuse < 2; diffuse++) {
        kt_scene s = {0};
        uint32_t vac = kt_material(&s, "vacuum", 1.0f, 0, 0);
        uint32_t surf = kt_surface(&s, "plate", 0, 0, diffuse ? 0 : 1, diffuse ? 1 : 0);
        const float lo[3] = {-5, -5, -1}, hi[3] = {5, 5, 0};
        kt_box(&s, lo, hi, 1, vac, vac, surf);
        assert_int_equal(kt_build(&s, kt_ctx), 0);
        prism_photon_source src = {.kind = PRISM_SOURCE_BEAM,
                                   .count = 20000,
                                   .position = {-1, 0.3f, 1},
                                   .direction = {1, 0, -1}};
        prism_propagate_desc d = {.max_steps = 1};
        prism_photon *ph = run(&s, &src, &d, NULL, NULL);
        double mean = 0;
        for (size_t i = 0; i < src.count; i++) {
            assert_int_equal(ph[i].history,
                             (diffuse ? PRISM_REFLECT_DIFFUSE : PRISM_REFLECT_SPECULAR) |
                                 PRISM_STEP_LIMIT);
            assert_float_equal(ph[i].pos[2], 0.0f, 1e-6);
            assert_true(ph[i].dir[2] > 0.0f);
            if (!diffuse) {
                assert_float_equal(ph[i].dir[0], sqrtf(0.5f), 1e-6);
                assert_float_equal(ph[i].dir[2], sqrtf(0.5f), 1e-6);
            }
            mean += ph[i].dir[2] / src.count;
        }
        if (diffuse)
            assert_float_equal(mean, 2.0 / 3.0, 4 * 0.236 / sqrt(20000.0));
        free(ph);
        kt_free(&s, kt_ctx);
    }
}

/* Photons in a mirror box never end: they stop at max_steps, flagged. */
static void test_step_limit_flagged(void **state)
{
    (void)state;
    kt_scene s = {0};
    uint32_t vac = kt_material(&s, "vacuum", 1.0f, 0, 0);
    uint32_t mirror = kt_surface(&s, "mirror", 0, 0, 1, 0);
    const float lo[3] = {-1, -1, -1}, hi[3] = {1, 1, 1};
    kt_box(&s, lo, hi, 1, vac, vac, mirror);
    assert_int_equal(kt_build(&s, kt_ctx), 0);
    prism_photon_source src = {.kind = PRISM_SOURCE_POINT, .count = 1000};
    prism_propagate_desc d = {.max_steps = 7, .steps_per_launch = 3};
    prism_propagate_stats st;
    prism_photon *ph = run(&s, &src, &d, NULL, &st);
    for (size_t i = 0; i < src.count; i++) {
        assert_int_equal(ph[i].history, PRISM_REFLECT_SPECULAR | PRISM_STEP_LIMIT);
        assert_int_equal(ph[i].steps, 7);
        float m = fmaxf(fmaxf(fabsf(ph[i].pos[0]), fabsf(ph[i].pos[1])), fabsf(ph[i].pos[2]));
        assert_float_equal(m, 1.0f, 1e-4);
    }
    assert_int_equal(st.step_limited, src.count);
    assert_int_equal(st.steps, 7 * src.count);
    assert_int_equal(st.launches, 3); /* 3 + 3 + 1 steps */
    free(ph);
    kt_free(&s, kt_ctx);
}

/* kt_rich_scene, built. */
static void rich_scene(kt_scene *s)
{
    kt_rich_scene(s, 24);
    assert_int_equal(kt_build(s, kt_ctx), 0);
}

/* Same seed: same photons, whatever the steps per launch and thread count;
 * another seed: other photons. */
static void test_deterministic(void **state)
{
    (void)state;
    kt_scene s = {0};
    rich_scene(&s);
    prism_photon_source src = {.kind = PRISM_SOURCE_POINT,
                               .count = 20000,
                               .position = {0.1f, 0, 0}};
    prism_propagate_desc d1 = {.seed = 42}, d2 = {.seed = 42, .steps_per_launch = 1},
                         d3 = {.seed = 43};
    prism_photon *a = run(&s, &src, &d1, NULL, NULL);
    int threads = kt_ctx->host_threads;
    kt_ctx->host_threads = 1;
    prism_photon *b = run(&s, &src, &d2, NULL, NULL);
    kt_ctx->host_threads = threads;
    prism_photon *c = run(&s, &src, &d3, NULL, NULL);
    assert_memory_equal(a, b, src.count * sizeof *a);
    assert_memory_not_equal(a, c, src.count * sizeof *a);
    uint32_t any = 0;
    for (size_t i = 0; i < src.count; i++)
        any |= a[i].history;
    const uint32_t expect = PRISM_SURFACE_DETECT | PRISM_SURFACE_ABSORB | PRISM_REFLECT_SPECULAR |
                            PRISM_REFLECT_DIFFUSE | PRISM_BULK_ABSORB | PRISM_RAYLEIGH_SCATTER |
                            PRISM_REFRACT | PRISM_SURFACE_TRANSMIT;
    assert_int_equal(any & expect, expect);
    assert_int_equal(any & PRISM_NAN_ABORT, 0);
    free(a);
    free(b);
    free(c);
    kt_free(&s, kt_ctx);
}

/* Step records: record 0 the start, one per step, padding repeats the
 * last, which carries the final history; more steps than slots keep the
 * final position in the last slot. */
static void test_step_records(void **state)
{
    (void)state;
    kt_scene s = {0};
    rich_scene(&s);
    enum { N = 2000, K = 6 };
    prism_step_record *rec = calloc(N * K, sizeof *rec);
    prism_photon_source src = {.kind = PRISM_SOURCE_POINT, .count = N};
    prism_propagate_desc d = {.seed = 3, .record_steps = K};
    prism_photon *ph = run(&s, &src, &d, rec, NULL);
    for (uint32_t i = 0; i < N; i++) {
        const prism_step_record *r = rec + (size_t)i * K;
        assert_int_equal(r[0].step, 0);
        assert_float_equal(r[0].pos[0], 0.0f, 0);
        assert_float_equal(r[0].time, 0.0f, 0);
        uint32_t last = ph[i].steps < K - 1 ? ph[i].steps : K - 1;
        for (uint32_t k = 0; k < K; k++) {
            assert_int_equal(r[k].photon, i);
            if (k < last)
                assert_int_equal(r[k].step, k);
            if (k >= last) {
                assert_memory_equal(r[k].pos, ph[i].pos, sizeof ph[i].pos);
                assert_int_equal(r[k].history, ph[i].history);
                assert_int_equal(r[k].step, ph[i].steps);
            }
        }
    }
    free(rec);
    free(ph);
    kt_free(&s, kt_ctx);
}

/* A run split into calls (first_photon advancing) gives the photons and
 * records of one call, byte for byte; photon indices past 2^32 draw their
 * own numbers and their records carry the low 32 bits. */
static void test_first_photon_splits(void **state)
{
    (void)state;
    kt_scene s = {0};
    rich_scene(&s);
    enum { N = 6000, K = 5 };
    prism_photon_source src = {.kind = PRISM_SOURCE_POINT, .count = N, .position = {0.1f, 0, 0}};
    prism_propagate_desc d = {.seed = 8, .record_steps = K};
    prism_step_record *ref_rec = calloc(N * K, sizeof *ref_rec), *rec = calloc(N * K, sizeof *rec);
    prism_photon *ref = run(&s, &src, &d, ref_rec, NULL), *ph = calloc(N, sizeof *ph);
    const size_t parts[3] = {1000, 2999, 2001};
    for (size_t i = 0, at = 0; i < 3; at += parts[i++]) {
        prism_photon_source part = src;
        part.count = parts[i];
        prism_propagate_desc pd = d;
        pd.first_photon = at;
        assert_int_equal(prism__propagate_view(kt_ctx, &s.view, prism__optics_view(s.optics), &part,
                                               &pd, ph + at, rec + at * K, NULL, NULL),
                         PRISM_SUCCESS);
    }
    assert_memory_equal(ph, ref, N * sizeof *ph);
    assert_memory_equal(rec, ref_rec, N * K * sizeof *rec);
    /* photons 2^32 + 7 ...: not photons 7 ... again */
    prism_photon_source few = src;
    few.count = 10;
    prism_propagate_desc high = d;
    high.first_photon = ((uint64_t)1 << 32) + 7;
    assert_int_equal(prism__propagate_view(kt_ctx, &s.view, prism__optics_view(s.optics), &few,
                                           &high, ph, rec, NULL, NULL),
                     PRISM_SUCCESS);
    for (uint32_t i = 0; i < 10; i++) {
        assert_memory_not_equal(&ph[i], &ref[7 + i], sizeof *ph);
        assert_int_equal(rec[i * K].photon, 7 + i);
    }
    /* the host computes exactly whatever math is asked for */
    prism_propagate_desc fast = d;
    fast.math = PRISM_PROPAGATE_MATH_FAST;
    prism_photon *f = run(&s, &src, &fast, rec, NULL);
    assert_memory_equal(f, ref, N * sizeof *f);
    free(f);
    free(ph);
    free(ref);
    free(rec);
    free(ref_rec);
    kt_free(&s, kt_ctx);
}

/* Final photons do not depend on the tree that traced them: another
 * tree (leaves of one triangle, depth-first) gives the same bytes, and
 * the skip triangle, an index in the tree's leaf order, is cleared. */
static void test_tree_independent(void **state)
{
    (void)state;
    kt_scene s = {0};
    rich_scene(&s);
    enum { N = 20000 };
    prism_photon_source src = {.kind = PRISM_SOURCE_POINT, .count = N, .position = {0.3f, 0.2f, 0}};
    prism_propagate_desc d = {.seed = 21};
    prism_photon *ref = run(&s, &src, &d, NULL, NULL), *ph = calloc(N, sizeof *ph);
    prism_bvh_desc bd = {.max_leaf_size = 1, .order = PRISM_BVH_ORDER_DFS};
    prism_bvh *other = NULL;
    assert_int_equal(prism_bvh_build(s.positions, s.vertices, s.indices, s.triangles, &bd, &other),
                     PRISM_SUCCESS);
    prism_geometry *g = NULL;
    assert_int_equal(prism_geometry_upload(kt_ctx, &s.scene, other, NULL, &g), PRISM_SUCCESS);
    prism_propagate_outputs out = {.photons = {.kind = PRISM_TARGET_HOST, .host = ph}};
    assert_int_equal(prism_propagate(kt_ctx, g, &src, &d, &out, NULL), PRISM_SUCCESS);
    assert_memory_equal(ph, ref, N * sizeof *ph);
    for (int i = 0; i < N; i++)
        assert_int_equal(ph[i].reserved, 0xFFFFFFFFu);
    prism_geometry_destroy(g);
    prism_bvh_free(other);
    free(ph);
    free(ref);
    kt_free(&s, kt_ctx);
}

/* The own logarithm and sine/cosine (prism/device/kmath.h) against libm in
 * double: within 2 ulp over every 37th uniform the generator can draw
 * (and at both ends), and exact where the answer is. */
static double ulps(float got, double want)
{
    const float w = (float)want;
    return fabs((double)got - want) / (double)(nextafterf(fabsf(w), INFINITY) - fabsf(w));
}

static void test_own_math(void **state)
{
    (void)state;
    const double two_pi = 6.283185307179586;
    double worst_log = 0, worst_sincos = 0;
    for (uint32_t k = 0; k < (1u << 23); k += k < 16 || k > (1u << 23) - 16 ? 1 : 37) {
        const float u = ((float)k + 0.5f) * (1.0f / 8388608.0f);
        worst_log = fmax(worst_log, ulps(prism_logf(u), log((double)u)));
        float sn, cs;
        prism_sincos_turn(u, &sn, &cs);
        const double S = sin(two_pi * u), C = cos(two_pi * u);
        /* near a zero of sin or cos, ulps of the tiny answer mean nothing */
        if (fabs(S) > 1e-3)
            worst_sincos = fmax(worst_sincos, ulps(sn, S));
        if (fabs(C) > 1e-3)
            worst_sincos = fmax(worst_sincos, ulps(cs, C));
        assert_true(fabs(sn - S) < 2e-7 && fabs(cs - C) < 2e-7);
    }
    printf("# worst: log %.2f ulp, sin/cos %.2f ulp\n", worst_log, worst_sincos);
    assert_true(worst_log <= 2.0 && worst_sincos <= 2.0);
    assert_float_equal(prism_logf(1.0f), 0.0f, 0);
    assert_true(ulps(prism_logf(1e-40f), log(1e-40)) <= 2.0); /* subnormal */
    assert_true(ulps(prism_logf(3e38f), log(3e38)) <= 2.0);
    assert_true(isinf(prism_logf(0.0f)) && prism_logf(0.0f) < 0);
    assert_true(isnan(prism_logf(-1.0f)));
    float sn, cs;
    prism_sincos_turn(0.0f, &sn, &cs);
    assert_true(sn == 0.0f && cs == 1.0f);
    prism_sincos_turn(0.25f, &sn, &cs);
    assert_true(sn == 1.0f && cs == 0.0f);
}

/* How many photons a call can take: what the memory holds, less for
 * records and a PHOTONS source's input, at prism_propagate_photon_bytes
 * a photon; an error when nothing fits. */
static void test_batch_limit(void **state)
{
    (void)state;
    kt_scene s = {0};
    rich_scene(&s);
    prism_geometry *g = kt_upload(&s, kt_ctx, PRISM_PLACEMENT_AUTO, false);
    assert_non_null(g);
    size_t point = 0, photons = 0, records = 0;
    prism_propagate_desc d = {.record_steps = 10};
    assert_int_equal(prism_propagate_batch_limit(kt_ctx, g, PRISM_SOURCE_POINT, NULL, &point),
                     PRISM_SUCCESS);
    assert_int_equal(prism_propagate_batch_limit(kt_ctx, g, PRISM_SOURCE_PHOTONS, NULL, &photons),
                     PRISM_SUCCESS);
    assert_int_equal(prism_propagate_batch_limit(kt_ctx, g, PRISM_SOURCE_POINT, &d, &records),
                     PRISM_SUCCESS);
    size_t free_bytes = 0, total = 0;
    assert_int_equal(prism_device_memory_info(kt_ctx, &free_bytes, &total), PRISM_SUCCESS);
    const size_t left = free_bytes - prism_geometry_report(g)->reserve;
    printf("# batch limit: %zu / %zu / %zu photons in %.0f MB\n", point, photons, records,
           left / 1e6);
    /* 76, 140 and 396 bytes a photon: the photon, two queues and a hit's
     * selection index, then an input photon, then ten records (the ledger
     * may move a little between calls) */
    const size_t fits = left / 76 < UINT32_MAX ? left / 76 : UINT32_MAX;
    assert_true(point > 0 && (double)point > 0.99 * (double)fits);
    assert_true(photons < point && records < photons);
    assert_float_equal((double)records / (double)(left / 396), 1.0, 0.01);
    /* what a photon is counted at, as the limit divides by it */
    assert_int_equal(prism_propagate_photon_bytes(kt_ctx, PRISM_SOURCE_POINT, NULL), 76);
    assert_int_equal(prism_propagate_photon_bytes(kt_ctx, PRISM_SOURCE_PHOTONS, NULL), 140);
    assert_int_equal(prism_propagate_photon_bytes(kt_ctx, PRISM_SOURCE_POINT, &d), 396);
    assert_int_equal(prism_propagate_photon_bytes(NULL, PRISM_SOURCE_POINT, NULL), 0);
    assert_int_equal(prism_propagate_batch_limit(kt_ctx, NULL, PRISM_SOURCE_POINT, NULL, &point),
                     PRISM_ERROR_INVALID_ARGUMENT);
    prism_geometry_destroy(g);
    /* a reserve above the free memory: no photon fits, and the message says why */
    prism_geometry_desc gd = {.policy = PRISM_PLACEMENT_MAPPED, .reserve = free_bytes * 2};
    assert_int_equal(prism_geometry_upload(kt_ctx, &s.scene, s.bvh, &gd, &g), PRISM_SUCCESS);
    assert_int_equal(prism_propagate_batch_limit(kt_ctx, g, PRISM_SOURCE_POINT, NULL, &point),
                     PRISM_ERROR_OUT_OF_DEVICE_MEMORY);
    assert_non_null(strstr(prism_context_last_error(kt_ctx), "reserve"));
    assert_int_equal(point, 0);
    prism_geometry_destroy(g);
    kt_free(&s, kt_ctx);
}

/* Rayleigh: with no absorption and scattering length 2 m, the fraction of
 * photons scattered before the wall 1 m away is 1 - e^(-1/2); N = 50000,
 * 4 sigma = 0.0087. */
static void test_rayleigh_fraction(void **state)
{
    (void)state;
    kt_scene s = {0};
    uint32_t fog = kt_material(&s, "fog", 1.0f, 0, 2.0f);
    uint32_t black = kt_surface(&s, "black", 0, 1, 0, 0);
    const float c[3] = {0, 0, 0};
    kt_sphere(&s, c, 1.0f, 96, 1, fog, PRISM_NONE, black);
    assert_int_equal(kt_build(&s, kt_ctx), 0);
    prism_photon_source src = {.kind = PRISM_SOURCE_POINT, .count = 50000};
    prism_propagate_desc d = {.max_steps = 1, .seed = 9};
    prism_photon *ph = run(&s, &src, &d, NULL, NULL);
    assert_fraction(count_flag(ph, src.count, PRISM_RAYLEIGH_SCATTER), src.count,
                    1.0 - exp(-0.5 * 0.9995));
    free(ph);
    /* The angle to the old direction follows 1 + cos^2 (randomly polarised
     * light): <cos^2> = 0.4 (isotropic would give 1/3); its spread is
     * 0.31, so 4 sigma over the ~20000 scattered photons is 0.0088. */
    prism_photon_source beam = {.kind = PRISM_SOURCE_BEAM, .count = 50000, .direction = {0, 0, 1}};
    ph = run(&s, &beam, &d, NULL, NULL);
    double c2 = 0;
    size_t n = 0;
    for (size_t i = 0; i < beam.count; i++)
        if (ph[i].history & PRISM_RAYLEIGH_SCATTER) {
            c2 += ph[i].dir[2] * ph[i].dir[2];
            n++;
        }
    assert_true(n > 15000);
    assert_float_equal(c2 / n, 0.4, 4.0 * 0.31 / sqrt((double)n));
    free(ph);
    kt_free(&s, kt_ctx);
}

/* The public path: upload, propagate into host photons and records in a
 * device buffer; equal to the internal run photon by photon. */
static void test_public_path(void **state)
{
    (void)state;
    kt_scene s = {0};
    rich_scene(&s);
    prism_geometry *geom = NULL;
    assert_int_equal(prism_geometry_upload(kt_ctx, &s.scene, s.bvh, NULL, &geom), PRISM_SUCCESS);
    enum { N = 3000, K = 5 };
    prism_photon_source src = {.kind = PRISM_SOURCE_BEAM,
                               .count = N,
                               .direction = {1, 1, 0},
                               .radius = 0.3f,
                               .divergence = 0.2f,
                               .wavelength_nm = 380,
                               .wavelength_max_nm = 480};
    prism_propagate_desc d = {.seed = 11, .record_steps = K};
    prism_step_record *ref_rec = calloc(N * K, sizeof *ref_rec);
    prism_photon *ref = run(&s, &src, &d, ref_rec, NULL);
    prism_photon *ph = calloc(N, sizeof *ph);
    prism_buffer *buf = NULL;
    assert_int_equal(prism_buffer_create_device(kt_ctx, N * K * sizeof(prism_step_record),
                                                "test.vbo", &buf),
                     PRISM_SUCCESS);
    prism_propagate_outputs out = {.photons = {.kind = PRISM_TARGET_HOST, .host = ph},
                                   .records = {.kind = PRISM_TARGET_BUFFER, .buffer = buf}};
    prism_propagate_stats st;
    assert_int_equal(prism_propagate(kt_ctx, geom, &src, &d, &out, &st), PRISM_SUCCESS);
    assert_memory_equal(ph, ref, N * sizeof *ph);
    prism_step_record *rec = calloc(N * K, sizeof *rec);
    assert_int_equal(prism_buffer_read(buf, 0, rec, N * K * sizeof *rec), PRISM_SUCCESS);
    assert_memory_equal(rec, ref_rec, N * K * sizeof *rec);
    assert_true(st.steps >= N && st.launches >= 1 && st.seconds > 0);
    for (int i = 0; i < N; i++)
        assert_true(ph[i].wavelength >= 380 && ph[i].wavelength <= 480);
    /* Records asked for without record_steps; a buffer too small. */
    d.record_steps = 0;
    assert_int_equal(prism_propagate(kt_ctx, geom, &src, &d, &out, NULL),
                     PRISM_ERROR_INVALID_ARGUMENT);
    d.record_steps = K + 1;
    assert_int_equal(prism_propagate(kt_ctx, geom, &src, &d, &out, NULL), PRISM_ERROR_OUT_OF_RANGE);
    prism_buffer_release(buf);
    free(rec);
    free(ref_rec);
    free(ph);
    free(ref);
    prism_geometry_destroy(geom);
    kt_free(&s, kt_ctx);
}

/* Every placement policy, the split one included (nodes head and tail in
 * two arrays), gives the same photons. */
static void test_placement_policies(void **state)
{
    (void)state;
    kt_scene s = {0};
    rich_scene(&s);
    enum { N = 5000 };
    prism_photon_source src = {.kind = PRISM_SOURCE_POINT, .count = N, .position = {0.3f, 0.1f, 0}};
    prism_propagate_desc d = {.seed = 77};
    prism_photon *ref = run(&s, &src, &d, NULL, NULL), *ph = calloc(N, sizeof *ph);
    const prism_placement_policy policies[] = {PRISM_PLACEMENT_AUTO, PRISM_PLACEMENT_DEVICE,
                                               PRISM_PLACEMENT_MAPPED, PRISM_PLACEMENT_CHROMA};
    for (int i = 0; i < 5; i++) {
        prism_geometry *g = kt_upload(&s, kt_ctx, policies[i % 4], i == 4);
        assert_non_null(g);
        if (i == 4) {
            const prism_geometry_view *v = prism__geometry_view(g);
            assert_true(v->nodes_split > 0 && v->nodes_split < v->node_count);
        }
        prism_propagate_outputs out = {.photons = {.kind = PRISM_TARGET_HOST, .host = ph}};
        assert_int_equal(prism_propagate(kt_ctx, g, &src, &d, &out, NULL), PRISM_SUCCESS);
        assert_memory_equal(ph, ref, N * sizeof *ph);
        prism_geometry_destroy(g);
    }
    free(ph);
    free(ref);
    kt_free(&s, kt_ctx);
}

/* prism_photons_generate: the photons a run starts with, not propagated:
 * a torch's start points, times and wavelengths are record 0 of the same
 * run propagated (first_photon 777 in both), their histories and steps
 * clear, directions unit; bad arguments are refused. */
static void test_generate_only(void **state)
{
    (void)state;
    kt_scene s = {0};
    rich_scene(&s);
    prism_geometry *g = kt_upload(&s, kt_ctx, PRISM_PLACEMENT_AUTO, false);
    assert_non_null(g);
    enum { N = 3000, K = 2 };
    prism_photon_source src = {.kind = PRISM_SOURCE_BEAM,
                               .count = N,
                               .position = {0.1f, 0, 0},
                               .direction = {0, 0, 1},
                               .radius = 0.2f,
                               .divergence = 0.3f,
                               .wavelength_nm = 380,
                               .wavelength_max_nm = 480};
    prism_propagate_desc d = {.seed = 9, .first_photon = 777, .record_steps = K};
    prism_photon *gen = calloc(N, sizeof *gen), *fin = calloc(N, sizeof *fin);
    prism_step_record *rec = calloc((size_t)N * K, sizeof *rec);
    prism_target t = {.kind = PRISM_TARGET_HOST, .host = gen};
    assert_int_equal(prism_photons_generate(kt_ctx, g, &src, &d, &t), PRISM_SUCCESS);
    prism_propagate_outputs out = {.photons = {.kind = PRISM_TARGET_HOST, .host = fin},
                                   .records = {.kind = PRISM_TARGET_HOST, .host = rec}};
    assert_int_equal(prism_propagate(kt_ctx, g, &src, &d, &out, NULL), PRISM_SUCCESS);
    size_t moved = 0;
    for (size_t i = 0; i < N; i++) {
        const prism_step_record *r0 = rec + i * K;
        assert_memory_equal(gen[i].pos, r0->pos, sizeof gen[i].pos);
        assert_true(gen[i].time == r0->time && gen[i].wavelength == r0->wavelength);
        assert_int_equal(gen[i].history, 0);
        assert_int_equal(gen[i].steps, 0);
        const float *v = gen[i].dir;
        assert_float_equal(v[0] * v[0] + v[1] * v[1] + v[2] * v[2], 1.0f, 1e-5);
        moved += fin[i].steps > 0;
    }
    assert_int_equal(moved, N); /* the propagated run did step them */
    assert_int_equal(prism_photons_generate(kt_ctx, g, &src, &d, NULL),
                     PRISM_ERROR_INVALID_ARGUMENT);
    src.count = 0;
    assert_int_equal(prism_photons_generate(kt_ctx, g, &src, &d, &t), PRISM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(prism_context_last_error(kt_ctx), "count"));
    free(gen);
    free(fin);
    free(rec);
    prism_geometry_destroy(g);
    kt_free(&s, kt_ctx);
}

static void test_errors(void **state)
{
    (void)state;
    kt_scene s = {0};
    const float lo[3] = {-1, -1, -1}, hi[3] = {1, 1, 1};
    kt_box(&s, lo, hi, 1, PRISM_NONE, PRISM_NONE, PRISM_NONE);
    assert_int_equal(kt_build(&s, kt_ctx), 0);
    prism_photon ph[4];
    prism_photon_source src = {.kind = PRISM_SOURCE_POINT, .count = 0};
    const prism_optics_view *o = prism__optics_view(s.optics);
    assert_int_equal(prism__propagate_view(kt_ctx, &s.view, o, &src, NULL, ph, NULL, NULL, NULL),
                     PRISM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(prism_context_last_error(kt_ctx), "count"));
    src.count = 4;
    src.kind = PRISM_SOURCE_PHOTONS;
    assert_int_equal(prism__propagate_view(kt_ctx, &s.view, o, &src, NULL, ph, NULL, NULL, NULL),
                     PRISM_ERROR_INVALID_ARGUMENT);
    src.kind = PRISM_SOURCE_BEAM;
    assert_int_equal(prism__propagate_view(kt_ctx, &s.view, o, &src, NULL, ph, NULL, NULL, NULL),
                     PRISM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(prism_context_last_error(kt_ctx), "direction"));
    src.direction[2] = 1;
    src.divergence = 4.0f;
    assert_int_equal(prism__propagate_view(kt_ctx, &s.view, o, &src, NULL, ph, NULL, NULL, NULL),
                     PRISM_ERROR_INVALID_ARGUMENT);
    src.divergence = 0.1f;
    prism_propagate_desc d = {.record_steps = 5000};
    assert_int_equal(prism__propagate_view(kt_ctx, &s.view, o, &src, &d, ph, NULL, NULL, NULL),
                     PRISM_ERROR_INVALID_ARGUMENT);
    d = (prism_propagate_desc){.math = (prism_propagate_math)7};
    assert_int_equal(prism__propagate_view(kt_ctx, &s.view, o, &src, &d, ph, NULL, NULL, NULL),
                     PRISM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(prism_context_last_error(kt_ctx), "math"));
    d = (prism_propagate_desc){.first_photon = PRISM_PROPAGATE_MAX_PHOTON_INDEX - 3};
    assert_int_equal(prism__propagate_view(kt_ctx, &s.view, o, &src, &d, ph, NULL, NULL, NULL),
                     PRISM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(prism_context_last_error(kt_ctx), "2^56"));
    d.first_photon--; /* photons 2^56 - 4 .. 2^56 - 1: the last ones there are */
    assert_int_equal(prism__propagate_view(kt_ctx, &s.view, o, &src, &d, ph, NULL, NULL, NULL),
                     PRISM_SUCCESS);
    assert_int_equal(prism__propagate_view(kt_ctx, NULL, o, &src, NULL, ph, NULL, NULL, NULL),
                     PRISM_ERROR_INVALID_ARGUMENT);
    /* No materials at all: vacuum; the beam leaves the box. */
    assert_int_equal(prism__propagate_view(kt_ctx, &s.view, NULL, &src, NULL, ph, NULL, NULL, NULL),
                     PRISM_SUCCESS);
    for (int i = 0; i < 4; i++)
        assert_int_equal(ph[i].history, PRISM_REFRACT | PRISM_NO_HIT);
    assert_string_equal(prism_history_flag_name(PRISM_SURFACE_DETECT), "SURFACE_DETECT");
    assert_string_equal(prism_history_flag_name(3), "?");
    prism_propagate_outputs out = {0};
    assert_int_equal(prism_propagate(kt_ctx, NULL, &src, NULL, &out, NULL),
                     PRISM_ERROR_INVALID_ARGUMENT);
    kt_free(&s, kt_ctx);
}

/* Sources, seen through photons that hit nothing (their final state is the
 * generated one): a torch's start points lie on its disc, uniform (mean
 * r^2 = R^2/2), its directions in its cone; a point source is isotropic
 * (|mean direction| < 4/sqrt(N)); polarisations are unit and
 * perpendicular; a spectrum is uniform (mean at its middle). N = 20000. */
static void test_sources(void **state)
{
    (void)state;
    kt_scene s = {0};
    const float lo[3] = {50, 50, 50}, hi[3] = {51, 51, 51};
    kt_box(&s, lo, hi, 0, PRISM_NONE, PRISM_NONE, PRISM_NONE);
    assert_int_equal(kt_build(&s, kt_ctx), 0);
    enum { N = 20000 };
    const float ax[3] = {0.6f, 0.0f, 0.8f}, c[3] = {1, 2, 3};
    prism_photon_source beam = {.kind = PRISM_SOURCE_BEAM,
                                .count = N,
                                .position = {1, 2, 3},
                                .direction = {3, 0, 4},
                                .radius = 0.5f,
                                .divergence = 0.1f,
                                .wavelength_nm = 400,
                                .wavelength_max_nm = 500,
                                .time = 7};
    prism_photon *ph = run(&s, &beam, NULL, NULL, NULL);
    double r2 = 0, wl = 0;
    for (int i = 0; i < N; i++) {
        float d[3] = {ph[i].pos[0] - c[0], ph[i].pos[1] - c[1], ph[i].pos[2] - c[2]};
        float along = d[0] * ax[0] + d[1] * ax[1] + d[2] * ax[2];
        float rr = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
        float cosd = ph[i].dir[0] * ax[0] + ph[i].dir[1] * ax[1] + ph[i].dir[2] * ax[2];
        float pd = ph[i].pol[0] * ph[i].dir[0] + ph[i].pol[1] * ph[i].dir[1] +
                   ph[i].pol[2] * ph[i].dir[2];
        float pl = ph[i].pol[0] * ph[i].pol[0] + ph[i].pol[1] * ph[i].pol[1] +
                   ph[i].pol[2] * ph[i].pol[2];
        assert_int_equal(ph[i].history, PRISM_NO_HIT);
        assert_true(fabsf(along) < 1e-5f && rr <= 0.25f + 1e-5f);
        assert_true(cosd >= cosf(0.1f) - 1e-6f);
        assert_true(fabsf(pd) < 1e-5f && fabsf(pl - 1.0f) < 1e-5f);
        assert_true(ph[i].wavelength >= 400 && ph[i].wavelength <= 500);
        assert_float_equal(ph[i].time, 7.0f, 0);
        r2 += rr;
        wl += ph[i].wavelength;
    }
    assert_float_equal(r2 / N, 0.125, 0.125 * 0.03);
    assert_float_equal(wl / N, 450.0, 1.0);
    free(ph);
    prism_photon_source point = {.kind = PRISM_SOURCE_POINT, .count = N};
    ph = run(&s, &point, NULL, NULL, NULL);
    double m[3] = {0, 0, 0};
    for (int i = 0; i < N; i++)
        for (int k = 0; k < 3; k++)
            m[k] += ph[i].dir[k] / N;
    assert_true(sqrt(m[0] * m[0] + m[1] * m[1] + m[2] * m[2]) < 4.0 / sqrt(N));
    assert_float_equal(ph[0].wavelength, 420.0f, 0);
    free(ph);
    kt_free(&s, kt_ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_philox_known_answers),
        cmocka_unit_test(test_sources),
        cmocka_unit_test(test_sphere_arrival_time),
        cmocka_unit_test(test_absorbing_slab),
        cmocka_unit_test(test_fresnel_normal_incidence),
        cmocka_unit_test(test_critical_angle),
        cmocka_unit_test(test_axis_aligned_box),
        cmocka_unit_test(test_start_on_surface),
        cmocka_unit_test(test_step_limit_flagged),
        cmocka_unit_test(test_surface_reflection),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_step_records),
        cmocka_unit_test(test_first_photon_splits),
        cmocka_unit_test(test_tree_independent),
        cmocka_unit_test(test_own_math),
        cmocka_unit_test(test_batch_limit),
        cmocka_unit_test(test_rayleigh_fraction),
        cmocka_unit_test(test_public_path),
        cmocka_unit_test(test_placement_policies),
        cmocka_unit_test(test_generate_only),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, kt_host_setup, kt_host_teardown);
}
