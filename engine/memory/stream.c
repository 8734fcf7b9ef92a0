/* prism_stream: an ordered queue of copies, fills and kernels (a CUDA
 * stream; a token on the host backend, whose work runs at once). The context
 * keeps a list so that its destruction frees forgotten streams. */
#include <stdlib.h>

#include "internal.h"

prism_result prism_stream_create(prism_context *ctx, prism_stream **out)
{
    if (!ctx || !out)
        return PRISM_ERROR_INVALID_ARGUMENT;
    *out = NULL;
    prism_stream *s = calloc(1, sizeof *s);
    if (!s)
        return prism__error(ctx, PRISM_ERROR_OUT_OF_MEMORY, "stream: out of host memory");
    prism_result r = prism__mem(ctx)->stream_create(ctx, &s->handle);
    if (r != PRISM_SUCCESS) {
        free(s);
        return r;
    }
    struct prism_memory_state *m = ctx->memory;
    s->ctx = ctx;
    s->next = m->streams;
    if (m->streams)
        m->streams->prev = s;
    m->streams = s;
    *out = s;
    return PRISM_SUCCESS;
}

void prism__stream_discard(prism_stream *s)
{
    struct prism_memory_state *m = s->ctx->memory;
    if (s->prev)
        s->prev->next = s->next;
    else
        m->streams = s->next;
    if (s->next)
        s->next->prev = s->prev;
    prism__mem(s->ctx)->stream_destroy(s->ctx, s->handle);
    free(s);
}

void prism_stream_destroy(prism_stream *s)
{
    if (s)
        prism__stream_discard(s);
}

prism_result prism_stream_synchronize(prism_stream *s)
{
    if (!s)
        return PRISM_ERROR_INVALID_ARGUMENT;
    return prism__mem(s->ctx)->stream_sync(s->ctx, s->handle);
}

void *prism__stream_handle(const prism_stream *s)
{
    return s ? s->handle : NULL;
}
