/* The stream-ordered allocator (cudaMallocAsync on the device's memory
 * pool), the C version of Warp's mempool allocators: support detection,
 * enabling per context, the release threshold, used memory now and at its
 * high-water mark, and allocations on a stream (allowed in graph capture). */
#include <math.h>
#include <stdlib.h>

#include "internal.h"

bool prism_mempool_supported(const prism_context *ctx)
{
    return ctx && ctx->memory && prism__mem(ctx)->mempool_supported((prism_context *)ctx);
}

bool prism_mempool_enabled(const prism_context *ctx)
{
    return ctx && ctx->memory && ctx->memory->mempool_enabled;
}

prism_result prism_mempool_set_enabled(prism_context *ctx, bool enabled)
{
    if (!ctx || !ctx->memory)
        return PRISM_ERROR_INVALID_ARGUMENT;
    if (enabled && !prism_mempool_supported(ctx))
        return prism__error(ctx, PRISM_ERROR_UNSUPPORTED,
                            "stream-ordered allocator: not supported on %s (%s backend)",
                            ctx->device.name, prism_backend_name(ctx->backend));
    ctx->memory->mempool_enabled = enabled;
    return PRISM_SUCCESS;
}

prism_result prism_mempool_set_release_threshold(prism_context *ctx, double threshold)
{
    if (!ctx || !ctx->memory)
        return PRISM_ERROR_INVALID_ARGUMENT;
    if (!isfinite(threshold) || threshold < 0 || threshold >= 18446744073709551616.0)
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                            "mempool release threshold %g: not a fraction in (0, 1] nor bytes",
                            threshold);
    /* Warp's convention: (0, 1] is a fraction of the device's memory. */
    uint64_t bytes = threshold > 0 && threshold <= 1.0
                         ? (uint64_t)(threshold * (double)ctx->device.total_memory)
                         : (uint64_t)threshold;
    return prism__mem(ctx)->mempool_threshold(ctx, &bytes, NULL);
}

prism_result prism_mempool_release_threshold(const prism_context *ctx, uint64_t *bytes)
{
    if (!ctx || !ctx->memory || !bytes)
        return PRISM_ERROR_INVALID_ARGUMENT;
    return prism__mem(ctx)->mempool_threshold((prism_context *)ctx, NULL, bytes);
}

prism_result prism_mempool_usage(const prism_context *ctx, size_t *current, size_t *high)
{
    if (!ctx || !ctx->memory || !current || !high)
        return PRISM_ERROR_INVALID_ARGUMENT;
    return prism__mem(ctx)->mempool_usage((prism_context *)ctx, current, high);
}

prism_result prism_buffer_create_async(prism_context *ctx, size_t size, prism_stream *stream,
                                       const char *tag, prism_buffer **out)
{
    if (!ctx || !out)
        return PRISM_ERROR_INVALID_ARGUMENT;
    *out = NULL;
    if (size == 0)
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT, "async allocation: size 0");
    if (!ctx->memory->mempool_enabled && ctx->backend == PRISM_BACKEND_CUDA)
        return prism_buffer_create_device(ctx, size, tag, out);
    prism__allocation *a = calloc(1, sizeof *a);
    if (!a)
        return prism__error(ctx, PRISM_ERROR_OUT_OF_MEMORY, "async allocation: out of host memory");
    a->kind = PRISM_MEMORY_ASYNC;
    a->bytes = size;
    prism__copy_tag(a->tag, tag);
    prism_result r = prism__mem(ctx)->alloc_async(ctx, a, prism__stream_handle(stream));
    if (r != PRISM_SUCCESS) {
        free(a);
        return r;
    }
    prism__ledger_record(ctx, a);
    return prism__buffer_wrap(ctx, a, size, out);
}

void prism_buffer_release_async(prism_buffer *b, prism_stream *stream)
{
    if (!b)
        return;
    if (b->parent || b->refs != 1 || b->alloc->kind != PRISM_MEMORY_ASYNC) {
        prism_buffer_release(b); /* views, shared or other kinds: the ordinary way */
        return;
    }
    prism_context *ctx = b->ctx;
    prism__allocation *a = b->alloc;
    prism__mem(ctx)->free_async(ctx, a, prism__stream_handle(stream));
    prism__ledger_forget(ctx, a);
    prism__buffer_discard(b);
}
