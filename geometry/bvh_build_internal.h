/* Shared state of the BVH builder's two files: bvh_build.c (input checks,
 * layout of the result) and bvh_build_nodes.c (the SAH recursion). */
#ifndef PRISM_BVH_BUILD_INTERNAL_H
#define PRISM_BVH_BUILD_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "prism/bvh.h"

#define PRISM__BVH_MAX_BINS 256
#define PRISM__BVH_MAX_TRIANGLES ((size_t)1 << 31)
/* Nodes with at least this many references (and more than the total over
 * the thread count) bin and partition with all threads; below it one
 * thread does (the data no longer pays for the fork). */
#define PRISM__BVH_PAR_MIN ((size_t)1 << 16)
/* Subtrees with at least this many references become OpenMP tasks. */
#define PRISM__BVH_TASK_MIN ((size_t)4096)

/* The SAH constants documented in prism/bvh.h. */
#define PRISM_BVH_SAH_TRAV 1.0
#define PRISM_BVH_SAH_ISECT 1.0

/* A triangle reference: its box and scene id, 32 bytes so a partition
 * moves two 16-byte halves. */
typedef struct prism__bvh_ref {
    float lo[3];
    uint32_t id;
    float hi[3];
    uint32_t pad;
} prism__bvh_ref;

/* Parallel partitions use a node's own node slots as scratch references. */
_Static_assert(sizeof(prism__bvh_ref) == sizeof(prism_bvh_node), "a reference fits a node slot");

typedef struct prism__bvh_builder {
    prism__bvh_ref *refs;   /* n references, partitioned in place into leaf order */
    prism_bvh_node *nodes;  /* 2n-1 slots; inner node i: children i+1 and `first` */
    size_t n;
    unsigned leaf, bins;
    int sample;             /* bin a sample of very large nodes (not at quality HIGH) */
    unsigned bfs_levels;    /* node order: breadth-first above this depth, depth-first below */
    int threads;
} prism__bvh_builder;

/* Surface area (up to the factor 2 that cancels in the SAH); 0 for an empty box. */
static inline double prism__bvh_area(const float *lo, const float *hi)
{
    double dx = (double)hi[0] - lo[0], dy = (double)hi[1] - lo[1], dz = (double)hi[2] - lo[2];
    if (dx < 0.0 || dy < 0.0 || dz < 0.0)
        return 0.0;
    return dx * dy + dy * dz + dz * dx;
}

/* Make the references from the triangles and build the tree into b->nodes
 * (root at 0; an inner node i has children i + 1 and nodes[i].first), leaving
 * b->refs in leaf order. */
void prism__bvh_build_nodes(prism__bvh_builder *b, const float *positions, const uint32_t *indices);

#endif
