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

/* `list`: the run's devices ("1", "0,1", "cuda:2,cuda:2", "all"; NULL: none
 * named). `local_rank`: an MPI rank's place on its node (-1: no MPI), which
 * takes entry local_rank mod n of the list (of every device when none is
 * named or "all"). `gpus`: the driver's devices. True with `visible` (for
 * CUDA_VISIBLE_DEVICES: the devices used, once each, in the list's order)
 * and `renumbered` (the list in the numbers CUDA will then give them) when
 * the run uses fewer devices than the driver has, or reorders them; false
 * (nothing to do) otherwise, and whenever the list does not parse or names
 * a device beyond `gpus`, which the engine then reports as it always does. */
bool propagate_visible_plan(const char *list, int local_rank, int gpus, char *visible,
                            size_t visible_size, char *renumbered, size_t renumbered_size);

/* The entries of `dir` (the driver's /proc/driver/nvidia/gpus: one a GPU),
 * or -1 when it cannot be read. */
int propagate_driver_gpus(const char *dir);

#endif
