/* Kernels for the memory GPU tests: a kernel that reads mapped (or device)
 * memory, and a CUDA graph that captures a stream-ordered allocation, a
 * kernel writing it, a copy out and the free, then is replayed. */
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
