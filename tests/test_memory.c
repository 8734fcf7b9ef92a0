/* Memory on the host backend: every buffer kind and its info, the mapped
 * refusal, views and their bounds, fill patterns, copies, maps, pools and
 * their statistics, the stream-ordered allocator's host answers, the GL copy
 * path (with a fake GL), and the ledger: report, leak detection by tag,
 * host memory registered in two steps across threads. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/memory/internal.h" /* prism__memory_inject_device_failures */
#include "prism/context.h"
#include "prism/memory.h"

static char logged[8192];

static void capture(void *user, prism_log_level level, const char *message)
{
    (void)user;
    (void)level;
    strncat(logged, message, sizeof logged - strlen(logged) - 2);
    strcat(logged, "\n");
}

static prism_context *make(bool deny_mapped)
{
    prism_context_desc d = {.backend = PRISM_BACKEND_HOST,
                            .deny_mapped_memory = deny_mapped,
                            .log = capture,
                            .log_level = PRISM_LOG_DEBUG};
    prism_context *ctx = NULL;
    assert_int_equal(prism_context_create(&d, &ctx), PRISM_SUCCESS);
    logged[0] = 0;
    return ctx;
}

static void test_kinds_and_info(void **state)
{
    (void)state;
    prism_context *ctx = make(false);
    prism_buffer *dev, *pinned, *reg, *managed;
    prism_buffer_info info;
    assert_int_equal(prism_buffer_create_device(ctx, 1000, "dev", &dev), PRISM_SUCCESS);
    assert_int_equal(prism_buffer_info_get(dev, &info), PRISM_SUCCESS);
    assert_int_equal(info.kind, PRISM_MEMORY_DEVICE);
    assert_int_equal(info.size, 1000);
    assert_null(info.host_pointer);
    assert_non_null(info.device_pointer);
    assert_string_equal(info.tag, "dev");
    assert_false(info.is_view);
    /* the flags are orthogonal: every combination */
    for (unsigned f = 0; f < 8; f++) {
        assert_int_equal(prism_buffer_create_pinned(ctx, 64, f, "pinned", &pinned), PRISM_SUCCESS);
        assert_int_equal(prism_buffer_info_get(pinned, &info), PRISM_SUCCESS);
        assert_int_equal(info.kind, PRISM_MEMORY_PINNED);
        assert_int_equal(info.flags, f);
        assert_non_null(info.host_pointer);
        assert_true((info.device_pointer != NULL) == ((f & PRISM_HOST_MAPPED) != 0));
        prism_buffer_release(pinned);
    }
    assert_int_equal(prism_buffer_create_pinned(ctx, 64, 8, "bad", &pinned),
                     PRISM_ERROR_INVALID_ARGUMENT);
    static char mine[256];
    assert_int_equal(prism_buffer_register_host(ctx, mine, sizeof mine, PRISM_HOST_MAPPED, "mine",
                                                &reg),
                     PRISM_SUCCESS);
    assert_ptr_equal(prism_buffer_host_pointer(reg), mine);
    assert_ptr_equal(prism_buffer_device_pointer(reg), mine);
    assert_int_equal(prism_buffer_create_managed(ctx, 128, "managed", &managed), PRISM_SUCCESS);
    assert_non_null(prism_buffer_host_pointer(managed));
    /* managed memory never beyond what is free */
    prism_buffer *huge = NULL;
    assert_int_equal(prism_buffer_create_managed(ctx, SIZE_MAX / 2, "huge", &huge),
                     PRISM_ERROR_OUT_OF_DEVICE_MEMORY);
    assert_null(huge);
    assert_non_null(strstr(prism_context_last_error(ctx), "refused rather than oversubscribed"));
    assert_int_equal(prism_buffer_create_device(ctx, 0, "zero", &huge),
                     PRISM_ERROR_INVALID_ARGUMENT);
    prism_buffer_release(dev);
    prism_buffer_release(reg);
    prism_buffer_release(managed);
    prism_buffer_release(NULL);
    assert_int_equal(prism_context_destroy(ctx), PRISM_SUCCESS);
}

