/* prism_buffer: one object for every kind of memory. Creation per kind,
 * views that share a parent's memory (reference counted, bounds checked),
 * info, fills, copies (synchronous and on a stream) and host maps. The
 * memory itself comes from the ledger, which asks the backend. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

prism_result prism__mapped_not_allowed(prism_context *ctx, const char *what)
{
    return prism__error(ctx, PRISM_ERROR_MAPPED_NOT_ALLOWED,
                        "%s: mapped host memory asked for, but the context was created with "
                        "deny_mapped_memory (kernels could not reach it)",
                        what);
}

prism_result prism__check_host_flags(prism_context *ctx, unsigned flags, unsigned allowed,
                                     const char *what)
{
    if (flags & ~allowed)
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT, "%s: unknown flags 0x%x", what,
                            flags & ~allowed);
    if ((flags & PRISM_HOST_MAPPED) && !ctx->mapped_allowed)
        return prism__mapped_not_allowed(ctx, what);
    return PRISM_SUCCESS;
}

prism_result prism__buffer_wrap(prism_context *ctx, prism__allocation *a, size_t size,
                                prism_buffer **out)
{
    prism_buffer *b = calloc(1, sizeof *b);
    if (!b) {
        prism__ledger_free(ctx, a);
        return prism__error(ctx, PRISM_ERROR_OUT_OF_MEMORY, "buffer: out of host memory");
    }
    struct prism_memory_state *m = ctx->memory;
    b->ctx = ctx;
    b->alloc = a;
    b->size = size;
    b->refs = 1;
    b->next = m->buffers;
    if (m->buffers)
        m->buffers->prev = b;
    m->buffers = b;
    *out = b;
    return PRISM_SUCCESS;
}

static prism_result create(prism_context *ctx, prism_memory_kind kind, unsigned flags, size_t size,
                           const char *tag, void *host, prism_buffer **out, const char *what)
{
    if (!out)
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT, "%s: NULL out", what);
    *out = NULL;
    if (size == 0)
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT, "%s \"%s\": size 0", what,
                            tag ? tag : "untagged");
    prism__allocation *a;
    prism_result r = prism__ledger_alloc(ctx, kind, flags, size, tag, host, &a);
    if (r != PRISM_SUCCESS)
        return r;
    return prism__buffer_wrap(ctx, a, size, out);
}

prism_result prism_buffer_create_device(prism_context *ctx, size_t size, const char *tag,
                                        prism_buffer **out)
{
    if (!ctx)
        return PRISM_ERROR_INVALID_ARGUMENT;
    return create(ctx, PRISM_MEMORY_DEVICE, 0, size, tag, NULL, out, "device memory");
}

prism_result prism_buffer_create_pinned(prism_context *ctx, size_t size, unsigned flags,
                                        const char *tag, prism_buffer **out)
{
    if (!ctx)
        return PRISM_ERROR_INVALID_ARGUMENT;
    unsigned all = PRISM_HOST_PORTABLE | PRISM_HOST_MAPPED | PRISM_HOST_WRITE_COMBINED;
    prism_result r = prism__check_host_flags(ctx, flags, all, "pinned memory");
    if (r != PRISM_SUCCESS)
        return r;
    return create(ctx, PRISM_MEMORY_PINNED, flags, size, tag, NULL, out, "pinned memory");
}

prism_result prism_buffer_register_host(prism_context *ctx, void *pointer, size_t size,
                                        unsigned flags, const char *tag, prism_buffer **out)
{
    if (!ctx)
        return PRISM_ERROR_INVALID_ARGUMENT;
    if (!pointer)
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT, "registered memory: NULL pointer");
    prism_result r = prism__check_host_flags(ctx, flags, PRISM_HOST_PORTABLE | PRISM_HOST_MAPPED,
                                             "registered memory");
    if (r != PRISM_SUCCESS)
        return r;
    return create(ctx, PRISM_MEMORY_REGISTERED, flags, size, tag, pointer, out,
                  "registered memory");
}

prism_result prism__register_begin(prism_context *ctx, void *host, size_t bytes, const char *tag,
                                   prism__allocation **out)
{
    *out = NULL;
    prism__allocation *a = calloc(1, sizeof *a);
    if (!a)
        return PRISM_ERROR_OUT_OF_MEMORY;
    *a = (prism__allocation){
        .kind = PRISM_MEMORY_REGISTERED, .bytes = bytes, .host = host, .quiet = true};
    prism__copy_tag(a->tag, tag);
    const prism_result r = prism__mem(ctx)->alloc(ctx, a);
    a->quiet = false;
    if (r != PRISM_SUCCESS) {
        free(a);
        return r;
    }
    *out = a;
    return PRISM_SUCCESS;
}

prism_result prism__register_end(prism_context *ctx, prism__allocation *a, prism_buffer **out)
{
    prism__ledger_record(ctx, a);
    return prism__buffer_wrap(ctx, a, a->bytes, out);
}

void prism__register_undo(prism_context *ctx, prism__allocation *a)
{
    if (!a)
        return;
    prism__mem(ctx)->free(ctx, a);
    free(a);
}

prism_result prism_buffer_create_managed(prism_context *ctx, size_t size, const char *tag,
                                         prism_buffer **out)
{
    if (!ctx)
        return PRISM_ERROR_INVALID_ARGUMENT;
    size_t free_bytes = 0, total = 0;
    prism_result r = prism_device_memory_info(ctx, &free_bytes, &total);
    if (r != PRISM_SUCCESS)
        return r;
    /* Managed memory beyond free device memory would page behind our back
     * (the very slowdown Prism exists to avoid): refuse it. */
    if (size > free_bytes)
        return prism__error(ctx, PRISM_ERROR_OUT_OF_DEVICE_MEMORY,
                            "managed memory \"%s\": %zu bytes asked, only %zu free on the device; "
                            "refused rather than oversubscribed",
                            tag ? tag : "untagged", size, free_bytes);
    return create(ctx, PRISM_MEMORY_MANAGED, 0, size, tag, NULL, out, "managed memory");
}

