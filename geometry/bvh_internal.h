/* Internal helpers of the BVH module that the tests and the benchmark also
 * use (they link prism_static). */
#ifndef PRISM_BVH_INTERNAL_H
#define PRISM_BVH_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "geometry_view.h"
#include "prism/bvh.h"

/* A view over a CPU BVH's own arrays (nodes unsplit, no triangle_info), as
 * the traversal reads them. */
void prism__bvh_view(const prism_bvh *bvh, prism_geometry_view *view);

/* A view over the same BVH with its node array split at `split` (the tail
 * still points into bvh->nodes): what a placement with a device head and a
 * mapped tail looks like to the traversal. */
void prism__bvh_view_split(const prism_bvh *bvh, uint32_t split, prism_geometry_view *view);

/* The same view with a wide tree made from `bvh` (prism__bvh_collapse),
 * its nodes split at `wide_split`. */
void prism__bvh_view_wide(const prism_bvh *bvh, const prism_bvh_wide *wide, uint32_t wide_split,
                          prism_geometry_view *view);

#endif