static void test_mapped_refused(void **state)
{
    (void)state;
    prism_context *ctx = make(true);
    prism_buffer *b = NULL;
    assert_int_equal(prism_buffer_create_pinned(ctx, 64, PRISM_HOST_MAPPED, "m", &b),
                     PRISM_ERROR_MAPPED_NOT_ALLOWED);
    assert_null(b);
    assert_non_null(strstr(prism_context_last_error(ctx), "deny_mapped_memory"));
    assert_int_equal(prism_buffer_create_pinned(ctx, 64, PRISM_HOST_WRITE_COMBINED, "wc", &b),
                     PRISM_SUCCESS);
    prism_buffer_release(b);
    static char mine[64];
    assert_int_equal(prism_buffer_register_host(ctx, mine, sizeof mine, PRISM_HOST_MAPPED, "r", &b),
                     PRISM_ERROR_MAPPED_NOT_ALLOWED);
    prism_pool *pool = NULL;
    prism_pool_desc pd = {PRISM_POOL_PINNED, PRISM_HOST_MAPPED, "p"};
    assert_int_equal(prism_pool_create(ctx, &pd, &pool), PRISM_ERROR_MAPPED_NOT_ALLOWED);
    assert_int_equal(prism_context_destroy(ctx), PRISM_SUCCESS);
}

