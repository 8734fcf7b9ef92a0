/* The CUDA BVH builder: PLOC (Meister and Bittner, "Parallel Locally-Ordered
 * Clustering for Bounding Volume Hierarchy Construction", 2018) over
 * 63-bit Morton codes (or, asked for, its hierarchical one-launch form,
 * H-PLOC, below), then an SAH collapse into leaves and a breadth-first
 * layout, all in device memory. The nodes never cross PCIe.
 *
 * Why PLOC: an LBVH (Karras 2012) builds faster but its trees cost 20-40%
 * more SAH than a binned SAH build; PLOC's nearest-neighbour merging of
 * Morton-ordered clusters reaches the binned tree's quality at a few times
 * the LBVH's time, and every pass is a map, a scan and a compaction that
 * CUB does well.
 *
 * Phases (timed with events, reported as prism_bvh_build_report's):
 *   codes:       centroid bounds (and the input check), Morton codes in
 *                the frame the bounds give, made on the device (the input
 *                check's answer is read with the hierarchy's first);
 *   sort:        CUB radix sort of (code, triangle);
 *   hierarchy:   PLOC passes, each: nearest neighbour in a window of
 *                +-PLOC_RADIUS clusters (smallest union box area), mutual
 *                pairs merge, one CUB scan compacts: three launches (the
 *                search, the scan, which makes the flags as it reads them,
 *                and the merge, which also advances the passes' state),
 *                the host reading the count every PASS_BATCH. A merged node's
 *                triangle count and SAH cost (best of leaf and split) are
 *                known when it is made, so the collapse needs no pass.
 *                Below TAIL_MAX clusters one block does the remaining
 *                passes in one launch (most of the passes, each over
 *                few clusters: a launch and a host round trip each would
 *                cost more than the work), and then the top-down below
 *                for the nodes they made. Or, asked for (cuda_bvh_hploc),
 *                H-PLOC (k_hploc): one launch, each warp merging the
 *                clusters of one range of the codes' radix tree at a time,
 *                bottom-up; one host read after it. Not the default: its
 *                launch is about as long as the passes, its top-down by
 *                levels takes longer (the nodes of a level are scattered
 *                ids, where a pass's are consecutive), and its tree, of
 *                lower SAH, traces primary rays from outside slower (the
 *                README has the figures). Its launch keeps few warps busy
 *                at the top of the tree, where ranges meet one by one;
 *   optimisation: top-down, each node's depth, its first triangle in
 *                leaf order, and whether it is in the final tree (no
 *                ancestor became a leaf): pass by pass in reverse after
 *                the passes, level by level after H-PLOC;
 *   layout:      the live count and the depth read back together;
 *                triangles into leaf order (their output was scratch until
 *                then; they run while the host makes the node array); the
 *                final nodes sorted by (depth, first triangle), which is
 *                breadth-first order with each sibling pair adjacent
 *                (children of one parent at one depth, left before right,
 *                nothing between them), ranked by one scan (rank_in says
 *                how that places the children), written in the 32-byte
 *                layout with node 1 as padding. One more host read: the
 *                figures and the root's box.
 * Memory: one arena, each phase's arrays where earlier ones died, and the
 * outputs lent out as scratch before they are filled (the table at
 * plan_arena).
 *
 * Ties: clusters of equal union area (identical triangles, the repeated
 * PMTs of a detector) break ties by a hash symmetric in the pair, so the
 * globally best pair is always mutual and every pass merges (with
 * "smallest index wins", identical boxes would merge one pair per window).
 * A pass that merged nothing anyway, or a tree deeper than
 * PRISM_BVH_MAX_DEPTH (the traversal's stack), makes the builder pair
 * neighbours instead: a balanced tree over the Morton order, depth
 * log2(n), reported as `balanced`. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/block/block_reduce.cuh>
#include <cuda_runtime_api.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

extern "C" {
#include "engine/context_internal.h"
#include "engine/launch/kernel_state.h"
}
#include "build.h"
#include "engine/cuda/launch.h"

/* The window: +-PLOC_RADIUS clusters (prism_geometry_desc.cuda_bvh_radius,
 * a knob for the bench). A window of 8 builds faster, but its clusters
 * find worse neighbours: a tree of higher SAH cost, whose rays cost more
 * than the build saved. */
#define PLOC_RADIUS PRISM_BVH_CUDA_RADIUS
#define PLOC_SMALL PRISM_BVH_CUDA_RADIUS_SMALL
#define BLOCK 256

/* ---- device helpers */

/* prism__float_order's key back to its float. */
__device__ __forceinline__ float o2f(uint32_t u)
{
    return __uint_as_float((u & 0x80000000u) ? (u & 0x7FFFFFFFu) : ~u);
}

__device__ __forceinline__ float box_area(float3 lo, float3 hi)
{
    const float dx = hi.x - lo.x, dy = hi.y - lo.y, dz = hi.z - lo.z;
    return dx * dy + dy * dz + dz * dx;
}

__device__ __forceinline__ float3 vload(const float *v, uint32_t i)
{
    return make_float3(v[3 * (size_t)i], v[3 * (size_t)i + 1], v[3 * (size_t)i + 2]);
}

/* Triangle t's corners. An index out of range reads as the origin: the
 * input check's answer is read back only at the hierarchy's first host
 * round trip, and the kernels before it must not fault on a bad index. */
__device__ __forceinline__ void tri_load(const float *V, uint32_t nv, const uint32_t *T, uint32_t t,
                                         float3 &p, float3 &q, float3 &r)
{
    const uint32_t a = T[3 * (size_t)t], b = T[3 * (size_t)t + 1], c = T[3 * (size_t)t + 2];
    const float3 z = make_float3(0.0f, 0.0f, 0.0f);
    p = a < nv ? vload(V, a) : z;
    q = b < nv ? vload(V, b) : z;
    r = c < nv ? vload(V, c) : z;
}

__device__ __forceinline__ float3 fmin3(float3 a, float3 b)
{
    return make_float3(fminf(a.x, b.x), fminf(a.y, b.y), fminf(a.z, b.z));
}

__device__ __forceinline__ float3 fmax3(float3 a, float3 b)
{
    return make_float3(fmaxf(a.x, b.x), fmaxf(a.y, b.y), fmaxf(a.z, b.z));
}

__device__ __forceinline__ bool finite3(float3 a)
{
    return isfinite(a.x) && isfinite(a.y) && isfinite(a.z);
}

/* Bits 0..20 of x spread to every third bit. */
__device__ __forceinline__ uint64_t spread21(uint32_t x)
{
    uint64_t v = x & 0x1FFFFFu;
    v = (v | v << 32) & 0x1F00000000FFFFull;
    v = (v | v << 16) & 0x1F0000FF0000FFull;
    v = (v | v << 8) & 0x100F00F00F00F00Full;
    v = (v | v << 4) & 0x10C30C30C30C30C3ull;
    v = (v | v << 2) & 0x1249249249249249ull;
    return v;
}

/* A hash of the unordered pair {a < b}: the tie-break of equal areas. */
__device__ __forceinline__ uint32_t pair_hash(uint32_t a, uint32_t b)
{
    uint32_t h = a * 0x9E3779B1u ^ (b + 0x7F4A7C15u) * 0x85EBCA77u;
    h ^= h >> 15;
    h *= 0x2C1B3C6Du;
    h ^= h >> 12;
    h *= 0x297A2D39u;
    h ^= h >> 15;
    return h;
}

/* ---- codes */

/* Centroid bounds (ordered-int encoded, [0..2] min, [3..5] max) and the
 * first bad triangle (index out of range or non-finite vertex). */
__global__ void k_bounds(const float *V, uint32_t nv, const uint32_t *T, uint32_t n,
                         uint32_t *bounds, uint32_t *bad)
{
    float3 lo = make_float3(FLT_MAX, FLT_MAX, FLT_MAX),
           hi = make_float3(-FLT_MAX, -FLT_MAX, -FLT_MAX);
    uint32_t first_bad = UINT32_MAX;
    for (uint32_t t = blockIdx.x * blockDim.x + threadIdx.x; t < n; t += gridDim.x * blockDim.x) {
        const uint32_t a = T[3 * (size_t)t], b = T[3 * (size_t)t + 1], c = T[3 * (size_t)t + 2];
        if (a >= nv || b >= nv || c >= nv) {
            first_bad = min(first_bad, t);
            continue;
        }
        const float3 p = vload(V, a), q = vload(V, b), r = vload(V, c);
        if (!finite3(p) || !finite3(q) || !finite3(r)) {
            first_bad = min(first_bad, t);
            continue;
        }
        const float3 m = make_float3((p.x + q.x + r.x) * (1.0f / 3), (p.y + q.y + r.y) * (1.0f / 3),
                                     (p.z + q.z + r.z) * (1.0f / 3));
        lo = fmin3(lo, m);
        hi = fmax3(hi, m);
    }
    for (int o = 16; o > 0; o >>= 1) {
        lo.x = fminf(lo.x, __shfl_xor_sync(~0u, lo.x, o));
        lo.y = fminf(lo.y, __shfl_xor_sync(~0u, lo.y, o));
        lo.z = fminf(lo.z, __shfl_xor_sync(~0u, lo.z, o));
        hi.x = fmaxf(hi.x, __shfl_xor_sync(~0u, hi.x, o));
        hi.y = fmaxf(hi.y, __shfl_xor_sync(~0u, hi.y, o));
        hi.z = fmaxf(hi.z, __shfl_xor_sync(~0u, hi.z, o));
        first_bad = min(first_bad, __shfl_xor_sync(~0u, first_bad, o));
    }
    if ((threadIdx.x & 31) == 0) {
        atomicMin(&bounds[0], prism__float_order(lo.x));
        atomicMin(&bounds[1], prism__float_order(lo.y));
        atomicMin(&bounds[2], prism__float_order(lo.z));
        atomicMax(&bounds[3], prism__float_order(hi.x));
        atomicMax(&bounds[4], prism__float_order(hi.y));
        atomicMax(&bounds[5], prism__float_order(hi.z));
        if (first_bad != UINT32_MAX)
            atomicMin(bad, first_bad);
    }
}

/* The Morton frame from the centroid bounds, in each thread (six cached
 * words): lo and 2^21 / extent (0 for a flat axis), in IEEE single
 * arithmetic (the _rn intrinsics, whatever --use_fast_math says), so the
 * codes are those the host's frame gave when it was read back for it. */
