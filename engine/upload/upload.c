/* The geometry upload: plan the placement of the BVH's arrays, then carry
 * the plan out. Given no BVH, it builds one (engine/upload/build.c): on
 * the device from the vertices and triangles it has just uploaded, or on
 * the host when the context has no device or too little memory for the
 * builder. Device parts are converted into a ring of pinned staging
 * buffers and copied on one stream each (engine/memory/staged_copy.c), so
 * converting one chunk overlaps the copies of the last; mapped parts are
 * written once, front to back, into mapped write-combined memory (streaming
 * stores only, never a read). Vertices a GL buffer already holds are read
 * from it through interop instead (desc.gl_vertex_buffer), when there is
 * interop, or written into it by the upload (desc.gl_fill). The kernels'
 * geometry view is then filled from wherever each array ended. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/backend.h"
#include "internal.h"

static source source_of_bvh(const prism_scene *scene, const prism_bvh *b)
{
    return (source){scene, b->nodes, b->vertices, b->triangles, b->triangle_ids};
}

double prism__up_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void prism__up_trace(const prism_geometry *g, const char *stage, double since)
{
    if (g->trace & PRISM_GEOMETRY_TRACE_UPLOAD)
        prism__log(g->ctx, PRISM_LOG_DEBUG, "upload: %-28s %8.3f ms", stage,
                   (prism__up_now() - since) * 1e3);
}

/* Bytes [first, first+n) of the triangle_info array, element-aligned,
 * converted a block at a time and stored sequentially. Staging and mapped
 * memory are written through prism__fill_store, never read back: the
 * staged copy chooses the stores that the DMA engine reads fastest. */
static void convert_info(const source *s, size_t first, size_t n, unsigned char *dst, bool plain)
{
    const prism_scene *sc = s->scene;
    prism_triangle_info block[64];
    size_t i = first / 16, end = (first + n) / 16;
    while (i < end) {
        size_t count = end - i < 64 ? end - i : 64;
        for (size_t j = 0; j < count; j++) {
            uint32_t id = s->ids ? s->ids[i + j] : (uint32_t)(i + j);
            prism_triangle_info t = {id, PRISM_NONE, 0xFFFFFFFFu, PRISM_NONE};
            if (sc) {
                t.solid = sc->triangle_solid ? sc->triangle_solid[id] : PRISM_NONE;
                uint32_t inner = sc->triangle_material_inner ? sc->triangle_material_inner[id]
                                                             : PRISM_NONE;
                uint32_t outer = sc->triangle_material_outer ? sc->triangle_material_outer[id]
                                                             : PRISM_NONE;
                t.materials = prism_materials_pack(inner, outer);
                t.surface = sc->triangle_surface ? sc->triangle_surface[id] : PRISM_NONE;
            }
            block[j] = t;
        }
        prism__fill_store(dst, block, count * 16, plain);
        dst += count * 16;
        i += count;
    }
}

/* The GPU layout of array `which`, bytes [first, first+n), into dst. Nodes,
 * vertices (float3) and triangles (uint3) already have it in the BVH. */
static void convert(const source *s, int which, size_t first, size_t n, void *dst, bool plain)
{
    switch (which) {
    case NODES: prism__fill_store(dst, (const char *)s->nodes + first, n, plain); break;
    case TRIANGLES: prism__fill_store(dst, (const char *)s->triangles + first, n, plain); break;
    case VERTICES: prism__fill_store(dst, (const char *)s->vertices + first, n, plain); break;
    default: convert_info(s, first, n, dst, plain); break;
    }
}

/* ---- placement input */

