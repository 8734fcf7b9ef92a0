/* The CUDA backend's memory: cudaMalloc, cudaHostAlloc with its orthogonal
 * flags, cudaHostRegister, cudaMallocManaged, cudaMallocAsync on the
 * device's default memory pool, copies with cudaMemcpyDefault (unified
 * addressing tells host from device), fills, streams, and CUDA-GL interop.
 * Every entry binds the context's device first: the runtime keeps the
 * current device per thread. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_gl_interop.h>
#include <cuda_runtime_api.h>

#include "engine/memory/internal.h"

static bool host_kind(prism_memory_kind k)
{
    return k == PRISM_MEMORY_PINNED || k == PRISM_MEMORY_REGISTERED || k == PRISM_MEMORY_STAGING;
}

static prism_result fail(prism_context *ctx, cudaError_t e, const char *what,
                         const prism__allocation *a)
{
    cudaGetLastError(); /* clear the sticky-free error state */
    prism_result r = PRISM_ERROR_CUDA;
    if (e == cudaErrorMemoryAllocation)
        r = a && host_kind(a->kind) ? PRISM_ERROR_OUT_OF_MEMORY : PRISM_ERROR_OUT_OF_DEVICE_MEMORY;
    if (a && a->quiet) /* off the context's thread (prism__register_begin) */
        return r;
    if (a)
        return prism__error(ctx, r, "%s of %s memory \"%s\" (%zu bytes): %s", what,
                            prism_memory_kind_name(a->kind), a->tag, a->bytes,
                            cudaGetErrorString(e));
    return prism__error(ctx, r, "%s: %s", what, cudaGetErrorString(e));
}

#define CHECK(call, what, a)                                                                       \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess)                                                                     \
            return fail(ctx, e_, what, a);                                                         \
    } while (0)

static unsigned host_alloc_flags(unsigned flags)
{
    return ((flags & PRISM_HOST_PORTABLE) ? cudaHostAllocPortable : 0) |
           ((flags & PRISM_HOST_MAPPED) ? cudaHostAllocMapped : 0) |
           ((flags & PRISM_HOST_WRITE_COMBINED) ? cudaHostAllocWriteCombined : 0);
}

static prism_result mapped_pointer(prism_context *ctx, prism__allocation *a)
{
    if (!(a->flags & PRISM_HOST_MAPPED))
        return PRISM_SUCCESS;
    CHECK(cudaHostGetDevicePointer(&a->device, a->host, 0), "cudaHostGetDevicePointer", a);
    return PRISM_SUCCESS;
}

static prism_result managed_alloc(prism_context *ctx, prism__allocation *a)
{
    int managed = 0;
    cudaDeviceGetAttribute(&managed, cudaDevAttrManagedMemory, ctx->cuda_device);
    if (!managed)
        return prism__error(ctx, PRISM_ERROR_UNSUPPORTED, "managed memory \"%s\": %s has none",
                            a->tag, ctx->device.name);
    CHECK(cudaMallocManaged(&a->device, a->bytes, cudaMemAttachGlobal), "cudaMallocManaged", a);
    a->host = a->device;
    return PRISM_SUCCESS;
}

static prism_result cuda_alloc(prism_context *ctx, prism__allocation *a)
{
    prism_result r = prism__cuda_bind(ctx);
    if (r != PRISM_SUCCESS)
        return r;
    switch (a->kind) {
    case PRISM_MEMORY_DEVICE:
    case PRISM_MEMORY_ASYNC:
        CHECK(cudaMalloc(&a->device, a->bytes), "cudaMalloc", a);
        return PRISM_SUCCESS;
    case PRISM_MEMORY_PINNED:
        CHECK(cudaHostAlloc(&a->host, a->bytes, host_alloc_flags(a->flags)), "cudaHostAlloc", a);
        r = mapped_pointer(ctx, a);
        if (r != PRISM_SUCCESS) {
            cudaFreeHost(a->host);
            a->host = NULL;
        }
        return r;
    case PRISM_MEMORY_REGISTERED: {
        unsigned f = ((a->flags & PRISM_HOST_PORTABLE) ? cudaHostRegisterPortable : 0) |
                     ((a->flags & PRISM_HOST_MAPPED) ? cudaHostRegisterMapped : 0);
        CHECK(cudaHostRegister(a->host, a->bytes, f), "cudaHostRegister", a);
        r = mapped_pointer(ctx, a);
        if (r != PRISM_SUCCESS)
            cudaHostUnregister(a->host);
        return r;
    }
    case PRISM_MEMORY_MANAGED: return managed_alloc(ctx, a);
    case PRISM_MEMORY_STAGING:
        CHECK(cudaMallocHost(&a->host, a->bytes), "cudaMallocHost", a);
        return PRISM_SUCCESS;
    default: /* GL: registered by gl_register */ return PRISM_SUCCESS;
    }
}

