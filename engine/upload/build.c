/* The upload that builds its own BVH (prism_geometry_upload given none):
 * which builder and why; the host build, uploaded as given; or the device
 * build: the vertices and scene-order triangles and codes go up first, the
 * tree is built there (the backend's bvh_build: engine/cuda/bvh/build.cu),
 * and the arrays it made are kept where the plan wants them or moved to
 * mapped memory. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/backend.h"
#include "internal.h"

/* ---- a BVH built for the upload */

const char *prism_bvh_builder_name(prism_bvh_builder b)
{
    switch (b) {
    case PRISM_BVH_BUILDER_AUTO: return "auto";
    case PRISM_BVH_BUILDER_HOST: return "host";
    case PRISM_BVH_BUILDER_CUDA: return "cuda";
    case PRISM_BVH_BUILDER_GIVEN: return "given";
    }
    return "unknown";
}

/* desc.validate_bvh: every tree the upload builds is checked with
 * prism_bvh_validate before it is used (a debugging check: a device tree
 * is read back for it, and the pass is O(n) on one thread). */
static prism_result debug_validate(prism_context *ctx, const prism_geometry_desc *d,
                                   const prism_bvh *b, unsigned max_leaf, const char *builder)
{
    if (!d->validate_bvh)
        return PRISM_SUCCESS;
    char msg[512] = "";
    prism_result r = prism_bvh_validate(b->nodes, b->node_count, b->vertices, b->vertex_count,
                                        b->triangles, b->triangle_ids, b->triangle_count, max_leaf,
                                        msg, sizeof msg);
    if (r != PRISM_SUCCESS)
        return prism__error(ctx, r, "geometry upload: the %s builder's tree is invalid: %s",
                            builder, msg);
    prism__log(ctx, PRISM_LOG_INFO, "bvh: the %s builder's tree passed prism_bvh_validate",
               builder);
    return PRISM_SUCCESS;
}

/* The host builder's log lines go to the caller's log (desc.bvh->log) or
 * else the context's; its error line becomes the upload's message. */
typedef struct host_log {
    prism_context *ctx;
    const prism_bvh_desc *user;
    char error[512];
} host_log;

static void host_log_line(void *p, prism_log_level level, const char *msg)
{
    host_log *h = p;
    if (level == PRISM_LOG_ERROR)
        snprintf(h->error, sizeof h->error, "%s", msg);
    if (h->user && h->user->log)
        h->user->log(h->user->log_user, level, msg);
    else if (level != PRISM_LOG_ERROR) /* the error is logged once, by prism__error */
        prism__log(h->ctx, level, "%s", msg);
}

/* The host build, then the upload of its result. */
static prism_result upload_host_built(prism_context *ctx, const prism_scene *scene,
                                      const prism_geometry_desc *d, const char *why, double t0,
                                      prism_geometry **out)
{
    host_log h = {ctx, d->bvh, ""};
    prism_bvh_desc bd = d->bvh ? *d->bvh : (prism_bvh_desc){0};
    if (!bd.threads && ctx->host_threads > 0)
        bd.threads = ctx->host_threads;
    bd.log = host_log_line;
    bd.log_user = &h;
    prism_bvh *bvh = NULL;
    prism_result r = prism_bvh_build(scene->positions, scene->vertices_count, scene->indices,
                                     scene->triangles_count, &bd, &bvh);
    if (r != PRISM_SUCCESS)
        return prism__error(ctx, r, "geometry upload: host BVH build: %s",
                            h.error[0] ? h.error : prism_result_string(r));
    r = debug_validate(ctx, d, bvh, bd.max_leaf_size ? bd.max_leaf_size : 4, "host");
    if (r != PRISM_SUCCESS) {
        prism_bvh_free(bvh);
        return r;
    }
    prism_bvh_build_report built = {.builder = PRISM_BVH_BUILDER_HOST,
                                    .seconds = bvh->stats.build_seconds,
                                    .stats = bvh->stats};
    snprintf(built.why, sizeof built.why, "%s", why);
    r = prism__up_given(ctx, scene, bvh, d, &built, t0, out);
    prism_bvh_free(bvh);
    return r;
}

/* Which builder, and why (one sentence for the log and the report).
 * True: the device's. */
