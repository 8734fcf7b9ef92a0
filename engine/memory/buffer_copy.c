/* A buffer's contents: fills with 1..16-byte patterns, copies between host
 * and buffers of any kind (synchronous or on a stream), and host maps of
 * device memory through a staging copy. */
#include <string.h>

#include "internal.h"

static prism_result need_address(const prism_buffer *b, const char *what)
{
    if (prism__buffer_address(b, 0))
        return PRISM_SUCCESS;
    return prism__error(b->ctx, PRISM_ERROR_INVALID_ARGUMENT,
                        "%s of \"%s\": a GL buffer is reachable only while mapped "
                        "(prism_buffer_gl_map)",
                        what, b->alloc->tag);
}

static prism_result fill(prism_buffer *b, size_t offset, size_t size, const void *pattern,
                         size_t pattern_size, prism_stream *stream, bool async)
{
    if (!b)
        return PRISM_ERROR_INVALID_ARGUMENT;
    prism_context *ctx = b->ctx;
    if (!pattern || (pattern_size != 1 && pattern_size != 2 && pattern_size != 4 &&
                     pattern_size != 8 && pattern_size != 16))
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                            "fill of \"%s\": pattern of %zu bytes (1, 2, 4, 8 or 16)",
                            b->alloc->tag, pattern_size);
    if (offset % pattern_size || size % pattern_size)
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                            "fill of \"%s\": offset %zu and size %zu must be multiples of the "
                            "%zu-byte pattern",
                            b->alloc->tag, offset, size, pattern_size);
    prism_result r = prism__buffer_range(b, offset, size, "fill");
    if (r == PRISM_SUCCESS)
        r = need_address(b, "fill");
    if (r != PRISM_SUCCESS || size == 0)
        return r;
    return prism__mem(ctx)->fill(ctx, prism__buffer_address(b, offset), size, pattern, pattern_size,
                                 prism__stream_handle(stream), async);
}

prism_result prism_buffer_fill(prism_buffer *b, size_t offset, size_t size, const void *pattern,
                               size_t pattern_size)
{
    return fill(b, offset, size, pattern, pattern_size, NULL, false);
}

prism_result prism_buffer_fill_async(prism_buffer *b, size_t offset, size_t size,
                                     const void *pattern, size_t pattern_size, prism_stream *stream)
{
    return fill(b, offset, size, pattern, pattern_size, stream, true);
}

static prism_result transfer(prism_buffer *dst, size_t dst_offset, const prism_buffer *src,
                             size_t src_offset, void *host_dst, const void *host_src, size_t size,
                             prism_stream *stream, bool async)
{
    const prism_buffer *any = dst ? dst : src;
    prism_context *ctx = any->ctx;
    prism_result r = PRISM_SUCCESS;
    if (dst && r == PRISM_SUCCESS)
        r = prism__buffer_range(dst, dst_offset, size, "copy into");
    if (src && r == PRISM_SUCCESS)
        r = prism__buffer_range(src, src_offset, size, "copy from");
    if (dst && r == PRISM_SUCCESS)
        r = need_address(dst, "copy into");
    if (src && r == PRISM_SUCCESS)
        r = need_address(src, "copy from");
    if (r != PRISM_SUCCESS || size == 0)
        return r;
    if (dst && src && dst->ctx != src->ctx)
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                            "copy from \"%s\" to \"%s\": buffers of different contexts",
                            src->alloc->tag, dst->alloc->tag);
    void *d = dst ? prism__buffer_address(dst, dst_offset) : host_dst;
    const void *s = src ? prism__buffer_address(src, src_offset) : host_src;
    return prism__mem(ctx)->copy(ctx, d, s, size, prism__stream_handle(stream), async);
}

prism_result prism_buffer_write(prism_buffer *b, size_t offset, const void *src, size_t size)
{
    if (!b || (!src && size))
        return PRISM_ERROR_INVALID_ARGUMENT;
    return transfer(b, offset, NULL, 0, NULL, src, size, NULL, false);
}

