/* The wide BVH's GPU test: what its kernel (bvh_wide_gpu_kernels.cu)
 * returns per ray. */
#ifndef PRISM_BVH_WIDE_GPU_H
#define PRISM_BVH_WIDE_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "geometry/bvh/internal.h" /* prism_bvh_wide */
#include "prism/bvh.h"

typedef struct wide_gpu_result {
    prism_hit binary, wide; /* prism_bvh_closest, prism_wide_closest_skip */
    float tuned_t;          /* prism_gpu_closest (the render's walk) */
    uint32_t tuned;
    float step_t; /* prism_gpu_wide_closest (render variant 9) */
    uint32_t step;
    uint32_t any_binary, any_wide;
} wide_gpu_result;

#define WIDE_GPU_NO_DEVICE 77

#ifdef __cplusplus
extern "C"
#endif
    /* Trace n rays on the device; 0, WIDE_GPU_NO_DEVICE or -1 (a CUDA error). */
    int
    wide_gpu_trace(const prism_bvh *b, const prism_bvh_wide *w, const prism_ray *rays, size_t n,
                   wide_gpu_result *out);

#endif
