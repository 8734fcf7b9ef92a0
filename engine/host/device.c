/* What the host backend runs on: the CPU's name, its threads and memory. */
#include <omp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "engine/devices.h"

static void cpu_name(char *out, size_t size)
{
    snprintf(out, size, "CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) != 0)
            continue;
        const char *colon = strchr(line, ':');
        if (!colon)
            break;
        colon++;
        while (*colon == ' ' || *colon == '\t')
            colon++;
        snprintf(out, size, "%.*s", (int)strcspn(colon, "\n"), colon);
        break;
    }
    fclose(f);
}

void prism__host_query(prism_device_info *info, int threads)
{
    memset(info, 0, sizeof *info);
    info->backend = PRISM_BACKEND_HOST;
    info->index = -1;
    cpu_name(info->name, sizeof info->name);
    info->host_threads = threads > 0 ? threads : omp_get_max_threads();
    info->multiprocessors = info->host_threads;
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    info->total_memory = pages > 0 && page > 0 ? (size_t)pages * (size_t)page : 0;
    info->can_map_host_memory = true; /* "mapped" memory is heap memory here */
    info->unified_addressing = true;
}
