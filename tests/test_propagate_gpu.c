/* Propagation on the CUDA backend against the host backend (the
 * reference). Skipped (77) without a CUDA device.
 *
 * - 1M photons through a scene with every process: the count of each
 *   history bit agrees within 5 sigma of the two-sample difference
 *   (sqrt(a + b)).
 * - Exact arithmetic (the default): photons and records bit for bit the
 *   host's, and a run split into calls (first_photon) is one call's, with
 *   each CUDA step scheme (the megakernel, the wavefront on the GPU walk
 *   and on the shared one: engine/launch/propagate_scheme.h); fast
 *   arithmetic (--use_fast_math: single photons part ways where a log or a
 *   cosine rounds differently) agrees in its detected count.
 * - Deterministic cases (every surface absorbs or detects with probability
 *   one) agree photon by photon: same history, solid and steps, position
 *   within 10 micrometres and time within 1e-5 relative.
 * - Placement policies (device, mapped, chroma split) and outputs (host,
 *   device buffer) on CUDA: bit-identical, with either scheme; the summary
 *   and hits made on the device too.
 * With PRISM_TEST_SMALL set (for compute-sanitizer, which is slow) the
 * photon counts are divided by 50. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/launch/propagate_scheme.h"
#include "gpu_compare.h"
#include "prism/device_view.h"
#include "prism/memory.h"
#include "prism/propagate.h"

static void rich_scene(kt_scene *s)
{
    uint32_t vac = kt_material(s, "vacuum", 1.0f, 0, 0);
    uint32_t water = kt_material(s, "water", 1.33f, 3.0f, 2.0f);
    uint32_t glass = kt_material(s, "glass", 1.5f, 5.0f, 0);
    uint32_t wall = kt_surface(s, "wall", 0.3f, 0.2f, 0.1f, 0.3f);
    const float lo[3] = {-3, -3, -3}, hi[3] = {3, 3, 3}, c[3] = {0.2f, 0, 0};
    const float glo[3] = {-2.5f, -2.5f, 1.8f}, ghi[3] = {2.5f, 2.5f, 2.5f};
    kt_box(s, lo, hi, 1, vac, PRISM_NONE, wall);
    kt_box(s, glo, ghi, 3, glass, vac, PRISM_NONE);
    kt_sphere(s, c, 1.5f, 64, 2, water, vac, PRISM_NONE);
}

static void test_histograms_1M(void **state)
{
    (void)state;
    kt_scene s = {0};
    rich_scene(&s);
    prism_geometry *hg, *cg;
    gc_upload_both(&s, PRISM_PLACEMENT_DEVICE, &hg, &cg);
    prism_photon_source src = {.kind = PRISM_SOURCE_POINT, .count = gc_photons(1000000)};
    prism_propagate_desc d = {.seed = 2024, .max_steps = 60};
    prism_propagate_stats hs, cs;
    prism_photon *a = gc_propagate(gc_host, hg, &src, &d, NULL, &hs);
    prism_photon *b = gc_propagate(gc_cuda, cg, &src, &d, NULL, &cs);
    printf("# host %.3f s, cuda %.3f s (%u launches), %llu steps\n", hs.seconds, cs.seconds,
           cs.launches, (unsigned long long)cs.steps);
    gc_expect_history_counts("", a, b, src.count);
    assert_int_equal(cs.history_or & PRISM_NAN_ABORT, 0);
    free(a);
    free(b);
    gc_free_both(&s, hg, cg);
}

static void compare_photons(const prism_photon *a, const prism_photon *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(a[i].history, b[i].history);
        assert_int_equal(a[i].solid, b[i].solid);
        assert_int_equal(a[i].steps, b[i].steps);
        for (int k = 0; k < 3; k++)
            assert_float_equal(a[i].pos[k], b[i].pos[k], 1e-5);
        assert_float_equal(a[i].time, b[i].time, 1e-5 * fabsf(a[i].time) + 1e-6);
    }
}

static void test_deterministic_photon_by_photon(void **state)
{
    (void)state;
    kt_scene s = {0};
    uint32_t water = kt_material(&s, "water", 1.33f, 0, 0);
    uint32_t det = kt_surface(&s, "pmt", 1, 0, 0, 0), black = kt_surface(&s, "black", 0, 1, 0, 0);
    const float c[3] = {0, 0, 0}, lo[3] = {-0.5f, -0.5f, -0.5f}, hi[3] = {0.5f, 0.5f, 0.5f};
    kt_sphere(&s, c, 2.0f, 64, 1, water, PRISM_NONE, det);
    kt_box(&s, lo, hi, 2, water, water, black);
    prism_geometry *hg, *cg;
    gc_upload_both(&s, PRISM_PLACEMENT_DEVICE, &hg, &cg);
    prism_photon_source src = {.kind = PRISM_SOURCE_BEAM,
                               .count = gc_photons(200000),
                               .position = {0, 0, 1},
                               .direction = {0, 0.2f, 1},
                               .radius = 0.5f,
                               .divergence = 2.5f};
    prism_photon *a = gc_propagate(gc_host, hg, &src, NULL, NULL, NULL);
    prism_photon *b = gc_propagate(gc_cuda, cg, &src, NULL, NULL, NULL);
    compare_photons(a, b, src.count);
    free(a);
    free(b);
    gc_free_both(&s, hg, cg);
}

static void test_policies_and_outputs_identical(void **state)
{
    (void)state;
    kt_scene s = {0};
    rich_scene(&s);
    assert_int_equal(kt_build(&s, gc_host), 0);
    const size_t N = gc_photons(200000);
    enum { K = 8 };
    prism_photon_source src = {.kind = PRISM_SOURCE_POINT, .count = N, .position = {0.1f, 0.2f, 0}};
    prism_propagate_desc d = {.seed = 5, .record_steps = K};
    prism_geometry *g0 = kt_upload(&s, gc_cuda, PRISM_PLACEMENT_DEVICE, false);
    /* the upload says where the walk's arrays live, once, for the launcher
     * to pick its kernel build: all device memory here, some mapped below */
    prism_device_view view;
    assert_int_equal(prism_geometry_device_view(g0, &view), PRISM_SUCCESS);
    assert_int_equal(view.geometry.device_resident, 1);
    prism_photon *ref = calloc(N, sizeof *ref), *ph = calloc(N, sizeof *ph);
    prism_step_record *ref_rec = calloc((size_t)N * K, sizeof *ref_rec);
    prism_step_record *rec = calloc((size_t)N * K, sizeof *rec);
    prism_propagate_outputs out = {.photons = {.kind = PRISM_TARGET_HOST, .host = ref},
                                   .records = {.kind = PRISM_TARGET_HOST, .host = ref_rec}};
    assert_int_equal(prism_propagate(gc_cuda, g0, &src, &d, &out, NULL), PRISM_SUCCESS);
    const prism_placement_policy p[3] = {PRISM_PLACEMENT_MAPPED, PRISM_PLACEMENT_CHROMA,
                                         PRISM_PLACEMENT_AUTO};
    prism_buffer *vbo = NULL;
    assert_int_equal(prism_buffer_create_device(gc_cuda, (size_t)N * K * sizeof *rec,
                                                "test.records", &vbo),
                     PRISM_SUCCESS);
    /* every placement on either scheme: the megakernel's device photons
     * (the wavefront traces on the GPU walk on the device placement, on
     * the shared walk on the others) */
    for (int k = 0; k < GC_SCHEMES; k++) {
        gc_scheme(gc_schemes[k]);
        for (int i = -1; i < 3; i++) {
            prism_geometry *g = i < 0 ? g0 : kt_upload(&s, gc_cuda, p[i], i == 1);
            assert_non_null(g);
            if (i >= 0 && p[i] == PRISM_PLACEMENT_MAPPED) {
                assert_int_equal(prism_geometry_device_view(g, &view), PRISM_SUCCESS);
                assert_int_equal(view.geometry.device_resident, 0);
            }
            prism_propagate_outputs o2 = {.photons = {.kind = PRISM_TARGET_HOST, .host = ph},
                                          .records = {.kind = PRISM_TARGET_BUFFER, .buffer = vbo}};
            assert_int_equal(prism_propagate(gc_cuda, g, &src, &d, &o2, NULL), PRISM_SUCCESS);
            gc_assert_identical(ref, ph, N);
            assert_int_equal(prism_buffer_read(vbo, 0, rec, (size_t)N * K * sizeof *rec),
                             PRISM_SUCCESS);
            assert_memory_equal(rec, ref_rec, (size_t)N * K * sizeof *rec);
            if (i >= 0)
                prism_geometry_destroy(g);
        }
    }
    gc_scheme(PRISM__SCHEME_AUTO);
    /* the stats' photon figures are counted wherever the photons go: on
     * the device when no host memory receives them (records only, or a
     * device buffer), the same as counted from the host copy */
    prism_propagate_stats on_host, records_only, in_buffer;
    assert_int_equal(prism_propagate(gc_cuda, g0, &src, &d, &out, &on_host), PRISM_SUCCESS);
    prism_propagate_outputs only = {.records = {.kind = PRISM_TARGET_BUFFER, .buffer = vbo}};
    assert_int_equal(prism_propagate(gc_cuda, g0, &src, &d, &only, &records_only), PRISM_SUCCESS);
    prism_buffer *dev = NULL;
    assert_int_equal(prism_buffer_create_device(gc_cuda, N * sizeof *ph, "test.photons", &dev),
                     PRISM_SUCCESS);
    prism_propagate_outputs buffered = {.photons = {.kind = PRISM_TARGET_BUFFER, .buffer = dev}};
    assert_int_equal(prism_propagate(gc_cuda, g0, &src, &d, &buffered, &in_buffer), PRISM_SUCCESS);
    size_t detected = 0;
    for (size_t i = 0; i < N; i++)
        detected += (ref[i].history & PRISM_SURFACE_DETECT) != 0;
    printf("# detected: %zu counted here, %zu / %zu / %zu in the stats (host, records only, "
           "device buffer)\n",
           detected, on_host.detected, records_only.detected, in_buffer.detected);
    assert_true(detected > 0);
    const prism_propagate_stats *all[3] = {&on_host, &records_only, &in_buffer};
    float latest = 0;
    for (size_t i = 0; i < N; i++)
        latest = ref[i].time > latest ? ref[i].time : latest;
    assert_true(on_host.time_max == latest && latest > 0);
    for (int i = 0; i < 3; i++) {
        assert_true(all[i]->time_max == on_host.time_max); /* also when tallied on the device */
        assert_int_equal(all[i]->detected, detected);
        assert_int_equal(all[i]->steps, on_host.steps);
        assert_int_equal(all[i]->history_or, on_host.history_or);
        assert_int_equal(all[i]->step_limited, on_host.step_limited);
    }
    prism_buffer_release(dev);
    prism_buffer_release(vbo);
    free(ref);
    free(ph);
    free(ref_rec);
    free(rec);
    prism_geometry_destroy(g0);
    kt_free(&s, gc_host);
}

