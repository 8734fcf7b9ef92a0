/* prism_bvh: a bounding volume hierarchy over a scene's triangles, laid out
 * for GPU traversal, and the CPU reference ray queries over it. */
#ifndef PRISM_BVH_H
#define PRISM_BVH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "result.h"

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
 * Node 0 is the root. Nodes are in breadth-first order, so every prefix of
 * the node array is the top of the tree: a child's index is always greater
 * than its parent's, and nodes [0, k) hold no child pointer of a node
 * outside them. The placement engine keeps such a prefix in device memory. */
typedef struct prism_bvh_node {
    float lo[3];
    uint32_t first;
    float hi[3];
    uint32_t count;
} prism_bvh_node;

_Static_assert(sizeof(prism_bvh_node) == 32, "prism_bvh_node is two 16-byte loads");

/* Defaults (all-zero): leaf size 4, quality 1, 32 SAH bins, OpenMP threads
 * as the runtime chooses. SAH cost constants: traversal 1.0, intersection 1.0
 * per triangle (cost = sum over inner nodes of area/root_area * C_trav
 *                     + sum over leaves of area/root_area * count * C_isect). */
typedef struct prism_bvh_desc {
    unsigned max_leaf_size;   /* 1..64; 0 = 4 */
    unsigned quality;         /* 0 = default (1); 0 fast (fewer bins) .. 2 best */
    unsigned bins;            /* SAH bins per axis; 0 = from quality */
    int threads;              /* 0 = OpenMP default */
    prism_log_fn log;
    void *log_user;
} prism_bvh_desc;

typedef struct prism_bvh_stats {
    size_t nodes, leaves;
    unsigned max_depth;
    double mean_leaf_triangles;
    unsigned max_leaf_triangles;
    double sah_cost;          /* with the constants above */
    size_t node_bytes, vertex_bytes, triangle_bytes, id_bytes;
    double build_seconds;
} prism_bvh_stats;

/* A BVH owns reordered copies of the geometry, ready to upload:
 *   nodes      node_count x prism_bvh_node
 *   vertices   vertex_count x 3 floats (metres)
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
 * `vertex_count` vertices (3 floats each). Copies what it needs.
 * An empty input gives a BVH with one empty leaf. */
PRISM_API prism_result prism_bvh_build(const float *positions, size_t vertex_count,
                                       const uint32_t *indices, size_t triangle_count,
                                       const prism_bvh_desc *desc, prism_bvh **out);
/** Free a BVH. Accepts NULL. */
PRISM_API void prism_bvh_free(prism_bvh *bvh);

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

/** Closest hit in [tmin, tmax]. Returns whether anything was hit. */
PRISM_API bool prism_bvh_intersect(const prism_bvh *bvh, const prism_ray *ray, prism_hit *hit);
/** Any hit in [tmin, tmax] (shadow rays). */
PRISM_API bool prism_bvh_occluded(const prism_bvh *bvh, const prism_ray *ray);

#ifdef __cplusplus
}
#endif

#endif
