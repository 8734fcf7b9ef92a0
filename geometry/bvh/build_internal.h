/* Shared state of the BVH builder's two files: geometry/bvh/build.c (input checks,
 * layout of the result) and geometry/bvh/build_nodes.c (the SAH recursion). */
#ifndef PRISM_BVH_BUILD_INTERNAL_H
#define PRISM_BVH_BUILD_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "prism/bvh.h"

#define PRISM__BVH_MAX_BINS 256
#define PRISM__BVH_MAX_TRIANGLES ((size_t)1 << 31)
/* Nodes with at least this many references (and more than the total over
 * the thread count) bin and partition with all threads; below it one
 * thread does (the data no longer pays for the fork: on many cores,
 * parallel nodes down to a quarter of this share made the build slower
 * than none at all). */
#define PRISM__BVH_PAR_MIN ((size_t)1 << 16)
/* Subtrees with at least this many references become OpenMP tasks: a
 * quarter of it measured the same (within the noise), four times it
 * slower, as too few tasks leave threads idle. */
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

/* A thread's current block of node slots (a cache line each, not shared),
 * and the triangles it placed into leaves not yet added to the builder's
 * count (progress). */
typedef struct prism__bvh_block {
    size_t next, end;
    size_t placed;
    char pad[64 - 3 * sizeof(size_t)];
} prism__bvh_block;

#define PRISM__BVH_NODE_BLOCK ((size_t)1024)

typedef struct prism__bvh_builder {
    prism__bvh_ref *refs;     /* n references, partitioned in place into leaf order (2n slots) */
    prism_bvh_node *nodes;    /* see prism__bvh_nodes_capacity; inner: children first, first+1 */
    prism__bvh_block *blocks; /* one per thread */
    size_t node_next;         /* slots handed out in blocks so far (atomic) */
    size_t n;
    /* Each leaf writes its triangles (indices[3 id..]) and ids to the
     * output at its position as it is made, while its references are in
     * cache: no pass over the n references after the build. */
    const uint32_t *indices;
    uint32_t *out_triangles, *out_ids;
    unsigned leaf, bins;
    int sample;          /* bin a sample of very large nodes (not at quality HIGH) */
    unsigned bfs_levels; /* node order: breadth-first above this depth, depth-first below */
    int threads;
    /* Progress (desc->progress; NULL: none of this is touched). Threads add
     * their blocks' placed counts to `placed` every `report_step`
     * triangles; only thread 0 of the team (the caller) reads it and calls
     * the callback, at most once per report_step. A false return sets
     * `cancelled`, which turns every node still to build into a leaf. */
    prism_progress_fn progress;
    void *progress_user;
    size_t placed; /* atomic */
    size_t report_step;
    size_t next_report; /* thread 0 only */
    int cancelled;      /* atomic */
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
 * (root at 0; an inner node's children at first, first + 1; b->node_next the
 * slots used, some of them unused ends of blocks), leaving b->refs in leaf
 * order and, unless cancelled, the triangles and ids in b->out_*. */
void prism__bvh_build_nodes(prism__bvh_builder *b, const float *positions, const uint32_t *indices);

/* Node slots the builder may use for n references with `threads` threads. */
static inline size_t prism__bvh_nodes_capacity(size_t n, int threads)
{
    return (n ? 2 * n : 2) + (size_t)threads * PRISM__BVH_NODE_BLOCK;
}

#endif
