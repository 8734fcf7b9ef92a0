/* The staged copy (engine/memory/staged_copy.c, engine/memory/fill_store.c) on the host
 * backend: whatever the store mode, ring size, ramp, chunk and thread count,
 * the destination holds exactly the bytes the fill produced, the fill is
 * called on granule boundaries only, and an error from the copy comes back.
 * The streaming store helper matches memcpy at every alignment and length. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/memory/internal.h"

static prism_context *make(void)
{
    prism_context_desc d = {.backend = PRISM_BACKEND_HOST};
    prism_context *ctx = NULL;
    assert_int_equal(prism_context_create(&d, &ctx), PRISM_SUCCESS);
    return ctx;
}

static unsigned char byte_at(size_t i)
{
    return (unsigned char)(i * 2654435761u >> 13);
}

/* Counts misaligned calls (no cmocka inside OpenMP threads). */
typedef struct fill_check {
    const unsigned char *src;
    size_t granule;
    unsigned misaligned;
} fill_check;

static void fill_from(void *user, size_t first, size_t n, void *dst, bool plain)
{
    fill_check *f = user;
    if (first % f->granule) {
#pragma omp atomic
        f->misaligned++;
    }
    prism__fill_store(dst, f->src + first, n, plain);
}

static void copy_and_check(prism_context *ctx, size_t n, size_t chunk, size_t granule)
{
    unsigned char *src = malloc(n), *back = malloc(n);
    assert_non_null(src);
    assert_non_null(back);
    for (size_t i = 0; i < n; i++)
        src[i] = byte_at(i);
    prism__staging st;
    assert_int_equal(prism__staging_open(ctx, chunk, &st), PRISM_SUCCESS);
    prism_buffer *dst;
    assert_int_equal(prism_buffer_create_device(ctx, n, "staged", &dst), PRISM_SUCCESS);
    fill_check f = {src, granule, 0};
    assert_int_equal(prism__staged_copy(&st, dst, n, fill_from, &f, granule), PRISM_SUCCESS);
    assert_int_equal(f.misaligned, 0);
    assert_int_equal(prism_buffer_read(dst, 0, back, n), PRISM_SUCCESS);
    assert_memory_equal(back, src, n);
    prism__staging_close(&st);
    prism_buffer_release(dst);
    free(back);
    free(src);
}

static void test_every_mode(void **state)
{
    (void)state;
    prism_context *ctx = make();
    struct prism_memory_state *m = ctx->memory;
    static const unsigned buffers[] = {0, 2, 3, 8};
    for (int way = PRISM__STORES_DEFAULT; way < PRISM__STORES_COUNT_; way++)
        for (size_t b = 0; b < sizeof buffers / sizeof buffers[0]; b++)
            for (int ramp = 0; ramp < 2; ramp++) {
                m->staging_stores = (prism__stores)way;
                m->staging_buffers = buffers[b];
                m->staging_no_ramp = ramp;
                m->staging_threads = (unsigned)(b % 3);
                /* not a multiple of the granule; ramp chunks then full ones */
                copy_and_check(ctx, (3u << 19) + 12 * 1001, 96 * 7001, 96);
            }
    prism_memory_trim(ctx);
    assert_int_equal(prism_context_destroy(ctx), PRISM_SUCCESS);
}

/* A chunk smaller than the first ramp step, a granule of 12 (not a divisor
 * of a cache line), and a copy shorter than one chunk. */
static void test_odd_sizes(void **state)
{
    (void)state;
    prism_context *ctx = make();
    copy_and_check(ctx, 12 * 40000 + 12, 12 * 1000, 12);
    copy_and_check(ctx, 12 * 5, 12 * 1000, 12);
    copy_and_check(ctx, 16 * 100000, 16 * 65536, 16);
    prism_memory_trim(ctx);
    assert_int_equal(prism_context_destroy(ctx), PRISM_SUCCESS);
}

/* The destination is too small: the copy's range error comes back, and the
 * staging can be closed and reused afterwards. */
static void test_copy_error(void **state)
{
    (void)state;
    prism_context *ctx = make();
    size_t n = 4u << 20;
    unsigned char *src = calloc(1, n);
    assert_non_null(src);
    prism__staging st;
    assert_int_equal(prism__staging_open(ctx, 96 * 10000, &st), PRISM_SUCCESS);
    prism_buffer *dst;
    assert_int_equal(prism_buffer_create_device(ctx, n / 2, "short", &dst), PRISM_SUCCESS);
    fill_check f = {src, 96, 0};
    assert_int_equal(prism__staged_copy(&st, dst, n, fill_from, &f, 96), PRISM_ERROR_OUT_OF_RANGE);
    assert_non_null(strstr(prism_context_last_error(ctx), "short"));
    prism__staging_close(&st);
    prism_buffer_release(dst);
    free(src);
    prism_memory_trim(ctx);
    assert_int_equal(prism_context_destroy(ctx), PRISM_SUCCESS);
}

static void test_stream_store(void **state)
{
    (void)state;
    enum { N = 300 };
    unsigned char src[N + 64], dst[N + 64], want[N + 64];
    for (size_t i = 0; i < sizeof src; i++)
        src[i] = byte_at(i);
    for (size_t so = 0; so < 17; so += 3)
        for (size_t d = 0; d < 17; d++)
            for (size_t n = 0; n <= N; n += 37) {
                memset(dst, 0xA5, sizeof dst);
                memset(want, 0xA5, sizeof want);
                memcpy(want + d, src + so, n);
                prism__stream_store(dst + d, src + so, n);
                prism__store_fence();
                assert_memory_equal(dst, want, sizeof dst);
            }
    prism__demote_lines(dst, sizeof dst); /* a hint: no effect on contents */
    assert_memory_equal(dst, want, sizeof dst);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_mode),
        cmocka_unit_test(test_odd_sizes),
        cmocka_unit_test(test_copy_error),
        cmocka_unit_test(test_stream_store),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
