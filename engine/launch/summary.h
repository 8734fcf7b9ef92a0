/* The run's summary (prism_propagate_summary) and its hits, made where the
 * final photons are: an OpenMP loop on the host backend, kernels on CUDA
 * (engine/cuda/summary.cu), so that on a GPU only counts and hits cross
 * PCIe. Pointers are the backend's (prism__target_map.pointer). */
#ifndef PRISM_LAUNCH_SUMMARY_H
#define PRISM_LAUNCH_SUMMARY_H

#include <stddef.h>
#include <stdint.h>

#include "engine/context_internal.h"
#include "prism/propagate.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Add photons[0, count) to `s`. */
prism_result prism__host_summary(prism_context *ctx, const prism_photon *photons, size_t count,
                                 prism_propagate_summary *s);
prism_result prism__cuda_summary(prism_context *ctx, const prism_photon *photons, size_t count,
                                 prism_propagate_summary *s);

/* Fold one call's tallies `add` (its detected_by_solid of the same size)
 * into `into`. */
void prism__summary_merge(prism_propagate_summary *into, const prism_propagate_summary *add);

#ifdef __cplusplus
}
#endif

#endif