static void arrays_of(const prism_bvh *b, prism_placement_array a[PRISM_GEOMETRY_ARRAYS])
{
    /* Heat: reads per byte in a traversal. Every step reads nodes; leaves
     * read triangles, then their vertices; a hit reads one info entry. */
    a[NODES] = (prism_placement_array){
        "bvh.nodes",      b->node_count * sizeof(prism_bvh_node), 8.0, true, sizeof(prism_bvh_node),
        PRISM_ARRAY_NODES};
    a[TRIANGLES] = (prism_placement_array){"triangles", b->triangle_count * 12, 2.0, false,
                                           12,          PRISM_ARRAY_TRIANGLES};
    a[VERTICES] = (prism_placement_array){"vertices", b->vertex_count * 12, 1.0, false,
                                          12,         PRISM_ARRAY_VERTICES};
    a[INFO] = (prism_placement_array){"triangle_info",  b->triangle_count * 16, 0.25, false, 16,
                                      PRISM_ARRAY_OTHER};
}

prism_result prism__up_memory_figures(prism_context *ctx, const prism_geometry_desc *d,
                                      size_t *free_b, size_t *total_b)
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
        (b->triangle_count && (!b->triangles || !b->triangle_ids)) ||
        (b->vertex_count && !b->vertices))
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

static void fill_part(void *user, size_t first, size_t n, void *dst, bool plain)
{
    const array_source *a = user;
    convert(a->s, a->which, a->base + first, n, dst, plain);
}

/* Whole elements of every array: 12, 16 and 32 all divide it. */
#define GRANULE 96

/* The staging chunk's bounds when prism_geometry_desc.chunk_bytes is 0. */
#define PRISM__UPLOAD_CHUNK_MIN ((size_t)1 << 20)
#define PRISM__UPLOAD_CHUNK_MAX ((size_t)8 << 20)

prism_result prism__up_staged(const source *s, int which, prism_buffer *dst, size_t n,
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
    snprintf(e->reason + len, sizeof e->reason - len,
             "; demoted to mapped: device allocation failed");
}

/* The array's memory: device (demoted to mapped when that runs out) and
 * mapped parts. */
prism_result prism__up_allocate(prism_geometry *g, int which)
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
prism_result prism__up_place(prism_geometry *g, const source *s, int which, prism__staging *st)
{
    prism_upload_entry *e = &g->report.arrays[which];
    prism_result r = prism__up_allocate(g, which);
    if (r != PRISM_SUCCESS)
        return r;
    double t0 = prism__up_now();
    if (e->device_bytes)
        r = prism__up_staged(s, which, g->device[which], e->device_bytes, st);
    if (r == PRISM_SUCCESS && e->mapped_bytes)
        fill_mapped(g, s, which, e->device_bytes, e->mapped_bytes);
    e->seconds = prism__up_now() - t0;
    e->gbps = e->seconds > 0 ? (double)e->bytes / e->seconds / 1e9 : 0;
    return r;
}

/* ---- the view the kernels read */

static const void *part(const prism_buffer *b)
{
    return b ? prism_buffer_device_pointer(b) : NULL;
}

const void *prism__up_whole(const prism_geometry *g, int which)
{
    return g->device[which] ? part(g->device[which]) : part(g->mapped[which]);
}

static shape shape_of_bvh(const prism_bvh *b)
{
    shape sh = {b->node_count, b->triangle_count, b->vertex_count, {0}, {0}};
    memcpy(sh.lo, b->nodes[0].lo, sizeof sh.lo);
    memcpy(sh.hi, b->nodes[0].hi, sizeof sh.hi);
    return sh;
}

