/* The CUDA backend of the kernels: thin launchers over the PRISM_HD
 * per-pixel functions that the host backend runs in OpenMP loops
 * (include/prism/device/), the photon tally, and the kernels' stream. The photon
 * kernels are in engine/cuda/photon_kernels.cuh, built twice (exact and fast
 * arithmetic). Each launcher binds the context's device, launches on the
 * kernels' stream, and waits, so a failing launch is reported by the call
 * that made it. */

#include <cuda_runtime_api.h>
#include <math.h>
#include <string.h>

/* The engine's internal headers declare C functions without extern "C"
 * guards; the PRISM_HD kernel code (kernel_backend.h includes it, with its
 * own guards around its declarations) stays C++ inline functions. */
extern "C" {
#include "engine/context_internal.h"
#include "engine/launch/kernel_state.h"
}
#include "launch.h"
#include "engine/launch/kernel_backend.h"
#include "engine/launch/render_tuning.h"
#include "prism/device/traverse_gpu.h"

#define PRISM_RENDER_BLOCK 256

/* The render kernel as first written: prism_render_one, the host's code. */
__global__ void prism_render_kernel(prism_geometry_view g, prism_render_params p, uint32_t *image,
                                    uint32_t y0, uint32_t rows, uint32_t count)
{
    uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < count)
        prism_render_one(&g, &p, image, y0, rows, k);
}

/* Pixel k on the GPU traversal (prism/device/traverse_gpu.h): the same pixels
 * and shading as prism_render_one, the ray prepared once per pixel. */
template <int BOX, int LOOP, int WIDE>
__device__ __forceinline__ void prism_render_gpu(const prism_geometry_view &g,
                                                 const prism_render_params &p, uint32_t *image,
                                                 uint32_t y0, uint32_t rows, uint32_t k)
{
    uint32_t x, y;
    size_t at;
    if (!prism_render_pixel(&p, y0, rows, k, &x, &y, &at))
        return;
    prism_shade_state s;
    prism_shade_begin(&p, x, y, &s);
    prism_ray ray;
    pv3_store(p.camera.eye, ray.org);
    pv3_store(s.d, ray.dir);
    ray.tmin = 0.0f;
    ray.tmax = p.max_distance;
    prism_ray_pre pre;
    prism_ray_prepare(&ray, &pre);
    const bool finite = prism_gpu_slabs_finite(pre); /* BOX 1 only then */
    for (int more = s.layers > 0; more;) {
        pre.tmin = s.tmin;
        prism_trace_hit hit;
        if (WIDE == 2) { /* one node or one triangle a step */
            pre.tmax = p.max_distance;
            const bool h = prism_gpu_wide_closest(g, pre, s.skip, hit);
            more = prism_shade_hit(&g, &p, &s, h ? &hit : NULL);
            continue;
        }
        if (WIDE) { /* the wide tree's walk (prism/device/bvh_wide_traverse.h) */
            prism_hit wh;
            pre.tmax = p.max_distance;
            const bool h = prism_wide_closest_pre(&g, &pre, s.skip, &wh);
            hit.t = wh.t;
            hit.index = wh.triangle;
            hit.u = wh.u;
            hit.v = wh.v;
            more = prism_shade_hit(&g, &p, &s, h ? &hit : NULL);
            continue;
        }
        const bool h = BOX != 0 && finite
                           ? prism_gpu_closest<BOX, LOOP>(g, pre, p.max_distance, s.skip, hit)
                           : prism_gpu_closest<0, LOOP>(g, pre, p.max_distance, s.skip, hit);
        more = prism_shade_hit(&g, &p, &s, h ? &hit : NULL);
    }
    image[at] = prism_shade_end(&p, &s);
}

/* The render kernel on the GPU traversal, at most PRISM_RENDER_BLOCK
 * threads a block with MINB blocks an SM asked of the register allocator
 * (4 at 256 threads: 64 registers, half occupancy). PERSIST: as many warps
 * as fit on the GPU, each taking 32 pixels at a time from a counter, so no
 * SM idles on a slow tile while others wait in the launch queue. */
template <int MINB, int BOX, bool PERSIST, int LOOP, int WIDE = 0>
__global__ void __launch_bounds__(PRISM_RENDER_BLOCK, MINB)
    prism_render_tuned(prism_geometry_view g, prism_render_params p, uint32_t *image, uint32_t y0,
                       uint32_t rows, uint32_t count)
{
    if (!PERSIST) {
        uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
        if (k < count)
            prism_render_gpu<BOX, LOOP, WIDE>(g, p, image, y0, rows, k);
        return;
    }
    const uint32_t lane = threadIdx.x & 31u;
    for (;;) {
        uint32_t base = 0;
        if (lane == 0)
            base = atomicAdd(p.work, 32u);
        base = __shfl_sync(0xFFFFFFFFu, base, 0);
        if (base >= count)
            return;
        if (base + lane < count)
            prism_render_gpu<BOX, LOOP, WIDE>(g, p, image, y0, rows, base + lane);
    }
}

