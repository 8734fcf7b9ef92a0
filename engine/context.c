/* prism_context: picks the backend and device (and with them the backend's
 * table, engine/backend.h, once), and owns the modules' state. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/backend.h"
#include "device_choice.h"
#include "devices.h"

static prism_result open_host(prism_context *ctx)
{
    ctx->backend = PRISM_BACKEND_HOST;
    ctx->be = &prism__host_backend;
    ctx->cuda_device = -1;
    prism__host_query(&ctx->device, ctx->host_threads);
    ctx->host_threads = ctx->device.host_threads;
    return PRISM_SUCCESS;
}

/* AUTO falls back to the host with one line saying why; CUDA fails. */
static prism_result no_cuda(prism_context *ctx, const prism_context_desc *desc, prism_result why,
                            const char *reason)
{
    if (desc->backend == PRISM_BACKEND_CUDA)
        return prism__error(ctx, why, "backend cuda: %s", reason);
    prism__log(ctx,
               why == PRISM_ERROR_INVALID_DEVICE || why == PRISM_ERROR_DEVICE_UNAVAILABLE
                   ? PRISM_LOG_WARNING
                   : PRISM_LOG_INFO,
               "using the host backend: %s", reason);
    ctx->last_error[0] = 0;
    return open_host(ctx);
}

static prism_result open_cuda(prism_context *ctx, int index, const prism_context_desc *desc)
{
    prism_result r = prism__cuda_open(ctx, index, desc);
    if (r == PRISM_SUCCESS) {
        ctx->backend = PRISM_BACKEND_CUDA;
        ctx->be = prism__cuda_backend();
    }
    return r;
}

static prism_result open_gl_device(prism_context *ctx, const prism_context_desc *desc)
{
    char message[512];
    int device;
    prism_result r = prism__cuda_gl_device(&device, message, sizeof message);
    if (r != PRISM_SUCCESS)
        return prism__error(ctx, r, "%s", message);
    if (desc->device) {
        prism_device_sources s = {.argument = desc->device, .device_count = device + 1};
        prism_device_choice c;
        if (prism__choose_device(&s, &c, message, sizeof message) != PRISM_SUCCESS ||
            c.index != device)
            return prism__error(ctx, PRISM_ERROR_INVALID_DEVICE,
                                "device \"%s\" asked for, but the OpenGL context is on cuda:%d",
                                desc->device, device);
    }
    r = open_cuda(ctx, device, desc);
    ctx->gl_shared = r == PRISM_SUCCESS;
    return r;
}

static prism_result open_chosen(prism_context *ctx, const prism_context_desc *desc, int count)
{
    char path[512], text[128], message[2048];
    prism_device_sources s;
    prism__device_sources_from_env(&s, desc->device, path, sizeof path, text, sizeof text);
    s.device_count = count;
    prism_device_choice c;
    prism_result r = prism__choose_device(&s, &c, message, sizeof message);
    if (r != PRISM_SUCCESS)
        return no_cuda(ctx, desc, r, message);
    if (c.index >= 0) {
        r = open_cuda(ctx, c.index, desc);
        if (r == PRISM_SUCCESS)
            return r;
        snprintf(message, sizeof message, "%s: %.1024s", c.source, ctx->last_error);
        return no_cuda(ctx, desc, r, message);
    }
    for (int i = 0; i < count; i++) {
        if (open_cuda(ctx, i, desc) == PRISM_SUCCESS)
            return PRISM_SUCCESS;
        prism__log(ctx, PRISM_LOG_INFO, "skipping: %s", ctx->last_error);
    }
    return no_cuda(ctx, desc, PRISM_ERROR_DEVICE_UNAVAILABLE,
                   "no CUDA device gave a usable context");
}

static prism_result open_backend(prism_context *ctx, const prism_context_desc *desc)
{
    if (desc->backend == PRISM_BACKEND_HOST)
        return open_host(ctx);
    prism_result why = PRISM_SUCCESS;
    char reason[256];
    int count = prism__cuda_count(&why, reason, sizeof reason);
    if (count == 0) {
        if (desc->share_gl && desc->backend == PRISM_BACKEND_AUTO)
            prism__log(ctx, PRISM_LOG_INFO, "share_gl: no CUDA device to share with");
        return no_cuda(ctx, desc, why, reason);
    }
    if (desc->share_gl)
        return open_gl_device(ctx, desc);
    return open_chosen(ctx, desc, count);
}

prism_result prism_context_prewarm(const prism_context_desc *desc_in)
{
    prism_context_desc desc = desc_in ? *desc_in : (prism_context_desc){0};
    if (desc.backend == PRISM_BACKEND_HOST)
        return PRISM_SUCCESS;
    prism_result why = PRISM_SUCCESS;
    char reason[256], path[512], text[128], message[1024];
    int count = prism__cuda_count(&why, reason, sizeof reason);
    if (count == 0)
        return PRISM_SUCCESS;
    prism_device_sources s;
    prism__device_sources_from_env(&s, desc.device, path, sizeof path, text, sizeof text);
    s.device_count = count;
    prism_device_choice c;
    if (prism__choose_device(&s, &c, message, sizeof message) != PRISM_SUCCESS)
        return PRISM_SUCCESS; /* prism_context_create says what is wrong */
    return prism__cuda_warm(c.index >= 0 ? c.index : 0, &desc);
}