__global__ void k_codes(const float *V, uint32_t nv, const uint32_t *T, uint32_t n,
                        const uint32_t *bounds, uint64_t *keys, uint32_t *vals)
{
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n)
        return;
    float3 p, q, r;
    tri_load(V, nv, T, t, p, q, r);
    const float c[3] = {(p.x + q.x + r.x) * (1.0f / 3), (p.y + q.y + r.y) * (1.0f / 3),
                        (p.z + q.z + r.z) * (1.0f / 3)};
    uint64_t code = 0;
    for (int a = 0; a < 3; a++) {
        const float lo = o2f(bounds[a]), ext = __fsub_rn(o2f(bounds[3 + a]), lo);
        const float scale = ext > 0.0f && isfinite(ext) ? __fdiv_rn(2097152.0f, ext) : 0.0f;
        float x = (c[a] - lo) * scale;
        uint32_t qx = x <= 0.0f ? 0u : x >= 2097151.0f ? 2097151u : (uint32_t)x;
        code |= spread21(qx) << (2 - a);
    }
    keys[t] = code;
    vals[t] = t;
}

/* ---- clusters and nodes
 *
 * Node record (all 2n-1 nodes; ids 0..n-1 are the leaves in Morton order,
 * merged nodes follow in the order the passes make them, so a child's id
 * is always below its parent's): lo.w = triangle count (bits), hi.w = SAH
 * cost of the subtree as it will be laid out (unnormalised areas) while
 * the hierarchy is built; the top-down then puts the node's first
 * triangle in leaf order there (bits), the cost being dead by then.
 * Children: child[id - n] (leaves have none). Cluster: a node id; the
 * window search reads the boxes from the node records (the tail copies
 * them next to the ids, where its passes read them again and again). */

__global__ void k_leaves(const float *V, uint32_t nv, const uint32_t *T, uint32_t n,
                         const uint32_t *order, float4 *node, uint8_t *leaf, uint32_t *cl)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float3 p, q, r;
    tri_load(V, nv, T, order[i], p, q, r);
    const float3 lo = fmin3(fmin3(p, q), r), hi = fmax3(fmax3(p, q), r);
    node[2 * (size_t)i] = make_float4(lo.x, lo.y, lo.z, __uint_as_float(1u));
    node[2 * (size_t)i + 1] = make_float4(hi.x, hi.y, hi.z, box_area(lo, hi));
    leaf[i] = 1;
    cl[i] = i;
}

/* Cluster i's nearest neighbour within +-PLOC_RADIUS positions: the
 * smallest (union area, pair hash). `box(g)` is cluster g's lo, hi. pairs
 * != 0: the balanced fallback, neighbours 2k and 2k+1. */
template <int R, typename Boxes>
__device__ __forceinline__ uint32_t nearest_of(const Boxes &box, uint32_t c, uint32_t i, int pairs)
{
    if (pairs)
        return (i ^ 1u) < c ? (i ^ 1u) : i;
    float4 a_lo, a_hi;
    box(i, a_lo, a_hi);
    uint64_t best = UINT64_MAX;
    uint32_t best_j = i;
    for (int d = -R; d <= R; d++) {
        const int64_t j = (int64_t)i + d;
        if (d == 0 || j < 0 || j >= c)
            continue;
        float4 b_lo, b_hi;
        box((uint32_t)j, b_lo, b_hi);
        const float3 lo = make_float3(fminf(a_lo.x, b_lo.x), fminf(a_lo.y, b_lo.y),
                                      fminf(a_lo.z, b_lo.z));
        const float3 hi = make_float3(fmaxf(a_hi.x, b_hi.x), fmaxf(a_hi.y, b_hi.y),
                                      fmaxf(a_hi.z, b_hi.z));
        const uint32_t lo_id = d < 0 ? (uint32_t)j : i, hi_id = d < 0 ? i : (uint32_t)j;
        const uint64_t key = (uint64_t)__float_as_uint(box_area(lo, hi)) << 32 |
                             pair_hash(lo_id, hi_id);
        if (key < best) {
            best = key;
            best_j = (uint32_t)j;
        }
    }
    return best_j;
}

/* Boxes from a shared-memory tile that starts at cluster `first`. */
struct tile_boxes {
    const float4 *tile;
    int64_t first;
    __device__ void operator()(uint32_t g, float4 &lo, float4 &hi) const
    {
        lo = tile[2 * (g - first)];
        hi = tile[2 * (g - first) + 1];
    }
};

/* Boxes straight from global memory (the tail, where they sit in L1/L2). */
struct global_boxes {
    const float4 *cl;
    __device__ void operator()(uint32_t g, float4 &lo, float4 &hi) const
    {
        lo = cl[2 * (size_t)g];
        hi = cl[2 * (size_t)g + 1];
    }
};

/* The device-wide passes' state, so that passes can follow one another
 * without the host reading each one's count: kernels are launched over
 * the last count the host saw (`bound`) and read the real one here. Two
 * of them: pass k reads st[k & 1] and its merge writes st[(k + 1) & 1],
 * so the next state is made by the merge itself (no one-thread launch
 * after it) while the merge's other threads still read this one. */
typedef struct pass_state {
    uint32_t c, next, pairs, records;
} pass_state;

/* Even, so that every batch starts and ends on st[0]. */
#define PASS_BATCH 4
static_assert(PASS_BATCH % 2 == 0, "a batch must end on the state it began on");

/* What the host reads back after a batch, in one copy. */
typedef struct pass_block {
    pass_state st[2];
    uint2 records[PASS_BATCH];
} pass_block;

template <int R>
__global__ void k_nearest(const uint32_t *cl, const float4 *node, const pass_state *st,
                          uint32_t *nn)
{
    __shared__ float4 tile[2 * (BLOCK + 2 * R)];
    const uint32_t c = st->c;
    const int pairs = st->pairs;
    if ((uint64_t)blockIdx.x * BLOCK >= c)
        return;
    const int64_t first = (int64_t)blockIdx.x * BLOCK - R;
    if (!pairs)
        for (int k = threadIdx.x; k < BLOCK + 2 * R; k += BLOCK) {
            const int64_t g = first + k;
            if (g >= 0 && g < c) {
                const uint32_t id = cl[g];
                tile[2 * k] = node[2 * (size_t)id];
                tile[2 * k + 1] = node[2 * (size_t)id + 1];
            }
        }
    __syncthreads();
    const uint32_t i = blockIdx.x * BLOCK + threadIdx.x;
    if (i < c)
        nn[i] = nearest_of<R>(tile_boxes{tile, first}, c, i, pairs);
}

/* Per cluster: merges (the lower of a mutual pair) in the high half,
 * survives (not the higher of a mutual pair) in the low half; one 64-bit
 * inclusive scan then gives both the new node's rank and the position. */
__device__ __forceinline__ uint64_t flag_of(const uint32_t *nn, uint32_t i)
{
    const uint32_t j = nn[i];
    const bool mutual = j != i && nn[j] == i;
    return (mutual && i < j ? 1ull << 32 : 0ull) | (mutual && i > j ? 0ull : 1ull);
}

/* The scan's input, made as the scan reads it (no flags array, no launch
 * to fill one): cluster i's flags, 0 past the pass's count. */
struct flag_op {
    const uint32_t *nn;
    const pass_state *st;
    __device__ uint64_t operator()(uint32_t i) const { return i < st->c ? flag_of(nn, i) : 0ull; }
};
typedef thrust::transform_iterator<flag_op, thrust::counting_iterator<uint32_t>, uint64_t>
    flag_iter;

/* Node `id`, the union of nodes ia and ib (ia the lower cluster): its
 * record, children, and whether the SAH makes it a leaf. Returns the box. */
__device__ __forceinline__ void make_node(float4 *node, uint2 *child, uint8_t *leaf, uint32_t ia,
                                          uint32_t ib, uint32_t id, uint32_t n, uint32_t max_leaf,
                                          float3 &lo, float3 &hi)
{
    const float4 na_lo = node[2 * (size_t)ia], na_hi = node[2 * (size_t)ia + 1];
    const float4 nb_lo = node[2 * (size_t)ib], nb_hi = node[2 * (size_t)ib + 1];
    lo = make_float3(fminf(na_lo.x, nb_lo.x), fminf(na_lo.y, nb_lo.y), fminf(na_lo.z, nb_lo.z));
    hi = make_float3(fmaxf(na_hi.x, nb_hi.x), fmaxf(na_hi.y, nb_hi.y), fmaxf(na_hi.z, nb_hi.z));
    const uint32_t count = __float_as_uint(na_lo.w) + __float_as_uint(nb_lo.w);
    /* SAH constants of prism/bvh.h: traversal 1, intersection 1 per triangle */
    const float area = box_area(lo, hi);
    const float split = area + na_hi.w + nb_hi.w, as_leaf = area * (float)count;
    const bool is_leaf = count <= max_leaf && as_leaf <= split;
    node[2 * (size_t)id] = make_float4(lo.x, lo.y, lo.z, __uint_as_float(count));
    node[2 * (size_t)id + 1] = make_float4(hi.x, hi.y, hi.z, is_leaf ? as_leaf : split);
    child[id - n] = make_uint2(ia, ib);
    leaf[id] = is_leaf;
}

/* Cluster i into the next pass's array: copied, or merged with its mutual
 * neighbour into node next_id + (merges before it); `excl` is the
 * exclusive prefix of flag_of (merges, survivors). */
__device__ __forceinline__ void merge_one(const uint32_t *cl, const uint32_t *nn, uint32_t i,
                                          uint64_t excl, uint32_t *out, float4 *node, uint2 *child,
                                          uint8_t *leaf, uint32_t next_id, uint32_t n,
                                          uint32_t max_leaf)
{
    const uint32_t j = nn[i];
    const bool mutual = j != i && nn[j] == i;
    if (mutual && i > j)
        return; /* merged into its partner's new node */
    const uint32_t pos = (uint32_t)excl;
    if (!mutual) {
        out[pos] = cl[i];
        return;
    }
    const uint32_t id = next_id + (uint32_t)(excl >> 32);
    float3 lo, hi;
    make_node(node, child, leaf, cl[i], cl[j], id, n, max_leaf, lo, hi);
    out[pos] = id;
}

/* The merge, and (cluster c - 1's thread) the pass's totals into the next
 * state and its record (the nodes it made). A pass that merged nothing
 * (cannot happen with distinct keys) copied every cluster, and turns on
 * pairing so that the next one merges. */
