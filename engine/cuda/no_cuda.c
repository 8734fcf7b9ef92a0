/* The CUDA side of a build without CUDA: no backend table, no devices;
 * every CUDA-only request answers PRISM_ERROR_UNSUPPORTED. */
#ifndef PRISM_HAVE_CUDA
#include <stdio.h>

#include "engine/backend.h"
#include "engine/devices.h"

#define NO_CUDA "this build of Prism has no CUDA backend"

const prism__backend *prism__cuda_backend(void)
{
    return NULL;
}

int prism__cuda_count(prism_result *why, char *reason, size_t reason_size)
{
    *why = PRISM_ERROR_UNSUPPORTED;
    snprintf(reason, reason_size, NO_CUDA);
    return 0;
}

prism_result prism__cuda_query(int index, prism_device_info *info)
{
    (void)index;
    (void)info;
    return PRISM_ERROR_UNSUPPORTED;
}

void prism__cuda_versions(int *runtime, int *driver)
{
    *runtime = 0;
    *driver = 0;
}

prism_result prism__cuda_open(prism_context *ctx, int index, const prism_context_desc *desc)
{
    (void)index;
    (void)desc;
    return prism__error(ctx, PRISM_ERROR_UNSUPPORTED, NO_CUDA);
}

prism_result prism__cuda_warm(int index, const prism_context_desc *desc)
{
    (void)index;
    (void)desc;
    return PRISM_ERROR_UNSUPPORTED;
}

void prism__cuda_close(prism_context *ctx)
{
    (void)ctx;
}

prism_result prism__cuda_gl_device(int *device, char *message, size_t message_size)
{
    *device = -1;
    snprintf(message, message_size, NO_CUDA);
    return PRISM_ERROR_UNSUPPORTED;
}
#else
typedef int prism_no_cuda_unused_; /* ISO C forbids an empty unit */
#endif
