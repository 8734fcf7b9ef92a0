/* The CUDA side of a build without CUDA: no backend table, no devices,
 * no NVRTC, no render variants; every CUDA-only request answers
 * PRISM_ERROR_UNSUPPORTED. Every link-time function of the CUDA backend
 * that shared code, tools or tests call has its stand-in here, so none of
 * them needs to know how Prism was built. */
#ifndef PRISM_HAVE_CUDA
#include <stdio.h>

#include "engine/backend.h"
#include "engine/devices.h"
#include "engine/launch/render_tuning.h"
#include "engine/launch/select_internal.h"
#include "engine/module/internal.h"

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

bool prism__nvrtc_identify(char *identity, size_t size)
{
    if (size > 0)
        identity[0] = 0;
    return false;
}

prism_result prism__nvrtc_load(prism_context *ctx, prism__nvrtc **out)
{
    *out = NULL;
    return prism__error(ctx, PRISM_ERROR_UNSUPPORTED, "NVRTC: " NO_CUDA);
}

void prism__nvrtc_unload(prism__nvrtc *n)
{
    (void)n;
}

void prism__nvrtc_version(const prism__nvrtc *n, int *major, int *minor)
{
    (void)n;
    *major = 0;
    *minor = 0;
}

const char *prism__nvrtc_identity(const prism__nvrtc *n)
{
    (void)n;
    return "";
}

prism_result prism__nvrtc_target(prism_context *ctx, const prism__nvrtc *n, int major, int minor,
                                 char *arch, size_t arch_size, bool *cubin)
{
    (void)n, (void)major, (void)minor;
    if (arch_size > 0)
        arch[0] = 0;
    *cubin = false;
    return prism__error(ctx, PRISM_ERROR_UNSUPPORTED, "NVRTC: " NO_CUDA);
}

prism_result prism__nvrtc_compile(prism_context *ctx, const prism__nvrtc *n, const char *source,
                                  const char *name, const char *arch, bool cubin,
                                  const char *const *options, size_t option_count, void **binary,
                                  size_t *size, char **log)
{
    (void)n, (void)source, (void)name, (void)arch, (void)cubin, (void)options, (void)option_count;
    *binary = NULL;
    *size = 0;
    *log = NULL;
    return prism__error(ctx, PRISM_ERROR_UNSUPPORTED, "NVRTC: " NO_CUDA);
}

int prism__cuda_render_tuning(prism_context *ctx, int variant, unsigned block)
{
    (void)ctx, (void)variant, (void)block;
    return 0;
}

int prism__cuda_render_variants(void)
{
    return 0;
}

void prism__cuda_render_tuning_get(const prism_context *ctx, int *variant, unsigned *block)
{
    (void)ctx;
    *variant = 0;
    *block = 0;
}

void prism__cuda_select_chunk(size_t photons)
{
    (void)photons;
}

prism_result prism__cuda_select(prism_context *ctx, const prism_photon *in, size_t count,
                                uint32_t any_of, prism_photon *out, size_t capacity,
                                size_t *selected)
{
    (void)in;
    (void)count;
    (void)any_of;
    (void)out;
    (void)capacity;
    if (selected != NULL)
        *selected = 0;
    return prism__error(ctx, PRISM_ERROR_UNSUPPORTED, "photons_select: %s", NO_CUDA);
}
#else
typedef int prism_no_cuda_unused_; /* ISO C forbids an empty unit */
#endif