void prism__up_fill_view(prism_geometry *g, const shape *b)
{
    prism_geometry_view *v = &g->view;
    v->node_count = (uint32_t)b->node_count;
    if (g->device[NODES] && g->mapped[NODES]) {
        v->nodes_head = part(g->device[NODES]);
        v->nodes_tail = part(g->mapped[NODES]);
        v->nodes_split = (uint32_t)(prism_buffer_size(g->device[NODES]) / sizeof(prism_bvh_node));
    } else {
        v->nodes_head = prism__up_whole(g, NODES);
        v->nodes_tail = NULL;
        v->nodes_split = v->node_count;
    }
    v->triangles = prism__up_whole(g, TRIANGLES);
    v->vertices = g->gl_vertices ? NULL
                                 : prism__up_whole(g, VERTICES); /* NULL: mapped per launch */
    v->triangle_info = prism__up_whole(g, INFO);
    v->triangle_count = (uint32_t)b->triangle_count;
    v->vertex_count = (uint32_t)b->vertex_count;
    memcpy(v->bbox_lo, b->lo, sizeof v->bbox_lo);
    memcpy(v->bbox_hi, b->hi, sizeof v->bbox_hi);
    /* The wide tree, where there is one, is placed as the nodes are. */
    v->device_resident = g->ctx->backend == PRISM_BACKEND_CUDA && !g->mapped[NODES] &&
                         !g->mapped[TRIANGLES] && !g->mapped[VERTICES] && !g->mapped[INFO];
}

/* ---- vertices shared with GL */

/* Register the caller's GL buffer for the vertices; the plan then places
 * nothing for them. Without interop the upload goes on as usual. */
void prism__up_share_vertices(prism_geometry *g, size_t vertex_count, unsigned gl_buffer, bool fill)
{
    prism_upload_entry *e = &g->report.arrays[VERTICES];
    char why[256] = "";
    prism_result r = prism__buffer_create_gl_interop(g->ctx, gl_buffer, e->bytes,
                                                     fill ? PRISM_GL_NONE : PRISM_GL_READ_ONLY,
                                                     "vertices", why, sizeof why, &g->gl_vertices);
    if (r != PRISM_SUCCESS) {
        g->gl_vertices = NULL;
        g->ctx->last_error[0] = 0;
        prism__log(g->ctx, PRISM_LOG_WARNING,
                   "upload: vertices not shared with GL buffer %u (%s): uploaded, 2 copies%s",
                   gl_buffer, why, fill ? "; the GL buffers are left for the caller to fill" : "");
        return;
    }
    e->device_bytes = e->mapped_bytes = 0;
    e->gl_shared = true;
    snprintf(e->reason, sizeof e->reason, "GL buffer %u (interop, %s): stored once for GL and CUDA",
             gl_buffer, fill ? "written by the upload" : "read-only");
    prism__log(g->ctx, PRISM_LOG_INFO, "upload: %zu vertices read from GL buffer %u in place",
               vertex_count, gl_buffer);
}

/* The shared vertices' kernel pointer: mapped now, or still mapped from
 * an earlier call (gl_keep_mapped). */
static prism_result map_vertices(const prism_geometry *g, void **p)
{
    *p = prism__buffer_gl_mapped_pointer(g->gl_vertices);
    return *p ? PRISM_SUCCESS : prism_buffer_gl_map(g->gl_vertices, NULL, p);
}

prism_result prism__geometry_map(const prism_geometry *g, prism_geometry_view *view)
{
    *view = g->view;
    if (!g->gl_vertices)
        return PRISM_SUCCESS;
    void *p = NULL;
    prism_result r = map_vertices(g, &p);
    view->vertices = p;
    return r;
}

prism_result prism__geometry_unmap(const prism_geometry *g)
{
    return g->gl_vertices && !g->gl_keep_mapped ? prism_buffer_gl_unmap(g->gl_vertices, NULL)
                                                : PRISM_SUCCESS;
}

prism_result prism_geometry_gl_release(prism_geometry *g)
{
    if (!g || !g->gl_vertices || !prism__buffer_gl_mapped_pointer(g->gl_vertices))
        return PRISM_SUCCESS;
    return prism_buffer_gl_unmap(g->gl_vertices, NULL);
}

bool prism_geometry_vertices_shared(const prism_geometry *g)
{
    return g && g->gl_vertices;
}

/* ---- planning */