prism_result prism_buffer_view(prism_buffer *parent, size_t offset, size_t size, prism_buffer **out)
{
    if (!parent || !out)
        return PRISM_ERROR_INVALID_ARGUMENT;
    *out = NULL;
    prism_result r = prism__buffer_range(parent, offset, size, "view");
    if (r != PRISM_SUCCESS)
        return r;
    if (size == 0)
        return prism__error(parent->ctx, PRISM_ERROR_INVALID_ARGUMENT, "view of \"%s\": size 0",
                            parent->alloc->tag);
    prism_buffer *v = calloc(1, sizeof *v);
    if (!v)
        return prism__error(parent->ctx, PRISM_ERROR_OUT_OF_MEMORY, "view: out of host memory");
    struct prism_memory_state *m = parent->ctx->memory;
    *v = (prism_buffer){.ctx = parent->ctx,
                        .parent = parent,
                        .alloc = parent->alloc,
                        .offset = parent->offset + offset,
                        .size = size,
                        .refs = 1,
                        .gl = parent->gl};
    parent->refs++;
    v->next = m->buffers;
    if (m->buffers)
        m->buffers->prev = v;
    m->buffers = v;
    *out = v;
    return PRISM_SUCCESS;
}

static void unlink_buffer(prism_buffer *b)
{
    struct prism_memory_state *m = b->ctx->memory;
    if (b->prev)
        b->prev->next = b->next;
    else
        m->buffers = b->next;
    if (b->next)
        b->next->prev = b->prev;
}

void prism__buffer_discard(prism_buffer *b)
{
    unlink_buffer(b);
    if (!b->parent && b->gl)
        free(b->gl);
    free(b);
}

static void free_memory(prism_buffer *b)
{
    prism_context *ctx = b->ctx;
    if (b->map_copy)
        prism__ledger_free(ctx, b->map_copy);
    if (b->gl)
        prism__gl_release(b);
    if (b->pool) {
        prism__pool_give_back(b->pool, b->alloc, b->size);
    } else if (b->alloc->kind == PRISM_MEMORY_ASYNC) {
        prism__mem(ctx)->free_async(ctx, b->alloc, NULL);
        prism__ledger_forget(ctx, b->alloc);
    } else {
        prism__ledger_free(ctx, b->alloc);
    }
}

static void drop(prism_buffer *b)
{
    while (b && --b->refs == 0) {
        prism_buffer *parent = b->parent;
        if (!parent)
            free_memory(b);
        unlink_buffer(b);
        free(b);
        b = parent;
    }
}

void prism_buffer_release(prism_buffer *b)
{
    if (!b)
        return;
    if (b->mapped && b->map_copy) {
        prism__ledger_free(b->ctx, b->map_copy); /* an unfinished map is dropped */
        b->map_copy = NULL;
    }
    drop(b);
}

prism_result prism_buffer_info_get(const prism_buffer *b, prism_buffer_info *info)
{
    if (!b || !info)
        return PRISM_ERROR_INVALID_ARGUMENT;
    const prism__allocation *a = b->alloc;
    *info = (prism_buffer_info){
        .kind = a->kind,
        .flags = a->flags,
        .size = b->size,
        .host_pointer = a->host ? (char *)a->host + b->offset : NULL,
        .device_pointer = a->device ? (char *)a->device + b->offset : NULL,
        .tag = a->tag,
        .offset = b->offset,
        .is_view = b->parent != NULL,
        .pooled = b->pool != NULL || (b->parent && b->parent->pool),
    };
    return PRISM_SUCCESS;
}

size_t prism_buffer_size(const prism_buffer *b)
{
    return b ? b->size : 0;
}

void *prism_buffer_device_pointer(const prism_buffer *b)
{
    return b && b->alloc->device ? (char *)b->alloc->device + b->offset : NULL;
}

void *prism_buffer_host_pointer(const prism_buffer *b)
{
    return b && b->alloc->host ? (char *)b->alloc->host + b->offset : NULL;
}

void *prism__buffer_address(const prism_buffer *b, size_t offset)
{
    const prism__allocation *a = b->alloc;
    char *base;
    switch (a->kind) {
    case PRISM_MEMORY_DEVICE:
    case PRISM_MEMORY_ASYNC:
    case PRISM_MEMORY_MANAGED:
    case PRISM_MEMORY_GL: base = a->device; break;
    default: base = a->host; break;
    }
    return base ? base + b->offset + offset : NULL;
}

prism_result prism__buffer_range(const prism_buffer *b, size_t offset, size_t size,
                                 const char *what)
{
    if (offset <= b->size && size <= b->size - offset)
        return PRISM_SUCCESS;
    return prism__error(b->ctx, PRISM_ERROR_OUT_OF_RANGE,
                        "%s of \"%s\": bytes [%zu, +%zu) outside the buffer's %zu bytes", what,
                        b->alloc->tag, offset, size, b->size);
}
