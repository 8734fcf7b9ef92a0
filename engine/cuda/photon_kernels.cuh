/* The photon kernels (generation and the step loop's launches) and their
 * launchers, compiled twice: by engine/cuda/photon_exact.cu with IEEE arithmetic
 * (no fused multiply-adds, correctly rounded division and square root,
 * denormals kept, prism/device/kmath.h's own functions), which gives the host
 * backend's bits, and by engine/cuda/photon_fast.cu with --use_fast_math and the
 * hardware's approximate functions. The including file defines
 * PRISM_PHOTON_KERNELS, the name of the table it exports
 * (kernel_backend.h). */
#ifndef PRISM_PHOTON_KERNELS
#error "define PRISM_PHOTON_KERNELS before including engine/cuda/photon_kernels.cuh"
#endif

#include <cub/device/device_radix_sort.cuh>
#include <cuda_runtime_api.h>
#include <string.h>

/* The engine's internal headers declare C functions without extern "C"
 * guards (see engine/cuda/kernels.cu). */
extern "C" {
#include "engine/context_internal.h"
#include "engine/launch/kernel_state.h"
}
#include "launch.h"
#include "engine/launch/kernel_backend.h"
#include "engine/launch/propagate_scheme.h"
#include "prism/device/traverse_gpu.h"

#define PRISM_PHOTON_BLOCK 128
static __global__ void prism_generate_kernel(prism_source_params s, prism_optics_view o,
                                             prism_propagate_params q, const prism_photon *given,
                                             prism_photon *photons, prism_step_record *records,
                                             uint32_t *queue, uint32_t count)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count)
        return;
    prism_generate_photon(&s, &o, q.first_photon + i, given != 0 ? &given[i] : 0, &photons[i]);
    prism_record_write(records, &q, i, &photons[i]);
    queue[i] = i;
}

/* The step kernel comes in two builds of the same code, and each launch
 * takes the one that suits where the geometry is. With it all in device
 * memory the walk waits on the SMs' own memory, and more warps in flight
 * hide that: registers are capped at 64 (8 blocks of 128 an SM, twice the
 * occupancy of the compiler's choice). With any of it in mapped host
 * memory the walk waits on PCIe, where more warps only queue more reads,
 * so the compiler keeps its registers. The README's photon kernel table
 * has the measurements. PRISM_PHOTON_MIN_BLOCKS overrides the cap at build
 * time. */
#ifndef PRISM_PHOTON_MIN_BLOCKS
#define PRISM_PHOTON_MIN_BLOCKS 8
#endif

static __device__ __forceinline__ void
prism_propagate_one(const prism_geometry_view &g, const prism_optics_view &o,
                    const prism_propagate_params &q, prism_photon *photons,
                    prism_step_record *records, const uint32_t *queue_in, uint32_t n_in,
                    uint32_t *queue_out, uint32_t *counter, uint32_t budget)
{
    uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n_in)
        return;
    uint32_t id = queue_in[k];
    if (prism_photon_run(&g, &o, &q, photons, records, id, budget))
        queue_out[atomicAdd(counter, 1u)] = id;
}

/* Geometry all in device memory: occupancy first. */
static __global__ void __launch_bounds__(PRISM_PHOTON_BLOCK, PRISM_PHOTON_MIN_BLOCKS)
    prism_propagate_kernel(prism_geometry_view g, prism_optics_view o, prism_propagate_params q,
                           prism_photon *photons, prism_step_record *records,
                           const uint32_t *queue_in, uint32_t n_in, uint32_t *queue_out,
                           uint32_t *counter, uint32_t budget)
{
    prism_propagate_one(g, o, q, photons, records, queue_in, n_in, queue_out, counter, budget);
}

/* Some of it in mapped host memory: the compiler's registers. */
static __global__ void
prism_propagate_mapped_kernel(prism_geometry_view g, prism_optics_view o, prism_propagate_params q,
                              prism_photon *photons, prism_step_record *records,
                              const uint32_t *queue_in, uint32_t n_in, uint32_t *queue_out,
                              uint32_t *counter, uint32_t budget)
{
    prism_propagate_one(g, o, q, photons, records, queue_in, n_in, queue_out, counter, budget);
}

