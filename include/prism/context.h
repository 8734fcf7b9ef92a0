/* prism_context: a backend (CUDA or host), the device it runs on, and what
 * that device can do. Every other engine object belongs to a context. */
#ifndef PRISM_CONTEXT_H
#define PRISM_CONTEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "result.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct prism_context prism_context;

typedef enum prism_backend {
    PRISM_BACKEND_AUTO = 0, /* CUDA when a usable device exists, else host */
    PRISM_BACKEND_CUDA,
    PRISM_BACKEND_HOST
} prism_backend;

typedef enum prism_schedule {
    PRISM_SCHEDULE_AUTO = 0,
    PRISM_SCHEDULE_SPIN,
    PRISM_SCHEDULE_YIELD,
    PRISM_SCHEDULE_BLOCKING_SYNC
} prism_schedule;

typedef enum prism_cache_preference {
    PRISM_CACHE_DEFAULT = 0, /* leave the device's setting */
    PRISM_CACHE_PREFER_L1,   /* what Chroma used */
    PRISM_CACHE_PREFER_SHARED,
    PRISM_CACHE_PREFER_EQUAL,
    PRISM_CACHE_PREFER_NONE
} prism_cache_preference;

/* Defaults (all-zero): backend AUTO; device chosen from $PRISM_DEVICE, then
 * $CUDA_DEVICE, then the integer in ~/.cuda-device, then the first device
 * that gives a context; no GL sharing; scheduling and cache left to CUDA;
 * mapped host memory allowed; log to nobody at INFO and above; host threads
 * as OpenMP chooses. */
typedef struct prism_context_desc {
    prism_backend backend;
    /* A device index ("0", "cuda:1") or NULL to choose as above. An invalid
     * choice from any source is an error naming the source, never a silent
     * fallback to another device. */
    const char *device;
    /* Use the CUDA device of the OpenGL context current on this thread. */
    bool share_gl;
    prism_schedule schedule;
    prism_cache_preference cache;
    /* Do not set cudaDeviceMapHost: mapped host memory is then refused. */
    bool deny_mapped_memory;
    prism_log_fn log;
    void *log_user;
    prism_log_level log_level;
    int host_threads; /* host backend threads; 0 = OpenMP default */
} prism_context_desc;

/** The C version of PyCUDA's DeviceData, plus what Prism needs to know. */
typedef struct prism_device_info {
    prism_backend backend; /* CUDA or HOST */
    int index;             /* CUDA ordinal, -1 for the host */
    char name[256];
    int cc_major, cc_minor;
    size_t total_memory; /* bytes (host: physical memory) */
    int multiprocessors; /* host: threads */
    int max_threads_per_block;
    int max_threads_per_multiprocessor;
    int warp_size;
    int max_warps_per_multiprocessor;
    int max_blocks_per_multiprocessor;
    int registers_per_block;
    int registers_per_multiprocessor;
    int register_allocation_unit; /* registers, per warp */
    int warp_allocation_granularity;
    int max_registers_per_thread;
    size_t shared_memory_per_block;
    size_t shared_memory_per_multiprocessor;
    size_t shared_memory_allocation_unit;
    size_t reserved_shared_memory_per_block;
    bool can_map_host_memory;
    bool unified_addressing;
    bool memory_pools_supported;
    bool integrated;
    bool kernel_timeout; /* a display GPU: long kernels are killed */
    int host_threads;    /* host backend: OpenMP threads */
} prism_device_info;

