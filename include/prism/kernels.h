/* What the kernels cost on a device: the registers and shared memory the
 * compiler gave each CUDA kernel, and the occupancy that follows. */
#ifndef PRISM_KERNELS_H
#define PRISM_KERNELS_H

#include "context.h"
#include "result.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Kernel names: "render", "generate", "propagate" (the default arithmetic:
 * prism_propagate_math), "propagate_exact", "propagate_fast"; the
 * wavefront propagation's kernels: "propagate_trace_exact",
 * "propagate_trace_fast" (the trace on the GPU walk),
 * "propagate_trace_generic_exact", "propagate_trace_generic_fast",
 * "propagate_physics_exact", "propagate_physics_fast". */

/** Occupancy of the named kernel launched with `threads_per_block` threads
 * on ctx's device, from cudaFuncGetAttributes and prism_occupancy_compute.
 * `registers` (may be NULL) receives the registers per thread.
 * @errors PRISM_ERROR_INVALID_ARGUMENT (NULL ctx or out, NULL or unknown
 *   name, bad thread count), PRISM_ERROR_UNSUPPORTED (host backend: no
 *   kernels to measure), PRISM_ERROR_CUDA.
 * @thread_safety As the context: one thread at a time. */
PRISM_API prism_result prism_kernel_occupancy(prism_context *ctx, const char *kernel_name,
                                              int threads_per_block, prism_occupancy *out);

/** Registers per thread and static shared bytes of the named kernel
 * (CUDA backend only). Either output may be NULL.
 * @errors PRISM_ERROR_INVALID_ARGUMENT (NULL ctx, NULL or unknown name),
 *   PRISM_ERROR_UNSUPPORTED (host backend), PRISM_ERROR_CUDA.
 * @thread_safety As the context: one thread at a time. */
PRISM_API prism_result prism_kernel_resources(prism_context *ctx, const char *kernel_name,
                                              int *registers_per_thread, size_t *shared_bytes);

#ifdef __cplusplus
}
#endif

#endif
