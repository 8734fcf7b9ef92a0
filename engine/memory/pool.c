/* Device and pinned memory pools, the C versions of PyCUDA's
 * DeviceMemoryPool and PageLockedMemoryPool: requests are rounded up to size
 * classes, released blocks are held for the next request of their class,
 * and an allocation failure frees the held blocks and retries once. Held
 * blocks stay in the ledger under "<tag>.held", so the report shows them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Size classes: 4, 5, 6 or 7 times a power of two (at most 25% slack), at
 * least 256 bytes, as PyCUDA's bins with two mantissa bits. */
size_t prism_pool_block_size(size_t size)
{
    if (size <= 256)
        return 256;
    unsigned shift = 0;
    while ((size - 1) >> shift >= 8)
        shift++;
    /* (size-1) >> shift is in [4, 7]: the next class is one step above it */
    size_t mantissa = ((size - 1) >> shift) + 1;
    if (mantissa > 7) /* 8 << s == 4 << (s+1) */
        return shift + 3 < sizeof(size_t) * 8 ? (size_t)8 << shift : SIZE_MAX;
    size_t block = mantissa << shift;
    return block >= size ? block : SIZE_MAX;
}

prism_result prism_pool_create(prism_context *ctx, const prism_pool_desc *desc, prism_pool **out)
{
    if (!ctx || !out)
        return PRISM_ERROR_INVALID_ARGUMENT;
    *out = NULL;
    prism_pool_desc d = desc ? *desc : (prism_pool_desc){0};
    if ((unsigned)d.kind > PRISM_POOL_PINNED)
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT, "pool: unknown kind %d", d.kind);
    if (d.kind == PRISM_POOL_PINNED) {
        unsigned all = PRISM_HOST_PORTABLE | PRISM_HOST_MAPPED | PRISM_HOST_WRITE_COMBINED;
        prism_result r = prism__check_host_flags(ctx, d.host_flags, all, "pinned pool");
        if (r != PRISM_SUCCESS)
            return r;
    }
    prism_pool *p = calloc(1, sizeof *p);
    if (!p)
        return prism__error(ctx, PRISM_ERROR_OUT_OF_MEMORY, "pool: out of host memory");
    struct prism_memory_state *m = ctx->memory;
    p->ctx = ctx;
    p->kind = d.kind;
    p->host_flags = d.kind == PRISM_POOL_PINNED ? d.host_flags : 0;
    p->holding = true;
    prism__copy_tag(p->tag, d.tag && *d.tag ? d.tag : "pool");
    snprintf(p->held_tag, sizeof p->held_tag, "%.42s.held", p->tag);
    p->next = m->pools;
    if (m->pools)
        m->pools->prev = p;
    m->pools = p;
    *out = p;
    return PRISM_SUCCESS;
}

static void unlink_pool(prism_pool *p)
{
    struct prism_memory_state *m = p->ctx->memory;
    if (p->prev)
        p->prev->next = p->next;
    else
        m->pools = p->next;
    if (p->next)
        p->next->prev = p->prev;
}

/* Context shutdown: the held blocks are gone already, the active ones are
 * the ledger's to free. */
void prism__pool_discard(prism_pool *p)
{
    unlink_pool(p);
    while (p->held) {
        prism__block *b = p->held;
        p->held = b->next;
        free(b);
    }
    free(p);
}

void prism_pool_free_held(prism_pool *p)
{
    if (!p)
        return;
    while (p->held) {
        prism__block *b = p->held;
        p->held = b->next;
        p->stats.managed_bytes -= b->alloc->bytes;
        p->stats.held_blocks--;
        prism__ledger_free(p->ctx, b->alloc);
        free(b);
    }
}

void prism_pool_stop_holding(prism_pool *p)
{
    if (!p)
        return;
    p->holding = false;
    prism_pool_free_held(p);
}

