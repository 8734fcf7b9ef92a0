/* What the CUDA kernel files share around a launch: the context's kernel
 * stream, grid sizes, the check after a launch, a failed call as Prism's
 * error, scratch alignment and floats as ordered keys. Included by .cu files
 * only (after context_internal.h and kernel_state.h). */
#ifndef PRISM_CUDA_LAUNCH_H
#define PRISM_CUDA_LAUNCH_H

#include <cuda_runtime_api.h>
#include <string.h>

static inline cudaStream_t prism__cuda_stream_of(prism_context *ctx)
{
    const struct prism_kernel_state *k = ctx->kernels;
    if (k == NULL)
        return (cudaStream_t)0;
    return (cudaStream_t)(k->urgent && k->urgent_stream != NULL ? k->urgent_stream : k->stream);
}

/* After a launch on `stream`: its error, then the stream's. */
static inline prism_result prism__cuda_finish_on(prism_context *ctx, cudaStream_t stream,
                                                 const char *what)
{
    cudaError_t err = cudaGetLastError();
    if (err == cudaSuccess)
        err = cudaStreamSynchronize(stream);
    if (err == cudaSuccess)
        return PRISM_SUCCESS;
    cudaGetLastError();
    return prism__error(ctx, PRISM_ERROR_CUDA, "%s kernel: %s", what, cudaGetErrorString(err));
}

/* The same on the context's kernel stream. */
static inline prism_result prism__cuda_finish(prism_context *ctx, const char *what)
{
    return prism__cuda_finish_on(ctx, prism__cuda_stream_of(ctx), what);
}

static inline unsigned prism__cuda_blocks(size_t n, unsigned block)
{
    return (unsigned)(((uint64_t)n + block - 1u) / block);
}

/* A CUDA call's failure as Prism's error, "prefix: what: CUDA's words":
 * out of device memory where CUDA ran out of it, else PRISM_ERROR_CUDA. */
static inline prism_result prism__cuda_error(prism_context *ctx, cudaError_t e, const char *prefix,
                                             const char *what)
{
    cudaGetLastError();
    return prism__error(ctx,
                        e == cudaErrorMemoryAllocation ? PRISM_ERROR_OUT_OF_DEVICE_MEMORY
                                                       : PRISM_ERROR_CUDA,
                        "%s: %s: %s", prefix, what, cudaGetErrorString(e));
}

/* A scratch region's size, rounded up to 256 bytes (CUB's alignment). */
static inline size_t prism__cuda_align(size_t x)
{
    return (x + 255) & ~(size_t)255;
}

/* A float as an unsigned int that orders as the float does, for
 * atomicMin/atomicMax over floats; 0 sorts below every float. */
__device__ __forceinline__ uint32_t prism__float_order(float f)
{
    const uint32_t u = __float_as_uint(f);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

/* The float a prism__float_order key stands for, on the host. */
static inline float prism__float_from_order(uint32_t key)
{
    const uint32_t bits = (key & 0x80000000u) ? key & 0x7fffffffu : ~key;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

#endif