static bool choose_device(prism_context *ctx, const prism_scene *scene,
                          const prism_geometry_desc *d, char *why, size_t size)
{
    if (d->builder == PRISM_BVH_BUILDER_HOST) {
        snprintf(why, size, "the host builder was asked for");
        return false;
    }
    if (ctx->be->bvh_build == NULL) {
        snprintf(why, size, "the host backend has no device builder");
        return false;
    }
    size_t free_b = 0, total_b = 0;
    if (prism__up_memory_figures(ctx, d, &free_b, &total_b) != PRISM_SUCCESS) {
        ctx->last_error[0] = 0;
        snprintf(why, size, "device memory could not be measured");
        return false;
    }
    const size_t n = scene->triangles_count;
    const size_t reserve = d->reserve == 0 ? PRISM_PLACEMENT_DEFAULT_RESERVE
                           : d->reserve == PRISM_PLACEMENT_NO_RESERVE ? 0
                                                                      : d->reserve;
    /* the builder, its scene-order inputs, and the vertices */
    const size_t need = ctx->be->bvh_bytes(n) + 28 * n + 12 * scene->vertices_count;
    if (free_b < reserve || free_b - reserve < need) {
        snprintf(why, size,
                 "the device builder needs %.1f MB of device memory, %.1f MB are free "
                 "above the %.1f MB reserve",
                 need / 1e6, free_b > reserve ? (free_b - reserve) / 1e6 : 0.0, reserve / 1e6);
        return false;
    }
    snprintf(why, size, "built on the device (%.1f MB of temporaries fit)", need / 1e6);
    return true;
}

/* A device array the builder made, moved where the plan puts it: kept
 * (all device), copied to mapped memory, or split. Takes `built`. */
static prism_result adopt(prism_geometry *g, int which, prism_buffer *built)
{
    prism_upload_entry *e = &g->report.arrays[which];
    const size_t bytes = prism_buffer_size(built);
    const double t0 = prism__up_now();
    e->bytes = bytes;
    e->device_bytes = e->device_bytes < bytes ? e->device_bytes : bytes;
    e->mapped_bytes = bytes - e->device_bytes;
    prism_result r = PRISM_SUCCESS;
    if (e->mapped_bytes == 0) {
        g->device[which] = built;
        snprintf(e->reason + strlen(e->reason), sizeof e->reason - strlen(e->reason),
                 "; built on the device");
        return PRISM_SUCCESS;
    }
    if (e->device_bytes) {
        r = prism_buffer_create_device(g->ctx, e->device_bytes, e->name, &g->device[which]);
        if (r == PRISM_SUCCESS)
            r = prism_buffer_copy(g->device[which], 0, built, 0, e->device_bytes);
    }
    if (r == PRISM_SUCCESS)
        r = prism_buffer_create_pinned(g->ctx, e->mapped_bytes,
                                       PRISM_HOST_MAPPED | PRISM_HOST_WRITE_COMBINED, e->name,
                                       &g->mapped[which]);
    if (r == PRISM_SUCCESS)
        r = prism_buffer_copy(g->mapped[which], 0, built, e->device_bytes, e->mapped_bytes);
    prism_buffer_release(built);
    e->seconds = prism__up_now() - t0;
    e->gbps = e->seconds > 0 ? (double)e->mapped_bytes / e->seconds / 1e9 : 0;
    snprintf(e->reason + strlen(e->reason), sizeof e->reason - strlen(e->reason),
             "; built on the device, %s moved to mapped", e->device_bytes ? "tail" : "all");
    g->report.bvh.nodes_moved |= which == NODES;
    return r;
}

/* Scene-order arrays on the device for the builder, released after it. */
typedef struct build_inputs {
    prism_buffer *triangles; /* scene order */
    prism_buffer *info;      /* scene order, gathered into leaf order */
} build_inputs;

/* Whether the scene's arrays were born pinned (prism_pinned_allocator):
 * then each goes up in one DMA, with no pass of the host over it. The
 * vertices count only when the plan puts them all on the device. */
