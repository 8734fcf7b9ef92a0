/* prism_propagate_multi on the host backend: several contexts (standing
 * in for devices) give, byte for byte, the photons and records of one
 * prism_propagate call, whatever the number of contexts and however small
 * the batches; shares add up; bad arguments and a failing context give
 * errors naming it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kernels_test_scene.h"
#include "prism/memory.h"
#include "prism/propagate.h"

enum { MAX_CTX = 3, N = 30000, K = 4 };

typedef struct fixture {
    kt_scene s;
    prism_context *ctx[MAX_CTX];
    prism_geometry *g[MAX_CTX];
} fixture;

/* Per-call room for about `photons` photons (0: no limit) on each
 * context: the geometry's reserve keeps the rest of the "device". */
static void upload(fixture *f, size_t photons)
{
    for (int i = 0; i < MAX_CTX; i++) {
        prism_geometry_desc d = {.policy = PRISM_PLACEMENT_DEVICE};
        if (photons > 0) {
            size_t free_bytes = 0, total = 0;
            assert_int_equal(prism_device_memory_info(f->ctx[i], &free_bytes, &total),
                             PRISM_SUCCESS);
            /* 64 + 8 + 32 K bytes a photon (prism_propagate_batch_limit) */
            d.reserve = free_bytes - photons * (72 + 32 * K);
        }
        prism_geometry_destroy(f->g[i]);
        f->g[i] = NULL;
        assert_int_equal(prism_geometry_upload(f->ctx[i], &f->s.scene, f->s.bvh, &d, &f->g[i]),
                         PRISM_SUCCESS);
    }
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    for (int i = 0; i < MAX_CTX; i++)
        if ((f->ctx[i] = kt_host_context()) == NULL)
            return -1;
    kt_scene *s = &f->s;
    kt_rich_scene(s, 24);
    if (kt_build(s, f->ctx[0]) != 0)
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    int rc = 0;
    for (int i = 0; i < MAX_CTX; i++)
        prism_geometry_destroy(f->g[i]);
    kt_free(&f->s, f->ctx[0]);
    for (int i = 0; i < MAX_CTX; i++)
        rc |= prism_context_destroy(f->ctx[i]) != PRISM_SUCCESS;
    free(f);
    return rc ? -1 : 0;
}

/* One prism_propagate call on context 0: the reference. */
static void reference(fixture *f, const prism_photon_source *src, const prism_propagate_desc *d,
                      prism_photon *ph, prism_step_record *rec)
{
    prism_propagate_outputs out = {.photons = {.kind = PRISM_TARGET_HOST, .host = ph},
                                   .records = {.kind = PRISM_TARGET_HOST, .host = rec}};
    assert_int_equal(prism_propagate(f->ctx[0], f->g[0], src, d, &out, NULL), PRISM_SUCCESS);
}

static void test_same_bytes_as_one_call(void **state)
{
    fixture *f = *state;
    upload(f, 0);
    prism_photon_source src = {.kind = PRISM_SOURCE_POINT,
                               .count = N,
                               .position = {0.1f, 0, 0},
                               .wavelength_nm = 380,
                               .wavelength_max_nm = 480};
    prism_propagate_desc d = {.seed = 7, .record_steps = K, .first_photon = 1000};
    prism_photon *ref = calloc(N, sizeof *ref), *ph = calloc(N, sizeof *ph);
    prism_step_record *ref_rec = calloc(N * K, sizeof *ref_rec), *rec = calloc(N * K, sizeof *rec);
    prism_propagate_stats ref_st;
    prism_propagate_outputs ref_out = {.photons = {.kind = PRISM_TARGET_HOST, .host = ref},
                                       .records = {.kind = PRISM_TARGET_HOST, .host = ref_rec}};
    assert_int_equal(prism_propagate(f->ctx[0], f->g[0], &src, &d, &ref_out, &ref_st),
                     PRISM_SUCCESS);
    for (size_t n = 1; n <= MAX_CTX; n++) {
        memset(ph, 0, N * sizeof *ph);
        memset(rec, 0, N * K * sizeof *rec);
        prism_propagate_outputs out = {.photons = {.kind = PRISM_TARGET_HOST, .host = ph},
                                       .records = {.kind = PRISM_TARGET_HOST, .host = rec}};
        prism_propagate_stats st;
        prism_propagate_share shares[MAX_CTX];
        assert_int_equal(prism_propagate_multi(f->ctx, (const prism_geometry *const *)f->g, n, &src,
                                               &d, &out, &st, shares),
                         PRISM_SUCCESS);
        assert_memory_equal(ph, ref, N * sizeof *ph);
        assert_memory_equal(rec, ref_rec, N * K * sizeof *rec);
        assert_int_equal(st.steps, ref_st.steps);
        assert_int_equal(st.detected, ref_st.detected);
        assert_int_equal(st.history_or, ref_st.history_or);
        assert_true(st.time_max == ref_st.time_max);
        size_t total = 0;
        for (size_t i = 0; i < n; i++)
            total += shares[i].photons;
        assert_int_equal(total, N);
    }
    free(ref);
    free(ph);
    free(ref_rec);
    free(rec);
}

/* Batches of at most ~700 photons: dozens taken in turn by three
 * contexts; a PHOTONS source read from its place; no photons output. */
