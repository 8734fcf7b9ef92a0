/* prism_device_view: an uploaded geometry as a renderer's own CUDA kernels
 * read it: the BVH nodes, vertices, leaf-order triangles and their codes
 * (prism_geometry_view) and the optics tables (prism_optics_view), the
 * same structs Prism's own kernels get. The renderer's host code takes it
 * from prism_geometry_device_view and passes it to its kernels by value;
 * the kernels trace it with prism/device.cuh.
 *
 * Opt-in, plain C: prism/prism.h does not include it, and it names no CUDA
 * type. The layouts are the kernels' own (prism/device/geometry_view.h,
 * prism/device/optics_view.h), so a kernel must be compiled against the
 * headers of the library it runs with: runtime compilation always is
 * (prism/module.h), an nvcc build is when it uses the installed package.
 *
 * Functions: prism_geometry_device_view. */
#ifndef PRISM_DEVICE_VIEW_H
#define PRISM_DEVICE_VIEW_H

#include "prism/device/geometry_view.h"
#include "prism/device/optics_view.h"
#include "prism/geometry.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Everything a kernel needs to trace and shade the geometry. Pointers are
 * the kernels' (device pointers on CUDA: device memory, mapped host memory,
 * or both where the node array is split), valid while the geometry lives.
 * optics is all-zero where the geometry has none (uploaded without a scene
 * or with skip_optics): materials then read as vacuum and no triangle has
 * a surface (prism_optics_material and prism_optics_surface say so). */
typedef struct prism_device_view {
    prism_geometry_view geometry;
    prism_optics_view optics;
} prism_device_view;

/** Fill `view` for `geometry`'s kernels. On the CUDA backend the pointers
 * are device pointers for any placement (device memory, mapped memory, a
 * node array split between them); on the host backend they are host
 * pointers (the same functions, compiled for the host, read them).
 * @errors PRISM_ERROR_INVALID_ARGUMENT (NULL geometry or view),
 *   PRISM_ERROR_UNSUPPORTED (the vertices are read from a GL buffer,
 *   prism_geometry_vertices_shared: GL owns them between Prism's own
 *   launches, so no pointer to them outlives a launch).
 * @pointer_lifetime The view's pointers stay valid until
 *   prism_geometry_destroy; the view itself is a plain value to copy.
 * @thread_safety As the geometry's context: one thread at a time (a
 *   failure records its message there). */
PRISM_API prism_result prism_geometry_device_view(const prism_geometry *geometry,
                                                  prism_device_view *view);

#ifdef __cplusplus
}
#endif

#endif
