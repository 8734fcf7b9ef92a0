/* The wide tree of an uploaded geometry (prism/device/bvh_wide.h): collapsed
 * where the binary tree is (on the device from the device build's tree,
 * engine/cuda/bvh/wide.cu; on the host from the host build's or the
 * caller's; the device's read back to the host only where the device
 * collapse's temporaries do not fit), and placed as the binary nodes are:
 * in device memory, or in mapped memory where the binary nodes have a
 * mapped part. Every byte
 * goes through prism_buffer, so the ledger counts it. Where the view has a
 * wide tree, prism_trace_closest walks it (propagation, the host render);
 * the CUDA render picks its walk by variant, the binary one where the
 * geometry is all in device memory. A tree the collapse refuses
 * (too deep) keeps the binary walk. */
#include <stdlib.h>

#include "engine/backend.h"
#include "geometry/bvh/internal.h"
#include "internal.h"

/* AUTO with the binary nodes all in device memory: room for the wide
 * tree there too, keeping the placement's reserve (and within
 * desc.device_budget): the triangles copied (48 bytes each) and at most a
 * wide node for every inner binary node. */
static bool wide_fits_device(const prism_geometry *g)
{
    const prism_upload_report *rep = &g->report;
    const size_t want = (size_t)g->view.triangle_count * sizeof(prism_wide_triangle) +
                        ((size_t)g->view.node_count / 2 + 1) * sizeof(prism_wide_node);
    if (rep->device_budget && rep->device_bytes + want > rep->device_budget)
        return false;
    size_t free_b = 0, total_b = 0;
    if (prism_device_memory_info(g->ctx, &free_b, &total_b) != PRISM_SUCCESS)
        return false;
    return free_b > rep->reserve && free_b - rep->reserve >= want;
}

/* desc.traversal decides. AUTO makes the wide tree where its walk
 * measured faster (the README has the figures): on the host backend; on
 * the CUDA backend with the binary nodes all in mapped memory (policy
 * mapped, or no device memory left for even a head of them), where the
 * smaller wide nodes mean fewer bytes across PCIe a ray; and with them all
 * in device memory where the wide tree fits there too, for the photons'
 * trace (the render keeps the tuned binary walk there, which issues fewer
 * instructions a coherent ray). A device head with a mapped tail is not
 * measured (the wide nodes would all be mapped). */
static bool wide_wanted(const prism_geometry *g)
{
    if (g->traversal == PRISM_TRAVERSAL_WIDE)
        return true;
    if (g->traversal == PRISM_TRAVERSAL_BINARY)
        return false;
    if (g->ctx->backend != PRISM_BACKEND_CUDA)
        return true;
    if (g->mapped[NODES] == NULL)
        return wide_fits_device(g);
    return g->device[NODES] == NULL;
}

/* AUTO's wide tree beside binary nodes all in device memory: a speed-up
 * for the photons, never worth the device collapse's fallback (reading
 * the tree back and collapsing it on the host takes seconds). */
static bool optional_on_device(const prism_geometry *g)
{
    return g->traversal == PRISM_TRAVERSAL_AUTO && g->mapped[NODES] == NULL;
}

/* n bytes from src into a new buffer of the kind the binary nodes use. */
static prism_result place(prism_geometry *g, const void *src, size_t n, const char *tag,
                          prism_buffer **out)
{
    const bool mapped = g->mapped[NODES] != NULL;
    prism_result r =
        mapped ? prism_buffer_create_pinned(g->ctx, n ? n : 16,
                                            PRISM_HOST_MAPPED | PRISM_HOST_WRITE_COMBINED, tag, out)
               : prism_buffer_create_device(g->ctx, n ? n : 16, tag, out);
    if (r == PRISM_SUCCESS && n && src)
        r = prism_buffer_write(*out, 0, src, n);
    return r;
}

static void drop(prism_geometry *g)
{
    prism_buffer_release(g->wide_nodes);
    prism_buffer_release(g->wide_triangles);
    g->wide_nodes = g->wide_triangles = NULL;
}

static bool out_of_memory(prism_result r)
{
    return r == PRISM_ERROR_OUT_OF_MEMORY || r == PRISM_ERROR_OUT_OF_DEVICE_MEMORY;
}

/* The view and the report, whoever collapsed. */
static void adopt(prism_geometry *g, size_t nodes, unsigned depth, bool on_device, double t0)
{
    prism_geometry_view *v = &g->view;
    v->wide_head = prism_buffer_device_pointer(g->wide_nodes);
    v->wide_tail = NULL;
    v->wide_count = (uint32_t)nodes;
    v->wide_split = v->wide_count;
    v->wide_triangles = prism_buffer_device_pointer(g->wide_triangles);
    g->wide_depth = depth;
    prism_upload_report *rep = &g->report;
    rep->wide_nodes = nodes;
    rep->wide_node_bytes = nodes * sizeof(prism_wide_node);
    rep->wide_triangle_bytes = (size_t)v->triangle_count * sizeof(prism_wide_triangle);
    rep->wide_mapped = g->mapped[NODES] != NULL;
    rep->wide_on_device = on_device;
    rep->wide_seconds = prism__up_now() - t0;
    prism__log(g->ctx, PRISM_LOG_INFO,
               "upload: wide BVH: %zu nodes (%zu bytes), %u triangles (%zu bytes), depth %u, "
               "%s memory, collapsed on the %s, %.3f s",
               nodes, rep->wide_node_bytes, v->triangle_count, rep->wide_triangle_bytes, depth,
               rep->wide_mapped ? "mapped" : "device", on_device ? "device" : "host",
               rep->wide_seconds);
}

