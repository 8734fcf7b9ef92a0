/* How the CUDA backend runs the photon steps, so that prism-bench
 * propagate and the tests can compare the schemes in one process.
 * Internal. MEGA: one kernel runs whole steps (prism_photon_run, a few a
 * launch). WAVE: each step is two kernels, a trace kernel that writes
 * every queued photon's hit (on the shared walk, which takes the wide
 * tree where the upload made one; on the tuned GPU binary walk where the
 * geometry is all in device memory without one) and a physics kernel that takes the
 * rest of the step from it (engine/cuda/photon_kernels.cuh). WAVE_GENERIC:
 * WAVE with the trace always on prism_trace_closest. Every scheme gives
 * the same photons, records and stats (launches apart). The choice lives
 * in the context's kernel state, as the render variant does; AUTO, the
 * default, is the environment's PRISM_PROPAGATE_SCHEME (mega, wave,
 * wave-generic) where set when the context was made, else the launcher's
 * default (WAVE: on geometry with a mapped part or a wide tree its trace
 * takes the shared walk, as WAVE_GENERIC). The host backend has one
 * scheme and ignores the choice. */
#ifndef PRISM_PROPAGATE_SCHEME_H
#define PRISM_PROPAGATE_SCHEME_H

#include "prism/context.h"

#ifdef __cplusplus
extern "C" {
#endif

struct prism_kernel_state;

enum {
    PRISM__SCHEME_AUTO = 0,
    PRISM__SCHEME_MEGA,
    PRISM__SCHEME_WAVE,
    PRISM__SCHEME_WAVE_GENERIC,
    PRISM__SCHEMES
};

/* Run ctx's propagations with `scheme` (a PRISM__SCHEME_*). Returns 0 (and
 * changes nothing) when it is out of range or ctx is NULL. */
int prism__propagate_scheme(prism_context *ctx, int scheme);
/* The scheme ctx's next propagation on CUDA takes (never AUTO). */
int prism__propagate_scheme_get(const prism_context *ctx);
/* "mega", "wave", "wave-generic" (and "auto") to a scheme; -1 if unknown. */
int prism__propagate_scheme_parse(const char *name);
const char *prism__propagate_scheme_name(int scheme);

/* The order of the wavefront's queue each step: NONE, the compaction's;
 * POS, a Morton code of the photons' positions in the scene's box; DIRPOS
 * (the default), the octant of their directions, then that code, so that
 * a warp's photons walk nearby nodes the same way (the README's photon
 * kernel table has the figures). The environment's PRISM_PROPAGATE_SORT
 * (none, pos, dirpos) chooses another when a context is made. Any order
 * gives the same photons. */
enum { PRISM__SORT_NONE = 0, PRISM__SORT_POS, PRISM__SORT_DIRPOS, PRISM__SORTS };
/* Queues shorter than this are not sorted (they do not fill the device,
 * and gain less than the sort costs), nor is scratch made for a call of
 * fewer photons. */
#define PRISM__SORT_MIN_PHOTONS (1u << 16)
/* The order PRISM_PROPAGATE_SORT asks for (DIRPOS where unset or unknown). */
int prism__propagate_sort_from_env(void);
const char *prism__propagate_sort_name(int sort);

/* A new context's photon settings (kernel_state.h) from the environment:
 * PRISM_PROPAGATE_SCHEME, _SORT, _TAIL_STEPS and _TAIL_PHOTONS, read once
 * here so that no propagation reads the environment (which another thread
 * may be changing). */
void prism__propagate_settings_init(struct prism_kernel_state *k);
/* The megakernel's steps a launch in the wavefront's tail for ctx's next
 * propagations (0: the wavefront to the end; negative: the built-in
 * default, whatever the environment said). Returns 0 when ctx has no
 * kernel state. */
int prism__propagate_tail(prism_context *ctx, int steps);

#ifdef __cplusplus
}
#endif

#endif
