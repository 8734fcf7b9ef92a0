/* The photon kernels (generation and the step loop's launches) and their
 * launchers, compiled twice: by engine/cuda/photon_exact.cu with IEEE arithmetic
 * (no fused multiply-adds, correctly rounded division and square root,
 * denormals kept, prism/device/kmath.h's own functions), which gives the host
 * backend's bits, and by engine/cuda/photon_fast.cu with --use_fast_math and the
 * hardware's approximate functions. The including file defines
 * PRISM_PHOTON_KERNELS, the name of the table it exports
 * (kernel_backend.h). */
#ifndef PRISM_PHOTON_KERNELS
#error "define PRISM_PHOTON_KERNELS before including engine/cuda/photon_kernels.cuh"
#endif

#include <cuda_runtime_api.h>
#include <string.h>

/* The engine's internal headers declare C functions without extern "C"
 * guards (see engine/cuda/kernels.cu). */
extern "C" {
#include "engine/context_internal.h"
#include "engine/launch/kernel_state.h"
}
#include "launch.h"
#include "engine/launch/kernel_backend.h"

#define PRISM_PHOTON_BLOCK 128
static __global__ void prism_generate_kernel(prism_source_params s, prism_optics_view o,
                                             prism_propagate_params q, const prism_photon *given,
                                             prism_photon *photons, prism_step_record *records,
                                             uint32_t *queue, uint32_t count)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count)
        return;
    prism_generate_photon(&s, &o, q.first_photon + i, given != 0 ? &given[i] : 0, &photons[i]);
    prism_record_write(records, &q, i, &photons[i]);
    queue[i] = i;
}

/* The step kernel comes in two builds of the same code, and each launch
 * takes the one that suits where the geometry is. With it all in device
 * memory the walk waits on the SMs' own memory, and more warps in flight
 * hide that: registers are capped at 64 (8 blocks of 128 an SM, twice the
 * occupancy of the compiler's choice). With any of it in mapped host
 * memory the walk waits on PCIe, where more warps only queue more reads,
 * so the compiler keeps its registers. The README's photon kernel table
 * has the measurements. PRISM_PHOTON_MIN_BLOCKS overrides the cap at build
 * time. */
#ifndef PRISM_PHOTON_MIN_BLOCKS
#define PRISM_PHOTON_MIN_BLOCKS 8
#endif

static __device__ __forceinline__ void
prism_propagate_one(const prism_geometry_view &g, const prism_optics_view &o,
                    const prism_propagate_params &q, prism_photon *photons,
                    prism_step_record *records, const uint32_t *queue_in, uint32_t n_in,
                    uint32_t *queue_out, uint32_t *counter, uint32_t budget)
{
    uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n_in)
        return;
    uint32_t id = queue_in[k];
    if (prism_photon_run(&g, &o, &q, photons, records, id, budget))
        queue_out[atomicAdd(counter, 1u)] = id;
}

/* Geometry all in device memory: occupancy first. */
static __global__ void __launch_bounds__(PRISM_PHOTON_BLOCK, PRISM_PHOTON_MIN_BLOCKS)
    prism_propagate_kernel(prism_geometry_view g, prism_optics_view o, prism_propagate_params q,
                           prism_photon *photons, prism_step_record *records,
                           const uint32_t *queue_in, uint32_t n_in, uint32_t *queue_out,
                           uint32_t *counter, uint32_t budget)
{
    prism_propagate_one(g, o, q, photons, records, queue_in, n_in, queue_out, counter, budget);
}

/* Some of it in mapped host memory: the compiler's registers. */
static __global__ void
prism_propagate_mapped_kernel(prism_geometry_view g, prism_optics_view o, prism_propagate_params q,
                              prism_photon *photons, prism_step_record *records,
                              const uint32_t *queue_in, uint32_t n_in, uint32_t *queue_out,
                              uint32_t *counter, uint32_t budget)
{
    prism_propagate_one(g, o, q, photons, records, queue_in, n_in, queue_out, counter, budget);
}

static prism_result generate(prism_context *ctx, const prism_source_params *s,
                             const prism_optics_view *o, const prism_propagate_params *q,
                             const prism_photon *given, prism_photon *photons,
                             prism_step_record *records, uint32_t *queue, uint32_t count)
{
    prism_result r = prism__cuda_bind(ctx);
    if (r != PRISM_SUCCESS || count == 0)
        return r;
    prism_optics_view vacuum;
    memset(&vacuum, 0, sizeof vacuum);
    prism_generate_kernel<<<prism__cuda_blocks(count, PRISM_PHOTON_BLOCK), PRISM_PHOTON_BLOCK, 0,
                            prism__cuda_stream_of(ctx)>>>(*s, o != 0 ? *o : vacuum, *q, given,
                                                          photons, records, queue, count);
    return prism__cuda_finish(ctx, "generate");
}

static prism_result propagate(prism_context *ctx, const prism_geometry_view *g,
                              const prism_optics_view *o, const prism_propagate_params *q,
                              prism_photon *photons, prism_step_record *records,
                              const uint32_t *queue_in, uint32_t n_in, uint32_t *queue_out,
                              uint32_t *n_out, uint32_t budget, uint32_t *counter)
{
    *n_out = 0;
    prism_result r = prism__cuda_bind(ctx);
    if (r != PRISM_SUCCESS || n_in == 0)
        return r;
    prism_optics_view vacuum;
    memset(&vacuum, 0, sizeof vacuum);
    cudaStream_t s = prism__cuda_stream_of(ctx);
    cudaError_t err = cudaMemsetAsync(counter, 0, sizeof *counter, s);
    if (err != cudaSuccess)
        return prism__cuda_finish(ctx, "propagate (counter)");
    const unsigned blocks = prism__cuda_blocks(n_in, PRISM_PHOTON_BLOCK);
    if (g->device_resident)
        prism_propagate_kernel<<<blocks, PRISM_PHOTON_BLOCK, 0, s>>>(*g, o != 0 ? *o : vacuum, *q,
                                                                     photons, records, queue_in,
                                                                     n_in, queue_out, counter,
                                                                     budget);
    else
        prism_propagate_mapped_kernel<<<blocks, PRISM_PHOTON_BLOCK, 0, s>>>(
            *g, o != 0 ? *o : vacuum, *q, photons, records, queue_in, n_in, queue_out, counter,
            budget);
    err = cudaGetLastError();
    if (err == cudaSuccess)
        err = cudaMemcpyAsync(n_out, counter, sizeof *n_out, cudaMemcpyDeviceToHost, s);
    if (err != cudaSuccess) {
        cudaGetLastError();
        return prism__error(ctx, PRISM_ERROR_CUDA, "propagate kernel: %s", cudaGetErrorString(err));
    }
    return prism__cuda_finish(ctx, "propagate");
}

extern "C" const prism_cuda_photon_kernels PRISM_PHOTON_KERNELS = {
    generate, propagate, (const void *)prism_generate_kernel, (const void *)prism_propagate_kernel};