__global__ void k_merge(const uint32_t *cl, const pass_state *st, pass_state *st_next,
                        uint2 *records, const uint32_t *nn, const uint64_t *packed, uint32_t *out,
                        float4 *node, uint2 *child, uint8_t *leaf, uint32_t n, uint32_t max_leaf)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    const uint32_t c = st->c;
    if (i >= c)
        return;
    const uint64_t incl = packed[i];
    merge_one(cl, nn, i, incl - flag_of(nn, i), out, node, child, leaf, st->next, n, max_leaf);
    if (i == c - 1) {
        pass_state s = *st;
        if (c > 1) {
            const uint32_t merged = (uint32_t)(incl >> 32);
            if (merged) {
                records[s.records++] = make_uint2(s.next, merged);
                s.next += merged;
            } else {
                s.pairs = 1;
            }
            s.c = (uint32_t)incl;
        }
        *st_next = s;
    }
}

/* ---- optimisation: top-down over one pass's nodes [first, first + n).
 * Depths are bytes, saturating at 255: anything past PRISM_BVH_MAX_DEPTH
 * only has to be seen to be too deep. */

__device__ __forceinline__ void down_one(float4 *node, const uint2 *child, const uint8_t *leaf,
                                         uint8_t *depth, uint8_t *live, uint32_t id, uint32_t n,
                                         uint32_t *max_depth)
{
    const uint2 ch = child[id - n];
    const uint32_t o = __float_as_uint(node[2 * (size_t)id + 1].w);
    const uint32_t d = min((uint32_t)depth[id] + 1u, 255u);
    const uint8_t below = live[id] && !leaf[id];
    node[2 * (size_t)ch.x + 1].w = __uint_as_float(o);
    node[2 * (size_t)ch.y + 1].w = __uint_as_float(o + __float_as_uint(node[2 * (size_t)ch.x].w));
    depth[ch.x] = depth[ch.y] = (uint8_t)d;
    live[ch.x] = live[ch.y] = below;
    if (below)
        atomicMax(max_depth, d);
}

__global__ void k_down(float4 *node, const uint2 *child, const uint8_t *leaf, uint8_t *depth,
                       uint8_t *live, uint32_t first, uint32_t count, uint32_t n,
                       uint32_t *max_depth)
{
    const uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < count)
        down_one(node, child, leaf, depth, live, first + k, n, max_depth);
}

/* ---- the tail: the last passes, from TAIL_MAX clusters down to one, in
 * one block (they are dozens of passes over a few thousand clusters: a
 * launch and a host round trip each cost more than their work), then the
 * top-down over the nodes they made, which are the top of the tree. */

/* 512 threads of 8 clusters: at 1024 threads (64 registers) the window
 * search spilled */
#define TAIL_THREADS 512
#define TAIL_PER_THREAD 8
#define TAIL_MAX (TAIL_THREADS * TAIL_PER_THREAD)
static_assert(TAIL_MAX == PRISM_BVH_CUDA_TAIL_MAX, "prism_geometry_desc.cuda_bvh_tail's bound");
/* The tail's pass records; near the end it pairs neighbours (at most
 * log2(TAIL_MAX) more passes), so it never needs more. */
#define TAIL_PASSES 8192

/* The host's one read after the tail: also the input check's answer, which
 * nothing read back before. */
typedef struct tail_out {
    uint32_t passes, root, bad;
} tail_out;

/* The tail's cluster: the node's box, lo.w = its id (bits). */
__device__ __forceinline__ void merge_box(const float4 *cl, const uint32_t *nn, uint32_t i,
                                          uint64_t excl, float4 *out, float4 *node, uint2 *child,
                                          uint8_t *leaf, uint32_t next_id, uint32_t n,
                                          uint32_t max_leaf)
{
    const uint32_t j = nn[i];
    const bool mutual = j != i && nn[j] == i;
    if (mutual && i > j)
        return;
    const uint32_t pos = (uint32_t)excl;
    const float4 a_lo = cl[2 * (size_t)i], a_hi = cl[2 * (size_t)i + 1];
    if (!mutual) {
        out[2 * (size_t)pos] = a_lo;
        out[2 * (size_t)pos + 1] = a_hi;
        return;
    }
    const uint32_t id = next_id + (uint32_t)(excl >> 32);
    float3 lo, hi;
    make_node(node, child, leaf, __float_as_uint(a_lo.w), __float_as_uint(cl[2 * (size_t)j].w), id,
              n, max_leaf, lo, hi);
    out[2 * (size_t)pos] = make_float4(lo.x, lo.y, lo.z, __uint_as_float(id));
    out[2 * (size_t)pos + 1] = make_float4(hi.x, hi.y, hi.z, 0.0f);
}

template <int R>
__global__ void __launch_bounds__(TAIL_THREADS)
    k_tail(const uint32_t *ids, float4 *boxes, uint32_t c, uint32_t next, uint32_t *nn,
           float4 *node, uint2 *child, uint8_t *leaf, uint32_t n, uint32_t max_leaf, int pairs,
           uint2 *passes, uint32_t cap, uint8_t *depth, uint8_t *live, uint32_t *max_depth,
           const uint32_t *bad, tail_out *out)
{
    typedef cub::BlockScan<unsigned long long, TAIL_THREADS> scan_t;
    __shared__ typename scan_t::TempStorage tmp;
    const uint32_t t = threadIdx.x;
    uint32_t np = 0;
    float4 *cur = boxes, *nxt = boxes + 2 * TAIL_MAX;
    for (uint32_t i = t; i < c; i += TAIL_THREADS) {
        const uint32_t id = ids[i];
        const float4 lo = node[2 * (size_t)id], hi = node[2 * (size_t)id + 1];
        cur[2 * (size_t)i] = make_float4(lo.x, lo.y, lo.z, __uint_as_float(id));
        cur[2 * (size_t)i + 1] = make_float4(hi.x, hi.y, hi.z, 0.0f);
    }
    __syncthreads();
    while (c > 1) {
        /* passes are bounded: near the record's end, pairs finish in log2(c) */
        if (!pairs && np + 16 >= cap)
            pairs = 1;
        for (uint32_t i = t; i < c; i += TAIL_THREADS)
            nn[i] = nearest_of<R>(global_boxes{cur}, c, i, pairs);
        __syncthreads();
        unsigned long long sum = 0, excl, total;
        for (int k = 0; k < TAIL_PER_THREAD; k++) {
            const uint32_t i = t * TAIL_PER_THREAD + k;
            sum += i < c ? flag_of(nn, i) : 0ull;
        }
        scan_t(tmp).ExclusiveSum(sum, excl, total);
        for (int k = 0; k < TAIL_PER_THREAD; k++) {
            const uint32_t i = t * TAIL_PER_THREAD + k;
            if (i < c) {
                merge_box(cur, nn, i, excl, nxt, node, child, leaf, next, n, max_leaf);
                excl += flag_of(nn, i);
            }
        }
        __syncthreads();
        const uint32_t merged = (uint32_t)(total >> 32);
        if (merged == 0) { /* cannot happen with distinct keys; never loop forever */
            pairs = 1;
            continue;
        }
        if (t == 0)
            passes[np] = make_uint2(next, merged);
        np++;
        next += merged;
        c = (uint32_t)total;
        float4 *swap = cur;
        cur = nxt;
        nxt = swap;
    }
    const uint32_t root = next - 1;
    if (t == 0) {
        node[2 * (size_t)root + 1].w = __uint_as_float(0u); /* its first triangle */
        depth[root] = 0;
        live[root] = 1;
        out->passes = np;
        out->root = root;
        out->bad = *bad;
    }
    __syncthreads();
    for (uint32_t k = np; k-- > 0;) {
        const uint2 p = passes[k];
        for (uint32_t i = t; i < p.y; i += TAIL_THREADS)
            down_one(node, child, leaf, depth, live, p.x + i, n, max_depth);
        __syncthreads();
    }
}

/* ---- the hierarchy in one launch: H-PLOC (Benthin, Meister, Barczak,
 * Mehalwal, Tsakok and Kensler, "H-PLOC: Hierarchical Parallel
 * Locally-Ordered Clustering for Bounding Volume Hierarchy Construction",
 * HPG 2024).
 *
 * Each thread starts at a leaf (a range [i, i] of the Morton order) and
 * climbs the implicit radix tree of the codes bottom-up as in Apetrei's
 * agglomerative LBVH: a range's parent lies at whichever of its two
 * boundaries splits less similar codes, and of the two children meeting
 * there (one atomic exchange on the boundary) the second to arrive goes on
 * with their union. A range of more than HPLOC_HALF primitives is not a
 * node of the tree: its clusters (its two children's, at most HPLOC_HALF
 * each, so a warp holds them) are merged by PLOC's rule, mutual nearest
 * neighbours within +-R lanes, until HPLOC_HALF are left (one at the
 * root). The whole warp merges one range at a time, the ranges its lanes
 * hold in turn. So the passes over the whole array, and their host round
 * trips, are gone; a merged node still only ever has children made before
 * it (ids from one counter), and the same clusters meet in the same order
 * whatever the scheduling, so the tree, and the layout's bytes, do not
 * change from run to run (the tie-break hashes positions, not the ids).
 *
 * Where a range's clusters are: at its first position in `hcl` (`hcnt`
 * there says how many once the range was merged; a range of at most
 * HPLOC_HALF primitives was never merged and holds its leaves, which
 * k_leaves put in place). Another warp's clusters, records and counts are
 * read through L2 (__ldcg): they were written on another SM in this
 * launch, published by a fence before the exchange that hands the range
 * on. */
#define HPLOC_HALF 16
#define HPLOC_BLOCK 256
#define HPLOC_NONE 0xFFFFFFFFu
static_assert(2 * HPLOC_HALF == 32, "two children's clusters fill a warp");

/* Whether boundary a (between sorted positions a and a + 1) splits more
 * similar codes than boundary b: the codes' xor, and where it ties (equal
 * codes above all) the positions' xor, which makes runs of equal codes a
 * balanced tree instead of a chain; then the positions (a total order, so
 * the two children of a boundary always agree on it). */
__device__ __forceinline__ bool split_less(const uint64_t *keys, uint32_t a, uint32_t b)
{
    const uint64_t xa = keys[a] ^ keys[a + 1], xb = keys[b] ^ keys[b + 1];
    if (xa != xb)
        return xa < xb;
    const uint32_t ya = a ^ (a + 1), yb = b ^ (b + 1);
    return ya != yb ? ya < yb : a < b;
}

__device__ __forceinline__ float4 shfl4(float4 v, int src)
{
    return make_float4(__shfl_sync(~0u, v.x, src), __shfl_sync(~0u, v.y, src),
                       __shfl_sync(~0u, v.z, src), __shfl_sync(~0u, v.w, src));
}

