/* Ambient occlusion: a renderer's own shading over Prism's geometry. One
 * primary ray per pixel through a pinhole camera, stepping through the
 * first `peel` surfaces (a cutaway: the world volume and a tank wall), then
 * `samples` occlusion rays over the hemisphere above the surface hit, each
 * a prism_trace_any no longer than `radius`; the material's palette colour
 * darkened where they are blocked.
 *
 * The same file is built both ways: ao_nvcc.cu includes it (nvcc, against
 * the installed headers), ao_nvrtc.c reads it at run time and hands it to
 * prism_module_compile. Hence extern "C": NVRTC's module is searched by
 * that name. */
#include <prism/device.cuh>
#include <prism/device/shade.h> /* prism_palette, prism_pack_rgba, prism_channel */

extern "C" __global__ void ambient_occlusion(prism_device_view view, float3 eye, float3 forward,
                                             float3 right, float3 up, unsigned width,
                                             unsigned height, unsigned peel, unsigned samples,
                                             float radius, unsigned long long seed, unsigned *image)
{
    const unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height)
        return;
    const float sx = 2.0f * ((float)x + 0.5f) / (float)width - 1.0f;
    const float sy = 1.0f - 2.0f * ((float)y + 0.5f) / (float)height;
    const pv3 d = pv3_normalize(pv3_make(forward.x + sx * right.x + sy * up.x,
                                         forward.y + sx * right.y + sy * up.y,
                                         forward.z + sx * right.z + sy * up.z));
    const float3 dir = make_float3(d.x, d.y, d.z);

    /* the first surface past the peeled ones; the skip keeps a peeled
     * triangle from being hit again at the same distance */
    prism_device_hit hit;
    float tmin = 0.0f;
    uint32_t skip = PRISM_TRACE_NONE;
    bool found = false;
    for (unsigned layer = 0; layer <= peel; layer++) {
        found = prism_trace_closest(&view, eye, dir, tmin, INFINITY, skip, &hit);
        if (!found)
            break;
        tmin = hit.distance + 1e-6f * (1.0f + hit.distance);
        skip = hit.index;
    }
    size_t at = (size_t)y * width + x;
    if (!found) {
        image[at] = prism_pack_rgba(0.08f, 0.09f, 0.12f + 0.1f * (1.0f - (float)y / height), 1.0f);
        return;
    }

    /* the normal on the camera's side, and an origin just off the surface */
    const pv3 p = pv3_madd(pv3_make(eye.x, eye.y, eye.z), d, hit.distance);
    const float3 nf = prism_device_normal(&view, hit.index);
    pv3 n = pv3_make(nf.x, nf.y, nf.z);
    if (pv3_dot(n, d) > 0.0f)
        n = pv3_scale(n, -1.0f);
    const float eps = 1e-4f * (1.0f + fmaxf(fabsf(p.x), fmaxf(fabsf(p.y), fabsf(p.z))));
    const pv3 o = pv3_madd(p, n, eps);
    const pv3 a = pv3_perpendicular(n), b = pv3_cross(n, a);

    /* cosine-weighted directions from this pixel's own Philox stream */
    prism_rng rng = prism_rng_make(seed, (uint32_t)at, 0, PRISM_RNG_USER);
    unsigned open = 0;
    for (unsigned s = 0; s < samples; s++) {
        const float u1 = prism_rng_uniform(&rng), u2 = prism_rng_uniform(&rng);
        const float r = sqrtf(u1), phi = 6.2831853f * u2;
        const pv3 w = pv3_madd(pv3_madd(pv3_scale(n, sqrtf(1.0f - u1)), a, r * cosf(phi)), b,
                               r * sinf(phi));
        open += !prism_trace_any(&view, make_float3(o.x, o.y, o.z), make_float3(w.x, w.y, w.z),
                                 0.0f, radius);
    }
    const float ao = samples > 0 ? (float)open / (float)samples : 1.0f;
    const uint32_t c = prism_palette(hit.material_inner);
    const float k = 0.12f + 0.88f * ao;
    image[at] = prism_pack_rgba(k * prism_channel(c, 0), k * prism_channel(c, 1),
                                k * prism_channel(c, 2), 1.0f);
}
