/* prism_photons_select on CUDA: a counting kernel, then cub's
 * DeviceSelect::If (stable: photon order is kept) in chunks that fit its
 * int item count, all on the kernels' stream, with the temporaries in the
 * context's ledger: scratch that a run of calls keeps (prism__scratch_keep),
 * so a stream's batches do not each pay a cudaMalloc and a synchronising
 * cudaFree. */
#include <cub/device/device_select.cuh>
#include <cuda_runtime_api.h>

extern "C" {
#include "engine/context_internal.h"
#include "engine/launch/kernel_state.h"
#include "engine/launch/target.h"
#include "engine/memory/internal.h"
}
#include "engine/launch/select_internal.h"

#define SELECT_BLOCK 256
#define SELECT_CHUNK (1u << 30) /* items per DeviceSelect call (an int count) */

struct prism_select_op {
    uint32_t any_of;
    __device__ __forceinline__ bool operator()(const prism_photon &p) const
    {
        return (p.history & any_of) != 0u;
    }
};

__global__ void prism_select_count_kernel(const prism_photon *in, size_t count, uint32_t any_of,
                                          unsigned long long *total)
{
    unsigned long long n = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count;
         i += (size_t)gridDim.x * blockDim.x)
        n += (in[i].history & any_of) != 0u;
    for (int d = 16; d > 0; d /= 2)
        n += __shfl_down_sync(0xffffffffu, n, d);
    if ((threadIdx.x & 31u) == 0 && n != 0)
        atomicAdd(total, n);
}

static cudaStream_t stream_of(prism_context *ctx)
{
    return ctx->kernels != NULL ? (cudaStream_t)ctx->kernels->stream : (cudaStream_t)0;
}

static prism_result cuda_failed(prism_context *ctx, cudaError_t err)
{
    cudaGetLastError();
    return prism__error(ctx, PRISM_ERROR_CUDA, "photons_select: %s", cudaGetErrorString(err));
}

extern "C" prism_result prism__cuda_select(prism_context *ctx, const prism_photon *in, size_t count,
                                           uint32_t any_of, prism_photon *out, size_t capacity,
                                           size_t *selected)
{
    prism_result r = prism__cuda_bind(ctx);
    if (r != PRISM_SUCCESS || count == 0)
        return r;
    cudaStream_t s = stream_of(ctx);
    size_t chunk = count < SELECT_CHUNK ? count : SELECT_CHUNK, temp_bytes = 0;
    prism_select_op op = {any_of};
    cudaError_t err = cub::DeviceSelect::If(NULL, temp_bytes, in, out, (int *)NULL, (int)chunk, op,
                                            s);
    if (err != cudaSuccess)
        return cuda_failed(ctx, err);
    /* [0, 8): the count; [8, 16): DeviceSelect's int; then its temporaries */
    prism__scratch scratch;
    r = prism__scratch_alloc(ctx, &scratch, 16 + temp_bytes, "photons_select");
    if (r != PRISM_SUCCESS)
        return r;
    char *base = (char *)scratch.pointer;
    unsigned long long *total = (unsigned long long *)base, got = 0;
    int *chunk_selected = (int *)(base + 8);
    unsigned grid = (unsigned)((count + SELECT_BLOCK - 1) / SELECT_BLOCK);
    grid = grid < 1024u ? grid : 1024u;
    err = cudaMemsetAsync(total, 0, sizeof *total, s);
    if (err == cudaSuccess) {
        prism_select_count_kernel<<<grid, SELECT_BLOCK, 0, s>>>(in, count, any_of, total);
        err = cudaGetLastError();
    }
    if (err == cudaSuccess)
        err = cudaMemcpyAsync(&got, total, sizeof got, cudaMemcpyDeviceToHost, s);
    if (err == cudaSuccess)
        err = cudaStreamSynchronize(s);
    *selected = (size_t)got;
    if (err == cudaSuccess && out != NULL && *selected > capacity)
        r = prism__error(ctx, PRISM_ERROR_OUT_OF_RANGE,
                         "photons_select: %zu photons selected, the output holds %zu", *selected,
                         capacity);
    size_t written = 0;
    for (size_t at = 0; err == cudaSuccess && r == PRISM_SUCCESS && out != NULL && at < count;
         at += chunk) {
        int n = (int)(count - at < chunk ? count - at : chunk), k = 0;
        size_t bytes = temp_bytes;
        err = cub::DeviceSelect::If(base + 16, bytes, in + at, out + written, chunk_selected, n, op,
                                    s);
        if (err == cudaSuccess)
            err = cudaMemcpyAsync(&k, chunk_selected, sizeof k, cudaMemcpyDeviceToHost, s);
        if (err == cudaSuccess)
            err = cudaStreamSynchronize(s);
        written += (size_t)k;
    }
    prism__scratch_release(&scratch);
    if (err != cudaSuccess)
        return cuda_failed(ctx, err);
    return r;
}
