/* What the kernels module reads from an uploaded prism_geometry: the
 * pointers of the geometry view and the optics tables built with it. */
#ifndef PRISM_GEOMETRY_INTERNAL_H
#define PRISM_GEOMETRY_INTERNAL_H

#include "prism/device/geometry_view.h"
#include "optics.h"
#include "prism/geometry.h"
#include "prism/memory.h"

/* The pointers kernels use (device pointers on CUDA, heap on the host
 * backend), valid until prism_geometry_destroy. */
const prism_geometry_view *prism__geometry_view(const prism_geometry *g);
/* The optics tables (NULL without a scene or with desc.skip_optics). */
prism_optics *prism__geometry_optics(const prism_geometry *g);
prism_context *prism__geometry_context(const prism_geometry *g);
/* The view for one launch: with vertices shared from a GL buffer, that
 * buffer is mapped (CUDA may read it, GL must not) and *view points into it
 * until prism__geometry_unmap; otherwise *view is the geometry's own view
 * and unmap does nothing. Call unmap after a successful map only. */
prism_result prism__geometry_map(const prism_geometry *g, prism_geometry_view *view);
prism_result prism__geometry_unmap(const prism_geometry *g);

/* The tree as the kernels see it, read back into a host prism_bvh (nodes,
 * leaf-order triangles, ids from the codes, vertices): for tests that
 * check a device-built tree with the host's queries. Free with
 * prism_bvh_free. */
prism_result prism__geometry_download(const prism_geometry *g, prism_bvh **out);
/* Its per-triangle records (view.triangle_count of them, leaf order) read
 * back into `info`: with the tree above, a host view of the geometry for
 * host-side traces (the muon source, engine/launch/gensteps_muon.c). */
prism_result prism__geometry_download_info(const prism_geometry *g, prism_triangle_info *info);
/* Its wide tree read back (engine/upload/wide.c), for the same tests;
 * *out NULL where the upload made none. Free with prism__bvh_wide_free. */
struct prism_bvh_wide;
prism_result prism__geometry_download_wide(const prism_geometry *g, struct prism_bvh_wide **out);

/* gl_buffer.c: a GL buffer registered with CUDA-GL interop, or
 * PRISM_ERROR_INTEROP_UNAVAILABLE with `why` filled and nothing logged (no
 * copy path): for callers that fall back on their own. */
/* The kernel pointer of a GL buffer mapped for CUDA now, else NULL. */
void *prism__buffer_gl_mapped_pointer(const prism_buffer *b);
prism_result prism__buffer_create_gl_interop(prism_context *ctx, unsigned gl_buffer, size_t size,
                                             prism_gl_flags flags, const char *tag, char *why,
                                             size_t why_size, prism_buffer **out);

#endif