/* Merges range [L, R] (children [L, S) and [S, R]) down to HPLOC_HALF
 * clusters, or one if `root`: the whole warp, lane k holding cluster k.
 * `stage`: this warp's 32 slots of shared memory for the compaction. */
template <int RADIUS>
__device__ void hploc_merge(uint32_t L, uint32_t S, uint32_t R, bool root, uint32_t n,
                            uint32_t *hcl, uint8_t *hcnt, float4 *node, uint2 *child, uint8_t *leaf,
                            uint32_t max_leaf, uint32_t *counter, float4 *stage_lo,
                            float4 *stage_hi, uint32_t *stage_id)
{
    const uint32_t lane = threadIdx.x & 31;
    const uint32_t nl = S - L, nr = R - S + 1;
    const uint32_t cl = nl > HPLOC_HALF ? __ldcg(&hcnt[L]) : nl;
    const uint32_t cr = nr > HPLOC_HALF ? __ldcg(&hcnt[S]) : nr;
    uint32_t c = cl + cr, id = HPLOC_NONE;
    float4 lo = make_float4(0.0f, 0.0f, 0.0f, 0.0f), hi = lo;
    if (lane < cl)
        id = __ldcg(&hcl[L + lane]);
    else if (lane < c)
        id = __ldcg(&hcl[S + lane - cl]);
    if (lane < c) {
        lo = __ldcg(&node[2 * (size_t)id]);
        hi = __ldcg(&node[2 * (size_t)id + 1]);
    }
    const uint32_t target = root ? 1u : (uint32_t)HPLOC_HALF;
    while (c > target) {
        __syncwarp(); /* the shuffles below run on the whole warp, converged */
        /* nearest neighbour within +-RADIUS lanes: each pair's key made
         * once, by its lower lane, and handed to the upper */
        uint64_t best = UINT64_MAX;
        uint32_t nn = lane;
#pragma unroll 4
        for (int d = 1; d <= RADIUS && d < (int)c; d++) {
            const float ox = __shfl_down_sync(~0u, lo.x, d), oy = __shfl_down_sync(~0u, lo.y, d),
                        oz = __shfl_down_sync(~0u, lo.z, d);
            const float px = __shfl_down_sync(~0u, hi.x, d), py = __shfl_down_sync(~0u, hi.y, d),
                        pz = __shfl_down_sync(~0u, hi.z, d);
            uint64_t key = UINT64_MAX;
            if (lane + d < c) {
                const float3 ulo = make_float3(fminf(lo.x, ox), fminf(lo.y, oy), fminf(lo.z, oz));
                const float3 uhi = make_float3(fmaxf(hi.x, px), fmaxf(hi.y, py), fmaxf(hi.z, pz));
                key = (uint64_t)__float_as_uint(box_area(ulo, uhi)) << 32 |
                      pair_hash(L + lane, L + lane + d);
            }
            if (key < best) {
                best = key;
                nn = lane + d;
            }
            const uint64_t back = __shfl_up_sync(~0u, key, d);
            if (lane >= (uint32_t)d && back < best) {
                best = back;
                nn = lane - d;
            }
        }
        /* every lane shuffles (a shuffle behind && would run on some lanes
         * only, which the device stops or hangs on) */
        const uint32_t nn_of_nn = __shfl_sync(~0u, nn, nn);
        bool mutual = lane < c && nn != lane && nn_of_nn == lane;
        uint32_t makers = __ballot_sync(~0u, mutual && lane < nn);
        if (makers == 0) { /* cannot happen with distinct keys: pair neighbours */
            nn = (lane ^ 1u) < c ? lane ^ 1u : lane;
            mutual = lane < c && nn != lane;
            makers = __ballot_sync(~0u, mutual && lane < nn);
        }
        const float4 plo = shfl4(lo, nn), phi = shfl4(hi, nn);
        const uint32_t pid = __shfl_sync(~0u, id, nn);
        uint32_t base = 0;
        if (lane == 0)
            base = atomicAdd(counter, (uint32_t)__popc(makers));
        base = __shfl_sync(~0u, base, 0);
        if (makers >> lane & 1u) {
            const uint32_t made = base + __popc(makers & ((1u << lane) - 1u));
            const float3 ulo = make_float3(fminf(lo.x, plo.x), fminf(lo.y, plo.y),
                                           fminf(lo.z, plo.z));
            const float3 uhi = make_float3(fmaxf(hi.x, phi.x), fmaxf(hi.y, phi.y),
                                           fmaxf(hi.z, phi.z));
            const uint32_t count = __float_as_uint(lo.w) + __float_as_uint(plo.w);
            /* SAH constants of prism/bvh.h, as make_node */
            const float area = box_area(ulo, uhi);
            const float split = area + hi.w + phi.w, as_leaf = area * (float)count;
            const bool is_leaf = count <= max_leaf && as_leaf <= split;
            lo = make_float4(ulo.x, ulo.y, ulo.z, __uint_as_float(count));
            hi = make_float4(uhi.x, uhi.y, uhi.z, is_leaf ? as_leaf : split);
            node[2 * (size_t)made] = lo;
            node[2 * (size_t)made + 1] = hi;
            child[made - n] = make_uint2(id, pid);
            leaf[made] = is_leaf;
            id = made;
        }
        const bool keep = lane < c && !(mutual && lane > nn);
        __syncwarp();
        const uint32_t kept = __ballot_sync(~0u, keep);
        if (keep) {
            const uint32_t at = __popc(kept & ((1u << lane) - 1u));
            stage_lo[at] = lo;
            stage_hi[at] = hi;
            stage_id[at] = id;
        }
        __syncwarp();
        c = __popc(kept);
        if (lane < c) {
            lo = stage_lo[lane];
            hi = stage_hi[lane];
            id = stage_id[lane];
        }
        __syncwarp();
    }
    if (lane < c)
        hcl[L + lane] = id;
    if (lane == 0)
        hcnt[L] = (uint8_t)c;
    __syncwarp();
}

template <int RADIUS>
__global__ void __launch_bounds__(HPLOC_BLOCK)
    k_hploc(const uint64_t *keys, uint32_t n, uint32_t *parent, uint32_t *hcl, uint8_t *hcnt,
            float4 *node, uint2 *child, uint8_t *leaf, uint32_t max_leaf, uint32_t *counter)
{
    __shared__ float4 stage_lo[HPLOC_BLOCK], stage_hi[HPLOC_BLOCK];
    __shared__ uint32_t stage_id[HPLOC_BLOCK];
    const uint32_t w = threadIdx.x & ~31u;
    const uint32_t i = blockIdx.x * HPLOC_BLOCK + threadIdx.x;
    uint32_t lo = i, hi = i, split = 0;
    bool active = i < n;
    /* The warp-wide steps below start converged (__syncwarp), which also
     * orders what one lane wrote before another reads it. */
    for (;;) {
        __syncwarp();
        if (!__any_sync(~0u, active))
            break;
        if (active) {
            uint32_t prev;
            if (lo == 0 || (hi != n - 1 && split_less(keys, hi, lo - 1))) {
                prev = atomicExch(&parent[hi], lo); /* the parent is at our right end */
                if (prev != HPLOC_NONE) {
                    split = hi + 1;
                    hi = prev;
                }
            } else {
                prev = atomicExch(&parent[lo - 1], hi);
                if (prev != HPLOC_NONE) {
                    split = lo;
                    lo = prev;
                }
            }
            active = prev != HPLOC_NONE; /* first of the two: the other goes on */
        }
        /* No acquire fence: the sibling's clusters, counts and records are
         * read through L2 (__ldcg) at addresses that depend on what the
         * exchange returned, after the sibling's release below. */
        __syncwarp();
        const uint32_t size = hi - lo + 1;
        const bool root = active && size == n;
        const uint32_t todo = __ballot_sync(~0u, active && (size > HPLOC_HALF || root));
        for (int src = 0; src < 32; src++) {
            if (!(todo >> src & 1u))
                continue;
            __syncwarp();
            const uint32_t L = __shfl_sync(~0u, lo, src), S = __shfl_sync(~0u, split, src),
                           R = __shfl_sync(~0u, hi, src);
            hploc_merge<RADIUS>(L, S, R, R - L + 1 == n, n, hcl, hcnt, node, child, leaf, max_leaf,
                                counter, stage_lo + w, stage_hi + w, stage_id + w);
        }
        if (root)
            active = false;
        if (todo != 0)
            __threadfence(); /* what the merges wrote, before a lane hands its range on */
    }
}

/* The top-down over H-PLOC's tree, one launch a level: the nodes of
 * level `level` (list `in`, its length at cnt[level % 3]) pass offset,
 * depth and liveness to their children (down_one) and list the inner ones
 * for the next level (cnt[(level + 1) % 3], zeroed by the launch before);
 * this launch zeroes the counter the next one fills. A launch past the
 * last level finds a count of 0. */
__global__ void k_down_level(const uint32_t *in, uint32_t *out, uint32_t *cnt, uint32_t level,
                             float4 *node, const uint2 *child, const uint8_t *leaf, uint8_t *depth,
                             uint8_t *live, uint32_t n, uint32_t *max_depth)
{
    const uint32_t count = cnt[level % 3];
    if (blockIdx.x == 0 && threadIdx.x == 0)
        cnt[(level + 2) % 3] = 0;
    const uint32_t lane = threadIdx.x & 31, stride = gridDim.x * blockDim.x;
    uint32_t *next = &cnt[(level + 1) % 3];
    for (uint32_t base = blockIdx.x * blockDim.x + (threadIdx.x & ~31u); base < count;
         base += stride) {
        const uint32_t k = base + lane;
        uint2 ch = make_uint2(0, 0);
        if (k < count) {
            const uint32_t id = in[k];
            down_one(node, child, leaf, depth, live, id, n, max_depth);
            ch = child[id - n];
        }
        const bool a = k < count && ch.x >= n, b = k < count && ch.y >= n;
        const uint32_t ma = __ballot_sync(~0u, a), mb = __ballot_sync(~0u, b);
        uint32_t at = 0;
        if (lane == 0 && (ma | mb))
            at = atomicAdd(next, (uint32_t)(__popc(ma) + __popc(mb)));
        at = __shfl_sync(~0u, at, 0);
        const uint32_t below = (1u << lane) - 1u;
        if (a)
            out[at + __popc(ma & below)] = ch.x;
        if (b)
            out[at + __popc(ma) + __popc(mb & below)] = ch.y;
    }
}

/* Before the first level: the root's offset, depth and liveness, the
 * first list, its count, and the deepest live node so far. */
