/* prism_photons_select on CUDA against the host backend, byte for byte:
 * made-up photons (millions, so the count kernel runs many blocks and cub
 * many tiles), the count-only call, selections cut into many chunks, an
 * output that is not 16-byte aligned, and an output too small; and how
 * long a stream batch's selection takes (printed). Skipped (77) without a
 * CUDA device. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/launch/select_internal.h"
#include "gpu_compare.h"
#include "prism/memory.h"
#include "prism/propagate.h"

static void make(prism_photon *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t h = (uint32_t)(i * 2654435761u);
        memset(&p[i], 0, sizeof p[i]);
        p[i].pos[0] = (float)i;
        p[i].history = (h >> 7) & 0x3fu;
        p[i].solid = (uint32_t)i;
    }
}

/* Select on `ctx`; returns the selected photons read back (count in *k). */
static prism_photon *select_on(prism_context *ctx, const prism_photon *in, size_t n,
                               uint32_t any_of, size_t *k)
{
    prism_buffer *b = NULL, *out = NULL;
    assert_int_equal(prism_buffer_create_device(ctx, n * sizeof *in, "test.photons", &b),
                     PRISM_SUCCESS);
    assert_int_equal(prism_buffer_write(b, 0, in, n * sizeof *in), PRISM_SUCCESS);
    size_t counted = 0;
    assert_int_equal(prism_photons_select(ctx, b, n, any_of, NULL, &counted), PRISM_SUCCESS);
    assert_int_equal(prism_buffer_create_device(ctx, (counted + 1) * sizeof *in, "test.out", &out),
                     PRISM_SUCCESS);
    assert_int_equal(prism_photons_select(ctx, b, n, any_of, out, k), PRISM_SUCCESS);
    assert_int_equal(*k, counted);
    prism_photon *got = malloc((*k + 1) * sizeof *got);
    assert_int_equal(prism_buffer_read(out, 0, got, *k * sizeof *got), PRISM_SUCCESS);
    prism_buffer_release(out);
    prism_buffer_release(b);
    return got;
}

static void test_cuda_equals_host(void **state)
{
    (void)state;
    const size_t sizes[] = {1, 1000, 3000017};
    const uint32_t masks[] = {PRISM_SURFACE_DETECT, PRISM_NO_HIT | PRISM_BULK_ABSORB, 0u};
    for (size_t s = 0; s < 3; s++) {
        prism_photon *in = malloc(sizes[s] * sizeof *in);
        make(in, sizes[s]);
        for (size_t m = 0; m < 3; m++) {
            size_t kh = 0, kc = 0;
            prism_photon *h = select_on(gc_host, in, sizes[s], masks[m], &kh);
            prism_photon *c = select_on(gc_cuda, in, sizes[s], masks[m], &kc);
            assert_int_equal(kc, kh);
            if (kh > 0)
                assert_memory_equal(c, h, kh * sizeof *h);
            free(h);
            free(c);
        }
        free(in);
    }
}

/* Chunks of 1000 and 4099 photons (the default is 2^26): every chunk's
 * indices start at its own first photon, and the hits land in order. */
static void test_chunks(void **state)
{
    (void)state;
    const size_t n = 300007, chunks[] = {1000, 4099};
    prism_photon *in = malloc(n * sizeof *in);
    make(in, n);
    size_t kh = 0;
    prism_photon *h = select_on(gc_host, in, n, PRISM_SURFACE_DETECT, &kh);
    assert_true(kh > 0);
    for (int c = 0; c < 2; c++) {
        prism__cuda_select_chunk(chunks[c]);
        size_t kc = 0;
        prism_photon *got = select_on(gc_cuda, in, n, PRISM_SURFACE_DETECT, &kc);
        assert_int_equal(kc, kh);
        assert_memory_equal(got, h, kh * sizeof *h);
        free(got);
    }
    prism__cuda_select_chunk(0);
    free(h);
    free(in);
}

/* An output 4 bytes past a 16-byte boundary (a target at an offset) takes
 * the word-by-word gather: the same photons. */
