/* The upload's device-side steps on the per-triangle codes. For scene
 * arrays born pinned (prism_pinned_allocator) the four per-triangle arrays
 * arrive by DMA as they are in the scene, and k_pack_info packs them into
 * the 16-byte prism_triangle_info records (scene order) that convert_info
 * in upload.c makes on the host for the staged path. Same rule: material
 * index PRISM_NONE becomes 0xFFFF. k_gl_codes writes the caller's GL
 * per-triangle buffer (desc.gl_triangle_buffer) from the placed records. */
#include <cuda_runtime_api.h>

extern "C" {
#include "context_internal.h"
#include "kernel_state.h"
#include "memory_internal.h"
}
#include "bvh_device.h"

static __device__ uint32_t material16(uint32_t m)
{
    return m == PRISM_NONE ? 0xFFFFu : m;
}

/* The launch on `s` waited for; its failure said as the upload's `what`. */
static prism_result finished(prism_context *ctx, cudaStream_t s, const char *what)
{
    cudaError_t e = cudaStreamSynchronize(s);
    if (e == cudaSuccess)
        e = cudaGetLastError();
    if (e == cudaSuccess)
        return PRISM_SUCCESS;
    cudaGetLastError();
    return prism__error(ctx, PRISM_ERROR_CUDA, "upload: %s: %s", what, cudaGetErrorString(e));
}

static __global__ void k_pack_info(const uint32_t *solid, const uint32_t *inner,
                                   const uint32_t *outer, const uint32_t *surface, uint32_t n,
                                   uint4 *out)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    out[i] = make_uint4(i, solid[i], material16(inner[i]) | material16(outer[i]) << 16, surface[i]);
}

extern "C" prism_result prism__cuda_pack_info(prism_context *ctx, const uint32_t *codes, uint32_t n,
                                            void *dst, prism_stream *stream)
{
    prism_result r = prism__cuda_bind(ctx);
    if (r != PRISM_SUCCESS || n == 0)
        return r;
    cudaStream_t s = (cudaStream_t)prism__stream_handle(stream);
    const unsigned block = 256;
    k_pack_info<<<(n + block - 1) / block, block, 0, s>>>(codes, codes + n, codes + 2 * (size_t)n,
                                                          codes + 3 * (size_t)n, n, (uint4 *)dst);
    return finished(ctx, s, "packing the triangle codes");
}

static __global__ void k_gl_codes(const uint4 *info, uint32_t n, uint2 *out)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const uint4 t = info[i];
    out[t.x] = make_uint2(t.y, t.z);
}

extern "C" prism_result prism__cuda_gl_codes(prism_context *ctx, const void *info, uint32_t n,
                                            void *dst)
{
    prism_result r = prism__cuda_bind(ctx);
    if (r != PRISM_SUCCESS || n == 0)
        return r;
    cudaStream_t s = (cudaStream_t)(ctx->kernels ? ctx->kernels->stream : NULL);
    const unsigned block = 256;
    k_gl_codes<<<(n + block - 1) / block, block, 0, s>>>((const uint4 *)info, n, (uint2 *)dst);
    return finished(ctx, s, "triangle codes into the GL buffer");
}
