/* What the kernels read: the pointers to the uploaded geometry, whatever
 * memory each array ended up in (device, mapped host, or split). Plain C,
 * shared by host code, the host backend and the .cu files. Filled by
 * engine/upload/upload.c from the placement plan; traversed by prism/device/bvh_traverse.h. */
#ifndef PRISM_GEOMETRY_VIEW_H
#define PRISM_GEOMETRY_VIEW_H

#include <stdint.h>

#include "bvh_wide.h"
#include "optics_view.h"
#include "prism/bvh.h"
#include "prism_hd.h"

/* A triangle's two materials in one uint32 (prism_triangle_info.materials,
 * the GL per-triangle buffer): the inner one (the solid's) in the low 16
 * bits, the outer one (the enclosing solid's) in the high 16 bits, and
 * PRISM_NO_MATERIAL for none. Sixteen bits each keep the record at one
 * 16-byte load; the upload refuses scenes of 65535 materials or more, so
 * every index fits. These functions are the rule's only statement: the
 * host and device uploads pack with them and the kernels unpack with them.
 * (PRISM_NO_MATERIAL is optics_view.h's: the tables read it as vacuum.) */

/* One material index as it is packed: PRISM_NONE becomes PRISM_NO_MATERIAL. */
PRISM_HD uint32_t prism_material16(uint32_t material)
{
    return material == PRISM_NONE ? PRISM_NO_MATERIAL : material;
}

PRISM_HD uint32_t prism_materials_pack(uint32_t inner, uint32_t outer)
{
    return prism_material16(inner) | prism_material16(outer) << 16;
}

PRISM_HD uint32_t prism_materials_inner(uint32_t materials)
{
    return materials & 0xFFFFu;
}

PRISM_HD uint32_t prism_materials_outer(uint32_t materials)
{
    return materials >> 16;
}

/* Per triangle, in the BVH's leaf order (16 bytes, one load). */
typedef struct prism_triangle_info {
    uint32_t id;        /* original scene triangle id */
    uint32_t solid;     /* scene solid, PRISM_NONE if none */
    uint32_t materials; /* prism_materials_pack(inner, outer) */
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
    const float *vertices;     /* 3 floats per vertex */
    const uint32_t *triangles; /* 3 indices per triangle, leaf order */
    const prism_triangle_info *triangle_info;
    uint32_t vertex_count;
    uint32_t triangle_count;
    float bbox_lo[3], bbox_hi[3];
    /* Nonzero when every array above is in device memory (none of it
     * mapped host memory): set by the upload, so a launcher can pick the
     * kernel build tuned for it without asking the driver per launch. Zero
     * in a view built by hand is always safe. */
    uint32_t device_resident;
} prism_geometry_view;

#endif
