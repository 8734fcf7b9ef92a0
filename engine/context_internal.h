/* The context's private shape, shared by the engine's files. Each module
 * keeps its own state behind one pointer here, so the files stay apart. */
#ifndef PRISM_CONTEXT_INTERNAL_H
#define PRISM_CONTEXT_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>

#include "prism/context.h"

struct prism_memory_state; /* ledger, pools: engine/memory/ledger.c and friends */
struct prism_kernel_state; /* streams, kernel resources: engine/launch/kernel_state.c */
struct prism_module_state; /* runtime-compiled modules and their memo: engine/module/module.c */
struct prism__backend;     /* the backend's table: engine/backend.h */

struct prism_context {
    prism_backend backend;
    const struct prism__backend *be; /* chosen once, when the context is made */
    prism_device_info device;
    int cuda_device; /* CUDA ordinal, -1 on the host backend */
    bool gl_shared;
    bool mapped_allowed;
    int host_threads;
    prism_log_fn log;
    void *log_user;
    prism_log_level log_level;
    char last_error[4096]; /* room for a compiler's log (prism_module_compile) */
    struct prism_memory_state *memory;
    struct prism_kernel_state *kernels;
    struct prism_module_state *modules; /* NULL until the first compile */
};

#if defined(__GNUC__)
#define PRISM_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define PRISM_PRINTF(a, b)
#endif

/* Log one line through the context's callback (ctx may be NULL: nothing). */
void prism__log(const prism_context *ctx, prism_log_level level, const char *fmt, ...)
    PRISM_PRINTF(3, 4);
void prism__vlog(const prism_context *ctx, prism_log_level level, const char *fmt, va_list ap);

/* Append to a report being written into buf[size] (snprintf's rules: the
 * text is cut to fit and stays NUL-terminated, *len counts what the whole
 * text needs, so callers can return it and let the caller size a buffer). */
void prism__appendf(char *buf, size_t size, size_t *len, const char *fmt, ...) PRISM_PRINTF(4, 5);

/* Record `fmt` as the context's last error, log it at ERROR, return `result`. */
prism_result prism__error(prism_context *ctx, prism_result result, const char *fmt, ...)
    PRISM_PRINTF(3, 4);

/* Module hooks called by prism_context_create/destroy, in this order:
 * create: memory_init, kernels_init; destroy: modules_shutdown,
 * kernels_shutdown, memory_shutdown. modules_shutdown unloads every
 * runtime-compiled module and returns PRISM_ERROR_LIVE_ALLOCATIONS when the
 * caller still held one (after logging each).
 * memory_shutdown returns PRISM_ERROR_LIVE_ALLOCATIONS when the ledger is not
 * empty, after logging each live allocation. */
prism_result prism__memory_init(prism_context *ctx);
prism_result prism__memory_shutdown(prism_context *ctx);
prism_result prism__kernels_init(prism_context *ctx);
void prism__kernels_shutdown(prism_context *ctx);
prism_result prism__modules_shutdown(prism_context *ctx);

/* Make ctx's device current on the calling thread (the runtime API keeps the
 * current device per thread). Every CUDA-touching entry point of the CUDA
 * backend calls it; shared code calls ctx->be->bind (engine/backend.h). */
prism_result prism__cuda_bind(prism_context *ctx);

#endif
