/* The CUDA backend of the kernels: thin launchers over the PRISM_HD
 * per-pixel and per-photon functions that the host backend runs in OpenMP
 * loops (engine/kernels/). Each launcher binds the context's device,
 * launches on the kernels' stream, and waits, so a failing launch is
 * reported by the call that made it. */

/* The shared headers assert layouts with C11's _Static_assert; C++ spells
 * it static_assert. */
#ifndef _Static_assert
#define _Static_assert static_assert
#endif

#include <cuda_runtime_api.h>
#include <math.h>
#include <string.h>

/* The engine's internal headers declare C functions without extern "C"
 * guards; the PRISM_HD kernel code (kernel_backend.h includes it, with its
 * own guards around its declarations) stays C++ inline functions. */
extern "C" {
#include "context_internal.h"
#include "kernel_state.h"
}
#include "kernel_backend.h"

#define PRISM_RENDER_BLOCK 256
#define PRISM_PHOTON_BLOCK 128

__global__ void prism_render_kernel(prism_geometry_view g, prism_render_params p,
                                    uint32_t *image, uint32_t y0, uint32_t rows, uint32_t count)
{
    uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < count)
        prism_render_one(&g, &p, image, y0, rows, k);
}

__global__ void prism_generate_kernel(prism_source_params s, prism_propagate_params q,
                                      const prism_photon *given, prism_photon *photons,
                                      prism_step_record *records, uint32_t *queue, uint32_t count)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count)
        return;
    prism_generate_photon(&s, i, given != 0 ? &given[i] : 0, &photons[i]);
    prism_record_write(records, &q, i, &photons[i]);
    queue[i] = i;
}

__global__ void prism_propagate_kernel(prism_geometry_view g, prism_optics_view o,
                                       prism_propagate_params q, prism_photon *photons,
                                       prism_step_record *records, const uint32_t *queue_in,
                                       uint32_t n_in, uint32_t *queue_out, uint32_t *counter,
                                       uint32_t budget)
{
    uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n_in)
        return;
    uint32_t id = queue_in[k];
    if (prism_photon_run(&g, &o, &q, photons, records, id, budget))
        queue_out[atomicAdd(counter, 1u)] = id;
}

static cudaStream_t stream_of(prism_context *ctx)
{
    return ctx->kernels != NULL ? (cudaStream_t)ctx->kernels->stream : (cudaStream_t)0;
}

/* After a launch: its error, then the stream's. */
static prism_result finish(prism_context *ctx, const char *what)
{
    cudaError_t err = cudaGetLastError();
    if (err == cudaSuccess)
        err = cudaStreamSynchronize(stream_of(ctx));
    if (err == cudaSuccess)
        return PRISM_SUCCESS;
    cudaGetLastError();
    return prism__error(ctx, PRISM_ERROR_CUDA, "%s kernel: %s", what, cudaGetErrorString(err));
}

static unsigned blocks(uint32_t n, unsigned block)
{
    return (unsigned)(((uint64_t)n + block - 1u) / block);
}

extern "C" prism_result prism__cuda_render(prism_context *ctx, const prism_geometry_view *g,
                                           const prism_render_params *p, uint32_t *image,
                                           uint32_t y0, uint32_t rows)
{
    prism_result r = prism__cuda_bind(ctx);
    uint32_t count = prism_render_threads(p->width, rows);
    if (r != PRISM_SUCCESS || count == 0)
        return r;
    prism_render_kernel<<<blocks(count, PRISM_RENDER_BLOCK), PRISM_RENDER_BLOCK, 0,
                          stream_of(ctx)>>>(*g, *p, image, y0, rows, count);
    return finish(ctx, "render");
}

extern "C" prism_result prism__cuda_generate(prism_context *ctx, const prism_source_params *s,
                                             const prism_propagate_params *q,
                                             const prism_photon *given, prism_photon *photons,
                                             prism_step_record *records, uint32_t *queue,
                                             uint32_t count)
{
    prism_result r = prism__cuda_bind(ctx);
    if (r != PRISM_SUCCESS || count == 0)
        return r;
    prism_generate_kernel<<<blocks(count, PRISM_PHOTON_BLOCK), PRISM_PHOTON_BLOCK, 0,
                            stream_of(ctx)>>>(*s, *q, given, photons, records, queue, count);
    return finish(ctx, "generate");
}

