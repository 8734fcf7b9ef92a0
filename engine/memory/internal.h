/* The memory module's private shapes: the ledger's allocation records, the
 * buffer, stream and pool objects, the per-context memory state, and the
 * table of backend functions (engine/host/memory.c, engine/cuda/memory.c)
 * that the shared files (ledger.c, buffer.c, pool.c, mempool.c, stream.c,
 * gl_buffer.c, upload.c) call. */
#ifndef PRISM_MEMORY_INTERNAL_H
#define PRISM_MEMORY_INTERNAL_H

#include <stdint.h>

#include "engine/backend.h"
#include "engine/context_internal.h"
#include "prism/memory.h"

#define PRISM__TAG_SIZE 48

/* One allocation in the ledger: the memory the backend gave. */
typedef struct prism__allocation {
    struct prism__allocation *prev, *next;
    prism_memory_kind kind;
    unsigned flags; /* prism_host_flags or prism_gl_flags */
    size_t bytes;   /* bytes held (a pool block's size class) */
    void *host;     /* host pointer, NULL for device memory */
    void *device;   /* kernel pointer, NULL when none */
    void *handle;   /* backend object: cudaGraphicsResource, ... */
    uint64_t id;
    char tag[PRISM__TAG_SIZE];
    bool quiet; /* asked off the context's thread: a failure is returned, not reported */
} prism__allocation;

typedef struct prism__gl_state prism__gl_state; /* engine/memory/gl_buffer.c */

struct prism_buffer {
    prism_context *ctx;
    prism_buffer *prev, *next; /* the context's live buffers */
    prism_buffer *parent;      /* a view keeps its parent alive */
    prism__allocation *alloc;  /* the root allocation, shared by views */
    size_t offset, size;
    unsigned refs;    /* the caller's + one per view */
    prism_pool *pool; /* where the block returns, or NULL */
    /* prism_buffer_map of device memory: the host copy */
    bool mapped;
    prism_map_flags map_flags;
    prism__allocation *map_copy;
    prism__gl_state *gl; /* GL buffers only */
};

struct prism_stream {
    prism_context *ctx;
    prism_stream *prev, *next;
    void *handle; /* cudaStream_t; NULL on the host backend */
};

/* A cached block of a pool. */
typedef struct prism__block {
    struct prism__block *next;
    prism__allocation *alloc;
} prism__block;

struct prism_pool {
    prism_context *ctx;
    prism_pool *prev, *next;
    prism_pool_kind kind;
    unsigned host_flags;
    char tag[PRISM__TAG_SIZE];
    char held_tag[PRISM__TAG_SIZE];
    prism__block *held;
    prism_pool_stats stats;
    bool holding;   /* false after stop_holding */
    bool destroyed; /* freed when the last active block returns */
};

/* The backend: every call that touches memory outside the C heap. Pointers
 * given to copy and fill are "addresses" (prism__buffer_address): device
 * pointers for device-side kinds, host pointers for host kinds; CUDA's
 * unified addressing tells them apart. */
typedef struct prism__memory_backend {
    const char *name;
    /* Fill a->host / a->device / a->handle for a->kind, a->flags, a->bytes.
     * REGISTERED: a->host is the caller's memory. */
    prism_result (*alloc)(prism_context *ctx, prism__allocation *a);
    void (*free)(prism_context *ctx, prism__allocation *a);
    prism_result (*copy)(prism_context *ctx, void *dst, const void *src, size_t size, void *stream,
                         bool async);
    prism_result (*fill)(prism_context *ctx, void *dst, size_t size, const void *pattern,
                         size_t pattern_size, void *stream, bool async);
    prism_result (*mem_info)(prism_context *ctx, size_t *free_bytes, size_t *total_bytes);
    prism_result (*stream_create)(prism_context *ctx, void **handle);
    void (*stream_destroy)(prism_context *ctx, void *handle);
    prism_result (*stream_sync)(prism_context *ctx, void *handle);
    /* stream-ordered allocator */
    bool (*mempool_supported)(prism_context *ctx);
    prism_result (*alloc_async)(prism_context *ctx, prism__allocation *a, void *stream);
    void (*free_async)(prism_context *ctx, prism__allocation *a, void *stream);
    prism_result (*mempool_threshold)(prism_context *ctx, uint64_t *set, uint64_t *get);
    prism_result (*mempool_usage)(prism_context *ctx, size_t *current, size_t *high);
    /* CUDA-GL interop: register fails (and the copy path is used) where
     * the GL context is not on this device. */
    prism_result (*gl_register)(prism_context *ctx, prism__allocation *a, unsigned gl_buffer,
                                char *why, size_t why_size);
    prism_result (*gl_map)(prism_context *ctx, prism__allocation *a, void *stream);
    prism_result (*gl_unmap)(prism_context *ctx, prism__allocation *a, void *stream);
} prism__memory_backend;

