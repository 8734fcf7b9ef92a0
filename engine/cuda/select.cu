/* prism_photons_select on CUDA. Counting alone: one kernel that reads the
 * history words. Selecting: cub's DeviceSelect::If over photon indices
 * (stable: photon order is kept), whose predicate reads only the history
 * word, then a gather that copies the chosen photons whole; cub selecting
 * the 64-byte photons themselves moved every photon through its tiles and
 * needed a counting pass first (the README's scaling table has the
 * figures). Chunks of SELECT_CHUNK photons bound the index array; all on
 * the kernels' stream, with the temporaries in the context's ledger:
 * scratch that a run of calls keeps (prism__scratch_keep), so a stream's
 * batches do not each pay a cudaMalloc and a synchronising cudaFree. */
#include <algorithm>

#include <cub/device/device_select.cuh>
#include <cuda_runtime_api.h>
#include <thrust/iterator/counting_iterator.h>

extern "C" {
#include "engine/context_internal.h"
#include "engine/launch/kernel_state.h"
#include "engine/launch/target.h"
#include "engine/memory/internal.h"
}
#include "engine/launch/select_internal.h"

#define SELECT_BLOCK 256
#define SELECT_CHUNK (1u << 26) /* photons per DeviceSelect call: 256 MB of indices */

static size_t select_chunk = SELECT_CHUNK; /* prism__cuda_select_chunk */

extern "C" void prism__cuda_select_chunk(size_t photons)
{
    select_chunk = photons != 0 ? photons : SELECT_CHUNK;
}

/* Photon i (an index into `in`) is chosen. */
struct prism_select_index_op {
    const prism_photon *in;
    uint32_t any_of;
    __device__ __forceinline__ bool operator()(uint32_t i) const
    {
        return (in[i].history & any_of) != 0u;
    }
};

/* out[k] = in[index[k]], k < n: a photon's words (16 bytes, or 4 where
 * the arrays are not 16-byte aligned) to consecutive threads, so that a
 * warp's stores are whole lines. */
template <typename Word>
__global__ void prism_select_gather_kernel(const prism_photon *in, const uint32_t *index, size_t n,
                                           prism_photon *out)
{
    const size_t per = sizeof(prism_photon) / sizeof(Word), words = n * per;
    for (size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x; t < words;
         t += (size_t)gridDim.x * blockDim.x) {
        const Word *from = reinterpret_cast<const Word *>(in + index[t / per]);
        reinterpret_cast<Word *>(out)[t] = __ldg(from + t % per);
    }
}

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

static unsigned grid_for(size_t items)
{
    const size_t g = (items + SELECT_BLOCK - 1) / SELECT_BLOCK;
    return g < 1 ? 1u : g < 4096 ? (unsigned)g : 4096u;
}

static cudaError_t gather(const prism_photon *in, const uint32_t *index, size_t n,
                          prism_photon *out, cudaStream_t s)
{
    if ((((uintptr_t)in | (uintptr_t)out) & 15u) == 0)
        prism_select_gather_kernel<uint4>
            <<<grid_for(n * 4), SELECT_BLOCK, 0, s>>>(in, index, n, out);
    else
        prism_select_gather_kernel<uint32_t>
            <<<grid_for(n * 16), SELECT_BLOCK, 0, s>>>(in, index, n, out);
    return cudaGetLastError();
}

/* The count alone: the photons of in[0, count) with any bit of any_of. */
static prism_result count_only(prism_context *ctx, const prism_photon *in, size_t count,
                               uint32_t any_of, size_t *selected)
{
    cudaStream_t s = stream_of(ctx);
    prism__scratch scratch;
    prism_result r = prism__scratch_alloc(ctx, &scratch, sizeof(unsigned long long),
                                          "photons_select.count");
    if (r != PRISM_SUCCESS)
        return r;
    unsigned long long *total = (unsigned long long *)scratch.pointer, got = 0;
    cudaError_t err = cudaMemsetAsync(total, 0, sizeof *total, s);
    if (err == cudaSuccess) {
        const unsigned grid = std::min(grid_for(count), 1024u);
        prism_select_count_kernel<<<grid, SELECT_BLOCK, 0, s>>>(in, count, any_of, total);
        err = cudaGetLastError();
    }
    if (err == cudaSuccess)
        err = cudaMemcpyAsync(&got, total, sizeof got, cudaMemcpyDeviceToHost, s);
    if (err == cudaSuccess)
        err = cudaStreamSynchronize(s);
    prism__scratch_release(&scratch);
    if (err != cudaSuccess)
        return cuda_failed(ctx, err);
    *selected = (size_t)got;
    return PRISM_SUCCESS;
}

extern "C" prism_result prism__cuda_select(prism_context *ctx, const prism_photon *in, size_t count,
                                           uint32_t any_of, prism_photon *out, size_t capacity,
                                           size_t *selected)
{
    prism_result r = prism__cuda_bind(ctx);
    *selected = 0;
    if (r != PRISM_SUCCESS || count == 0)
        return r;
    if (out == NULL)
        return count_only(ctx, in, count, any_of, selected);
    cudaStream_t s = stream_of(ctx);
    const size_t chunk = count < select_chunk ? count : select_chunk;
    size_t temp_bytes = 0;
    const prism_select_index_op op = {in, any_of};
    cudaError_t err = cub::DeviceSelect::If(NULL, temp_bytes,
                                            thrust::counting_iterator<uint32_t>(0),
                                            (uint32_t *)NULL, (int *)NULL, (int)chunk, op, s);
    if (err != cudaSuccess)
        return cuda_failed(ctx, err);
    /* [0, 16): DeviceSelect's int; then its temporaries; then a chunk's
     * indices, 16-byte aligned */
    const size_t index_at = (16 + temp_bytes + 15) / 16 * 16;
    prism__scratch scratch;
    r = prism__scratch_alloc(ctx, &scratch, index_at + chunk * sizeof(uint32_t), "photons_select");
    if (r != PRISM_SUCCESS)
        return r;
    char *base = (char *)scratch.pointer;
    int *chunk_selected = (int *)base;
    uint32_t *index = (uint32_t *)(base + index_at);
    size_t total = 0;
    bool fits = true;
    for (size_t at = 0; err == cudaSuccess && at < count; at += chunk) {
        const int n = (int)(count - at < chunk ? count - at : chunk);
        int k = 0;
        size_t bytes = temp_bytes;
        const prism_select_index_op chunk_op = {in + at, any_of}; /* indices within the chunk */
        err = cub::DeviceSelect::If(base + 16, bytes, thrust::counting_iterator<uint32_t>(0), index,
                                    chunk_selected, n, chunk_op, s);
        if (err == cudaSuccess)
            err = cudaMemcpyAsync(&k, chunk_selected, sizeof k, cudaMemcpyDeviceToHost, s);
        if (err == cudaSuccess)
            err = cudaStreamSynchronize(s);
        if (err != cudaSuccess)
            break;
        fits = fits && total + (size_t)k <= capacity; /* past it: counted, not copied */
        if (fits && k > 0)
            err = gather(in + at, index, (size_t)k, out + total, s);
        total += (size_t)k;
    }
    if (err == cudaSuccess)
        err = cudaStreamSynchronize(s); /* the last gather read the indices */
    prism__scratch_release(&scratch);
    if (err != cudaSuccess)
        return cuda_failed(ctx, err);
    *selected = total;
    if (!fits)
        return prism__error(ctx, PRISM_ERROR_OUT_OF_RANGE,
                            "photons_select: %zu photons selected, the output holds %zu", total,
                            capacity);
    return PRISM_SUCCESS;
}