prism_result prism__up_plan(prism_geometry *g, const prism_bvh *b, const prism_geometry_desc *d)
{
    prism_placement_array arrays[PRISM_GEOMETRY_ARRAYS];
    prism_placement placed[PRISM_GEOMETRY_ARRAYS];
    arrays_of(b, arrays);
    prism_upload_report *rep = &g->report;
    prism_result r = prism__up_memory_figures(g->ctx, d, &rep->free_bytes, &rep->total_bytes);
    if (r != PRISM_SUCCESS)
        return r;
    prism_placement_desc pd = {
        arrays,    PRISM_GEOMETRY_ARRAYS,   rep->free_bytes, rep->total_bytes, d->reserve,
        d->policy, !g->ctx->mapped_allowed, d->device_budget};
    rep->policy = d->policy;
    rep->device_budget = d->device_budget;
    rep->reserve = d->reserve == 0                            ? PRISM_PLACEMENT_DEFAULT_RESERVE
                   : d->reserve == PRISM_PLACEMENT_NO_RESERVE ? 0
                                                              : d->reserve;
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

/* Staging buffers sized for the largest device part among `which` (or
 * none when nothing goes to the device). */
prism_result prism__up_open_staging(prism_geometry *g, const prism_geometry_desc *d,
                                    const size_t *bytes, int count, prism__staging *st)
{
    size_t largest = 0;
    for (int i = 0; i < count; i++)
        largest = bytes[i] > largest ? bytes[i] : largest;
    /* By default a 32nd of the upload's largest staged array (the
     * triangles, vertices or per-triangle data as planned; the nodes are
     * built on the device or come in a size of their own), within 1-8 MiB,
     * the same for every ring of one upload so that the GL ring reuses the
     * pool's blocks. Pinning memory is far slower than copying it, so a
     * first upload opens its ring sooner with small chunks, and a
     * mid-sized scene's steady staged copy runs faster with them too;
     * only a large scene's copy needs the big ones to reach the link's
     * speed. Scaling the chunk with the scene serves both (the README
     * has the figures). */
    size_t chunk = d->chunk_bytes;
    if (!chunk) {
        size_t planned = 0;
        for (int i = TRIANGLES; i <= INFO; i++)
            planned = g->report.arrays[i].bytes > planned ? g->report.arrays[i].bytes : planned;
        chunk = planned / 32;
        chunk = chunk < PRISM__UPLOAD_CHUNK_MIN   ? PRISM__UPLOAD_CHUNK_MIN
                : chunk > PRISM__UPLOAD_CHUNK_MAX ? PRISM__UPLOAD_CHUNK_MAX
                                                  : chunk;
    }
    chunk = chunk < GRANULE ? GRANULE : chunk / GRANULE * GRANULE;
    if (largest < chunk)
        chunk = (largest + GRANULE - 1) / GRANULE * GRANULE;
    *st = (prism__staging){0};
    return largest ? prism__staging_open(g->ctx, chunk, st) : PRISM_SUCCESS;
}

static prism_result carry_out(prism_geometry *g, const source *s, const prism_geometry_desc *d)
{
    size_t bytes[PRISM_GEOMETRY_ARRAYS];
    for (int i = 0; i < PRISM_GEOMETRY_ARRAYS; i++)
        bytes[i] = g->report.arrays[i].device_bytes;
    prism__staging st;
    prism_result r = prism__up_open_staging(g, d, bytes, PRISM_GEOMETRY_ARRAYS, &st);
    for (int i = 0; i < PRISM_GEOMETRY_ARRAYS && r == PRISM_SUCCESS; i++)
        r = prism__up_place(g, s, i, &st);
    prism__staging_close(&st);
    return r;
}

static prism_result fill_gl_buffer(const prism_geometry *g, prism_buffer *gl, const source *s,
                                   int which, size_t bytes, const prism_buffer *device_copy,
                                   prism__staging *st)
{
    void *p = NULL;
    const double t0 = prism__up_now();
    prism_result r = prism_buffer_gl_map(gl, NULL, &p);
    prism__up_trace(g, "  GL buffer mapped", t0);
    if (r != PRISM_SUCCESS)
        return r;
    r = device_copy ? prism_buffer_copy(gl, 0, device_copy, 0, bytes)
                    : prism__up_staged(s, which, gl, bytes, st);
    prism__up_trace(g, "  written", t0);
    prism_result u = prism_buffer_gl_unmap(gl, NULL);
    prism__up_trace(g, "  unmapped", t0);
    return r == PRISM_SUCCESS ? u : r;
}

/* The caller's GL buffer `name` registered for the upload to write, or
 * NULL, said once, when interop cannot take it: left for the caller. */
static prism_buffer *gl_target(prism_geometry *g, unsigned name, size_t bytes, const char *tag)
{
    prism_buffer *b = NULL;
    char why[256] = "";
    if (prism__buffer_create_gl_interop(g->ctx, name, bytes, PRISM_GL_WRITE_DISCARD, tag, why,
                                        sizeof why, &b) == PRISM_SUCCESS)
        return b;
    g->ctx->last_error[0] = 0;
    prism__log(g->ctx, PRISM_LOG_WARNING,
               "upload: GL buffer %u not written (%s): left for the caller to fill", name, why);
    return NULL;
}

prism_result prism__up_gl(prism_geometry *g, const source *s, const prism_geometry_desc *d,
                          const prism_buffer *device_triangles)
{
    if (!d->gl_fill || !g->gl_vertices)
        return PRISM_SUCCESS;
    const double t0 = prism__up_now();
    const size_t vbytes = g->report.arrays[VERTICES].bytes;
    const size_t tbytes = d->gl_index_buffer && s->scene ? s->scene->triangles_count * 12 : 0;
    prism_buffer *indices = NULL;
    if (tbytes && !(indices = gl_target(g, d->gl_index_buffer, tbytes, "indices.gl")))
        return PRISM_SUCCESS;
    prism__up_trace(g, "GL: index buffer registered", t0);
    const size_t bytes[2] = {vbytes, device_triangles ? 0 : tbytes};
    prism__staging st;
    prism_result r = prism__up_open_staging(g, d, bytes, 2, &st);
    prism__up_trace(g, "GL: ring open", t0);
    if (r == PRISM_SUCCESS && vbytes)
        r = fill_gl_buffer(g, g->gl_vertices, s, VERTICES, vbytes, NULL, &st);
    prism__up_trace(g, "GL: vertices", t0);
    if (r == PRISM_SUCCESS && tbytes) {
        source scene_order = *s;
        scene_order.triangles = s->scene->indices;
        r = fill_gl_buffer(g, indices, &scene_order, TRIANGLES, tbytes, device_triangles, &st);
    }
    prism__staging_close(&st);
    prism_buffer_release(indices);
    g->report.gl_filled = r == PRISM_SUCCESS;
    g->report.gl_fill_seconds = prism__up_now() - t0;
    return r;
}

/* desc.gl_triangle_buffer: each scene triangle's solid and materials (the
 * placed prism_triangle_info records, scattered back into scene order by
 * a kernel: the colours of a raster view without a pass of the host over
 * every triangle, which for a large scene took most of the raster view's
 * start when the host wrote them through mapped memory). With interop
 * only, as the other GL buffers: report.gl_filled stays true only when it
 * was written too. */
static prism_result gl_triangles(prism_geometry *g, const prism_geometry_desc *d, size_t n)
{
    g->report.gl_filled = false;
    if (!g->gl_vertices || n == 0 || g->ctx->be->gl_codes == NULL)
        return PRISM_SUCCESS;
    const double t0 = prism__up_now();
    prism_buffer *gl = gl_target(g, d->gl_triangle_buffer, n * 8, "triangle_codes.gl");
    prism__up_trace(g, "  GL buffer registered", t0);
    if (!gl)
        return PRISM_SUCCESS;
    void *dst = NULL;
    prism_result r = prism_buffer_gl_map(gl, NULL, &dst);
    prism__up_trace(g, "  mapped", t0);
    if (r == PRISM_SUCCESS) {
        const prism_buffer *parts[2] = {g->device[INFO], g->mapped[INFO]};
        for (int i = 0; i < 2 && r == PRISM_SUCCESS; i++)
            if (parts[i])
                r = g->ctx->be->gl_codes(g->ctx, part(parts[i]),
                                         (uint32_t)(prism_buffer_size(parts[i]) / 16), dst);
        prism__up_trace(g, "  written", t0);
        prism_result u = prism_buffer_gl_unmap(gl, NULL);
        prism__up_trace(g, "  unmapped", t0);
        r = r == PRISM_SUCCESS ? u : r;
    }
    prism_buffer_release(gl);
    g->report.gl_filled = r == PRISM_SUCCESS;
    return r;
}

prism_geometry *prism__up_new(prism_context *ctx, const prism_geometry_desc *d)
{
    prism_geometry *g = calloc(1, sizeof *g);
    if (!g) {
        prism__error(ctx, PRISM_ERROR_OUT_OF_MEMORY, "geometry upload: out of host memory");
        return NULL;
    }
    g->ctx = ctx;
    g->trace = d->trace;
    g->traversal = d->traversal;
    g->wide_collapse_on_host = d->wide_collapse_on_host;
    return g;
}

/* The upload's last steps, whoever built the BVH: optics, view, totals. */
prism_result prism__up_finish(prism_geometry *g, const prism_scene *scene,
                              const prism_geometry_desc *d, const shape *sh, double t0,
                              prism_geometry **out)
{
    prism_result r = PRISM_SUCCESS;
    if (d->gl_fill && d->gl_triangle_buffer && g->report.gl_filled) {
        const double t1 = prism__up_now();
        r = gl_triangles(g, d, sh->triangle_count);
        g->report.gl_fill_seconds += prism__up_now() - t1;
        prism__up_trace(g, "GL triangle codes", t0);
    }
    if (r == PRISM_SUCCESS && scene && !d->skip_optics)
        r = prism__optics_create(g->ctx, scene, &g->optics);
    prism__up_trace(g, "optics", t0);
    if (r != PRISM_SUCCESS) {
        prism_geometry_destroy(g);
        return r;
    }
    prism__up_fill_view(g, sh);
    g->gl_keep_mapped = d->gl_keep_mapped && g->gl_vertices;
    prism_upload_report *rep = &g->report;
    rep->device_bytes = rep->mapped_bytes = 0;
    for (int i = 0; i < PRISM_GEOMETRY_ARRAYS; i++) {
        rep->device_bytes += rep->arrays[i].device_bytes;
        rep->mapped_bytes += rep->arrays[i].mapped_bytes;
    }
    r = prism__up_wide(g, g->host_bvh);
    g->host_bvh = NULL;
    prism__up_trace(g, "wide tree (if any), done", t0);
    if (r != PRISM_SUCCESS) {
        prism_geometry_destroy(g);
        return r;
    }
    rep->seconds = prism__up_now() - t0;
    *out = g;
    return PRISM_SUCCESS;
}

/* Upload a BVH built by the caller or by the host builder. */
prism_result prism__up_given(prism_context *ctx, const prism_scene *scene, const prism_bvh *bvh,
                             const prism_geometry_desc *d, const prism_bvh_build_report *built,
                             double t0, prism_geometry **out)
{
    prism_result r = validate(ctx, scene, bvh);
    if (r != PRISM_SUCCESS)
        return r;
    prism_geometry *g = prism__up_new(ctx, d);
    if (!g)
        return PRISM_ERROR_OUT_OF_MEMORY;
    source s = source_of_bvh(scene, bvh);
    r = prism__up_plan(g, bvh, d);
    if (r == PRISM_SUCCESS && d->gl_vertex_buffer && bvh->vertex_count)
        prism__up_share_vertices(g, bvh->vertex_count, d->gl_vertex_buffer, d->gl_fill);
    if (r == PRISM_SUCCESS)
        r = carry_out(g, &s, d);
    if (r == PRISM_SUCCESS)
        r = prism__up_gl(g, &s, d, NULL);
    if (r != PRISM_SUCCESS) {
        prism_geometry_destroy(g);
        return r;
    }
    g->report.bvh = *built;
    g->host_bvh = bvh;
    shape sh = shape_of_bvh(bvh);
    return prism__up_finish(g, scene, d, &sh, t0, out);
}

/* ---- the entry point */

static prism_result check_settings(prism_context *ctx, const prism_geometry_desc *d)
{
    const uint32_t traces = PRISM_GEOMETRY_TRACE_UPLOAD | PRISM_GEOMETRY_TRACE_BVH;
    if ((unsigned)d->traversal > PRISM_TRAVERSAL_BINARY)
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                            "geometry upload: traversal %d is not a prism_traversal",
                            (int)d->traversal);
    if (d->cuda_bvh_radius != 0 && d->cuda_bvh_radius != PRISM_BVH_CUDA_RADIUS &&
        d->cuda_bvh_radius != PRISM_BVH_CUDA_RADIUS_SMALL)
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                            "geometry upload: cuda_bvh_radius %u: expected 0, %d or %d",
                            d->cuda_bvh_radius, PRISM_BVH_CUDA_RADIUS_SMALL, PRISM_BVH_CUDA_RADIUS);
    if (d->cuda_bvh_tail == 1 || d->cuda_bvh_tail > PRISM_BVH_CUDA_TAIL_MAX)
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                            "geometry upload: cuda_bvh_tail %u: expected 0 or 2..%d",
                            d->cuda_bvh_tail, PRISM_BVH_CUDA_TAIL_MAX);
    if (d->trace & ~traces)
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                            "geometry upload: trace 0x%x has bits beyond PRISM_GEOMETRY_TRACE_*",
                            (unsigned)d->trace);
    return PRISM_SUCCESS;
}