__global__ void k_down_start(uint32_t root, float4 *node, uint8_t *depth, uint8_t *live,
                             uint32_t *list, uint32_t *cnt, uint32_t *max_depth)
{
    node[2 * (size_t)root + 1].w = __uint_as_float(0u);
    depth[root] = 0;
    live[root] = 1;
    list[0] = root;
    cnt[0] = 1;
    cnt[1] = 0;
    *max_depth = 0;
}

/* ---- layout */

/* Triangles into leaf order: node i's first triangle is its record's hi.w. */
__global__ void k_triangles(const uint32_t *T, const uint32_t *order, const float4 *node,
                            uint32_t n, uint32_t *tri_out, uint32_t *ids)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const uint32_t t = order[i], at = __float_as_uint(node[2 * (size_t)i + 1].w);
    tri_out[3 * (size_t)at] = T[3 * (size_t)t];
    tri_out[3 * (size_t)at + 1] = T[3 * (size_t)t + 1];
    tri_out[3 * (size_t)at + 2] = T[3 * (size_t)t + 2];
    ids[at] = t;
}

/* The live-flag scan's input, read as it scans (no flags array). */
struct live_op {
    __device__ uint32_t operator()(uint8_t l) const { return l; }
};
typedef thrust::transform_iterator<live_op, const uint8_t *, uint32_t> live_iter;

/* The host's one read before the layout: the deepest live node (the
 * top-down's, already at small[7]) and the live count (the inclusive
 * scan's last) side by side. */
__global__ void k_count(const uint32_t *scan, uint32_t slots, uint32_t *small)
{
    small[8] = scan[slots - 1];
}

/* Live node id's sort key (depth, first triangle) at its rank among the
 * live nodes (the inclusive scan less one). */
__global__ void k_keys(const uint8_t *live, const uint32_t *scan, const uint8_t *depth,
                       const float4 *node, uint32_t count, uint64_t *keys, uint32_t *vals)
{
    const uint32_t id = blockIdx.x * blockDim.x + threadIdx.x;
    if (id >= count || !live[id])
        return;
    const uint32_t at = scan[id] - 1;
    keys[at] = (uint64_t)depth[id] << 32 | __float_as_uint(node[2 * (size_t)id + 1].w);
    vals[at] = id;
}

__device__ __forceinline__ uint32_t out_index(uint32_t p, uint32_t pad)
{
    return p == 0 ? 0 : p + pad;
}

/* Where an inner node's children are, without a position per node id: in
 * the sorted order (depth, then first triangle) the nodes one level down
 * are the children of this level's inner nodes, in their order, siblings
 * together (a parent's range holds its children's, ranges of one level
 * are disjoint). So the k-th inner node of the whole order (from 0) has
 * its children at sorted positions 2k + 1 and 2k + 2: output 2k + 2 and
 * 2k + 3, node 1 being the padding. One inclusive scan over the sorted
 * ids gives each position (inner nodes up to it, its id): the id carried
 * along, since the sort's ids sit in the node array k_layout overwrites. */
struct rank_in {
    const uint8_t *leaf;
    __device__ uint64_t operator()(uint32_t id) const
    {
        return (uint64_t)(leaf[id] ? 0u : 1u) << 32 | id;
    }
};
typedef thrust::transform_iterator<rank_in, const uint32_t *, uint64_t> rank_iter;

/* (inner count, id): counts add, the later id stays; associative. */
struct rank_op {
    __device__ uint64_t operator()(uint64_t a, uint64_t b) const
    {
        return ((a >> 32) + (b >> 32)) << 32 | (b & 0xFFFFFFFFull);
    }
};

struct max_op {
    __device__ unsigned operator()(unsigned a, unsigned b) const { return a > b ? a : b; }
};

typedef struct layout_stats {
    double sah;
    unsigned long long leaves;
    uint32_t max_leaf;
    float root[6]; /* the root's box (the scene's), read back with the figures */
} layout_stats;

/* 1 / the root's surface area, as the host computed it once it had read
 * the root back: IEEE single operations in the host's order (the _rn
 * intrinsics are neither contracted nor approximated). */
__device__ __forceinline__ float inv_area_rn(float4 lo, float4 hi)
{
    const float dx = __fsub_rn(hi.x, lo.x), dy = __fsub_rn(hi.y, lo.y), dz = __fsub_rn(hi.z, lo.z);
    const float a = __fadd_rn(__fadd_rn(__fmul_rn(dx, dy), __fmul_rn(dy, dz)), __fmul_rn(dz, dx));
    return a > 0.0f ? __fdiv_rn(1.0f, a) : 0.0f;
}

__global__ void k_layout(const uint64_t *ranked, uint32_t m, uint32_t pad, const float4 *node,
                         const uint8_t *leaf, uint32_t root, prism_bvh_node *out,
                         layout_stats *stats)
{
    const uint32_t p = blockIdx.x * blockDim.x + threadIdx.x;
    double term = 0.0;
    unsigned leaves = 0;
    uint32_t big = 0;
    if (p < m) {
        const float inv_root_area = inv_area_rn(node[2 * (size_t)root], node[2 * (size_t)root + 1]);
        const uint64_t rank = ranked[p];
        const uint32_t id = (uint32_t)rank;
        const float4 lo = node[2 * (size_t)id], hi = node[2 * (size_t)id + 1];
        prism_bvh_node r;
        r.lo[0] = lo.x, r.lo[1] = lo.y, r.lo[2] = lo.z;
        r.hi[0] = hi.x, r.hi[1] = hi.y, r.hi[2] = hi.z;
        const uint32_t count = __float_as_uint(lo.w);
        if (leaf[id]) {
            r.first = __float_as_uint(hi.w);
            r.count = count;
            leaves = 1;
            big = count;
        } else { /* the (rank >> 32)-th inner node, counting from 1 (rank_in) */
            r.first = 2 * (uint32_t)(rank >> 32);
            r.count = 0;
        }
        const float w = inv_root_area > 0.0f ? box_area(make_float3(lo.x, lo.y, lo.z),
                                                        make_float3(hi.x, hi.y, hi.z)) *
                                                   inv_root_area
                                             : 1.0f;
        term = (double)w * (leaf[id] ? (double)count : 1.0);
        out[out_index(p, pad)] = r;
        if (p == 0)
            for (int k = 0; k < 3; k++)
                stats->root[k] = r.lo[k], stats->root[3 + k] = r.hi[k];
        if (p == 0 && pad) { /* node 1: the padding node of prism/bvh.h */
            prism_bvh_node e;
            e.lo[0] = e.lo[1] = e.lo[2] = FLT_MAX;
            e.hi[0] = e.hi[1] = e.hi[2] = -FLT_MAX;
            e.first = e.count = 0;
            out[1] = e;
        }
    }
    typedef cub::BlockReduce<double, BLOCK> reduce_d;
    typedef cub::BlockReduce<unsigned, BLOCK> reduce_u;
    __shared__ union {
        typename reduce_d::TempStorage d;
        typename reduce_u::TempStorage u;
    } tmp;
    const double sum = reduce_d(tmp.d).Sum(term);
    __syncthreads();
    const unsigned nleaves = reduce_u(tmp.u).Sum(leaves);
    __syncthreads();
    const unsigned most = reduce_u(tmp.u).Reduce(big, max_op());
    if (threadIdx.x == 0) {
        atomicAdd(&stats->sah, sum);
        atomicAdd(&stats->leaves, (unsigned long long)nleaves);
        atomicMax(&stats->max_leaf, most);
    }
}

__global__ void k_gather16(const uint4 *src, const uint32_t *ids, uint32_t n, uint4 *dst)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        dst[i] = src[ids[i]];
}

/* ---- the host side */

/* The arena's parts for n triangles, m2 = 2n node slots, and where each
 * phase keeps what it needs. Besides the arena the builder holds its
 * outputs from the start: the leaf-order triangles (12n bytes) and ids
 * (4n), which it fills in the layout (k_triangles) and lends out before, and
 * the node array (32 bytes a node, made once the live count is known),
 * where the layout's sort runs before k_layout fills it.
 *
 *   arena, kept:  node records 32 m2, leaf, live, depth 1 m2 each (depth
 *                 saturating at 255), child 8n (internal nodes only; to
 *                 the top-down), order 4n (Morton-sorted triangles:
 *                 k_leaves, k_triangles); a node's leaf-order offset lives
 *                 in its record's hi.w, the SAH cost it replaces being dead
 *                 by the top-down.
 *   arena, s:     codes/sort: the keys' second buffer (8n);
 *                 hierarchy: the cluster-id double buffer (2 x 4n);
 *                 layout: the live scan (4 slots).
 *   child..s:     layout: the ranked ids (8m <= 16n of the 20n).
 *   triangles:    codes/sort: the keys' first buffer (8n);
 *                 hierarchy: the scan (8n) and nearest neighbours (4n).
 *   ids:          codes/sort: the triangle ids' second buffer (4n).
 *   nodes:        layout: the sort's keys and ids, double (24m <= 32m).
 *   H-PLOC:       the sorted codes stay where the sort left them (the
 *                 triangles output or s), its clusters (4n) and their
 *                 counts (n) go to the other, the parents' slots (4n) to
 *                 ids; its top-down's two level lists (2 x 4n) to the
 *                 triangles output. No more than the passes hold.
 *   constant:     the tail's box double buffer, pass records, CUB's
 *                 scratch (its largest single use; every use is in stream
 *                 order), small words, a small-tree sort region.
 *
 * Bytes per triangle (n triangles, m final nodes; the arena is held
 * whole from start to end, so its size and the outputs make the peak):
 *                  live before   live now
 *   codes, sort        24n          24n      keys, ids (double)
 *   hierarchy         180n         102n      records, children, order,
 *                                            clusters, scan, neighbours
 *   optimisation      104n          82n
 *   layout     136n + 56m         106n + 32m    the sort in the node
 *                                            array, its ranks in child..s
 *   held     204n + 32m + temp   106n + 32m + temp (+ 0.33 MB constant)
 * where before held order 8n, cluster boxes 64n (double), scan scratch
 * 16n, records 64n, children 16n, leaf 2n, offsets 8n, depths 8n, live
 * 2n and the outputs 16n. Peak over the node array (32m bytes; m is about
 * n on a detector, whose leaves hold two triangles on average): 7.4
 * before, 4.3 now. What is left is the records (64n: every node's box,
 * count and cost, as the clustering and then the layout read them), the
 * node array and the outputs. Dropping the triangles' records (32n of
 * the 64n, their boxes read from the vertices wherever a cluster or a
 * leaf is a triangle, as the window search's tiles would for most
 * clusters of the early, costly passes) would still leave about 3.4. */
