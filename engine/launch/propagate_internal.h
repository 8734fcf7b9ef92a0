/* Propagation's internal entry point below prism_propagate: the whole
 * generate / launch / compact loop over a geometry view, optics view and
 * output pointers the backend can write. Tests and benchmarks call it
 * directly with views built over host arrays. */
#ifndef PRISM_PROPAGATE_INTERNAL_H
#define PRISM_PROPAGATE_INTERNAL_H

#include "engine/context_internal.h"
#include "prism/device/geometry_view.h"
#include "prism/device/optics_view.h"
#include "prism/memory.h"
#include "prism/propagate.h"

/* Launch sizes. The host backend takes 1M photons a launch. On CUDA the
 * first launch takes 16K photons, later ones as many as the measured rate
 * fits in 20 ms (at most doubling, within [4K, 4M]), so that no launch
 * comes near the ~50 ms a display watchdog allows, whatever the placement. */
#define PRISM_PROPAGATE_PHOTONS_PER_LAUNCH (1u << 20)
#define PRISM_PROPAGATE_FIRST_SLICE (1u << 14)
#define PRISM_PROPAGATE_MIN_SLICE 4096u
#define PRISM_PROPAGATE_MAX_SLICE (1u << 22)
#define PRISM_PROPAGATE_LAUNCH_SECONDS 0.020
/* The wavefront's tail: below this many live photons (about what fills a
 * large GPU once) the megakernel takes this many steps a launch. */
#define PRISM_PROPAGATE_TAIL_PHOTONS (1u << 18)
#define PRISM_PROPAGATE_TAIL_STEPS 4u
/* Steps a photon takes in one launch before the survivors are compacted
 * into the next queue. On CUDA a warp runs as long as its longest-lived
 * photon, and most photons end within a few steps, so short launches keep
 * the warps full; the README's photon kernel table has the sweep that chose
 * 2. The host backend has no warps: it takes longer launches, fewer queue
 * passes. The CUDA wavefront (engine/launch/propagate_scheme.h) takes one
 * step a launch pair whatever the budget. */
#define PRISM_PROPAGATE_STEPS_PER_LAUNCH_CUDA 2u
#define PRISM_PROPAGATE_STEPS_PER_LAUNCH 10u
#define PRISM_PROPAGATE_MAX_RECORDS 1024u

/* photons: `source->count` prism_photon in backend memory (written);
 * records: count * desc->record_steps records in backend memory, or NULL.
 * `o` may be NULL (vacuum). summary: added to (prism_propagate_outputs),
 * or NULL; the stats' photon figures come from it then, else from the
 * backend's tally, so the photons are read once either way. */
prism_result prism__propagate_view(prism_context *ctx, const prism_geometry_view *g,
                                   const prism_optics_view *o, const prism_photon_source *source,
                                   const prism_propagate_desc *desc, prism_photon *photons,
                                   prism_step_record *records, prism_propagate_summary *summary,
                                   prism_propagate_stats *stats);

/* What prism_propagate_multi and prism_propagate_stream share: the checks
 * of their arguments (`what` names the call in messages), context i's
 * photons a call (its batch limit, shared by the contexts of one device),
 * and the error that names the context that failed. `late`: contexts after
 * the first may be NULL (they join later; checked then). */
prism_result prism__multi_check(const char *what, prism_context *const *ctxs,
                                const prism_geometry *const *gs, size_t n,
                                const prism_photon_source *source, const prism_propagate_desc *desc,
                                bool late);
prism_result prism__multi_limit(prism_context *const *ctxs, const prism_geometry *const *gs,
                                size_t n, size_t i, prism_source_kind kind,
                                const prism_propagate_desc *desc, size_t *limit);
prism_result prism__multi_failed(const char *what, prism_context *const *contexts, size_t failed,
                                 prism_result r);
/* One call's stats added to a run's (seconds left to the caller). */
void prism__stats_add(prism_propagate_stats *sum, const prism_propagate_stats *st);

/* A batch's hits on their way to host memory while its context goes on:
 * selected on the device into `staging` (kept and grown across batches),
 * then copied on the holder's own stream, so that the copy overlaps the
 * context's next batch. The holder waits (prism__hits_copy_wait) before it
 * reads the hits or hands `copy` to the next call, and releases it when
 * done. A copy of more than `async_bytes` (the page-locked part of the host
 * memory, which the holder sets: a copy into pageable memory would not
 * overlap anyway) is made at once. Where `before` is set, it is called once
 * the hits are selected and before their copy is made, so that the holder
 * may finish readying its host memory (and set async_bytes) while the
 * batch propagates. */
typedef struct prism__hits_copy {
    prism_buffer *staging;
    size_t staging_bytes;
    prism_stream *stream;
    size_t async_bytes;
    bool pending;
    void (*before)(struct prism__hits_copy *copy, void *user);
    void *before_user;
} prism__hits_copy;

/* prism_propagate, its hits (a host target) left in flight in `copy`. */
prism_result prism__propagate_copying(prism_context *ctx, const prism_geometry *geometry,
                                      const prism_photon_source *source,
                                      const prism_propagate_desc *desc,
                                      const prism_propagate_outputs *outputs,
                                      prism_propagate_stats *stats, prism__hits_copy *copy);
/* The copy finished (a no-op when none is in flight). */
prism_result prism__hits_copy_wait(prism__hits_copy *copy);
/* Its stream and staging released, after a wait. */
void prism__hits_copy_release(prism__hits_copy *copy);

/* Sum up final photons into stats (steps, OR of histories, counts). */
void prism__propagate_tally(const prism_photon *photons, size_t count,
                            prism_propagate_stats *stats);

#endif
