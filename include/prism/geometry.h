/* prism_geometry: a scene's BVH, vertices, triangles and per-triangle codes
 * placed in GPU-reachable memory by a placement plan (prism/placement.h),
 * plus the optics tables, ready for the kernels. Chroma's GPUGeometry in C.
 *
 * Functions: prism_geometry_upload, prism_geometry_destroy,
 *            prism_geometry_report, prism_geometry_report_format,
 *            prism_geometry_vertices_shared, prism_geometry_gl_release. */
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

/* Who builds the BVH when prism_geometry_upload is given none.
 * AUTO: CUDA when the context is CUDA and device memory (above the
 * reserve) holds the builder's temporaries, else the host, with one log
 * line saying why. HOST: the OpenMP builder (prism_bvh_build). CUDA: the
 * device builder, or PRISM_ERROR_UNSUPPORTED on the host backend.
 * GIVEN appears only in reports: the caller passed its own BVH. */
typedef enum prism_bvh_builder {
    PRISM_BVH_BUILDER_AUTO = 0,
    PRISM_BVH_BUILDER_HOST,
    PRISM_BVH_BUILDER_CUDA,
    PRISM_BVH_BUILDER_GIVEN
} prism_bvh_builder;

/* The CUDA build's phases, in order, as prism_bvh_build_report times them:
 * Morton codes (with the input check), sort, hierarchy (clustering),
 * optimisation (SAH collapse into leaves, depths), layout (breadth-first
 * nodes, triangles in leaf order). */
#define PRISM_BVH_PHASES 5

typedef struct prism_bvh_build_report {
    prism_bvh_builder builder;              /* HOST, CUDA or GIVEN */
    char why[256];                          /* why that builder (the fallback's reason) */
    double seconds;                         /* the build, wall clock (host: prism_bvh_build's) */
    double phase_seconds[PRISM_BVH_PHASES]; /* CUDA, GPU time of each phase */
    unsigned iterations;                    /* CUDA: clustering passes (H-PLOC: 1, its launch) */
    bool balanced;            /* CUDA: the clustered tree was deeper than PRISM_BVH_MAX_DEPTH,
                                * so a balanced tree over the Morton order was built instead */
    size_t peak_device_bytes; /* CUDA: temporaries and outputs at their peak */
    bool nodes_moved;         /* CUDA: built in device memory, then (part) moved to mapped */
    prism_bvh_stats stats;
    bool hploc; /* CUDA: clustered by H-PLOC's one launch (cuda_bvh_hploc), not PLOC's passes */
} prism_bvh_build_report;

/** "auto", "host", "cuda" or "given"; "unknown" for anything else.
 * @errors None.
 * @thread_safety Any thread. */
PRISM_API const char *prism_bvh_builder_name(prism_bvh_builder builder);

/* The arrays placed, in this order: "bvh.nodes" (splittable at a node,
 * hottest), "triangles", "vertices", "triangle_info". */
#define PRISM_GEOMETRY_ARRAYS 4

/* Which tree the kernels walk (prism_geometry_desc.traversal).
 * AUTO: the wide tree (prism/device/bvh_wide.h) is made where a walk of it
 * was measured the faster: on the host backend; on CUDA where the binary
 * nodes are all in mapped memory (the wide nodes are smaller, so a ray
 * reads fewer bytes across PCIe); and on CUDA with the binary nodes all
 * in device memory where the wide tree fits there too, keeping the
 * placement's reserve and device budget, for the photons' trace (the
 * render keeps the tuned binary walk there, which issues fewer
 * instructions a coherent ray). WIDE: made whatever the placement.
 * BINARY: never made. A tree too deep to collapse keeps the binary walk
 * in every case, with a warning. */
typedef enum prism_traversal {
    PRISM_TRAVERSAL_AUTO = 0,
    PRISM_TRAVERSAL_WIDE,
    PRISM_TRAVERSAL_BINARY
} prism_traversal;

/* Debugging traces of an upload (prism_geometry_desc.trace): lines to the
 * context's log at PRISM_LOG_DEBUG, so the context's log_level must let
 * DEBUG through. UPLOAD: each stage of the upload with the milliseconds
 * since it began (what the report's totals hide). BVH: where the CUDA
 * build's clustering time goes (its passes and its tail kernel). */
enum { PRISM_GEOMETRY_TRACE_UPLOAD = 1u << 0, PRISM_GEOMETRY_TRACE_BVH = 1u << 1 };

/* The CUDA builder's settings (prism_geometry_desc.cuda_bvh_radius and
 * cuda_bvh_tail): the nearest-neighbour window, +-radius clusters of the
 * Morton order (H-PLOC: +-radius lanes of the 32 clusters a warp merges);
 * and the clusters left when one block's tail kernel takes over the
 * passes' clustering, at most PRISM_BVH_CUDA_TAIL_MAX. */
