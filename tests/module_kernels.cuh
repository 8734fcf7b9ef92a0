/* A renderer's own kernels on prism/device.cuh, for test_module_gpu: the
 * same file compiled at run time (the test reads it and hands it to
 * prism_module_compile) and by nvcc (module_gpu_kernels.cu includes it).
 *
 * trace_rays: n random rays (Philox, purpose PRISM_RNG_USER), origins in
 *   the box [lo, hi], directions uniform over the sphere; writes each ray
 *   (origin, direction) and its closest hit, for the host to trace again.
 * headlight: prism_render's shaded mode (palette colour per inner
 *   material, ambient + (1 - ambient) |cos|, opaque background) from
 *   Prism's camera basis, written the renderer's way. */
#include <prism/device.cuh>
#include <prism/device/camera.h>
#include <prism/device/shade.h>

/* One ray's result: 8 words, as test_module_gpu.c reads them. */
struct module_trace_result {
    float t, u, v;
    uint32_t index, triangle, solid, material, any;
};

extern "C" __global__ void trace_rays(prism_device_view view, float3 lo, float3 hi, uint64_t seed,
                                      unsigned n, float *rays, module_trace_result *out)
{
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    prism_rng r = prism_rng_make(seed, i, 0, PRISM_RNG_USER);
    const float3 o = make_float3(lo.x + (hi.x - lo.x) * prism_rng_uniform(&r),
                                 lo.y + (hi.y - lo.y) * prism_rng_uniform(&r),
                                 lo.z + (hi.z - lo.z) * prism_rng_uniform(&r));
    const float z = 2.0f * prism_rng_uniform(&r) - 1.0f;
    const float phi = 6.2831853f * prism_rng_uniform(&r);
    const float s = sqrtf(fmaxf(0.0f, 1.0f - z * z));
    const float3 d = make_float3(s * cosf(phi), s * sinf(phi), z);
    float *ray = rays + 6 * (size_t)i;
    ray[0] = o.x;
    ray[1] = o.y;
    ray[2] = o.z;
    ray[3] = d.x;
    ray[4] = d.y;
    ray[5] = d.z;
    prism_device_hit hit;
    const bool found = prism_trace_closest(&view, o, d, 0.0f, INFINITY, PRISM_TRACE_NONE, &hit);
    module_trace_result res;
    res.t = hit.distance;
    res.u = hit.u;
    res.v = hit.v;
    res.index = hit.index;
    res.triangle = hit.triangle;
    res.solid = hit.solid;
    res.material = found ? hit.material_inner : PRISM_NO_MATERIAL;
    res.any = prism_trace_any(&view, o, d, 0.0f, INFINITY);
    out[i] = res;
}

extern "C" __global__ void headlight(prism_device_view view, prism_camera_basis camera,
                                     unsigned width, unsigned height, float ambient,
                                     unsigned background, unsigned *image)
{
    const unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height)
        return;
    const pv3 d = prism_camera_ray(&camera, x, y, width, height);
    prism_device_hit hit;
    unsigned pixel;
    if (prism_trace_closest(&view, make_float3(camera.eye.x, camera.eye.y, camera.eye.z),
                            make_float3(d.x, d.y, d.z), 0.0f, INFINITY, PRISM_TRACE_NONE, &hit)) {
        const float3 n = prism_device_normal(&view, hit.index);
        const float light = ambient + (1.0f - ambient) * fabsf(n.x * d.x + n.y * d.y + n.z * d.z);
        const uint32_t c = prism_palette(hit.material_inner);
        pixel = prism_pack_rgba(light * prism_channel(c, 0), light * prism_channel(c, 1),
                                light * prism_channel(c, 2), 1.0f);
    } else {
        const float a = prism_channel(background, 3);
        pixel = prism_pack_rgba(a * prism_channel(background, 0), a * prism_channel(background, 1),
                                a * prism_channel(background, 2), a);
    }
    image[(size_t)y * width + x] = pixel;
}
