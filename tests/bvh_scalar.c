/* The traversal compiled as the GPU compiles it (plain C box tests, no
 * SSE), so the suite can check that the host's SSE path gives the same
 * answers, bit for bit. */
#define PRISM_TRAVERSE_SCALAR 1
#include "bvh_scalar.h"

#include "prism/device/bvh_traverse.h"
#include "prism/device/bvh_wide_traverse.h"

#ifdef PRISM__TRAV_SSE
#error "PRISM_TRAVERSE_SCALAR must select the plain C path"
#endif
#ifdef PRISM__WIDE_SSE
#error "PRISM_TRAVERSE_SCALAR must select the plain C path of the wide walk"
#endif

int scalar_closest(const prism_geometry_view *g, const prism_ray *ray, prism_hit *hit)
{
    return prism_bvh_closest(g, ray, hit);
}

uint32_t scalar_any(const prism_geometry_view *g, const prism_ray *ray)
{
    return prism_bvh_any(g, ray);
}

int scalar_wide_closest(const prism_geometry_view *g, const prism_ray *ray, prism_hit *hit)
{
    return prism_wide_closest_skip(g, ray, PRISM_BVH_MISS, hit);
}

uint32_t scalar_wide_any(const prism_geometry_view *g, const prism_ray *ray)
{
    return prism_wide_any(g, ray);
}
