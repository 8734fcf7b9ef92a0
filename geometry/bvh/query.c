/* CPU reference ray queries: the same traversal the kernels run
 * (prism/device/bvh_traverse.h), over a view of the CPU BVH's own arrays. */
#include "internal.h"
#include "prism/device/bvh_traverse.h"

void prism__bvh_view_split(const prism_bvh *bvh, uint32_t split, prism_geometry_view *view)
{
    *view = (prism_geometry_view){0};
    view->node_count = (uint32_t)bvh->node_count;
    view->nodes_split = split < view->node_count ? split : view->node_count;
    view->nodes_head = bvh->nodes;
    view->nodes_tail = bvh->nodes + view->nodes_split;
    view->vertices = bvh->vertices;
    view->triangles = bvh->triangles;
    view->triangle_info = NULL; /* the CPU BVH maps ids through triangle_ids */
    view->vertex_count = (uint32_t)bvh->vertex_count;
    view->triangle_count = (uint32_t)bvh->triangle_count;
    for (int a = 0; a < 3; a++) {
        view->bbox_lo[a] = bvh->nodes[0].lo[a];
        view->bbox_hi[a] = bvh->nodes[0].hi[a];
    }
}

void prism__bvh_view(const prism_bvh *bvh, prism_geometry_view *view)
{
    prism__bvh_view_split(bvh, (uint32_t)bvh->node_count, view);
}

void prism__bvh_view_wide(const prism_bvh *bvh, const prism_bvh_wide *wide, uint32_t wide_split,
                          prism_geometry_view *view)
{
    prism__bvh_view(bvh, view);
    view->wide_count = (uint32_t)wide->node_count;
    view->wide_split = wide_split < view->wide_count ? wide_split : view->wide_count;
    view->wide_head = wide->nodes;
    view->wide_tail = wide->nodes + view->wide_split;
    view->wide_triangles = wide->triangles;
}

bool prism_bvh_intersect(const prism_bvh *bvh, const prism_ray *ray, prism_hit *hit)
{
    prism_hit local;
    if (!hit)
        hit = &local;
    if (!bvh || !ray) {
        *hit = (prism_hit){.t = ray ? ray->tmax : 0.0f, .triangle = PRISM_BVH_MISS};
        return false;
    }
    prism_geometry_view view;
    prism__bvh_view(bvh, &view);
    if (!prism_bvh_closest(&view, ray, hit))
        return false;
    hit->triangle = bvh->triangle_ids[hit->triangle];
    return true;
}

bool prism_bvh_occluded(const prism_bvh *bvh, const prism_ray *ray)
{
    if (!bvh || !ray)
        return false;
    prism_geometry_view view;
    prism__bvh_view(bvh, &view);
    return prism_bvh_any(&view, ray) != PRISM_BVH_MISS;
}
