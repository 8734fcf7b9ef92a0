/* Per-context memory state. Placeholder until the memory module lands its
 * ledger: nothing is allocated yet, so nothing can be live. */
#include "context_internal.h"

prism_result prism__memory_init(prism_context *ctx)
{
    ctx->memory = NULL;
    return PRISM_SUCCESS;
}

prism_result prism__memory_shutdown(prism_context *ctx)
{
    ctx->memory = NULL;
    return PRISM_SUCCESS;
}