/* The wavefront (Laine, Karras, Aila, "Megakernels considered harmful"):
 * a step split in two kernels over the same queue, so neither carries the
 * other's registers. The trace kernel writes each queued photon's hit
 * (prism_photon_trace's record) to hits[k]; the physics kernel reads it,
 * takes the rest of the step (prism_photon_run_hit: the interaction,
 * records, the end) and appends the survivors to the next queue. A photon
 * takes one step a pair of launches; its numbers depend on its index and
 * step only, so the photons are the megakernel's and the host's. */
/* Register caps (blocks of 128 an SM; both overridable at build time as
 * PRISM_PHOTON_MIN_BLOCKS is). On sm_90 the trace kernel takes 71
 * registers uncapped and 56 at 9 blocks with no spill (below, it spills
 * in the walk's loop); the physics kernel takes 92 uncapped and 80 at 6
 * blocks, spilling a few words outside the common path. */
#ifndef PRISM_TRACE_MIN_BLOCKS
#define PRISM_TRACE_MIN_BLOCKS 9
#endif
#ifndef PRISM_PHYSICS_MIN_BLOCKS
#define PRISM_PHYSICS_MIN_BLOCKS 6
#endif

/* A hit record as one 16-byte access (the scratch is 16-byte aligned). */
static __device__ __forceinline__ void prism_hit_store(prism_trace_hit *at,
                                                       const prism_trace_hit &h)
{
    *(float4 *)at = make_float4(h.t, __uint_as_float(h.index), h.u, h.v);
}

static __device__ __forceinline__ prism_trace_hit prism_hit_load(const prism_trace_hit *at)
{
    const float4 f = *(const float4 *)at;
    prism_trace_hit h;
    h.t = f.x;
    h.index = __float_as_uint(f.y);
    h.u = f.z;
    h.v = f.w;
    return h;
}

/* prism_photon_trace on the tuned binary walk (prism_gpu_trace_closest:
 * the same hit, t, index, u and v, as prism_trace_closest): the same
 * stop test, ray origin and start distance, the same shift of t. */
static __device__ __forceinline__ void prism_photon_trace_gpu(const prism_geometry_view &g,
                                                              const prism_propagate_params &q,
                                                              const prism_photon *p,
                                                              prism_trace_hit &hit)
{
    hit.t = INFINITY;
    hit.index = PRISM_TRACE_NONE;
    hit.u = hit.v = 0.0f;
    if (prism_photon_stop(&q, p) != 0)
        return;
    const uint32_t on = p->reserved;
    pv3 pos = pv3_load(p->pos), dir = pv3_load(p->dir);
    pv3 org = prism_photon_origin(&g, on, pos, dir);
    if (prism_gpu_trace_closest<1>(g, org, dir, prism_photon_tmin(org), INFINITY, on, hit))
        prism_photon_hit_from(&hit, org, pos, dir);
}

/* The trace kernel on the tuned walk, for geometry all in device memory:
 * it holds the ray, the walk's state and its stack, so its registers are
 * capped low for occupancy (the walk waits on memory). */
static __global__ void __launch_bounds__(PRISM_PHOTON_BLOCK, PRISM_TRACE_MIN_BLOCKS)
    prism_trace_kernel(prism_geometry_view g, prism_propagate_params q, const prism_photon *photons,
                       const uint32_t *queue, uint32_t n, prism_trace_hit *hits)
{
    uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n)
        return;
    prism_trace_hit hit;
    prism_photon_trace_gpu(g, q, &photons[queue[k]], hit);
    prism_hit_store(&hits[k], hit);
}

/* The trace kernel on prism_trace_closest (the wide tree where there is
 * one): for geometry partly in mapped host memory, where the walk waits on
 * PCIe, and for geometry with a wide tree in device memory (3-4% faster
 * than the tuned binary walk on 2.56M triangles, 13% on 25.6M). Its
 * registers are left to the compiler (72): capped at 64 for occupancy 0.5
 * it measured 5% slower. */
