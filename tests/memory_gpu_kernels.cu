/* Kernels for the memory GPU tests: a kernel that reads mapped (or device)
 * memory, and a CUDA graph that captures a stream-ordered allocation, a
 * kernel writing it, a copy out and the free, then is replayed; and the
 * CUDA runtime's own answers the tests check Prism's memory against (host
 * flags, pointer types, free device memory). */
#include <stdint.h>

#include <cuda_runtime.h>

#include "prism/memory.h"
extern "C" {
#include "engine/memory/internal.h" /* prism__stream_handle: C linkage */
}

__global__ void sum_kernel(const uint32_t *p, size_t n, unsigned long long *out)
{
    unsigned long long s = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        s += p[i];
    atomicAdd(out, s);
}

__global__ void iota_kernel(uint32_t *p, size_t n, uint32_t base)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = base + (uint32_t)i;
}

/* Sum of n uint32 at kernel pointer p, read by a kernel. */
extern "C" int prism_test_kernel_sum(const void *p, size_t n, unsigned long long *sum)
{
    unsigned long long *d = NULL;
    if (cudaMalloc(&d, sizeof *d) != cudaSuccess)
        return -1;
    cudaMemset(d, 0, sizeof *d);
    sum_kernel<<<64, 256>>>((const uint32_t *)p, n, d);
    cudaError_t e = cudaMemcpy(sum, d, sizeof *sum, cudaMemcpyDeviceToHost);
    cudaFree(d);
    return e == cudaSuccess && cudaGetLastError() == cudaSuccess ? 0 : -1;
}

/* Capture: allocate n words on `stream` from the context's pool, fill them
 * with base+i, copy them into `result` (device memory), free. Replay the
 * graph twice. Returns 0 on success. The allocation's ledger record comes
 * and goes during capture, since its free is captured too. */
extern "C" int prism_test_graph_capture(prism_context *ctx, prism_stream *stream, uint32_t *result,
                                        size_t n, uint32_t base)
{
    cudaStream_t s = (cudaStream_t)prism__stream_handle(stream);
    cudaGraph_t graph = NULL;
    cudaGraphExec_t exec = NULL;
    if (cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) != cudaSuccess)
        return -1;
    prism_buffer *tmp = NULL;
    prism_result r = prism_buffer_create_async(ctx, n * 4, stream, "graph.tmp", &tmp);
    if (r == PRISM_SUCCESS) {
        uint32_t *p = (uint32_t *)prism_buffer_device_pointer(tmp);
        iota_kernel<<<(unsigned)((n + 255) / 256), 256, 0, s>>>(p, n, base);
        cudaMemcpyAsync(result, p, n * 4, cudaMemcpyDeviceToDevice, s);
        prism_buffer_release_async(tmp, stream);
    }
    cudaError_t e = cudaStreamEndCapture(s, &graph);
    if (r != PRISM_SUCCESS || e != cudaSuccess)
        return -2;
    if (cudaGraphInstantiate(&exec, graph, 0) != cudaSuccess)
        return -3;
    int rc = 0;
    for (int i = 0; i < 2 && rc == 0; i++)
        if (cudaGraphLaunch(exec, s) != cudaSuccess || cudaStreamSynchronize(s) != cudaSuccess)
            rc = -4;
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    return rc;
}

/* cudaHostGetFlags of host pointer p, as three answers. 0 or the cudaError_t. */
extern "C" int prism_test_host_flags(const void *p, bool *portable, bool *mapped,
                                     bool *write_combined)
{
    unsigned flags = 0;
    cudaError_t e = cudaHostGetFlags(&flags, (void *)p);
    *portable = (flags & cudaHostAllocPortable) != 0;
    *mapped = (flags & cudaHostAllocMapped) != 0;
    *write_combined = (flags & cudaHostAllocWriteCombined) != 0;
    return (int)e;
}

/* cudaMemcpy with cudaMemcpyDefault (unified addressing tells the kinds). */
extern "C" int prism_test_copy(void *dst, const void *src, size_t n)
{
    return (int)cudaMemcpy(dst, src, n, cudaMemcpyDefault);
}

/* What cudaPointerGetAttributes says p is: 1 host memory (pinned or
 * mapped), 2 device memory, 0 anything else. 0 or the cudaError_t. */
extern "C" int prism_test_pointer_type(const void *p, int *type)
{
    struct cudaPointerAttributes at;
    cudaError_t e = cudaPointerGetAttributes(&at, p);
    *type = e != cudaSuccess                  ? 0
            : at.type == cudaMemoryTypeHost   ? 1
            : at.type == cudaMemoryTypeDevice ? 2
                                              : 0;
    return (int)e;
}

/* The device's free memory once its work is done (cudaDeviceSynchronize,
 * then cudaMemGetInfo). 0 or the cudaError_t. */
extern "C" int prism_test_free_memory(size_t *free_bytes)
{
    size_t total = 0;
    cudaDeviceSynchronize();
    return (int)cudaMemGetInfo(free_bytes, &total);
}