#define PRISM_BVH_CUDA_RADIUS 16
#define PRISM_BVH_CUDA_RADIUS_SMALL 8
#define PRISM_BVH_CUDA_TAIL_MAX 4096

/* Defaults (all-zero): policy AUTO, reserve 300 MB, no budget override,
 * staging chunks of a 32nd of the largest array (1-8 MiB), vertices
 * uploaded (no GL buffer), BVH builder AUTO with prism_bvh_desc's
 * defaults; on the host backend the free "device" memory is the host's
 * physical memory; traversal AUTO, the wide tree collapsed where the
 * binary one was built; no validation of the built tree; the CUDA
 * builder's window of 16 and tail of 4096 clusters; no traces; no
 * device budget.
 *
 * builder, bvh: used when prism_geometry_upload gets no BVH (bvh NULL) and
 * builds one from the scene. bvh (may be NULL) is the host build's
 * descriptor; its max_leaf_size applies to the CUDA build too, which always
 * lays nodes out breadth-first and ignores the other fields.
 *
 * gl_vertex_buffer: a GL buffer object (its name) that already holds the
 * BVH's vertices, bvh->vertices (vertex_count x 3 floats, the positions the
 * BVH was built from, in their order), e.g. a raster view's vertex buffer.
 * With CUDA-GL interop it is registered read-only and the kernels read the
 * vertices from it, mapped around each render and propagate call (GL must
 * not use it during those calls, which the one-thread rule gives): the
 * geometry is stored once for GL and CUDA. Without interop (host backend,
 * Mesa, GL on another GPU) the vertices are uploaded as usual and the log
 * says why once per upload. prism_geometry_vertices_shared tells which.
 *
 * gl_keep_mapped: the shared GL buffer stays mapped for CUDA from the
 * first render or propagate on, instead of being mapped and unmapped
 * around each call (a map and unmap cost a sizeable part of a
 * ray-traced frame, at times more than the frame: the README has the
 * figures). The caller then calls
 * prism_geometry_gl_release before GL uses the buffer (a raster draw);
 * the next call maps it again.
 *
 * gl_fill: the upload writes the GL buffers instead of expecting them
 * filled: the vertices (vertex_count x 3 floats, the scene's order) into
 * gl_vertex_buffer, and, when gl_index_buffer is given, the scene's
 * triangles (triangles_count x 3 uint32 vertex indices, the scene's order,
 * so gl_PrimitiveID is the scene triangle) into it. The caller allocates
 * them at those sizes (glBufferData(target, size, NULL, usage)); each byte
 * then crosses PCIe once for GL and the kernels. With interop the vertices
 * are then read in place as above; without it the upload fills nothing,
 * logs why once, and report.gl_filled is false: fill them yourself
 * (glBufferSubData). gl_index_buffer needs a scene.
 *
 * gl_triangle_buffer (with gl_fill and gl_vertex_buffer): a GL buffer of
 * triangles_count x 8 bytes that the upload fills, in the scene's order
 * (gl_PrimitiveID), with two uint32 per triangle: the solid index
 * (PRISM_NONE: none) and the materials, inner | outer << 16 (0xFFFF:
 * none; prism_materials_pack of prism/device/geometry_view.h), as
 * prism_triangle_info holds them. Read it as a GL_RG32UI buffer
 * texture to colour or hide triangles by material or solid: a kernel
 * writes it from the uploaded codes, so no host pass over the triangles
 * is needed. Filled when the other GL buffers are (report.gl_filled);
 * otherwise left to the caller like them.
 *
 * traversal: which tree the kernels walk (prism_traversal above).
 *
 * wide_collapse_on_host: a device-built tree is read back and collapsed
 * into the wide tree on the host, as happens anyway where the device
 * collapse's temporaries do not fit; the same bytes, for comparing the
 * two paths' time. False: collapsed where the binary tree is.
 *
 * validate_bvh: every tree the upload builds (not one the caller gives)
 * is checked with prism_bvh_validate before a kernel reads it; a bad tree
 * fails the upload with its message. A debugging check: a device-built
 * tree is read back for it, and the pass is O(n) on one thread.
 *
 * cuda_bvh_radius, cuda_bvh_tail: the CUDA builder's tuning, for the
 * benchmark (ignored by the host builder). radius 0 = 16
 * (PRISM_BVH_CUDA_RADIUS); the only other is 8 (_SMALL): it builds
 * faster, and its tree costs the rays more. tail 0 = 4096
 * (PRISM_BVH_CUDA_TAIL_MAX); else 2..4096. Any other value is
 * PRISM_ERROR_INVALID_ARGUMENT.
 *
 * cuda_bvh_hploc: the CUDA builder clusters in one launch (H-PLOC: each
 * warp merges the clusters of one range of the Morton codes' radix tree,
 * bottom-up) instead of PLOC's passes over the whole cluster array (a few
 * dozen launches and host reads, then the tail kernel from cuda_bvh_tail
 * clusters). Not the default: it has measured slower, its top-down by
 * levels most, and its tree slower for primary rays from outside (the
 * README's builder figures). Either falls back to the passes' balanced
 * tree where its own is too deep.
 *
 * trace: PRISM_GEOMETRY_TRACE_* bits (above); 0 = none.
 *
 * device_budget: at most this many bytes of the placed arrays in device
 * memory (prism_placement_desc.device_budget), however much more is
 * free: with policy AUTO a budget below the BVH nodes' bytes keeps the
 * top levels of the tree on the device and maps the rest. Unlike `budget`, which only
 * lowers the free memory that the reserve is then taken from, it counts
 * the arrays' own bytes. Not counted: the CUDA builder's temporaries and a
 * wide tree (placed as the binary nodes are, so mapped beside a split). */