/* Exact arithmetic (the default): CUDA's photons and records are the
 * host's, bit for bit, on the same tree; and a run split into calls with
 * first_photon is one call's, on CUDA as on the host. */
static void test_exact_bit_identical(void **state)
{
    (void)state;
    kt_scene s = {0};
    rich_scene(&s);
    prism_geometry *hg, *cg;
    gc_upload_both(&s, PRISM_PLACEMENT_DEVICE, &hg, &cg);
    const size_t N = gc_photons(300000);
    enum { K = 6 };
    prism_photon_source src = {.kind = PRISM_SOURCE_BEAM,
                               .count = N,
                               .position = {0.1f, 0, -1},
                               .direction = {0.1f, 0.2f, 1},
                               .radius = 0.8f,
                               .divergence = 1.2f,
                               .wavelength_nm = 350,
                               .wavelength_max_nm = 550};
    prism_propagate_desc d = {.seed = 99, .record_steps = K, .max_steps = 60};
    prism_step_record *ra = calloc(N * K, sizeof *ra), *rb = calloc(N * K, sizeof *rb);
    prism_propagate_stats hs, cs;
    prism_photon *a = gc_propagate(gc_host, hg, &src, &d, ra, &hs), *b = calloc(N, sizeof *b);
    prism_propagate_outputs ob = {.photons = {.kind = PRISM_TARGET_HOST, .host = b},
                                  .records = {.kind = PRISM_TARGET_HOST, .host = rb}};
    /* each scheme: the wavefront traces on the GPU walk (the geometry is
     * all in device memory) and, as WAVE_GENERIC, on prism_trace_closest;
     * to the end, and (its default) with the megakernel in its tail */
    const int schemes[4] = {PRISM__SCHEME_MEGA, PRISM__SCHEME_WAVE, PRISM__SCHEME_WAVE,
                            PRISM__SCHEME_WAVE_GENERIC};
    const int tails[4] = {-1, 0, -1, 0}; /* the megakernel's tail steps: -1 the default */
    for (int k = 0; k < 4; k++) {
        char name[64];
        snprintf(name, sizeof name, "%s%s", gc_scheme(schemes[k]),
                 schemes[k] == PRISM__SCHEME_MEGA ? ""
                 : tails[k] == 0                  ? " to the end"
                                                  : " with the megakernel's tail");
        assert_true(prism__propagate_tail(gc_cuda, tails[k]));
        d.math = PRISM_PROPAGATE_MATH_EXACT;
        memset(b, 0, N * sizeof *b);
        memset(rb, 0, N * K * sizeof *rb);
        assert_int_equal(prism_propagate(gc_cuda, cg, &src, &d, &ob, &cs), PRISM_SUCCESS);
        char tail[96];
        snprintf(tail, sizeof tail, ", %llu steps, %u launches; host %.3f s, cuda %.3f s",
                 (unsigned long long)cs.steps, cs.launches, hs.seconds, cs.seconds);
        gc_expect_exact(name, tail, a, b, N, ra, rb, K);
        assert_int_equal(cs.steps, hs.steps);
        assert_int_equal(cs.detected, hs.detected);
        assert_int_equal(cs.history_or, hs.history_or);
        assert_int_equal(cs.step_limited, hs.step_limited);
        assert_true(cs.time_max == hs.time_max);
        /* the same run in three calls on CUDA */
        memset(b, 0, N * sizeof *b);
        memset(rb, 0, N * K * sizeof *rb);
        const size_t parts[3] = {N / 3, N / 2, N - N / 3 - N / 2};
        for (size_t i = 0, at = 0; i < 3; at += parts[i++]) {
            prism_photon_source part = src;
            part.count = parts[i];
            prism_propagate_desc pd = d;
            pd.first_photon = at;
            prism_propagate_outputs po = {.photons = {.kind = PRISM_TARGET_HOST, .host = b + at},
                                          .records = {.kind = PRISM_TARGET_HOST,
                                                      .host = rb + at * K}};
            assert_int_equal(prism_propagate(gc_cuda, cg, &part, &pd, &po, NULL), PRISM_SUCCESS);
        }
        gc_assert_identical(a, b, N);
        assert_memory_equal(ra, rb, N * K * sizeof *ra);
        /* fast arithmetic: other photons, the same physics */
        d.math = PRISM_PROPAGATE_MATH_FAST;
        assert_int_equal(prism_propagate(gc_cuda, cg, &src, &d, &ob, &cs), PRISM_SUCCESS);
        size_t alike = 0, da = 0, db = 0;
        for (size_t i = 0; i < N; i++) {
            alike += a[i].history == b[i].history && a[i].solid == b[i].solid &&
                     a[i].steps == b[i].steps;
            da += (a[i].history & PRISM_SURFACE_DETECT) != 0;
            db += (b[i].history & PRISM_SURFACE_DETECT) != 0;
        }
        printf("# fast, %s: %zu bit-identical, %zu end alike of %zu; detected %zu host, %zu "
               "cuda\n",
               name, gc_identical(a, b, N), alike, N, da, db);
        assert_true(fabs((double)da - (double)db) <= gc_tolerance(da, db));
    }
    prism__propagate_tail(gc_cuda, -1);
    gc_scheme(PRISM__SCHEME_AUTO);
    free(a);
    free(b);
    free(ra);
    free(rb);
    gc_free_both(&s, hg, cg);
}

