/* The upload's device-side steps on the per-triangle codes. For scene
 * arrays born pinned (prism_pinned_allocator) the four per-triangle arrays
 * arrive by DMA as they are in the scene, and k_pack_info packs them into
 * the 16-byte prism_triangle_info records (scene order) that convert_info
 * in upload.c makes on the host for the staged path, by the same rule
 * (prism_materials_pack, prism/device/geometry_view.h). k_gl_codes writes the caller's GL
 * per-triangle buffer (desc.gl_triangle_buffer) from the placed records. */
#include <cuda_runtime_api.h>

extern "C" {
#include "engine/context_internal.h"
#include "engine/launch/kernel_state.h"
#include "engine/memory/internal.h"
}
#include "engine/cuda/bvh/build.h"
#include "launch.h"

static __global__ void k_pack_info(const uint32_t *solid, const uint32_t *inner,
                                   const uint32_t *outer, const uint32_t *surface, uint32_t n,
                                   uint4 *out)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    out[i] = make_uint4(i, solid[i], prism_materials_pack(inner[i], outer[i]), surface[i]);
}

extern "C" prism_result prism__cuda_pack_info(prism_context *ctx, const uint32_t *codes, uint32_t n,
                                              void *dst, prism_stream *stream)
{
    prism_result r = prism__cuda_bind(ctx);
    if (r != PRISM_SUCCESS || n == 0)
        return r;
    cudaStream_t s = (cudaStream_t)prism__stream_handle(stream);
    const unsigned block = 256;
    k_pack_info<<<prism__cuda_blocks(n, block), block, 0, s>>>(
        codes, codes + n, codes + 2 * (size_t)n, codes + 3 * (size_t)n, n, (uint4 *)dst);
    return prism__cuda_finish_on(ctx, s, "upload: packing the triangle codes");
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
    const unsigned block = 256;
    k_gl_codes<<<prism__cuda_blocks(n, block), block, 0, prism__cuda_stream_of(ctx)>>>(
        (const uint4 *)info, n, (uint2 *)dst);
    return prism__cuda_finish(ctx, "upload: triangle codes into the GL buffer");
}
