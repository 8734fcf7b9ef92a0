/* The collapse of the device-built binary BVH into the wide layout
 * (prism/device/bvh_wide.h), on the device: the binary nodes, triangles and
 * vertices are read where the upload put them, and only a few counts a
 * level cross PCIe (DESIGN decision 9).
 *
 * The host collapse (geometry/bvh/wide.c) is one pass over a breadth-first
 * queue. Its nodes are in level order, each level's in the order of their
 * parents and, under one parent, of the slots; its triangles are in node
 * order. So, level by level, an exclusive scan of each node's (inner
 * children, leaf triangles) gives every node the child_base and tri_base
 * the host would have given it, and the per-node work is the host's own
 * (geometry/bvh/collapse.h, compiled here without contraction or flushing):
 * the device writes the host's bytes.
 *
 * Per level [first, first + count) of the queue:
 *   count:  each node's children opened; (inner << 32 | triangles);
 *   scan:   CUB inclusive sum; the level's totals read back (one sync);
 *   place:  each node's bases, and its inner children queued at
 *           child_base + rank.
 * Then, the node count known, the caller places the outputs and one
 * launch writes every node and copies its leaves' triangles. Each node is
 * opened three times (count, place, write): cheaper than keeping 8 items a
 * node of scratch, which is what the mapped placement has least of. */
#include <stdint.h>
#include <string.h>

#include <cub/device/device_scan.cuh>
#include <cuda_runtime_api.h>

extern "C" {
#include "engine/context_internal.h"
#include "engine/launch/kernel_state.h"
}
#include "geometry/bvh/collapse.h"
#include "build.h"
#include "engine/cuda/launch.h"

#define BLOCK 128

enum { BAD_CHILD = 1, BAD_LEAF = 2 };

__global__ void k_root(prism__wide_source src, prism__wide_item *q)
{
    q[0] = prism__wide_item_of(&src, 0, 0);
}

__global__ void k_count(prism__wide_source src, const prism__wide_item *q, uint32_t first,
                        uint32_t count, uint32_t triangles, unsigned long long *sums, uint32_t *bad)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count)
        return;
    prism__wide_item list[8];
    const int n = prism__wide_open(&src, &q[first + i], list);
    if (n < 0) {
        atomicOr(bad, BAD_CHILD);
        sums[i] = 0;
        return;
    }
    unsigned long long inner = 0, tris = 0;
    for (int j = 0; j < n; j++) {
        if (list[j].kind != PRISM__WIDE_INNER && (uint64_t)list[j].ref + list[j].count > triangles)
            atomicOr(bad, BAD_LEAF);
        if (list[j].kind == PRISM__WIDE_LEAF)
            tris += list[j].count;
        else
            inner++;
    }
    sums[i] = inner << 32 | tris;
}

/* sums: inclusive. next: the first node of the next level; tri_first: the
 * level's first triangle. */
__global__ void k_place(prism__wide_source src, prism__wide_item *q, uint32_t first, uint32_t count,
                        const unsigned long long *sums, uint32_t next, uint32_t tri_first,
                        uint32_t depth, uint2 *base)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count)
        return;
    const unsigned long long before = i ? sums[i - 1] : 0;
    const uint32_t child_base = next + (uint32_t)(before >> 32);
    const uint32_t tri_base = tri_first + (uint32_t)before;
    base[first + i] = make_uint2(child_base, tri_base);
    prism__wide_item list[8];
    int by_slot[8];
    prism_wide_node w;
    if (prism__wide_node(&src, &q[first + i], child_base, tri_base, &w, list, by_slot) < 0)
        return; /* flagged by k_count */
    for (int s = 0; s < 8; s++)
        if (w.imask >> s & 1) {
            prism__wide_item it = list[by_slot[s]];
            it.depth = depth + 1;
            q[child_base + w.meta[s] - 1] = it;
        }
}

