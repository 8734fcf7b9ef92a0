/* What the kernels read: the pointers to the uploaded geometry, whatever
 * memory each array ended up in (device, mapped host, or split). Plain C,
 * shared by host code, the host backend and the .cu files. Filled by
 * engine/upload/upload.c from the placement plan; traversed by prism/device/bvh_traverse.h. */
#ifndef PRISM_GEOMETRY_VIEW_H
#define PRISM_GEOMETRY_VIEW_H

#include <stdint.h>

#include "bvh_wide.h"
#include "prism/bvh.h"

/* Per triangle, in the BVH's leaf order (16 bytes, one load). */
typedef struct prism_triangle_info {
    uint32_t id;        /* original scene triangle id */
    uint32_t solid;     /* scene solid, PRISM_NONE if none */
    uint32_t materials; /* inner | outer << 16; 0xFFFF = none */
    uint32_t surface;   /* scene surface, PRISM_NONE if none */
} prism_triangle_info;

PRISM_STATIC_ASSERT(sizeof(prism_triangle_info) == 16, "one 16-byte load");

typedef struct prism_geometry_view {
    /* Nodes [0, nodes_split) are nodes_head[i]; nodes [nodes_split,
     * node_count) are nodes_tail[i - nodes_split]. Unsplit: split == count. */
    const prism_bvh_node *nodes_head;
    const prism_bvh_node *nodes_tail;
    uint32_t nodes_split;
    uint32_t node_count;
    /* The wide tree (prism/device/bvh_wide.h), split the same way: nodes [0, wide_split)
     * in wide_head, the rest in wide_tail; wide_count 0 where there is
     * none. wide_triangles: triangle_count entries. */
    const prism_wide_node *wide_head;
    const prism_wide_node *wide_tail;
    uint32_t wide_split;
    uint32_t wide_count;
    const prism_wide_triangle *wide_triangles;
    const float *vertices;            /* 3 floats per vertex */
    const uint32_t *triangles;        /* 3 indices per triangle, leaf order */
    const prism_triangle_info *triangle_info;
    uint32_t vertex_count;
    uint32_t triangle_count;
    float bbox_lo[3], bbox_hi[3];
} prism_geometry_view;

#endif
