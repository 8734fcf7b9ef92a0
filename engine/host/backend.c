/* The host backend's table (engine/backend.h): OpenMP loops over the
 * device API's functions, memory on the heap. What it has not (a device
 * BVH builder and collapse, runtime-compiled modules, kernel attributes,
 * a device to bind) stays NULL. */
#include "engine/backend.h"

#include "engine/launch/kernel_backend.h"
#include "engine/launch/propagate_internal.h"
#include "engine/launch/select_internal.h"
#include "engine/launch/summary.h"
#include "engine/memory/internal.h"

/* One arithmetic on the host: the exact one, which the CUDA kernels match. */
static prism_result host_generate(prism_context *ctx, prism_propagate_math math,
                                  const prism_source_params *s, const prism_optics_view *o,
                                  const prism_propagate_params *q, const prism_photon *given,
                                  prism_photon *photons, prism_step_record *records,
                                  uint32_t *queue, uint32_t count)
{
    (void)math;
    return prism__host_generate(ctx, s, o, q, given, photons, records, queue, count);
}

static prism_result host_propagate(prism_context *ctx, prism_propagate_math math,
                                   const prism_geometry_view *g, const prism_optics_view *o,
                                   const prism_propagate_params *q, prism_photon *photons,
                                   prism_step_record *records, const uint32_t *queue_in,
                                   uint32_t n_in, uint32_t *queue_out, uint32_t *n_out,
                                   uint32_t budget, uint32_t *counter)
{
    (void)math;
    (void)counter;
    return prism__host_propagate(ctx, g, o, q, photons, records, queue_in, n_in, queue_out, n_out,
                                 budget);
}

static prism_result host_tally(prism_context *ctx, const prism_photon *photons, uint32_t count,
                               prism_propagate_stats *st)
{
    (void)ctx;
    prism__propagate_tally(photons, count, st);
    return PRISM_SUCCESS;
}

const prism__backend prism__host_backend = {
    .memory = &prism__host_memory_backend,
    .render = prism__host_render,
    .generate = host_generate,
    .propagate = host_propagate,
    .tally = host_tally,
    .summary = prism__host_summary,
    .select = prism__host_select,
    .read_bandwidth = prism__host_read_bandwidth,
};
