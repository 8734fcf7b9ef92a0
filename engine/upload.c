/* The geometry upload: plan the placement of the BVH's arrays, then carry
 * the plan out. Device parts are converted into a ring of pinned staging
 * buffers and copied on one stream each (engine/staged_copy.c), so
 * converting one chunk overlaps the copies of the last; mapped parts are
 * written once, front to back, into mapped write-combined memory (streaming
 * stores only, never a read). Vertices a GL buffer already holds are read
 * from it through interop instead (desc.gl_vertex_buffer), when there is
 * interop. The kernels' geometry view is then filled from wherever each
 * array ended. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "geometry_internal.h"
#include "memory_internal.h"

enum { NODES, TRIANGLES, VERTICES, INFO };

struct prism_geometry {
    prism_context *ctx;
    prism_buffer *device[PRISM_GEOMETRY_ARRAYS];
    prism_buffer *mapped[PRISM_GEOMETRY_ARRAYS];
    prism_buffer *gl_vertices; /* desc.gl_vertex_buffer, registered read-only */
    prism_geometry_view view;
    prism_optics *optics;
    prism_upload_report report;
};

/* What an upload converts from. */
typedef struct source {
    const prism_scene *scene;
    const prism_bvh *bvh;
} source;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint32_t material16(uint32_t m)
{
    return m == PRISM_NONE ? 0xFFFFu : m;
}

/* Bytes [first, first+n) of the triangle_info array, element-aligned,
 * converted a block at a time and stored sequentially. Staging and mapped
 * memory are written through prism__fill_store, never read back: the
 * staged copy chooses the stores that the DMA engine reads fastest. */
static void convert_info(const source *s, size_t first, size_t n, unsigned char *dst)
{
    const prism_scene *sc = s->scene;
    prism_triangle_info block[64];
    size_t i = first / 16, end = (first + n) / 16;
    while (i < end) {
        size_t count = end - i < 64 ? end - i : 64;
        for (size_t j = 0; j < count; j++) {
            uint32_t id = s->bvh->triangle_ids[i + j];
            prism_triangle_info t = {id, PRISM_NONE, 0xFFFFFFFFu, PRISM_NONE};
            if (sc) {
                t.solid = sc->triangle_solid ? sc->triangle_solid[id] : PRISM_NONE;
                uint32_t inner = sc->triangle_material_inner ? sc->triangle_material_inner[id] : PRISM_NONE;
                uint32_t outer = sc->triangle_material_outer ? sc->triangle_material_outer[id] : PRISM_NONE;
                t.materials = material16(inner) | material16(outer) << 16;
                t.surface = sc->triangle_surface ? sc->triangle_surface[id] : PRISM_NONE;
            }
            block[j] = t;
        }
        prism__fill_store(dst, block, count * 16);
        dst += count * 16;
        i += count;
    }
}

/* The GPU layout of array `which`, bytes [first, first+n), into dst. Nodes,
 * vertices (float3) and triangles (uint3) already have it in the BVH. */
static void convert(const source *s, int which, size_t first, size_t n, void *dst)
{
    const prism_bvh *b = s->bvh;
    switch (which) {
    case NODES:
        prism__fill_store(dst, (const char *)b->nodes + first, n);
        break;
    case TRIANGLES:
        prism__fill_store(dst, (const char *)b->triangles + first, n);
        break;
    case VERTICES:
        prism__fill_store(dst, (const char *)b->vertices + first, n);
        break;
    default:
        convert_info(s, first, n, dst);
        break;
    }
}

/* ---- placement input */