static __global__ void prism_trace_generic_kernel(prism_geometry_view g, prism_propagate_params q,
                                                  const prism_photon *photons,
                                                  const uint32_t *queue, uint32_t n,
                                                  prism_trace_hit *hits)
{
    uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n)
        return;
    prism_trace_hit hit;
    prism_photon_trace(&g, &q, &photons[queue[k]], &hit);
    prism_hit_store(&hits[k], hit);
}

/* The rest of the step from queue slot k's hit, then the survivors
 * appended to queue_out, one atomic a warp: the order of a queue changes
 * no photon. Every lane of a launched warp reaches the vote (no early
 * return), those past n_in as dead. */
static __global__ void __launch_bounds__(PRISM_PHOTON_BLOCK, PRISM_PHYSICS_MIN_BLOCKS)
    prism_physics_kernel(prism_geometry_view g, prism_optics_view o, prism_propagate_params q,
                         prism_photon *photons, prism_step_record *records,
                         const uint32_t *queue_in, uint32_t n_in, const prism_trace_hit *hits,
                         uint32_t *queue_out, uint32_t *counter)
{
    const uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    uint32_t id = 0;
    bool alive = false;
    if (k < n_in) {
        id = queue_in[k];
        const prism_trace_hit hit = prism_hit_load(&hits[k]);
        alive = prism_photon_run_hit(&g, &o, &q, photons, records, id, &hit) != 0;
    }
    const unsigned live = __ballot_sync(0xFFFFFFFFu, alive);
    if (live == 0)
        return;
    const unsigned lane = threadIdx.x & 31u, leader = __ffs((int)live) - 1;
    uint32_t base = 0;
    if (lane == leader)
        base = atomicAdd(counter, (uint32_t)__popc(live));
    base = __shfl_sync(0xFFFFFFFFu, base, (int)leader);
    if (alive)
        queue_out[base + (uint32_t)__popc(live & ((1u << lane) - 1u))] = id;
}

static prism_result generate(prism_context *ctx, const prism_source_params *s,
                             const prism_optics_view *o, const prism_propagate_params *q,
                             const prism_photon *given, prism_photon *photons,
                             prism_step_record *records, uint32_t *queue, uint32_t count)
{
    prism_result r = prism__cuda_bind(ctx);
    if (r != PRISM_SUCCESS || count == 0)
        return r;
    prism_optics_view vacuum;
    memset(&vacuum, 0, sizeof vacuum);
    prism_generate_kernel<<<prism__cuda_blocks(count, PRISM_PHOTON_BLOCK), PRISM_PHOTON_BLOCK, 0,
                            prism__cuda_stream_of(ctx)>>>(*s, o != 0 ? *o : vacuum, *q, given,
                                                          photons, records, queue, count);
    return prism__cuda_finish(ctx, "generate");
}

/* A step launch's start: the context bound and the survivors' counter
 * zeroed on its stream. Returns false (with *r set) when there is nothing
 * to launch or that failed. */
static bool step_begin(prism_context *ctx, uint32_t n_in, uint32_t *counter, uint32_t *n_out,
                       cudaStream_t *s, prism_result *r)
{
    *n_out = 0;
    *r = prism__cuda_bind(ctx);
    if (*r != PRISM_SUCCESS || n_in == 0)
        return false;
    *s = prism__cuda_stream_of(ctx);
    if (cudaMemsetAsync(counter, 0, sizeof *counter, *s) != cudaSuccess) {
        *r = prism__cuda_finish(ctx, "propagate (counter)");
        return false;
    }
    return true;
}

/* A step launch's end: the survivors' count read back, once the kernels
 * (`err`: how their launch went) are done. */
