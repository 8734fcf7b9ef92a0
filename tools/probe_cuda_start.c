/* A standalone probe of a fresh process's CUDA start (issue 11), outside
 * Prism: the driver's init, the primary context, the runtime on top of it,
 * a first allocation, then pinned allocations of 1.5, 8, 32 and 256 MB
 * (the staging ring's sizes, and a scene's) and a pageable 90 MB copy.
 * The floor under prism-view's first frame. Not built by CMake; on the
 * GPU machine, from the project's root (run it a few times: each run is
 * one fresh process):
 *   gcc -O2 tools/probe_cuda_start.c -I/usr/local/cuda/include \
 *       -L/usr/local/cuda/lib64 -lcuda -lcudart -o /tmp/probe_start && /tmp/probe_start
 * On an H200 (2026-11-24, 3 runs): cuInit 95-181 ms (95 once the machine
 * is warm), primary context 97-107 ms, cudaHostAlloc 2.0-3.4 GB/s (1.5 MB:
 * 0.7-1.1 ms, 32 MB: 10-14 ms, 256 MB: 83-117 ms), a pageable copy
 * 8.1-9.9 GB/s. */
#define _POSIX_C_SOURCE 200809L
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int fail(const char *what)
{
    fprintf(stderr, "probe_cuda_start: %s failed\n", what);
    return 1;
}

int main(void)
{
    double t0 = now();
    if (cuInit(0) != CUDA_SUCCESS)
        return fail("cuInit");
    double t1 = now();
    CUdevice dev;
    CUcontext ctx;
    if (cuDeviceGet(&dev, 0) != CUDA_SUCCESS || cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS)
        return fail("the primary context");
    double t2 = now();
    if (cuCtxSetCurrent(ctx) != CUDA_SUCCESS || cudaFree(0) != cudaSuccess)
        return fail("the runtime");
    double t3 = now();
    void *d = NULL;
    if (cudaMalloc(&d, (size_t)90 << 20) != cudaSuccess)
        return fail("cudaMalloc");
    double t4 = now();
    printf("cuInit %.1f ms, primary context %.1f ms, runtime %.1f ms, first cudaMalloc %.1f ms\n",
           (t1 - t0) * 1e3, (t2 - t1) * 1e3, (t3 - t2) * 1e3, (t4 - t3) * 1e3);
    const size_t sizes[] = {(size_t)3 << 19, (size_t)8 << 20, (size_t)32 << 20, (size_t)256 << 20};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        void *h = NULL;
        double a = now();
        if (cudaHostAlloc(&h, sizes[i], cudaHostAllocPortable) != cudaSuccess)
            return fail("cudaHostAlloc");
        double b = now();
        printf("cudaHostAlloc %6.1f MB: %7.2f ms (%.2f GB/s)\n", sizes[i] / 1048576.0,
               (b - a) * 1e3, sizes[i] / (b - a) / 1e9);
        cudaFreeHost(h);
    }
    size_t bytes = (size_t)90 << 20;
    char *pageable = malloc(bytes);
    if (!pageable)
        return fail("malloc");
    memset(pageable, 1, bytes);
    for (int k = 0; k < 2; k++) {
        double a = now();
        if (cudaMemcpy(d, pageable, bytes, cudaMemcpyHostToDevice) != cudaSuccess)
            return fail("cudaMemcpy");
        double b = now();
        printf("pageable 90 MB copy %s: %.1f ms (%.1f GB/s)\n", k ? "again" : "first",
               (b - a) * 1e3, bytes / (b - a) / 1e9);
    }
    free(pageable);
    cudaFree(d);
    cuDevicePrimaryCtxRelease(dev);
    return 0;
}
