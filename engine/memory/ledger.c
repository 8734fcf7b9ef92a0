/* The per-context ledger: every allocation of every kind is recorded here
 * with a tag, so the context can report its memory by kind and tag, and so
 * destroying a context with live allocations is an error that names them
 * (then frees each exactly once). Also the memory module's init/shutdown. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

prism_result prism__memory_init(prism_context *ctx)
{
    struct prism_memory_state *m = calloc(1, sizeof *m);
    if (!m)
        return prism__error(ctx, PRISM_ERROR_OUT_OF_MEMORY, "memory state: out of host memory");
    m->next_id = 1;
    ctx->memory = m;
    /* Warp's default: the stream-ordered allocator on where supported. */
    m->mempool_enabled = prism__mem(ctx)->mempool_supported(ctx);
    return PRISM_SUCCESS;
}

static void log_live(prism_context *ctx, const prism__allocation *a)
{
    prism__log(ctx, PRISM_LOG_ERROR, "live allocation #%llu: \"%s\" %s, %zu bytes",
               (unsigned long long)a->id, a->tag, prism_memory_kind_name(a->kind), a->bytes);
}

prism_result prism__memory_shutdown(prism_context *ctx)
{
    struct prism_memory_state *m = ctx->memory;
    if (!m)
        return PRISM_SUCCESS;
    /* Pools hold blocks as a cache, not as the caller's memory: free them
     * first, so that only what the caller still holds is reported. */
    for (prism_pool *p = m->pools; p; p = p->next)
        prism_pool_free_held(p);
    size_t live = 0, bytes = 0;
    for (prism__allocation *a = m->allocations; a; a = a->next) {
        if (a->kind == PRISM_MEMORY_STAGING)
            continue; /* belongs to a live buffer's map: reported with it */
        log_live(ctx, a);
        live++;
        bytes += a->bytes;
    }
    prism_result r = PRISM_SUCCESS;
    if (live)
        r = prism__error(ctx, PRISM_ERROR_LIVE_ALLOCATIONS,
                         "context destroyed with %zu live allocation%s (%zu bytes): release "
                         "buffers, pools and geometries first",
                         live, live == 1 ? "" : "s", bytes);
    while (m->buffers)
        prism__buffer_discard(m->buffers);
    while (m->pools)
        prism__pool_discard(m->pools);
    while (m->streams)
        prism__stream_discard(m->streams);
    while (m->allocations)
        prism__ledger_free(ctx, m->allocations);
    free(m);
    ctx->memory = NULL;
    return r;
}

void prism__copy_tag(char *dst, const char *tag)
{
    snprintf(dst, PRISM__TAG_SIZE, "%s", tag && *tag ? tag : "untagged");
}

void prism__ledger_retag(prism__allocation *a, const char *tag)
{
    prism__copy_tag(a->tag, tag);
}

static void count(struct prism_memory_state *m, const prism__allocation *a, int sign)
{
    prism_memory_usage *k = &m->by_kind[a->kind];
    if (sign > 0) {
        k->bytes += a->bytes, k->count++;
        m->total.bytes += a->bytes, m->total.count++;
        if (m->total.bytes > m->peak_bytes)
            m->peak_bytes = m->total.bytes;
    } else {
        k->bytes -= a->bytes, k->count--;
        m->total.bytes -= a->bytes, m->total.count--;
    }
}

void prism__ledger_record(prism_context *ctx, prism__allocation *a)
{
    struct prism_memory_state *m = ctx->memory;
    a->id = m->next_id++;
    a->prev = NULL;
    a->next = m->allocations;
    if (m->allocations)
        m->allocations->prev = a;
    m->allocations = a;
    count(m, a, +1);
}

void prism__memory_inject_device_failures(prism_context *ctx, unsigned count)
{
    ctx->memory->inject_device_failures = count;
}

static prism_result inject(prism_context *ctx, const prism__allocation *a)
{
    struct prism_memory_state *m = ctx->memory;
    if (a->kind != PRISM_MEMORY_DEVICE || m->inject_device_failures == 0)
        return PRISM_SUCCESS;
    m->inject_device_failures--;
    return prism__error(ctx, PRISM_ERROR_OUT_OF_DEVICE_MEMORY,
                        "device memory \"%s\": %zu bytes: out of memory (injected by a test)",
                        a->tag, a->bytes);
}

prism_result prism__ledger_alloc(prism_context *ctx, prism_memory_kind kind, unsigned flags,
                                 size_t bytes, const char *tag, void *host, prism__allocation **out)
{
    *out = NULL;
    prism__allocation *a = calloc(1, sizeof *a);
    if (!a)
        return prism__error(ctx, PRISM_ERROR_OUT_OF_MEMORY, "ledger: out of host memory");
    a->kind = kind;
    a->flags = flags;
    a->bytes = bytes;
    a->host = host;
    prism__copy_tag(a->tag, tag);
    prism_result r = inject(ctx, a);
    if (r == PRISM_SUCCESS)
        r = prism__mem(ctx)->alloc(ctx, a);
    if (r != PRISM_SUCCESS) {
        free(a);
        return r;
    }
    prism__ledger_record(ctx, a);
    *out = a;
    return PRISM_SUCCESS;
}

