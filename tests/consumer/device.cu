// A renderer's own kernel built by nvcc against the installed package:
// prism/device.cuh traces a box Prism uploaded. Without a CUDA device it
// only proves that it builds; with one it runs, and the same kernel
// compiled at run time by prism_module_compile must give the same depths.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include <cuda_runtime.h>
#include <prism/device.cuh>
#include <prism/prism.h>

#define DEPTH_KERNEL                                                                               \
    extern "C" __global__ void depth(prism_device_view view, unsigned side, float *out)            \
    {                                                                                              \
        unsigned i = blockIdx.x * blockDim.x + threadIdx.x;                                        \
        if (i >= side * side)                                                                      \
            return;                                                                                \
        float x = -0.9f + 1.8f * (i % side + 0.25f) / side;                                        \
        float y = -0.9f + 1.8f * (i / side + 0.6f) / side;                                         \
        prism_device_hit hit;                                                                      \
        out[i] = prism_trace_closest(&view, make_float3(x, y, 5.0f), make_float3(0, 0, -1), 0.0f,  \
                                     100.0f, PRISM_TRACE_NONE, &hit)                               \
                     ? hit.distance                                                                \
                     : -1.0f;                                                                      \
    }
#define TEXT(...) #__VA_ARGS__
#define EXPANDED_TEXT(...) TEXT(__VA_ARGS__)

DEPTH_KERNEL

static const char depth_source[] = "#include <prism/device.cuh>\n" EXPANDED_TEXT(DEPTH_KERNEL);

enum { SIDE = 64, N = SIDE * SIDE };

static int fail(const char *what, prism_context *ctx)
{
    std::printf("consumer: cuda: %s: %s\n", what, ctx ? prism_context_last_error(ctx) : "");
    return 1;
}

int main()
{
    if (prism_cuda_device_count() == 0) {
        std::printf("consumer: cuda built (no device to run on)\n");
        return 0;
    }
    prism_context_desc desc;
    std::memset(&desc, 0, sizeof desc);
    desc.backend = PRISM_BACKEND_CUDA;
    prism_context *ctx = nullptr;
    if (prism_context_create(&desc, &ctx) != PRISM_SUCCESS)
        return fail("context", ctx);
    const float v[24] = {-1, -1, -1, 1, -1, -1, 1, 1, -1, -1, 1, -1,
                         -1, -1, 1,  1, -1, 1,  1, 1, 1,  -1, 1, 1};
    const uint32_t t[36] = {0, 2, 1, 0, 3, 2, 4, 5, 6, 4, 6, 7, 0, 1, 5, 0, 5, 4,
                            2, 3, 7, 2, 7, 6, 1, 2, 6, 1, 6, 5, 0, 4, 7, 0, 7, 3};
    prism_bvh *bvh = nullptr;
    prism_geometry *g = nullptr;
    prism_geometry_desc gd;
    std::memset(&gd, 0, sizeof gd);
    prism_device_view view;
    if (prism_bvh_build(v, 8, t, 12, nullptr, &bvh) != PRISM_SUCCESS ||
        prism_geometry_upload(ctx, nullptr, bvh, &gd, &g) != PRISM_SUCCESS ||
        prism_geometry_device_view(g, &view) != PRISM_SUCCESS)
        return fail("geometry", ctx);
    float *out = nullptr;
    cudaMalloc(&out, N * sizeof(float));
    depth<<<N / 128, 128>>>(view, SIDE, out);
    std::vector<float> built(N), compiled(N);
    cudaMemcpy(built.data(), out, N * sizeof(float), cudaMemcpyDeviceToHost);

    prism_module_options o;
    std::memset(&o, 0, sizeof o);
    o.name = "depth.cu";
    o.cache = PRISM_MODULE_CACHE_NONE;
    prism_module *m = nullptr;
    prism_function *f = nullptr;
    if (prism_module_compile(ctx, depth_source, &o, &m) != PRISM_SUCCESS ||
        prism_module_function(m, "depth", &f) != PRISM_SUCCESS)
        return fail("runtime compilation", ctx);
    unsigned side = SIDE;
    void *args[3] = {&view, &side, &out};
    prism_launch l;
    std::memset(&l, 0, sizeof l);
    l.grid[0] = N / 128;
    l.block[0] = 128;
    if (prism_function_launch(f, &l, args) != PRISM_SUCCESS)
        return fail("launch", ctx);
    cudaMemcpy(compiled.data(), out, N * sizeof(float), cudaMemcpyDeviceToHost);
    cudaFree(out);
    // the top face is 4 below the rays' origins; t comes out of the
    // watertight test's edge functions, so within a few ulps of it. No ray
    // runs along the face's diagonal (x == y): on the GPU, where the
    // compilers contract the edge functions into FMAs, a ray exactly on a
    // shared edge can pass between the two triangles.
    int wrong = 0;
    for (int i = 0; i < N; i++)
        if (std::fabs(built[i] - 4.0f) > 4e-6f || std::fabs(compiled[i] - built[i]) > 4e-6f) {
            if (wrong++ < 3)
                std::printf("consumer: cuda: ray %d: %.9g (nvcc), %.9g (runtime)\n", i, built[i],
                            compiled[i]);
        }
    prism_module_release(m);
    prism_geometry_destroy(g);
    prism_bvh_free(bvh);
    prism_result r = prism_context_destroy(ctx);
    std::printf("consumer: cuda %s (%d of %d depths wrong)\n",
                wrong == 0 && r == PRISM_SUCCESS ? "ok" : "failed", wrong, N);
    return wrong == 0 && r == PRISM_SUCCESS ? 0 : 1;
}