typedef struct arena {
    size_t node, child, leaf, live, depth, order, s, boxes, tail, lsort, temp, small, total;
} arena;

/* The layout sort's keys and ids for m nodes, double buffered. */
static size_t sort_bytes(size_t m)
{
    return 2 * prism__cuda_align(8 * m) + 2 * prism__cuda_align(4 * m);
}

/* Below this many final nodes the sort may not fit in the node array
 * (24m + alignment > 32m): it runs in the arena's lsort instead. */
#define LAYOUT_SMALL 128

static size_t cub_temp_bytes(size_t n, cudaStream_t s)
{
    size_t a = 0, b = 0, c = 0, d = 0;
    cub::DoubleBuffer<uint64_t> k(NULL, NULL);
    cub::DoubleBuffer<uint32_t> v(NULL, NULL);
    cub::DeviceRadixSort::SortPairs(NULL, a, k, v, (int)(2 * n), 0, 64, s);
    flag_iter flags(thrust::counting_iterator<uint32_t>(0), flag_op{NULL, NULL});
    cub::DeviceScan::InclusiveSum(NULL, b, flags, (uint64_t *)NULL, (int)n, s);
    live_iter live((const uint8_t *)NULL, live_op());
    cub::DeviceScan::InclusiveSum(NULL, c, live, (uint32_t *)NULL, (int)(2 * n), s);
    rank_iter ranks((const uint32_t *)NULL, rank_in{NULL});
    cub::DeviceScan::InclusiveScan(NULL, d, ranks, (uint64_t *)NULL, rank_op(), (int)(2 * n), s);
    a = a > b ? a : b;
    c = c > d ? c : d;
    return a > c ? a : c;
}

static arena plan_arena(size_t n, size_t temp)
{
    n = n ? n : 1;
    const size_t m2 = 2 * n;
    arena a;
    size_t at = 0;
#define PART(field, bytes) (a.field = at, at += prism__cuda_align(bytes))
    /* small, in 32-bit words: [0,6) bounds, 6 the bad triangle, 7 the
     * depth, 8 the live count, [24,36) the layout's figures, 48 the
     * tail's, 64 the passes' states and their records */
    PART(node, 32 * m2);
    PART(leaf, m2);
    PART(live, m2);
    PART(depth, m2);
    /* child, order and s in a row: the layout's ranked ids (8 bytes a
     * final node, m < m2) span them once the three are dead */
    PART(child, 8 * n);
    PART(order, 4 * n);
    const size_t s_sort = 8 * n, s_ploc = 2 * prism__cuda_align(4 * n), s_layout = 4 * m2;
    const size_t s = s_sort > s_ploc ? s_sort : s_ploc;
    PART(s, s > s_layout ? s : s_layout);
    PART(boxes, 2 * 32 * (size_t)TAIL_MAX);
    PART(tail, 8 * TAIL_PASSES);
    PART(lsort, sort_bytes(LAYOUT_SMALL));
    PART(temp, temp);
    PART(small, 512);
#undef PART
    a.total = at;
    return a;
}

extern "C" size_t prism__cuda_bvh_bytes(size_t n)
{
    /* the arena with a generous figure for CUB's scratch, the outputs (the
     * node array at its most: 2n - 1 nodes and the padding) */
    return plan_arena(n, 24 * n + ((size_t)4 << 20)).total + 16 * n + 32 * (2 * n + 1);
}

static double wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A pass of the hierarchy: which node ids it made. */
typedef struct pass {
    uint32_t first, count;
} pass;

typedef struct builder {
    prism_context *ctx;
    cudaStream_t s;
    const float *V;
    const uint32_t *T;
    uint32_t nv, n, max_leaf;
    arena a;
    char *base;
    prism_buffer *mem;
    uint32_t *order; /* the Morton-sorted triangles */
    float4 *node;
    uint2 *child;
    uint8_t *leaf, *live, *depth;
    uint32_t *scratch; /* the arena's s */
    uint32_t *tri_out; /* the triangles output, lent out until k_triangles */
    uint32_t *ids_out; /* the ids output, likewise */
    void *temp;
    size_t temp_bytes;
    uint32_t *small; /* bounds[6], bad, max_depth, host-readable totals */
    pass *passes;
    size_t pass_count, pass_cap;
    uint32_t root;
    uint32_t tail_passes, tail_max;
    bool trace; /* where the hierarchy's time goes (desc.trace's BVH bit) */
    int radius;
    bool use_hploc;       /* settings->hploc: H-PLOC's one launch, not PLOC's passes */
    bool hploc;           /* this attempt's hierarchy was H-PLOC's (its top-down by levels) */
    const uint64_t *keys; /* the sorted Morton codes (H-PLOC climbs their radix tree) */
    cudaEvent_t ev[PRISM_BVH_PHASES + 1];
} builder;

static prism_result cuda_fail(builder *b, cudaError_t e, const char *what)
{
    return prism__cuda_error(b->ctx, e, "bvh(cuda)", what);
}

#define CK(call, what)                                                                             \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess)                                                                     \
            return cuda_fail(b, e_, what);                                                         \
    } while (0)

static unsigned grid(size_t n)
{
    return prism__cuda_blocks(n, BLOCK);
}

/* grid(n), but at most per_sm blocks an SM: for grid-stride kernels. */
static unsigned grid_capped(size_t n, unsigned per_sm)
{
    int sms = 1, dev = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    const unsigned blocks = grid(n), cap = (unsigned)sms * per_sm;
    return blocks < cap ? blocks : cap;
}

/* codes: check the input (read back later), centroid bounds, Morton codes
 * (the frame made on the device from the bounds: no host round trip). */
static prism_result phase_codes(builder *b, uint64_t *keys, uint32_t *vals)
{
    uint32_t init[8] = {UINT32_MAX, UINT32_MAX, UINT32_MAX, 0, 0, 0, UINT32_MAX, 0};
    CK(cudaMemcpyAsync(b->small, init, sizeof init, cudaMemcpyHostToDevice, b->s), "bounds");
    k_bounds<<<grid_capped(b->n, 8), BLOCK, 0, b->s>>>(b->V, b->nv, b->T, b->n, b->small,
                                                       b->small + 6);
    k_codes<<<grid(b->n), BLOCK, 0, b->s>>>(b->V, b->nv, b->T, b->n, b->small, keys, vals);
    CK(cudaGetLastError(), "codes");
    return PRISM_SUCCESS;
}

/* The input check's answer, first bad triangle t: why it is bad. */
static prism_result input_error(builder *b, uint32_t t)
{
    uint32_t idx[3];
    float v[9];
    CK(cudaMemcpy(idx, b->T + 3 * (size_t)t, sizeof idx, cudaMemcpyDefault), "input check");
    for (int k = 0; k < 3; k++)
        if (idx[k] >= b->nv)
            return prism__error(b->ctx, PRISM_ERROR_INVALID_ARGUMENT,
                                "bvh(cuda): triangle %u: vertex index %u >= vertex count %u", t,
                                idx[k], b->nv);
    for (int k = 0; k < 3; k++)
        CK(cudaMemcpy(v + 3 * k, b->V + 3 * (size_t)idx[k], 12, cudaMemcpyDefault), "input check");
    for (int k = 0; k < 3; k++)
        if (!isfinite(v[3 * k]) || !isfinite(v[3 * k + 1]) || !isfinite(v[3 * k + 2]))
            return prism__error(b->ctx, PRISM_ERROR_INVALID_ARGUMENT,
                                "bvh(cuda): triangle %u: vertex %u has a non-finite coordinate", t,
                                idx[k]);
    return prism__error(b->ctx, PRISM_ERROR_INVALID_ARGUMENT, "bvh(cuda): triangle %u is bad", t);
}

static prism_result phase_sort(builder *b)
{
    uint32_t *order = (uint32_t *)(b->base + b->a.order);
    cub::DoubleBuffer<uint64_t> k((uint64_t *)b->tri_out, (uint64_t *)b->scratch);
    cub::DoubleBuffer<uint32_t> v(order, b->ids_out);
    size_t bytes = b->temp_bytes;
    CK(cub::DeviceRadixSort::SortPairs(b->temp, bytes, k, v, (int)b->n, 0, 63, b->s), "sort");
    b->keys = k.Current();
    /* the ids output is lent out again by the layout: the order lives in the arena */
    if (v.Current() != order)
        CK(cudaMemcpyAsync(order, v.Current(), 4 * (size_t)b->n, cudaMemcpyDeviceToDevice, b->s),
           "sort");
    b->order = order;
    return PRISM_SUCCESS;
}

static prism_result add_pass(builder *b, uint32_t first, uint32_t count)
{
    if (b->pass_count == b->pass_cap) {
        size_t cap = b->pass_cap ? 2 * b->pass_cap : 64;
        pass *p = (pass *)realloc(b->passes, cap * sizeof *p);
        if (!p)
            return prism__error(b->ctx, PRISM_ERROR_OUT_OF_MEMORY, "bvh(cuda): out of host memory");
        b->passes = p;
        b->pass_cap = cap;
    }
    b->passes[b->pass_count++] = (pass){first, count};
    return PRISM_SUCCESS;
}

/* hierarchy: leaves, then PLOC passes (or, balanced, neighbour pairs):
 * launched one by one while more than TAIL_MAX clusters are left, then
 * the tail kernel finishes the tree and its top. A pass is three
 * launches: the window search, the scan (which makes the flags as it
 * reads them) and the merge (which also advances the state). */
static prism_result phase_hploc(builder *b);

