/* Occupancy arithmetic, the C version of PyCUDA's OccupancyRecord brought
 * up to date with the CUDA occupancy calculator: registers are allocated per
 * warp in units of `register_allocation_unit`, warps in groups of
 * `warp_allocation_granularity`, shared memory in units of
 * `shared_memory_allocation_unit` plus a reserve per block. */
#include <limits.h>

#include "prism/context.h"

static int round_up(int v, int unit)
{
    return unit > 0 ? (v + unit - 1) / unit * unit : v;
}

static size_t round_up_size(size_t v, size_t unit)
{
    return unit > 0 ? (v + unit - 1) / unit * unit : v;
}

static int blocks_by_registers(const prism_device_info *d, int warps_per_block, int registers)
{
    if (registers <= 0)
        return INT_MAX;
    int per_warp = round_up(registers * d->warp_size, d->register_allocation_unit);
    if (per_warp * warps_per_block > d->registers_per_block)
        return 0;
    int warps = d->registers_per_multiprocessor / per_warp;
    if (d->warp_allocation_granularity > 0)
        warps = warps / d->warp_allocation_granularity * d->warp_allocation_granularity;
    return warps / warps_per_block;
}

static int blocks_by_shared(const prism_device_info *d, size_t shared)
{
    if (shared == 0)
        return INT_MAX;
    size_t per_block = round_up_size(shared, d->shared_memory_allocation_unit) +
                       d->reserved_shared_memory_per_block;
    return (int)(d->shared_memory_per_multiprocessor / per_block);
}

prism_result prism_occupancy_compute(const prism_device_info *d, int threads, int registers,
                                     size_t shared, prism_occupancy *out)
{
    if (!d || !out || d->warp_size <= 0 || threads < 1 || threads > d->max_threads_per_block ||
        registers < 0 || (d->max_registers_per_thread && registers > d->max_registers_per_thread) ||
        shared > d->shared_memory_per_block)
        return PRISM_ERROR_INVALID_ARGUMENT;

    int warps_per_block = (threads + d->warp_size - 1) / d->warp_size;
    int limits[4] = {
        [PRISM_LIMIT_DEVICE] = d->max_blocks_per_multiprocessor,
        [PRISM_LIMIT_WARPS] = d->max_warps_per_multiprocessor / warps_per_block,
        [PRISM_LIMIT_REGISTERS] = blocks_by_registers(d, warps_per_block, registers),
        [PRISM_LIMIT_SHARED_MEMORY] = blocks_by_shared(d, shared),
    };
    prism_occupancy_limit by = PRISM_LIMIT_DEVICE;
    for (int i = 1; i < 4; i++)
        if (limits[i] < limits[by])
            by = (prism_occupancy_limit)i;
    out->blocks_per_multiprocessor = limits[by];
    out->warps_per_multiprocessor = limits[by] * warps_per_block;
    out->occupancy = d->max_warps_per_multiprocessor > 0
                         ? (double)out->warps_per_multiprocessor / d->max_warps_per_multiprocessor
                         : 0.0;
    out->limited_by = by;
    return PRISM_SUCCESS;
}

const char *prism_occupancy_limit_name(prism_occupancy_limit limit)
{
    switch (limit) {
    case PRISM_LIMIT_DEVICE: return "device";
    case PRISM_LIMIT_WARPS: return "warps";
    case PRISM_LIMIT_REGISTERS: return "registers";
    case PRISM_LIMIT_SHARED_MEMORY: return "shared memory";
    }
    return "unknown";
}