static prism_result step_end(prism_context *ctx, cudaError_t err, const uint32_t *counter,
                             uint32_t *n_out, cudaStream_t s, const char *what)
{
    if (err == cudaSuccess)
        err = cudaMemcpyAsync(n_out, counter, sizeof *n_out, cudaMemcpyDeviceToHost, s);
    if (err != cudaSuccess) {
        cudaGetLastError();
        return prism__error(ctx, PRISM_ERROR_CUDA, "%s: %s", what, cudaGetErrorString(err));
    }
    return prism__cuda_finish(ctx, what);
}

static prism_result propagate(prism_context *ctx, const prism_geometry_view *g,
                              const prism_optics_view *o, const prism_propagate_params *q,
                              prism_photon *photons, prism_step_record *records,
                              const uint32_t *queue_in, uint32_t n_in, uint32_t *queue_out,
                              uint32_t *n_out, uint32_t budget, uint32_t *counter)
{
    cudaStream_t s;
    prism_result r;
    if (!step_begin(ctx, n_in, counter, n_out, &s, &r))
        return r;
    prism_optics_view vacuum;
    memset(&vacuum, 0, sizeof vacuum);
    const unsigned blocks = prism__cuda_blocks(n_in, PRISM_PHOTON_BLOCK);
    if (g->device_resident)
        prism_propagate_kernel<<<blocks, PRISM_PHOTON_BLOCK, 0, s>>>(*g, o != 0 ? *o : vacuum, *q,
                                                                     photons, records, queue_in,
                                                                     n_in, queue_out, counter,
                                                                     budget);
    else
        prism_propagate_mapped_kernel<<<blocks, PRISM_PHOTON_BLOCK, 0, s>>>(
            *g, o != 0 ? *o : vacuum, *q, photons, records, queue_in, n_in, queue_out, counter,
            budget);
    return step_end(ctx, cudaGetLastError(), counter, n_out, s, "propagate kernel");
}

/* 10 bits spread to every third bit. */
static __device__ __forceinline__ uint32_t prism_spread3(uint32_t v)
{
    v = (v | (v << 16)) & 0x030000FFu;
    v = (v | (v << 8)) & 0x0300F00Fu;
    v = (v | (v << 4)) & 0x030C30C3u;
    v = (v | (v << 2)) & 0x09249249u;
    return v;
}

/* The sort key of queue[i]'s photon: a 30-bit Morton code of its position
 * in the scene's box (PRISM__SORT_POS), or its direction's octant then a
 * 27-bit one (PRISM__SORT_DIRPOS). */
static __global__ void prism_sort_key_kernel(const prism_photon *photons, const uint32_t *queue,
                                             uint32_t n, float3 lo, float3 scale, int mode,
                                             uint32_t *keys)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const prism_photon p = photons[queue[i]];
    const float top = mode == PRISM__SORT_DIRPOS ? 511.0f : 1023.0f;
    const float f[3] = {(p.pos[0] - lo.x) * scale.x, (p.pos[1] - lo.y) * scale.y,
                        (p.pos[2] - lo.z) * scale.z};
    uint32_t c[3];
    for (int a = 0; a < 3; a++)
        c[a] = (uint32_t)fminf(fmaxf(f[a] * top, 0.0f), top);
    uint32_t key = prism_spread3(c[0]) | prism_spread3(c[1]) << 1 | prism_spread3(c[2]) << 2;
    if (mode == PRISM__SORT_DIRPOS)
        key |= (uint32_t)(p.dir[0] < 0.0f) << 27 | (uint32_t)(p.dir[1] < 0.0f) << 28 |
               (uint32_t)(p.dir[2] < 0.0f) << 29;
    keys[i] = key;
}

/* queue_in ordered by the sort key into the context's sort scratch, when
 * the sort is on, the queue long enough to fill the device (shorter ones
 * gain nothing to pay the sort with) and the scratch holds it; else
 * queue_in itself. */
