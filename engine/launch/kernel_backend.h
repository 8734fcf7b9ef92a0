/* The launches of the rendering and propagation kernels, one set per
 * backend with the same shape: engine/host/kernels.c (OpenMP loops) and
 * engine/cuda/kernels.cu (CUDA launches). Pointers are the backend's: heap memory
 * on the host, device pointers (device, mapped or GL-mapped memory) on
 * CUDA. Shared code reaches them through ctx->be (engine/backend.h), the
 * tables of engine/host/backend.c and engine/cuda/backend.c; render.c and
 * propagate.c hold the loop. The CUDA functions exist only in a build
 * with CUDA: only the CUDA table names them. */
#ifndef PRISM_KERNEL_BACKEND_H
#define PRISM_KERNEL_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "engine/context_internal.h"
#include "prism/device/optics_view.h"
#include "prism/device/photon.h"
#include "prism/device/shade.h"
#include "prism/device/source.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Rows [y0, y0 + rows) of the image (counted from the top, before the
 * params' flip), in 8x4 tiles (prism/device/shade.h). */
prism_result prism__host_render(prism_context *ctx, const prism_geometry_view *g,
                                const prism_render_params *p, uint32_t *image, uint32_t y0,
                                uint32_t rows);
/* Photons [0, count): generated, record 0 written, queue[i] = i (`o`: the
 * optics tables gensteps read, or NULL). */
prism_result prism__host_generate(prism_context *ctx, const prism_source_params *s,
                                  const prism_optics_view *o, const prism_propagate_params *q,
                                  const prism_photon *given, prism_photon *photons,
                                  prism_step_record *records, uint32_t *queue, uint32_t count);
/* Up to `budget` steps of the photons queue_in[0, n_in); survivors are
 * appended to queue_out, their number returned in *n_out. */
prism_result prism__host_propagate(prism_context *ctx, const prism_geometry_view *g,
                                   const prism_optics_view *o, const prism_propagate_params *q,
                                   prism_photon *photons, prism_step_record *records,
                                   const uint32_t *queue_in, uint32_t n_in, uint32_t *queue_out,
                                   uint32_t *n_out, uint32_t budget);
/* Mean seconds of `repeat` passes of all threads reading p[0, bytes). */
prism_result prism__host_read_bandwidth(prism_context *ctx, const void *p, size_t bytes, int repeat,
                                        double *seconds);

struct prism_kernel_state;
/* The CUDA part of the kernel state (engine/launch/kernel_state.h): the
 * kernel stream. */
prism_result prism__cuda_kernels_init(prism_context *ctx, struct prism_kernel_state *state);
void prism__cuda_kernels_shutdown(prism_context *ctx, struct prism_kernel_state *state);
/* The render on ctx's device and stream. Synchronous (returns when done). */
prism_result prism__cuda_render(prism_context *ctx, const prism_geometry_view *g,
                                const prism_render_params *p, uint32_t *image, uint32_t y0,
                                uint32_t rows);
/* The photon kernels of one arithmetic (engine/cuda/photon_kernels.cuh): the
 * exact one gives the host backend's bits, the fast one uses the hardware's
 * approximations. generate and propagate do what prism__host_generate and
 * prism__host_propagate do, on ctx's device; queue counts live on the
 * device (`counter` is one device uint32). Synchronous. The kernel
 * pointers are for cudaFuncGetAttributes. */
typedef struct prism_cuda_photon_kernels {
    prism_result (*generate)(prism_context *ctx, const prism_source_params *s,
                             const prism_optics_view *o, const prism_propagate_params *q,
                             const prism_photon *given, prism_photon *photons,
                             prism_step_record *records, uint32_t *queue, uint32_t count);
    prism_result (*propagate)(prism_context *ctx, const prism_geometry_view *g,
                              const prism_optics_view *o, const prism_propagate_params *q,
                              prism_photon *photons, prism_step_record *records,
                              const uint32_t *queue_in, uint32_t n_in, uint32_t *queue_out,
                              uint32_t *n_out, uint32_t budget, uint32_t *counter);
    /* One step as the wavefront (a trace kernel writing hits[0, n_in),
     * then a physics kernel); `tuned`: the trace on the GPU binary walk
     * (prism/device/traverse_gpu.h) rather than prism_trace_closest. */
    prism_result (*propagate_wave)(prism_context *ctx, const prism_geometry_view *g,
                                   const prism_optics_view *o, const prism_propagate_params *q,
                                   prism_photon *photons, prism_step_record *records,
                                   const uint32_t *queue_in, uint32_t n_in, uint32_t *queue_out,
                                   uint32_t *n_out, uint32_t *counter, prism_trace_hit *hits,
                                   int tuned);
    const void *generate_kernel, *propagate_kernel;
    const void *trace_kernel, *trace_generic_kernel, *physics_kernel;
} prism_cuda_photon_kernels;
extern const prism_cuda_photon_kernels prism__cuda_photon_exact, prism__cuda_photon_fast;

static inline const prism_cuda_photon_kernels *prism__cuda_photon_kernels(prism_propagate_math m)
{
    return m == PRISM_PROPAGATE_MATH_FAST ? &prism__cuda_photon_fast : &prism__cuda_photon_exact;
}

/* The stats' photon figures from `count` photons in device memory. */
prism_result prism__cuda_tally(prism_context *ctx, const prism_photon *photons, uint32_t count,
                               prism_propagate_stats *st);
/* Registers and static shared memory of a kernel by name ("render",
 * "generate", "propagate", "propagate_exact", "propagate_fast", and the
 * wavefront's kernels, "propagate_trace_exact", "propagate_trace_fast",
 * "propagate_trace_generic_exact", "propagate_trace_generic_fast",
 * "propagate_physics_exact", "propagate_physics_fast"). */
prism_result prism__cuda_kernel_attributes(prism_context *ctx, const char *name, int *registers,
                                           size_t *shared_bytes);

#ifdef __cplusplus
}
#endif

#endif
