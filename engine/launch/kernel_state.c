/* Per-context kernel state (kernel_state.h): created with the context,
 * and the occupancy report of the kernels (prism/kernels.h). */
#include "kernel_state.h"

#include <stdlib.h>
#include <string.h>

#include "engine/backend.h"
#include "prism/kernels.h"
#include "propagate_scheme.h"

prism_result prism__kernels_init(prism_context *ctx)
{
    ctx->kernels = calloc(1, sizeof *ctx->kernels);
    if (ctx->kernels == NULL)
        return prism__error(ctx, PRISM_ERROR_OUT_OF_MEMORY, "kernels: no memory for their state");
    prism__propagate_settings_init(ctx->kernels);
    if (ctx->be->kernels_init != NULL) {
        prism_result r = ctx->be->kernels_init(ctx, ctx->kernels);
        if (r != PRISM_SUCCESS) {
            free(ctx->kernels);
            ctx->kernels = NULL;
            return r;
        }
    }
    return PRISM_SUCCESS;
}

void prism__kernels_shutdown(prism_context *ctx)
{
    if (ctx == NULL || ctx->kernels == NULL)
        return;
    if (ctx->kernels->colors.pointer != NULL)
        prism__scratch_release(&ctx->kernels->colors);
    free(ctx->kernels->colors_host);
    ctx->kernels->keeping = 1;
    prism__scratch_keep(ctx, false);
    if (ctx->be->kernels_shutdown != NULL)
        ctx->be->kernels_shutdown(ctx, ctx->kernels);
    free(ctx->kernels);
    ctx->kernels = NULL;
}

static bool known_kernel(const char *name)
{
    static const char *const names[] = {"render",
                                        "generate",
                                        "propagate",
                                        "propagate_exact",
                                        "propagate_fast",
                                        "propagate_trace_exact",
                                        "propagate_trace_fast",
                                        "propagate_trace_generic_exact",
                                        "propagate_trace_generic_fast",
                                        "propagate_physics_exact",
                                        "propagate_physics_fast"};
    for (size_t i = 0; name != NULL && i < sizeof names / sizeof names[0]; i++)
        if (strcmp(name, names[i]) == 0)
            return true;
    return false;
}

prism_result prism_kernel_resources(prism_context *ctx, const char *kernel_name,
                                    int *registers_per_thread, size_t *shared_bytes)
{
    if (ctx == NULL || !known_kernel(kernel_name))
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                            "kernel_occupancy: unknown kernel \"%s\"",
                            kernel_name != NULL ? kernel_name : "(null)");
    if (ctx->be->kernel_attributes == NULL)
        return prism__error(ctx, PRISM_ERROR_UNSUPPORTED,
                            "kernel_occupancy: the host backend has no kernels to measure");
    int regs = 0;
    size_t shared = 0;
    prism_result r = ctx->be->kernel_attributes(ctx, kernel_name, &regs, &shared);
    if (r == PRISM_SUCCESS && registers_per_thread != NULL)
        *registers_per_thread = regs;
    if (r == PRISM_SUCCESS && shared_bytes != NULL)
        *shared_bytes = shared;
    return r;
}

prism_result prism_kernel_occupancy(prism_context *ctx, const char *kernel_name,
                                    int threads_per_block, prism_occupancy *out)
{
    if (out == NULL)
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT, "kernel_occupancy: NULL out");
    int regs = 0;
    size_t shared = 0;
    prism_result r = prism_kernel_resources(ctx, kernel_name, &regs, &shared);
    if (r != PRISM_SUCCESS)
        return r;
    return prism_occupancy_compute(&ctx->device, threads_per_block, regs, shared, out);
}