typedef void (*prism_render_fn)(prism_geometry_view, prism_render_params, uint32_t *, uint32_t,
                                uint32_t, uint32_t);

/* The render kernels the bench compares (prism__cuda_render_tuning), each
 * step of the tuning (prism-bench render --variants; the README has the
 * figures). Each of 1-3 made the frame faster; the persistent ones (4, 5)
 * gain little in device memory and lose in mapped memory, because
 * persistent warps spread neighbouring tiles over all SMs, which costs
 * the L1 reuse that mapped memory lives on. Hence 3 by default. A
 * persistent variant falls back where the render has no work counter. */
static const struct {
    prism_render_fn f;
    bool persist;
    int fallback; /* where there is no work counter */
} prism_render_variants[] = {
    {prism_render_kernel, false, 0},                /* 0: host code */
    {prism_render_tuned<4, 0, false, 0>, false, 1}, /* 1: GPU traversal */
    {prism_render_tuned<4, 1, false, 0>, false, 2}, /* 2: + fminf/fmaxf slabs */
    {prism_render_tuned<4, 1, false, 1>, false, 3}, /* 3: + while-while */
    {prism_render_tuned<4, 1, true, 1>, true, 3},   /* 4: + persistent, <= 64 registers */
    {prism_render_tuned<3, 1, true, 1>, true, 3},   /* 5: 4, <= 80 registers (72 used) */
    /* The wide tree (fall back to 3 where the upload made none): 6 is
     * slower than 3 in device memory and faster in mapped memory, where
     * fewer node bytes cross the bus; 7 and 9 are slower than 6 (README,
     * "Wide BVH against binary"). */
    {prism_render_tuned<4, 0, false, 0, 1>, false, 3}, /* 6: wide, <= 64 registers */
    {prism_render_tuned<2, 0, false, 0, 1>, false, 3}, /* 7: wide, <= 128 registers */
    {prism_render_tuned<2, 0, true, 0, 1>, true, 7},   /* 8: 7, persistent */
    {prism_render_tuned<4, 0, false, 0, 2>, false, 3}, /* 9: 6, a node or a triangle a step */
};
#define PRISM_RENDER_VARIANTS (int)(sizeof prism_render_variants / sizeof prism_render_variants[0])

/* Until a variant is chosen for a context (its kernel state): 6 where the
 * upload made a wide tree and part of the geometry is mapped (the wide
 * walk measured faster there, engine/upload/wide.c), else 3, in blocks of
 * 128. */
#define RENDER_VARIANT_BINARY 3
#define RENDER_VARIANT_WIDE 6
#define RENDER_BLOCK 128

extern "C" int prism__cuda_render_tuning(prism_context *ctx, int variant, unsigned block)
{
    if (ctx == NULL || ctx->kernels == NULL || variant < 0 || variant >= PRISM_RENDER_VARIANTS ||
        block < 32 || block > PRISM_RENDER_BLOCK || block % 32 != 0)
        return 0;
    ctx->kernels->render_variant = variant;
    ctx->kernels->render_block = block;
    ctx->kernels->render_chosen = true;
    return 1;
}

extern "C" int prism__cuda_render_variants(void)
{
    return PRISM_RENDER_VARIANTS;
}

extern "C" void prism__cuda_render_tuning_get(const prism_context *ctx, int *variant,
                                              unsigned *block)
{
    const prism_kernel_state *k = ctx != NULL ? ctx->kernels : NULL;
    const bool chosen = k != NULL && k->render_chosen;
    *variant = chosen ? k->render_variant : RENDER_VARIANT_BINARY;
    *block = chosen ? k->render_block : RENDER_BLOCK;
}