static void test_unaligned_output(void **state)
{
    (void)state;
    const size_t n = 100003;
    prism_photon *in = malloc(n * sizeof *in);
    make(in, n);
    size_t kh = 0;
    prism_photon *h = select_on(gc_host, in, n, PRISM_SURFACE_DETECT, &kh);
    prism_buffer *b = NULL, *out = NULL;
    assert_int_equal(prism_buffer_create_device(gc_cuda, n * sizeof *in, "test.photons", &b),
                     PRISM_SUCCESS);
    assert_int_equal(prism_buffer_write(b, 0, in, n * sizeof *in), PRISM_SUCCESS);
    assert_int_equal(prism_buffer_create_device(gc_cuda, 4 + kh * sizeof *in, "test.out", &out),
                     PRISM_SUCCESS);
    prism_photon *at = (prism_photon *)((char *)prism_buffer_device_pointer(out) + 4);
    size_t kc = 0;
    assert_int_equal(prism__cuda_select(gc_cuda, prism_buffer_device_pointer(b), n,
                                        PRISM_SURFACE_DETECT, at, kh, &kc),
                     PRISM_SUCCESS);
    assert_int_equal(kc, kh);
    prism_photon *got = malloc(kh * sizeof *got);
    assert_int_equal(prism_buffer_read(out, 4, got, kh * sizeof *got), PRISM_SUCCESS);
    assert_memory_equal(got, h, kh * sizeof *h);
    free(got);
    prism_buffer_release(out);
    prism_buffer_release(b);
    free(h);
    free(in);
}

static void test_output_too_small(void **state)
{
    (void)state;
    enum { N = 100000 };
    prism_photon *in = malloc(N * sizeof *in);
    make(in, N);
    prism_buffer *b = NULL, *out = NULL;
    assert_int_equal(prism_buffer_create_device(gc_cuda, N * sizeof *in, "test.photons", &b),
                     PRISM_SUCCESS);
    assert_int_equal(prism_buffer_write(b, 0, in, N * sizeof *in), PRISM_SUCCESS);
    assert_int_equal(prism_buffer_create_device(gc_cuda, 64 * sizeof *in, "test.small", &out),
                     PRISM_SUCCESS);
    size_t selected = 0;
    assert_int_equal(prism_photons_select(gc_cuda, b, N, PRISM_SURFACE_DETECT, out, &selected),
                     PRISM_ERROR_OUT_OF_RANGE);
    assert_true(selected > 64);
    /* in chunks: the chunks past the output are still counted */
    prism__cuda_select_chunk(1000);
    size_t chunked = 0;
    assert_int_equal(prism_photons_select(gc_cuda, b, N, PRISM_SURFACE_DETECT, out, &chunked),
                     PRISM_ERROR_OUT_OF_RANGE);
    prism__cuda_select_chunk(0);
    assert_int_equal(chunked, selected);
    prism_buffer_release(out);
    prism_buffer_release(b);
    free(in);
}

static double seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A stream batch's selection: 2^25 photons (2^20 with PRISM_TEST_SMALL),
 * one in 16 detected, counted and selected a few times; the times are
 * printed for the notes, the counts asserted. */
static void test_batch_time(void **state)
{
    (void)state;
    const size_t n = getenv("PRISM_TEST_SMALL") != NULL ? (size_t)1 << 20 : (size_t)1 << 25;
    prism_photon *in = calloc(n, sizeof *in);
    assert_non_null(in);
    for (size_t i = 0; i < n; i++)
        in[i].history = i % 16 == 0 ? PRISM_SURFACE_DETECT | PRISM_REFRACT : PRISM_BULK_ABSORB;
    prism_buffer *b = NULL, *out = NULL;
    assert_int_equal(prism_buffer_create_device(gc_cuda, n * sizeof *in, "test.photons", &b),
                     PRISM_SUCCESS);
    assert_int_equal(prism_buffer_write(b, 0, in, n * sizeof *in), PRISM_SUCCESS);
    assert_int_equal(prism_buffer_create_device(gc_cuda, n / 16 * sizeof *in, "test.out", &out),
                     PRISM_SUCCESS);
    enum { REPEAT = 5 };
    double count_s = 1e30, select_s = 1e30;
    for (int r = 0; r < REPEAT; r++) {
        size_t k = 0;
        double t0 = seconds_now();
        assert_int_equal(prism_photons_select(gc_cuda, b, n, PRISM_SURFACE_DETECT, NULL, &k),
                         PRISM_SUCCESS);
        double t1 = seconds_now();
        assert_int_equal(k, n / 16);
        assert_int_equal(prism_photons_select(gc_cuda, b, n, PRISM_SURFACE_DETECT, out, &k),
                         PRISM_SUCCESS);
        double t2 = seconds_now();
        assert_int_equal(k, n / 16);
        count_s = t1 - t0 < count_s ? t1 - t0 : count_s;
        select_s = t2 - t1 < select_s ? t2 - t1 : select_s;
    }
    printf("# selecting from %zu photons (%zu hits), best of %d: counting %.3f ms, selecting "
           "%.3f ms\n",
           n, n / 16, REPEAT, 1e3 * count_s, 1e3 * select_s);
    prism_buffer_release(out);
    prism_buffer_release(b);
    free(in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cuda_equals_host), cmocka_unit_test(test_chunks),
        cmocka_unit_test(test_unaligned_output), cmocka_unit_test(test_output_too_small),
        cmocka_unit_test(test_batch_time),
    };
    return gc_run_group_tests(tests, NULL, NULL);
}
