/* Per-context kernel state (streams, launch resources). Placeholder until
 * the kernels module fills it in: nothing to hold yet. */
#include "context_internal.h"

prism_result prism__kernels_init(prism_context *ctx)
{
    ctx->kernels = NULL;
    return PRISM_SUCCESS;
}

void prism__kernels_shutdown(prism_context *ctx)
{
    ctx->kernels = NULL;
}