static void arrays_of(const prism_bvh *b, prism_placement_array a[PRISM_GEOMETRY_ARRAYS])
{
    /* Heat: reads per byte in a traversal. Every step reads nodes; leaves
     * read triangles, then their vertices; a hit reads one info entry. */
    a[NODES] = (prism_placement_array){"bvh.nodes", b->node_count * sizeof(prism_bvh_node), 8.0,
                                       true, sizeof(prism_bvh_node), PRISM_ARRAY_NODES};
    a[TRIANGLES] = (prism_placement_array){"triangles", b->triangle_count * 12, 2.0, false, 12,
                                           PRISM_ARRAY_TRIANGLES};
    a[VERTICES] = (prism_placement_array){"vertices", b->vertex_count * 12, 1.0, false, 12,
                                          PRISM_ARRAY_VERTICES};
    a[INFO] = (prism_placement_array){"triangle_info", b->triangle_count * 16, 0.25, false, 16,
                                      PRISM_ARRAY_OTHER};
}

static prism_result memory_figures(prism_context *ctx, const prism_geometry_desc *d, size_t *free_b,
                                   size_t *total_b)
{
    prism_result r = prism_device_memory_info(ctx, free_b, total_b);
    if (r != PRISM_SUCCESS)
        return r;
    if (ctx->backend == PRISM_BACKEND_HOST && d->host_free_memory) {
        *free_b = d->host_free_memory;
        *total_b = d->host_total_memory > *free_b ? d->host_total_memory : *free_b;
    }
    if (d->budget && d->budget < *free_b)
        *free_b = d->budget;
    return PRISM_SUCCESS;
}

static prism_result validate(prism_context *ctx, const prism_scene *sc, const prism_bvh *b)
{
    if (b->node_count == 0 || !b->nodes || b->node_count > UINT32_MAX ||
        b->triangle_count > UINT32_MAX || b->vertex_count > UINT32_MAX ||
        (b->triangle_count && (!b->triangles || !b->triangle_ids)) || (b->vertex_count && !b->vertices))
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                            "geometry upload: BVH with %zu nodes, %zu triangles, %zu vertices: "
                            "missing arrays or counts beyond 2^32",
                            b->node_count, b->triangle_count, b->vertex_count);
    if (!sc)
        return PRISM_SUCCESS;
    if (sc->materials_count >= 0xFFFF)
        return prism__error(ctx, PRISM_ERROR_LIMIT,
                            "geometry upload: %zu materials; triangle codes hold at most 65534",
                            sc->materials_count);
    for (size_t i = 0; i < b->triangle_count; i++)
        if (b->triangle_ids[i] >= sc->triangles_count)
            return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                                "geometry upload: BVH triangle %zu has id %u, but the scene has "
                                "%zu triangles (BVH and scene do not match)",
                                i, b->triangle_ids[i], sc->triangles_count);
    return PRISM_SUCCESS;
}

/* ---- carrying the plan out */

/* What the staged copy and the mapped fill call: one array of a source. */
typedef struct array_source {
    const source *s;
    int which;
    size_t base; /* bytes of the array before this part (a split tail) */
} array_source;

static void fill_part(void *user, size_t first, size_t n, void *dst)
{
    const array_source *a = user;
    convert(a->s, a->which, a->base + first, n, dst);
}

/* Whole elements of every array: 12, 16 and 32 all divide it. */
#define GRANULE 96

static prism_result upload_device(const source *s, int which, prism_buffer *dst, size_t n,
                                  prism__staging *st)
{
    array_source a = {s, which, 0};
    return prism__staged_copy(st, dst, n, fill_part, &a, GRANULE);
}

/* Mapped parts are written once, front to back, by all threads (each on
 * its own sequential range), with streaming stores. */
static void fill_mapped(prism_geometry *g, const source *s, int which, size_t first, size_t n)
{
    array_source a = {s, which, first};
    prism__parallel_fill(fill_part, &a, 0, n, GRANULE, prism_buffer_host_pointer(g->mapped[which]));
}

static void demote(prism_geometry *g, prism_upload_entry *e)
{
    char why[sizeof g->ctx->last_error];
    snprintf(why, sizeof why, "%s", g->ctx->last_error);
    prism__log(g->ctx, PRISM_LOG_WARNING, "upload: \"%s\" demoted to mapped memory (%s)", e->name,
               why);
    g->ctx->last_error[0] = 0;
    e->demoted = true;
    e->device_bytes = 0;
    e->mapped_bytes = e->bytes;
    size_t len = strlen(e->reason);
    snprintf(e->reason + len, sizeof e->reason - len, "; demoted to mapped: device allocation failed");
}