static prism_result place_device(void *user, size_t nodes, size_t triangles, void **pn, void **pt)
{
    prism_geometry *g = user;
    prism_result r = place(g, NULL, nodes * sizeof(prism_wide_node), "bvh.wide_nodes",
                           &g->wide_nodes);
    if (r == PRISM_SUCCESS)
        r = place(g, NULL, triangles * sizeof(prism_wide_triangle), "bvh.wide_triangles",
                  &g->wide_triangles);
    if (r == PRISM_SUCCESS) {
        *pn = prism_buffer_device_pointer(g->wide_nodes);
        *pt = prism_buffer_device_pointer(g->wide_triangles);
    }
    return r;
}

/* The device build's tree collapsed where it is. */
static prism_result collapse_on_device(prism_geometry *g, prism__device_wide *dw)
{
    prism_geometry_view v;
    prism_result r = prism__geometry_map(g, &v);
    if (r != PRISM_SUCCESS)
        return r;
    r = g->ctx->be->wide_collapse(g->ctx, &v, place_device, g, dw);
    const prism_result u = prism__geometry_unmap(g);
    return r == PRISM_SUCCESS ? u : r;
}

/* A tree deeper than the wide walk's stack: the binary walk stays, said
 * once; the read-back tree (if any) freed. */
static prism_result too_deep(prism_geometry *g, prism_bvh *back)
{
    g->ctx->last_error[0] = 0;
    prism__log(g->ctx, PRISM_LOG_WARNING,
               "upload: the BVH is too deep to collapse into wide nodes; binary traversal");
    prism_bvh_free(back);
    return PRISM_SUCCESS;
}

prism_result prism__up_wide(prism_geometry *g, const prism_bvh *given)
{
    if (!wide_wanted(g))
        return PRISM_SUCCESS;
    const double t0 = prism__up_now();
    prism_result r = PRISM_SUCCESS;
    /* desc.wide_collapse_on_host (a knob for the bench): the read-back */
    if (!given && g->ctx->be->wide_collapse != NULL && !g->wide_collapse_on_host) {
        prism__device_wide dw;
        r = collapse_on_device(g, &dw);
        if (r == PRISM_SUCCESS) {
            adopt(g, dw.node_count, dw.depth, true, t0);
            return PRISM_SUCCESS;
        }
        drop(g);
        if (r == PRISM_ERROR_LIMIT)
            return too_deep(g, NULL);
        if (!out_of_memory(r))
            return r;
        if (optional_on_device(g)) {
            prism__log(g->ctx, PRISM_LOG_INFO,
                       "upload: no device memory for the wide collapse (%s); binary traversal",
                       g->ctx->last_error);
            g->ctx->last_error[0] = 0;
            return PRISM_SUCCESS;
        }
        /* the read-back needs host memory only, and the outputs may go to mapped memory */
        prism__log(g->ctx, PRISM_LOG_WARNING,
                   "upload: no device memory for the wide collapse (%s); collapsing on the host",
                   g->ctx->last_error);
        g->ctx->last_error[0] = 0;
        r = PRISM_SUCCESS;
    }
    prism_bvh *back = NULL;
    if (!given) {
        r = prism__geometry_download(g, &back);
        given = back;
    }
    prism_bvh_wide *w = NULL;
    if (r == PRISM_SUCCESS) {
        r = prism__bvh_collapse(given, &w);
        if (r == PRISM_ERROR_LIMIT)
            return too_deep(g, back);
    }
    if (r == PRISM_SUCCESS)
        r = place(g, w->nodes, w->node_count * sizeof *w->nodes, "bvh.wide_nodes", &g->wide_nodes);
    if (r == PRISM_SUCCESS)
        r = place(g, w->triangles, w->triangle_count * sizeof *w->triangles, "bvh.wide_triangles",
                  &g->wide_triangles);
    if (out_of_memory(r)) {
        /* an optimisation, never a requirement: the binary walk still works */
        prism__log(g->ctx, PRISM_LOG_WARNING,
                   "upload: no memory for the wide BVH (%s); binary traversal",
                   prism_result_string(r));
        g->ctx->last_error[0] = 0;
        drop(g);
        r = PRISM_SUCCESS;
    }
    if (r == PRISM_SUCCESS && g->wide_nodes)
        adopt(g, w->node_count, w->depth, false, t0);
    prism__bvh_wide_free(w);
    prism_bvh_free(back);
    return r;
}

prism_result prism__geometry_download_wide(const prism_geometry *g, prism_bvh_wide **out)
{
    *out = NULL;
    if (!g->wide_nodes)
        return PRISM_SUCCESS;
    prism_bvh_wide *w = calloc(1, sizeof *w);
    if (!w)
        return PRISM_ERROR_OUT_OF_MEMORY;
    w->node_count = g->view.wide_count;
    w->triangle_count = g->view.triangle_count;
    w->depth = g->wide_depth;
    w->nodes = malloc(w->node_count * sizeof *w->nodes);
    w->triangles = malloc((w->triangle_count ? w->triangle_count : 1) * sizeof *w->triangles);
    prism_result r = w->nodes && w->triangles ? PRISM_SUCCESS : PRISM_ERROR_OUT_OF_MEMORY;
    if (r == PRISM_SUCCESS)
        r = prism_buffer_read(g->wide_nodes, 0, w->nodes, w->node_count * sizeof *w->nodes);
    if (r == PRISM_SUCCESS && w->triangle_count)
        r = prism_buffer_read(g->wide_triangles, 0, w->triangles,
                              w->triangle_count * sizeof *w->triangles);
    if (r != PRISM_SUCCESS) {
        prism__bvh_wide_free(w);
        return r;
    }
    *out = w;
    return PRISM_SUCCESS;
}