static prism_result gpu_sink(void *user, const prism_propagate_batch *b)
{
    prism_photon **at = user;
    memcpy(*at, b->hits, b->hits_count * sizeof *b->hits);
    *at += b->hits_count;
    return PRISM_SUCCESS;
}

/* The summary and the hits made on the device are the host's, exact
 * arithmetic: counts per bit and per end, per solid, the time range, the
 * hits byte for byte; through one call and through the stream, with the
 * host and the device as two contexts of one run. */
static void summary_and_hits(int scheme)
{
    gc_scheme(scheme);
    kt_scene s = {0};
    rich_scene(&s);
    prism_geometry *hg, *cg;
    gc_upload_both(&s, PRISM_PLACEMENT_DEVICE, &hg, &cg);
    const size_t N = gc_photons(400000), solids = s.scene.solids_count;
    prism_photon_source src = {.kind = PRISM_SOURCE_POINT,
                               .count = N,
                               .position = {0.1f, 0, 0},
                               .wavelength_nm = 350,
                               .wavelength_max_nm = 550};
    prism_propagate_desc d = {.seed = 5};
    uint64_t *ha = calloc(solids + 1, 8), *hb = calloc(solids + 1, 8), *hc = calloc(solids + 1, 8);
    prism_propagate_summary sa = {.detected_by_solid = ha, .solids = solids};
    prism_propagate_summary sb = {.detected_by_solid = hb, .solids = solids};
    prism_propagate_summary sc = {.detected_by_solid = hc, .solids = solids};
    prism_photon *a = calloc(N, sizeof *a), *b = calloc(N, sizeof *b), *c = calloc(N, sizeof *c);
    prism_propagate_outputs oa = {.hits = {.kind = PRISM_TARGET_HOST, .host = a}, .summary = &sa};
    prism_propagate_outputs ob = {.hits = {.kind = PRISM_TARGET_HOST, .host = b}, .summary = &sb};
    prism_propagate_stats hs, cs;
    assert_int_equal(prism_propagate(gc_host, hg, &src, &d, &oa, &hs), PRISM_SUCCESS);
    assert_int_equal(prism_propagate(gc_cuda, cg, &src, &d, &ob, &cs), PRISM_SUCCESS);
    printf("# device summary: %zu hits of %zu photons, times %.3f to %.3f ns\n", cs.hits, N,
           (double)sb.time_min, (double)sb.time_max);
    assert_true(cs.hits > 0);
    assert_int_equal(hs.hits, cs.hits);
    assert_memory_equal(a, b, cs.hits * sizeof *a);
    assert_int_equal(sa.photons, sb.photons);
    assert_int_equal(sa.steps, sb.steps);
    assert_memory_equal(sa.flagged, sb.flagged, sizeof sa.flagged);
    assert_memory_equal(sa.ended, sb.ended, sizeof sa.ended);
    assert_int_equal(sa.timed, sb.timed);
    assert_true(sa.time_min == sb.time_min && sa.time_max == sb.time_max);
    assert_memory_equal(ha, hb, (solids + 1) * 8);
    /* the stream over the host and the device together, small batches */
    prism_context *both[2] = {gc_cuda, gc_host};
    const prism_geometry *gs[2] = {cg, hg};
    prism_photon *at = c;
    prism_propagate_stream_desc sd = {
        .batch = N / 7 + 1, .sink = gpu_sink, .user = &at, .summary = &sc};
    prism_propagate_share shares[2];
    prism_memory_report before, after;
    assert_int_equal(prism_memory_report_get(gc_cuda, &before), PRISM_SUCCESS);
    assert_int_equal(prism_propagate_stream(both, gs, 2, &src, &d, &sd, NULL, shares),
                     PRISM_SUCCESS);
    /* the scratch the batches shared is returned with the run */
    assert_int_equal(prism_memory_report_get(gc_cuda, &after), PRISM_SUCCESS);
    assert_int_equal(after.total.bytes, before.total.bytes);
    assert_true(after.peak_bytes > before.total.bytes);
    printf("# stream: %zu photons on CUDA, %zu on the host\n", shares[0].photons,
           shares[1].photons);
    assert_int_equal((size_t)(at - c), cs.hits);
    assert_memory_equal(c, b, cs.hits * sizeof *c);
    assert_memory_equal(sc.flagged, sb.flagged, sizeof sc.flagged);
    assert_memory_equal(hc, hb, (solids + 1) * 8);
    free(a);
    free(b);
    free(c);
    free(ha);
    free(hb);
    free(hc);
    gc_free_both(&s, hg, cg);
}

static void test_device_summary_and_hits(void **state)
{
    (void)state;
    summary_and_hits(PRISM__SCHEME_MEGA);
    gc_scheme(PRISM__SCHEME_AUTO);
}

/* The same through the wavefront. */
static void test_device_summary_and_hits_wave(void **state)
{
    (void)state;
    summary_and_hits(PRISM__SCHEME_WAVE);
    gc_scheme(PRISM__SCHEME_AUTO);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_histograms_1M),
        cmocka_unit_test(test_deterministic_photon_by_photon),
        cmocka_unit_test(test_policies_and_outputs_identical),
        cmocka_unit_test(test_exact_bit_identical),
        cmocka_unit_test(test_device_summary_and_hits),
        cmocka_unit_test(test_device_summary_and_hits_wave),
    };
    return gc_run_group_tests(tests, NULL, NULL);
}