typedef struct prism_geometry_desc {
    prism_placement_policy policy;
    size_t reserve; /* 0 = 300 MB; PRISM_PLACEMENT_NO_RESERVE = none */
    /* > 0: pretend free device memory is at most this many bytes, so that a
     * big GPU exercises mapped placement. */
    size_t budget;
    /* Host backend only: the free and total device memory placement sees
     * (0 = the host's physical memory). Ignored on CUDA. */
    size_t host_free_memory;
    size_t host_total_memory;
    size_t chunk_bytes;          /* staging chunk for promoted arrays; 0 = auto */
    bool skip_optics;            /* do not build optics tables (geometry only) */
    unsigned gl_vertex_buffer;   /* 0 = none; see above */
    bool gl_fill;                /* write the GL buffers; see above */
    unsigned gl_index_buffer;    /* with gl_fill: 0 = none; see above */
    bool gl_keep_mapped;         /* keep gl_vertex_buffer mapped between calls; see above */
    unsigned gl_triangle_buffer; /* with gl_fill: 0 = none; solid and materials; see above */
    prism_bvh_builder builder;   /* AUTO; see above */
    const prism_bvh_desc *bvh;   /* NULL = defaults */
    prism_traversal traversal;   /* AUTO; see above */
    bool wide_collapse_on_host;  /* false = where the binary tree is; see above */
    bool validate_bvh;           /* false = trust the builders; see above */
    unsigned cuda_bvh_radius;    /* 0 = 16; see above */
    unsigned cuda_bvh_tail;      /* 0 = 4096; see above */
    bool cuda_bvh_hploc;         /* false = PLOC's passes; see above */
    uint32_t trace;              /* PRISM_GEOMETRY_TRACE_*; 0 = none */
    size_t device_budget;        /* 0 = no cap; see above */
} prism_geometry_desc;

/* Where one array went and how fast it got there. */
typedef struct prism_upload_entry {
    char name[32];
    size_t bytes;
    size_t device_bytes;
    size_t mapped_bytes;
    double seconds;   /* conversion + transfer of this array */
    double gbps;      /* bytes / seconds / 1e9 */
    bool demoted;     /* device allocation failed: moved to mapped memory */
    char reason[256]; /* the plan's reason (+ the demotion) */
    bool gl_shared;   /* read in place from desc.gl_vertex_buffer (no bytes placed) */
} prism_upload_entry;

typedef struct prism_upload_report {
    prism_placement_policy policy;
    size_t free_bytes, total_bytes, reserve; /* what placement saw (after the budget) */
    size_t device_budget;                    /* desc.device_budget; 0 = none */
    prism_upload_entry arrays[PRISM_GEOMETRY_ARRAYS];
    size_t array_count;
    size_t device_bytes, mapped_bytes;
    double seconds;             /* the whole upload, optics included (and the BVH build) */
    prism_bvh_build_report bvh; /* who built the BVH, how long, its figures */
    bool gl_filled;             /* desc.gl_fill: the GL buffers were written through interop */
    double gl_fill_seconds;     /* how long writing them took */
    /* The device build's inputs (the scene's vertices unless GL holds them,
     * its triangles and its four per-triangle arrays): "pinned DMA" when the
     * scene's arrays were born pinned (prism_pinned_allocator), one copy
     * each with no host pass; "staged" through the pinned staging ring
     * otherwise; "" when the tree was not built on the device. */
    char inputs_path[16];
    size_t inputs_bytes;
    double inputs_seconds, inputs_gbps;
    /* The wide BVH made next to the binary one (8-wide quantised nodes and
     * the triangles copied in their leaves' order), 0 nodes where none was:
     * desc.traversal decides, by default made on the host backend and, on
     * CUDA, where the binary nodes are all mapped or all on the device with
     * room for it there (prism_traversal).
     * In device memory, or mapped (wide_mapped) where the binary nodes are;
     * the ledger holds it as "bvh.wide_nodes" and "bvh.wide_triangles"; not
     * in device_bytes / mapped_bytes, which are the planned arrays'. */
    size_t wide_nodes, wide_node_bytes, wide_triangle_bytes;
    bool wide_mapped;
    /* Collapsed on the device from the device-built tree (else on the
     * host: the host build's tree, or the device's read back where the
     * device collapse's temporaries did not fit). */
    bool wide_on_device;
    double wide_seconds; /* the collapse (and read-back) and the copies */
} prism_upload_report;

