/* OpenGL buffers as prism_buffers. With CUDA-GL interop the buffer is
 * registered and mapping gives its device pointer. Without it (host backend,
 * Mesa, GL on another GPU) the context says so once and takes the copy path:
 * kernels write a staging buffer and unmap sends it to GL with
 * glBufferSubData, the GL functions coming from the caller's loader, so
 * libprism links no GL. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/upload/geometry_internal.h"
#include "internal.h"

/* The few GL names the copy path needs (values from the GL registry). */
#define PRISM_GL_ARRAY_BUFFER 0x8892u
#define PRISM_GL_ARRAY_BUFFER_BINDING 0x8894u

typedef void (*gl_bind_buffer_fn)(unsigned target, unsigned buffer);
typedef void (*gl_buffer_sub_data_fn)(unsigned target, ptrdiff_t offset, ptrdiff_t size,
                                      const void *data);
typedef void (*gl_get_buffer_sub_data_fn)(unsigned target, ptrdiff_t offset, ptrdiff_t size,
                                          void *data);
typedef void (*gl_get_integerv_fn)(unsigned pname, int *data);
typedef unsigned (*gl_get_error_fn)(void);

struct prism__gl_state {
    unsigned name;
    bool interop;
    bool mapped;
    prism__allocation *staging; /* what kernels write on the copy path */
    prism__allocation *bounce;  /* CUDA: host copy of staging for GL */
    gl_bind_buffer_fn bind_buffer;
    gl_buffer_sub_data_fn buffer_sub_data;
    gl_get_buffer_sub_data_fn get_buffer_sub_data;
    gl_get_integerv_fn get_integerv;
    gl_get_error_fn get_error;
};

static prism_result load_gl(prism_context *ctx, prism__gl_state *g,
                            prism_gl_get_proc_address_fn gpa)
{
    g->bind_buffer = (gl_bind_buffer_fn)gpa("glBindBuffer");
    g->buffer_sub_data = (gl_buffer_sub_data_fn)gpa("glBufferSubData");
    g->get_buffer_sub_data = (gl_get_buffer_sub_data_fn)gpa("glGetBufferSubData");
    g->get_integerv = (gl_get_integerv_fn)gpa("glGetIntegerv");
    g->get_error = (gl_get_error_fn)gpa("glGetError");
    if (g->bind_buffer && g->buffer_sub_data && g->get_integerv && g->get_error)
        return PRISM_SUCCESS;
    return prism__error(ctx, PRISM_ERROR_GL,
                        "GL buffer copy path: the loader gave no glBindBuffer, glBufferSubData, "
                        "glGetIntegerv or glGetError (is a GL context current?)");
}

static prism_result copy_path(prism_context *ctx, prism__gl_state *g, size_t size, const char *tag,
                              prism_gl_get_proc_address_fn gpa, const char *why)
{
    if (!gpa)
        return prism__error(ctx, PRISM_ERROR_INTEROP_UNAVAILABLE,
                            "GL buffer \"%s\": CUDA-GL interop unavailable (%s) and no GL loader "
                            "given for the copy path",
                            tag ? tag : "untagged", why);
    prism_result r = load_gl(ctx, g, gpa);
    char stag[PRISM__TAG_SIZE];
    snprintf(stag, sizeof stag, "%.36s.gl-staging", tag ? tag : "untagged");
    if (r == PRISM_SUCCESS)
        r = prism__ledger_alloc(ctx, PRISM_MEMORY_DEVICE, 0, size, stag, NULL, &g->staging);
    if (r == PRISM_SUCCESS && ctx->backend == PRISM_BACKEND_CUDA)
        r = prism__ledger_alloc(ctx, PRISM_MEMORY_STAGING, 0, size, stag, NULL, &g->bounce);
    if (r == PRISM_SUCCESS && !ctx->memory->gl_fallback_logged) {
        ctx->memory->gl_fallback_logged = true;
        prism__log(ctx, PRISM_LOG_WARNING,
                   "CUDA-GL interop unavailable (%s): GL buffers use the copy path "
                   "(glBufferSubData)",
                   why);
    }
    return r;
}

static void free_state(prism_context *ctx, prism__gl_state *g)
{
    prism__ledger_free(ctx, g->staging);
    prism__ledger_free(ctx, g->bounce);
    free(g);
}