/* The array's memory: device (demoted to mapped when that runs out) and
 * mapped parts. */
static prism_result allocate_array(prism_geometry *g, int which)
{
    prism_upload_entry *e = &g->report.arrays[which];
    prism_result r = PRISM_SUCCESS;
    if (e->device_bytes) {
        r = prism_buffer_create_device(g->ctx, e->device_bytes, e->name, &g->device[which]);
        if (r == PRISM_ERROR_OUT_OF_DEVICE_MEMORY) {
            demote(g, e);
            r = PRISM_SUCCESS;
        }
    }
    if (r == PRISM_SUCCESS && e->mapped_bytes)
        r = prism_buffer_create_pinned(g->ctx, e->mapped_bytes,
                                       PRISM_HOST_MAPPED | PRISM_HOST_WRITE_COMBINED, e->name,
                                       &g->mapped[which]);
    return r;
}

/* Allocate, then convert and transfer: the report's seconds and GB/s are
 * the latter's (the allocations count in the upload's total). */
static prism_result place_array(prism_geometry *g, const source *s, int which, prism__staging *st)
{
    prism_upload_entry *e = &g->report.arrays[which];
    prism_result r = allocate_array(g, which);
    if (r != PRISM_SUCCESS)
        return r;
    double t0 = now();
    if (e->device_bytes)
        r = upload_device(s, which, g->device[which], e->device_bytes, st);
    if (r == PRISM_SUCCESS && e->mapped_bytes)
        fill_mapped(g, s, which, e->device_bytes, e->mapped_bytes);
    e->seconds = now() - t0;
    e->gbps = e->seconds > 0 ? (double)e->bytes / e->seconds / 1e9 : 0;
    return r;
}

/* ---- the view the kernels read */

static const void *part(const prism_buffer *b)
{
    return b ? prism_buffer_device_pointer(b) : NULL;
}

static const void *whole(const prism_geometry *g, int which)
{
    return g->device[which] ? part(g->device[which]) : part(g->mapped[which]);
}

static void fill_view(prism_geometry *g, const prism_bvh *b)
{
    prism_geometry_view *v = &g->view;
    v->node_count = (uint32_t)b->node_count;
    if (g->device[NODES] && g->mapped[NODES]) {
        v->nodes_head = part(g->device[NODES]);
        v->nodes_tail = part(g->mapped[NODES]);
        v->nodes_split = (uint32_t)(prism_buffer_size(g->device[NODES]) / sizeof(prism_bvh_node));
    } else {
        v->nodes_head = whole(g, NODES);
        v->nodes_tail = NULL;
        v->nodes_split = v->node_count;
    }
    v->triangles = whole(g, TRIANGLES);
    v->vertices = g->gl_vertices ? NULL : whole(g, VERTICES); /* NULL: mapped per launch */
    v->triangle_info = whole(g, INFO);
    v->triangle_count = (uint32_t)b->triangle_count;
    v->vertex_count = (uint32_t)b->vertex_count;
    memcpy(v->bbox_lo, b->nodes[0].lo, sizeof v->bbox_lo);
    memcpy(v->bbox_hi, b->nodes[0].hi, sizeof v->bbox_hi);
}

/* ---- vertices shared with GL */

/* Register the caller's GL buffer for the vertices; the plan then places
 * nothing for them. Without interop the upload goes on as usual. */
