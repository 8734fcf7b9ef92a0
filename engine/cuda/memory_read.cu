/* A kernel that only reads: how fast kernels read device memory and mapped
 * host memory (prism-bench upload's last rows, and the GPU tests). */
#include <stdint.h>

#include <cuda_runtime.h>

__global__ void prism_read_kernel(const uint4 *p, size_t n, unsigned long long *sink)
{
    unsigned x = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        uint4 v = p[i];
        x ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (x == 0x9E3779B9u) /* practically never: keeps the loads alive */
        atomicAdd(sink, 1ull);
}

/* Read `bytes` (a multiple of 16) at kernel pointer p `repeat` times;
 * *seconds is the mean time of one read. Returns a cudaError_t. */
extern "C" int prism__cuda_read_kernel(const void *p, size_t bytes, int repeat, double *seconds)
{
    unsigned long long *sink = NULL;
    cudaEvent_t start = NULL, stop = NULL;
    cudaError_t e = cudaMalloc(&sink, sizeof *sink);
    if (e == cudaSuccess)
        e = cudaEventCreate(&start);
    if (e == cudaSuccess)
        e = cudaEventCreate(&stop);
    int device = 0, sms = 1;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    size_t n = bytes / 16;
    if (e == cudaSuccess) {
        prism_read_kernel<<<sms * 8, 256>>>((const uint4 *)p, n, sink); /* warm-up */
        cudaEventRecord(start);
        for (int i = 0; i < repeat; i++)
            prism_read_kernel<<<sms * 8, 256>>>((const uint4 *)p, n, sink);
        cudaEventRecord(stop);
        e = cudaEventSynchronize(stop);
    }
    float ms = 0;
    if (e == cudaSuccess)
        e = cudaEventElapsedTime(&ms, start, stop);
    *seconds = repeat > 0 ? ms / 1e3 / repeat : 0;
    if (e == cudaSuccess)
        e = cudaGetLastError();
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    cudaFree(sink);
    return (int)e;
}