/* Wrap and register; without interop, the copy path unless `interop_only`
 * (then PRISM_ERROR_INTEROP_UNAVAILABLE, nothing logged, `why` says why). */
static prism_result create_gl(prism_context *ctx, unsigned gl_buffer, size_t size,
                              prism_gl_flags flags, prism_gl_get_proc_address_fn gpa,
                              const char *tag, bool interop_only, char *why, size_t why_size,
                              prism_buffer **out)
{
    if (!ctx || !out)
        return PRISM_ERROR_INVALID_ARGUMENT;
    *out = NULL;
    if (gl_buffer == 0 || size == 0 || (unsigned)flags > PRISM_GL_WRITE_DISCARD)
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                            "GL buffer \"%s\": buffer %u, size %zu, flags %d: need a GL buffer "
                            "name, a size and a known flag",
                            tag ? tag : "untagged", gl_buffer, size, (int)flags);
    prism__gl_state *g = calloc(1, sizeof *g);
    prism__allocation *a = calloc(1, sizeof *a);
    if (!g || !a) {
        free(g);
        free(a);
        return prism__error(ctx, PRISM_ERROR_OUT_OF_MEMORY, "GL buffer: out of host memory");
    }
    *a = (prism__allocation){.kind = PRISM_MEMORY_GL, .flags = flags, .bytes = size};
    prism__copy_tag(a->tag, tag);
    g->name = gl_buffer;
    g->interop = prism__mem(ctx)->gl_register(ctx, a, gl_buffer, why, why_size) == PRISM_SUCCESS;
    prism_result r = g->interop     ? PRISM_SUCCESS
                     : interop_only ? PRISM_ERROR_INTEROP_UNAVAILABLE
                                    : copy_path(ctx, g, size, tag, gpa, why);
    if (r != PRISM_SUCCESS) {
        prism__mem(ctx)->free(ctx, a);
        free(a);
        free_state(ctx, g);
        return r;
    }
    prism__ledger_record(ctx, a);
    r = prism__buffer_wrap(ctx, a, size, out);
    if (r != PRISM_SUCCESS) {
        free_state(ctx, g);
        return r;
    }
    (*out)->gl = g;
    return PRISM_SUCCESS;
}

prism_result prism_buffer_create_gl(prism_context *ctx, unsigned gl_buffer, size_t size,
                                    prism_gl_flags flags, prism_gl_get_proc_address_fn gpa,
                                    const char *tag, prism_buffer **out)
{
    char why[256] = "";
    return create_gl(ctx, gl_buffer, size, flags, gpa, tag, false, why, sizeof why, out);
}

prism_result prism__buffer_create_gl_interop(prism_context *ctx, unsigned gl_buffer, size_t size,
                                             prism_gl_flags flags, const char *tag, char *why,
                                             size_t why_size, prism_buffer **out)
{
    return create_gl(ctx, gl_buffer, size, flags, NULL, tag, true, why, why_size, out);
}

static prism_result gl_error(prism_context *ctx, prism__gl_state *g, const char *what)
{
    unsigned e = g->get_error();
    if (e == 0)
        return PRISM_SUCCESS;
    return prism__error(ctx, PRISM_ERROR_GL, "GL buffer %u: %s failed with GL error 0x%x", g->name,
                        what, e);
}

/* Copy path, GL -> staging: the kernels see the buffer's current contents. */
static prism_result pull(prism_buffer *b, prism__gl_state *g)
{
    prism_context *ctx = b->ctx;
    if (!g->get_buffer_sub_data)
        return prism__error(ctx, PRISM_ERROR_GL,
                            "GL buffer %u: no glGetBufferSubData (OpenGL ES?): map it "
                            "write-discard",
                            g->name);
    void *host = g->bounce ? g->bounce->host : g->staging->device;
    int previous = 0;
    g->get_integerv(PRISM_GL_ARRAY_BUFFER_BINDING, &previous);
    g->bind_buffer(PRISM_GL_ARRAY_BUFFER, g->name);
    g->get_buffer_sub_data(PRISM_GL_ARRAY_BUFFER, 0, (ptrdiff_t)b->size, host);
    g->bind_buffer(PRISM_GL_ARRAY_BUFFER, (unsigned)previous);
    prism_result r = gl_error(ctx, g, "glGetBufferSubData");
    if (r == PRISM_SUCCESS && g->bounce)
        r = prism__mem(ctx)->copy(ctx, g->staging->device, host, b->size, NULL, false);
    return r;
}