void prism__ledger_forget(prism_context *ctx, prism__allocation *a)
{
    struct prism_memory_state *m = ctx->memory;
    if (a->prev)
        a->prev->next = a->next;
    else
        m->allocations = a->next;
    if (a->next)
        a->next->prev = a->prev;
    count(m, a, -1);
    free(a);
}

void prism__ledger_free(prism_context *ctx, prism__allocation *a)
{
    if (!a)
        return;
    prism__mem(ctx)->free(ctx, a);
    prism__ledger_forget(ctx, a);
}

/* ---- the report */

static void add_tag(prism_memory_report *r, const prism__allocation *a)
{
    for (size_t i = 0; i < r->tags_count; i++) {
        prism_memory_tag_usage *t = &r->tags[i];
        if (t->kind == a->kind && strcmp(t->tag, a->tag) == 0) {
            t->bytes += a->bytes, t->count++;
            return;
        }
    }
    if (r->tags_count == PRISM_MEMORY_REPORT_TAGS) {
        r->tags_truncated = true;
        return;
    }
    prism_memory_tag_usage *t = &r->tags[r->tags_count++];
    memcpy(t->tag, a->tag, sizeof t->tag);
    t->kind = a->kind;
    t->bytes = a->bytes;
    t->count = 1;
}

static int by_bytes_desc(const void *pa, const void *pb)
{
    const prism_memory_tag_usage *a = pa, *b = pb;
    if (a->bytes != b->bytes)
        return a->bytes < b->bytes ? 1 : -1;
    int c = strcmp(a->tag, b->tag);
    return c ? c : (int)a->kind - (int)b->kind;
}

prism_result prism_memory_report_get(const prism_context *cctx, prism_memory_report *r)
{
    if (!cctx || !r || !cctx->memory)
        return PRISM_ERROR_INVALID_ARGUMENT;
    prism_context *ctx = (prism_context *)cctx; /* mem_info binds the device */
    const struct prism_memory_state *m = ctx->memory;
    memset(r, 0, sizeof *r);
    memcpy(r->by_kind, m->by_kind, sizeof r->by_kind);
    r->total = m->total;
    r->peak_bytes = m->peak_bytes;
    for (const prism__allocation *a = m->allocations; a; a = a->next)
        add_tag(r, a);
    qsort(r->tags, r->tags_count, sizeof r->tags[0], by_bytes_desc);
    for (const prism_pool *p = m->pools; p; p = p->next)
        for (const prism__block *b = p->held; b; b = b->next)
            r->pool_held_bytes += b->alloc->bytes;
    return prism_device_memory_info(ctx, &r->device_free, &r->device_total);
}

size_t prism_memory_report_format(const prism_memory_report *r, char *buf, size_t size)
{
    size_t n = 0;
#define OUT(...) prism__appendf(buf, size, &n, __VA_ARGS__)
    if (size)
        buf[0] = 0;
    if (!r)
        return 0;
    OUT("memory: %zu bytes in %zu allocations (peak %zu), pools hold %zu; device %zu free of %zu\n",
        r->total.bytes, r->total.count, r->peak_bytes, r->pool_held_bytes, r->device_free,
        r->device_total);
    for (int k = 0; k < PRISM_MEMORY_KIND_COUNT; k++)
        if (r->by_kind[k].count)
            OUT("  %-10s %14zu bytes %6zu allocations\n", prism_memory_kind_name(k),
                r->by_kind[k].bytes, r->by_kind[k].count);
    for (size_t i = 0; i < r->tags_count; i++)
        OUT("  %-24s %-10s %14zu bytes %6zu\n", r->tags[i].tag,
            prism_memory_kind_name(r->tags[i].kind), r->tags[i].bytes, r->tags[i].count);
    if (r->tags_truncated)
        OUT("  (more tags than the report holds)\n");
#undef OUT
    return n;
}

const char *prism_memory_kind_name(prism_memory_kind kind)
{
    static const char *const names[PRISM_MEMORY_KIND_COUNT] = {"device", "pinned",  "registered",
                                                               "gl",     "managed", "async",
                                                               "staging"};
    return (unsigned)kind < PRISM_MEMORY_KIND_COUNT ? names[kind] : "?";
}

prism_result prism_device_memory_info(prism_context *ctx, size_t *free_bytes, size_t *total_bytes)
{
    if (!ctx || !ctx->memory || !free_bytes || !total_bytes)
        return PRISM_ERROR_INVALID_ARGUMENT;
    return prism__mem(ctx)->mem_info(ctx, free_bytes, total_bytes);
}