/* The backends' memory tables, reached through ctx->be->memory. */
extern const prism__memory_backend prism__host_memory_backend;
extern const prism__memory_backend prism__cuda_memory_backend;

/* How fills store into staging buffers (engine/memory/fill_store.c says why). */
typedef enum prism__stores {
    PRISM__STORES_DEFAULT,       /* PRISM__STAGING_STORES */
    PRISM__STORES_STREAM,        /* streaming (non-temporal) stores */
    PRISM__STORES_PLAIN,         /* ordinary stores */
    PRISM__STORES_PLAIN_DEMOTE,  /* ordinary stores, then cldemote */
    PRISM__STORES_HYBRID,        /* streaming for ramp chunks, ordinary for full ones */
    PRISM__STORES_HYBRID_DEMOTE, /* the same, full chunks demoted */
    PRISM__STORES_COUNT_
} prism__stores;
#define PRISM__STAGING_STORES PRISM__STORES_STREAM

struct prism_memory_state {
    prism__allocation *allocations;
    prism_buffer *buffers;
    prism_stream *streams;
    prism_pool *pools;
    prism_memory_usage by_kind[PRISM_MEMORY_KIND_COUNT];
    prism_memory_usage total;
    size_t peak_bytes;
    uint64_t next_id;
    bool gl_fallback_logged;
    /* stream-ordered allocator */
    bool mempool_enabled;
    size_t async_current, async_high; /* host backend's figures */
    unsigned inject_device_failures;  /* tests: fail the next N device allocations */
    prism_pool *staging_pool;         /* pinned chunks the uploads reuse */
    /* Staged-copy tuning (prism-bench upload sets them; zero = default):
     * buffers in the ring, fill threads, no chunk ramp, how fills store. */
    unsigned staging_buffers;
    unsigned staging_threads;
    bool staging_no_ramp;
    prism__stores staging_stores;
};

static inline const prism__memory_backend *prism__mem(const prism_context *ctx)
{
    return ctx->be->memory;
}

/* ---- ledger.c */
/* Allocate through the backend and record it. `host` is the caller's
 * memory for REGISTERED, else NULL. On failure nothing is recorded. */
prism_result prism__ledger_alloc(prism_context *ctx, prism_memory_kind kind, unsigned flags,
                                 size_t bytes, const char *tag, void *host,
                                 prism__allocation **out);
/* Record an allocation made elsewhere (async, GL) after its backend call. */
void prism__ledger_record(prism_context *ctx, prism__allocation *a);
/* Forget the record (the caller freed the memory) and free it. */
void prism__ledger_forget(prism_context *ctx, prism__allocation *a);
/* Free through the backend and forget. Accepts NULL. */
void prism__ledger_free(prism_context *ctx, prism__allocation *a);
void prism__ledger_retag(prism__allocation *a, const char *tag);
/* Tests: the next `count` device-memory allocations fail with
 * PRISM_ERROR_OUT_OF_DEVICE_MEMORY, to exercise recovery paths. */
void prism__memory_inject_device_failures(prism_context *ctx, unsigned count);
void prism__copy_tag(char *dst, const char *tag);

/* ---- buffer.c */
/* A buffer object around `a` (owning it), linked into the context. */
prism_result prism__buffer_wrap(prism_context *ctx, prism__allocation *a, size_t size,
                                prism_buffer **out);
/* The address copies and fills use for byte `offset` of the buffer. */
void *prism__buffer_address(const prism_buffer *b, size_t offset);
/* Check [offset, offset+size) lies in the buffer; records the error. */
prism_result prism__buffer_range(const prism_buffer *b, size_t offset, size_t size,
                                 const char *what);
