/* The host backend's memory: every kind is heap memory (64-byte aligned, as
 * cudaMalloc gives at least that), copies are memcpy, streams are tokens,
 * and "free device memory" is the physical memory less what the ledger holds
 * on the "device". GL buffers always take the copy path here. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/memory/internal.h"

static prism_result host_alloc(prism_context *ctx, prism__allocation *a)
{
    if (a->kind == PRISM_MEMORY_REGISTERED) {
        a->device = (a->flags & PRISM_HOST_MAPPED) ? a->host : NULL;
        return PRISM_SUCCESS;
    }
    if (a->kind == PRISM_MEMORY_GL)
        return PRISM_SUCCESS; /* the GL object is the caller's */
    size_t rounded = (a->bytes + 63) / 64 * 64;
    void *p = rounded >= a->bytes ? aligned_alloc(64, rounded ? rounded : 64) : NULL;
    if (!p) {
        bool dev = a->kind == PRISM_MEMORY_DEVICE || a->kind == PRISM_MEMORY_ASYNC ||
                   a->kind == PRISM_MEMORY_MANAGED;
        return prism__error(ctx, dev ? PRISM_ERROR_OUT_OF_DEVICE_MEMORY : PRISM_ERROR_OUT_OF_MEMORY,
                            "%s memory \"%s\": cannot allocate %zu bytes (host backend)",
                            prism_memory_kind_name(a->kind), a->tag, a->bytes);
    }
    switch (a->kind) {
    case PRISM_MEMORY_DEVICE:
    case PRISM_MEMORY_ASYNC: a->device = p; break;
    case PRISM_MEMORY_PINNED:
        a->host = p;
        a->device = (a->flags & PRISM_HOST_MAPPED) ? p : NULL;
        break;
    default: /* managed, staging: both sides see it */
        a->host = p;
        a->device = a->kind == PRISM_MEMORY_MANAGED ? p : NULL;
        break;
    }
    return PRISM_SUCCESS;
}

static void host_free(prism_context *ctx, prism__allocation *a)
{
    (void)ctx;
    if (a->kind == PRISM_MEMORY_REGISTERED || a->kind == PRISM_MEMORY_GL)
        return;
    free(a->kind == PRISM_MEMORY_DEVICE || a->kind == PRISM_MEMORY_ASYNC ? a->device : a->host);
}

static prism_result host_copy(prism_context *ctx, void *dst, const void *src, size_t size,
                              void *stream, bool async)
{
    if (size)
        memmove(dst, src, size);
    return PRISM_SUCCESS;
}

static prism_result host_fill(prism_context *ctx, void *dst, size_t size, const void *pattern,
                              size_t pattern_size, void *stream, bool async)
{
    unsigned char *d = dst;
    if (pattern_size == 1) {
        memset(d, *(const unsigned char *)pattern, size);
        return PRISM_SUCCESS;
    }
    for (size_t i = 0; i < size; i += pattern_size)
        memcpy(d + i, pattern, pattern_size);
    return PRISM_SUCCESS;
}

static prism_result host_mem_info(prism_context *ctx, size_t *free_bytes, size_t *total_bytes)
{
    const struct prism_memory_state *m = ctx->memory;
    size_t total = ctx->device.total_memory;
    size_t used = m->by_kind[PRISM_MEMORY_DEVICE].bytes + m->by_kind[PRISM_MEMORY_ASYNC].bytes +
                  m->by_kind[PRISM_MEMORY_MANAGED].bytes;
    *total_bytes = total;
    *free_bytes = total > used ? total - used : 0;
    return PRISM_SUCCESS;
}

static prism_result host_stream_create(prism_context *ctx, void **handle)
{
    *handle = NULL;
    return PRISM_SUCCESS;
}

static void host_stream_destroy(prism_context *ctx, void *handle) {}

static prism_result host_stream_sync(prism_context *ctx, void *handle)
{
    return PRISM_SUCCESS;
}

static bool host_mempool_supported(prism_context *ctx)
{
    return false;
}

/* No stream-ordered allocator here; the async calls are heap calls, whose
 * bytes are still counted as the "used" figures the API reports. */
static prism_result host_alloc_async(prism_context *ctx, prism__allocation *a, void *stream)
{
    prism_result r = host_alloc(ctx, a);
    if (r != PRISM_SUCCESS)
        return r;
    struct prism_memory_state *m = ctx->memory;
    m->async_current += a->bytes;
    if (m->async_current > m->async_high)
        m->async_high = m->async_current;
    return PRISM_SUCCESS;
}

static void host_free_async(prism_context *ctx, prism__allocation *a, void *stream)
{
    ctx->memory->async_current -= a->bytes;
    host_free(ctx, a);
}

static prism_result host_mempool_threshold(prism_context *ctx, uint64_t *set, uint64_t *get)
{
    return prism__error(ctx, PRISM_ERROR_UNSUPPORTED,
                        "the host backend has no stream-ordered memory pool");
}

static prism_result host_mempool_usage(prism_context *ctx, size_t *current, size_t *high)
{
    *current = ctx->memory->async_current;
    *high = ctx->memory->async_high;
    return PRISM_SUCCESS;
}

static prism_result host_gl_register(prism_context *ctx, prism__allocation *a, unsigned gl_buffer,
                                     char *why, size_t why_size)
{
    snprintf(why, why_size, "the host backend has no CUDA-GL interop");
    return PRISM_ERROR_INTEROP_UNAVAILABLE;
}

static prism_result host_gl_map(prism_context *ctx, prism__allocation *a, void *stream)
{
    return PRISM_ERROR_INTEROP_UNAVAILABLE;
}

const prism__memory_backend prism__host_memory_backend = {
    .name = "host",
    .alloc = host_alloc,
    .free = host_free,
    .copy = host_copy,
    .fill = host_fill,
    .mem_info = host_mem_info,
    .stream_create = host_stream_create,
    .stream_destroy = host_stream_destroy,
    .stream_sync = host_stream_sync,
    .mempool_supported = host_mempool_supported,
    .alloc_async = host_alloc_async,
    .free_async = host_free_async,
    .mempool_threshold = host_mempool_threshold,
    .mempool_usage = host_mempool_usage,
    .gl_register = host_gl_register,
    .gl_map = host_gl_map,
    .gl_unmap = host_gl_map,
};
