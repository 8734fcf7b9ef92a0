/* The CUDA runtime's own answers, which test_context_gpu.c checks Prism's
 * against (tests/context_gpu_cuda.cu): the device flags, a mapped
 * allocation made beside Prism, a device's properties. Each returns 0 on
 * success, else the failing cudaError_t. */
#ifndef PRISM_TEST_CONTEXT_GPU_CUDA_H
#define PRISM_TEST_CONTEXT_GPU_CUDA_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* cudaGetDeviceFlags: all of them, and whether cudaDeviceMapHost is one. */
int ctx_test_device_flags(unsigned *flags, bool *map_host);

/* cudaHostAlloc(cudaHostAllocMapped) of 4096 bytes and its device
 * pointer (*device_pointer: whether there is one), then freed. */
int ctx_test_mapped_alloc(bool *device_pointer);

/* The cudaDeviceProp fields prism_device_info mirrors. */
typedef struct ctx_test_properties {
    char name[256];
    int major, minor;
    size_t total_global_mem;
    int multiprocessor_count, max_threads_per_block, max_threads_per_multiprocessor, warp_size;
    int max_blocks_per_multiprocessor, regs_per_block, regs_per_multiprocessor;
    size_t shared_mem_per_multiprocessor, reserved_shared_mem_per_block;
    bool can_map_host_memory, unified_addressing, integrated;
} ctx_test_properties;
int ctx_test_properties_of(int device, ctx_test_properties *out);

#ifdef __cplusplus
}
#endif

#endif
