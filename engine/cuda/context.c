/* The CUDA backend's devices: count, properties, context creation and the
 * device of the current GL context, through the runtime API (cudart is
 * linked statically, so a machine without a driver gets an error code, not
 * a missing library). */
#define _GNU_SOURCE
#include <cuda_gl_interop.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "engine/devices.h"

int prism__cuda_count(prism_result *why, char *reason, size_t reason_size)
{
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err == cudaSuccess && count > 0)
        return count;
    cudaGetLastError(); /* the runtime keeps the error sticky otherwise */
    if (err == cudaErrorInsufficientDriver || err == cudaErrorNoDevice) {
        *why = err == cudaErrorNoDevice ? PRISM_ERROR_NO_DEVICE : PRISM_ERROR_NO_DRIVER;
        snprintf(reason, reason_size, "%s",
                 err == cudaErrorNoDevice ? "no CUDA device" : "no CUDA driver");
    } else if (err == cudaSuccess) {
        *why = PRISM_ERROR_NO_DEVICE;
        snprintf(reason, reason_size, "no CUDA device");
    } else {
        *why = PRISM_ERROR_NO_DRIVER;
        snprintf(reason, reason_size, "CUDA unavailable: %s", cudaGetErrorString(err));
    }
    return 0;
}

static int attribute(enum cudaDeviceAttr attr, int index)
{
    int v = 0;
    if (cudaDeviceGetAttribute(&v, attr, index) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return v;
}

prism_result prism__cuda_query(int index, prism_device_info *info)
{
    struct cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, index) != cudaSuccess) {
        cudaGetLastError();
        return PRISM_ERROR_INVALID_DEVICE;
    }
    memset(info, 0, sizeof *info);
    info->backend = PRISM_BACKEND_CUDA;
    info->index = index;
    snprintf(info->name, sizeof info->name, "%s", prop.name);
    info->cc_major = prop.major;
    info->cc_minor = prop.minor;
    info->total_memory = prop.totalGlobalMem;
    info->multiprocessors = attribute(cudaDevAttrMultiProcessorCount, index);
    info->max_threads_per_block = attribute(cudaDevAttrMaxThreadsPerBlock, index);
    info->max_threads_per_multiprocessor = attribute(cudaDevAttrMaxThreadsPerMultiProcessor, index);
    info->warp_size = attribute(cudaDevAttrWarpSize, index);
    info->max_warps_per_multiprocessor =
        info->warp_size ? info->max_threads_per_multiprocessor / info->warp_size : 0;
    info->max_blocks_per_multiprocessor = attribute(cudaDevAttrMaxBlocksPerMultiprocessor, index);
    info->registers_per_block = attribute(cudaDevAttrMaxRegistersPerBlock, index);
    info->registers_per_multiprocessor = attribute(cudaDevAttrMaxRegistersPerMultiprocessor, index);
    /* Not queryable: the allocation granularities of every architecture
     * since Maxwell (CUDA occupancy calculator). */
    info->register_allocation_unit = 256;
    info->warp_allocation_granularity = 4;
    info->max_registers_per_thread = 255;
    info->shared_memory_per_block = (size_t)attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin,
                                                      index);
    if (!info->shared_memory_per_block)
        info->shared_memory_per_block = (size_t)attribute(cudaDevAttrMaxSharedMemoryPerBlock,
                                                          index);
    info->shared_memory_per_multiprocessor =
        (size_t)attribute(cudaDevAttrMaxSharedMemoryPerMultiprocessor, index);
    info->shared_memory_allocation_unit = 128;
    info->reserved_shared_memory_per_block =
        (size_t)attribute(cudaDevAttrReservedSharedMemoryPerBlock, index);
    info->can_map_host_memory = attribute(cudaDevAttrCanMapHostMemory, index) != 0;
    info->unified_addressing = attribute(cudaDevAttrUnifiedAddressing, index) != 0;
    info->memory_pools_supported = attribute(cudaDevAttrMemoryPoolsSupported, index) != 0;
    info->integrated = attribute(cudaDevAttrIntegrated, index) != 0;
    info->kernel_timeout = attribute(cudaDevAttrKernelExecTimeout, index) != 0;
    return PRISM_SUCCESS;
}

void prism__cuda_versions(int *runtime, int *driver)
{
    *runtime = 0;
    *driver = 0;
    if (cudaRuntimeGetVersion(runtime) != cudaSuccess)
        *runtime = 0;
    if (cudaDriverGetVersion(driver) != cudaSuccess)
        *driver = 0;
    cudaGetLastError();
}

