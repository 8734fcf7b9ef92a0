/* Gensteps on the CUDA backend against the host backend (the reference),
 * skipped (77) without a CUDA device: with exact arithmetic the photons
 * made from Cerenkov and scintillation gensteps, and propagated through a
 * detector, are the host's bit for bit, from gensteps in host memory and in
 * device memory, in one call or split into calls (first_photon), with
 * either CUDA step scheme (the megakernel, the wavefront:
 * engine/launch/propagate_scheme.h); a muon's gensteps read from a
 * geometry on the device are the host's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/launch/propagate_scheme.h"
#include "gpu_compare.h"
#include "prism/device/genstep.h"
#include "prism/gensteps.h"
#include "prism/memory.h"
#include "prism/propagate.h"

/* The detector of kt_detector_scene, its water tank lit by a muon. */
static prism_photon *run(prism_context *ctx, prism_geometry *geo, const prism_gensteps *gs,
                         const float *gensteps, size_t total, size_t split)
{
    prism_photon *ph = calloc(total, sizeof *ph);
    assert_non_null(ph);
    for (size_t first = 0; first < total; first += split) {
        const size_t n = total - first < split ? total - first : split;
        prism_photon_source src = {.kind = PRISM_SOURCE_GENSTEPS,
                                   .count = n,
                                   .gensteps = gensteps,
                                   .genstep_count = gs->count};
        prism_propagate_desc d = {.seed = 21, .first_photon = first};
        prism_propagate_outputs o = {.photons = {.kind = PRISM_TARGET_HOST, .host = ph + first}};
        prism_result r = prism_propagate(ctx, geo, &src, &d, &o, NULL);
        if (r != PRISM_SUCCESS)
            fail_msg("propagate: %s", prism_context_last_error(ctx));
    }
    return ph;
}

static void test_host_and_cuda_bits(void **state)
{
    (void)state;
    kt_scene s;
    memset(&s, 0, sizeof s);
    kt_detector_scene(&s);
    prism_geometry *hg, *cg;
    gc_upload_both(&s, PRISM_PLACEMENT_AUTO, &hg, &cg);
    prism_muon_desc d = {.position = {-3.5f, 0.3f, -9},
                         .direction = {0.2f, 0.1f, 1},
                         .energy_gev = 3};
    prism_gensteps gh, gc;
    assert_int_equal(prism_gensteps_muon(hg, &d, &gh), PRISM_SUCCESS);
    assert_int_equal(prism_gensteps_muon(cg, &d, &gc), PRISM_SUCCESS);
    assert_int_equal(gh.count, gc.count);
    assert_true(gh.count > 0);
    assert_memory_equal(gh.data, gc.data, gh.count * sizeof(prism_genstep));
    const size_t total = gh.photons < 200000 ? (size_t)gh.photons : 200000;
    prism_photon *a = run(gc_host, hg, &gh, gh.data, total, total);
    /* gensteps in device memory, read in place */
    prism_buffer *buf = NULL;
    const size_t bytes = gh.count * sizeof(prism_genstep);
    assert_int_equal(prism_buffer_create_device(gc_cuda, bytes, "test.gensteps", &buf),
                     PRISM_SUCCESS);
    assert_int_equal(prism_buffer_write(buf, 0, gh.data, bytes), PRISM_SUCCESS);
    for (int k = 0; k < GC_SCHEMES; k++) {
        printf("# scheme %s\n", gc_scheme(gc_schemes[k]));
        prism_photon *b = run(gc_cuda, cg, &gh, gh.data, total, total);
        gc_assert_identical(a, b, total);
        prism_photon *c = run(gc_cuda, cg, &gh, gh.data, total, 7777);
        gc_assert_identical(a, c, total);
        prism_photon *e = run(gc_cuda, cg, &gh, prism_buffer_device_pointer(buf), total, total);
        gc_assert_identical(a, e, total);
        free(b);
        free(c);
        free(e);
    }
    gc_scheme(PRISM__SCHEME_AUTO);
    prism_buffer_release(buf);
    free(a);
    prism_gensteps_free(&gh);
    prism_gensteps_free(&gc);
    gc_free_both(&s, hg, cg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_host_and_cuda_bits),
    };
    return gc_run_group_tests(tests, NULL, NULL);
}