/* Every node, and its leaves' triangles. */
__global__ void k_write(prism__wide_source src, const prism__wide_item *q, const uint2 *base,
                        uint32_t count, const uint32_t *T, const float *V, uint4 *nodes,
                        prism_wide_triangle *tris)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count)
        return;
    prism__wide_item list[8];
    int by_slot[8];
    union {
        prism_wide_node n;
        uint4 v[5];
    } w;
    const uint2 b = base[i];
    if (prism__wide_node(&src, &q[i], b.x, b.y, &w.n, list, by_slot) < 0)
        return;
    for (int k = 0; k < 5; k++) /* 16-byte stores: the output may be mapped memory */
        nodes[5 * (size_t)i + k] = w.v[k];
    for (int s = 0; s < 8; s++) {
        if (by_slot[s] < 0 || (w.n.imask >> s & 1))
            continue;
        const prism__wide_item it = list[by_slot[s]];
        for (uint32_t j = 0; j < it.count; j++) {
            const uint32_t t = it.ref + j;
            const uint32_t v0 = T[3 * (size_t)t], v1 = T[3 * (size_t)t + 1],
                           v2 = T[3 * (size_t)t + 2];
            const float *a = V + 3 * (size_t)v0, *bb = V + 3 * (size_t)v1, *c = V + 3 * (size_t)v2;
            float4 *out = (float4 *)&tris[b.y + (w.n.meta[s] & 31u) + j];
            out[0] = make_float4(a[0], a[1], a[2], __uint_as_float(t));
            out[1] = make_float4(bb[0], bb[1], bb[2], 0.0f);
            out[2] = make_float4(c[0], c[1], c[2], 0.0f);
        }
    }
}

/* ---- the host side */

typedef struct collapse {
    prism_context *ctx;
    cudaStream_t s;
    prism_buffer *mem; /* queue, bases, sums, scan scratch, flags */
    size_t cap, temp_bytes;
    prism__wide_item *q;
    uint2 *base;
    unsigned long long *sums;
    void *temp;
    uint32_t *bad;
} collapse;

static prism_result cuda_fail(collapse *c, cudaError_t e, const char *what)
{
    return prism__cuda_error(c->ctx, e, "wide bvh(cuda)", what);
}

#define CK(call, what)                                                                             \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess)                                                                     \
            return cuda_fail(c, e_, what);                                                         \
    } while (0)

static unsigned grid(size_t n)
{
    return prism__cuda_blocks(n, BLOCK);
}

/* Scratch for `cap` nodes, keeping the first `keep` queue entries and
 * bases of the old one. */
static prism_result reserve(collapse *c, size_t cap, size_t keep)
{
    size_t temp = 0;
    CK(cub::DeviceScan::InclusiveSum(NULL, temp, (unsigned long long *)NULL,
                                     (unsigned long long *)NULL, (int)cap, c->s),
       "scan size");
    const size_t total = prism__cuda_align(cap * sizeof(prism__wide_item)) +
                         prism__cuda_align(cap * 8) + prism__cuda_align(cap * 8) +
                         prism__cuda_align(temp) + 256;
    prism_buffer *mem = NULL;
    prism_result r = prism_buffer_create_device(c->ctx, total, "bvh.wide_collapse", &mem);
    if (r != PRISM_SUCCESS)
        return r;
    char *p = (char *)prism_buffer_device_pointer(mem);
    prism__wide_item *q = (prism__wide_item *)p;
    uint2 *base = (uint2 *)(p + prism__cuda_align(cap * sizeof(prism__wide_item)));
    unsigned long long *sums = (unsigned long long *)((char *)base + prism__cuda_align(cap * 8));
    void *tmp = (char *)sums + prism__cuda_align(cap * 8);
    uint32_t *bad = (uint32_t *)((char *)tmp + prism__cuda_align(temp));
    cudaError_t e = cudaSuccess;
    if (keep && c->q)
        e = cudaMemcpyAsync(q, c->q, keep * sizeof *q, cudaMemcpyDeviceToDevice, c->s);
    if (e == cudaSuccess && keep && c->base)
        e = cudaMemcpyAsync(base, c->base, keep * sizeof *base, cudaMemcpyDeviceToDevice, c->s);
    if (e == cudaSuccess)
        e = c->bad ? cudaMemcpyAsync(bad, c->bad, 4, cudaMemcpyDeviceToDevice, c->s)
                   : cudaMemsetAsync(bad, 0, 4, c->s);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(c->s);
    if (e != cudaSuccess) {
        prism_buffer_release(mem);
        return cuda_fail(c, e, "scratch");
    }
    prism_buffer_release(c->mem);
    c->mem = mem;
    c->cap = cap;
    c->temp_bytes = temp;
    c->q = q;
    c->base = base;
    c->sums = sums;
    c->temp = tmp;
    c->bad = bad;
    return PRISM_SUCCESS;
}

static prism_result bad_tree(collapse *c, uint32_t bad)
{
    return prism__error(c->ctx, PRISM_ERROR_INVALID_ARGUMENT, "wide bvh(cuda): the binary tree %s",
                        bad & BAD_CHILD ? "has a child index outside its node array"
                                        : "has leaves that do not cover its triangles once");
}

