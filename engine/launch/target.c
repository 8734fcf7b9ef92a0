/* Resolving kernel outputs to pointers the backend can write, and the
 * per-call scratch memory (see target.h). */
#include "target.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_state.h"

static bool on_cuda(const prism_context *ctx)
{
    return ctx->backend == PRISM_BACKEND_CUDA;
}

static prism_result scratch_new(prism_context *ctx, prism__scratch *s, size_t size,
                                const char *tag);

/* A held block of `tag` for `size` bytes, made or grown as needed; NULL
 * when the context holds none now or all its places are taken. */
static prism__kept *kept_block(prism_context *ctx, size_t size, const char *tag, prism_result *r)
{
    struct prism_kernel_state *k = ctx->kernels;
    *r = PRISM_SUCCESS;
    if (k == NULL || k->keeping == 0)
        return NULL;
    prism__kept *fit = NULL, *same = NULL, *empty = NULL;
    for (int i = 0; i < PRISM__KEPT_BLOCKS; i++) {
        prism__kept *b = &k->kept[i];
        if (b->busy)
            continue;
        if (b->size == 0) {
            empty = empty != NULL ? empty : b;
        } else if (strcmp(b->tag, tag) == 0) {
            if (b->size >= size && (fit == NULL || b->size < fit->size))
                fit = b;
            same = same != NULL ? same : b;
        }
    }
    prism__kept *b = fit != NULL ? fit : same != NULL ? same : empty;
    if (b == NULL)
        return NULL;
    if (b->size < size) { /* too small, or new: (re)made at this size */
        if (b->size > 0)
            prism__scratch_release(&b->scratch);
        b->size = 0;
        *r = scratch_new(ctx, &b->scratch, size, tag);
        if (*r != PRISM_SUCCESS)
            return NULL;
        b->size = size;
        snprintf(b->tag, sizeof b->tag, "%s", tag);
    }
    b->busy = true;
    return b;
}

void prism__scratch_keep(prism_context *ctx, bool on)
{
    struct prism_kernel_state *k = ctx != NULL ? ctx->kernels : NULL;
    if (k == NULL)
        return;
    if (on) {
        k->keeping++;
        return;
    }
    if (k->keeping > 0 && --k->keeping > 0)
        return;
    for (int i = 0; i < PRISM__KEPT_BLOCKS; i++)
        if (k->kept[i].size > 0 && !k->kept[i].busy) {
            prism__scratch_release(&k->kept[i].scratch);
            memset(&k->kept[i], 0, sizeof k->kept[i]);
        }
}

prism_result prism__scratch_alloc(prism_context *ctx, prism__scratch *s, size_t size,
                                  const char *tag)
{
    memset(s, 0, sizeof *s);
    if (size == 0)
        size = 1;
    prism_result r;
    prism__kept *b = kept_block(ctx, size, tag, &r);
    if (r != PRISM_SUCCESS)
        return r;
    if (b != NULL) {
        *s = b->scratch;
        s->kept = b;
        return PRISM_SUCCESS;
    }
    return scratch_new(ctx, s, size, tag);
}

static prism_result scratch_new(prism_context *ctx, prism__scratch *s, size_t size, const char *tag)
{
    memset(s, 0, sizeof *s);
    if (!on_cuda(ctx)) {
        s->pointer = malloc(size);
        s->heap = true;
        return s->pointer != NULL ? PRISM_SUCCESS
                                  : prism__error(ctx, PRISM_ERROR_OUT_OF_MEMORY,
                                                 "%s: %zu bytes of scratch", tag, size);
    }
    prism_result r = prism_buffer_create_device(ctx, size, tag, &s->buffer);
    if (r == PRISM_SUCCESS)
        s->pointer = prism_buffer_device_pointer(s->buffer);
    return r;
}

prism_result prism__scratch_upload(prism_context *ctx, prism__scratch *s, const void *host,
                                   size_t size, const char *tag)
{
    prism_result r = prism__scratch_alloc(ctx, s, size, tag);
    if (r != PRISM_SUCCESS)
        return r;
    if (s->heap) {
        memcpy(s->pointer, host, size);
        return PRISM_SUCCESS;
    }
    return prism_buffer_write(s->buffer, 0, host, size);
}

prism_result prism__scratch_read(prism_context *ctx, const prism__scratch *s, size_t offset,
                                 void *host, size_t size)
{
    (void)ctx;
    if (s->heap) {
        memcpy(host, (const char *)s->pointer + offset, size);
        return PRISM_SUCCESS;
    }
    return prism_buffer_read(s->buffer, offset, host, size);
}

void prism__scratch_release(prism__scratch *s)
{
    if (s->kept != NULL) { /* back to its context's hold */
        s->kept->busy = false;
        memset(s, 0, sizeof *s);
        return;
    }
    if (s->heap)
        free(s->pointer);
    else
        prism_buffer_release(s->buffer);
    memset(s, 0, sizeof *s);
}

