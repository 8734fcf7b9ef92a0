/* prism-propagate's contexts: one, or one per device that --devices (else
 * a list in $PRISM_DEVICE) names, by the engine's device rules
 * (prism_device_list). Under mpirun each rank takes one device of that
 * list by its node-local rank. CUDA is shown only the devices used
 * (propagate_visible.h). */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "propagate_tool.h"
#include "propagate_visible.h"

/* $PRISM_DEVICE when it names several devices ("0,1", "all"). */
static const char *env_list(void)
{
    const char *v = getenv("PRISM_DEVICE");
    if (v == NULL)
        return NULL;
    while (isspace((unsigned char)*v))
        v++;
    return strchr(v, ',') != NULL || strncmp(v, "all", 3) == 0 ? v : NULL;
}

/* Entries of a list on the host backend: the contexts that stand in for
 * devices ("all": one, the host). */
static size_t host_entries(const char *list)
{
    while (isspace((unsigned char)*list))
        list++;
    if (strncmp(list, "all", 3) == 0)
        return 1;
    size_t n = 1;
    for (const char *c = list; *c; c++)
        n += *c == ',';
    return n;
}

/* The entries of a CUDA_VISIBLE_DEVICES value: the devices CUDA shows. */
static int visible_entries(const char *v)
{
    while (isspace((unsigned char)*v))
        v++;
    if (*v == 0)
        return 0;
    int n = 1;
    for (const char *c = v; *c; c++)
        n += *c == ',';
    return n;
}

/* Where the run's devices are named (--devices, then the environment),
 * and the devices CUDA would show (CUDA_VISIBLE_DEVICES' entries, else
 * the driver's GPUs), without starting CUDA. path and file hold what
 * the sources point into. */
static void run_sources(const propagate_options *o, prism_device_sources *sources, char path[512],
                        char file[128])
{
    prism__device_sources_from_env(sources, o->devices, path, 512, file, 128);
    const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
    sources->device_count = cvd != NULL ? visible_entries(cvd)
                                        : propagate_driver_gpus("/proc/driver/nvidia/gpus");
}

void propagate_visible_devices(propagate_options *o)
{
    static char visible[256], renumbered[256];
    if (getenv("CUDA_VISIBLE_DEVICES") != NULL || o->engine.backend == PRISM_BACKEND_HOST ||
        o->validate)
        return;
    prism_device_sources sources;
    char path[512], file[128];
    run_sources(o, &sources, path, file);
    if (!propagate_visible_plan(&sources, o->local_rank, visible, sizeof visible, renumbered,
                                sizeof renumbered) ||
        setenv("CUDA_VISIBLE_DEVICES", visible, 1) != 0)
        return;
    o->devices = renumbered; /* before the environment's list, as an argument is */
    o->visible = visible;
}

void propagate_cuda_connections(propagate_options *o)
{
    const char *v = propagate_connections_plan(getenv("CUDA_DEVICE_MAX_CONNECTIONS"));
    if (v != NULL && o->engine.backend != PRISM_BACKEND_HOST &&
        setenv("CUDA_DEVICE_MAX_CONNECTIONS", v, 1) == 0)
        o->connections = v;
}

int propagate_auto_processes(const propagate_options *o)
{
    if (o->engine.backend == PRISM_BACKEND_HOST || o->validate)
        return 1;
    prism_device_sources sources;
    char path[512], file[128];
    run_sources(o, &sources, path, file);
    return propagate_processes_plan(&sources);
}

int propagate_device_descs(const propagate_options *o, prism_context_desc *descs, char names[][32],
                           size_t *n)
{
    const char *list = o->devices != NULL ? o->devices : env_list();
    const prism_context_desc base = {.backend = o->engine.backend};
    *n = 0;
    /* One context as a plain run makes it: no list and no MPI rank, or a
     * rank with no list, no backend asked for and no CUDA device (the
     * host, as for a plain run). */
    const bool want_lanes = o->lanes > 1 && o->engine.backend != PRISM_BACKEND_HOST &&
                            prism_cuda_device_count() > 0;
    if (list == NULL && !want_lanes &&
        (o->local_rank < 0 ||
         (o->engine.backend == PRISM_BACKEND_AUTO && prism_cuda_device_count() == 0))) {
        descs[0] = base;
        names[0][0] = 0;
        *n = 1;
        return PROPAGATE_OK;
    }
    if (o->engine.backend == PRISM_BACKEND_HOST) {
        const size_t want = list != NULL && o->local_rank < 0 ? host_entries(list) : 1;
        if (want > PROPAGATE_MAX_CONTEXTS) {
            fprintf(stderr, "prism-propagate: --devices: more than %d contexts\n",
                    PROPAGATE_MAX_CONTEXTS);
            return PROPAGATE_USAGE;
        }
        for (size_t i = 0; i < want; i++) {
            descs[i] = base;
            snprintf(names[i], 32, "host context %zu", i);
        }
        *n = want;
        return PROPAGATE_OK;
    }
    int idx[PROPAGATE_MAX_CONTEXTS], count = 0;
    char why[512];
    /* NULL: the engine reads $PRISM_DEVICE and names it in its message */
    prism_result r = prism_device_list(o->devices, idx, PROPAGATE_MAX_CONTEXTS, &count, why,
                                       sizeof why);
    if (r != PRISM_SUCCESS) {
        fprintf(stderr, "prism-propagate: %s%s\n", o->devices != NULL ? "--devices: " : "", why);
        return r == PRISM_ERROR_INVALID_DEVICE ? PROPAGATE_USAGE : PROPAGATE_FAILED;
    }
    if (o->local_rank >= 0) { /* an MPI rank: one device of the list */
        idx[0] = idx[o->local_rank % count];
        count = 1;
    }
    /* --lanes: each device's contexts side by side in the list */
    const int lanes = o->lanes > 1 ? (int)o->lanes : 1;
    if (count * lanes > PROPAGATE_MAX_CONTEXTS) {
        fprintf(stderr, "prism-propagate: %d devices x %d lanes: more than %d contexts\n", count,
                lanes, PROPAGATE_MAX_CONTEXTS);
        return PROPAGATE_USAGE;
    }
    for (int i = 0; i < count * lanes; i++) {
        descs[i] = base;
        descs[i].backend = PRISM_BACKEND_CUDA;
        snprintf(names[i], 32, "cuda:%d", idx[i / lanes]);
        descs[i].device = names[i];
    }
    *n = (size_t)(count * lanes);
    return PROPAGATE_OK;
}
