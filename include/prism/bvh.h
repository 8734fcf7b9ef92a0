/* prism_bvh: a bounding volume hierarchy over a scene's triangles, laid out
 * for GPU traversal, and the CPU reference ray queries over it. The per-ray
 * code both backends run is prism/device/bvh_traverse.h (prism_bvh_closest,
 * prism_bvh_closest_skip, prism_bvh_any over a prism_geometry_view) and
 * prism/device/ray_triangle.h (watertight ray/triangle test). */
#ifndef PRISM_BVH_H
#define PRISM_BVH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "result.h"
#include "scene.h" /* prism_progress_fn */

#ifdef __cplusplus
extern "C" {
#endif

/* Node layout: 32 bytes, two 16-byte loads.
 *
 *   lo[3], first   | hi[3], count
 *
 * Inner node: count == 0; its children are nodes `first` and `first + 1`.
 * Leaf:       count  > 0; it holds triangles first .. first+count-1 of the
 *             BVH's reordered triangle array.
 * Node 0 is the root. Node 1 is padding wherever the root is an inner node
 * (count 0, first 0, an empty box, never referenced), so that every pair of
 * siblings starts at an even index: with the array 64-byte aligned (as the
 * builder allocates it), a node visit reads both children from one cache
 * line. Nodes are in breadth-first order, so every prefix of
 * the node array is the top of the tree: a child's index is always greater
 * than its parent's, and nodes [0, k) hold no child pointer of a node
 * outside them. The placement engine keeps such a prefix in device memory. */
typedef struct prism_bvh_node {
    float lo[3];
    uint32_t first;
    float hi[3];
    uint32_t count;
} prism_bvh_node;

PRISM_STATIC_ASSERT(sizeof(prism_bvh_node) == 32, "prism_bvh_node is two 16-byte loads");

/* The builder keeps every leaf at depth <= PRISM_BVH_MAX_DEPTH (root = 0), so
 * a traversal stack of PRISM_BVH_MAX_DEPTH entries never overflows (a
 * near-first traversal pushes at most one entry per inner node on its path).
 * Where the SAH would go deeper, the builder falls back to median splits. */
#define PRISM_BVH_MAX_DEPTH 64

/* Node order. Both put every child after its parent, so any prefix of the
 * node array is a top part of the tree (closed under parents) and a split
 * placement stays valid. BFS (the default): a prefix is the top levels, the
 * nodes most rays visit, which is what a device-memory head wants.
 * DFS: breadth-first for the top levels (desc.bfs_levels, default
 * PRISM_BVH_DFS_BFS_LEVELS), then each
 * subtree below depth-first (each sibling pair followed by its first child's
 * subtree), so a ray's path down the tree stays within nearby cache lines
 * and pages (measurably more random rays a second on the CPU). What it
 * costs: a prefix longer than those top levels
 * holds whole subtrees of the left part of the tree rather than the next
 * levels across it, so a split placement keeps a less hot head in device
 * memory. */
#define PRISM_BVH_ORDER_BFS 0u
#define PRISM_BVH_ORDER_DFS 1u
#define PRISM_BVH_DFS_BFS_LEVELS 12u

/* Build quality: more bins cost build time and buy a lower SAH cost. FAST
 * and MEDIUM choose the split of nodes of more than 2^17 triangles from a
 * quarter of them (those whose id is a multiple of 4); HIGH bins them all.
 * The tree does not depend on the thread count. */
#define PRISM_BVH_QUALITY_DEFAULT 0u /* = MEDIUM */
#define PRISM_BVH_QUALITY_FAST 1u    /* 8 bins */
#define PRISM_BVH_QUALITY_MEDIUM 2u  /* 16 bins */
#define PRISM_BVH_QUALITY_HIGH 3u    /* 64 bins */

/* Defaults (all-zero): leaf size 4, quality MEDIUM (16 SAH bins), OpenMP
 * threads as the runtime chooses, no progress calls. SAH cost constants: traversal 1.0,
 * intersection 1.0 per triangle (cost = sum over inner nodes of
 * area/root_area * C_trav + sum over leaves of area/root_area * count * C_isect).
 * The builder makes a leaf where that is cheaper than splitting, and always
 * where a node holds one triangle; it never makes a leaf larger than
 * max_leaf_size (where no SAH split exists, e.g. all centroids coincide, it
 * splits at the median). */
typedef struct prism_bvh_desc {
    unsigned max_leaf_size; /* 1..64; 0 = 4 */
    unsigned quality;       /* PRISM_BVH_QUALITY_*; 0 = MEDIUM */
    unsigned bins;          /* SAH bins per axis, 2..256; 0 = from quality */
    int threads;            /* 0 = OpenMP default */
    unsigned order;         /* PRISM_BVH_ORDER_*; 0 = breadth-first */
    unsigned bfs_levels;    /* ORDER_DFS: levels kept breadth-first, 1..64; 0 = 12. A
                               * placement can size them to its device-memory head */
    prism_log_fn log;
    void *log_user;
    /* Progress, for a bar: `done` of `total` = the triangle count, counting
     * triangles placed into leaves. The first call is (0, total) before any
     * work, the last (total, total) once the BVH is complete, and between
     * them at most ~100 calls, done strictly growing and below total. Every
     * call comes from the thread that called prism_bvh_build (the OpenMP
     * workers only count), so calls never overlap and the callback needs no
     * lock. Returning false cancels: the build frees what it allocated and
     * returns PRISM_ERROR_IO, logging "bvh: cancelled" (the code a cancelled
     * prism_scene_load returns, so one check serves both; no I/O failed).
     * NULL: no calls, and the same tree as with a callback. */
    prism_progress_fn progress;
    void *progress_user;
} prism_bvh_desc;

typedef struct prism_bvh_stats {
    size_t nodes, leaves;
    unsigned max_depth;
    double mean_leaf_triangles;
    unsigned max_leaf_triangles;
    double sah_cost; /* with the constants above */
    size_t node_bytes, vertex_bytes, triangle_bytes, id_bytes;
    double build_seconds;
} prism_bvh_stats;

/* A BVH owns reordered copies of the geometry, ready to upload:
 *   nodes      node_count x prism_bvh_node
 *   vertices   vertex_count x 3 floats (metres), in the input's order
 *   triangles  triangle_count x 3 uint32 vertex indices, in leaf order
 *   triangle_ids  triangle_count x uint32: original (scene) triangle id of
 *              each reordered triangle; use it for solid/material lookups. */
typedef struct prism_bvh {
    prism_bvh_node *nodes;
    size_t node_count;
    float *vertices;
    size_t vertex_count;
    uint32_t *triangles;
    uint32_t *triangle_ids;
    size_t triangle_count;
    prism_bvh_stats stats;
} prism_bvh;

/** Build a BVH over `triangle_count` triangles (3 indices each) on
 * `vertex_count` vertices (3 floats each). Copies what it needs; `desc` may
 * be NULL (defaults). Degenerate triangles (zero area) are kept: they are in
 * a leaf but no ray hits them.
 * An empty input gives a BVH of one node with count 0 and first 0 (no real
 * inner node has first 0: children come after their parent) and an empty box
 * (lo > hi): traversal checks for it and reports a miss without reading the
 * (nonexistent) children.
 * @errors PRISM_ERROR_INVALID_ARGUMENT (NULL out, NULL arrays with nonzero
 *   counts, an index >= vertex_count, a non-finite coordinate used by a
 *   triangle, a bad desc field), PRISM_ERROR_LIMIT (more than 2^31
 *   triangles or 2^32-1 vertices), PRISM_ERROR_OUT_OF_MEMORY, PRISM_ERROR_IO
 *   (cancelled by desc->progress). The message names the triangle and goes
 *   to desc->log.
 * @thread_safety Reentrant; uses desc->threads OpenMP threads; desc->log
 *   and desc->progress are called on the calling thread. */
PRISM_API prism_result prism_bvh_build(const float *positions, size_t vertex_count,
                                       const uint32_t *indices, size_t triangle_count,
                                       const prism_bvh_desc *desc, prism_bvh **out);
/** Free a BVH. Accepts NULL.
 * @errors None.
 * @thread_safety Any thread, the BVH being in use nowhere else. */
PRISM_API void prism_bvh_free(prism_bvh *bvh);

/** SAH cost of any tree in this node layout (node 0 the root; children of
 * inner nodes anywhere in the array), with the constants above. Lets a
 * benchmark cost another builder's tree on the same scale. 0 when empty.
 * @errors None (0 for NULL nodes).
 * @thread_safety Reentrant; reads the nodes only, on OpenMP threads. */
PRISM_API double prism_bvh_sah_cost(const prism_bvh_node *nodes, size_t node_count);

/** A ray: origin, direction (need not be normalised), and [tmin, tmax]. */
typedef struct prism_ray {
    float org[3];
    float tmin;
    float dir[3];
    float tmax;
} prism_ray;

/** A hit: distance along dir, original triangle id (PRISM_BVH_MISS when
 * none), barycentrics (u of v1, v of v2). */
typedef struct prism_hit {
    float t;
    uint32_t triangle;
    float u, v;
} prism_hit;

#define PRISM_BVH_MISS UINT32_MAX

/** Closest hit in [tmin, tmax] (tmin >= 0 expected). Returns whether anything
 * was hit; on a miss hit->triangle is PRISM_BVH_MISS and hit->t is ray->tmax.
 * Watertight: a ray through an edge or vertex shared by triangles of a closed
 * mesh hits one of them. Where several triangles are hit at exactly the same
 * distance (coincident triangles, shared edges), the one first in the BVH's
 * leaf order is reported, whatever order the traversal tests them in.
 * @errors None (a miss for NULL bvh or ray; hit may be NULL).
 * @thread_safety Reentrant; reads the BVH only, so several threads may
 *   query one BVH at once. */
PRISM_API bool prism_bvh_intersect(const prism_bvh *bvh, const prism_ray *ray, prism_hit *hit);
/** Any hit in [tmin, tmax] (shadow rays).
 * @errors None (false for NULL bvh or ray).
 * @thread_safety Reentrant; reads the BVH only, so several threads may
 *   query one BVH at once. */
PRISM_API bool prism_bvh_occluded(const prism_bvh *bvh, const prism_ray *ray);

/** Check that a BVH in this node layout is well formed: for the builders'
 * tests, and for a builder to run on its own result behind the debug flag
 * prism_geometry_desc.validate_bvh, failing the upload with this message
 * rather than handing a bad tree to a kernel. Rules, each reported as
 * "node N: <rule broken>" (or "triangle N: ..." for the last two):
 *  - the empty BVH (triangle_count 0) is exactly one node: count 0, first 0,
 *    lo > hi on every axis;
 *  - every node a traversal reads has a finite box with lo <= hi;
 *  - node 1, where the root is inner, is the padding node: count 0, first 0,
 *    lo > hi on every axis, and no node's child;
 *  - an inner node (count 0) has first != 0, its pair first, first + 1 in
 *    range, first even and greater than its own index, and both children's
 *    boxes inside its own (exact float compare: builders take min/max);
 *  - every node but the padding node is reached from the root exactly once
 *    (no shared subtree, no cycle, no unreachable node), at depth <=
 *    PRISM_BVH_MAX_DEPTH (the traversal stack's bound; root = 0);
 *  - a leaf holds at most max_leaf_size triangles (0: not checked), its range
 *    [first, first + count) lies in [0, triangle_count), and the leaves'
 *    ranges partition [0, triangle_count) exactly;
 *  - a leaf's triangles' vertex indices are < vertex_count and (vertices
 *    non-NULL) its box holds their vertices (exact compare);
 *  - triangle_ids (non-NULL) is a permutation of 0 .. triangle_count - 1.
 * vertices, triangles and triangle_ids may be NULL: their checks are skipped
 * (vertex containment needs both vertices and triangles).
 * O(node_count + triangle_count) time, one pass without recursion, one
 * thread; scratch of node_count bytes plus triangle_count bits: seconds
 * for tens of millions of triangles, so a debugging check.
 * @errors PRISM_ERROR_INVALID_ARGUMENT with the first problem found, in node
 *   order, written to `message` (snprintf semantics: truncated to
 *   message_size, always terminated; "" on success; message may be NULL),
 *   PRISM_ERROR_OUT_OF_MEMORY for the scratch.
 * @thread_safety Reentrant; reads the arrays only. */
PRISM_API prism_result prism_bvh_validate(const prism_bvh_node *nodes, size_t node_count,
                                          const float *vertices, size_t vertex_count,
                                          const uint32_t *triangles, const uint32_t *triangle_ids,
                                          size_t triangle_count, unsigned max_leaf_size,
                                          char *message, size_t message_size);

/** prism_bvh_validate on a prism_bvh's own arrays, leaf size not checked
 * (the BVH does not record the max_leaf_size it was built with).
 * @errors As prism_bvh_validate: PRISM_ERROR_INVALID_ARGUMENT (also NULL
 *   bvh: "bvh is NULL"), PRISM_ERROR_OUT_OF_MEMORY.
 * @thread_safety Reentrant; reads the BVH only. */
PRISM_API prism_result prism_bvh_check(const prism_bvh *bvh, char *message, size_t message_size);

#ifdef __cplusplus
}
#endif

#endif
