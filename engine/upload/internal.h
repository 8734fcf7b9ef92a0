/* The geometry upload's shared pieces: upload.c (planning, carrying the
 * plan out, GL sharing, the view, the report) and engine/upload/build.c (the
 * upload that builds its own BVH, on the device or the host). */
#ifndef PRISM_UPLOAD_INTERNAL_H
#define PRISM_UPLOAD_INTERNAL_H

#include "geometry_internal.h"
#include "engine/memory/internal.h"

enum { NODES, TRIANGLES, VERTICES, INFO };

struct prism_geometry {
    prism_context *ctx;
    prism_buffer *device[PRISM_GEOMETRY_ARRAYS];
    prism_buffer *mapped[PRISM_GEOMETRY_ARRAYS];
    prism_buffer *gl_vertices; /* desc.gl_vertex_buffer, registered (read-only unless gl_fill) */
    bool gl_keep_mapped;       /* desc.gl_keep_mapped: gl_vertices stays mapped between calls */
    prism_geometry_view view;
    prism_optics *optics;
    prism_upload_report report;
    /* the wide tree (engine/upload/wide.c); NULL where there is none */
    prism_buffer *wide_nodes, *wide_triangles;
    unsigned wide_depth;
    const prism_bvh *host_bvh; /* during prism__up_given: the tree to collapse */
    /* the desc's settings that later steps read */
    uint32_t trace; /* PRISM_GEOMETRY_TRACE_* */
    prism_traversal traversal;
    bool wide_collapse_on_host;
};

/* What an upload converts from: a BVH's arrays (leaf order), or, for the
 * device build's inputs, the scene's (ids NULL: scene order). */
typedef struct source {
    const prism_scene *scene;
    const prism_bvh_node *nodes;
    const float *vertices;
    const uint32_t *triangles;
    const uint32_t *ids;
} source;

/* The tree's counts and box, whoever built it. */
typedef struct shape {
    size_t node_count, triangle_count, vertex_count;
    float lo[3], hi[3];
} shape;

double prism__up_now(void);
/* desc.trace's UPLOAD bit: one line per stage of the upload, with the
 * milliseconds since `since` (what the report's totals hide). */
void prism__up_trace(const prism_geometry *g, const char *stage, double since);
prism_result prism__up_memory_figures(prism_context *ctx, const prism_geometry_desc *d,
                                      size_t *free_b, size_t *total_b);
/* The placement of the arrays of a BVH of b's counts into g->report. */
prism_result prism__up_plan(prism_geometry *g, const prism_bvh *b, const prism_geometry_desc *d);
/* Array `which`'s memory (device, demoted to mapped when that runs out,
 * and mapped parts); then with prism__up_place also its bytes from s. */
prism_result prism__up_allocate(prism_geometry *g, int which);
prism_result prism__up_place(prism_geometry *g, const source *s, int which, prism__staging *st);
/* n bytes of array `which` of s into dst through the staging ring. */
prism_result prism__up_staged(const source *s, int which, prism_buffer *dst, size_t n,
                              prism__staging *st);
/* Staging sized for the largest of `bytes` (none when all are 0). */
prism_result prism__up_open_staging(prism_geometry *g, const prism_geometry_desc *d,
                                    const size_t *bytes, int count, prism__staging *st);
/* desc.gl_vertex_buffer registered for the kernels (fill: the upload
 * writes it); without interop the vertices are uploaded as usual. */
void prism__up_share_vertices(prism_geometry *g, size_t vertex_count, unsigned gl_buffer,
                              bool fill);
/* desc.gl_fill: the vertices into the shared GL buffer, and the
 * scene-order triangles into desc.gl_index_buffer (from their device copy
 * when the device build made one, else from the host), each mapped for
 * its copy. Without interop nothing is written and report.gl_filled stays
 * false (prism__up_share_vertices said why). */
prism_result prism__up_gl(prism_geometry *g, const source *s, const prism_geometry_desc *d,
                          const prism_buffer *device_triangles);
const void *prism__up_whole(const prism_geometry *g, int which);
void prism__up_fill_view(prism_geometry *g, const shape *b);
/* An empty geometry keeping d's settings (trace, traversal, collapse). */
prism_geometry *prism__up_new(prism_context *ctx, const prism_geometry_desc *d);
/* The last steps, whoever built the BVH: optics, view, totals, *out. */
prism_result prism__up_finish(prism_geometry *g, const prism_scene *scene,
                              const prism_geometry_desc *d, const shape *sh, double t0,
                              prism_geometry **out);
/* Upload a BVH built by the caller or by the host builder. */
prism_result prism__up_given(prism_context *ctx, const prism_scene *scene, const prism_bvh *bvh,
                             const prism_geometry_desc *d, const prism_bvh_build_report *built,
                             double t0, prism_geometry **out);
/* engine/upload/wide.c: the wide tree from `given` (NULL: the uploaded binary
 * tree, collapsed on the device, or read back where that cannot be),
 * placed as the binary nodes are, into g->view. */
prism_result prism__up_wide(prism_geometry *g, const prism_bvh *given);
/* engine/upload/build.c: build the BVH (desc->builder) and upload. */
prism_result prism__up_built(prism_context *ctx, const prism_scene *scene,
                             const prism_geometry_desc *d, double t0, prism_geometry **out);

#endif