static prism_result stage(prism_context *ctx, prism__target_map *m, const char *what)
{
    m->staged = true;
    m->row_bytes = m->width_bytes;
    prism_result r = prism__scratch_alloc(ctx, &m->staging, m->width_bytes * m->rows, what);
    m->pointer = m->staging.pointer;
    return r;
}

static prism_result begin_host(prism_context *ctx, prism__target_map *m, const char *what)
{
    const prism_target *t = &m->target;
    if (t->host == NULL) {
        m->discard = true;
        return stage(ctx, m, what);
    }
    m->row_bytes = t->row_bytes == 0 ? m->width_bytes : t->row_bytes;
    if (m->row_bytes < m->width_bytes || m->row_bytes % 4 != 0)
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                            "%s: row_bytes %zu is below the row's %zu bytes or not a multiple of 4",
                            what, m->row_bytes, m->width_bytes);
    if (on_cuda(ctx))
        return stage(ctx, m, what);
    m->pointer = t->host;
    return PRISM_SUCCESS;
}

static prism_result begin_buffer(prism_context *ctx, prism__target_map *m, const char *what)
{
    const prism_target *t = &m->target;
    prism_buffer_info info;
    prism_result r = prism_buffer_info_get(t->buffer, &info);
    if (r != PRISM_SUCCESS)
        return r;
    m->row_bytes = t->row_bytes == 0 ? m->width_bytes : t->row_bytes;
    size_t need = m->row_bytes * (m->rows - 1) + m->width_bytes;
    if (m->row_bytes < m->width_bytes || m->row_bytes % 4 != 0 || t->offset % 4 != 0)
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                            "%s: row_bytes %zu or offset %zu: rows need %zu bytes, 4-aligned", what,
                            m->row_bytes, t->offset, m->width_bytes);
    if (t->offset > info.size || need > info.size - t->offset)
        return prism__error(ctx, PRISM_ERROR_OUT_OF_RANGE,
                            "%s: %zu bytes at offset %zu do not fit a buffer of %zu bytes", what,
                            need, t->offset, info.size);
    void *base = NULL;
    if (info.kind == PRISM_MEMORY_GL) {
        r = prism_buffer_gl_map(t->buffer, NULL, &base);
        if (r != PRISM_SUCCESS)
            return r;
        m->gl_mapped = true;
        m->interop = prism_buffer_gl_interop(t->buffer);
    } else {
        base = info.device_pointer;
        if (base == NULL && !on_cuda(ctx))
            base = info.host_pointer;
    }
    if (base == NULL)
        return stage(ctx, m, what); /* e.g. pinned memory that is not mapped */
    m->pointer = (char *)base + t->offset;
    return PRISM_SUCCESS;
}

prism_result prism__target_begin(prism_context *ctx, const prism_target *t, size_t width_bytes,
                                 size_t rows, const char *what, prism__target_map *map)
{
    memset(map, 0, sizeof *map);
    map->width_bytes = width_bytes;
    map->rows = rows;
    if (t == NULL)
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT, "%s: NULL target", what);
    map->target = *t;
    if (t->kind == PRISM_TARGET_HOST)
        return begin_host(ctx, map, what);
    if (t->kind != PRISM_TARGET_BUFFER || t->buffer == NULL)
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                            "%s: target kind %d without a buffer", what, (int)t->kind);
    return begin_buffer(ctx, map, what);
}

/* Staging -> target, row by row where the strides differ. */
static prism_result copy_out(prism_context *ctx, prism__target_map *m)
{
    const prism_target *t = &m->target;
    bool whole = m->row_bytes == m->width_bytes;
    size_t target_row = t->row_bytes == 0 ? m->width_bytes : t->row_bytes;
    bool contiguous = target_row == m->width_bytes;
    prism_result r = PRISM_SUCCESS;
    for (size_t row = 0; row < m->rows && r == PRISM_SUCCESS; row++) {
        size_t n = contiguous && whole ? m->width_bytes * m->rows : m->width_bytes;
        size_t src = row * m->width_bytes, dst = row * target_row;
        if (t->kind == PRISM_TARGET_HOST)
            r = prism__scratch_read(ctx, &m->staging, src, (char *)t->host + dst, n);
        else if (m->staging.heap)
            r = prism_buffer_write(t->buffer, t->offset + dst, (char *)m->staging.pointer + src, n);
        else
            r = prism_buffer_copy(t->buffer, t->offset + dst, m->staging.buffer, src, n);
        if (contiguous && whole)
            break;
    }
    return r;
}

prism_result prism__target_end(prism_context *ctx, prism__target_map *map, bool ok)
{
    prism_result r = PRISM_SUCCESS;
    if (ok && map->staged && !map->discard)
        r = copy_out(ctx, map);
    if (map->gl_mapped) {
        prism_result u = prism_buffer_gl_unmap(map->target.buffer, NULL);
        if (r == PRISM_SUCCESS)
            r = u;
    }
    if (map->staged)
        prism__scratch_release(&map->staging);
    return r;
}
