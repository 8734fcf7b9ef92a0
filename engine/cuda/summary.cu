/* The run's summary on CUDA (engine/launch/summary.h): one pass over the
 * final photons in device memory. Each block counts into shared memory and
 * adds its counters to the device's once; detections per solid go straight
 * to a device array (hits are a small part of the photons). Only the
 * counters cross PCIe. */
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "engine/context_internal.h"
#include "engine/launch/kernel_state.h"
#include "prism/memory.h"
}
#include "engine/launch/summary.h"
#include "launch.h"
#include "prism/device/photon.h"

#define SUMMARY_BLOCK 256

/* The device's counters: [0, 32) flagged, [32, 64) ended, 64 steps, 65 timed,
 * 66 the two float keys (min as ~key, so both are atomicMax). */
enum {
    SUM_FLAGGED = 0,
    SUM_ENDED = 32,
    SUM_STEPS = 64,
    SUM_TIMED = 65,
    SUM_KEYS = 66,
    SUM_WORDS = 67
};

__global__ void prism_summary_kernel(const prism_photon *p, size_t n, unsigned long long *sums,
                                     unsigned long long *by_solid, uint32_t solids)
{
    __shared__ unsigned long long block[SUM_KEYS];
    __shared__ uint32_t keys[2];
    for (int i = threadIdx.x; i < SUM_KEYS; i += blockDim.x)
        block[i] = 0;
    if (threadIdx.x < 2)
        keys[threadIdx.x] = 0;
    __syncthreads();
    unsigned long long steps = 0, timed = 0;
    uint32_t kmax = 0, kmin = 0; /* kmin holds ~key of the smallest */
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        const uint32_t h = p[i].history;
        steps += p[i].steps;
        for (uint32_t rest = h; rest != 0; rest &= rest - 1)
            atomicAdd(&block[SUM_FLAGGED + __ffs(rest) - 1], 1ull);
        const int e = prism_photon_ended(h);
        if (e >= 0)
            atomicAdd(&block[SUM_ENDED + e], 1ull);
        const float t = p[i].time;
        if (isfinite(t)) {
            const uint32_t k = prism__float_order(t);
            kmax = max(kmax, k);
            kmin = max(kmin, ~k);
            timed++;
        }
        if ((h & PRISM_SURFACE_DETECT) && by_solid != NULL)
            atomicAdd(&by_solid[p[i].solid < solids ? p[i].solid : solids], 1ull);
    }
    atomicAdd(&block[SUM_STEPS], steps);
    atomicAdd(&block[SUM_TIMED], timed);
    atomicMax(&keys[0], kmin);
    atomicMax(&keys[1], kmax);
    __syncthreads();
    for (int i = threadIdx.x; i < SUM_KEYS; i += blockDim.x)
        if (block[i] != 0)
            atomicAdd(&sums[i], block[i]);
    if (threadIdx.x == 0) {
        uint32_t *k = (uint32_t *)&sums[SUM_KEYS];
        atomicMax(&k[0], keys[0]);
        atomicMax(&k[1], keys[1]);
    }
}

extern "C" prism_result prism__cuda_summary(prism_context *ctx, const prism_photon *photons,
                                            size_t count, prism_propagate_summary *s)
{
    prism_result r = prism__cuda_bind(ctx);
    if (r != PRISM_SUCCESS || count == 0)
        return r;
    const bool solids = s->detected_by_solid != NULL;
    const size_t solid_bytes = solids ? (s->solids + 1) * sizeof(unsigned long long) : 0;
    const size_t bytes = SUM_WORDS * sizeof(unsigned long long) + solid_bytes;
    prism__scratch scratch;
    r = prism__scratch_alloc(ctx, &scratch, bytes, "propagate.summary");
    if (r != PRISM_SUCCESS)
        return r;
    unsigned long long *sums = (unsigned long long *)scratch.pointer;
    unsigned long long *by_solid = solids ? sums + SUM_WORDS : NULL;
    unsigned long long *got = (unsigned long long *)malloc(bytes);
    cudaStream_t st = prism__cuda_stream_of(ctx);
    cudaError_t err = got != NULL ? cudaMemsetAsync(sums, 0, bytes, st) : cudaErrorMemoryAllocation;
    if (err == cudaSuccess) {
        const unsigned blocks = prism__cuda_blocks(count, SUMMARY_BLOCK);
        const unsigned grid = blocks < 1024 ? blocks : 1024;
        prism_summary_kernel<<<grid, SUMMARY_BLOCK, 0, st>>>(photons, count, sums, by_solid,
                                                             (uint32_t)(solids ? s->solids : 0));
        err = cudaGetLastError();
    }
    if (err == cudaSuccess)
        err = cudaMemcpyAsync(got, sums, bytes, cudaMemcpyDeviceToHost, st);
    if (err == cudaSuccess)
        err = cudaStreamSynchronize(st);
    prism__scratch_release(&scratch);
    if (err != cudaSuccess) {
        free(got);
        return prism__cuda_error(ctx, err, "propagate", "summary");
    }
    prism_propagate_summary add;
    memset(&add, 0, sizeof add);
    add.photons = count;
    for (int b = 0; b < 32; b++) {
        add.flagged[b] = got[SUM_FLAGGED + b];
        add.ended[b] = got[SUM_ENDED + b];
    }
    add.steps = got[SUM_STEPS];
    add.timed = got[SUM_TIMED];
    uint32_t keys[2];
    memcpy(keys, &got[SUM_KEYS], sizeof keys);
    add.time_min = prism__float_from_order(~keys[0]);
    add.time_max = prism__float_from_order(keys[1]);
    add.detected_by_solid = solids ? (uint64_t *)(got + SUM_WORDS) : NULL;
    add.solids = s->solids;
    prism__summary_merge(s, &add);
    free(got);
    return PRISM_SUCCESS;
}
