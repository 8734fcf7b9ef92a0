/* Placeholder until the kernels module lands its optics tables: no tables. */
#include "optics.h"

prism_result prism__optics_create(prism_context *ctx, const prism_scene *scene, prism_optics **out)
{
    (void)ctx;
    (void)scene;
    *out = NULL;
    return PRISM_SUCCESS;
}

void prism__optics_destroy(prism_context *ctx, prism_optics *optics)
{
    (void)ctx;
    (void)optics;
}
