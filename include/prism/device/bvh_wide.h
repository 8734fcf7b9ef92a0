/* The wide BVH: 8-wide nodes with child boxes quantised to bytes, 80 bytes
 * a node (the layout of Ylitie, Karras and Laine, "Efficient Incoherent Ray
 * Traversal on GPUs Through Compressed Wide BVHs", HPG 2017, with our own
 * leaf encoding), and the triangles copied out in the order the nodes'
 * leaves read them. Made from a binary prism_bvh by a collapse
 * (prism__bvh_collapse, geometry/bvh/internal.h); traversed by
 * prism/device/bvh_wide_traverse.h on both backends. Plain C shared with the
 * .cu files and NVRTC (device code only: no host function here). */
#ifndef PRISM_BVH_WIDE_H
#define PRISM_BVH_WIDE_H

#include <stddef.h>
#include <stdint.h>

#include "prism/bvh.h"
#include "prism_hd.h"

/* One node, five 16-byte loads:
 *
 *   p[3] e[3] imask | child_base tri_base meta[8] | qlo[3][8] | qhi[3][8]
 *
 * Slot s (0..7) holds one child, or nothing (meta[s] == 0). Its box on axis
 * k is [p[k] + qlo[k][s] * 2^(e[k]-127), p[k] + qhi[k][s] * 2^(e[k]-127)],
 * each plane computed in float exactly as written (q * 2^e is exact, so the
 * sum is rounded once, the same on every compiler and with or without fma);
 * the collapse chooses the bytes so that this decoded box holds the child's
 * real one.
 *   inner child (imask bit s set): node child_base + the number of inner
 *     slots below s; meta[s] = 1 + that rank. A node's inner children are
 *     consecutive and come after it (nodes are in breadth-first order, so any
 *     prefix of the array is the top of the tree, as for the binary nodes).
 *   leaf child: triangles tri_base + off .. tri_base + off + count - 1 of the
 *     wide triangle array, count 1..4, off 0..28; meta[s] = count << 5 | off.
 *     A node's leaf triangles are consecutive, in slot order, so a node holds
 *     at most 32: bit j of a 32-bit mask is triangle tri_base + j.
 * Slots are assigned by direction: the child in slot s lies towards the
 * octant whose sign bits are s (bit k set: + side of axis k), so a ray whose
 * direction has sign bits o meets the children roughly in the order of
 * s ^ o, and the traversal visits inner children in that order. */
typedef struct prism_wide_node {
    float p[3];
    uint8_t e[3];
    uint8_t imask;
    uint32_t child_base;
    uint32_t tri_base;
    uint8_t meta[8];
    uint8_t qlo[3][8];
    uint8_t qhi[3][8];
} prism_wide_node;

PRISM_STATIC_ASSERT(sizeof(prism_wide_node) == 80, "prism_wide_node is five 16-byte loads");

/* A triangle as the wide traversal reads it: its three vertices (copied, so
 * a leaf is one load per vertex with no index to chase) and, in a.w's bits,
 * its index in the binary BVH's leaf order, which is what hits report and
 * what triangle_info, the triangles array and `skip` use. The watertight
 * test reads the same vertex values as through the index, so it gives the
 * same answer. */
typedef struct prism_wide_triangle {
    float a[3];
    uint32_t index;
    float b[3];
    uint32_t pad0;
    float c[3];
    uint32_t pad1;
} prism_wide_triangle;

PRISM_STATIC_ASSERT(sizeof(prism_wide_triangle) == 48,
                    "prism_wide_triangle is three 16-byte loads");

#define PRISM_WIDE_LEAF_MAX 4u
/* The collapse never makes a tree deeper than this (root = 0), so a stack
 * of PRISM_WIDE_STACK entries (one per level of the path) never overflows.
 * A binary tree of depth <= PRISM_BVH_MAX_DEPTH collapses to at most that
 * many levels, plus two for a leaf of up to 64 triangles cut into pieces. */
#define PRISM_WIDE_MAX_DEPTH (PRISM_BVH_MAX_DEPTH + 4)
#define PRISM_WIDE_STACK (PRISM_WIDE_MAX_DEPTH + 1)

/* The exact float value of plane byte q on a node axis with origin p and
 * exponent byte e: what the traversal computes. */
PRISM_HD float prism__wide_scale(uint32_t e)
{
#if defined(__CUDA_ARCH__)
    return __uint_as_float(e << 23);
#else
    union {
        uint32_t u;
        float f;
    } s = {e << 23};
    return s.f;
#endif
}

PRISM_HD float prism__wide_plane(float p, uint32_t e, uint32_t q)
{
    return (float)q * prism__wide_scale(e) + p;
}

#endif