void prism_pool_destroy(prism_pool *p)
{
    if (!p)
        return;
    prism_pool_stop_holding(p);
    p->destroyed = true;
    if (p->stats.active_blocks == 0)
        prism__pool_discard(p);
}

static prism__allocation *take_held(prism_pool *p, size_t block)
{
    for (prism__block **link = &p->held; *link; link = &(*link)->next) {
        prism__block *b = *link;
        if (b->alloc->bytes != block)
            continue;
        *link = b->next;
        prism__allocation *a = b->alloc;
        free(b);
        p->stats.held_blocks--;
        return a;
    }
    return NULL;
}

static prism_result new_block(prism_pool *p, size_t block, const char *tag, prism__allocation **a)
{
    prism_memory_kind kind = p->kind == PRISM_POOL_DEVICE ? PRISM_MEMORY_DEVICE
                                                          : PRISM_MEMORY_PINNED;
    prism_result r = prism__ledger_alloc(p->ctx, kind, p->host_flags, block, tag, NULL, a);
    if (r == PRISM_SUCCESS || p->stats.held_blocks == 0 ||
        (r != PRISM_ERROR_OUT_OF_DEVICE_MEMORY && r != PRISM_ERROR_OUT_OF_MEMORY))
        return r;
    prism__log(p->ctx, PRISM_LOG_INFO,
               "pool \"%s\": allocation of %zu bytes failed; freeing %zu held blocks and retrying",
               p->tag, block, p->stats.held_blocks);
    prism_pool_free_held(p);
    r = prism__ledger_alloc(p->ctx, kind, p->host_flags, block, tag, NULL, a);
    if (r == PRISM_SUCCESS)
        p->ctx->last_error[0] = 0; /* the first failure was recovered */
    return r;
}

prism_result prism_pool_allocate(prism_pool *p, size_t size, const char *tag, prism_buffer **out)
{
    if (!p || !out)
        return PRISM_ERROR_INVALID_ARGUMENT;
    *out = NULL;
    if (size == 0 || p->destroyed)
        return prism__error(p->ctx, PRISM_ERROR_INVALID_ARGUMENT, "pool \"%s\": %s", p->tag,
                            size == 0 ? "size 0" : "allocation from a destroyed pool");
    size_t block = prism_pool_block_size(size);
    if (block == SIZE_MAX)
        return prism__error(p->ctx, PRISM_ERROR_OUT_OF_RANGE, "pool \"%s\": %zu bytes is too large",
                            p->tag, size);
    prism__allocation *a = take_held(p, block);
    if (a) {
        prism__ledger_retag(a, tag);
    } else {
        prism_result r = new_block(p, block, tag, &a);
        if (r != PRISM_SUCCESS)
            return r;
        p->stats.managed_bytes += block;
    }
    prism_result r = prism__buffer_wrap(p->ctx, a, size, out);
    if (r != PRISM_SUCCESS) {
        p->stats.managed_bytes -= block; /* wrap freed the block */
        return r;
    }
    (*out)->pool = p;
    p->stats.active_blocks++;
    p->stats.active_bytes += size;
    return PRISM_SUCCESS;
}

void prism__pool_give_back(prism_pool *p, prism__allocation *a, size_t asked)
{
    p->stats.active_blocks--;
    p->stats.active_bytes -= asked;
    prism__block *b = p->holding ? malloc(sizeof *b) : NULL;
    if (b) {
        prism__ledger_retag(a, p->held_tag);
        b->alloc = a;
        b->next = p->held;
        p->held = b;
        p->stats.held_blocks++;
    } else {
        p->stats.managed_bytes -= a->bytes;
        prism__ledger_free(p->ctx, a);
    }
    if (p->destroyed && p->stats.active_blocks == 0)
        prism__pool_discard(p);
}

prism_result prism_pool_stats_get(const prism_pool *p, prism_pool_stats *stats)
{
    if (!p || !stats)
        return PRISM_ERROR_INVALID_ARGUMENT;
    *stats = p->stats;
    return PRISM_SUCCESS;
}