/* The levels: the queue and every node's bases. */
static prism_result levels(collapse *c, const prism__wide_source *src, uint32_t triangles,
                           size_t *nodes, unsigned *depth)
{
    k_root<<<1, 1, 0, c->s>>>(*src, c->q);
    size_t first = 0, count = 1, tri_first = 0;
    for (unsigned level = 0;; level++) {
        k_count<<<grid(count), BLOCK, 0, c->s>>>(*src, c->q, (uint32_t)first, (uint32_t)count,
                                                 triangles, c->sums, c->bad);
        size_t bytes = c->temp_bytes;
        CK(cub::DeviceScan::InclusiveSum(c->temp, bytes, c->sums, c->sums, (int)count, c->s),
           "scan");
        unsigned long long total = 0;
        uint32_t bad = 0;
        CK(cudaMemcpyAsync(&total, c->sums + count - 1, 8, cudaMemcpyDeviceToHost, c->s), "level");
        CK(cudaMemcpyAsync(&bad, c->bad, 4, cudaMemcpyDeviceToHost, c->s), "level");
        CK(cudaStreamSynchronize(c->s), "level");
        if (bad)
            return bad_tree(c, bad);
        const size_t inner = (size_t)(total >> 32), next = first + count, tri_level = tri_first;
        tri_first += (uint32_t)total;
        if (tri_first > triangles)
            return bad_tree(c, BAD_LEAF);
        if (inner && level + 1 > PRISM_WIDE_MAX_DEPTH)
            return prism__error(c->ctx, PRISM_ERROR_LIMIT,
                                "wide bvh(cuda): the tree would be deeper than %d levels",
                                PRISM_WIDE_MAX_DEPTH);
        if (next + inner > UINT32_MAX)
            return prism__error(c->ctx, PRISM_ERROR_LIMIT,
                                "wide bvh(cuda): more than 2^32-1 nodes");
        if (next + inner > c->cap) {
            prism_result r = reserve(c, 2 * (next + inner), next);
            if (r != PRISM_SUCCESS)
                return r;
        }
        k_place<<<grid(count), BLOCK, 0, c->s>>>(*src, c->q, (uint32_t)first, (uint32_t)count,
                                                 c->sums, (uint32_t)next, (uint32_t)tri_level,
                                                 level, c->base);
        CK(cudaGetLastError(), "level");
        if (!inner) {
            if (tri_first != triangles)
                return bad_tree(c, BAD_LEAF);
            *nodes = next;
            *depth = level;
            return PRISM_SUCCESS;
        }
        first = next;
        count = inner;
    }
}

extern "C" prism_result prism__cuda_bvh_collapse(prism_context *ctx, const prism_geometry_view *v,
                                                 prism__wide_place place, void *user,
                                                 prism__device_wide *out)
{
    memset(out, 0, sizeof *out);
    prism_result r = prism__cuda_bind(ctx);
    if (r != PRISM_SUCCESS)
        return r;
    if (v->node_count == 0 || (v->triangle_count && (!v->triangles || !v->vertices)))
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT, "wide bvh(cuda): no binary tree");
    collapse cc = {ctx, prism__cuda_stream_of(ctx), NULL, 0, 0, NULL, NULL, NULL, NULL, NULL};
    collapse *c = &cc;
    const prism__wide_source src = {v->nodes_head, v->nodes_tail, v->nodes_split, v->node_count};
    /* about a sixth of the binary nodes on the detectors; grown if short */
    r = reserve(c, v->node_count / 4 + 1024, 0);
    size_t nodes = 0;
    if (r == PRISM_SUCCESS)
        r = levels(c, &src, v->triangle_count, &nodes, &out->depth);
    void *wn = NULL, *wt = NULL;
    if (r == PRISM_SUCCESS)
        r = place(user, nodes, v->triangle_count, &wn, &wt);
    if (r == PRISM_SUCCESS) {
        out->node_count = nodes;
        k_write<<<grid(nodes), BLOCK, 0, c->s>>>(src, c->q, c->base, (uint32_t)nodes, v->triangles,
                                                 v->vertices, (uint4 *)wn,
                                                 (prism_wide_triangle *)wt);
        cudaError_t e = cudaStreamSynchronize(c->s);
        if (e == cudaSuccess)
            e = cudaGetLastError();
        if (e != cudaSuccess)
            r = cuda_fail(c, e, "write");
    }
    prism_buffer_release(c->mem);
    return r;
}