static void cuda_free(prism_context *ctx, prism__allocation *a)
{
    if (prism__cuda_bind(ctx) != PRISM_SUCCESS)
        return;
    switch (a->kind) {
    case PRISM_MEMORY_DEVICE:
    case PRISM_MEMORY_ASYNC:
    case PRISM_MEMORY_MANAGED: cudaFree(a->device); break;
    case PRISM_MEMORY_PINNED:
    case PRISM_MEMORY_STAGING: cudaFreeHost(a->host); break;
    case PRISM_MEMORY_REGISTERED: cudaHostUnregister(a->host); break;
    case PRISM_MEMORY_GL:
        if (a->handle)
            cudaGraphicsUnregisterResource((cudaGraphicsResource_t)a->handle);
        a->handle = NULL;
        break;
    default: break;
    }
    cudaGetLastError();
}

static prism_result cuda_copy(prism_context *ctx, void *dst, const void *src, size_t size,
                              void *stream, bool async)
{
    prism_result r = prism__cuda_bind(ctx);
    if (r != PRISM_SUCCESS)
        return r;
    if (async)
        CHECK(cudaMemcpyAsync(dst, src, size, cudaMemcpyDefault, (cudaStream_t)stream),
              "cudaMemcpyAsync", NULL);
    else
        CHECK(cudaMemcpy(dst, src, size, cudaMemcpyDefault), "cudaMemcpy", NULL);
    return PRISM_SUCCESS;
}

