/* prism_module: CUDA source compiled at run time, PyCUDA's SourceModule in
 * C. The source is compiled with NVRTC for the context's device, may
 * #include <prism/device.cuh> (the header is in the library), and its
 * kernels are launched with the caller's arguments.
 *
 * Compiled modules are kept, as PyCUDA's context_dependent_memoize and
 * compiler cache kept them:
 *  - per context: the same source, name, options and device give the same
 *    module again, without compiling (until prism_module_cache_clear or the
 *    context's end);
 *  - on disk: under $PRISM_CACHE_DIR, else $XDG_CACHE_HOME/prism/kernels,
 *    else ~/.cache/prism/kernels, one file per module, keyed by a hash of
 *    the source, name, options, device architecture, NVRTC and driver
 *    versions, and Prism's version and device headers. Files are written
 *    whole under another name and renamed into place, so a process never
 *    reads half of one; a file that is not whole, or was written for other
 *    inputs, is removed with a warning (the context's log) and the module
 *    compiled again.
 *
 * NVRTC (libnvrtc.so of the CUDA toolkit) is loaded when a context first
 * compiles, not linked: a machine without it runs everything else, and
 * prism_module_compile says what is missing.
 *
 * Functions: prism_module_compile, prism_module_release,
 *            prism_module_function, prism_function_launch,
 *            prism_module_cache_stats, prism_module_cache_clear. */
#ifndef PRISM_MODULE_H
#define PRISM_MODULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "context.h"
#include "result.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct prism_module prism_module;
typedef struct prism_function prism_function;
/* Defined by prism/memory.h; repeated so this header stands alone. */
typedef struct prism_stream prism_stream;

typedef enum prism_module_cache {
    PRISM_MODULE_CACHE_DEFAULT = 0, /* the context's memo and the disk cache */
    PRISM_MODULE_CACHE_MEMORY,      /* the memo only */
    PRISM_MODULE_CACHE_NONE         /* compile every time; the module is the caller's alone */
} prism_module_cache;

/* Defaults (all-zero, or NULL options): name "module.cu", no compiler
 * options, both caches, the cache directory from the environment.
 *
 * compiler_options: NVRTC's (-D..., --use_fast_math, -lineinfo,
 * -std=c++17, -I<dir>, ...). Prism adds the architecture
 * (--gpu-architecture=sm_XY of the device, or compute_XY PTX where this
 * NVRTC does not know the device), so the options must not name one.
 * Headers found through -I are read by NVRTC but are not part of the disk
 * cache's key: while they change, use PRISM_MODULE_CACHE_MEMORY (or put
 * their text in the source). */
typedef struct prism_module_options {
    const char *name; /* the source's name in NVRTC's log */
    const char *const *compiler_options;
    size_t compiler_option_count;
    prism_module_cache cache;
    const char *cache_dir; /* NULL = from the environment, as above */
} prism_module_options;

/* What the caches did in this context. */
typedef struct prism_module_stats {
    uint64_t compiles;      /* NVRTC runs (failed ones too) */
    uint64_t memo_hits;     /* modules given again by the context's memo */
    uint64_t disk_hits;     /* modules loaded from the disk cache */
    uint64_t disk_writes;   /* entries written */
    uint64_t disk_rejected; /* entries found corrupt or foreign, removed */
    double compile_seconds; /* in NVRTC, summed */
} prism_module_stats;

/* A launch: a grid of blocks of threads, as CUDA's <<<grid, block,
 * shared, stream>>>. Defaults (all-zero): one block of one thread, no
 * dynamic shared memory, the context's kernel stream (the one
 * prism_render and prism_propagate use, so the orders hold), and the call
 * waits for the kernel and reports its error. */
typedef struct prism_launch {
    unsigned grid[3];     /* blocks in x, y, z; 0 = 1 */
    unsigned block[3];    /* threads per block in x, y, z; 0 = 1 */
    size_t shared_bytes;  /* dynamic shared memory per block */
    prism_stream *stream; /* NULL = the context's kernel stream */
    bool async;           /* return once the kernel is queued (errors show later) */
} prism_launch;

/** Compile `source` (CUDA C++, NUL-terminated) for ctx's device, or give
 * the module the caches hold for it. Kernels to look up by name are
 * declared extern "C" (C++ names are mangled).
 * @errors PRISM_ERROR_INVALID_ARGUMENT (NULL ctx, source or out; an option
 *   that is NULL or names an architecture; a bad cache mode),
 *   PRISM_ERROR_UNSUPPORTED (the host backend, a build without CUDA, no
 *   loadable NVRTC, a device older than this NVRTC knows),
 *   PRISM_ERROR_COMPILE (the last error message is NVRTC's log, after one
 *   line naming the module; each line of the log also goes to the log
 *   callback), PRISM_ERROR_CUDA (the driver refused the compiled code),
 *   PRISM_ERROR_OUT_OF_MEMORY. A disk cache that cannot be read or written
 *   is not an error: the module is compiled, and the log says why once.
 * @thread_safety As the context: one thread at a time. Several processes
 *   may share one cache directory.
 * @pointer_lifetime source and options are used during the call only. */
PRISM_API prism_result prism_module_compile(prism_context *ctx, const char *source,
                                            const prism_module_options *options,
                                            prism_module **out);

/** Give back the caller's reference. The module is unloaded when no one
 * holds it: neither the caller (each successful compile returning it is
 * one reference) nor the context's memo. Accepts NULL. Modules still held
 * when the context is destroyed are named in the log, unloaded, and make
 * prism_context_destroy return PRISM_ERROR_LIVE_ALLOCATIONS.
 * @errors None.
 * @thread_safety As the module's context: one thread at a time. */
PRISM_API void prism_module_release(prism_module *module);

/** The kernel named `name` (an extern "C" __global__ function).
 * @errors PRISM_ERROR_INVALID_ARGUMENT (NULL argument, no such kernel: the
 *   message lists the kernels there are), PRISM_ERROR_OUT_OF_MEMORY,
 *   PRISM_ERROR_CUDA.
 * @thread_safety As the module's context: one thread at a time.
 * @pointer_lifetime *out lives as long as the module. */
PRISM_API prism_result prism_module_function(prism_module *module, const char *name,
                                             prism_function **out);

/** Launch `function`. args[i] points at the i-th kernel parameter's value
 * (as cudaLaunchKernel takes them): their number and types are the
 * kernel's, which the call cannot check. args may be NULL for a kernel
 * without parameters. launch NULL: the defaults above.
 * @errors PRISM_ERROR_INVALID_ARGUMENT (NULL function, a stream of another
 *   context, more threads per block than the device allows, a grid beyond
 *   CUDA's limits), PRISM_ERROR_CUDA (the launch or, unless async, the
 *   kernel failed; the message has CUDA's words).
 * @thread_safety As the function's context: one thread at a time. */
PRISM_API prism_result prism_function_launch(prism_function *function, const prism_launch *launch,
                                             void **args);

/** The caches' figures of ctx (all zero on the host backend).
 * @errors PRISM_ERROR_INVALID_ARGUMENT (NULL argument).
 * @thread_safety As the context: one thread at a time. */
PRISM_API prism_result prism_module_cache_stats(const prism_context *ctx, prism_module_stats *out);

/** Empty ctx's memo (PyCUDA's clear_context_caches): modules the caller
 * does not hold are unloaded, held ones when released. The disk cache
 * stays. Accepts NULL.
 * @errors None.
 * @thread_safety As the context: one thread at a time. */
PRISM_API void prism_module_cache_clear(prism_context *ctx);

#ifdef __cplusplus
}
#endif

#endif