/** Create a context. On failure *out is NULL and nothing is left allocated;
 * the message goes to desc->log.
 * @errors PRISM_ERROR_INVALID_ARGUMENT (NULL out, a desc field outside its
 *   enum, negative host_threads), PRISM_ERROR_OUT_OF_MEMORY,
 *   PRISM_ERROR_NO_DRIVER, PRISM_ERROR_NO_DEVICE, PRISM_ERROR_INVALID_DEVICE
 *   (the message names the source: argument, $PRISM_DEVICE, $CUDA_DEVICE or
 *   ~/.cuda-device), PRISM_ERROR_DEVICE_UNAVAILABLE, PRISM_ERROR_CUDA,
 *   PRISM_ERROR_NO_GL_CONTEXT, PRISM_ERROR_GL_NOT_ON_CUDA_DEVICE,
 *   PRISM_ERROR_UNSUPPORTED (CUDA asked for in a build without it). Backend
 *   AUTO falls back to the host instead, logging why, except for share_gl's
 *   errors.
 * @thread_safety Contexts are independent; one context is used by one
 *   thread at a time. With share_gl, the GL context is the calling
 *   thread's. */
PRISM_API prism_result prism_context_create(const prism_context_desc *desc, prism_context **out);

/** Start the CUDA driver and the device's primary context now, with the
 * flags a prism_context_create(desc) would set, so that a later
 * prism_context_create (from any thread) finds them ready. CUDA's start is
 * the slowest step of a context (a large part of a second); an application
 * calls this from a spare thread at start-up, while it opens its window
 * and loads its files, and joins that thread before creating the context.
 * The device is desc->device, else $PRISM_DEVICE and the other usual
 * sources, else device 0; with share_gl the GL context's device is not
 * known yet, so device 0 is warmed (the GL one on a one-GPU machine; a
 * context on another device is merely not sped up). A host backend, or no
 * CUDA, returns PRISM_SUCCESS having done nothing: the context's own
 * creation reports what is missing.
 * @errors PRISM_ERROR_CUDA (the device gave no context; there is no
 *   message: prism_context_create says why).
 * @thread_safety Any thread, also while another creates a context. */
PRISM_API prism_result prism_context_prewarm(const prism_context_desc *desc);

/** Destroy a context. Accepts NULL. Returns PRISM_ERROR_LIVE_ALLOCATIONS
 * (and logs each one) when objects made from it are still alive; the
 * context is released all the same.
 * @errors PRISM_ERROR_LIVE_ALLOCATIONS (buffers, streams, pools, geometries
 *   or modules still alive; their handles are invalid afterwards).
 * @thread_safety As the context: one thread at a time. */
PRISM_API prism_result prism_context_destroy(prism_context *ctx);

/** The backend the context runs on: CUDA or HOST.
 * @errors None (PRISM_BACKEND_AUTO for NULL).
 * @thread_safety Any thread, also while the context is in use: the answer
 *   is fixed at creation. */
PRISM_API prism_backend prism_context_backend(const prism_context *ctx);
/** What the context's device can do; lives as long as the context.
 * @errors None (NULL for NULL).
 * @thread_safety Any thread, also while the context is in use: the answer
 *   is fixed at creation. */
PRISM_API const prism_device_info *prism_context_device(const prism_context *ctx);
/** True when the context was created with share_gl and shares the GL context.
 * @errors None (false for NULL).
 * @thread_safety Any thread, also while the context is in use: the answer
 *   is fixed at creation. */
PRISM_API bool prism_context_gl_shared(const prism_context *ctx);
/** The last error message of this context ("" if none). Lives until the next call.
 * @errors None ("" for NULL).
 * @thread_safety As the context: one thread at a time (every failing call
 *   rewrites the message). */
PRISM_API const char *prism_context_last_error(const prism_context *ctx);
/** Whether this build of Prism has `backend`: the host backend always,
 * CUDA when it was built with CUDA (whether a device is there is
 * prism_device_list's to say); AUTO is always built.
 * @errors None.
 * @thread_safety Any thread. */
PRISM_API bool prism_backend_built(prism_backend backend);
/** "auto", "cuda" or "host"; "unknown" for anything else.
 * @errors None.
 * @thread_safety Any thread. */
PRISM_API const char *prism_backend_name(prism_backend backend);