static bool inputs_pinned(const prism_geometry *g, const prism_scene *sc, size_t n)
{
    const prism_upload_entry *v = &g->report.arrays[VERTICES];
    const bool vertices = g->gl_vertices || v->mapped_bytes == 0;
    const void *codes[4] = {sc->triangle_solid, sc->triangle_material_inner,
                            sc->triangle_material_outer, sc->triangle_surface};
    bool ok = n && vertices && prism__host_pinned(g->ctx, sc->indices, n * 12) &&
              (g->gl_vertices || prism__host_pinned(g->ctx, sc->positions, v->bytes));
    for (int i = 0; ok && i < 4; i++)
        ok = prism__host_pinned(g->ctx, codes[i], n * 4);
    return ok;
}

/* The pinned inputs: vertices, triangles and the four code arrays each in
 * one copy on its own stream, all in flight at once; the codes are packed
 * into triangle_info on the device. */
static prism_result upload_pinned(prism_geometry *g, const prism_scene *sc, size_t n,
                                  build_inputs *in)
{
    prism_context *ctx = g->ctx;
    prism_stream *st[3] = {NULL, NULL, NULL};
    prism_buffer *codes = NULL;
    prism_result r = PRISM_SUCCESS;
    for (int i = 0; i < 3 && r == PRISM_SUCCESS; i++)
        r = prism_stream_create(ctx, &st[i]);
    if (r == PRISM_SUCCESS)
        r = prism_buffer_create_device(ctx, n * 16, "triangle_codes.scene", &codes);
    if (r == PRISM_SUCCESS && !g->gl_vertices)
        r = prism__up_allocate(g, VERTICES);
    const double t0 = prism__up_now();
    if (r == PRISM_SUCCESS && !g->gl_vertices && g->report.arrays[VERTICES].bytes)
        r = prism_buffer_write_async(g->device[VERTICES] ? g->device[VERTICES] /* else demoted */
                                                         : g->mapped[VERTICES],
                                     0, sc->positions, g->report.arrays[VERTICES].bytes, st[0]);
    if (r == PRISM_SUCCESS)
        r = prism_buffer_write_async(in->triangles, 0, sc->indices, n * 12, st[1]);
    const uint32_t *arrays[4] = {sc->triangle_solid, sc->triangle_material_inner,
                                 sc->triangle_material_outer, sc->triangle_surface};
    for (int i = 0; i < 4 && r == PRISM_SUCCESS; i++)
        r = prism_buffer_write_async(codes, (size_t)i * n * 4, arrays[i], n * 4, st[2]);
    prism__up_trace(g, "pinned DMA: issued", t0);
    static const char *const done[3] = {"pinned DMA: vertices done", "pinned DMA: triangles done",
                                        "pinned DMA: codes done"};
    for (int i = 0; i < 3; i++) {
        prism_result w = st[i] ? prism_stream_synchronize(st[i]) : PRISM_SUCCESS;
        r = r == PRISM_SUCCESS ? w : r;
        prism__up_trace(g, done[i], t0);
    }
    const double t1 = prism__up_now();
    if (r == PRISM_SUCCESS)
        r = ctx->be->pack_info(ctx, prism_buffer_device_pointer(codes), (uint32_t)n,
                               prism_buffer_device_pointer(in->info), st[2]);
    prism_upload_entry *v = &g->report.arrays[VERTICES];
    if (!g->gl_vertices) {
        v->seconds = t1 - t0;
        v->gbps = v->seconds > 0 ? (double)v->bytes / v->seconds / 1e9 : 0;
    }
    prism_buffer_release(codes);
    for (int i = 0; i < 3; i++)
        prism_stream_destroy(st[i]);
    prism_upload_report *rep = &g->report;
    snprintf(rep->inputs_path, sizeof rep->inputs_path, "pinned DMA");
    rep->inputs_bytes = n * 28 + (g->gl_vertices ? 0 : v->bytes);
    rep->inputs_seconds = t1 - t0;
    rep->inputs_gbps = rep->inputs_seconds > 0 ? rep->inputs_bytes / rep->inputs_seconds / 1e9 : 0;
    return r;
}