static unsigned schedule_flag(prism_schedule s)
{
    switch (s) {
    case PRISM_SCHEDULE_SPIN: return cudaDeviceScheduleSpin;
    case PRISM_SCHEDULE_YIELD: return cudaDeviceScheduleYield;
    case PRISM_SCHEDULE_BLOCKING_SYNC: return cudaDeviceScheduleBlockingSync;
    case PRISM_SCHEDULE_AUTO: break;
    }
    return cudaDeviceScheduleAuto;
}

static unsigned wanted_flags(const prism_context_desc *desc)
{
    return schedule_flag(desc->schedule) | (desc->deny_mapped_memory ? 0 : cudaDeviceMapHost);
}

static prism_result set_flags(prism_context *ctx, int index, const prism_context_desc *desc)
{
    unsigned want = wanted_flags(desc);
    cudaError_t err = cudaSetDeviceFlags(want);
    if (err == cudaSuccess)
        return PRISM_SUCCESS;
    cudaGetLastError();
    /* The primary context is already active (another Prism context, or the
     * embedder): keep its flags, but mapped memory must be on if asked for. */
    unsigned have = 0;
    if (cudaGetDeviceFlags(&have) != cudaSuccess) {
        cudaGetLastError();
        return prism__error(ctx, PRISM_ERROR_CUDA, "cuda:%d: cannot set device flags: %s", index,
                            cudaGetErrorString(err));
    }
    if ((want & cudaDeviceMapHost) && !(have & cudaDeviceMapHost) &&
        !ctx->device.unified_addressing)
        return prism__error(ctx, PRISM_ERROR_CUDA,
                            "cuda:%d: already active without mapped host memory", index);
    prism__log(ctx, PRISM_LOG_DEBUG, "cuda:%d: context already active, keeping its flags 0x%x",
               index, have);
    return PRISM_SUCCESS;
}

static prism_result set_cache(prism_context *ctx, prism_cache_preference pref)
{
    enum cudaFuncCache c;
    switch (pref) {
    case PRISM_CACHE_PREFER_L1: c = cudaFuncCachePreferL1; break;
    case PRISM_CACHE_PREFER_SHARED: c = cudaFuncCachePreferShared; break;
    case PRISM_CACHE_PREFER_EQUAL: c = cudaFuncCachePreferEqual; break;
    case PRISM_CACHE_PREFER_NONE: c = cudaFuncCachePreferNone; break;
    default: return PRISM_SUCCESS;
    }
    cudaError_t err = cudaDeviceSetCacheConfig(c);
    if (err != cudaSuccess) {
        cudaGetLastError();
        prism__log(ctx, PRISM_LOG_WARNING, "cache preference not applied: %s",
                   cudaGetErrorString(err));
    }
    return PRISM_SUCCESS;
}

prism_result prism__cuda_open(prism_context *ctx, int index, const prism_context_desc *desc)
{
    prism_result r = prism__cuda_query(index, &ctx->device);
    if (r != PRISM_SUCCESS)
        return prism__error(ctx, r, "cuda:%d: no such device", index);
    if (attribute(cudaDevAttrComputeMode, index) == cudaComputeModeProhibited)
        return prism__error(ctx, PRISM_ERROR_DEVICE_UNAVAILABLE,
                            "cuda:%d: compute mode is prohibited", index);
    cudaError_t err = cudaSetDevice(index);
    if (err == cudaSuccess) {
        r = set_flags(ctx, index, desc);
        if (r != PRISM_SUCCESS)
            return r;
        err = cudaFree(0); /* creates the context now, so failure shows here */
    }
    if (err != cudaSuccess) {
        cudaGetLastError();
        prism_result why = err == cudaErrorDevicesUnavailable || err == cudaErrorDeviceAlreadyInUse
                               ? PRISM_ERROR_DEVICE_UNAVAILABLE
                               : PRISM_ERROR_CUDA;
        return prism__error(ctx, why, "cuda:%d: no usable context: %s", index,
                            cudaGetErrorString(err));
    }
    ctx->cuda_device = index;
    ctx->mapped_allowed = !desc->deny_mapped_memory && ctx->device.can_map_host_memory;
    return set_cache(ctx, desc->cache);
}

prism_result prism__cuda_warm(int index, const prism_context_desc *desc)
{
    /* Flags first: they only take while the primary context is inactive;
     * when it is already active (someone was quicker) they are left as
     * they are and prism__cuda_open sorts it out, as without the warm-up. */
    cudaError_t err = cudaSetDevice(index);
    if (err == cudaSuccess) {
        if (cudaSetDeviceFlags(wanted_flags(desc)) != cudaSuccess)
            cudaGetLastError();
        err = cudaFree(0);
    }
    cudaGetLastError();
    return err == cudaSuccess ? PRISM_SUCCESS : PRISM_ERROR_CUDA;
}