/** Number of CUDA devices (0 without a driver or in a build without CUDA).
 * @errors None (0 stands for every failure).
 * @thread_safety Any thread. */
PRISM_API int prism_cuda_device_count(void);
/** The CUDA devices of a multi-device run (one context each, e.g. for
 * prism_propagate_multi), by the rules of prism_context_desc.device with a
 * list: `devices` ("0,1", "cuda:0,cuda:1", "all", or one index; repeats
 * give several contexts on one device), else $PRISM_DEVICE, $CUDA_DEVICE,
 * ~/.cuda-device; none set: every device. A list in one of those given to
 * prism_context_create gives its first entry. At most `capacity` indices
 * go to `indices`, their number to *count.
 * @errors PRISM_ERROR_INVALID_ARGUMENT (NULL indices or count, capacity
 *   < 1), PRISM_ERROR_NO_DRIVER, PRISM_ERROR_NO_DEVICE,
 *   PRISM_ERROR_INVALID_DEVICE (also a list longer than `capacity`),
 *   PRISM_ERROR_UNSUPPORTED (a build without CUDA); `message` (when not
 *   NULL) says why and names the source ("PRISM_DEVICE=0,2: device 2 out
 *   of range").
 * @thread_safety Any thread. */
PRISM_API prism_result prism_device_list(const char *devices, int *indices, int capacity,
                                         int *count, char *message, size_t message_size);

/** Fill `info` for CUDA device `index`, or for the host when index < 0.
 * @errors PRISM_ERROR_INVALID_ARGUMENT (NULL info),
 *   PRISM_ERROR_INVALID_DEVICE (no CUDA device `index`).
 * @thread_safety Any thread; the calling thread's current CUDA device is
 *   left alone. */
PRISM_API prism_result prism_device_query(int index, prism_device_info *info);

/** The startup report, like Warp's:
 *   Prism 0.1.0 initialized: CUDA Toolkit 13.0, Driver 13.0
 *     "cpu"   : host backend, 16 threads
 *     "cuda:0": "<the device's name>" (79 GiB, sm_90, mempool enabled, mapped memory)
 * Writes at most `size` bytes (NUL-terminated) and returns the length the
 * whole report needs, as snprintf does.
 * @errors None (a device that cannot be queried is left out).
 * @thread_safety Any thread. */
PRISM_API size_t prism_device_report(char *buffer, size_t size);

/** Version string, "0.1.0".
 * @errors None.
 * @thread_safety Any thread. */
PRISM_API const char *prism_version(void);

/* ---- Occupancy: the C version of PyCUDA's OccupancyRecord ---- */

typedef enum prism_occupancy_limit {
    PRISM_LIMIT_DEVICE = 0, /* max blocks per multiprocessor */
    PRISM_LIMIT_WARPS,
    PRISM_LIMIT_REGISTERS,
    PRISM_LIMIT_SHARED_MEMORY
} prism_occupancy_limit;

typedef struct prism_occupancy {
    int blocks_per_multiprocessor;
    int warps_per_multiprocessor;
    double occupancy; /* warps / max warps, 0..1 */
    prism_occupancy_limit limited_by;
} prism_occupancy;

/** Occupancy of a kernel with these resources on `device`.
 * @errors PRISM_ERROR_INVALID_ARGUMENT for NULL device or out, threads
 *   outside 1..max_threads_per_block, negative registers or registers
 *   above the per-thread limit, or shared memory above the per-block limit.
 * @thread_safety Any thread. */
PRISM_API prism_result prism_occupancy_compute(const prism_device_info *device,
                                               int threads_per_block, int registers_per_thread,
                                               size_t shared_bytes_per_block, prism_occupancy *out);

/** "device", "warps", "registers" or "shared memory"; "unknown" otherwise.
 * @errors None.
 * @thread_safety Any thread. */
PRISM_API const char *prism_occupancy_limit_name(prism_occupancy_limit limit);

#ifdef __cplusplus
}
#endif

#endif
