/* prism_pinned_allocator: a scene's world arrays in pinned host memory of a
 * context, so that they are born where the upload copies them from (one
 * DMA each, no staging copy); and the question the upload asks of a host
 * pointer: does it lie in pinned memory this context knows? */
#include <string.h>

#include "internal.h"

/* Each block starts with its buffer; the caller's bytes follow at an offset
 * that keeps them 64-byte aligned. */
#define PINNED_HEADER 64

static void *pinned_allocate(void *user, size_t bytes)
{
    prism_context *ctx = user;
    prism_buffer *b = NULL;
    if (bytes > SIZE_MAX - PINNED_HEADER ||
        prism_buffer_create_pinned(ctx, bytes + PINNED_HEADER, PRISM_HOST_PORTABLE, "scene.arrays",
                                   &b) != PRISM_SUCCESS)
        return NULL; /* the loader reports out of memory; the context's message says why */
    unsigned char *p = prism_buffer_host_pointer(b);
    memcpy(p, &b, sizeof b);
    return p + PINNED_HEADER;
}

static void pinned_release(void *user, void *pointer, size_t bytes)
{
    (void)user;
    (void)bytes;
    prism_buffer *b;
    memcpy(&b, (unsigned char *)pointer - PINNED_HEADER, sizeof b);
    prism_buffer_release(b);
}

prism_result prism_pinned_allocator(prism_context *ctx, prism_allocator *out)
{
    if (!ctx || !out)
        return ctx ? prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT, "pinned allocator: NULL out")
                   : PRISM_ERROR_INVALID_ARGUMENT;
    *out = (prism_allocator){pinned_allocate, pinned_release, ctx};
    return PRISM_SUCCESS;
}

bool prism__host_pinned(const prism_context *ctx, const void *pointer, size_t bytes)
{
    if (!ctx || !pointer || ctx->backend != PRISM_BACKEND_CUDA)
        return false;
    const unsigned char *p = pointer;
    for (const prism__allocation *a = ctx->memory->allocations; a; a = a->next) {
        if ((a->kind != PRISM_MEMORY_PINNED && a->kind != PRISM_MEMORY_REGISTERED) || !a->host)
            continue;
        const unsigned char *lo = a->host;
        if (p >= lo && bytes <= a->bytes && (size_t)(p - lo) <= a->bytes - bytes)
            return true;
    }
    return false;
}
