/* How long a rank's launcher ran before it started the rank: for mpirun
 * on a GPU host, mostly hwloc asking CUDA and NVML about the devices
 * (0.37-0.70 s on two H100s, against 0.045-0.065 s with those probes off),
 * before any of prism-propagate's own work. */
#ifndef PRISM_TOOLS_PROPAGATE_LAUNCH_H
#define PRISM_TOOLS_PROPAGATE_LAUNCH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Seconds from process `parent`'s start to process `pid`'s (each read from
 * /proc/PID/stat; an exec keeps a process's start), to the kernel's clock
 * tick; -1 where either cannot be read (a process gone, no /proc). */
double propagate_launch_seconds(pid_t pid, pid_t parent);

/* The note rank 0 gives about a launch of `seconds` under mpirun, into
 * note[size]; false (no note) when the launch was quick (under 0.25 s) or
 * unknown, or hwloc's components were already chosen (`components`: the
 * value of HWLOC_COMPONENTS, NULL when unset). */
bool propagate_launch_note(double seconds, const char *components, char *note, size_t size);

#endif
