/* prism_photons_select: the photons whose history has chosen bits (the
 * hits), copied in order where the photons already are: a loop on the host
 * backend (engine/host/select.c), a count and cub's ordered select on CUDA
 * (engine/cuda/select.cu), so results left in device memory are filtered
 * without crossing PCIe. */
#include "engine/backend.h"
#include "engine/memory/internal.h"
#include "prism/propagate.h"

/* Where the kernels (or, on the host backend, its select loop) read a buffer. */
static void *reachable(const prism_context *ctx, const prism_buffer *b)
{
    void *p = prism_buffer_device_pointer(b);
    if (p == NULL && ctx->backend == PRISM_BACKEND_HOST)
        p = prism_buffer_host_pointer(b);
    return p;
}

prism_result prism_photons_select(prism_context *ctx, const prism_buffer *photons, size_t count,
                                  uint32_t any_of, prism_buffer *out, size_t *selected)
{
    if (ctx == NULL || photons == NULL || selected == NULL)
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                            "photons_select: NULL context, photons or selected");
    *selected = 0;
    if (photons->ctx != ctx || (out != NULL && out->ctx != ctx))
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                            "photons_select: a buffer of another context");
    if (count > prism_buffer_size(photons) / sizeof(prism_photon))
        return prism__error(ctx, PRISM_ERROR_OUT_OF_RANGE,
                            "photons_select: %zu photons do not fit the buffer \"%s\" (%zu bytes)",
                            count, photons->alloc->tag, prism_buffer_size(photons));
    const prism_photon *in = reachable(ctx, photons);
    prism_photon *dst = out != NULL ? reachable(ctx, out) : NULL;
    if (in == NULL || (out != NULL && dst == NULL))
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                            "photons_select: a buffer the kernels cannot reach (%s memory)",
                            prism_memory_kind_name(in == NULL ? photons->alloc->kind
                                                              : out->alloc->kind));
    size_t capacity = out != NULL ? prism_buffer_size(out) / sizeof(prism_photon) : 0;
    return ctx->be->select(ctx, in, count, any_of, dst, capacity, selected);
}
