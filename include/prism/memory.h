/* Memory: the kinds of memory a context hands out (prism_buffer), streams for
 * ordered copies, the device and pinned pools, the stream-ordered allocator,
 * and the per-context ledger every allocation goes through.
 * PyCUDA's memory toolbox and Warp's mempool allocators, in C.
 *
 * On the host backend "device", "pinned", "mapped" and "managed" memory are
 * all heap memory; the same calls work and the same errors come back, so
 * every path runs in CI. GL and CUDA types never appear here: a GL buffer is
 * its GLuint passed as `unsigned`, GL functions come from the caller's loader.
 *
 * @pointer_lifetime Buffers, streams and pools belong to their context.
 *   prism_context_destroy frees whatever is still alive, once, after naming
 *   each allocation in the log (PRISM_ERROR_LIVE_ALLOCATIONS); their handles
 *   are invalid afterwards.
 * @thread_safety As the context: one thread at a time per context.
 *
 * Functions:
 *   buffers  prism_buffer_create_device, _create_pinned, _register_host,
 *            _create_managed, _create_gl, _view, _release, _info,
 *            _fill, _fill_async, _write, _read, _copy, _write_async,
 *            _read_async, _copy_async, _map, _unmap, _gl_map, _gl_unmap,
 *            _gl_interop
 *   streams  prism_stream_create, _destroy, _synchronize
 *   pools    prism_pool_create, _destroy, _allocate, _stats, _free_held,
 *            _stop_holding
 *   mempool  prism_mempool_supported, _enabled, _set_enabled,
 *            _set_release_threshold, _release_threshold, _usage,
 *            prism_buffer_create_async, prism_buffer_release_async
 *   ledger   prism_memory_report_get, prism_memory_report_format,
 *            prism_memory_kind_name, prism_device_memory_info, prism_memory_trim */
#ifndef PRISM_MEMORY_H
#define PRISM_MEMORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "context.h"
#include "result.h"
#include "scene.h" /* prism_allocator */

