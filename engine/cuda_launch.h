/* What the CUDA kernel files share around a launch: the context's kernel
 * stream, grid sizes, and the check after a launch. Included by .cu files
 * only (after context_internal.h and kernel_state.h). */
#ifndef PRISM_CUDA_LAUNCH_H
#define PRISM_CUDA_LAUNCH_H

#include <cuda_runtime_api.h>

static inline cudaStream_t prism__cuda_stream_of(prism_context *ctx)
{
    return ctx->kernels != NULL ? (cudaStream_t)ctx->kernels->stream : (cudaStream_t)0;
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

static inline unsigned prism__cuda_blocks(uint32_t n, unsigned block)
{
    return (unsigned)(((uint64_t)n + block - 1u) / block);
}

#endif
