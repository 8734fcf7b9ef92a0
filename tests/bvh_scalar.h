/* The plain C (GPU) build of the traversal, for comparison with the host's. */
#ifndef PRISM_BVH_SCALAR_H
#define PRISM_BVH_SCALAR_H

#include <stdint.h>

#include "prism/device/geometry_view.h"

int scalar_closest(const prism_geometry_view *g, const prism_ray *ray, prism_hit *hit);
uint32_t scalar_any(const prism_geometry_view *g, const prism_ray *ray);
/* The same for the wide walk (prism/device/bvh_wide_traverse.h). */
int scalar_wide_closest(const prism_geometry_view *g, const prism_ray *ray, prism_hit *hit);
uint32_t scalar_wide_any(const prism_geometry_view *g, const prism_ray *ray);

#endif