#ifdef __cplusplus
extern "C" {
#endif

typedef struct prism_buffer prism_buffer;
typedef struct prism_stream prism_stream;
typedef struct prism_pool prism_pool;

typedef enum prism_memory_kind {
    PRISM_MEMORY_DEVICE = 0, /* cudaMalloc */
    PRISM_MEMORY_PINNED,     /* cudaHostAlloc, with prism_host_flags */
    PRISM_MEMORY_REGISTERED, /* caller's host memory, cudaHostRegister */
    PRISM_MEMORY_GL,         /* an OpenGL buffer object (interop or copy path) */
    PRISM_MEMORY_MANAGED,    /* cudaMallocManaged, never beyond free device memory */
    PRISM_MEMORY_ASYNC,      /* cudaMallocAsync from the device's memory pool */
    PRISM_MEMORY_STAGING,    /* internal host copies (map of device memory, GL copy path) */
    PRISM_MEMORY_KIND_COUNT
} prism_memory_kind;

/* cudaHostAlloc's flags (and cudaHostRegister's portable/mapped): orthogonal,
 * any combination is allowed. MAPPED needs a context without
 * deny_mapped_memory (else PRISM_ERROR_MAPPED_NOT_ALLOWED). */
typedef enum prism_host_flags {
    PRISM_HOST_PORTABLE = 1u << 0,      /* pinned for every context */
    PRISM_HOST_MAPPED = 1u << 1,        /* kernels reach it through device_pointer */
    PRISM_HOST_WRITE_COMBINED = 1u << 2 /* fast to write and to send, slow to read on the CPU */
} prism_host_flags;

/* How a GL buffer is used while mapped (cudaGraphicsRegisterFlags*). */
typedef enum prism_gl_flags {
    PRISM_GL_NONE = 0,         /* read and write */
    PRISM_GL_READ_ONLY = 1,    /* kernels read it; unmap writes nothing back */
    PRISM_GL_WRITE_DISCARD = 2 /* kernels overwrite it all; map reads nothing */
} prism_gl_flags;

/* prism_buffer_map: what the host does with the mapped range. */
typedef enum prism_map_flags {
    PRISM_MAP_READ_WRITE = 0,
    PRISM_MAP_READ = 1,         /* unmap writes nothing back */
    PRISM_MAP_WRITE_DISCARD = 2 /* map reads nothing: the contents are undefined */
} prism_map_flags;

typedef struct prism_buffer_info {
    prism_memory_kind kind;
    unsigned flags; /* prism_host_flags for pinned/registered, prism_gl_flags for GL */
    size_t size;
    void *host_pointer;   /* NULL for device memory (map it) */
    void *device_pointer; /* what kernels use; NULL for unmapped pinned/registered
                                memory and for a GL buffer not mapped */
    const char *tag;      /* "bvh.nodes"; the parent's for a view */
    size_t offset;        /* a view's offset in its root allocation, else 0 */
    bool is_view;
    bool pooled; /* from a prism_pool */
} prism_buffer_info;

/* ---- Buffers ---------------------------------------------------------- */

/** Device memory of `size` bytes (> 0). `tag` names it in the ledger
 * ("bvh.nodes"); NULL = "untagged". The tag is copied (47 characters kept).
 * @errors PRISM_ERROR_INVALID_ARGUMENT (NULL ctx or out, size 0),
 *   PRISM_ERROR_OUT_OF_DEVICE_MEMORY, PRISM_ERROR_OUT_OF_MEMORY,
 *   PRISM_ERROR_CUDA.
 * @thread_safety As the context: one thread at a time. */
PRISM_API prism_result prism_buffer_create_device(prism_context *ctx, size_t size, const char *tag,
                                                  prism_buffer **out);
/** Pinned host memory with `flags` (prism_host_flags, any combination).
 * @errors PRISM_ERROR_INVALID_ARGUMENT (NULL ctx or out, size 0, unknown
 *   flags), PRISM_ERROR_MAPPED_NOT_ALLOWED (PRISM_HOST_MAPPED where the
 *   context has no mapped memory), PRISM_ERROR_OUT_OF_MEMORY,
 *   PRISM_ERROR_CUDA.
 * @thread_safety As the context: one thread at a time. */
PRISM_API prism_result prism_buffer_create_pinned(prism_context *ctx, size_t size, unsigned flags,
                                                  const char *tag, prism_buffer **out);
/** Pin the caller's memory [pointer, pointer+size) after the fact; flags:
 * PRISM_HOST_PORTABLE | PRISM_HOST_MAPPED. The memory must outlive the buffer.
 * @errors PRISM_ERROR_INVALID_ARGUMENT (NULL ctx, pointer or out, size 0,
 *   other flags), PRISM_ERROR_MAPPED_NOT_ALLOWED, PRISM_ERROR_OUT_OF_MEMORY,
 *   PRISM_ERROR_CUDA (cudaHostRegister refused the range).
 * @pointer_lifetime the caller keeps ownership; release unregisters.
 * @thread_safety As the context: one thread at a time. */
PRISM_API prism_result prism_buffer_register_host(prism_context *ctx, void *pointer, size_t size,
                                                  unsigned flags, const char *tag,
                                                  prism_buffer **out);
/** Managed memory, only when it fits: a request beyond the device's free
 * memory is refused (PRISM_ERROR_OUT_OF_DEVICE_MEMORY) instead of letting
 * the driver oversubscribe; PRISM_ERROR_UNSUPPORTED on devices without it.
 * @errors PRISM_ERROR_INVALID_ARGUMENT (NULL ctx or out, size 0),
 *   PRISM_ERROR_OUT_OF_DEVICE_MEMORY, PRISM_ERROR_UNSUPPORTED,
 *   PRISM_ERROR_OUT_OF_MEMORY, PRISM_ERROR_CUDA.
 * @thread_safety As the context: one thread at a time. */
PRISM_API prism_result prism_buffer_create_managed(prism_context *ctx, size_t size, const char *tag,
                                                   prism_buffer **out);

/** A view of [offset, offset+size) of `parent` sharing its memory. The view
 * keeps the memory alive: release both, in any order.
 * @errors PRISM_ERROR_INVALID_ARGUMENT (NULL parent or out, size 0),
 *   PRISM_ERROR_OUT_OF_RANGE (the message gives offset, size, parent size),
 *   PRISM_ERROR_OUT_OF_MEMORY.
 * @thread_safety As the parent's context: one thread at a time. */
PRISM_API prism_result prism_buffer_view(prism_buffer *parent, size_t offset, size_t size,
                                         prism_buffer **out);

/** Release a buffer (and its memory when no view holds it). Accepts NULL.
 * A pooled buffer goes back to its pool. Synchronous: outstanding work on
 * the context's streams that uses it must be finished.
 * @errors None.
 * @thread_safety As the buffer's context: one thread at a time. */
PRISM_API void prism_buffer_release(prism_buffer *buffer);

/** What the buffer is (prism_buffer_info); info->tag lives as long as the
 * buffer.
 * @errors PRISM_ERROR_INVALID_ARGUMENT (NULL buffer or info).
 * @thread_safety As the buffer's context: one thread at a time. */
PRISM_API prism_result prism_buffer_info_get(const prism_buffer *buffer, prism_buffer_info *info);
/** The buffer's size in bytes.
 * @errors None (0 for NULL).
 * @thread_safety As the buffer's context: one thread at a time. */
PRISM_API size_t prism_buffer_size(const prism_buffer *buffer);
/** The pointer kernels use (see prism_buffer_info.device_pointer).
 * @errors None (NULL for NULL).
 * @thread_safety As the buffer's context: one thread at a time. */
PRISM_API void *prism_buffer_device_pointer(const prism_buffer *buffer);
/** The host pointer (pinned, registered, managed memory; NULL otherwise).
 * @errors None (NULL for NULL).
 * @thread_safety As the buffer's context: one thread at a time. */
PRISM_API void *prism_buffer_host_pointer(const prism_buffer *buffer);

/* ---- Streams: ordered work. NULL stream = the context's default stream. */

/** A stream of ctx (on CUDA, non-blocking). On the host backend a stream
 * is a token: its work runs at once.
 * @errors PRISM_ERROR_INVALID_ARGUMENT (NULL ctx or out),
 *   PRISM_ERROR_OUT_OF_MEMORY, PRISM_ERROR_CUDA.
 * @thread_safety As the context: one thread at a time. */
PRISM_API prism_result prism_stream_create(prism_context *ctx, prism_stream **out);
/** Destroy a stream; work queued on it still runs. Accepts NULL.
 * @errors None.
 * @thread_safety As the stream's context: one thread at a time. */
PRISM_API void prism_stream_destroy(prism_stream *stream);
/** Wait for the work queued on the stream.
 * @errors PRISM_ERROR_INVALID_ARGUMENT (NULL stream: it names no context),
 *   PRISM_ERROR_CUDA (the queued work failed).
 * @thread_safety As the stream's context: one thread at a time. */
PRISM_API prism_result prism_stream_synchronize(prism_stream *stream);

/* ---- Contents --------------------------------------------------------- */

/** Fill [offset, offset+size) with a repeated pattern of 1, 2, 4, 8 or 16
 * bytes; offset and size must be multiples of pattern_size.
 * @errors PRISM_ERROR_INVALID_ARGUMENT (NULL buffer or pattern, pattern
 *   size, alignment, a GL buffer not mapped), PRISM_ERROR_OUT_OF_RANGE,
 *   PRISM_ERROR_OUT_OF_MEMORY, PRISM_ERROR_CUDA.
 * @thread_safety As the buffer's context: one thread at a time. */
PRISM_API prism_result prism_buffer_fill(prism_buffer *buffer, size_t offset, size_t size,
                                         const void *pattern, size_t pattern_size);
/** prism_buffer_fill on `stream` (NULL: the default stream); the pattern
 * is copied before the call returns.
 * @errors As prism_buffer_fill: PRISM_ERROR_INVALID_ARGUMENT,
 *   PRISM_ERROR_OUT_OF_RANGE, PRISM_ERROR_OUT_OF_MEMORY, PRISM_ERROR_CUDA.
 * @thread_safety As the buffer's context: one thread at a time. */
PRISM_API prism_result prism_buffer_fill_async(prism_buffer *buffer, size_t offset, size_t size,
                                               const void *pattern, size_t pattern_size,
                                               prism_stream *stream);
/** Host -> buffer (any kind), synchronous.
 * @errors PRISM_ERROR_INVALID_ARGUMENT (NULL buffer, NULL src with a size,
 *   a GL buffer not mapped), PRISM_ERROR_OUT_OF_RANGE, PRISM_ERROR_CUDA.
 * @thread_safety As the buffer's context: one thread at a time. */
PRISM_API prism_result prism_buffer_write(prism_buffer *buffer, size_t offset, const void *src,
                                          size_t size);
/** Buffer (any kind) -> host, synchronous.
 * @errors PRISM_ERROR_INVALID_ARGUMENT (NULL buffer, NULL dst with a size,
 *   a GL buffer not mapped), PRISM_ERROR_OUT_OF_RANGE, PRISM_ERROR_CUDA.
 * @thread_safety As the buffer's context: one thread at a time. */
PRISM_API prism_result prism_buffer_read(const prism_buffer *buffer, size_t offset, void *dst,
                                         size_t size);
/** Buffer -> buffer (any kinds, one context), synchronous.
 * @errors PRISM_ERROR_INVALID_ARGUMENT (NULL buffer, buffers of different
 *   contexts, a GL buffer not mapped), PRISM_ERROR_OUT_OF_RANGE,
 *   PRISM_ERROR_CUDA.
 * @thread_safety As the buffers' context: one thread at a time. */
PRISM_API prism_result prism_buffer_copy(prism_buffer *dst, size_t dst_offset,
                                         const prism_buffer *src, size_t src_offset, size_t size);
/** prism_buffer_write on a stream. Host memory given to the _async copies
 * must stay valid until the stream is synchronized; it overlaps other work
 * only when pinned.
 * @errors As prism_buffer_write: PRISM_ERROR_INVALID_ARGUMENT,
 *   PRISM_ERROR_OUT_OF_RANGE, PRISM_ERROR_CUDA.
 * @thread_safety As the buffer's context: one thread at a time. */
PRISM_API prism_result prism_buffer_write_async(prism_buffer *buffer, size_t offset,
                                                const void *src, size_t size, prism_stream *stream);
/** prism_buffer_read on a stream; `dst` holds the data once the stream is
 * synchronized.
 * @errors As prism_buffer_read: PRISM_ERROR_INVALID_ARGUMENT,
 *   PRISM_ERROR_OUT_OF_RANGE, PRISM_ERROR_CUDA.
 * @thread_safety As the buffer's context: one thread at a time. */
PRISM_API prism_result prism_buffer_read_async(const prism_buffer *buffer, size_t offset, void *dst,
                                               size_t size, prism_stream *stream);
/** prism_buffer_copy on a stream.
 * @errors As prism_buffer_copy: PRISM_ERROR_INVALID_ARGUMENT,
 *   PRISM_ERROR_OUT_OF_RANGE, PRISM_ERROR_CUDA.
 * @thread_safety As the buffers' context: one thread at a time. */
PRISM_API prism_result prism_buffer_copy_async(prism_buffer *dst, size_t dst_offset,
                                               const prism_buffer *src, size_t src_offset,
                                               size_t size, prism_stream *stream);

/** Map a buffer into host memory. Pinned, registered and managed memory
 * give their own pointer; device memory gives a host copy (read now unless
 * WRITE_DISCARD, written back by unmap unless READ). One map at a time.
 * @errors PRISM_ERROR_INVALID_ARGUMENT (NULL buffer or host, unknown flags,
 *   already mapped, GL buffer: use prism_buffer_gl_map),
 *   PRISM_ERROR_OUT_OF_MEMORY (the host copy), PRISM_ERROR_CUDA.
 * @thread_safety As the buffer's context: one thread at a time. */
PRISM_API prism_result prism_buffer_map(prism_buffer *buffer, prism_map_flags flags, void **host);
/** End a map: the host copy of device memory is written back (unless the
 * map was READ) and freed; the host pointer is invalid afterwards.
 * @errors PRISM_ERROR_INVALID_ARGUMENT (NULL buffer, not mapped),
 *   PRISM_ERROR_CUDA (the write-back failed; the map ends all the same).
 * @thread_safety As the buffer's context: one thread at a time. */
PRISM_API prism_result prism_buffer_unmap(prism_buffer *buffer);

/* ---- OpenGL buffers --------------------------------------------------- */

/** A GL function pointer, and the caller's loader (glfwGetProcAddress,
 * eglGetProcAddress): libprism links no GL. */
typedef void (*prism_gl_proc)(void);
typedef prism_gl_proc (*prism_gl_get_proc_address_fn)(const char *name);

/** Wrap GL buffer object `gl_buffer` (its name; `size` bytes, already
 * allocated with glBufferData). With CUDA-GL interop (the GL context on the
 * context's CUDA device) it is registered with cudaGraphicsGLRegisterBuffer
 * and map gives its device pointer. Otherwise (host backend, Mesa, GL on
 * another GPU) the context logs once why, and the copy path is used: map
 * gives a staging pointer (device memory on CUDA, heap on the host backend)
 * and unmap sends it to GL with glBindBuffer + glBufferSubData, read first
 * with glGetBufferSubData unless WRITE_DISCARD. The copy path needs the GL
 * context current at map/unmap and `get_proc_address`; interop needs neither
 * beyond creation. `get_proc_address` may be NULL only when interop works.
 * @errors PRISM_ERROR_INVALID_ARGUMENT (NULL ctx or out, gl_buffer 0, size
 *   0, unknown flags), PRISM_ERROR_INTEROP_UNAVAILABLE (no interop and no
 *   loader), PRISM_ERROR_GL (a GL function missing from the loader),
 *   PRISM_ERROR_OUT_OF_MEMORY, PRISM_ERROR_OUT_OF_DEVICE_MEMORY (the copy
 *   path's staging), PRISM_ERROR_CUDA.
 * @thread_safety As the context: one thread at a time, with the GL context
 *   current on it. */
PRISM_API prism_result prism_buffer_create_gl(prism_context *ctx, unsigned gl_buffer, size_t size,
                                              prism_gl_flags flags,
                                              prism_gl_get_proc_address_fn get_proc_address,
                                              const char *tag, prism_buffer **out);
/** Map for kernels: *kernel_pointer is what kernels read and write.
 * @errors PRISM_ERROR_INVALID_ARGUMENT (NULL buffer or kernel_pointer, not
 *   a GL buffer (a view of one included), already mapped), PRISM_ERROR_GL
 *   (copy path: glGetBufferSubData missing or failed), PRISM_ERROR_CUDA.
 * @thread_safety As the buffer's context: one thread at a time; the copy
 *   path needs the GL context current on it. */
PRISM_API prism_result prism_buffer_gl_map(prism_buffer *buffer, prism_stream *stream,
                                           void **kernel_pointer);
/** Give the buffer back to GL (the copy path sends the data here).
 * @errors PRISM_ERROR_INVALID_ARGUMENT (NULL buffer, not a GL buffer, not
 *   mapped), PRISM_ERROR_GL (copy path: glBufferSubData failed),
 *   PRISM_ERROR_CUDA. The buffer is unmapped all the same.
 * @thread_safety As the buffer's context: one thread at a time; the copy
 *   path needs the GL context current on it. */
PRISM_API prism_result prism_buffer_gl_unmap(prism_buffer *buffer, prism_stream *stream);
/** True when the buffer is shared through CUDA-GL interop, false on the copy path.
 * @errors None (false for NULL and for other kinds of buffer).
 * @thread_safety As the buffer's context: one thread at a time. */
PRISM_API bool prism_buffer_gl_interop(const prism_buffer *buffer);

/* ---- Pools: PyCUDA's DeviceMemoryPool and PageLockedMemoryPool -------- */

typedef enum prism_pool_kind { PRISM_POOL_DEVICE = 0, PRISM_POOL_PINNED } prism_pool_kind;

/* Defaults (all-zero): device pool, no host flags, tag "pool". */
typedef struct prism_pool_desc {
    prism_pool_kind kind;
    unsigned host_flags; /* prism_host_flags, pinned pools */
    const char *tag;     /* held blocks appear in the ledger as "<tag>.held" */
} prism_pool_desc;

/* PyCUDA's statistics: managed = active + held block bytes; active_bytes are
 * the bytes asked for, block sizes are rounded up to size classes. */
typedef struct prism_pool_stats {
    size_t held_blocks;
    size_t active_blocks;
    size_t managed_bytes;
    size_t active_bytes;
} prism_pool_stats;

/** A pool of ctx; `desc` may be NULL (defaults).
 * @errors PRISM_ERROR_INVALID_ARGUMENT (NULL ctx or out, unknown kind or
 *   host flags), PRISM_ERROR_MAPPED_NOT_ALLOWED (PRISM_HOST_MAPPED where
 *   the context has no mapped memory), PRISM_ERROR_OUT_OF_MEMORY.
 * @thread_safety As the context: one thread at a time. */
PRISM_API prism_result prism_pool_create(prism_context *ctx, const prism_pool_desc *desc,
                                         prism_pool **out);
/** Frees the held blocks. Blocks still active stay valid; the pool goes away
 * when the last one is released. Accepts NULL.
 * @errors None.
 * @thread_safety As the pool's context: one thread at a time. */
PRISM_API void prism_pool_destroy(prism_pool *pool);
/** A block of the size class holding `size` (a held one when there is one).
 * On an allocation failure the pool frees its held blocks and retries once.
 * prism_buffer_release gives the block back. `tag` names it while active.
 * @errors PRISM_ERROR_INVALID_ARGUMENT (NULL pool or out, size 0, a
 *   destroyed pool), PRISM_ERROR_OUT_OF_RANGE (no size class holds `size`),
 *   PRISM_ERROR_OUT_OF_DEVICE_MEMORY or PRISM_ERROR_OUT_OF_MEMORY (also after
 *   the retry), PRISM_ERROR_CUDA.
 * @thread_safety As the pool's context: one thread at a time. */
PRISM_API prism_result prism_pool_allocate(prism_pool *pool, size_t size, const char *tag,
                                           prism_buffer **out);
/** The pool's figures (prism_pool_stats).
 * @errors PRISM_ERROR_INVALID_ARGUMENT (NULL pool or stats).
 * @thread_safety As the pool's context: one thread at a time. */
PRISM_API prism_result prism_pool_stats_get(const prism_pool *pool, prism_pool_stats *stats);
/** Free the held blocks; active ones stay. Accepts NULL.
 * @errors None.
 * @thread_safety As the pool's context: one thread at a time. */
PRISM_API void prism_pool_free_held(prism_pool *pool);
/** From now on released blocks are freed at once; frees the held ones.
 * Accepts NULL.
 * @errors None.
 * @thread_safety As the pool's context: one thread at a time. */
PRISM_API void prism_pool_stop_holding(prism_pool *pool);
/** The size class (block bytes) a request of `size` bytes gets.
 * @errors None (SIZE_MAX where no size class holds `size`).
 * @thread_safety Any thread. */
PRISM_API size_t prism_pool_block_size(size_t size);

/* ---- The stream-ordered allocator (cudaMallocAsync), Warp's mempools --- */

/** Whether the context's device supports memory pools (false on the host backend).
 * @errors None (false for NULL).
 * @thread_safety As the context: one thread at a time. */
PRISM_API bool prism_mempool_supported(const prism_context *ctx);
/** Whether prism_buffer_create_async uses the pool (on by default where
 * supported).
 * @errors None (false for NULL).
 * @thread_safety As the context: one thread at a time. */
PRISM_API bool prism_mempool_enabled(const prism_context *ctx);
/** Enable or disable it for this context; disabled, prism_buffer_create_async
 * uses cudaMalloc.
 * @errors PRISM_ERROR_INVALID_ARGUMENT (NULL ctx), PRISM_ERROR_UNSUPPORTED
 *   (enabling where unsupported).
 * @thread_safety As the context: one thread at a time. */
PRISM_API prism_result prism_mempool_set_enabled(prism_context *ctx, bool enabled);
/** Memory the pool keeps when it is released: a value in (0, 1] is a fraction
 * of the device's memory, a larger one is bytes; 0 releases everything.
 * @errors PRISM_ERROR_INVALID_ARGUMENT (NULL ctx; negative, not finite, or
 *   2^64 or more), PRISM_ERROR_UNSUPPORTED (the host backend, a device
 *   without pools), PRISM_ERROR_CUDA.
 * @thread_safety As the context: one thread at a time. The pool is the
 *   device's: other contexts on the device see the threshold too. */
PRISM_API prism_result prism_mempool_set_release_threshold(prism_context *ctx, double threshold);
/** The pool's release threshold in bytes.
 * @errors PRISM_ERROR_INVALID_ARGUMENT (NULL ctx or bytes),
 *   PRISM_ERROR_UNSUPPORTED (the host backend, a device without pools),
 *   PRISM_ERROR_CUDA.
 * @thread_safety As the context: one thread at a time. */
PRISM_API prism_result prism_mempool_release_threshold(const prism_context *ctx, uint64_t *bytes);
/** Used memory now and its high-water mark (cudaMemPoolAttrUsedMem*).
 * The host backend reports the bytes of its async allocations.
 * @errors PRISM_ERROR_INVALID_ARGUMENT (NULL argument),
 *   PRISM_ERROR_UNSUPPORTED (a device without pools), PRISM_ERROR_CUDA.
 * @thread_safety As the context: one thread at a time. */
PRISM_API prism_result prism_mempool_usage(const prism_context *ctx, size_t *current, size_t *high);
/** Allocate on a stream: cudaMallocAsync when enabled (allowed inside CUDA
 * graph capture), cudaMalloc otherwise; heap on the host backend.
 * @errors PRISM_ERROR_INVALID_ARGUMENT (NULL ctx or out, size 0),
 *   PRISM_ERROR_OUT_OF_DEVICE_MEMORY, PRISM_ERROR_OUT_OF_MEMORY,
 *   PRISM_ERROR_CUDA.
 * @thread_safety As the context: one thread at a time. */
PRISM_API prism_result prism_buffer_create_async(prism_context *ctx, size_t size,
                                                 prism_stream *stream, const char *tag,
                                                 prism_buffer **out);
/** Free on a stream (cudaFreeAsync); other kinds release synchronously.
 * Accepts NULL.
 * @errors None.
 * @thread_safety As the buffer's context: one thread at a time. */
PRISM_API void prism_buffer_release_async(prism_buffer *buffer, prism_stream *stream);

/* ---- The ledger ------------------------------------------------------- */

#define PRISM_MEMORY_REPORT_TAGS 64

typedef struct prism_memory_usage {
    size_t bytes;
    size_t count;
} prism_memory_usage;

typedef struct prism_memory_tag_usage {
    char tag[48];
    prism_memory_kind kind;
    size_t bytes;
    size_t count;
} prism_memory_tag_usage;

/* Live allocations of a context. Views are not allocations; pooled blocks
 * count at their block size, held ones under "<pool tag>.held". */
typedef struct prism_memory_report {
    prism_memory_usage by_kind[PRISM_MEMORY_KIND_COUNT];
    prism_memory_usage total;
    prism_memory_tag_usage tags[PRISM_MEMORY_REPORT_TAGS]; /* by (tag, kind), largest first */
    size_t tags_count;
    bool tags_truncated; /* more (tag, kind) pairs than fit */
    size_t pool_held_bytes;
    size_t peak_bytes;                /* high-water mark of total.bytes */
    size_t device_free, device_total; /* prism_device_memory_info at report time */
} prism_memory_report;

/** The context's live allocations now (prism_memory_report).
 * @errors PRISM_ERROR_INVALID_ARGUMENT (NULL ctx or report),
 *   PRISM_ERROR_CUDA (the device's free memory could not be read; the rest
 *   of the report is filled).
 * @thread_safety As the context: one thread at a time. */
PRISM_API prism_result prism_memory_report_get(const prism_context *ctx,
                                               prism_memory_report *report);
/** The report as a table humans read; snprintf semantics.
 * @errors None ("" for NULL report).
 * @thread_safety Any thread; reads the report only. */
PRISM_API size_t prism_memory_report_format(const prism_memory_report *report, char *buffer,
                                            size_t size);
/** Free what the context's own pools hold between uses (the geometry
 * upload's pinned staging chunks). The caller's pools are left alone.
 * Accepts NULL.
 * @errors None.
 * @thread_safety As the context: one thread at a time. */
PRISM_API void prism_memory_trim(prism_context *ctx);
/** "device", "pinned", "registered", "gl", "managed", "async", "staging".
 * @errors None ("?" for anything else).
 * @thread_safety Any thread. */
PRISM_API const char *prism_memory_kind_name(prism_memory_kind kind);
/** An allocator (prism/scene.h) whose blocks are pinned host memory of
 * `ctx` (PRISM_HOST_PORTABLE, tagged "scene.arrays" in the ledger). Given
 * to prism_load_desc.arrays, the scene's world arrays are born pinned, and
 * prism_geometry_upload sends them to the device in one DMA each instead of
 * staging them. On the host backend the blocks are heap memory. The scene
 * must be freed before the context is destroyed.
 * @errors PRISM_ERROR_INVALID_ARGUMENT (NULL ctx or out).
 * @thread_safety As the context: the loader calls it from its own thread,
 *   so nothing else may use the context during that load. */
PRISM_API prism_result prism_pinned_allocator(prism_context *ctx, prism_allocator *out);

/** Free and total device memory: cudaMemGetInfo, or on the host backend the
 * physical memory less what the ledger holds as device memory.
 * @errors PRISM_ERROR_INVALID_ARGUMENT (NULL argument), PRISM_ERROR_CUDA.
 * @thread_safety As the context: one thread at a time. */
PRISM_API prism_result prism_device_memory_info(prism_context *ctx, size_t *free_bytes,
                                                size_t *total_bytes);

#ifdef __cplusplus
}
#endif

#endif