/* Free a buffer object at context shutdown, without touching its memory. */
void prism__buffer_discard(prism_buffer *b);
/* Check a host-flag request against the context (mapped allowed?). */
prism_result prism__check_host_flags(prism_context *ctx, unsigned flags, unsigned allowed,
                                     const char *what);

/* ---- pool.c */
/* A pooled buffer is released: keep or free its block. */
void prism__pool_give_back(prism_pool *pool, prism__allocation *a, size_t asked);
void prism__pool_discard(prism_pool *pool);

/* ---- stream.c */
void *prism__stream_handle(const prism_stream *stream);
void prism__stream_discard(prism_stream *stream);

/* ---- gl_buffer.c */
void prism__gl_release(prism_buffer *b);

/* ---- read_bandwidth.c: GB/s of a kernel (host: threads) reading buffer b */
prism_result prism__memory_read_bandwidth(prism_context *ctx, const prism_buffer *b, int repeat,
                                          double *gbps);

/* ---- staged_copy.c: the upload's transfer engine */
/* Write bytes [first, first+n) of some data, in its GPU layout, to dst.
 * Fills write through prism__fill_store (fill_store.c), passing on
 * `plain`: the stores the copy running them chose. */
typedef void (*prism__fill_fn)(void *user, size_t first, size_t n, void *dst, bool plain);
#define PRISM__STAGING_BUFFERS 4 /* default; ctx->memory->staging_buffers */
#define PRISM__STAGING_MAX 8
typedef struct prism__staging {
    prism_buffer *buf[PRISM__STAGING_MAX];    /* pinned, `chunk` bytes each */
    prism_stream *stream[PRISM__STAGING_MAX]; /* one per buffer */
    unsigned count;                           /* buffers in use */
    size_t chunk;                             /* the largest chunk */
    bool ramp;                                /* first chunks small, doubling up to `chunk` */
    prism__stores stores;
    unsigned threads; /* fill threads; 0 = OpenMP's default */
} prism__staging;
prism_result prism__staging_open(prism_context *ctx, size_t chunk, prism__staging *st);
void prism__staging_close(prism__staging *st);
/* Copy n bytes produced by `fill` to the start of dst through the staging
 * buffers; chunk boundaries and thread pieces fall on multiples of
 * `granule` (which must divide the chunk). */
prism_result prism__staged_copy(prism__staging *st, prism_buffer *dst, size_t n,
                                prism__fill_fn fill, void *user, size_t granule);
/* fill over [first, first+n) into dst with all threads, granule-aligned. */
void prism__parallel_fill(prism__fill_fn fill, void *user, size_t first, size_t n, size_t granule,
                          unsigned char *dst);

/* ---- fill_store.c: how fills store into staging and mapped memory */
/* memcpy with streaming (non-temporal) stores where the CPU has them: the
 * lines go to memory, not into this core's cache. */
void prism__stream_store(void *dst, const void *src, size_t n);
/* What fill functions call: ordinary stores (plain) or streaming ones, as
 * the staged copy or parallel fill running them chose. */
void prism__fill_store(void *dst, const void *src, size_t n, bool plain);
/* Order this thread's streaming stores before a copy is issued. */
void prism__store_fence(void);
/* Push the lines of [p, p+n) from this core's caches to the shared L3. */
void prism__demote_lines(const void *p, size_t n);

/* The mapped-memory refusal, one wording everywhere. */
prism_result prism__mapped_not_allowed(prism_context *ctx, const char *what);

/* Whether [pointer, pointer+bytes) lies in pinned or registered host
 * memory of ctx (engine/memory/pinned_alloc.c): a DMA from it needs no staging. */
bool prism__host_pinned(const prism_context *ctx, const void *pointer, size_t bytes);

/* Host memory page-locked in two steps, so that the driver's locking (the
 * slow part) may run on another thread than the one using the context:
 * prism__register_begin asks the backend only and touches nothing of the
 * context (a failure is returned, not reported on it); prism__register_end,
 * on the context's thread, records the memory in the ledger as a buffer
 * (as prism_buffer_register_host would have); prism__register_undo unlocks
 * one never ended. */
prism_result prism__register_begin(prism_context *ctx, void *host, size_t bytes, const char *tag,
                                   prism__allocation **out);
prism_result prism__register_end(prism_context *ctx, prism__allocation *a, prism_buffer **out);
void prism__register_undo(prism_context *ctx, prism__allocation *a);

#endif