static void share_vertices(prism_geometry *g, const prism_bvh *b, unsigned gl_buffer)
{
    prism_upload_entry *e = &g->report.arrays[VERTICES];
    char why[256] = "";
    prism_result r = prism__buffer_create_gl_interop(g->ctx, gl_buffer, e->bytes, PRISM_GL_READ_ONLY,
                                                     "vertices", why, sizeof why, &g->gl_vertices);
    if (r != PRISM_SUCCESS) {
        g->gl_vertices = NULL;
        g->ctx->last_error[0] = 0;
        prism__log(g->ctx, PRISM_LOG_WARNING,
                   "upload: vertices not shared with GL buffer %u (%s): uploaded, 2 copies",
                   gl_buffer, why);
        return;
    }
    e->device_bytes = e->mapped_bytes = 0;
    e->gl_shared = true;
    snprintf(e->reason, sizeof e->reason,
             "GL buffer %u (interop, read-only): stored once for GL and CUDA", gl_buffer);
    prism__log(g->ctx, PRISM_LOG_INFO, "upload: %zu vertices read from GL buffer %u in place",
               b->vertex_count, gl_buffer);
}

prism_result prism__geometry_map(const prism_geometry *g, prism_geometry_view *view)
{
    *view = g->view;
    if (!g->gl_vertices)
        return PRISM_SUCCESS;
    void *p = NULL;
    prism_result r = prism_buffer_gl_map(g->gl_vertices, NULL, &p);
    view->vertices = p;
    return r;
}

prism_result prism__geometry_unmap(const prism_geometry *g)
{
    return g->gl_vertices ? prism_buffer_gl_unmap(g->gl_vertices, NULL) : PRISM_SUCCESS;
}

bool prism_geometry_vertices_shared(const prism_geometry *g)
{
    return g && g->gl_vertices;
}

/* ---- the entry point */

static prism_result plan(prism_geometry *g, const prism_bvh *b, const prism_geometry_desc *d)
{
    prism_placement_array arrays[PRISM_GEOMETRY_ARRAYS];
    prism_placement placed[PRISM_GEOMETRY_ARRAYS];
    arrays_of(b, arrays);
    prism_upload_report *rep = &g->report;
    prism_result r = memory_figures(g->ctx, d, &rep->free_bytes, &rep->total_bytes);
    if (r != PRISM_SUCCESS)
        return r;
    prism_placement_desc pd = {arrays, PRISM_GEOMETRY_ARRAYS, rep->free_bytes, rep->total_bytes,
                               d->reserve, d->policy, !g->ctx->mapped_allowed};
    rep->policy = d->policy;
    rep->reserve = d->reserve == 0 ? PRISM_PLACEMENT_DEFAULT_RESERVE
                   : d->reserve == PRISM_PLACEMENT_NO_RESERVE ? 0 : d->reserve;
    char message[512];
    r = prism_placement_plan(&pd, placed, message, sizeof message);
    if (r != PRISM_SUCCESS)
        return prism__error(g->ctx, r, "geometry upload: %s", message);
    rep->array_count = PRISM_GEOMETRY_ARRAYS;
    for (int i = 0; i < PRISM_GEOMETRY_ARRAYS; i++) {
        prism_upload_entry *e = &rep->arrays[i];
        snprintf(e->name, sizeof e->name, "%s", placed[i].name);
        e->bytes = placed[i].bytes;
        e->device_bytes = placed[i].device_bytes;
        e->mapped_bytes = placed[i].mapped_bytes;
        snprintf(e->reason, sizeof e->reason, "%s", placed[i].reason);
    }
    return PRISM_SUCCESS;
}

static prism_result carry_out(prism_geometry *g, const source *s, const prism_geometry_desc *d)
{
    size_t chunk = d->chunk_bytes ? d->chunk_bytes : (size_t)8 << 20;
    chunk = chunk < GRANULE ? GRANULE : chunk / GRANULE * GRANULE;
    size_t largest = 0;
    for (int i = 0; i < PRISM_GEOMETRY_ARRAYS; i++)
        if (g->report.arrays[i].device_bytes > largest)
            largest = g->report.arrays[i].device_bytes;
    if (largest < chunk)
        chunk = (largest + GRANULE - 1) / GRANULE * GRANULE;
    prism__staging st = {0};
    prism_result r = largest ? prism__staging_open(g->ctx, chunk, &st) : PRISM_SUCCESS;
    for (int i = 0; i < PRISM_GEOMETRY_ARRAYS && r == PRISM_SUCCESS; i++)
        r = place_array(g, s, i, &st);
    prism__staging_close(&st);
    return r;
}

