/* How fast the host backend's "kernels" (OpenMP threads) read memory: the
 * host's side of prism-bench upload's read rows (engine/memory/
 * read_bandwidth.c; the CUDA side is engine/cuda/memory_read.cu). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <stdint.h>
#include <time.h>

#include "engine/launch/kernel_backend.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

prism_result prism__host_read_bandwidth(prism_context *ctx, const void *p, size_t bytes, int repeat,
                                        double *seconds)
{
    (void)ctx;
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
    *seconds = (now() - t0) / repeat;
    return PRISM_SUCCESS;
}