void prism__cuda_close(prism_context *ctx)
{
    /* The primary context is shared by every Prism context (and the
     * embedder) on this device: synchronise, never reset it. */
    if (ctx->cuda_device >= 0 && cudaSetDevice(ctx->cuda_device) == cudaSuccess)
        cudaDeviceSynchronize();
    cudaGetLastError();
}

prism_result prism__cuda_bind(prism_context *ctx)
{
    if (!ctx || ctx->backend != PRISM_BACKEND_CUDA)
        return PRISM_ERROR_INVALID_ARGUMENT;
    cudaError_t err = cudaSetDevice(ctx->cuda_device);
    if (err != cudaSuccess) {
        cudaGetLastError();
        return prism__error(ctx, PRISM_ERROR_CUDA, "cudaSetDevice(%d): %s", ctx->cuda_device,
                            cudaGetErrorString(err));
    }
    return PRISM_SUCCESS;
}

/* Whether a GL context is current on this thread, asked of the GLX and EGL
 * libraries the process has already loaded (GLFW loads them with
 * RTLD_LOCAL, so they are looked up by name, never loaded here). */
static bool current_in(const char *const *libraries, const char *symbol)
{
    for (; *libraries; libraries++) {
        void *lib = dlopen(*libraries, RTLD_LAZY | RTLD_NOLOAD);
        if (!lib)
            continue;
        void *(*get)(void) = (void *(*)(void))dlsym(lib, symbol);
        bool current = get && get();
        dlclose(lib);
        if (current)
            return true;
    }
    return false;
}

static bool gl_context_current(void)
{
    static const char *const glx[] = {"libGLX.so.0", "libGL.so.1", NULL};
    static const char *const egl[] = {"libEGL.so.1", NULL};
    return current_in(glx, "glXGetCurrentContext") || current_in(egl, "eglGetCurrentContext");
}

/* The CUDA device behind the current EGL context, through
 * EGL_EXT_device_query and EGL_NV_device_cuda: cudaGLGetDevices answers only
 * for GLX contexts. Returns -1 when there is no such device. */
static int egl_cuda_device(void)
{
    enum { EGL_DEVICE_EXT_ = 0x322C, EGL_CUDA_DEVICE_NV_ = 0x323A };
    typedef intptr_t attrib;
    void *lib = dlopen("libEGL.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (!lib)
        return -1;
    void *(*get_display)(void) = (void *(*)(void))dlsym(lib, "eglGetCurrentDisplay");
    void *(*get_proc)(const char *) = (void *(*)(const char *))dlsym(lib, "eglGetProcAddress");
    int device = -1;
    void *display = get_display ? get_display() : NULL;
    if (display && get_proc) {
        unsigned (*display_attrib)(void *, int, attrib *) =
            (unsigned (*)(void *, int, attrib *))get_proc("eglQueryDisplayAttribEXT");
        unsigned (*device_attrib)(void *, int, attrib *) =
            (unsigned (*)(void *, int, attrib *))get_proc("eglQueryDeviceAttribEXT");
        attrib egl_device = 0, cuda = -1;
        if (display_attrib && device_attrib &&
            display_attrib(display, EGL_DEVICE_EXT_, &egl_device) && egl_device &&
            device_attrib((void *)egl_device, EGL_CUDA_DEVICE_NV_, &cuda))
            device = (int)cuda;
    }
    dlclose(lib);
    return device;
}

prism_result prism__cuda_gl_device(int *device, char *message, size_t message_size)
{
    *device = -1;
    unsigned n = 0;
    int devices[8];
    cudaError_t err = cudaGLGetDevices(&n, devices, 8, cudaGLDeviceListAll);
    if (err == cudaSuccess && n > 0) {
        *device = devices[0];
        return PRISM_SUCCESS;
    }
    cudaGetLastError();
    int egl = egl_cuda_device();
    if (egl >= 0) {
        *device = egl;
        return PRISM_SUCCESS;
    }
    if (!gl_context_current()) {
        snprintf(message, message_size, "share_gl: no OpenGL context is current on this thread");
        return PRISM_ERROR_NO_GL_CONTEXT;
    }
    snprintf(message, message_size,
             "share_gl: the current OpenGL context is not on a CUDA device (%s)",
             err != cudaSuccess ? cudaGetErrorString(err) : "no device listed");
    return PRISM_ERROR_GL_NOT_ON_CUDA_DEVICE;
}
