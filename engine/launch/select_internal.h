/* Each backend's side of prism_photons_select: engine/host/select.c and
 * engine/cuda/select.cu, reached through ctx->be->select. */
#ifndef PRISM_SELECT_INTERNAL_H
#define PRISM_SELECT_INTERNAL_H

#include "engine/context_internal.h"
#include "prism/propagate.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Count the photons of in[0, count) with any bit of `any_of`; when `out` is
 * given and they fit `capacity`, copy them there in order. *selected is the
 * count in every case; PRISM_ERROR_OUT_OF_RANGE when they do not fit. */
prism_result prism__host_select(prism_context *ctx, const prism_photon *in, size_t count,
                                uint32_t any_of, prism_photon *out, size_t capacity,
                                size_t *selected);
prism_result prism__cuda_select(prism_context *ctx, const prism_photon *in, size_t count,
                                uint32_t any_of, prism_photon *out, size_t capacity,
                                size_t *selected);

/* Photons a DeviceSelect call of prism__cuda_select takes (0: the
 * default, 2^26), for tests that need several chunks without gigabytes;
 * not thread-safe. A no-op in a build without CUDA. */
void prism__cuda_select_chunk(size_t photons);

#ifdef __cplusplus
}
#endif

#endif
