/* prism_photons_select: the photons whose history has chosen bits (the
 * hits), copied in order where the photons already are: a loop on the host
 * backend, a count and cub's ordered select on CUDA (engine/cuda/select.cu), so
 * results left in device memory are filtered without crossing PCIe. */
#include <string.h>

#include "engine/memory/internal.h"
#include "select_internal.h"

/* Where the kernels (or, on the host backend, this loop) read a buffer. */
static void *reachable(const prism_context *ctx, const prism_buffer *b)
{
    void *p = prism_buffer_device_pointer(b);
    if (p == NULL && ctx->backend == PRISM_BACKEND_HOST)
        p = prism_buffer_host_pointer(b);
    return p;
}

static size_t host_count(const prism_photon *in, size_t count, uint32_t any_of)
{
    size_t n = 0;
    for (size_t i = 0; i < count; i++)
        n += (in[i].history & any_of) != 0;
    return n;
}

static void host_copy(const prism_photon *in, size_t count, uint32_t any_of, prism_photon *out)
{
    for (size_t i = 0, k = 0; i < count; i++)
        if (in[i].history & any_of)
            memcpy(&out[k++], &in[i], sizeof *out);
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
#ifdef PRISM_HAVE_CUDA
    if (ctx->backend == PRISM_BACKEND_CUDA)
        return prism__cuda_select(ctx, in, count, any_of, dst, capacity, selected);
#endif
    *selected = host_count(in, count, any_of);
    if (out == NULL)
        return PRISM_SUCCESS;
    if (*selected > capacity)
        return prism__error(ctx, PRISM_ERROR_OUT_OF_RANGE,
                            "photons_select: %zu photons selected, the output holds %zu",
                            *selected, capacity);
    host_copy(in, count, any_of, dst);
    return PRISM_SUCCESS;
}