extern "C" prism_result prism__cuda_propagate(prism_context *ctx, const prism_geometry_view *g,
                                              const prism_optics_view *o,
                                              const prism_propagate_params *q,
                                              prism_photon *photons, prism_step_record *records,
                                              const uint32_t *queue_in, uint32_t n_in,
                                              uint32_t *queue_out, uint32_t *n_out,
                                              uint32_t budget, uint32_t *counter)
{
    *n_out = 0;
    prism_result r = prism__cuda_bind(ctx);
    if (r != PRISM_SUCCESS || n_in == 0)
        return r;
    prism_optics_view vacuum;
    memset(&vacuum, 0, sizeof vacuum);
    cudaStream_t s = stream_of(ctx);
    cudaError_t err = cudaMemsetAsync(counter, 0, sizeof *counter, s);
    if (err != cudaSuccess)
        return finish(ctx, "propagate (counter)");
    prism_propagate_kernel<<<blocks(n_in, PRISM_PHOTON_BLOCK), PRISM_PHOTON_BLOCK, 0, s>>>(
        *g, o != 0 ? *o : vacuum, *q, photons, records, queue_in, n_in, queue_out, counter,
        budget);
    err = cudaGetLastError();
    if (err == cudaSuccess)
        err = cudaMemcpyAsync(n_out, counter, sizeof *n_out, cudaMemcpyDeviceToHost, s);
    if (err != cudaSuccess) {
        cudaGetLastError();
        return prism__error(ctx, PRISM_ERROR_CUDA, "propagate kernel: %s", cudaGetErrorString(err));
    }
    return finish(ctx, "propagate");
}

extern "C" prism_result prism__cuda_kernel_attributes(prism_context *ctx, const char *name,
                                                      int *registers, size_t *shared_bytes)
{
    prism_result r = prism__cuda_bind(ctx);
    if (r != PRISM_SUCCESS)
        return r;
    const void *f = strcmp(name, "render") == 0     ? (const void *)prism_render_kernel
                    : strcmp(name, "generate") == 0 ? (const void *)prism_generate_kernel
                                                    : (const void *)prism_propagate_kernel;
    cudaFuncAttributes a;
    cudaError_t err = cudaFuncGetAttributes(&a, f);
    if (err != cudaSuccess) {
        cudaGetLastError();
        return prism__error(ctx, PRISM_ERROR_CUDA, "cudaFuncGetAttributes(%s): %s", name,
                            cudaGetErrorString(err));
    }
    *registers = a.numRegs;
    *shared_bytes = a.sharedSizeBytes;
    return PRISM_SUCCESS;
}

extern "C" prism_result prism__cuda_kernels_init(prism_context *ctx, prism_kernel_state *state)
{
    prism_result r = prism__cuda_bind(ctx);
    if (r != PRISM_SUCCESS)
        return r;
    /* A blocking stream: its work is ordered after what the memory module
     * issues on the legacy default stream (copies, cudaGraphicsMapResources
     * of GL buffers) and before what it issues there next. */
    cudaStream_t s = 0;
    cudaError_t err = cudaStreamCreateWithFlags(&s, cudaStreamDefault);
    if (err != cudaSuccess) {
        cudaGetLastError();
        return prism__error(ctx, PRISM_ERROR_CUDA, "kernels: cudaStreamCreate: %s",
                            cudaGetErrorString(err));
    }
    state->stream = (void *)s;
    return PRISM_SUCCESS;
}

extern "C" void prism__cuda_kernels_shutdown(prism_context *ctx, prism_kernel_state *state)
{
    if (state->stream != 0 && prism__cuda_bind(ctx) == PRISM_SUCCESS)
        cudaStreamDestroy((cudaStream_t)state->stream);
    state->stream = 0;
}