prism_result prism_geometry_upload(prism_context *ctx, const prism_scene *scene, const prism_bvh *bvh,
                                   const prism_geometry_desc *desc, prism_geometry **out)
{
    if (!ctx || !bvh || !out)
        return ctx ? prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                                  "geometry upload: NULL bvh or out")
                   : PRISM_ERROR_INVALID_ARGUMENT;
    *out = NULL;
    prism_geometry_desc d = desc ? *desc : (prism_geometry_desc){0};
    double t0 = now();
    prism_result r = validate(ctx, scene, bvh);
    if (r != PRISM_SUCCESS)
        return r;
    prism_geometry *g = calloc(1, sizeof *g);
    if (!g)
        return prism__error(ctx, PRISM_ERROR_OUT_OF_MEMORY, "geometry upload: out of host memory");
    g->ctx = ctx;
    source s = {scene, bvh};
    r = plan(g, bvh, &d);
    if (r == PRISM_SUCCESS && d.gl_vertex_buffer && bvh->vertex_count)
        share_vertices(g, bvh, d.gl_vertex_buffer);
    if (r == PRISM_SUCCESS)
        r = carry_out(g, &s, &d);
    if (r == PRISM_SUCCESS && scene && !d.skip_optics)
        r = prism__optics_create(ctx, scene, &g->optics);
    if (r != PRISM_SUCCESS) {
        prism_geometry_destroy(g);
        return r;
    }
    fill_view(g, bvh);
    prism_upload_report *rep = &g->report;
    for (int i = 0; i < PRISM_GEOMETRY_ARRAYS; i++) {
        rep->device_bytes += rep->arrays[i].device_bytes;
        rep->mapped_bytes += rep->arrays[i].mapped_bytes;
    }
    rep->seconds = now() - t0;
    *out = g;
    return PRISM_SUCCESS;
}

void prism_geometry_destroy(prism_geometry *g)
{
    if (!g)
        return;
    prism__optics_destroy(g->ctx, g->optics);
    for (int i = 0; i < PRISM_GEOMETRY_ARRAYS; i++) {
        prism_buffer_release(g->device[i]);
        prism_buffer_release(g->mapped[i]);
    }
    prism_buffer_release(g->gl_vertices);
    free(g);
}

const prism_upload_report *prism_geometry_report(const prism_geometry *g)
{
    return g ? &g->report : NULL;
}

const prism_geometry_view *prism__geometry_view(const prism_geometry *g)
{
    return g ? &g->view : NULL;
}

prism_optics *prism__geometry_optics(const prism_geometry *g)
{
    return g ? g->optics : NULL;
}

prism_context *prism__geometry_context(const prism_geometry *g)
{
    return g ? g->ctx : NULL;
}

size_t prism_geometry_report_format(const prism_upload_report *r, char *buf, size_t size)
{
    size_t n = 0;
#define OUT(...) prism__appendf(buf, size, &n, __VA_ARGS__)
    if (size)
        buf[0] = 0;
    if (!r)
        return 0;
    OUT("upload (policy %s, free %.1f MB of %.1f MB, reserve %.1f MB): %.3f s\n",
        prism_placement_policy_name(r->policy), r->free_bytes / 1e6, r->total_bytes / 1e6,
        r->reserve / 1e6, r->seconds);
    OUT("  %-14s %12s %12s %12s %9s %8s  %s\n", "array", "bytes", "device", "mapped", "seconds",
        "GB/s", "reason");
    for (size_t i = 0; i < r->array_count; i++) {
        const prism_upload_entry *e = &r->arrays[i];
        OUT("  %-14s %12zu %12zu %12zu %9.4f %8.2f  %s\n", e->name, e->bytes, e->device_bytes,
            e->mapped_bytes, e->seconds, e->gbps, e->reason);
    }
#undef OUT
    return n;
}