prism_result prism_buffer_read(const prism_buffer *b, size_t offset, void *dst, size_t size)
{
    if (!b || (!dst && size))
        return PRISM_ERROR_INVALID_ARGUMENT;
    return transfer(NULL, 0, b, offset, dst, NULL, size, NULL, false);
}

prism_result prism_buffer_copy(prism_buffer *dst, size_t dst_offset, const prism_buffer *src,
                               size_t src_offset, size_t size)
{
    if (!dst || !src)
        return PRISM_ERROR_INVALID_ARGUMENT;
    return transfer(dst, dst_offset, src, src_offset, NULL, NULL, size, NULL, false);
}

prism_result prism_buffer_write_async(prism_buffer *b, size_t offset, const void *src, size_t size,
                                      prism_stream *stream)
{
    if (!b || (!src && size))
        return PRISM_ERROR_INVALID_ARGUMENT;
    return transfer(b, offset, NULL, 0, NULL, src, size, stream, true);
}

prism_result prism_buffer_read_async(const prism_buffer *b, size_t offset, void *dst, size_t size,
                                     prism_stream *stream)
{
    if (!b || (!dst && size))
        return PRISM_ERROR_INVALID_ARGUMENT;
    return transfer(NULL, 0, b, offset, dst, NULL, size, stream, true);
}

prism_result prism_buffer_copy_async(prism_buffer *dst, size_t dst_offset, const prism_buffer *src,
                                     size_t src_offset, size_t size, prism_stream *stream)
{
    if (!dst || !src)
        return PRISM_ERROR_INVALID_ARGUMENT;
    return transfer(dst, dst_offset, src, src_offset, NULL, NULL, size, stream, true);
}

/* ---- host maps */

prism_result prism_buffer_map(prism_buffer *b, prism_map_flags flags, void **host)
{
    if (!b || !host || (unsigned)flags > PRISM_MAP_WRITE_DISCARD)
        return PRISM_ERROR_INVALID_ARGUMENT;
    *host = NULL;
    prism_context *ctx = b->ctx;
    const prism__allocation *a = b->alloc;
    if (a->kind == PRISM_MEMORY_GL)
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                            "map of \"%s\": a GL buffer maps with prism_buffer_gl_map", a->tag);
    if (b->mapped)
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT, "map of \"%s\": already mapped",
                            a->tag);
    if (a->host) {
        /* Host-side memory: the kernels may still be writing it. */
        prism_result r = prism__mem(ctx)->stream_sync(ctx, NULL);
        if (r != PRISM_SUCCESS)
            return r;
        b->mapped = true;
        *host = (char *)a->host + b->offset;
        return PRISM_SUCCESS;
    }
    prism_result r = prism__ledger_alloc(ctx, PRISM_MEMORY_STAGING, 0, b->size, a->tag, NULL,
                                         &b->map_copy);
    if (r == PRISM_SUCCESS && flags != PRISM_MAP_WRITE_DISCARD)
        r = prism__mem(ctx)->copy(ctx, b->map_copy->host, prism__buffer_address(b, 0), b->size,
                                  NULL, false);
    if (r != PRISM_SUCCESS) {
        prism__ledger_free(ctx, b->map_copy);
        b->map_copy = NULL;
        return r;
    }
    b->mapped = true;
    b->map_flags = flags;
    *host = b->map_copy->host;
    return PRISM_SUCCESS;
}

prism_result prism_buffer_unmap(prism_buffer *b)
{
    if (!b)
        return PRISM_ERROR_INVALID_ARGUMENT;
    prism_context *ctx = b->ctx;
    if (!b->mapped)
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT, "unmap of \"%s\": not mapped",
                            b->alloc->tag);
    prism_result r = PRISM_SUCCESS;
    if (b->map_copy && b->map_flags != PRISM_MAP_READ)
        r = prism__mem(ctx)->copy(ctx, prism__buffer_address(b, 0), b->map_copy->host, b->size,
                                  NULL, false);
    prism__ledger_free(ctx, b->map_copy);
    b->map_copy = NULL;
    b->mapped = false;
    return r;
}