prism_result prism_geometry_upload(prism_context *ctx, const prism_scene *scene,
                                   const prism_bvh *bvh, const prism_geometry_desc *desc,
                                   prism_geometry **out)
{
    if (!ctx || !out || (!bvh && !scene))
        return ctx ? prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                                  "geometry upload: NULL out, or neither a BVH nor a scene")
                   : PRISM_ERROR_INVALID_ARGUMENT;
    *out = NULL;
    prism_geometry_desc d = desc ? *desc : (prism_geometry_desc){0};
    if (d.gl_fill && d.gl_index_buffer && !scene)
        return prism__error(
            ctx, PRISM_ERROR_INVALID_ARGUMENT,
            "geometry upload: gl_index_buffer is filled from a scene, and none was given");
    if ((unsigned)d.builder > PRISM_BVH_BUILDER_CUDA)
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                            "geometry upload: builder %d is not a prism_bvh_builder to ask for",
                            (int)d.builder);
    prism_result r = check_settings(ctx, &d);
    if (r != PRISM_SUCCESS)
        return r;
    double t0 = prism__up_now();
    if (!bvh)
        return prism__up_built(ctx, scene, &d, t0, out);
    prism_bvh_build_report given = {.builder = PRISM_BVH_BUILDER_GIVEN,
                                    .stats = bvh->stats,
                                    .seconds = bvh->stats.build_seconds};
    snprintf(given.why, sizeof given.why, "the caller's BVH");
    return prism__up_given(ctx, scene, bvh, &d, &given, t0, out);
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
    prism_buffer_release(g->wide_nodes);
    prism_buffer_release(g->wide_triangles);
    free(g);
}

