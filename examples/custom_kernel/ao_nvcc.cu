// Ambient occlusion, built by nvcc: ao_kernel.cuh compiled into this
// program against the installed prism/device.cuh and launched with <<<>>>.
//
//   ao_nvcc scene.dae [out.png [width height [samples [peel]]]]
#include <cstdio>

#include <cuda_runtime.h>

#include "ao_common.h"
#include "ao_kernel.cuh"

static float3 f3(const float v[3])
{
    return make_float3(v[0], v[1], v[2]);
}

int main(int argc, char **argv)
{
    ao_frame f;
    int r = ao_open(argc, argv, "ao_nvcc.png", &f);
    if (r != 0 || f.ctx == nullptr)
        return r;
    dim3 grid((f.width + 15) / 16, (f.height + 15) / 16), block(16, 16);
    const double t0 = ao_now();
    ambient_occlusion<<<grid, block>>>(f.view, f3(f.eye), f3(f.forward), f3(f.right), f3(f.up),
                                       f.width, f.height, f.peel, f.samples, f.radius, 1ull,
                                       (unsigned *)prism_buffer_device_pointer(f.image));
    cudaError_t err = cudaGetLastError();
    if (err == cudaSuccess)
        err = cudaDeviceSynchronize();
    const double seconds = ao_now() - t0;
    if (err != cudaSuccess)
        std::fprintf(stderr, "%s: %s\n", argv[0], cudaGetErrorString(err));
    std::printf("ao_nvcc: %ux%u, %u samples, render %.1f ms, %s\n", f.width, f.height, f.samples,
                1e3 * seconds, f.output);
    r = err != cudaSuccess || ao_finish(&f);
    return ao_close(&f) || r;
}