static prism_result upload_inputs(prism_geometry *g, const source *s, const prism_geometry_desc *d,
                                  size_t n, build_inputs *in)
{
    prism_result r = PRISM_SUCCESS;
    if (n)
        r = prism_buffer_create_device(g->ctx, n * 12, "triangles.scene", &in->triangles);
    if (r == PRISM_SUCCESS && n)
        r = prism_buffer_create_device(g->ctx, n * 16, "triangle_info.scene", &in->info);
    if (r != PRISM_SUCCESS)
        return r;
    if (inputs_pinned(g, s->scene, n))
        return upload_pinned(g, s->scene, n, in);
    const double t0 = prism__up_now();
    const size_t bytes[3] = {n * 16, g->report.arrays[VERTICES].device_bytes, 0};
    prism__staging st;
    r = prism__up_open_staging(g, d, bytes, 3, &st);
    /* vertices where the plan puts them (or the GL buffer), then the
     * builder's inputs, all through the same staging ring */
    prism__up_trace(g, "staged: ring open", t0);
    if (r == PRISM_SUCCESS && !g->gl_vertices)
        r = prism__up_place(g, s, VERTICES, &st);
    prism__up_trace(g, "staged: vertices", t0);
    if (r == PRISM_SUCCESS && n)
        r = prism__up_staged(s, TRIANGLES, in->triangles, n * 12, &st);
    prism__up_trace(g, "staged: triangles", t0);
    if (r == PRISM_SUCCESS && n)
        r = prism__up_staged(s, INFO, in->info, n * 16, &st);
    prism__up_trace(g, "staged: codes packed", t0);
    prism__staging_close(&st);
    prism_upload_report *rep = &g->report;
    snprintf(rep->inputs_path, sizeof rep->inputs_path, "staged");
    rep->inputs_bytes = n * 28 + (g->gl_vertices ? 0 : g->report.arrays[VERTICES].bytes);
    rep->inputs_seconds = prism__up_now() - t0;
    rep->inputs_gbps = rep->inputs_seconds > 0 ? rep->inputs_bytes / rep->inputs_seconds / 1e9 : 0;
    return r;
}

static prism_result build_on_device(prism_geometry *g, const prism_scene *scene,
                                    const prism_geometry_desc *d, const build_inputs *in,
                                    prism__device_bvh *db)
{
    const void *vertices = prism__up_whole(g, VERTICES);
    prism_result r = PRISM_SUCCESS;
    if (g->gl_vertices) {
        void *p = NULL;
        r = prism_buffer_gl_map(g->gl_vertices, NULL, &p);
        vertices = p;
    }
    if (r != PRISM_SUCCESS)
        return r;
    const prism__device_bvh_settings settings = {
        .max_leaf_size = d->bvh ? d->bvh->max_leaf_size : 0,
        .radius = d->cuda_bvh_radius,
        .tail = d->cuda_bvh_tail,
        .hploc = d->cuda_bvh_hploc,
        .trace = (d->trace & PRISM_GEOMETRY_TRACE_BVH) != 0};
    r = g->ctx->be->bvh_build(g->ctx, vertices, (uint32_t)scene->vertices_count,
                              in->triangles ? prism_buffer_device_pointer(in->triangles) : NULL,
                              (uint32_t)scene->triangles_count, &settings, db);
    if (g->gl_vertices) {
        prism_result u = prism_buffer_gl_unmap(g->gl_vertices, NULL);
        r = r == PRISM_SUCCESS ? u : r;
    }
    return r;
}

/* The device build: vertices and scene-order triangles and codes up, the
 * tree built there, the arrays kept or moved where the plan puts them. */
