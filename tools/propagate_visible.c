/* The devices prism-propagate lets CUDA see (propagate_visible.h). */
#include "propagate_visible.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VISIBLE_MAX PRISM_MAX_DEVICES

static bool named(const char *v)
{
    return v != NULL && *v != '\0';
}

/* `n` numbers joined by commas into out; false when they do not fit. */
static bool joined(const int *v, int n, char *out, size_t size)
{
    size_t at = 0;
    out[0] = 0;
    for (int i = 0; i < n; i++) {
        const int w = snprintf(out + at, size - at, "%s%d", i ? "," : "", v[i]);
        if (w < 0 || (size_t)w >= size - at)
            return false;
        at += (size_t)w;
    }
    return true;
}

bool propagate_visible_plan(const prism_device_sources *sources, int local_rank, char *visible,
                            size_t visible_size, char *renumbered, size_t renumbered_size)
{
    const bool none = sources->argument == NULL && !named(sources->prism_device) &&
                      !named(sources->cuda_device) && sources->file_text == NULL;
    if (sources->device_count <= 0 || visible_size == 0 || renumbered_size == 0 ||
        (none && local_rank < 0))
        return false;
    int devices[VISIBLE_MAX], n = 0;
    char why[256];
    if (prism__choose_devices(sources, devices, VISIBLE_MAX, &n, why, sizeof why) !=
            PRISM_SUCCESS ||
        n == 0)
        return false;      /* the engine says what is wrong with it */
    if (local_rank >= 0) { /* a rank: one entry of the list */
        devices[0] = devices[local_rank % n];
        n = 1;
    }
    int used[VISIBLE_MAX], u = 0, renum[VISIBLE_MAX];
    for (int i = 0; i < n; i++) {
        int k = 0;
        while (k < u && used[k] != devices[i])
            k++;
        if (k == u)
            used[u++] = devices[i];
        renum[i] = k;
    }
    bool natural = u == sources->device_count;
    for (int k = 0; k < u && natural; k++)
        natural = used[k] == k;
    if (natural) /* all of them, in CUDA's own order */
        return false;
    return joined(used, u, visible, visible_size) && joined(renum, n, renumbered, renumbered_size);
}

/* Whether v, skipping blanks, is a list ("0,1") or "all". */
static bool list_of_devices(const char *v)
{
    if (!named(v))
        return false;
    while (*v == ' ' || *v == '\t')
        v++;
    return strchr(v, ',') != NULL || strncmp(v, "all", 3) == 0;
}

int propagate_processes_plan(const prism_device_sources *sources)
{
    if (sources->device_count < 2 ||
        !(named(sources->argument) || list_of_devices(sources->prism_device)))
        return 1;
    int devices[VISIBLE_MAX], n = 0;
    char why[256];
    if (prism__choose_devices(sources, devices, VISIBLE_MAX, &n, why, sizeof why) !=
            PRISM_SUCCESS ||
        n < 2)
        return 1;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
            if (devices[i] == devices[j])
                return 1;
    return n;
}

const char *propagate_connections_plan(const char *current)
{
    return current == NULL ? PROPAGATE_CUDA_CONNECTIONS : NULL;
}

int propagate_driver_gpus(const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return -1;
    int n = 0;
    for (const struct dirent *e; (e = readdir(d)) != NULL;)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}
