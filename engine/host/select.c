/* The host backend's prism_photons_select: a count, then the copy in
 * order, over host memory (engine/launch/select.c checks the arguments). */
#include <string.h>

#include "engine/launch/select_internal.h"

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

prism_result prism__host_select(prism_context *ctx, const prism_photon *in, size_t count,
                                uint32_t any_of, prism_photon *out, size_t capacity,
                                size_t *selected)
{
    *selected = host_count(in, count, any_of);
    if (out == NULL)
        return PRISM_SUCCESS;
    if (*selected > capacity)
        return prism__error(ctx, PRISM_ERROR_OUT_OF_RANGE,
                            "photons_select: %zu photons selected, the output holds %zu", *selected,
                            capacity);
    host_copy(in, count, any_of, out);
    return PRISM_SUCCESS;
}
