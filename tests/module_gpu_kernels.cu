/* tests/module_kernels.cuh built by nvcc, as a renderer's own .cu files
 * would build it against the installed headers; launched from C. */
#include <cuda_runtime_api.h>

#include "module_kernels.cuh"

extern "C" int module_test_trace_nvcc(const prism_device_view *view, const float lo[3],
                                      const float hi[3], uint64_t seed, unsigned n, float *rays,
                                      void *results)
{
    trace_rays<<<(n + 127) / 128, 128>>>(*view, make_float3(lo[0], lo[1], lo[2]),
                                         make_float3(hi[0], hi[1], hi[2]), seed, n, rays,
                                         (module_trace_result *)results);
    cudaError_t err = cudaGetLastError();
    if (err == cudaSuccess)
        err = cudaDeviceSynchronize();
    return (int)err;
}