static prism_result phase_hierarchy(builder *b, bool balanced)
{
    b->hploc = !balanced && b->use_hploc && b->n >= 2;
    if (b->hploc)
        return phase_hploc(b);
    uint32_t *cl[2] = {b->scratch, b->scratch + prism__cuda_align(4 * (size_t)b->n) / 4};
    uint64_t *packed = (uint64_t *)b->tri_out;
    uint32_t *nn = b->tri_out + 2 * (size_t)b->n;
    pass_block *pb = (pass_block *)(b->small + 64);
    k_leaves<<<grid(b->n), BLOCK, 0, b->s>>>(b->V, b->nv, b->T, b->n, b->order, b->node, b->leaf,
                                             cl[0]);
    CK(cudaGetLastError(), "leaves");
    b->pass_count = 0;
    pass_block got;
    memset(&got, 0, sizeof got);
    got.st[0] = (pass_state){b->n, b->n, (uint32_t)balanced, 0};
    CK(cudaMemcpyAsync(&pb->st[0], &got.st[0], sizeof got.st[0], cudaMemcpyHostToDevice, b->s),
       "passes");
    int cur = 0;
    const double t_passes = wall();
    /* PASS_BATCH passes between host reads: the count shrinks by a fifth
     * to a third a pass, so the later ones of a batch run over a stale,
     * larger bound (their threads beyond the count return at once) */
    for (uint32_t bound = b->n; bound > b->tail_max; bound = got.st[0].c) {
        for (int k = 0; k < PASS_BATCH; k++) {
            const pass_state *in = &pb->st[k & 1];
            if (b->radius == PLOC_SMALL)
                k_nearest<PLOC_SMALL><<<grid(bound), BLOCK, 0, b->s>>>(cl[cur], b->node, in, nn);
            else
                k_nearest<PLOC_RADIUS><<<grid(bound), BLOCK, 0, b->s>>>(cl[cur], b->node, in, nn);
            flag_iter flags(thrust::counting_iterator<uint32_t>(0), flag_op{nn, in});
            size_t bytes = b->temp_bytes;
            CK(cub::DeviceScan::InclusiveSum(b->temp, bytes, flags, packed, (int)bound, b->s),
               "scan");
            k_merge<<<grid(bound), BLOCK, 0, b->s>>>(cl[cur], in, &pb->st[(k + 1) & 1], pb->records,
                                                     nn, packed, cl[cur ^ 1], b->node, b->child,
                                                     b->leaf, b->n, b->max_leaf);
            cur ^= 1;
        }
        CK(cudaMemcpyAsync(&got, pb, sizeof got, cudaMemcpyDeviceToHost, b->s), "passes");
        CK(cudaMemsetAsync(&pb->st[0].records, 0, 4, b->s), "passes");
        CK(cudaStreamSynchronize(b->s), "clustering passes");
        for (uint32_t k = 0; k < got.st[0].records; k++) {
            prism_result r = add_pass(b, got.records[k].x, got.records[k].y);
            if (r != PRISM_SUCCESS)
                return r;
        }
    }
    const uint32_t c = got.st[0].c, next = got.st[0].next;
    const int pairs = (int)got.st[0].pairs;
    tail_out *to = (tail_out *)(b->small + 48), tail;
    const double t_tail = wall();
    CK(cudaMemsetAsync(b->small + 7, 0, 4, b->s), "tail"); /* the deepest live node */
    (b->radius == PLOC_SMALL ? k_tail<PLOC_SMALL>
                             : k_tail<PLOC_RADIUS>)<<<1, TAIL_THREADS, 0, b->s>>>(
        cl[cur], (float4 *)(b->base + b->a.boxes), c, next, nn, b->node, b->child, b->leaf, b->n,
        b->max_leaf, pairs, (uint2 *)(b->base + b->a.tail), TAIL_PASSES, b->depth, b->live,
        b->small + 7, b->small + 6, to);
    CK(cudaMemcpyAsync(&tail, to, sizeof tail, cudaMemcpyDeviceToHost, b->s), "tail");
    CK(cudaStreamSynchronize(b->s), "tail");
    if (tail.bad != UINT32_MAX)
        return input_error(b, tail.bad);
    b->root = tail.root;
    b->tail_passes = tail.passes;
    if (b->trace)
        prism__log(b->ctx, PRISM_LOG_DEBUG,
                   "bvh(cuda): %zu passes from %u clusters down to %u: %.3f ms; "
                   "%u passes in the tail kernel: %.3f ms",
                   b->pass_count, b->n, c, (t_tail - t_passes) * 1e3, tail.passes,
                   (wall() - t_tail) * 1e3);
    return PRISM_SUCCESS;
}

/* hierarchy in one launch (H-PLOC, above), after the leaves, the parents'
 * slots emptied and the node counter at n; then the node count and the
 * input check's answer read back together. The sorted codes are in the
 * triangles output or in s (the sort's two buffers): the clusters and
 * their counts go to the other one, the parents' slots to the ids output
 * (both lent out until the layout). */
static prism_result phase_hploc(builder *b)
{
    const size_t n = b->n;
    char *other = (const void *)b->keys == (const void *)b->tri_out ? (char *)b->scratch
                                                                    : (char *)b->tri_out;
    uint32_t *hcl = (uint32_t *)other, *parent = b->ids_out, *counter = b->small + 96;
    uint8_t *hcnt = (uint8_t *)other + 4 * n;
    const uint32_t first = b->n;
    k_leaves<<<grid(n), BLOCK, 0, b->s>>>(b->V, b->nv, b->T, b->n, b->order, b->node, b->leaf, hcl);
    CK(cudaMemsetAsync(parent, 0xFF, 4 * n, b->s), "H-PLOC");
    CK(cudaMemcpyAsync(counter, &first, 4, cudaMemcpyHostToDevice, b->s), "H-PLOC");
    const double t0 = wall();
    const unsigned blocks = prism__cuda_blocks(n, HPLOC_BLOCK);
    if (b->radius == PLOC_SMALL)
        k_hploc<PLOC_SMALL><<<blocks, HPLOC_BLOCK, 0, b->s>>>(b->keys, b->n, parent, hcl, hcnt,
                                                              b->node, b->child, b->leaf,
                                                              b->max_leaf, counter);
    else
        k_hploc<PLOC_RADIUS><<<blocks, HPLOC_BLOCK, 0, b->s>>>(b->keys, b->n, parent, hcl, hcnt,
                                                               b->node, b->child, b->leaf,
                                                               b->max_leaf, counter);
    CK(cudaGetLastError(), "H-PLOC");
    uint32_t got[128];
    CK(cudaMemcpyAsync(got, b->small, sizeof got, cudaMemcpyDeviceToHost, b->s), "H-PLOC");
    CK(cudaStreamSynchronize(b->s), "H-PLOC");
    if (got[6] != UINT32_MAX)
        return input_error(b, got[6]);
    if (got[96] != 2 * b->n - 1)
        return prism__error(b->ctx, PRISM_ERROR_CUDA,
                            "bvh(cuda): H-PLOC made %u nodes of %u triangles, not %u", got[96],
                            b->n, 2 * b->n - 1);
    b->root = 2 * b->n - 2;
    b->pass_count = 0;
    b->tail_passes = 1;
    if (b->trace)
        prism__log(b->ctx, PRISM_LOG_DEBUG, "bvh(cuda): H-PLOC over %u triangles: %.3f ms", b->n,
                   (wall() - t0) * 1e3);
    return PRISM_SUCCESS;
}

/* optimisation for H-PLOC's tree: level by level from the root, lists of
 * the inner nodes in the triangles output (dead until the layout), host
 * reads only to see whether the last level has been passed (after 64
 * launches, then every 32). Past 255 levels the tree is too deep to keep
 * (depths saturate there): the deepest live node is set to 255, which
 * sends the build to the balanced tree. */
static prism_result phase_down_levels(builder *b)
{
    uint32_t *list[2] = {b->tri_out, b->tri_out + (size_t)b->n};
    uint32_t *cnt = b->small + 97, *dmax = b->small + 7;
    k_down_start<<<1, 1, 0, b->s>>>(b->root, b->node, b->depth, b->live, list[0], cnt, dmax);
    const unsigned blocks = grid_capped(b->n, 4);
    uint32_t level = 0;
    for (uint32_t batch = 64;; batch = 32) {
        for (uint32_t k = 0; k < batch; k++, level++)
            k_down_level<<<blocks, BLOCK, 0, b->s>>>(list[level & 1], list[(level + 1) & 1], cnt,
                                                     level, b->node, b->child, b->leaf, b->depth,
                                                     b->live, b->n, dmax);
        CK(cudaGetLastError(), "top-down");
        uint32_t left = 0;
        CK(cudaMemcpyAsync(&left, cnt + level % 3, 4, cudaMemcpyDeviceToHost, b->s), "top-down");
        CK(cudaStreamSynchronize(b->s), "top-down");
        if (left == 0)
            break;
        if (level >= 255) {
            const uint32_t deep = 255;
            CK(cudaMemcpyAsync(dmax, &deep, 4, cudaMemcpyHostToDevice, b->s), "top-down");
            CK(cudaStreamSynchronize(b->s), "top-down");
            break;
        }
    }
    if (b->trace)
        prism__log(b->ctx, PRISM_LOG_DEBUG, "bvh(cuda): H-PLOC's top-down: %u level launches",
                   level);
    return PRISM_SUCCESS;
}

/* optimisation: depth, leaf-order offset and liveness, top-down, for the
 * passes before the tail (the tail kernel did its own). The deepest live
 * node is read back with the live count (phase_count). */
static prism_result phase_down(builder *b)
{
    if (b->hploc)
        return phase_down_levels(b);
    uint32_t *dmax = b->small + 7;
    for (size_t k = b->pass_count; k-- > 0;) {
        const pass p = b->passes[k];
        k_down<<<grid(p.count), BLOCK, 0, b->s>>>(b->node, b->child, b->leaf, b->depth, b->live,
                                                  p.first, p.count, b->n, dmax);
    }
    CK(cudaGetLastError(), "top-down");
    return PRISM_SUCCESS;
}

/* The live nodes' ranks (inclusive scan into s), and in one host read the
 * live count and the deepest live node. */
static prism_result phase_count(builder *b, uint32_t *max_depth, uint32_t *m)
{
    const uint32_t slots = b->root + 1;
    live_iter in(b->live, live_op());
    size_t bytes = b->temp_bytes;
    CK(cub::DeviceScan::InclusiveSum(b->temp, bytes, in, b->scratch, (int)slots, b->s),
       "layout scan");
    k_count<<<1, 1, 0, b->s>>>(b->scratch, slots, b->small);
    uint32_t got[2];
    CK(cudaMemcpyAsync(got, b->small + 7, sizeof got, cudaMemcpyDeviceToHost, b->s), "layout");
    CK(cudaStreamSynchronize(b->s), "layout");
    *max_depth = got[0];
    *m = got[1];
    return PRISM_SUCCESS;
}

/* layout: the triangles into leaf order (first, so that they run while
 * the host makes the node array); the final nodes sorted into
 * breadth-first order, ranked, and written. */