/* Read one array back whole (device head, then mapped tail). */
static prism_result read_array(const prism_geometry *g, int which, void *dst)
{
    size_t head = g->device[which] ? prism_buffer_size(g->device[which]) : 0;
    prism_result r = PRISM_SUCCESS;
    if (head)
        r = prism_buffer_read(g->device[which], 0, dst, head);
    if (r == PRISM_SUCCESS && g->mapped[which])
        r = prism_buffer_read(g->mapped[which], 0, (char *)dst + head,
                              prism_buffer_size(g->mapped[which]));
    return r;
}

prism_result prism__geometry_download(const prism_geometry *g, prism_bvh **out)
{
    *out = NULL;
    const prism_geometry_view *v = &g->view;
    prism_bvh *b = calloc(1, sizeof *b);
    if (!b)
        return PRISM_ERROR_OUT_OF_MEMORY;
    b->node_count = v->node_count;
    b->triangle_count = v->triangle_count;
    b->vertex_count = v->vertex_count;
    b->nodes = malloc(b->node_count * sizeof *b->nodes);
    b->triangles = malloc((b->triangle_count ? b->triangle_count : 1) * 12);
    b->triangle_ids = malloc((b->triangle_count ? b->triangle_count : 1) * 4);
    b->vertices = malloc((b->vertex_count ? b->vertex_count : 1) * 12);
    prism_triangle_info *info = malloc((b->triangle_count ? b->triangle_count : 1) * 16);
    prism_result r = b->nodes && b->triangles && b->triangle_ids && b->vertices && info
                         ? PRISM_SUCCESS
                         : PRISM_ERROR_OUT_OF_MEMORY;
    if (r == PRISM_SUCCESS)
        r = read_array(g, NODES, b->nodes);
    if (r == PRISM_SUCCESS && b->triangle_count)
        r = read_array(g, TRIANGLES, b->triangles);
    if (r == PRISM_SUCCESS && b->triangle_count)
        r = read_array(g, INFO, info);
    if (r == PRISM_SUCCESS && b->vertex_count && !g->gl_vertices)
        r = read_array(g, VERTICES, b->vertices);
    if (r == PRISM_SUCCESS && b->vertex_count && g->gl_vertices) {
        void *p = NULL;
        r = map_vertices(g, &p);
        if (r == PRISM_SUCCESS) {
            r = prism_buffer_read(g->gl_vertices, 0, b->vertices, b->vertex_count * 12);
            prism__geometry_unmap(g);
        }
    }
    for (size_t i = 0; r == PRISM_SUCCESS && i < b->triangle_count; i++)
        b->triangle_ids[i] = info[i].id;
    free(info);
    if (r != PRISM_SUCCESS) {
        prism_bvh_free(b);
        return r;
    }
    b->stats = g->report.bvh.stats;
    *out = b;
    return PRISM_SUCCESS;
}