static bool device_side(const void *p)
{
    struct cudaPointerAttributes at;
    if (cudaPointerGetAttributes(&at, p) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    return at.type == cudaMemoryTypeDevice || at.type == cudaMemoryTypeManaged;
}

/* Patterns wider than a byte: write one 64 KiB run of the pattern, then
 * double it with device-to-device copies (log2 steps, no kernel needed). */
static prism_result fill_device(prism_context *ctx, char *dst, size_t size, const void *pattern,
                                size_t psize, cudaStream_t s)
{
    size_t first = size < 65536 ? size : 65536;
    char *run = malloc(first);
    if (!run)
        return prism__error(ctx, PRISM_ERROR_OUT_OF_MEMORY, "fill: out of host memory");
    for (size_t i = 0; i < first; i += psize)
        memcpy(run + i, pattern, psize);
    /* From pageable memory the call returns once `run` has been staged. */
    cudaError_t e = cudaMemcpyAsync(dst, run, first, cudaMemcpyHostToDevice, s);
    free(run);
    for (size_t done = first; e == cudaSuccess && done < size; done *= 2) {
        size_t n = size - done < done ? size - done : done;
        e = cudaMemcpyAsync(dst + done, dst, n, cudaMemcpyDeviceToDevice, s);
    }
    if (e != cudaSuccess)
        return fail(ctx, e, "fill", NULL);
    return PRISM_SUCCESS;
}

static prism_result cuda_fill(prism_context *ctx, void *dst, size_t size, const void *pattern,
                              size_t psize, void *stream, bool async)
{
    prism_result r = prism__cuda_bind(ctx);
    if (r != PRISM_SUCCESS)
        return r;
    cudaStream_t s = (cudaStream_t)stream;
    if (!device_side(dst)) { /* pinned or registered host memory: the CPU fills it */
        CHECK(s ? cudaStreamSynchronize(s) : cudaDeviceSynchronize(), "fill: synchronize", NULL);
        if (psize == 1)
            memset(dst, *(const unsigned char *)pattern, size);
        else
            for (size_t i = 0; i < size; i += psize)
                memcpy((char *)dst + i, pattern, psize);
        return PRISM_SUCCESS;
    }
    if (psize == 1)
        CHECK(cudaMemsetAsync(dst, *(const unsigned char *)pattern, size, s), "cudaMemsetAsync",
              NULL);
    else if ((r = fill_device(ctx, dst, size, pattern, psize, s)) != PRISM_SUCCESS)
        return r;
    if (!async)
        CHECK(cudaStreamSynchronize(s), "fill: synchronize", NULL);
    return PRISM_SUCCESS;
}

static prism_result cuda_mem_info(prism_context *ctx, size_t *free_bytes, size_t *total_bytes)
{
    prism_result r = prism__cuda_bind(ctx);
    if (r != PRISM_SUCCESS)
        return r;
    CHECK(cudaMemGetInfo(free_bytes, total_bytes), "cudaMemGetInfo", NULL);
    return PRISM_SUCCESS;
}

static prism_result cuda_stream_create(prism_context *ctx, void **handle)
{
    prism_result r = prism__cuda_bind(ctx);
    if (r != PRISM_SUCCESS)
        return r;
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate", NULL);
    *handle = s;
    return PRISM_SUCCESS;
}

static void cuda_stream_destroy(prism_context *ctx, void *handle)
{
    if (handle && prism__cuda_bind(ctx) == PRISM_SUCCESS)
        cudaStreamDestroy((cudaStream_t)handle);
}

static prism_result cuda_stream_sync(prism_context *ctx, void *handle)
{
    prism_result r = prism__cuda_bind(ctx);
    if (r != PRISM_SUCCESS)
        return r;
    /* NULL: everything the context queued, on any stream */
    CHECK(handle ? cudaStreamSynchronize((cudaStream_t)handle) : cudaDeviceSynchronize(),
          "synchronize", NULL);
    return PRISM_SUCCESS;
}

/* ---- the stream-ordered allocator */

static bool cuda_mempool_supported(prism_context *ctx)
{
    int v = 0;
    if (cudaDeviceGetAttribute(&v, cudaDevAttrMemoryPoolsSupported, ctx->cuda_device) !=
        cudaSuccess)
        cudaGetLastError();
    return v != 0;
}

static prism_result cuda_alloc_async(prism_context *ctx, prism__allocation *a, void *stream)
{
    prism_result r = prism__cuda_bind(ctx);
    if (r != PRISM_SUCCESS)
        return r;
    CHECK(cudaMallocAsync(&a->device, a->bytes, (cudaStream_t)stream), "cudaMallocAsync", a);
    return PRISM_SUCCESS;
}

static void cuda_free_async(prism_context *ctx, prism__allocation *a, void *stream)
{
    if (prism__cuda_bind(ctx) != PRISM_SUCCESS)
        return;
    /* No stream (a plain release): cudaFree waits for all work, whatever
     * stream used the memory; cudaFreeAsync on the legacy stream would not
     * wait for non-blocking ones. */
    cudaError_t e = stream ? cudaFreeAsync(a->device, (cudaStream_t)stream) : cudaFree(a->device);
    if (e != cudaSuccess)
        cudaGetLastError();
}

static prism_result default_pool(prism_context *ctx, cudaMemPool_t *pool)
{
    prism_result r = prism__cuda_bind(ctx);
    if (r != PRISM_SUCCESS)
        return r;
    if (!cuda_mempool_supported(ctx))
        return prism__error(ctx, PRISM_ERROR_UNSUPPORTED, "%s has no memory pools",
                            ctx->device.name);
    CHECK(cudaDeviceGetDefaultMemPool(pool, ctx->cuda_device), "cudaDeviceGetDefaultMemPool", NULL);
    return PRISM_SUCCESS;
}

static prism_result cuda_mempool_threshold(prism_context *ctx, uint64_t *set, uint64_t *get)
{
    cudaMemPool_t pool;
    prism_result r = default_pool(ctx, &pool);
    if (r != PRISM_SUCCESS)
        return r;
    if (set)
        CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, set),
              "cudaMemPoolSetAttribute(ReleaseThreshold)", NULL);
    if (get)
        CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, get),
              "cudaMemPoolGetAttribute(ReleaseThreshold)", NULL);
    return PRISM_SUCCESS;
}