static void test_views(void **state)
{
    (void)state;
    prism_context *ctx = make(false);
    prism_buffer *b, *v, *vv = NULL;
    assert_int_equal(prism_buffer_create_device(ctx, 100, "parent", &b), PRISM_SUCCESS);
    assert_int_equal(prism_buffer_view(b, 90, 11, &v), PRISM_ERROR_OUT_OF_RANGE);
    assert_non_null(strstr(prism_context_last_error(ctx),
                           "view of \"parent\": bytes [90, +11) outside the buffer's 100 bytes"));
    assert_int_equal(prism_buffer_view(b, 101, 0, &v), PRISM_ERROR_OUT_OF_RANGE);
    assert_int_equal(prism_buffer_view(b, SIZE_MAX, 2, &v), PRISM_ERROR_OUT_OF_RANGE);
    assert_int_equal(prism_buffer_view(b, 10, 0, &v), PRISM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(prism_buffer_view(b, 10, 50, &v), PRISM_SUCCESS);
    assert_int_equal(prism_buffer_view(v, 5, 45, &vv), PRISM_SUCCESS);
    prism_buffer *bad = v;
    assert_int_equal(prism_buffer_view(v, 5, 46, &bad), PRISM_ERROR_OUT_OF_RANGE);
    assert_null(bad);
    prism_buffer_info info;
    prism_buffer_info_get(vv, &info);
    assert_true(info.is_view);
    assert_int_equal(info.offset, 15);
    assert_ptr_equal(info.device_pointer, (char *)prism_buffer_device_pointer(b) + 15);
    /* writes through a view land in the parent */
    uint8_t bytes[45], back[100];
    for (int i = 0; i < 45; i++)
        bytes[i] = (uint8_t)(i + 1);
    assert_int_equal(prism_buffer_write(vv, 0, bytes, 45), PRISM_SUCCESS);
    assert_int_equal(prism_buffer_read(b, 0, back, 100), PRISM_SUCCESS);
    assert_memory_equal(back + 15, bytes, 45);
    assert_int_equal(prism_buffer_write(vv, 1, bytes, 45), PRISM_ERROR_OUT_OF_RANGE);
    /* the parent released first: the views keep the memory */
    prism_buffer_release(b);
    assert_int_equal(prism_buffer_read(vv, 0, back, 45), PRISM_SUCCESS);
    assert_memory_equal(back, bytes, 45);
    prism_memory_report r;
    assert_int_equal(prism_memory_report_get(ctx, &r), PRISM_SUCCESS);
    assert_int_equal(r.total.count, 1); /* views are not allocations */
    prism_buffer_release(v);
    prism_buffer_release(vv);
    assert_int_equal(prism_memory_report_get(ctx, &r), PRISM_SUCCESS);
    assert_int_equal(r.total.count, 0);
    assert_int_equal(prism_context_destroy(ctx), PRISM_SUCCESS);
}

static void test_fill_patterns(void **state)
{
    (void)state;
    prism_context *ctx = make(false);
    prism_buffer *b;
    assert_int_equal(prism_buffer_create_device(ctx, 256, "fill", &b), PRISM_SUCCESS);
    static const uint8_t pattern[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    uint8_t back[256];
    for (size_t p = 1; p <= 16; p *= 2) {
        uint8_t zero = 0xEE;
        assert_int_equal(prism_buffer_fill(b, 0, 256, &zero, 1), PRISM_SUCCESS);
        assert_int_equal(prism_buffer_fill(b, 32, 160, pattern, p), PRISM_SUCCESS);
        assert_int_equal(prism_buffer_read(b, 0, back, 256), PRISM_SUCCESS);
        for (size_t i = 0; i < 256; i++) {
            uint8_t want = i < 32 || i >= 192 ? 0xEE : pattern[(i - 32) % p];
            assert_int_equal(back[i], want);
        }
    }
    assert_int_equal(prism_buffer_fill(b, 0, 256, pattern, 3), PRISM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(prism_buffer_fill(b, 0, 256, pattern, 32), PRISM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(prism_buffer_fill(b, 2, 8, pattern, 4), PRISM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(prism_context_last_error(ctx), "multiples of the 4-byte pattern"));
    assert_int_equal(prism_buffer_fill(b, 240, 32, pattern, 16), PRISM_ERROR_OUT_OF_RANGE);
    prism_stream *s;
    assert_int_equal(prism_stream_create(ctx, &s), PRISM_SUCCESS);
    assert_int_equal(prism_buffer_fill_async(b, 0, 256, pattern, 8, s), PRISM_SUCCESS);
    assert_int_equal(prism_stream_synchronize(s), PRISM_SUCCESS);
    assert_int_equal(prism_buffer_read(b, 248, back, 8), PRISM_SUCCESS);
    assert_memory_equal(back, pattern, 8);
    prism_stream_destroy(s);
    prism_buffer_release(b);
    assert_int_equal(prism_context_destroy(ctx), PRISM_SUCCESS);
}

static void test_copies_and_maps(void **state)
{
    (void)state;
    prism_context *ctx = make(false);
    prism_buffer *dev, *pinned;
    assert_int_equal(prism_buffer_create_device(ctx, 64, "dev", &dev), PRISM_SUCCESS);
    assert_int_equal(prism_buffer_create_pinned(
                         ctx, 64, PRISM_HOST_MAPPED | PRISM_HOST_WRITE_COMBINED, "pinned", &pinned),
                     PRISM_SUCCESS);
    uint32_t src[16], back[16];
    for (int i = 0; i < 16; i++)
        src[i] = 0x1000u + (uint32_t)i;
    prism_stream *s;
    assert_int_equal(prism_stream_create(ctx, &s), PRISM_SUCCESS);
    assert_int_equal(prism_buffer_write_async(pinned, 0, src, 64, s), PRISM_SUCCESS);
    assert_int_equal(prism_buffer_copy_async(dev, 0, pinned, 0, 64, s), PRISM_SUCCESS);
    assert_int_equal(prism_buffer_read_async(dev, 0, back, 64, s), PRISM_SUCCESS);
    assert_int_equal(prism_stream_synchronize(s), PRISM_SUCCESS);
    assert_memory_equal(back, src, 64);
    assert_int_equal(prism_buffer_copy(dev, 32, dev, 0, 32), PRISM_SUCCESS);
    assert_int_equal(prism_buffer_copy(dev, 33, dev, 0, 32), PRISM_ERROR_OUT_OF_RANGE);
    assert_non_null(strstr(prism_context_last_error(ctx), "copy into of \"dev\""));
    /* map device memory: a host copy, written back on unmap */
    uint32_t *host;
    assert_int_equal(prism_buffer_map(dev, PRISM_MAP_READ_WRITE, (void **)&host), PRISM_SUCCESS);
    assert_int_equal(host[8], 0x1000u);
    void *again;
    assert_int_equal(prism_buffer_map(dev, PRISM_MAP_READ, &again), PRISM_ERROR_INVALID_ARGUMENT);
    host[0] = 42;
    assert_int_equal(prism_buffer_unmap(dev), PRISM_SUCCESS);
    assert_int_equal(prism_buffer_unmap(dev), PRISM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(prism_buffer_read(dev, 0, back, 4), PRISM_SUCCESS);
    assert_int_equal(back[0], 42);
    /* a read-only map writes nothing back */
    assert_int_equal(prism_buffer_map(dev, PRISM_MAP_READ, (void **)&host), PRISM_SUCCESS);
    host[0] = 7;
    assert_int_equal(prism_buffer_unmap(dev), PRISM_SUCCESS);
    assert_int_equal(prism_buffer_read(dev, 0, back, 4), PRISM_SUCCESS);
    assert_int_equal(back[0], 42);
    /* pinned memory maps to itself */
    assert_int_equal(prism_buffer_map(pinned, PRISM_MAP_READ_WRITE, (void **)&host), PRISM_SUCCESS);
    assert_ptr_equal(host, prism_buffer_host_pointer(pinned));
    assert_int_equal(prism_buffer_unmap(pinned), PRISM_SUCCESS);
    /* released while mapped: the staging copy goes too */
    assert_int_equal(prism_buffer_map(dev, PRISM_MAP_WRITE_DISCARD, (void **)&host), PRISM_SUCCESS);
    prism_buffer_release(dev);
    prism_buffer_release(pinned);
    prism_stream_destroy(s);
    assert_int_equal(prism_context_destroy(ctx), PRISM_SUCCESS);
}

static void test_pool_statistics(void **state)
{
    (void)state;
    assert_int_equal(prism_pool_block_size(1), 256);
    assert_int_equal(prism_pool_block_size(257), 320);
    assert_int_equal(prism_pool_block_size(320), 320);
    assert_int_equal(prism_pool_block_size(321), 384);
    assert_int_equal(prism_pool_block_size(512), 512);
    assert_int_equal(prism_pool_block_size(513), 640);
    assert_int_equal(prism_pool_block_size(1000000), 1048576);
    for (size_t s = 1; s < 100000; s += 97) {
        size_t block = prism_pool_block_size(s);
        assert_true(block >= s);
        assert_true(block <= 256 || block <= s + s / 4 + 1);
    }
    assert_int_equal(prism_pool_block_size(SIZE_MAX), SIZE_MAX);

    prism_context *ctx = make(false);
    for (int kind = 0; kind < 2; kind++) {
        prism_pool *pool;
        prism_pool_desc pd = {kind, kind ? PRISM_HOST_MAPPED : 0, kind ? "pinned" : "dev"};
        assert_int_equal(prism_pool_create(ctx, &pd, &pool), PRISM_SUCCESS);
        prism_buffer *a, *b, *c;
        prism_pool_stats st;
        assert_int_equal(prism_pool_allocate(pool, 1000, "a", &a), PRISM_SUCCESS);
        assert_int_equal(prism_pool_allocate(pool, 1000, "b", &b), PRISM_SUCCESS);
        prism_pool_stats_get(pool, &st);
        assert_int_equal(st.active_blocks, 2);
        assert_int_equal(st.held_blocks, 0);
        assert_int_equal(st.active_bytes, 2000);
        assert_int_equal(st.managed_bytes, 2048);
        assert_int_equal(prism_buffer_size(a), 1000);
        void *pa = prism_buffer_device_pointer(a);
        prism_buffer_release(a);
        prism_pool_stats_get(pool, &st);
        assert_int_equal(st.active_blocks, 1);
        assert_int_equal(st.held_blocks, 1);
        assert_int_equal(st.managed_bytes, 2048);
        assert_int_equal(st.active_bytes, 1000);
        prism_memory_report r;
        prism_memory_report_get(ctx, &r);
        assert_int_equal(r.pool_held_bytes, 1024);
        bool seen_held = false;
        char held_tag[64];
        snprintf(held_tag, sizeof held_tag, "%s.held", pd.tag);
        for (size_t i = 0; i < r.tags_count; i++)
            seen_held |= strcmp(r.tags[i].tag, held_tag) == 0 && r.tags[i].bytes == 1024;
        assert_true(seen_held);
        /* same size class: the held block comes back */
        assert_int_equal(prism_pool_allocate(pool, 900, "c", &c), PRISM_SUCCESS);
        assert_ptr_equal(prism_buffer_device_pointer(c), pa);
        prism_buffer_info info;
        prism_buffer_info_get(c, &info);
        assert_true(info.pooled);
        assert_string_equal(info.tag, "c");
        prism_buffer_release(c);
        prism_buffer_release(b);
        prism_pool_stats_get(pool, &st);
        assert_int_equal(st.held_blocks, 2);
        assert_int_equal(st.active_blocks, 0);
        prism_pool_free_held(pool);
        prism_pool_stats_get(pool, &st);
        assert_int_equal(st.held_blocks, 0);
        assert_int_equal(st.managed_bytes, 0);
        prism_pool_stop_holding(pool);
        assert_int_equal(prism_pool_allocate(pool, 5000, "d", &a), PRISM_SUCCESS);
        prism_buffer_release(a);
        prism_pool_stats_get(pool, &st);
        assert_int_equal(st.held_blocks, 0);
        assert_int_equal(st.managed_bytes, 0);
        assert_int_equal(prism_pool_allocate(pool, 0, "x", &a), PRISM_ERROR_INVALID_ARGUMENT);
        prism_pool_destroy(pool);
    }
    prism_pool *pool;
    assert_int_equal(prism_pool_create(ctx, NULL, &pool), PRISM_SUCCESS);
    prism_buffer *keep; /* destroyed with an active block: the block stays valid */
    assert_int_equal(prism_pool_allocate(pool, 100, "keep", &keep), PRISM_SUCCESS);
    prism_pool_destroy(pool);
    uint8_t x = 5;
    assert_int_equal(prism_buffer_fill(keep, 0, 100, &x, 1), PRISM_SUCCESS);
    prism_buffer_release(keep); /* frees the pool too */
    prism_pool_destroy(NULL);
    prism_memory_report r;
    prism_memory_report_get(ctx, &r);
    assert_int_equal(r.total.count, 0);
    assert_int_equal(prism_context_destroy(ctx), PRISM_SUCCESS);
}

/* PyCUDA's rule: an allocation failure frees the held blocks, then retries once. */
static void test_pool_retry_after_failure(void **state)
{
    (void)state;
    prism_context *ctx = make(false);
    prism_pool *pool;
    assert_int_equal(prism_pool_create(ctx, NULL, &pool), PRISM_SUCCESS);
    prism_buffer *a, *b;
    assert_int_equal(prism_pool_allocate(pool, 4096, "a", &a), PRISM_SUCCESS);
    prism_buffer_release(a); /* held */
    prism__memory_inject_device_failures(ctx, 1);
    logged[0] = 0;
    assert_int_equal(prism_pool_allocate(pool, 100000, "b", &b), PRISM_SUCCESS);
    assert_non_null(strstr(logged, "freeing 1 held blocks and retrying"));
    prism_pool_stats st;
    prism_pool_stats_get(pool, &st);
    assert_int_equal(st.held_blocks, 0);
    assert_int_equal(st.active_blocks, 1);
    prism_buffer_release(b);
    /* with nothing held there is no retry: the failure comes back */
    prism_pool_free_held(pool);
    prism__memory_inject_device_failures(ctx, 1);
    assert_int_equal(prism_pool_allocate(pool, 100000, "c", &b), PRISM_ERROR_OUT_OF_DEVICE_MEMORY);
    assert_non_null(strstr(prism_context_last_error(ctx), "injected"));
    prism_pool_stats_get(pool, &st);
    assert_int_equal(st.managed_bytes, 0);
    prism_pool_destroy(pool);
    assert_int_equal(prism_context_destroy(ctx), PRISM_SUCCESS);
}

static void test_mempool_on_host(void **state)
{
    (void)state;
    prism_context *ctx = make(false);
    assert_false(prism_mempool_supported(ctx));
    assert_false(prism_mempool_enabled(ctx));
    assert_int_equal(prism_mempool_set_enabled(ctx, true), PRISM_ERROR_UNSUPPORTED);
    assert_int_equal(prism_mempool_set_enabled(ctx, false), PRISM_SUCCESS);
    assert_int_equal(prism_mempool_set_release_threshold(ctx, 0.5), PRISM_ERROR_UNSUPPORTED);
    assert_int_equal(prism_mempool_set_release_threshold(ctx, -1), PRISM_ERROR_INVALID_ARGUMENT);
    prism_stream *s;
    prism_stream_create(ctx, &s);
    prism_buffer *a, *b;
    assert_int_equal(prism_buffer_create_async(ctx, 4096, s, "async", &a), PRISM_SUCCESS);
    assert_int_equal(prism_buffer_create_async(ctx, 1024, s, "async", &b), PRISM_SUCCESS);
    size_t cur, high;
    assert_int_equal(prism_mempool_usage(ctx, &cur, &high), PRISM_SUCCESS);
    assert_int_equal(cur, 5120);
    prism_buffer_release_async(a, s);
    prism_buffer_release(b);
    assert_int_equal(prism_mempool_usage(ctx, &cur, &high), PRISM_SUCCESS);
    assert_int_equal(cur, 0);
    assert_int_equal(high, 5120);
    prism_stream_destroy(s);
    assert_int_equal(prism_context_destroy(ctx), PRISM_SUCCESS);
}

/* ---- a fake GL: one buffer object's store, enough for the copy path */

static uint8_t gl_store[256];
static unsigned gl_bound, gl_errors_injected;

static void fake_bind(unsigned target, unsigned buffer)
{
    (void)target;
    gl_bound = buffer;
}
static void fake_sub_data(unsigned target, ptrdiff_t offset, ptrdiff_t size, const void *data)
{
    (void)target;
    assert_int_equal(gl_bound, 7);
    memcpy(gl_store + offset, data, (size_t)size);
}
static void fake_get_sub_data(unsigned target, ptrdiff_t offset, ptrdiff_t size, void *data)
{
    (void)target;
    assert_int_equal(gl_bound, 7);
    memcpy(data, gl_store + offset, (size_t)size);
}
static void fake_get_integerv(unsigned pname, int *v)
{
    (void)pname;
    *v = (int)gl_bound;
}
static unsigned fake_get_error(void)
{
    unsigned e = gl_errors_injected;
    gl_errors_injected = 0;
    return e;
}
static prism_gl_proc fake_gpa(const char *name)
{
    if (!strcmp(name, "glBindBuffer"))
        return (prism_gl_proc)fake_bind;
    if (!strcmp(name, "glBufferSubData"))
        return (prism_gl_proc)fake_sub_data;
    if (!strcmp(name, "glGetBufferSubData"))
        return (prism_gl_proc)fake_get_sub_data;
    if (!strcmp(name, "glGetIntegerv"))
        return (prism_gl_proc)fake_get_integerv;
    if (!strcmp(name, "glGetError"))
        return (prism_gl_proc)fake_get_error;
    return NULL;
}
static prism_gl_proc empty_gpa(const char *name)
{
    (void)name;
    return NULL;
}

static void test_gl_copy_path(void **state)
{
    (void)state;
    prism_context *ctx = make(false);
    prism_buffer *gl = NULL;
    assert_int_equal(prism_buffer_create_gl(ctx, 7, 256, PRISM_GL_NONE, NULL, "vbo", &gl),
                     PRISM_ERROR_INTEROP_UNAVAILABLE);
    assert_non_null(strstr(prism_context_last_error(ctx), "no GL loader"));
    assert_int_equal(prism_buffer_create_gl(ctx, 7, 256, PRISM_GL_NONE, empty_gpa, "vbo", &gl),
                     PRISM_ERROR_GL);
    assert_int_equal(prism_buffer_create_gl(ctx, 0, 256, PRISM_GL_NONE, fake_gpa, "vbo", &gl),
                     PRISM_ERROR_INVALID_ARGUMENT);
    logged[0] = 0;
    for (int i = 0; i < 256; i++)
        gl_store[i] = (uint8_t)i;
    gl_bound = 3;
    assert_int_equal(prism_buffer_create_gl(ctx, 7, 256, PRISM_GL_NONE, fake_gpa, "vbo", &gl),
                     PRISM_SUCCESS);
    assert_false(prism_buffer_gl_interop(gl));
    assert_non_null(strstr(logged, "copy path"));
    uint8_t *k;
    uint8_t back[4];
    assert_int_equal(prism_buffer_read(gl, 0, back, 4), PRISM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(prism_buffer_gl_map(gl, NULL, (void **)&k), PRISM_SUCCESS);
    assert_int_equal(k[200], 200); /* read from GL first */
    assert_int_equal(prism_buffer_read(gl, 100, back, 4), PRISM_SUCCESS);
    assert_int_equal(back[0], 100);
    uint8_t v = 0xAB;
    assert_int_equal(prism_buffer_fill(gl, 0, 16, &v, 1), PRISM_SUCCESS);
    assert_int_equal(prism_buffer_gl_unmap(gl, NULL), PRISM_SUCCESS);
    assert_int_equal(gl_store[15], 0xAB);
    assert_int_equal(gl_store[16], 16);
    assert_int_equal(gl_bound, 3); /* the previous binding is restored */
    assert_int_equal(prism_buffer_gl_unmap(gl, NULL), PRISM_ERROR_INVALID_ARGUMENT);
    /* a GL error on unmap is reported */
    assert_int_equal(prism_buffer_gl_map(gl, NULL, (void **)&k), PRISM_SUCCESS);
    gl_errors_injected = 0x505;
    assert_int_equal(prism_buffer_gl_unmap(gl, NULL), PRISM_ERROR_GL);
    assert_non_null(strstr(prism_context_last_error(ctx), "0x505"));
    /* a second GL buffer does not log the fallback again */
    logged[0] = 0;
    prism_buffer *gl2;
    assert_int_equal(prism_buffer_create_gl(ctx, 7, 16, PRISM_GL_WRITE_DISCARD, fake_gpa, "vbo2",
                                            &gl2),
                     PRISM_SUCCESS);
    assert_null(strstr(logged, "copy path"));
    prism_memory_report r;
    prism_memory_report_get(ctx, &r);
    assert_int_equal(r.by_kind[PRISM_MEMORY_GL].count, 2);
    prism_buffer_release(gl2);
    prism_buffer_release(gl);
    prism_memory_report_get(ctx, &r);
    assert_int_equal(r.total.count, 0);
    assert_int_equal(prism_context_destroy(ctx), PRISM_SUCCESS);
}

static void test_ledger_report_and_leaks(void **state)
{
    (void)state;
    prism_context *ctx = make(false);
    prism_buffer *n1, *n2, *t, *view;
    assert_int_equal(prism_buffer_create_device(ctx, 3000, "bvh.nodes", &n1), PRISM_SUCCESS);
    assert_int_equal(prism_buffer_create_pinned(ctx, 1000, PRISM_HOST_MAPPED, "bvh.nodes", &n2),
                     PRISM_SUCCESS);
    assert_int_equal(prism_buffer_create_device(ctx, 500, "triangles", &t), PRISM_SUCCESS);
    assert_int_equal(prism_buffer_view(t, 0, 100, &view), PRISM_SUCCESS);
    prism_memory_report r;
    assert_int_equal(prism_memory_report_get(ctx, &r), PRISM_SUCCESS);
    assert_int_equal(r.total.bytes, 4500);
    assert_int_equal(r.total.count, 3);
    assert_int_equal(r.by_kind[PRISM_MEMORY_DEVICE].bytes, 3500);
    assert_int_equal(r.by_kind[PRISM_MEMORY_DEVICE].count, 2);
    assert_int_equal(r.by_kind[PRISM_MEMORY_PINNED].bytes, 1000);
    assert_int_equal(r.tags_count, 3);
    assert_string_equal(r.tags[0].tag, "bvh.nodes"); /* largest first */
    assert_int_equal(r.tags[0].kind, PRISM_MEMORY_DEVICE);
    assert_int_equal(r.tags[0].bytes, 3000);
    assert_true(r.device_total > 0);
    char text[2048];
    size_t need = prism_memory_report_format(&r, text, sizeof text);
    assert_true(need < sizeof text);
    assert_non_null(strstr(text, "triangles"));
    char small[10];
    assert_int_equal(prism_memory_report_format(&r, small, sizeof small), need);
    assert_int_equal(strlen(small), 9);
    prism_buffer_release(n1);
    assert_int_equal(prism_memory_report_get(ctx, &r), PRISM_SUCCESS);
    assert_int_equal(r.peak_bytes, 4500);
    assert_int_equal(r.total.bytes, 1500);
    /* destroy with live allocations: an error naming each by tag, and the
     * memory freed once (ASan and LSan watch this) */
    prism_pool *pool;
    prism_pool_create(ctx, NULL, &pool);
    prism_buffer *pooled;
    prism_pool_allocate(pool, 10, "pooled.thing", &pooled);
    logged[0] = 0;
    assert_int_equal(prism_context_destroy(ctx), PRISM_ERROR_LIVE_ALLOCATIONS);
    assert_non_null(strstr(logged, "\"bvh.nodes\" pinned, 1000 bytes"));
    assert_non_null(strstr(logged, "\"triangles\" device, 500 bytes"));
    assert_non_null(strstr(logged, "\"pooled.thing\" device, 256 bytes"));
    assert_non_null(strstr(logged, "3 live allocations (1756 bytes)"));
}

static void test_report_holds_many_tags(void **state)
{
    (void)state;
    prism_context *ctx = make(false);
    enum { N = PRISM_MEMORY_REPORT_TAGS + 6 };
    prism_buffer *b[N];
    for (int i = 0; i < N; i++) {
        char tag[32];
        snprintf(tag, sizeof tag, "tag.%d", i);
        assert_int_equal(prism_buffer_create_device(ctx, 100 + (size_t)i, tag, &b[i]),
                         PRISM_SUCCESS);
    }
    prism_memory_report r;
    assert_int_equal(prism_memory_report_get(ctx, &r), PRISM_SUCCESS);
    assert_int_equal(r.total.count, N);
    assert_int_equal(r.tags_count, PRISM_MEMORY_REPORT_TAGS);
    assert_true(r.tags_truncated);
    for (size_t i = 1; i < r.tags_count; i++)
        assert_true(r.tags[i - 1].bytes >= r.tags[i].bytes);
    char text[8192];
    prism_memory_report_format(&r, text, sizeof text);
    assert_non_null(strstr(text, "more tags than the report holds"));
    for (int i = 0; i < N; i++)
        prism_buffer_release(b[i]);
    assert_int_equal(prism_context_destroy(ctx), PRISM_SUCCESS);
}

/* prism__register_begin on a thread of its own: nothing of the context
 * changes until prism__register_end records it on the context's thread. */
typedef struct {
    prism_context *ctx;
    void *host;
    prism__allocation *a;
    prism_result r;
} register_job;

static void *register_off_thread(void *arg)
{
    register_job *j = arg;
    j->r = prism__register_begin(j->ctx, j->host, 4096, "two.steps", &j->a);
    return NULL;
}

static void test_register_in_two_steps(void **state)
{
    (void)state;
    prism_context *ctx = make(false);
    static unsigned char mine[4096], other[4096];
    register_job j = {.ctx = ctx, .host = mine};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, register_off_thread, &j), 0);
    pthread_join(t, NULL);
    assert_int_equal(j.r, PRISM_SUCCESS);
    assert_non_null(j.a);
    prism_memory_report r;
    assert_int_equal(prism_memory_report_get(ctx, &r), PRISM_SUCCESS);
    assert_int_equal(r.total.count, 0); /* begun, not yet recorded */
    prism_buffer *b = NULL;
    assert_int_equal(prism__register_end(ctx, j.a, &b), PRISM_SUCCESS);
    assert_int_equal(prism_memory_report_get(ctx, &r), PRISM_SUCCESS);
    assert_int_equal(r.by_kind[PRISM_MEMORY_REGISTERED].count, 1);
    assert_int_equal(r.by_kind[PRISM_MEMORY_REGISTERED].bytes, 4096);
    assert_string_equal(r.tags[0].tag, "two.steps");
    prism_buffer_info info;
    assert_int_equal(prism_buffer_info_get(b, &info), PRISM_SUCCESS);
    assert_int_equal(info.kind, PRISM_MEMORY_REGISTERED);
    assert_ptr_equal(info.host_pointer, mine);
    assert_int_equal(info.size, 4096);
    /* one begun and undone leaves nothing behind */
    register_job k = {.ctx = ctx, .host = other};
    register_off_thread(&k);
    assert_int_equal(k.r, PRISM_SUCCESS);
    prism__register_undo(ctx, k.a);
    prism__register_undo(ctx, NULL);
    prism_buffer_release(b);
    assert_int_equal(prism_memory_report_get(ctx, &r), PRISM_SUCCESS);
    assert_int_equal(r.total.count, 0);
    assert_int_equal(r.total.bytes, 0);
    assert_int_equal(prism_context_destroy(ctx), PRISM_SUCCESS);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    prism_buffer *b = NULL;
    assert_int_equal(prism_buffer_create_device(NULL, 10, "x", &b), PRISM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(prism_buffer_info_get(NULL, NULL), PRISM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(prism_buffer_size(NULL), 0);
    assert_null(prism_buffer_device_pointer(NULL));
    assert_int_equal(prism_stream_synchronize(NULL), PRISM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(prism_memory_report_get(NULL, NULL), PRISM_ERROR_INVALID_ARGUMENT);
    assert_string_equal(prism_memory_kind_name(PRISM_MEMORY_ASYNC), "async");
    assert_string_equal(prism_memory_kind_name(99), "?");
    prism_context *ctx = make(false);
    assert_int_equal(prism_buffer_register_host(ctx, NULL, 10, 0, "x", &b),
                     PRISM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(prism_buffer_create_device(ctx, 10, NULL, &b), PRISM_SUCCESS);
    prism_buffer_info info;
    prism_buffer_info_get(b, &info);
    assert_string_equal(info.tag, "untagged");
    assert_int_equal(prism_buffer_map(b, (prism_map_flags)9, (void **)&info.host_pointer),
                     PRISM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(prism_buffer_gl_map(b, NULL, &info.host_pointer),
                     PRISM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(prism_context_last_error(ctx), "not a GL buffer"));
    prism_buffer_release(b);
    assert_int_equal(prism_context_destroy(ctx), PRISM_SUCCESS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kinds_and_info),
        cmocka_unit_test(test_mapped_refused),
        cmocka_unit_test(test_views),
        cmocka_unit_test(test_fill_patterns),
        cmocka_unit_test(test_copies_and_maps),
        cmocka_unit_test(test_pool_statistics),
        cmocka_unit_test(test_pool_retry_after_failure),
        cmocka_unit_test(test_mempool_on_host),
        cmocka_unit_test(test_gl_copy_path),
        cmocka_unit_test(test_ledger_report_and_leaks),
        cmocka_unit_test(test_report_holds_many_tags),
        cmocka_unit_test(test_register_in_two_steps),
        cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
