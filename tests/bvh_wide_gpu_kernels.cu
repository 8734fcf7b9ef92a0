/* Kernels for the wide BVH's GPU test: every ray traced on the device by
 * the binary walk (prism/device/bvh_traverse.h), the render's tuned binary walk
 * (prism/device/traverse_gpu.h), the wide walk (prism/device/bvh_wide_traverse.h) and
 * its one-step-at-a-time form (traverse_gpu.h),
 * closest and any hit, over arrays copied to device memory. */
#include <stdint.h>
#include <string.h>

#include <cuda_runtime.h>

#include "prism/device/bvh_traverse.h"
#include "prism/device/bvh_wide_traverse.h"
#include "prism/device/traverse_gpu.h"

#include "bvh_wide_gpu.h"

__global__ void wide_test_trace(prism_geometry_view g, const prism_ray *rays, uint32_t n,
                                wide_gpu_result *out)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const prism_ray ray = rays[i];
    wide_gpu_result r;
    prism_bvh_closest(&g, &ray, &r.binary);
    prism_wide_closest_skip(&g, &ray, PRISM_BVH_MISS, &r.wide);
    prism_ray_pre pre;
    prism_ray_prepare(&ray, &pre);
    prism_trace_hit th;
    prism_gpu_closest<0, 1>(g, pre, ray.tmax, PRISM_BVH_MISS, th);
    r.tuned_t = th.t;
    r.tuned = th.index;
    prism_gpu_wide_closest(g, pre, PRISM_BVH_MISS, th);
    r.step_t = th.t;
    r.step = th.index;
    r.any_binary = prism_bvh_any(&g, &ray);
    r.any_wide = prism_wide_any(&g, &ray);
    out[i] = r;
}

static int up(void **dst, const void *src, size_t n)
{
    if (cudaMalloc(dst, n ? n : 16) != cudaSuccess)
        return -1;
    return n && cudaMemcpy(*dst, src, n, cudaMemcpyHostToDevice) != cudaSuccess ? -1 : 0;
}

extern "C" int wide_gpu_trace(const prism_bvh *b, const prism_bvh_wide *w, const prism_ray *rays,
                              size_t n, wide_gpu_result *out)
{
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        cudaGetLastError();
        return WIDE_GPU_NO_DEVICE;
    }
    void *p[6] = {0};
    int rc = up(&p[0], b->nodes, b->node_count * sizeof *b->nodes) ||
             up(&p[1], b->vertices, b->vertex_count * 12) ||
             up(&p[2], b->triangles, b->triangle_count * 12) ||
             up(&p[3], w->nodes, w->node_count * sizeof *w->nodes) ||
             up(&p[4], w->triangles, w->triangle_count * sizeof *w->triangles) ||
             up(&p[5], rays, n * sizeof *rays);
    wide_gpu_result *d = NULL;
    if (rc == 0 && cudaMalloc(&d, n * sizeof *d) != cudaSuccess)
        rc = -1;
    if (rc == 0) {
        prism_geometry_view g;
        memset(&g, 0, sizeof g);
        g.nodes_head = (const prism_bvh_node *)p[0];
        g.node_count = g.nodes_split = (uint32_t)b->node_count;
        g.vertices = (const float *)p[1];
        g.triangles = (const uint32_t *)p[2];
        g.vertex_count = (uint32_t)b->vertex_count;
        g.triangle_count = (uint32_t)b->triangle_count;
        g.wide_head = (const prism_wide_node *)p[3];
        g.wide_count = g.wide_split = (uint32_t)w->node_count;
        g.wide_triangles = (const prism_wide_triangle *)p[4];
        wide_test_trace<<<(unsigned)((n + 127) / 128), 128>>>(g, (const prism_ray *)p[5],
                                                              (uint32_t)n, d);
        if (cudaGetLastError() != cudaSuccess ||
            cudaMemcpy(out, d, n * sizeof *d, cudaMemcpyDeviceToHost) != cudaSuccess)
            rc = -1;
    }
    for (int i = 0; i < 6; i++)
        cudaFree(p[i]);
    cudaFree(d);
    cudaGetLastError();
    return rc;
}
