/* A rank's launch time (propagate_launch.h), from the start times Linux
 * keeps for every process. */
#define _POSIX_C_SOURCE 200809L
#include "propagate_launch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Field 22 of /proc/PID/stat: the process's start, in clock ticks since
 * boot; false when it cannot be read. The second field, the command's
 * name in parentheses, may hold spaces and parentheses itself: the fields
 * after it are counted from its last ')'. */
static bool start_ticks(pid_t pid, unsigned long long *ticks)
{
    char path[64], text[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return false;
    const size_t got = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[got] = 0;
    const char *p = strrchr(text, ')');
    if (p == NULL)
        return false;
    p++;
    for (int field = 3; field < 22; field++) { /* past state (3) .. itrealvalue (21) */
        p = strchr(p + 1, ' ');
        if (p == NULL)
            return false;
    }
    char *end;
    *ticks = strtoull(p + 1, &end, 10);
    return end != p + 1;
}

double propagate_launch_seconds(pid_t pid, pid_t parent)
{
    unsigned long long mine, theirs;
    const long hz = sysconf(_SC_CLK_TCK);
    if (hz <= 0 || !start_ticks(pid, &mine) || !start_ticks(parent, &theirs) || mine < theirs)
        return -1.0;
    return (double)(mine - theirs) / (double)hz;
}

bool propagate_launch_note(double seconds, const char *components, char *note, size_t size)
{
    if (seconds < 0.25 || components != NULL || size == 0)
        return false;
    snprintf(note, size,
             "mpirun ran %.2f s before it started this rank; on a GPU host that is mostly hwloc "
             "asking CUDA and NVML about the GPUs, which "
             "HWLOC_COMPONENTS=-cuda,-nvml,-opencl,-rsmi,-levelzero in mpirun's environment "
             "skips (prism-propagate finds its devices without hwloc)",
             seconds);
    return true;
}
