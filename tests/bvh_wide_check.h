/* The wide BVH's structure (prism/device/bvh_wide.h), checked against the
 * binary tree it was collapsed from, with cmocka asserts: every node
 * reached once from the root, children after their parent and consecutive,
 * every triangle in exactly one leaf and copied exactly, each decoded box
 * holding the triangles below it, the depth bound and the stated depth.
 * Shared by the host suite and the GPU suite (which checks the device's
 * collapse read back). */
#ifndef PRISM_BVH_WIDE_CHECK_H
#define PRISM_BVH_WIDE_CHECK_H

#include "geometry/bvh/internal.h"

void check_wide(const prism_bvh *b, const prism_bvh_wide *w);

#endif
