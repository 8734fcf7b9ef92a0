/* Internal helpers of the BVH module that the tests and the benchmark also
 * use (they link prism_static). */
#ifndef PRISM_BVH_INTERNAL_H
#define PRISM_BVH_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "prism/device/geometry_view.h"
#include "prism/bvh.h"

/* A view over a CPU BVH's own arrays (nodes unsplit, no triangle_info), as
 * the traversal reads them. */
void prism__bvh_view(const prism_bvh *bvh, prism_geometry_view *view);

/* A view over the same BVH with its node array split at `split` (the tail
 * still points into bvh->nodes): what a placement with a device head and a
 * mapped tail looks like to the traversal. */
void prism__bvh_view_split(const prism_bvh *bvh, uint32_t split, prism_geometry_view *view);

typedef struct prism_bvh_wide {
    prism_wide_node *nodes;
    size_t node_count;
    prism_wide_triangle *triangles;
    size_t triangle_count;
    unsigned depth; /* deepest node, root = 0 */
} prism_bvh_wide;

/* Collapse a binary BVH (any node order; node 0 the root) into the wide
 * layout: nodes, and the triangles copied from bvh's vertices in the order
 * the wide leaves read them. Greedy: each wide node takes its binary node's
 * two children, then keeps opening the inner child of largest surface area
 * until it has 8 children. Binary leaves of more than 4 triangles are cut
 * into pieces of 4 (under their leaf's box).
 * @errors PRISM_ERROR_INVALID_ARGUMENT (NULL), PRISM_ERROR_LIMIT (a tree so
 *         deep the collapse would pass PRISM_WIDE_MAX_DEPTH, or more than
 *         2^32-1 nodes), PRISM_ERROR_OUT_OF_MEMORY. *out is NULL on failure.
 * @thread_safety Reentrant; one thread. */
prism_result prism__bvh_collapse(const prism_bvh *bvh, prism_bvh_wide **out);
/** Free a wide BVH. Accepts NULL. */
void prism__bvh_wide_free(prism_bvh_wide *w);

/* The same view with a wide tree made from `bvh` (prism__bvh_collapse),
 * its nodes split at `wide_split`. */
void prism__bvh_view_wide(const prism_bvh *bvh, const prism_bvh_wide *wide, uint32_t wide_split,
                          prism_geometry_view *view);

#endif
