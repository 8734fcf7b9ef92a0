/* What the kernels module reads from an uploaded prism_geometry: the
 * pointers of the geometry view and the optics tables built with it. */
#ifndef PRISM_GEOMETRY_INTERNAL_H
#define PRISM_GEOMETRY_INTERNAL_H

#include "geometry_view.h"
#include "optics.h"
#include "prism/geometry.h"

/* The pointers kernels use (device pointers on CUDA, heap on the host
 * backend), valid until prism_geometry_destroy. */
const prism_geometry_view *prism__geometry_view(const prism_geometry *g);
/* The optics tables (NULL without a scene or with desc.skip_optics). */
prism_optics *prism__geometry_optics(const prism_geometry *g);
prism_context *prism__geometry_context(const prism_geometry *g);

#endif
