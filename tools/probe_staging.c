/* A standalone probe of the staged host-to-device copy (issue 5), outside
 * Prism so that nothing of the library's stands between the measurement
 * and CUDA: the pinned peak, chunked copies alone, the CPU fill alone, and
 * the fill+copy pipeline in two shapes (a parallel region per chunk, as
 * engine/memory/staged_copy.c had, and one region for the whole copy), for chunk
 * sizes, buffer counts and write-back vs write-combined staging. Not built
 * by CMake; on the GPU machine:
 *   gcc -O2 -fopenmp tools/probe_staging.c -I/usr/local/cuda/include \
 *       -L/usr/local/cuda/lib64 -lcudart -o /tmp/probe && /tmp/probe [MB]
 */
#define _POSIX_C_SOURCE 200809L
#include <cuda_runtime_api.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "probe_check.h"

enum { MAXBUF = 8, REPS = 5 };
static size_t bytes;
static char *src, *dev;
static char *wb[MAXBUF], *wc[MAXBUF], *heap[MAXBUF]; /* 128 MiB each */
static cudaStream_t streams[MAXBUF];
static int nt_stores;  /* fills use streaming stores */
static int demote;     /* ordinary stores, then cldemote each line */
static char **scratch; /* non-NULL: fills go here, copies read clean bufs */