/* Copy path, staging -> GL. */
static prism_result push(prism_buffer *b, prism__gl_state *g, void *stream)
{
    prism_context *ctx = b->ctx;
    prism_result r = prism__mem(ctx)->stream_sync(ctx, stream); /* the kernels are done */
    void *host = g->bounce ? g->bounce->host : g->staging->device;
    if (r == PRISM_SUCCESS && g->bounce)
        r = prism__mem(ctx)->copy(ctx, host, g->staging->device, b->size, NULL, false);
    if (r != PRISM_SUCCESS)
        return r;
    int previous = 0;
    g->get_integerv(PRISM_GL_ARRAY_BUFFER_BINDING, &previous);
    g->bind_buffer(PRISM_GL_ARRAY_BUFFER, g->name);
    g->buffer_sub_data(PRISM_GL_ARRAY_BUFFER, 0, (ptrdiff_t)b->size, host);
    g->bind_buffer(PRISM_GL_ARRAY_BUFFER, (unsigned)previous);
    return gl_error(ctx, g, "glBufferSubData");
}

static prism_result check_gl(const prism_buffer *b, const char *what)
{
    if (!b)
        return PRISM_ERROR_INVALID_ARGUMENT;
    if (!b->gl || b->parent)
        return prism__error(b->ctx, PRISM_ERROR_INVALID_ARGUMENT, "%s of \"%s\": not a GL buffer",
                            what, b->alloc->tag);
    return PRISM_SUCCESS;
}

prism_result prism_buffer_gl_map(prism_buffer *b, prism_stream *stream, void **kernel_pointer)
{
    prism_result r = check_gl(b, "GL map");
    if (r != PRISM_SUCCESS || !kernel_pointer)
        return r != PRISM_SUCCESS ? r : PRISM_ERROR_INVALID_ARGUMENT;
    *kernel_pointer = NULL;
    prism__gl_state *g = b->gl;
    prism_context *ctx = b->ctx;
    if (g->mapped)
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT, "GL map of \"%s\": already mapped",
                            b->alloc->tag);
    if (g->interop) {
        r = prism__mem(ctx)->gl_map(ctx, b->alloc, prism__stream_handle(stream));
    } else {
        if (b->alloc->flags != PRISM_GL_WRITE_DISCARD)
            r = pull(b, g);
        b->alloc->device = g->staging->device;
    }
    if (r != PRISM_SUCCESS) {
        b->alloc->device = NULL;
        return r;
    }
    g->mapped = true;
    *kernel_pointer = b->alloc->device;
    return PRISM_SUCCESS;
}

void *prism__buffer_gl_mapped_pointer(const prism_buffer *b)
{
    return b && b->gl && b->gl->mapped ? b->alloc->device : NULL;
}

prism_result prism_buffer_gl_unmap(prism_buffer *b, prism_stream *stream)
{
    prism_result r = check_gl(b, "GL unmap");
    if (r != PRISM_SUCCESS)
        return r;
    prism__gl_state *g = b->gl;
    prism_context *ctx = b->ctx;
    if (!g->mapped)
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT, "GL unmap of \"%s\": not mapped",
                            b->alloc->tag);
    void *handle = prism__stream_handle(stream);
    if (g->interop)
        r = prism__mem(ctx)->gl_unmap(ctx, b->alloc, handle);
    else if (b->alloc->flags != PRISM_GL_READ_ONLY)
        r = push(b, g, handle);
    g->mapped = false;
    b->alloc->device = NULL;
    return r;
}

bool prism_buffer_gl_interop(const prism_buffer *b)
{
    return b && b->gl && b->gl->interop;
}

void prism__gl_release(prism_buffer *b)
{
    prism__gl_state *g = b->gl;
    if (g->interop && g->mapped)
        prism__mem(b->ctx)->gl_unmap(b->ctx, b->alloc, NULL);
    b->alloc->device = NULL;
    free_state(b->ctx, g);
    b->gl = NULL;
}
