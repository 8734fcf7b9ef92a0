/* How fast the backend's "kernels" read a buffer: a read-only CUDA kernel
 * on the CUDA backend, OpenMP threads on the host backend. Used by
 * prism-bench upload to compare mapped with device memory. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <stdint.h>
#include <time.h>

#include "internal.h"

#ifdef PRISM_HAVE_CUDA
#include <cuda_runtime_api.h>
int prism__cuda_read_kernel(const void *p, size_t bytes, int repeat, double *seconds);
#endif

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double host_read(const void *p, size_t bytes, int repeat)
{
    const uint64_t *w = p;
    long long n = (long long)(bytes / 8);
    volatile uint64_t sink = 0;
    double t0 = now();
    for (int r = 0; r < repeat; r++) {
        uint64_t x = 0;
#pragma omp parallel for reduction(^ : x)
        for (long long i = 0; i < n; i++)
            x ^= w[i];
        sink ^= x;
    }
    (void)sink;
    return (now() - t0) / repeat;
}

prism_result prism__memory_read_bandwidth(prism_context *ctx, const prism_buffer *b, int repeat,
                                          double *gbps)
{
    *gbps = 0;
    const void *p = prism_buffer_device_pointer(b);
    size_t bytes = prism_buffer_size(b) / 16 * 16;
    if (!p || bytes == 0 || repeat < 1)
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                            "read bandwidth: the buffer has no kernel pointer or is empty");
    double seconds;
#ifdef PRISM_HAVE_CUDA
    if (ctx->backend == PRISM_BACKEND_CUDA) {
        prism_result r = prism__cuda_bind(ctx);
        if (r != PRISM_SUCCESS)
            return r;
        int e = prism__cuda_read_kernel(p, bytes, repeat, &seconds);
        if (e != 0)
            return prism__error(ctx, PRISM_ERROR_CUDA, "read kernel: %s",
                                cudaGetErrorString((cudaError_t)e));
        *gbps = seconds > 0 ? (double)bytes / seconds / 1e9 : 0;
        return PRISM_SUCCESS;
    }
#endif
    seconds = host_read(p, bytes, repeat);
    *gbps = seconds > 0 ? (double)bytes / seconds / 1e9 : 0;
    return PRISM_SUCCESS;
}