static prism_result upload_device_built(prism_context *ctx, const prism_scene *scene,
                                        const prism_geometry_desc *d, const char *why, double t0,
                                        prism_geometry **out)
{
    const size_t n = scene->triangles_count;
    prism_geometry *g = prism__up_new(ctx, d);
    if (!g)
        return PRISM_ERROR_OUT_OF_MEMORY;
    /* planned with the most nodes a tree can have (2n: 2n-1 and the
     * padding node); the nodes' device part is trimmed to the real count */
    prism_bvh bound = {.node_count = 2 * (n ? n : 1),
                       .triangle_count = n,
                       .vertex_count = scene->vertices_count};
    source s = {scene, NULL, scene->positions, scene->indices, NULL};
    build_inputs in = {0};
    prism__device_bvh db = {0};
    prism_result r = prism__up_plan(g, &bound, d);
    if (r == PRISM_SUCCESS && d->gl_vertex_buffer && scene->vertices_count)
        prism__up_share_vertices(g, scene->vertices_count, d->gl_vertex_buffer, d->gl_fill);
    prism__up_trace(g, "planned", t0);
    if (r == PRISM_SUCCESS)
        r = upload_inputs(g, &s, d, n, &in);
    prism__up_trace(g, "inputs up", t0);
    if (r == PRISM_SUCCESS) /* before the build, which reads the vertices there */
        r = prism__up_gl(g, &s, d, in.triangles);
    prism__up_trace(g, "GL buffers written", t0);
    if (r == PRISM_SUCCESS)
        r = build_on_device(g, scene, d, &in, &db);
    prism__up_trace(g, "built on the device", t0);
    prism_buffer_release(in.triangles);
    in.triangles = NULL;
    if (r == PRISM_SUCCESS) {
        g->report.bvh = db.report;
        snprintf(g->report.bvh.why, sizeof g->report.bvh.why, "%s", why);
        r = adopt(g, NODES, db.nodes);
        db.nodes = NULL;
    }
    if (r == PRISM_SUCCESS && n) {
        r = adopt(g, TRIANGLES, db.triangles);
        db.triangles = NULL;
    }
    if (r == PRISM_SUCCESS && n)
        r = prism__up_allocate(g, INFO);
    if (r == PRISM_SUCCESS && n)
        r = ctx->be->gather_info(ctx, prism_buffer_device_pointer(in.info),
                                 prism_buffer_device_pointer(db.ids), (uint32_t)n,
                                 (void *)prism__up_whole(g, INFO));
    prism__up_trace(g, "adopted, codes gathered", t0);
    prism_buffer_release(in.info);
    prism_buffer_release(db.nodes);
    prism_buffer_release(db.triangles);
    prism_buffer_release(db.ids);
    if (r != PRISM_SUCCESS) {
        prism_geometry_destroy(g);
        return r;
    }
    shape sh = {db.node_count, n, scene->vertices_count, {0}, {0}};
    memcpy(sh.lo, db.bbox_lo, sizeof sh.lo);
    memcpy(sh.hi, db.bbox_hi, sizeof sh.hi);
    if (d->validate_bvh) { /* read back through the view (finish fills it again, cheaply) */
        prism__up_fill_view(g, &sh);
        prism_bvh *back = NULL;
        r = prism__geometry_download(g, &back);
        if (r == PRISM_SUCCESS)
            r = debug_validate(ctx, d, back,
                               d->bvh && d->bvh->max_leaf_size ? d->bvh->max_leaf_size : 4, "CUDA");
        prism_bvh_free(back);
        if (r != PRISM_SUCCESS) {
            prism_geometry_destroy(g);
            return r;
        }
    }
    return prism__up_finish(g, scene, d, &sh, t0, out);
}

prism_result prism__up_built(prism_context *ctx, const prism_scene *scene,
                             const prism_geometry_desc *d, double t0, prism_geometry **out)
{
    char why[256];
    bool device = choose_device(ctx, scene, d, why, sizeof why);
    if (!device && d->builder == PRISM_BVH_BUILDER_CUDA)
        return prism__error(ctx,
                            ctx->be->bvh_build != NULL ? PRISM_ERROR_OUT_OF_DEVICE_MEMORY
                                                       : PRISM_ERROR_UNSUPPORTED,
                            "geometry upload: the CUDA BVH builder was asked for, but %s", why);
    if (scene->materials_count >= 0xFFFF)
        return prism__error(ctx, PRISM_ERROR_LIMIT,
                            "geometry upload: %zu materials; triangle codes hold at most 65534",
                            scene->materials_count);
    if (scene->triangles_count > UINT32_MAX / 2 || scene->vertices_count >= UINT32_MAX)
        return prism__error(ctx, PRISM_ERROR_LIMIT,
                            "geometry upload: %zu triangles on %zu vertices is beyond the limits "
                            "(2^31 triangles, 2^32-1 vertices)",
                            scene->triangles_count, scene->vertices_count);
    if (device)
        return upload_device_built(ctx, scene, d, why, t0, out);
    prism__log(ctx, ctx->be->bvh_build != NULL ? PRISM_LOG_WARNING : PRISM_LOG_INFO,
               "bvh: built on the host: %s", why);
    return upload_host_built(ctx, scene, d, why, t0, out);
}