static const uint32_t *sorted_queue(prism_context *ctx, const prism_geometry_view *g,
                                    const prism_photon *photons, const uint32_t *queue_in,
                                    uint32_t n, cudaStream_t s)
{
    const struct prism_kernel_state *k = ctx->kernels;
    if (k == NULL || k->sort_mode == 0 || k->sort_scratch == NULL || n < PRISM__SORT_MIN_PHOTONS)
        return queue_in;
    uint32_t *keys = (uint32_t *)k->sort_scratch, *keys_out = keys + n, *out = keys + 2 * (size_t)n;
    const size_t used = ((size_t)3 * n * sizeof(uint32_t) + 255) / 256 * 256;
    size_t temp_bytes = 0;
    if (used >= k->sort_bytes ||
        cub::DeviceRadixSort::SortPairs(NULL, temp_bytes, keys, keys_out, queue_in, out, (int)n, 0,
                                        30, s) != cudaSuccess ||
        temp_bytes > k->sort_bytes - used)
        return queue_in;
    float3 lo = make_float3(g->bbox_lo[0], g->bbox_lo[1], g->bbox_lo[2]);
    float3 scale = make_float3(1.0f / fmaxf(g->bbox_hi[0] - g->bbox_lo[0], 1e-30f),
                               1.0f / fmaxf(g->bbox_hi[1] - g->bbox_lo[1], 1e-30f),
                               1.0f / fmaxf(g->bbox_hi[2] - g->bbox_lo[2], 1e-30f));
    prism_sort_key_kernel<<<prism__cuda_blocks(n, 256), 256, 0, s>>>(photons, queue_in, n, lo,
                                                                     scale, k->sort_mode, keys);
    if (cudaGetLastError() != cudaSuccess ||
        cub::DeviceRadixSort::SortPairs((char *)k->sort_scratch + used, temp_bytes, keys, keys_out,
                                        queue_in, out, (int)n, 0, 30, s) != cudaSuccess) {
        cudaGetLastError();
        return queue_in;
    }
    return out;
}

/* One step of queue_in[0, n_in) as the wavefront: the trace kernel (the
 * tuned walk where `tuned`, else prism_trace_closest), then the physics
 * kernel, on one stream with no wait between them; survivors in
 * queue_out, their count in *n_out. hits: n_in records of scratch. */
static prism_result propagate_wave(prism_context *ctx, const prism_geometry_view *g,
                                   const prism_optics_view *o, const prism_propagate_params *q,
                                   prism_photon *photons, prism_step_record *records,
                                   const uint32_t *queue_in, uint32_t n_in, uint32_t *queue_out,
                                   uint32_t *n_out, uint32_t *counter, prism_trace_hit *hits,
                                   int tuned)
{
    cudaStream_t s;
    prism_result r;
    if (!step_begin(ctx, n_in, counter, n_out, &s, &r))
        return r;
    prism_optics_view vacuum;
    memset(&vacuum, 0, sizeof vacuum);
    const unsigned blocks = prism__cuda_blocks(n_in, PRISM_PHOTON_BLOCK);
    queue_in = sorted_queue(ctx, g, photons, queue_in, n_in, s);
    if (tuned)
        prism_trace_kernel<<<blocks, PRISM_PHOTON_BLOCK, 0, s>>>(*g, *q, photons, queue_in, n_in,
                                                                 hits);
    else
        prism_trace_generic_kernel<<<blocks, PRISM_PHOTON_BLOCK, 0, s>>>(*g, *q, photons, queue_in,
                                                                         n_in, hits);
    cudaError_t err = cudaGetLastError();
    if (err == cudaSuccess) {
        prism_physics_kernel<<<blocks, PRISM_PHOTON_BLOCK, 0, s>>>(*g, o != 0 ? *o : vacuum, *q,
                                                                   photons, records, queue_in, n_in,
                                                                   hits, queue_out, counter);
        err = cudaGetLastError();
    }
    return step_end(ctx, err, counter, n_out, s, "propagate (wavefront)");
}

extern "C" const prism_cuda_photon_kernels PRISM_PHOTON_KERNELS = {
    generate,
    propagate,
    propagate_wave,
    (const void *)prism_generate_kernel,
    (const void *)prism_propagate_kernel,
    (const void *)prism_trace_kernel,
    (const void *)prism_trace_generic_kernel,
    (const void *)prism_physics_kernel};