prism_result prism_device_list(const char *devices, int *indices, int capacity, int *count,
                               char *message, size_t message_size)
{
    char scratch[8];
    if (message == NULL || message_size == 0) {
        message = scratch;
        message_size = sizeof scratch;
    }
    message[0] = 0;
    if (count != NULL)
        *count = 0;
    if (indices == NULL || count == NULL || capacity < 1) {
        snprintf(message, message_size, "device list: NULL indices or count, or capacity < 1");
        return PRISM_ERROR_INVALID_ARGUMENT;
    }
    prism_result why = PRISM_SUCCESS;
    char reason[256], path[512], text[128];
    prism_device_sources s;
    prism__device_sources_from_env(&s, devices, path, sizeof path, text, sizeof text);
    s.device_count = prism__cuda_count(&why, reason, sizeof reason);
    prism_result r = prism__choose_devices(&s, indices, capacity, count, message, message_size);
    if (r != PRISM_SUCCESS && s.device_count == 0 && why != PRISM_SUCCESS) {
        size_t used = strlen(message);
        snprintf(message + used, message_size - used, " (%s)", reason);
        return why;
    }
    return r;
}

static double seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static bool desc_valid(const prism_context_desc *d)
{
    return (unsigned)d->backend <= PRISM_BACKEND_HOST &&
           (unsigned)d->schedule <= PRISM_SCHEDULE_BLOCKING_SYNC &&
           (unsigned)d->cache <= PRISM_CACHE_PREFER_NONE &&
           (unsigned)d->log_level <= PRISM_LOG_ERROR && d->host_threads >= 0;
}

prism_result prism_context_create(const prism_context_desc *desc_in, prism_context **out)
{
    if (!out)
        return PRISM_ERROR_INVALID_ARGUMENT;
    *out = NULL;
    prism_context_desc desc = desc_in ? *desc_in : (prism_context_desc){0};
    prism_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return PRISM_ERROR_OUT_OF_MEMORY;
    ctx->log = desc.log;
    ctx->log_user = desc.log_user;
    ctx->log_level = desc.log_level;
    ctx->cuda_device = -1;
    ctx->host_threads = desc.host_threads;
    ctx->mapped_allowed = !desc.deny_mapped_memory;

    /* Each step's time goes to the log (INFO): where a context's start
     * goes is the first question about a slow first frame. */
    const double t0 = seconds_now();
    prism_result r = desc_valid(&desc)
                         ? open_backend(ctx, &desc)
                         : prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                                        "prism_context_desc: a field is outside its enum");
    const double t1 = seconds_now();
    if (r == PRISM_SUCCESS && ctx->backend == PRISM_BACKEND_HOST)
        ctx->mapped_allowed = !desc.deny_mapped_memory;
    if (r == PRISM_SUCCESS)
        r = prism__memory_init(ctx);
    const double t2 = seconds_now();
    if (r == PRISM_SUCCESS) {
        r = prism__kernels_init(ctx);
        if (r != PRISM_SUCCESS)
            prism__memory_shutdown(ctx);
    }
    if (r == PRISM_SUCCESS && ctx->backend == PRISM_BACKEND_CUDA)
        prism__log(ctx, PRISM_LOG_INFO,
                   "context: %.1f ms (driver and device %.1f, memory %.1f, kernels %.1f)",
                   (seconds_now() - t0) * 1e3, (t1 - t0) * 1e3, (t2 - t1) * 1e3,
                   (seconds_now() - t2) * 1e3);
    if (r != PRISM_SUCCESS) {
        if (ctx->backend == PRISM_BACKEND_CUDA)
            prism__cuda_close(ctx);
        free(ctx);
        return r;
    }
    prism__log(ctx, PRISM_LOG_DEBUG, "context on %s (%s)", prism_backend_name(ctx->backend),
               ctx->device.name);
    *out = ctx;
    return PRISM_SUCCESS;
}

prism_result prism_context_destroy(prism_context *ctx)
{
    if (!ctx)
        return PRISM_SUCCESS;
    prism_result modules = prism__modules_shutdown(ctx);
    prism__kernels_shutdown(ctx);
    prism_result r = prism__memory_shutdown(ctx);
    if (r == PRISM_SUCCESS)
        r = modules;
    if (ctx->backend == PRISM_BACKEND_CUDA)
        prism__cuda_close(ctx);
    free(ctx);
    return r;
}

prism_backend prism_context_backend(const prism_context *ctx)
{
    return ctx ? ctx->backend : PRISM_BACKEND_AUTO;
}

const prism_device_info *prism_context_device(const prism_context *ctx)
{
    return ctx ? &ctx->device : NULL;
}

bool prism_context_gl_shared(const prism_context *ctx)
{
    return ctx && ctx->gl_shared;
}
