/* The wide tree of an uploaded geometry (geometry/bvh_wide.h): collapsed
 * on the host from the binary tree (the host build's, or for now the device
 * build's read back), then placed as the binary nodes are: in device memory,
 * or in mapped memory where the binary nodes have a mapped part. Every byte
 * goes through prism_buffer, so the ledger counts it. Where the view has a
 * wide tree, prism_trace_closest walks it (propagation, the host render);
 * the CUDA render picks its walk by variant. A tree the collapse refuses
 * (too deep) keeps the binary walk. */
#include <stdlib.h>
#include <string.h>

#include "bvh_internal.h"
#include "upload_internal.h"

/* PRISM_TRAVERSAL=wide or =binary (environment) decides. Unset, the wide
 * tree is made where it measured faster: on the host backend (one thread,
 * 2.56M triangles, random rays: 1.83 against the SSE binary walk's
 * 1.33-1.56 M rays/s), and on the CUDA backend with the binary nodes all in
 * mapped memory (policy mapped, or no device memory left for even a head
 * of them; H200, 2.56M triangles: primary rays 1.5-1.9x, propagation
 * 2.5x). In device memory the render's tuned binary walk measured faster
 * (1.42 against 1.19 G rays/s outside); a device head with a mapped tail is
 * not measured (the wide nodes would all be mapped). */
static bool wide_wanted(const prism_geometry *g)
{
    const char *v = getenv("PRISM_TRAVERSAL");
    if (v && strcmp(v, "wide") == 0)
        return true;
    if (v && strcmp(v, "binary") == 0)
        return false;
    if (g->ctx->backend != PRISM_BACKEND_CUDA)
        return true;
    return g->mapped[NODES] != NULL && g->device[NODES] == NULL;
}

/* n bytes from src into a new buffer of the kind the binary nodes use. */
static prism_result place(prism_geometry *g, const void *src, size_t n, const char *tag,
                          prism_buffer **out)
{
    const bool mapped = g->mapped[NODES] != NULL;
    prism_result r = mapped ? prism_buffer_create_pinned(g->ctx, n ? n : 16,
                                                         PRISM_HOST_MAPPED | PRISM_HOST_WRITE_COMBINED,
                                                         tag, out)
                            : prism_buffer_create_device(g->ctx, n ? n : 16, tag, out);
    if (r == PRISM_SUCCESS && n)
        r = prism_buffer_write(*out, 0, src, n);
    return r;
}

prism_result prism__up_wide(prism_geometry *g, const prism_bvh *given)
{
    if (!wide_wanted(g))
        return PRISM_SUCCESS;
    const double t0 = prism__up_now();
    prism_bvh *back = NULL;
    prism_result r = PRISM_SUCCESS;
    if (!given) {
        r = prism__geometry_download(g, &back);
        given = back;
    }
    prism_bvh_wide *w = NULL;
    if (r == PRISM_SUCCESS) {
        r = prism__bvh_collapse(given, &w);
        if (r == PRISM_ERROR_LIMIT) {
            prism__log(g->ctx, PRISM_LOG_WARNING,
                       "upload: the BVH is too deep to collapse into wide nodes; binary traversal");
            prism_bvh_free(back);
            return PRISM_SUCCESS;
        }
    }
    if (r == PRISM_SUCCESS)
        r = place(g, w->nodes, w->node_count * sizeof *w->nodes, "bvh.wide_nodes", &g->wide_nodes);
    if (r == PRISM_SUCCESS)
        r = place(g, w->triangles, w->triangle_count * sizeof *w->triangles, "bvh.wide_triangles",
                  &g->wide_triangles);
    if (r == PRISM_ERROR_OUT_OF_MEMORY || r == PRISM_ERROR_OUT_OF_DEVICE_MEMORY) {
        /* an optimisation, never a requirement: the binary walk still works */
        prism__log(g->ctx, PRISM_LOG_WARNING,
                   "upload: no memory for the wide BVH (%s); binary traversal", prism_result_string(r));
        g->ctx->last_error[0] = 0;
        prism_buffer_release(g->wide_nodes);
        prism_buffer_release(g->wide_triangles);
        g->wide_nodes = g->wide_triangles = NULL;
        r = PRISM_SUCCESS;
    }
    if (r == PRISM_SUCCESS && g->wide_nodes) {
        prism_geometry_view *v = &g->view;
        v->wide_head = prism_buffer_device_pointer(g->wide_nodes);
        v->wide_tail = NULL;
        v->wide_count = (uint32_t)w->node_count;
        v->wide_split = v->wide_count;
        v->wide_triangles = prism_buffer_device_pointer(g->wide_triangles);
        prism_upload_report *rep = &g->report;
        rep->wide_nodes = w->node_count;
        rep->wide_node_bytes = w->node_count * sizeof *w->nodes;
        rep->wide_triangle_bytes = w->triangle_count * sizeof *w->triangles;
        rep->wide_mapped = g->mapped[NODES] != NULL;
        rep->wide_seconds = prism__up_now() - t0;
        prism__log(g->ctx, PRISM_LOG_INFO,
                   "upload: wide BVH: %zu nodes (%zu bytes), %zu triangles (%zu bytes), depth %u, "
                   "%s memory, %.3f s",
                   w->node_count, w->node_count * sizeof *w->nodes, w->triangle_count,
                   w->triangle_count * sizeof *w->triangles, w->depth,
                   g->mapped[NODES] ? "mapped" : "device", prism__up_now() - t0);
    }
    prism__bvh_wide_free(w);
    prism_bvh_free(back);
    return r;
}
