/* The CUDA runtime's side of test_context_gpu.c (context_gpu_cuda.h). */
#include <string.h>

#include <cuda_runtime.h>

#include "context_gpu_cuda.h"

extern "C" int ctx_test_device_flags(unsigned *flags, bool *map_host)
{
    *flags = 0;
    cudaError_t e = cudaGetDeviceFlags(flags);
    *map_host = (*flags & cudaDeviceMapHost) != 0;
    return (int)e;
}

extern "C" int ctx_test_mapped_alloc(bool *device_pointer)
{
    void *host = NULL, *dev = NULL;
    *device_pointer = false;
    cudaError_t e = cudaHostAlloc(&host, 4096, cudaHostAllocMapped);
    if (e != cudaSuccess)
        return (int)e;
    e = cudaHostGetDevicePointer(&dev, host, 0);
    *device_pointer = dev != NULL;
    cudaFreeHost(host);
    return (int)e;
}

extern "C" int ctx_test_properties_of(int device, ctx_test_properties *out)
{
    cudaDeviceProp p;
    memset(out, 0, sizeof *out);
    cudaError_t e = cudaGetDeviceProperties(&p, device);
    if (e != cudaSuccess)
        return (int)e;
    memcpy(out->name, p.name, sizeof out->name);
    out->name[sizeof out->name - 1] = 0;
    out->major = p.major;
    out->minor = p.minor;
    out->total_global_mem = p.totalGlobalMem;
    out->multiprocessor_count = p.multiProcessorCount;
    out->max_threads_per_block = p.maxThreadsPerBlock;
    out->max_threads_per_multiprocessor = p.maxThreadsPerMultiProcessor;
    out->warp_size = p.warpSize;
    out->max_blocks_per_multiprocessor = p.maxBlocksPerMultiProcessor;
    out->regs_per_block = p.regsPerBlock;
    out->regs_per_multiprocessor = p.regsPerMultiprocessor;
    out->shared_mem_per_multiprocessor = p.sharedMemPerMultiprocessor;
    out->reserved_shared_mem_per_block = p.reservedSharedMemPerBlock;
    out->can_map_host_memory = p.canMapHostMemory != 0;
    out->unified_addressing = p.unifiedAddressing != 0;
    out->integrated = p.integrated != 0;
    return 0;
}
