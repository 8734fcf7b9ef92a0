/* prism_photons_select on the host backend: made-up photons with known
 * histories against a plain loop (order kept, every field copied), the
 * count-only call, an output too small (nothing written), views, and the
 * error paths. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "prism/memory.h"
#include "prism/propagate.h"

static prism_context *ctx;

static int setup(void **state)
{
    (void)state;
    prism_context_desc d = {.backend = PRISM_BACKEND_HOST};
    return prism_context_create(&d, &ctx) == PRISM_SUCCESS ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    return prism_context_destroy(ctx) == PRISM_SUCCESS ? 0 : -1;
}

/* Photon i: history from a fixed hash, every other field tells i. */
static void make(prism_photon *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t h = (uint32_t)(i * 2654435761u);
        memset(&p[i], 0, sizeof p[i]);
        p[i].pos[0] = (float)i;
        p[i].time = (float)i * 0.5f;
        p[i].history = (h >> 7) & 0x3fu;
        p[i].solid = (uint32_t)i;
        p[i].steps = (uint32_t)(i % 17);
    }
}

static prism_buffer *upload(const prism_photon *p, size_t n)
{
    prism_buffer *b = NULL;
    assert_int_equal(prism_buffer_create_device(ctx, n * sizeof *p, "test.photons", &b),
                     PRISM_SUCCESS);
    assert_int_equal(prism_buffer_write(b, 0, p, n * sizeof *p), PRISM_SUCCESS);
    return b;
}

static size_t reference(const prism_photon *in, size_t n, uint32_t any_of, prism_photon *out)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (in[i].history & any_of)
            out[k++] = in[i];
    return k;
}

static void test_selects_in_order(void **state)
{
    (void)state;
    enum { N = 10000 };
    prism_photon *in = calloc(N, sizeof *in), *want = calloc(N, sizeof *want);
    prism_photon *got = calloc(N, sizeof *got);
    make(in, N);
    prism_buffer *b = upload(in, N);
    const uint32_t masks[] = {PRISM_SURFACE_DETECT, PRISM_NO_HIT | PRISM_BULK_ABSORB, 0u,
                              0xffffffffu};
    for (size_t m = 0; m < sizeof masks / sizeof masks[0]; m++) {
        size_t k = reference(in, N, masks[m], want), counted = 99, selected = 99;
        assert_int_equal(prism_photons_select(ctx, b, N, masks[m], NULL, &counted), PRISM_SUCCESS);
        assert_int_equal(counted, k);
        prism_buffer *out = NULL;
        assert_int_equal(prism_buffer_create_device(ctx, N * sizeof *got, "test.out", &out),
                         PRISM_SUCCESS);
        assert_int_equal(prism_photons_select(ctx, b, N, masks[m], out, &selected), PRISM_SUCCESS);
        assert_int_equal(selected, k);
        if (k > 0) {
            assert_int_equal(prism_buffer_read(out, 0, got, k * sizeof *got), PRISM_SUCCESS);
            assert_memory_equal(got, want, k * sizeof *got);
        }
        prism_buffer_release(out);
    }
    /* the made-up histories select neither nothing nor everything */
    size_t hits = reference(in, N, PRISM_SURFACE_DETECT, want);
    assert_true(hits > N / 10 && hits < N - N / 10);
    prism_buffer_release(b);
    free(in);
    free(want);
    free(got);
}

static void test_output_too_small_writes_nothing(void **state)
{
    (void)state;
    enum { N = 1000 };
    prism_photon in[N], want[N];
    make(in, N);
    size_t k = reference(in, N, PRISM_SURFACE_DETECT, want);
    prism_buffer *b = upload(in, N), *out = NULL;
    assert_int_equal(prism_buffer_create_device(ctx, (k - 1) * sizeof(prism_photon), "test.small",
                                                &out),
                     PRISM_SUCCESS);
    const uint8_t marker = 0xAB;
    assert_int_equal(prism_buffer_fill(out, 0, prism_buffer_size(out), &marker, 1), PRISM_SUCCESS);
    size_t selected = 0;
    assert_int_equal(prism_photons_select(ctx, b, N, PRISM_SURFACE_DETECT, out, &selected),
                     PRISM_ERROR_OUT_OF_RANGE);
    assert_int_equal(selected, k);
    assert_non_null(strstr(prism_context_last_error(ctx), "the output holds"));
    uint8_t first[64];
    assert_int_equal(prism_buffer_read(out, 0, first, sizeof first), PRISM_SUCCESS);
    for (size_t i = 0; i < sizeof first; i++)
        assert_int_equal(first[i], marker);
    prism_buffer_release(out);
    prism_buffer_release(b);
}

static void test_views_and_counts(void **state)
{
    (void)state;
    enum { N = 500 };
    prism_photon in[N], want[N], got[N];
    make(in, N);
    prism_buffer *b = upload(in, N), *view = NULL, *out = NULL;
    /* photons 100.. through a view; only the first 200 of them */
    assert_int_equal(prism_buffer_view(b, 100 * sizeof *in, 300 * sizeof *in, &view),
                     PRISM_SUCCESS);
    size_t k = reference(in + 100, 200, PRISM_SURFACE_DETECT, want), selected = 0;
    assert_int_equal(prism_buffer_create_device(ctx, sizeof got, "test.out", &out), PRISM_SUCCESS);
    assert_int_equal(prism_photons_select(ctx, view, 200, PRISM_SURFACE_DETECT, out, &selected),
                     PRISM_SUCCESS);
    assert_int_equal(selected, k);
    assert_int_equal(prism_buffer_read(out, 0, got, k * sizeof *got), PRISM_SUCCESS);
    assert_memory_equal(got, want, k * sizeof *got);
    /* count 0: nothing selected, nothing written */
    assert_int_equal(prism_photons_select(ctx, view, 0, PRISM_SURFACE_DETECT, out, &selected),
                     PRISM_SUCCESS);
    assert_int_equal(selected, 0);
    prism_buffer_release(view);
    prism_buffer_release(out);
    prism_buffer_release(b);
}

static void test_errors(void **state)
{
    (void)state;
    enum { N = 64 };
    prism_photon in[N];
    make(in, N);
    prism_buffer *b = upload(in, N);
    size_t selected = 7;
    assert_int_equal(prism_photons_select(NULL, b, N, 1, NULL, &selected),
                     PRISM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(prism_photons_select(ctx, NULL, N, 1, NULL, &selected),
                     PRISM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(prism_photons_select(ctx, b, N, 1, NULL, NULL), PRISM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(prism_photons_select(ctx, b, N + 1, 1, NULL, &selected),
                     PRISM_ERROR_OUT_OF_RANGE);
    assert_non_null(strstr(prism_context_last_error(ctx), "test.photons"));
    prism_context_desc d = {.backend = PRISM_BACKEND_HOST};
    prism_context *other = NULL;
    assert_int_equal(prism_context_create(&d, &other), PRISM_SUCCESS);
    prism_buffer *foreign = NULL;
    assert_int_equal(prism_buffer_create_device(other, N * sizeof *in, "other", &foreign),
                     PRISM_SUCCESS);
    assert_int_equal(prism_photons_select(ctx, foreign, N, 1, NULL, &selected),
                     PRISM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(prism_photons_select(ctx, b, N, 1, foreign, &selected),
                     PRISM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(prism_context_last_error(ctx), "another context"));
    prism_buffer_release(foreign);
    assert_int_equal(prism_context_destroy(other), PRISM_SUCCESS);
    prism_buffer_release(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_selects_in_order),
        cmocka_unit_test(test_output_too_small_writes_nothing),
        cmocka_unit_test(test_views_and_counts),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