#include <emmintrin.h>
static void put(char *d, const char *s, size_t n)
{
    if (!nt_stores) {
        memcpy(d, s, n);
        for (size_t i = 0; demote && i < n; i += 64)
            __asm__ volatile(".byte 0x0f, 0x1c, 0x07" : : "D"(d + i) : "memory"); /* cldemote */
        return;
    }
    for (; n >= 64; n -= 64, d += 64, s += 64) { /* d is 64-aligned here */
        __m128i a = _mm_loadu_si128((const __m128i *)s),
                b = _mm_loadu_si128((const __m128i *)(s + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(s + 32)),
                e = _mm_loadu_si128((const __m128i *)(s + 48));
        _mm_stream_si128((__m128i *)d, a);
        _mm_stream_si128((__m128i *)(d + 16), b);
        _mm_stream_si128((__m128i *)(d + 32), c);
        _mm_stream_si128((__m128i *)(d + 48), e);
    }
    memcpy(d, s, n);
    _mm_sfence();
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef void (*path_fn)(size_t chunk, int nbuf, char **bufs);

/* median GB/s of REPS runs */
static double measure(path_fn f, size_t chunk, int nbuf, char **bufs)
{
    double t[REPS];
    f(chunk, nbuf, bufs); /* warm */
    for (int i = 0; i < REPS; i++) {
        double t0 = now();
        f(chunk, nbuf, bufs);
        t[i] = now() - t0;
    }
    qsort(t, REPS, sizeof t[0], cmp);
    return bytes / t[REPS / 2] / 1e9;
}

static void peak(size_t chunk, int nbuf, char **bufs)
{
    (void)chunk, (void)nbuf;
    CK(cudaMemcpy(dev, bufs[0], bytes, cudaMemcpyHostToDevice)); /* bufs[0] is whole */
}

/* copies only: chunk i from buffer i%nbuf on stream i%nbuf */
static void copy_only(size_t chunk, int nbuf, char **bufs)
{
    for (size_t off = 0, i = 0; off < bytes; off += chunk, i++) {
        int k = (int)(i % nbuf);
        size_t len = bytes - off < chunk ? bytes - off : chunk;
        CK(cudaStreamSynchronize(streams[k]));
        CK(cudaMemcpyAsync(dev + off, bufs[k], len, cudaMemcpyDefault, streams[k]));
    }
    CK(cudaDeviceSynchronize());
}

/* the old parallel fill: 64 pieces, one parallel region per call */
static void fill64(char *dst, const char *from, size_t n)
{
#pragma omp parallel for schedule(static)
    for (long long t = 0; t < 64; t++) {
        size_t a = n * (size_t)t / 64 / 64 * 64,
               b = t == 63 ? n : n * (size_t)(t + 1) / 64 / 64 * 64;
        put(dst + a, from + a, b - a);
    }
}

static void fill_only(size_t chunk, int nbuf, char **bufs)
{
    for (size_t off = 0, i = 0; off < bytes; off += chunk, i++) {
        size_t len = bytes - off < chunk ? bytes - off : chunk;
        fill64(bufs[i % nbuf], src + off, len);
    }
}

/* the old pipeline: region per chunk, stream sync per buffer */
static void pipe_old(size_t chunk, int nbuf, char **bufs)
{
    for (size_t off = 0, i = 0; off < bytes; off += chunk, i++) {
        int k = (int)(i % nbuf);
        size_t len = bytes - off < chunk ? bytes - off : chunk;
        CK(cudaStreamSynchronize(streams[k]));
        fill64(bufs[k], src + off, len);
        CK(cudaMemcpyAsync(dev + off, bufs[k], len, cudaMemcpyDefault, streams[k]));
    }
    CK(cudaDeviceSynchronize());
}

/* one region: every thread fills its slice of each chunk; thread 0 waits
 * for a buffer's last copy, and issues the copy once all slices are in */
static void pipe_one(size_t chunk, int nbuf, char **bufs)
{
    size_t nchunks = (bytes + chunk - 1) / chunk;
#pragma omp parallel
    {
        int nt = omp_get_num_threads(), t = omp_get_thread_num();
        for (size_t i = 0; i < nchunks; i++) {
            int k = (int)(i % nbuf);
            size_t off = i * chunk, len = bytes - off < chunk ? bytes - off : chunk;
            if (t == 0)
                CK(cudaStreamSynchronize(streams[k]));
#pragma omp barrier
            size_t a = len * t / nt / 64 * 64, b = t == nt - 1 ? len : len * (t + 1) / nt / 64 * 64;
            put((scratch ? scratch : bufs)[k] + a, src + off + a, b - a);
#pragma omp barrier
            if (t == 0)
                CK(cudaMemcpyAsync(dev + off, bufs[k], len, cudaMemcpyDefault, streams[k]));
        }
    }
    CK(cudaDeviceSynchronize());
}

static void row(const char *name, path_fn f, int nbuf, char **bufs)
{
    static const size_t mib[] = {1, 2, 4, 8, 32, 128};
    printf("%-28s nbuf %d:", name, nbuf);
    for (size_t j = 0; j < sizeof mib / sizeof mib[0]; j++)
        printf(" %6.1f", measure(f, mib[j] << 20, nbuf, bufs));
    printf("\n");
    fflush(stdout);
}

int main(int argc, char **argv)
{
    bytes = (size_t)(argc > 1 ? atof(argv[1]) : 168) * 1000000;
    printf("omp max threads %d, procs %d; %zu bytes\n", omp_get_max_threads(), omp_get_num_procs(),
           bytes);
    src = malloc(bytes);
    for (size_t i = 0; i < bytes; i++)
        src[i] = (char)(i * 2654435761u >> 24);
    CK(cudaMalloc((void **)&dev, bytes));
    for (int k = 0; k < MAXBUF; k++) {
        CK(cudaHostAlloc((void **)&wb[k], (size_t)128 << 20, 0));
        CK(cudaHostAlloc((void **)&wc[k], (size_t)128 << 20, cudaHostAllocWriteCombined));
        memset(wb[k], 1, (size_t)128 << 20);
        memset(wc[k], 1, (size_t)128 << 20);
        heap[k] = malloc((size_t)128 << 20);
        memset(heap[k], 1, (size_t)128 << 20);
        CK(cudaStreamCreateWithFlags(&streams[k], cudaStreamNonBlocking));
    }
    char *whole;
    CK(cudaHostAlloc((void **)&whole, bytes, 0));
    memcpy(whole, src, bytes);
    char *wholes[1] = {whole};
    printf("pinned peak cudaMemcpy: %.1f GB/s\n", measure(peak, 0, 1, wholes));
    printf("%-28s        chunk MiB:  %6d %6d %6d %6d %6d %6d   (GB/s)\n", "path", 1, 2, 4, 8, 32,
           128);
    const char *only = getenv("PROBE_ONLY");
    if (!only || strstr(only, "copy")) {
        row("copy only, WB", copy_only, 2, wb);
        row("copy only, WB", copy_only, 4, wb);
        row("copy only, WC", copy_only, 2, wc);
    }
    if (!only || strstr(only, "fill")) {
        row("fill only (64 pieces), WB", fill_only, 2, wb);
        row("fill only (64 pieces), WC", fill_only, 2, wc);
    }
    if (!only || strstr(only, "old")) {
        row("pipeline old, WB", pipe_old, 2, wb);
        row("pipeline old, WB", pipe_old, 4, wb);
        row("pipeline old, WC", pipe_old, 2, wc);
    }
    if (!only || strstr(only, "nt")) {
        nt_stores = 1;
        row("fill only NT, WB", fill_only, 2, wb);
        row("pipeline old NT, WB", pipe_old, 2, wb);
        row("pipeline one region NT, WB", pipe_one, 2, wb);
        row("pipeline one region NT, WB", pipe_one, 4, wb);
        row("pipeline one region NT, WC", pipe_one, 4, wc);
        nt_stores = 0;
        scratch = heap;
        row("one region, fill elsewhere", pipe_one, 4, wb);
        nt_stores = 1;
        row("one region NT, fill elsewh", pipe_one, 4, wb);
        nt_stores = 0;
        scratch = NULL;
    }
    if (!only || strstr(only, "demote")) {
        row("one region, WB", pipe_one, 8, wb);
        demote = 1;
        row("one region demote, WB", pipe_one, 4, wb);
        row("one region demote, WB", pipe_one, 8, wb);
        row("old pipeline demote, WB", pipe_old, 2, wb);
        demote = 0;
        nt_stores = 1;
        row("one region NT, WB", pipe_one, 8, wb);
        nt_stores = 0;
    }
    if (!only || strstr(only, "one")) {
        row("pipeline one region, WB", pipe_one, 2, wb);
        row("pipeline one region, WB", pipe_one, 4, wb);
        row("pipeline one region, WC", pipe_one, 2, wc);
        row("pipeline one region, WC", pipe_one, 4, wc);
    }
    return 0;
}
