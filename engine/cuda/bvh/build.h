/* The CUDA BVH builder (engine/cuda/bvh/build.cu): reads the world
 * vertices and triangles where the upload put them and writes, in device
 * memory, the BVH in the layout prism/bvh.h describes (32-byte nodes,
 * breadth-first, node 1 padding, sibling pairs at even indices), the
 * triangles in leaf order and their scene ids. The upload reaches it
 * through the CUDA backend's table (engine/backend.h) when
 * prism_geometry_upload is given no host BVH. */
#ifndef PRISM_BVH_DEVICE_H
#define PRISM_BVH_DEVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/backend.h"
#include "engine/context_internal.h"
#include "prism/device/geometry_view.h"
#include "prism/bvh.h"
#include "prism/geometry.h"
#include "prism/memory.h"

#ifdef __cplusplus
extern "C" {
#endif

/* prism__device_bvh, prism__wide_place and prism__device_wide, the shapes
 * of what these return, are engine/backend.h's: the table names them. */

/* The wide tree of the binary one in `view` (engine/cuda/bvh/wide.cu):
 * the bytes prism__bvh_collapse makes on the host from the same tree,
 * made on the device. Nodes may be split head/tail; nodes, triangles and
 * vertices kernel-readable (vertices mapped if they are a GL buffer).
 * Calls `place` once the node count is known, then fills its buffers.
 * @errors PRISM_ERROR_INVALID_ARGUMENT (a malformed binary tree),
 *   PRISM_ERROR_LIMIT (deeper than PRISM_WIDE_MAX_DEPTH),
 *   PRISM_ERROR_OUT_OF_DEVICE_MEMORY (its temporaries), PRISM_ERROR_CUDA,
 *   or place's. Its temporaries are released whatever happens; the
 *   buffers `place` made are the caller's. */
prism_result prism__cuda_bvh_collapse(prism_context *ctx, const prism_geometry_view *view,
                                      prism__wide_place place, void *user, prism__device_wide *out);

/* Device bytes the builder needs for `triangle_count` triangles at most,
 * temporaries and outputs together (what placement must leave free). */
size_t prism__cuda_bvh_bytes(size_t triangle_count);

/* Build over `triangles` (a kernel-readable pointer to 3 uint32 per
 * triangle, scene order) on `vertices` (kernel-readable, 3 floats each:
 * device, mapped or GL-mapped memory), as `settings` says (checked by the
 * caller; zero fields are the defaults).
 * @errors PRISM_ERROR_INVALID_ARGUMENT (an index >= vertex_count or a
 *   non-finite coordinate: the message names the triangle),
 *   PRISM_ERROR_OUT_OF_DEVICE_MEMORY, PRISM_ERROR_CUDA. Nothing is left
 *   allocated on failure. */
prism_result prism__cuda_bvh_build(prism_context *ctx, const float *vertices, uint32_t vertex_count,
                                   const uint32_t *triangles, uint32_t triangle_count,
                                   const prism__device_bvh_settings *settings,
                                   prism__device_bvh *out);
/* dst[i] = src[ids[i]] for i < n, 16-byte records (prism_triangle_info):
 * the scene-order codes into leaf order. Pointers kernel-readable
 * (dst may be mapped memory). Synchronous. */
prism_result prism__cuda_gather_info(prism_context *ctx, const void *src, const uint32_t *ids,
                                     uint32_t n, void *dst);
/* dst[i] = prism_triangle_info of scene triangle i from the scene's four
 * per-triangle arrays laid end to end in `codes` (solid, material inner,
 * material outer, surface; n each), in device memory
 * (engine/cuda/upload.cu). Synchronous on `stream`. */
prism_result prism__cuda_pack_info(prism_context *ctx, const uint32_t *codes, uint32_t n, void *dst,
                                   prism_stream *stream);
/* dst[info[i].id] = {info[i].solid, info[i].materials} for i < n: leaf-
 * order prism_triangle_info records scattered into scene order, 8 bytes a
 * triangle (desc.gl_triangle_buffer). Pointers kernel-readable. Synchronous. */
prism_result prism__cuda_gl_codes(prism_context *ctx, const void *info, uint32_t n, void *dst);

#ifdef __cplusplus
}
#endif

#endif