prism_result prism__geometry_download_info(const prism_geometry *g, prism_triangle_info *info)
{
    return g->view.triangle_count ? read_array(g, INFO, info) : PRISM_SUCCESS;
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
    if (r->device_budget)
        OUT("  device budget: %.1f MB for the arrays, %.1f MB used\n", r->device_budget / 1e6,
            r->device_bytes / 1e6);
    const prism_bvh_build_report *b = &r->bvh;
    OUT("  bvh: %s build, %.4f s, %zu nodes, SAH %.2f, depth %u (%s)\n",
        prism_bvh_builder_name(b->builder), b->seconds, b->stats.nodes, b->stats.sah_cost,
        b->stats.max_depth, b->why);
    if (r->inputs_path[0])
        OUT("  build inputs (scene vertices, triangles, codes): %.1f MB %s, %.4f s, %.2f GB/s\n",
            r->inputs_bytes / 1e6, r->inputs_path, r->inputs_seconds, r->inputs_gbps);
    if (r->gl_filled)
        OUT("  GL buffers written by the upload through interop: %.4f s\n", r->gl_fill_seconds);
    if (r->wide_nodes)
        OUT("  wide bvh: %zu nodes, %.1f MB of nodes and %.1f MB of triangles in %s memory, "
            "collapsed on the %s, %.4f s\n",
            r->wide_nodes, r->wide_node_bytes / 1e6, r->wide_triangle_bytes / 1e6,
            r->wide_mapped ? "mapped" : "device", r->wide_on_device ? "device" : "host",
            r->wide_seconds);
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