static int render_variant_for(const prism_context *ctx, const prism_geometry_view *g,
                              const prism_render_params *p)
{
    int chosen;
    unsigned block;
    prism__cuda_render_tuning_get(ctx, &chosen, &block);
    const bool auto_choice = ctx->kernels == NULL || !ctx->kernels->render_chosen;
    /* the wide walk where its nodes spare PCIe reads; in device memory the
     * tuned binary walk issues fewer instructions a coherent ray */
    int v = auto_choice && g != NULL && g->wide_count && !g->device_resident ? RENDER_VARIANT_WIDE
                                                                                : chosen;
    /* no geometry (kernel attributes): the variant as chosen */
    if (prism_render_variants[v].persist && p != NULL && p->work == NULL)
        v = prism_render_variants[v].fallback;
    if (v >= RENDER_VARIANT_WIDE && g != NULL && g->wide_count == 0) /* no wide tree uploaded */
        v = RENDER_VARIANT_BINARY;
    return v;
}

extern "C" prism_result prism__cuda_render(prism_context *ctx, const prism_geometry_view *g,
                                           const prism_render_params *p, uint32_t *image,
                                           uint32_t y0, uint32_t rows)
{
    prism_result r = prism__cuda_bind(ctx);
    uint32_t count = prism_render_threads(p->width, rows);
    if (r != PRISM_SUCCESS || count == 0)
        return r;
    int v = render_variant_for(ctx, g, p), chosen;
    unsigned render_block;
    prism__cuda_render_tuning_get(ctx, &chosen, &render_block);
    prism_render_fn f = prism_render_variants[v].f;
    unsigned grid = prism__cuda_blocks(count, render_block);
    if (prism_render_variants[v].persist) {
        /* as many blocks as stay resident, and the counter zeroed */
        int dev = 0, sms = 0, per_sm = 0;
        if (cudaGetDevice(&dev) != cudaSuccess ||
            cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
            cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, (const void *)f,
                                                          (int)render_block, 0) != cudaSuccess ||
            cudaMemsetAsync(p->work, 0, sizeof(uint32_t), prism__cuda_stream_of(ctx)) !=
                cudaSuccess)
            return prism__cuda_finish(ctx, "render (persistent setup)");
        unsigned resident = (unsigned)(sms * (per_sm > 0 ? per_sm : 1));
        grid = grid < resident ? grid : resident;
    }
    f<<<grid, render_block, 0, prism__cuda_stream_of(ctx)>>>(*g, *p, image, y0, rows, count);
    return prism__cuda_finish(ctx, "render");
}

extern "C" prism_result prism__cuda_kernel_attributes(prism_context *ctx, const char *name,
                                                      int *registers, size_t *shared_bytes)
{
    prism_result r = prism__cuda_bind(ctx);
    if (r != PRISM_SUCCESS)
        return r;
    /* "propagate[_KIND][_exact|_fast]": the math from the suffix */
    const size_t len = strlen(name);
    const bool fast = len >= 5 && strcmp(name + len - 5, "_fast") == 0;
    const prism_cuda_photon_kernels *photon =
        prism__cuda_photon_kernels(fast ? PRISM_PROPAGATE_MATH_FAST : PRISM_PROPAGATE_MATH_EXACT);
    const void *f = strcmp(name, "render") == 0
                        ? (const void *)prism_render_variants[render_variant_for(ctx, NULL, NULL)].f
                    : strcmp(name, "generate") == 0 ? photon->generate_kernel
                    : strncmp(name, "propagate_trace_generic", 23) == 0
                        ? photon->trace_generic_kernel
                    : strncmp(name, "propagate_trace", 15) == 0   ? photon->trace_kernel
                    : strncmp(name, "propagate_physics", 17) == 0 ? photon->physics_kernel
                                                                  : photon->propagate_kernel;
    cudaFuncAttributes a;
    cudaError_t err = cudaFuncGetAttributes(&a, f);
    if (err != cudaSuccess) {
        cudaGetLastError();
        return prism__error(ctx, PRISM_ERROR_CUDA, "cudaFuncGetAttributes(%s): %s", name,
                            cudaGetErrorString(err));
    }
    *registers = a.numRegs;
    *shared_bytes = a.sharedSizeBytes;
    return PRISM_SUCCESS;
}

extern "C" prism_result prism__cuda_kernels_init(prism_context *ctx, prism_kernel_state *state)
{
    prism_result r = prism__cuda_bind(ctx);
    if (r != PRISM_SUCCESS)
        return r;
    /* A blocking stream: its work is ordered after what the memory module
     * issues on the legacy default stream (copies, cudaGraphicsMapResources
     * of GL buffers) and before what it issues there next. */
    cudaStream_t s = 0;
    cudaError_t err = cudaStreamCreateWithFlags(&s, cudaStreamDefault);
    if (err != cudaSuccess) {
        cudaGetLastError();
        return prism__error(ctx, PRISM_ERROR_CUDA, "kernels: cudaStreamCreate: %s",
                            cudaGetErrorString(err));
    }
    state->stream = (void *)s;
    /* The tails' stream, blocking as the kernels' one; without priorities
     * (or a stream) the tails stay on the kernels' stream. */
    int least = 0, greatest = 0;
    cudaStream_t u = 0;
    if (cudaDeviceGetStreamPriorityRange(&least, &greatest) == cudaSuccess && greatest < least &&
        cudaStreamCreateWithPriority(&u, cudaStreamDefault, greatest) == cudaSuccess)
        state->urgent_stream = (void *)u;
    cudaGetLastError();
    return PRISM_SUCCESS;
}

