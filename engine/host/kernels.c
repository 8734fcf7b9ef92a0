/* The host backend of the kernels: OpenMP loops over the same PRISM_HD
 * per-pixel and per-photon functions the CUDA backend launches. It is the
 * reference the GPU results are checked against. */
#include "engine/launch/kernel_backend.h"

#include <omp.h>

static int host_threads(const prism_context *ctx)
{
    return ctx != NULL && ctx->host_threads > 0 ? ctx->host_threads : omp_get_max_threads();
}

prism_result prism__host_render(prism_context *ctx, const prism_geometry_view *g,
                                const prism_render_params *p, uint32_t *image, uint32_t y0,
                                uint32_t rows)
{
    const long long n = prism_render_threads(p->width, rows);
#pragma omp parallel for schedule(dynamic, 256) num_threads(host_threads(ctx))
    for (long long k = 0; k < n; k++)
        prism_render_one(g, p, image, y0, rows, (uint32_t)k);
    return PRISM_SUCCESS;
}

prism_result prism__host_generate(prism_context *ctx, const prism_source_params *s,
                                  const prism_optics_view *o, const prism_propagate_params *q,
                                  const prism_photon *given, prism_photon *photons,
                                  prism_step_record *records, uint32_t *queue, uint32_t count)
{
#pragma omp parallel for schedule(static) num_threads(host_threads(ctx))
    for (long long i = 0; i < (long long)count; i++) {
        prism_generate_photon(s, o, q->first_photon + (uint64_t)i, given != NULL ? &given[i] : NULL,
                              &photons[i]);
        prism_record_write(records, q, (uint32_t)i, &photons[i]);
        queue[i] = (uint32_t)i;
    }
    return PRISM_SUCCESS;
}

prism_result prism__host_propagate(prism_context *ctx, const prism_geometry_view *g,
                                   const prism_optics_view *o, const prism_propagate_params *q,
                                   prism_photon *photons, prism_step_record *records,
                                   const uint32_t *queue_in, uint32_t n_in, uint32_t *queue_out,
                                   uint32_t *n_out, uint32_t budget)
{
    /* Survivors are marked in place, then compacted in queue order, so the
     * queue is the same whatever the thread count. */
    uint32_t *alive = queue_out;
#pragma omp parallel for schedule(dynamic, 64) num_threads(host_threads(ctx))
    for (long long k = 0; k < (long long)n_in; k++)
        alive[k] = (uint32_t)prism_photon_run(g, o, q, photons, records, queue_in[k], budget);
    uint32_t n = 0;
    for (uint32_t k = 0; k < n_in; k++)
        if (alive[k])
            queue_out[n++] = queue_in[k];
    *n_out = n;
    return PRISM_SUCCESS;
}