/** Upload `bvh` (and the per-triangle codes of `scene`, mapped through
 * bvh->triangle_ids) by the plan made from `desc`. `scene` may be NULL: no
 * codes (solid and surface PRISM_NONE, materials 0xFFFF) and no optics.
 * `bvh` NULL: build one over the scene's triangles (desc->builder): on the
 * device, the vertices and triangles are uploaded first and the builder
 * writes the nodes, the triangles in leaf order and their codes where the
 * kernels read them, so nothing of the tree crosses PCIe (a plan that puts
 * nodes or triangles in mapped memory gets them copied out after the build);
 * on the host, prism_bvh_build runs and the result is uploaded as given.
 * report->bvh says which and why. An
 * out-of-memory error on the device demotes that array to mapped memory and
 * goes on; if that fails too, the upload fails and releases everything.
 * The geometry keeps no pointer into scene or bvh.
 * @errors PRISM_ERROR_INVALID_ARGUMENT (NULL ctx/out, NULL bvh and scene, a
 *   triangle id outside the scene, BVH counts beyond 2^32, a bad triangle of
 *   the scene when building, builder GIVEN or unknown, gl_index_buffer
 *   without a scene, a traversal, cuda_bvh_radius, cuda_bvh_tail or trace
 *   bit outside those named above; with validate_bvh, a built tree that
 *   fails prism_bvh_validate), PRISM_ERROR_UNSUPPORTED (builder CUDA on
 *   the host backend),
 *   PRISM_ERROR_LIMIT (65535 materials or more; building: more than 2^31
 *   triangles or 2^32-1 vertices), PRISM_ERROR_IO (a host build cancelled
 *   by desc->bvh->progress), PRISM_ERROR_PLACEMENT,
 *   PRISM_ERROR_MAPPED_NOT_ALLOWED, PRISM_ERROR_OUT_OF_MEMORY,
 *   PRISM_ERROR_OUT_OF_DEVICE_MEMORY (also builder CUDA where its
 *   temporaries do not fit), PRISM_ERROR_CUDA.
 * @thread_safety As the context: one thread at a time. With a GL buffer in
 *   desc, the GL context is current on it. */
PRISM_API prism_result prism_geometry_upload(prism_context *ctx, const prism_scene *scene,
                                             const prism_bvh *bvh, const prism_geometry_desc *desc,
                                             prism_geometry **out);
/** Release the geometry's memory and optics. Accepts NULL.
 * @errors None.
 * @thread_safety As the geometry's context: one thread at a time. */
PRISM_API void prism_geometry_destroy(prism_geometry *geometry);
/** What the upload did (prism_upload_report); lives as long as the geometry.
 * @errors None (NULL for NULL).
 * @thread_safety As the geometry's context: one thread at a time. */
PRISM_API const prism_upload_report *prism_geometry_report(const prism_geometry *geometry);
/** True when the kernels read the vertices from desc.gl_vertex_buffer
 * through interop (one copy of the geometry for GL and CUDA); false when
 * they were uploaded (no GL buffer given, or interop unavailable).
 * @errors None (false for NULL).
 * @thread_safety As the geometry's context: one thread at a time. */
PRISM_API bool prism_geometry_vertices_shared(const prism_geometry *geometry);
/** With desc.gl_keep_mapped: unmap the shared GL buffer so that GL may use
 * it (the next render or propagate maps it again). Without it, or when
 * nothing is mapped, it does nothing. Accepts NULL.
 * @errors PRISM_ERROR_CUDA (the unmap failed).
 * @thread_safety As the geometry's context: one thread at a time. */
PRISM_API prism_result prism_geometry_gl_release(prism_geometry *geometry);
/** The report as a table; snprintf semantics.
 * @errors None ("" for NULL report).
 * @thread_safety Any thread; reads the report only. */
PRISM_API size_t prism_geometry_report_format(const prism_upload_report *report, char *buffer,
                                              size_t size);

#ifdef __cplusplus
}
#endif

#endif