static void test_small_batches_and_input(void **state)
{
    fixture *f = *state;
    enum { M = 20000 };
    upload(f, 700);
    prism_photon *in = calloc(M, sizeof *in), *ref = calloc(M, sizeof *ref);
    for (int i = 0; i < M; i++) {
        in[i].pos[0] = -2.0f + 4.0f * (float)i / M;
        in[i].dir[i % 3] = i % 2 ? 1.0f : -1.0f;
        in[i].wavelength = 400.0f + (float)(i % 100);
    }
    prism_photon_source src = {.kind = PRISM_SOURCE_PHOTONS, .count = M, .photons = in};
    prism_propagate_desc d = {.seed = 3, .record_steps = K};
    prism_step_record *ref_rec = calloc(M * (size_t)K, sizeof *ref_rec);
    prism_step_record *rec = calloc(M * (size_t)K, sizeof *rec);
    reference(f, &src, &d, ref, ref_rec);
    prism_propagate_outputs out = {.photons = {.kind = PRISM_TARGET_HOST},
                                   .records = {.kind = PRISM_TARGET_HOST, .host = rec}};
    prism_propagate_share shares[MAX_CTX];
    prism_propagate_stats st;
    assert_int_equal(prism_propagate_multi(f->ctx, (const prism_geometry *const *)f->g, MAX_CTX,
                                           &src, &d, &out, &st, shares),
                     PRISM_SUCCESS);
    assert_memory_equal(rec, ref_rec, M * (size_t)K * sizeof *rec);
    unsigned batches = 0;
    size_t total = 0;
    for (int i = 0; i < MAX_CTX; i++) {
        batches += shares[i].batches;
        total += shares[i].photons;
        assert_true(shares[i].photons <= (size_t)shares[i].batches * 700);
    }
    assert_int_equal(total, M);
    assert_true(batches >= M / 700);
    free(in);
    free(ref);
    free(ref_rec);
    free(rec);
}

static void test_errors(void **state)
{
    fixture *f = *state;
    upload(f, 0);
    prism_photon ph[16];
    prism_photon_source src = {.kind = PRISM_SOURCE_POINT, .count = 16};
    prism_propagate_outputs out = {.photons = {.kind = PRISM_TARGET_HOST, .host = ph}};
    const prism_geometry *const *g = (const prism_geometry *const *)f->g;
    assert_int_equal(prism_propagate_multi(f->ctx, g, 0, &src, NULL, &out, NULL, NULL),
                     PRISM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(prism_propagate_multi(NULL, g, 1, &src, NULL, &out, NULL, NULL),
                     PRISM_ERROR_INVALID_ARGUMENT);
    /* one context twice */
    prism_context *twice[2] = {f->ctx[0], f->ctx[0]};
    const prism_geometry *g2[2] = {f->g[0], f->g[0]};
    assert_int_equal(prism_propagate_multi(twice, g2, 2, &src, NULL, &out, NULL, NULL),
                     PRISM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(prism_context_last_error(f->ctx[0]), "are the same"));
    /* a geometry of another context */
    const prism_geometry *swapped[2] = {f->g[1], f->g[0]};
    assert_int_equal(prism_propagate_multi(f->ctx, swapped, 2, &src, NULL, &out, NULL, NULL),
                     PRISM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(prism_context_last_error(f->ctx[0]), "context 0"));
    /* outputs elsewhere than host memory */
    prism_buffer *buf = NULL;
    assert_int_equal(prism_buffer_create_device(f->ctx[0], sizeof ph, "test.out", &buf),
                     PRISM_SUCCESS);
    prism_propagate_outputs dev = {.photons = {.kind = PRISM_TARGET_BUFFER, .buffer = buf}};
    assert_int_equal(prism_propagate_multi(f->ctx, g, 2, &src, NULL, &dev, NULL, NULL),
                     PRISM_ERROR_INVALID_ARGUMENT);
    prism_buffer_release(buf);
    src.count = 0;
    assert_int_equal(prism_propagate_multi(f->ctx, g, 2, &src, NULL, &out, NULL, NULL),
                     PRISM_ERROR_INVALID_ARGUMENT);
    src.count = 16;
    prism_propagate_desc far = {.first_photon = PRISM_PROPAGATE_MAX_PHOTON_INDEX - 8};
    assert_int_equal(prism_propagate_multi(f->ctx, g, 2, &src, &far, &out, NULL, NULL),
                     PRISM_ERROR_INVALID_ARGUMENT);
    /* a bad source fails in a worker: the message names its context */
    src.kind = PRISM_SOURCE_BEAM;
    assert_int_equal(prism_propagate_multi(f->ctx, g, 2, &src, NULL, &out, NULL, NULL),
                     PRISM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(prism_context_last_error(f->ctx[0]), "(host): propagate: beam"));
    /* context 2 has no room for a photon: the run fails naming it */
    src.kind = PRISM_SOURCE_POINT;
    size_t free_bytes = 0, total = 0;
    assert_int_equal(prism_device_memory_info(f->ctx[2], &free_bytes, &total), PRISM_SUCCESS);
    prism_geometry_destroy(f->g[2]);
    f->g[2] = NULL;
    prism_geometry_desc full = {.policy = PRISM_PLACEMENT_MAPPED, .reserve = free_bytes * 2};
    assert_int_equal(prism_geometry_upload(f->ctx[2], &f->s.scene, f->s.bvh, &full, &f->g[2]),
                     PRISM_SUCCESS);
    assert_int_equal(prism_propagate_multi(f->ctx, g, 3, &src, NULL, &out, NULL, NULL),
                     PRISM_ERROR_OUT_OF_DEVICE_MEMORY);
    assert_non_null(strstr(prism_context_last_error(f->ctx[0]), "context 2 (host)"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_bytes_as_one_call),
        cmocka_unit_test(test_small_batches_and_input),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
