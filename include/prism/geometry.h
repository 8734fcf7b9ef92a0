/* prism_geometry: a scene's BVH, vertices, triangles and per-triangle codes
 * placed in GPU-reachable memory by a placement plan (prism/placement.h),
 * plus the optics tables, ready for the kernels. Chroma's GPUGeometry in C.
 *
 * Functions: prism_geometry_upload, prism_geometry_destroy,
 *            prism_geometry_report, prism_geometry_report_format,
 *            prism_geometry_vertices_shared. */
#ifndef PRISM_GEOMETRY_H
#define PRISM_GEOMETRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bvh.h"
#include "context.h"
#include "placement.h"
#include "result.h"
#include "scene.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct prism_geometry prism_geometry;

/* The arrays placed, in this order: "bvh.nodes" (splittable at a node,
 * hottest), "triangles", "vertices", "triangle_info". */
#define PRISM_GEOMETRY_ARRAYS 4

/* Defaults (all-zero): policy AUTO, reserve 300 MB, no budget override,
 * 8 MiB staging chunks, vertices uploaded (no GL buffer); on the host
 * backend the free "device" memory is the host's physical memory.
 *
 * gl_vertex_buffer: a GL buffer object (its name) that already holds the
 * BVH's vertices, bvh->vertices (vertex_count x 3 floats, the positions the
 * BVH was built from, in their order), e.g. a raster view's vertex buffer.
 * With CUDA-GL interop it is registered read-only and the kernels read the
 * vertices from it, mapped around each render and propagate call (GL must
 * not use it during those calls, which the one-thread rule gives): the
 * geometry is stored once for GL and CUDA. Without interop (host backend,
 * Mesa, GL on another GPU) the vertices are uploaded as usual and the log
 * says why once per upload. prism_geometry_vertices_shared tells which. */
typedef struct prism_geometry_desc {
    prism_placement_policy policy;
    size_t reserve;            /* 0 = 300 MB; PRISM_PLACEMENT_NO_RESERVE = none */
    /* > 0: pretend free device memory is at most this many bytes, so that a
     * big GPU exercises mapped placement. */
    size_t budget;
    /* Host backend only: the free and total device memory placement sees
     * (0 = the host's physical memory). Ignored on CUDA. */
    size_t host_free_memory;
    size_t host_total_memory;
    size_t chunk_bytes;        /* staging chunk for promoted arrays; 0 = 8 MiB */
    bool skip_optics;          /* do not build optics tables (geometry only) */
    unsigned gl_vertex_buffer; /* 0 = none; see above */
} prism_geometry_desc;

/* Where one array went and how fast it got there. */
typedef struct prism_upload_entry {
    char name[32];
    size_t bytes;
    size_t device_bytes;
    size_t mapped_bytes;
    double seconds;            /* conversion + transfer of this array */
    double gbps;               /* bytes / seconds / 1e9 */
    bool demoted;              /* device allocation failed: moved to mapped memory */
    char reason[256];          /* the plan's reason (+ the demotion) */
    bool gl_shared;            /* read in place from desc.gl_vertex_buffer (no bytes placed) */
} prism_upload_entry;

typedef struct prism_upload_report {
    prism_placement_policy policy;
    size_t free_bytes, total_bytes, reserve; /* what placement saw (after the budget) */
    prism_upload_entry arrays[PRISM_GEOMETRY_ARRAYS];
    size_t array_count;
    size_t device_bytes, mapped_bytes;
    double seconds;            /* the whole upload, optics included */
} prism_upload_report;

/** Upload `bvh` (and the per-triangle codes of `scene`, mapped through
 * bvh->triangle_ids) by the plan made from `desc`. `scene` may be NULL: no
 * codes (solid and surface PRISM_NONE, materials 0xFFFF) and no optics. An
 * out-of-memory error on the device demotes that array to mapped memory and
 * goes on; if that fails too, the upload fails and releases everything.
 * The geometry keeps no pointer into scene or bvh.
 * @errors PRISM_ERROR_INVALID_ARGUMENT (NULL ctx/bvh/out, a triangle id
 *   outside the scene, BVH counts beyond 2^32), PRISM_ERROR_PLACEMENT,
 *   PRISM_ERROR_MAPPED_NOT_ALLOWED, PRISM_ERROR_OUT_OF_MEMORY,
 *   PRISM_ERROR_OUT_OF_DEVICE_MEMORY, PRISM_ERROR_CUDA. */
PRISM_API prism_result prism_geometry_upload(prism_context *ctx, const prism_scene *scene,
                                             const prism_bvh *bvh, const prism_geometry_desc *desc,
                                             prism_geometry **out);
/** Release the geometry's memory and optics. Accepts NULL. */
PRISM_API void prism_geometry_destroy(prism_geometry *geometry);
PRISM_API const prism_upload_report *prism_geometry_report(const prism_geometry *geometry);
/** True when the kernels read the vertices from desc.gl_vertex_buffer
 * through interop (one copy of the geometry for GL and CUDA); false when
 * they were uploaded (no GL buffer given, or interop unavailable). */
PRISM_API bool prism_geometry_vertices_shared(const prism_geometry *geometry);
/** The report as a table; snprintf semantics. */
PRISM_API size_t prism_geometry_report_format(const prism_upload_report *report, char *buffer,
                                              size_t size);

#ifdef __cplusplus
}
#endif

#endif