static prism_result phase_layout(builder *b, prism__device_bvh *out, uint32_t max_depth, uint32_t m)
{
    const uint32_t slots = b->root + 1, pad = m > 1;
    k_triangles<<<grid(b->n), BLOCK, 0, b->s>>>(b->T, b->order, b->node, b->n, b->tri_out,
                                                b->ids_out);
    CK(cudaGetLastError(), "layout");
    out->node_count = m + pad;
    const size_t node_bytes = out->node_count * sizeof(prism_bvh_node);
    prism_result r = prism_buffer_create_device(b->ctx, node_bytes, "bvh.nodes", &out->nodes);
    if (r != PRISM_SUCCESS)
        return r;
    prism_bvh_node *nodes = (prism_bvh_node *)prism_buffer_device_pointer(out->nodes);
    char *ks = sort_bytes(m) <= node_bytes ? (char *)nodes : b->base + b->a.lsort;
    uint64_t *keys = (uint64_t *)ks;
    uint32_t *vals = (uint32_t *)(ks + 2 * prism__cuda_align(8 * (size_t)m));
    k_keys<<<grid(slots), BLOCK, 0, b->s>>>(b->live, b->scratch, b->depth, b->node, slots, keys,
                                            vals);
    int bits = 32;
    while (bits < 64 && (1ull << (bits - 32)) <= max_depth)
        bits++;
    cub::DoubleBuffer<uint64_t> k(keys, (uint64_t *)(ks + prism__cuda_align(8 * (size_t)m)));
    cub::DoubleBuffer<uint32_t> v(vals, vals + prism__cuda_align(4 * (size_t)m) / 4);
    size_t bytes = b->temp_bytes;
    CK(cub::DeviceRadixSort::SortPairs(b->temp, bytes, k, v, (int)m, 0, bits, b->s), "layout sort");
    /* child, order and s, all dead now, in a row (plan_arena) */
    uint64_t *ranked = (uint64_t *)(b->base + b->a.child);
    rank_iter ranks(v.Current(), rank_in{b->leaf});
    bytes = b->temp_bytes;
    CK(cub::DeviceScan::InclusiveScan(b->temp, bytes, ranks, ranked, rank_op(), (int)m, b->s),
       "layout rank");
    layout_stats *st = (layout_stats *)(b->small + 24);
    CK(cudaMemsetAsync(st, 0, sizeof *st, b->s), "layout");
    k_layout<<<grid(m), BLOCK, 0, b->s>>>(ranked, m, pad, b->node, b->leaf, b->root, nodes, st);
    CK(cudaGetLastError(), "layout");
    static_assert(24 * 4 + sizeof(layout_stats) <= 48 * 4, "the layout's figures, the tail's");
    layout_stats got;
    CK(cudaMemcpyAsync(&got, st, sizeof got, cudaMemcpyDeviceToHost, b->s), "layout");
    CK(cudaEventRecord(b->ev[PRISM_BVH_PHASES], b->s), "layout");
    CK(cudaStreamSynchronize(b->s), "layout");
    for (int k = 0; k < 3; k++)
        out->bbox_lo[k] = got.root[k], out->bbox_hi[k] = got.root[3 + k];
    prism_bvh_stats *s = &out->report.stats;
    s->nodes = out->node_count;
    s->leaves = (size_t)got.leaves;
    s->max_depth = max_depth;
    s->max_leaf_triangles = got.max_leaf;
    s->mean_leaf_triangles = got.leaves ? (double)b->n / (double)got.leaves : 0.0;
    s->sah_cost = got.sah;
    s->node_bytes = node_bytes;
    s->vertex_bytes = (size_t)b->nv * 12;
    s->triangle_bytes = (size_t)b->n * 12;
    s->id_bytes = (size_t)b->n * 4;
    return PRISM_SUCCESS;
}

static prism_result run(builder *b, prism__device_bvh *out)
{
    prism_result r;
    CK(cudaEventRecord(b->ev[0], b->s), "events");
    if ((r = phase_codes(b, (uint64_t *)b->tri_out, (uint32_t *)(b->base + b->a.order))) !=
        PRISM_SUCCESS)
        return r;
    CK(cudaEventRecord(b->ev[1], b->s), "events");
    if ((r = phase_sort(b)) != PRISM_SUCCESS)
        return r;
    CK(cudaEventRecord(b->ev[2], b->s), "events");
    uint32_t max_depth = 0, m = 0;
    for (int balanced = 0; balanced < 2; balanced++) {
        if ((r = phase_hierarchy(b, balanced)) != PRISM_SUCCESS)
            return r;
        CK(cudaEventRecord(b->ev[3], b->s), "events");
        if ((r = phase_down(b)) != PRISM_SUCCESS)
            return r;
        CK(cudaEventRecord(b->ev[4], b->s), "events");
        if ((r = phase_count(b, &max_depth, &m)) != PRISM_SUCCESS)
            return r;
        out->report.iterations = (unsigned)(b->pass_count + b->tail_passes);
        out->report.balanced = balanced;
        out->report.hploc = b->hploc;
        if (max_depth <= PRISM_BVH_MAX_DEPTH)
            break;
        prism__log(b->ctx, PRISM_LOG_WARNING,
                   "bvh(cuda): the clustered tree is %u%s deep, beyond the traversal's %d: "
                   "a balanced tree over the Morton order instead",
                   max_depth, max_depth >= 255 ? " or more" : "", PRISM_BVH_MAX_DEPTH);
    }
    if ((r = phase_layout(b, out, max_depth, m)) != PRISM_SUCCESS)
        return r;
    for (int k = 0; k < PRISM_BVH_PHASES; k++) {
        float ms = 0;
        cudaEventElapsedTime(&ms, b->ev[k], b->ev[k + 1]);
        out->report.phase_seconds[k] = ms * 1e-3;
    }
    return PRISM_SUCCESS;
}

/* The empty BVH of prism/bvh.h: one node, count 0, first 0, lo > hi. */
static prism_result build_empty(prism_context *ctx, prism__device_bvh *out)
{
    prism_bvh_node e = {{FLT_MAX, FLT_MAX, FLT_MAX}, 0, {-FLT_MAX, -FLT_MAX, -FLT_MAX}, 0};
    prism_result r = prism_buffer_create_device(ctx, sizeof e, "bvh.nodes", &out->nodes);
    if (r == PRISM_SUCCESS)
        r = prism_buffer_write(out->nodes, 0, &e, sizeof e);
    out->node_count = 1;
    out->report.stats.nodes = 1;
    out->report.stats.node_bytes = sizeof e;
    for (int k = 0; k < 3; k++)
        out->bbox_lo[k] = FLT_MAX, out->bbox_hi[k] = -FLT_MAX;
    return r;
}

static void release_outputs(prism__device_bvh *out)
{
    prism_buffer_release(out->nodes);
    prism_buffer_release(out->triangles);
    prism_buffer_release(out->ids);
    out->nodes = out->triangles = out->ids = NULL;
}

extern "C" prism_result prism__cuda_bvh_build(prism_context *ctx, const float *vertices,
                                              uint32_t vertex_count, const uint32_t *triangles,
                                              uint32_t triangle_count,
                                              const prism__device_bvh_settings *settings,
                                              prism__device_bvh *out)
{
    memset(out, 0, sizeof *out);
    out->report.builder = PRISM_BVH_BUILDER_CUDA;
    const double t0 = wall();
    prism_result r = prism__cuda_bind(ctx);
    if (r != PRISM_SUCCESS)
        return r;
    if (triangle_count == 0) {
        r = build_empty(ctx, out);
        if (r != PRISM_SUCCESS)
            release_outputs(out);
        out->report.seconds = wall() - t0;
        return r;
    }
    builder bb = {0};
    builder *b = &bb;
    b->ctx = ctx;
    b->s = prism__cuda_stream_of(ctx);
    b->V = vertices;
    b->T = triangles;
    b->nv = vertex_count;
    b->n = triangle_count;
    b->max_leaf = settings->max_leaf_size ? settings->max_leaf_size : 4;
    b->trace = settings->trace;
    b->radius = settings->radius == PLOC_SMALL ? PLOC_SMALL : PLOC_RADIUS;
    b->use_hploc = settings->hploc;
    b->tail_max = settings->tail > 1 && settings->tail <= TAIL_MAX ? settings->tail : TAIL_MAX;
    b->temp_bytes = cub_temp_bytes(b->n, b->s);
    b->a = plan_arena(b->n, b->temp_bytes);
    for (int k = 0; k <= PRISM_BVH_PHASES; k++)
        if (cudaEventCreate(&b->ev[k]) != cudaSuccess)
            r = cuda_fail(b, cudaGetLastError(), "events");
    if (r == PRISM_SUCCESS)
        r = prism_buffer_create_device(ctx, b->a.total, "bvh.build", &b->mem);
    if (r == PRISM_SUCCESS)
        r = prism_buffer_create_device(ctx, (size_t)b->n * 12, "triangles", &out->triangles);
    if (r == PRISM_SUCCESS)
        r = prism_buffer_create_device(ctx, (size_t)b->n * 4, "triangle_ids", &out->ids);
    if (r == PRISM_SUCCESS) {
        b->base = (char *)prism_buffer_device_pointer(b->mem);
        b->node = (float4 *)(b->base + b->a.node);
        b->child = (uint2 *)(b->base + b->a.child);
        b->leaf = (uint8_t *)(b->base + b->a.leaf);
        b->depth = (uint8_t *)(b->base + b->a.depth);
        b->live = (uint8_t *)(b->base + b->a.live);
        b->scratch = (uint32_t *)(b->base + b->a.s);
        b->tri_out = (uint32_t *)prism_buffer_device_pointer(out->triangles);
        b->ids_out = (uint32_t *)prism_buffer_device_pointer(out->ids);
        b->temp = b->base + b->a.temp;
        b->small = (uint32_t *)(b->base + b->a.small);
        r = run(b, out);
    }
    /* nodes are allocated last, while the arena and the other outputs are
     * held: the peak */
    out->report.peak_device_bytes = b->a.total + (size_t)b->n * 16 + out->report.stats.node_bytes;
    prism_buffer_release(b->mem);
    for (int k = 0; k <= PRISM_BVH_PHASES; k++)
        if (b->ev[k])
            cudaEventDestroy(b->ev[k]);
    free(b->passes);
    if (r != PRISM_SUCCESS)
        release_outputs(out);
    out->report.seconds = wall() - t0;
    return r;
}

extern "C" prism_result prism__cuda_gather_info(prism_context *ctx, const void *src,
                                                const uint32_t *ids, uint32_t n, void *dst)
{
    prism_result r = prism__cuda_bind(ctx);
    if (r != PRISM_SUCCESS || n == 0)
        return r;
    k_gather16<<<grid(n), BLOCK, 0, prism__cuda_stream_of(ctx)>>>((const uint4 *)src, ids, n,
                                                                  (uint4 *)dst);
    return prism__cuda_finish(ctx, "upload: triangle codes into leaf order");
}