static prism_result cuda_mempool_usage(prism_context *ctx, size_t *current, size_t *high)
{
    cudaMemPool_t pool;
    prism_result r = default_pool(ctx, &pool);
    if (r != PRISM_SUCCESS)
        return r;
    uint64_t cur = 0, hi = 0;
    CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &cur), "UsedMemCurrent",
          NULL);
    CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &hi), "UsedMemHigh", NULL);
    *current = (size_t)cur;
    *high = (size_t)hi;
    return PRISM_SUCCESS;
}

/* ---- CUDA-GL interop */

static prism_result cuda_gl_register(prism_context *ctx, prism__allocation *a, unsigned gl_buffer,
                                     char *why, size_t why_size)
{
    prism_result r = prism__cuda_bind(ctx);
    if (r != PRISM_SUCCESS) {
        snprintf(why, why_size, "%s", ctx->last_error);
        return r;
    }
    unsigned f = a->flags == PRISM_GL_READ_ONLY       ? cudaGraphicsRegisterFlagsReadOnly
                 : a->flags == PRISM_GL_WRITE_DISCARD ? cudaGraphicsRegisterFlagsWriteDiscard
                                                      : cudaGraphicsRegisterFlagsNone;
    cudaGraphicsResource_t res = NULL;
    cudaError_t e = cudaGraphicsGLRegisterBuffer(&res, (GLuint)gl_buffer, f);
    if (e != cudaSuccess) {
        cudaGetLastError();
        snprintf(why, why_size, "cudaGraphicsGLRegisterBuffer: %s", cudaGetErrorString(e));
        return PRISM_ERROR_INTEROP_UNAVAILABLE;
    }
    a->handle = res;
    return PRISM_SUCCESS;
}

static prism_result cuda_gl_map(prism_context *ctx, prism__allocation *a, void *stream)
{
    prism_result r = prism__cuda_bind(ctx);
    if (r != PRISM_SUCCESS)
        return r;
    cudaGraphicsResource_t res = (cudaGraphicsResource_t)a->handle;
    CHECK(cudaGraphicsMapResources(1, &res, (cudaStream_t)stream), "cudaGraphicsMapResources", a);
    size_t size = 0;
    cudaError_t e = cudaGraphicsResourceGetMappedPointer(&a->device, &size, res);
    if (e == cudaSuccess && size < a->bytes)
        e = cudaErrorInvalidValue; /* the GL buffer is smaller than declared */
    if (e != cudaSuccess) {
        cudaGraphicsUnmapResources(1, &res, (cudaStream_t)stream);
        a->device = NULL;
        return fail(ctx, e, "cudaGraphicsResourceGetMappedPointer", a);
    }
    return PRISM_SUCCESS;
}

static prism_result cuda_gl_unmap(prism_context *ctx, prism__allocation *a, void *stream)
{
    prism_result r = prism__cuda_bind(ctx);
    if (r != PRISM_SUCCESS)
        return r;
    cudaGraphicsResource_t res = (cudaGraphicsResource_t)a->handle;
    CHECK(cudaGraphicsUnmapResources(1, &res, (cudaStream_t)stream), "cudaGraphicsUnmapResources",
          a);
    return PRISM_SUCCESS;
}

const prism__memory_backend prism__cuda_memory_backend = {
    .name = "cuda",
    .alloc = cuda_alloc,
    .free = cuda_free,
    .copy = cuda_copy,
    .fill = cuda_fill,
    .mem_info = cuda_mem_info,
    .stream_create = cuda_stream_create,
    .stream_destroy = cuda_stream_destroy,
    .stream_sync = cuda_stream_sync,
    .mempool_supported = cuda_mempool_supported,
    .alloc_async = cuda_alloc_async,
    .free_async = cuda_free_async,
    .mempool_threshold = cuda_mempool_threshold,
    .mempool_usage = cuda_mempool_usage,
    .gl_register = cuda_gl_register,
    .gl_map = cuda_gl_map,
    .gl_unmap = cuda_gl_unmap,
};
