/* The startup report (after Warp's) and the public device queries. */
#include <stdio.h>

#include "devices.h"

int prism_cuda_device_count(void)
{
    prism_result why;
    char reason[256];
    return prism__cuda_count(&why, reason, sizeof reason);
}

prism_result prism_device_query(int index, prism_device_info *info)
{
    if (!info)
        return PRISM_ERROR_INVALID_ARGUMENT;
    if (index < 0) {
        prism__host_query(info, 0);
        return PRISM_SUCCESS;
    }
    if (index >= prism_cuda_device_count())
        return PRISM_ERROR_INVALID_DEVICE;
    return prism__cuda_query(index, info);
}

typedef struct report {
    char *buf;
    size_t size, len;
} report;

#define put(r, ...) prism__appendf((r)->buf, (r)->size, &(r)->len, __VA_ARGS__)

static void put_version(report *r, int v)
{
    if (v > 0)
        put(r, "%d.%d", v / 1000, v % 1000 / 10);
    else
        put(r, "none");
}

static void put_cuda_device(report *r, const prism_device_info *d)
{
    char id[16];
    snprintf(id, sizeof id, "\"cuda:%d\"", d->index);
    put(r, "  %-8s: \"%s\" (%.0f GiB, sm_%d%d", id, d->name,
        (double)d->total_memory / (1024.0 * 1024.0 * 1024.0), d->cc_major, d->cc_minor);
    put(r, ", mempool %s", d->memory_pools_supported ? "enabled" : "unsupported");
    if (d->can_map_host_memory)
        put(r, ", mapped memory");
    if (d->integrated)
        put(r, ", integrated");
    if (d->kernel_timeout)
        put(r, ", display GPU: kernel timeout");
    put(r, ")\n");
}

size_t prism_device_report(char *buffer, size_t size)
{
    report r = {buffer, buffer ? size : 0, 0};
    if (r.size)
        buffer[0] = 0;
    prism_result why = PRISM_SUCCESS;
    char reason[256];
    int count = prism__cuda_count(&why, reason, sizeof reason);
    int runtime, driver;
    prism__cuda_versions(&runtime, &driver);

    put(&r, "Prism %s initialized: ", prism_version());
    if (why == PRISM_ERROR_UNSUPPORTED) {
        put(&r, "built without CUDA\n");
    } else {
        put(&r, "CUDA Toolkit ");
        put_version(&r, runtime);
        put(&r, ", Driver ");
        put_version(&r, driver);
        put(&r, "\n");
    }
    prism_device_info host;
    prism__host_query(&host, 0);
    put(&r, "  %-8s: host backend, %d threads (%s)\n", "\"cpu\"", host.host_threads, host.name);
    for (int i = 0; i < count; i++) {
        prism_device_info d;
        if (prism__cuda_query(i, &d) == PRISM_SUCCESS)
            put_cuda_device(&r, &d);
    }
    if (count == 0 && why != PRISM_ERROR_UNSUPPORTED)
        put(&r, "  (no CUDA devices: %s)\n", reason);
    return r.len;
}
