/* The host's part of a GENSTEPS source (prism/device/genstep.h): the
 * gensteps read where the host can (a copy on CUDA, where they may be
 * device memory), the prefix sums of their photon counts that number the
 * run's photons, the checks that name the genstep at fault, and the range
 * of gensteps a call's photons come from. The kernels get only that range
 * and its offsets (engine/launch/propagate.c). */
#ifndef PRISM_GENSTEPS_SOURCE_H
#define PRISM_GENSTEPS_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "engine/context_internal.h"
#include "prism/device/genstep.h"
#include "prism/geometry.h"
#include "prism/propagate.h"

typedef struct prism__genstep_run {
    const prism_genstep *all; /* the caller's gensteps, or `owned` */
    void *owned;              /* a host copy, or NULL */
    uint64_t *offsets;        /* count + 1: genstep k holds photons [offsets[k], offsets[k+1]) */
    size_t count;
    uint64_t total; /* photons of all of them */
} prism__genstep_run;

/* Read s->gensteps (s->kind GENSTEPS) and sum their photons. `what` names
 * the call in messages. */
prism_result prism__gensteps_open(prism_context *ctx, const prism_photon_source *s,
                                  const char *what, prism__genstep_run *run);
void prism__gensteps_close(prism__genstep_run *run);

/* Photons [first, first + *count) among the gensteps': a count of 0 becomes
 * all from `first` on; an error when they go beyond the gensteps'. */
prism_result prism__gensteps_resolve(prism_context *ctx, const prism__genstep_run *run,
                                     uint64_t first, size_t *count, const char *what);

/* The gensteps [*g0, *g1] that make photons [first, first + count) (count
 * > 0): from the first's to the last's, and every genstep without photons
 * before (after) them when the photons start (end) the gensteps', so that a
 * call of the whole run checks them all. */
void prism__gensteps_range(const prism__genstep_run *run, uint64_t first, uint64_t count,
                           size_t *g0, size_t *g1);

/* Check gensteps [g0, g1]: the error names the first bad one by its index
 * in the caller's array. material_count: the optics tables'. */
prism_result prism__gensteps_check(prism_context *ctx, const prism__genstep_run *run, size_t g0,
                                   size_t g1, uint32_t material_count, const char *what);

/* For a run of many calls (prism_propagate_stream, _multi): `out` is `in`
 * with its count resolved from desc_first on, and every genstep checked
 * once against `geometry`'s tables. Other kinds: out = in. */
prism_result prism__gensteps_run_source(prism_context *ctx, const prism_geometry *geometry,
                                        const prism_photon_source *in, uint64_t desc_first,
                                        prism_photon_source *out, const char *what);
/* The same for the arguments of prism_propagate_stream and _multi before
 * they are checked: nothing (out = in) where the first context or
 * geometry is missing, which their checks then report. */
prism_result prism__gensteps_run_sources(prism_context *const *contexts,
                                         const prism_geometry *const *geometries, size_t n,
                                         const prism_photon_source *in, uint64_t desc_first,
                                         prism_photon_source *out, const char *what);

#endif
