/* prism_geometry_device_view (prism/device_view.h): the kernels' view of an
 * uploaded geometry and its optics, handed to a renderer's own kernels. */
#include <string.h>

#include "engine/context_internal.h"
#include "geometry_internal.h"
#include "optics_tables.h"
#include "prism/device_view.h"

prism_result prism_geometry_device_view(const prism_geometry *geometry, prism_device_view *view)
{
    if (view != NULL)
        memset(view, 0, sizeof *view);
    if (geometry == NULL || view == NULL)
        return PRISM_ERROR_INVALID_ARGUMENT;
    prism_context *ctx = prism__geometry_context(geometry);
    if (prism_geometry_vertices_shared(geometry))
        return prism__error(ctx, PRISM_ERROR_UNSUPPORTED,
                            "device_view: the vertices are read from a GL buffer, mapped for "
                            "Prism's own launches only; upload without gl_vertex_buffer to trace "
                            "the geometry from your kernels");
    view->geometry = *prism__geometry_view(geometry);
    const prism_optics_view *o = prism__optics_view(prism__geometry_optics(geometry));
    if (o != NULL)
        view->optics = *o;
    return PRISM_SUCCESS;
}