extern "C" void prism__cuda_kernels_shutdown(prism_context *ctx, prism_kernel_state *state)
{
    if (prism__cuda_bind(ctx) == PRISM_SUCCESS) {
        if (state->stream != 0)
            cudaStreamDestroy((cudaStream_t)state->stream);
        if (state->urgent_stream != 0)
            cudaStreamDestroy((cudaStream_t)state->urgent_stream);
    }
    state->stream = state->urgent_stream = 0;
}

/* The stats' photon figures (prism__propagate_tally's) from photons in
 * device memory: steps, detected and step-limited counts, the OR of the
 * histories, the latest final time's key. Sums per warp, one atomic each. */
__global__ void prism_tally_kernel(const prism_photon *p, uint32_t n, unsigned long long *sums,
                                   uint32_t *any, uint32_t *latest)
{
    unsigned long long steps = 0, detected = 0, limited = 0;
    uint32_t or_ = 0, key = 0;
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const float t = p[i].time;
        if (isfinite(t))
            key = max(key, prism__float_order(t)); /* the latest: one atomicMax */
        const uint32_t h = p[i].history;
        steps += p[i].steps;
        or_ |= h;
        detected += (h & PRISM_SURFACE_DETECT) != 0;
        limited += (h & PRISM_STEP_LIMIT) != 0;
    }
    for (int o = 16; o > 0; o >>= 1) {
        steps += __shfl_xor_sync(~0u, steps, o);
        detected += __shfl_xor_sync(~0u, detected, o);
        limited += __shfl_xor_sync(~0u, limited, o);
        or_ |= __shfl_xor_sync(~0u, or_, o);
        key = max(key, __shfl_xor_sync(~0u, key, o));
    }
    if ((threadIdx.x & 31) == 0) {
        atomicAdd(&sums[0], steps);
        atomicAdd(&sums[1], detected);
        atomicAdd(&sums[2], limited);
        atomicOr(any, or_);
        atomicMax(latest, key);
    }
}

extern "C" prism_result prism__cuda_tally(prism_context *ctx, const prism_photon *photons,
                                          uint32_t count, prism_propagate_stats *st)
{
    prism_result r = prism__cuda_bind(ctx);
    if (r != PRISM_SUCCESS || count == 0)
        return r;
    prism_buffer *scratch = NULL;
    r = prism_buffer_create_device(ctx, 32, "propagate.tally", &scratch);
    if (r != PRISM_SUCCESS)
        return r;
    unsigned long long *sums = (unsigned long long *)prism_buffer_device_pointer(scratch);
    uint32_t *any = (uint32_t *)(sums + 3), *latest = any + 1; /* the scratch's last 8 bytes */
    unsigned long long got[4];
    cudaStream_t s = prism__cuda_stream_of(ctx);
    cudaError_t err = cudaMemsetAsync(sums, 0, 32, s);
    if (err == cudaSuccess) {
        const unsigned blocks = prism__cuda_blocks(count, 256);
        const unsigned grid = blocks < 1024 ? blocks : 1024;
        prism_tally_kernel<<<grid, 256, 0, s>>>(photons, count, sums, any, latest);
        err = cudaGetLastError();
    }
    if (err == cudaSuccess)
        err = cudaMemcpyAsync(got, sums, sizeof got, cudaMemcpyDeviceToHost, s);
    if (err == cudaSuccess)
        err = cudaStreamSynchronize(s);
    prism_buffer_release(scratch);
    if (err != cudaSuccess) {
        cudaGetLastError();
        return prism__error(ctx, PRISM_ERROR_CUDA, "propagate tally: %s", cudaGetErrorString(err));
    }
    st->steps = got[0];
    st->detected = (size_t)got[1];
    st->step_limited = (size_t)got[2];
    uint32_t words[2];
    memcpy(words, &got[3], sizeof words);
    st->history_or = words[0];
    const uint32_t key = words[1];
    st->time_max = key ? prism__float_from_order(key) : 0.0f;
    return PRISM_SUCCESS;
}
