/* The CUDA backend's table (engine/backend.h): the functions of the files
 * beside this one, and the few adapters that give them the table's shape. */
#include "engine/backend.h"

#include <cuda_runtime_api.h>

#include "engine/cuda/bvh/build.h"
#include "engine/launch/kernel_backend.h"
#include "engine/launch/select_internal.h"
#include "engine/launch/summary.h"
#include "engine/memory/internal.h"
#include "engine/module/internal.h"
#include "engine/upload/optics_tables.h"

int prism__cuda_read_kernel(const void *p, size_t bytes, int repeat, double *seconds);

static prism_result cuda_generate(prism_context *ctx, prism_propagate_math math,
                                  const prism_source_params *s, const prism_optics_view *o,
                                  const prism_propagate_params *q, const prism_photon *given,
                                  prism_photon *photons, prism_step_record *records,
                                  uint32_t *queue, uint32_t count)
{
    return prism__cuda_photon_kernels(math)->generate(ctx, s, o, q, given, photons, records, queue,
                                                      count);
}

static prism_result cuda_propagate(prism_context *ctx, prism_propagate_math math,
                                   const prism_geometry_view *g, const prism_optics_view *o,
                                   const prism_propagate_params *q, prism_photon *photons,
                                   prism_step_record *records, const uint32_t *queue_in,
                                   uint32_t n_in, uint32_t *queue_out, uint32_t *n_out,
                                   uint32_t budget, uint32_t *counter)
{
    return prism__cuda_photon_kernels(math)->propagate(ctx, g, o, q, photons, records, queue_in,
                                                       n_in, queue_out, n_out, budget, counter);
}

static prism_result cuda_propagate_wave(prism_context *ctx, prism_propagate_math math,
                                        const prism_geometry_view *g, const prism_optics_view *o,
                                        const prism_propagate_params *q, prism_photon *photons,
                                        prism_step_record *records, const uint32_t *queue_in,
                                        uint32_t n_in, uint32_t *queue_out, uint32_t *n_out,
                                        uint32_t *counter, prism_trace_hit *hits, int tuned)
{
    return prism__cuda_photon_kernels(math)->propagate_wave(ctx, g, o, q, photons, records,
                                                            queue_in, n_in, queue_out, n_out,
                                                            counter, hits, tuned);
}

static prism_result cuda_read_bandwidth(prism_context *ctx, const void *p, size_t bytes, int repeat,
                                        double *seconds)
{
    prism_result r = prism__cuda_bind(ctx);
    if (r != PRISM_SUCCESS)
        return r;
    int e = prism__cuda_read_kernel(p, bytes, repeat, seconds);
    if (e != 0)
        return prism__error(ctx, PRISM_ERROR_CUDA, "read kernel: %s",
                            cudaGetErrorString((cudaError_t)e));
    return PRISM_SUCCESS;
}

static const prism__backend cuda_backend = {
    .memory = &prism__cuda_memory_backend,
    .bind = prism__cuda_bind,
    .kernels_init = prism__cuda_kernels_init,
    .kernels_shutdown = prism__cuda_kernels_shutdown,
    .render = prism__cuda_render,
    .generate = cuda_generate,
    .propagate = cuda_propagate,
    .propagate_wave = cuda_propagate_wave,
    .tally = prism__cuda_tally,
    .summary = prism__cuda_summary,
    .select = prism__cuda_select,
    .kernel_attributes = prism__cuda_kernel_attributes,
    .read_bandwidth = cuda_read_bandwidth,
    .optics_upload = prism__cuda_optics_upload,
    .optics_release = prism__cuda_optics_release,
    .bvh_bytes = prism__cuda_bvh_bytes,
    .bvh_build = prism__cuda_bvh_build,
    .gather_info = prism__cuda_gather_info,
    .pack_info = prism__cuda_pack_info,
    .gl_codes = prism__cuda_gl_codes,
    .wide_collapse = prism__cuda_bvh_collapse,
    .library_load = prism__cuda_library_load,
    .library_unload = prism__cuda_library_unload,
    .library_kernel = prism__cuda_library_kernel,
    .kernel_launch = prism__cuda_kernel_launch,
};

const prism__backend *prism__cuda_backend(void)
{
    return &cuda_backend;
}
