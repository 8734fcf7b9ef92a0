/* prism-propagate starts CUDA on the devices it uses only: CUDA's start
 * (cuInit) brings up every device the driver lets it see, so a one-device
 * run, or an MPI rank, on a host of several GPUs pays for starting the
 * others. The plan is a pure function of the run's device list, its MPI
 * node-local rank and the driver's GPU count (read from the driver's
 * procfs, which needs no CUDA); prism-propagate applies it through
 * CUDA_VISIBLE_DEVICES before CUDA starts, unless the user set that. */
#ifndef PRISM_PROPAGATE_VISIBLE_H
#define PRISM_PROPAGATE_VISIBLE_H

#include <stdbool.h>
#include <stddef.h>

#include "engine/device_choice.h"

/* `sources`: where the run's devices are named (prism_device_sources:
 * --devices as the argument, then $PRISM_DEVICE, $CUDA_DEVICE,
 * ~/.cuda-device), with device_count the driver's GPUs; they resolve by
 * the engine's own rules (prism__choose_devices), none named meaning every
 * device. `local_rank`: an MPI rank's place on its node (-1: no MPI),
 * which takes entry local_rank mod n of them. True with `visible` (for
 * CUDA_VISIBLE_DEVICES: the devices used, once each, in order) and
 * `renumbered` (the run's list in the numbers CUDA will then give them)
 * when the run uses fewer devices than the driver has, or reorders them.
 * False (nothing to do) otherwise: a run outside MPI that names no device
 * (its context takes the first usable one, which a restriction would
 * decide in advance), and a list the engine refuses, whose message the
 * run then gives as it always does. */
bool propagate_visible_plan(const prism_device_sources *sources, int local_rank, char *visible,
                            size_t visible_size, char *renumbered, size_t renumbered_size);

/* The processes a run of `sources` (as for propagate_visible_plan) is
 * spread over when it asks for none: one a device where the run's own
 * list (the argument, or a $PRISM_DEVICE that holds a list: "0,1", "all")
 * names two or more devices, none twice; 1 otherwise (one device, a list
 * with a device twice, which asks for contexts side by side, or a list
 * the engine refuses, whose message the run then gives). A process each
 * starts CUDA on its own device, where one process starting several pays
 * for all of them before its first batch. */
int propagate_processes_plan(const prism_device_sources *sources);

/* CUDA makes each context CUDA_DEVICE_MAX_CONNECTIONS hardware work
 * queues, 8 unless told, at about 11 ms of the driver's time each (H100:
 * a context took 136-141 ms with 8, 82-103 with 4, 61-69 with 2). A CUDA
 * start is work the driver does for one process at a time, so a second
 * device's start waits for the first's, and every millisecond of it
 * delays the second device's first batch. A run of prism-propagate uses
 * four streams a context (the kernels', the tails', the two batch slots'
 * copies): each keeps a queue of its own with 4, where with 2 a slot's
 * copies share one with the kernels (two H100s, 10^9 photons side by
 * side: 2 started a context 0.01-0.06 s sooner, but one GPU's calls took
 * 7.48-7.50 s against 7.45 s). */
#define PROPAGATE_CUDA_CONNECTIONS "4"

/* The value prism-propagate gives CUDA_DEVICE_MAX_CONNECTIONS before CUDA
 * starts: PROPAGATE_CUDA_CONNECTIONS, or NULL where `current` (the
 * environment's value) is set and so kept. */
const char *propagate_connections_plan(const char *current);

/* The entries of `dir` (the driver's /proc/driver/nvidia/gpus: one a GPU),
 * or -1 when it cannot be read. */
int propagate_driver_gpus(const char *dir);

#endif
