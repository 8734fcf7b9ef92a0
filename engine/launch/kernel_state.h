/* Per-context kernel state: the stream the kernels run on (CUDA), held
 * behind ctx->kernels so the kernels module keeps its own room. */
#ifndef PRISM_KERNEL_STATE_H
#define PRISM_KERNEL_STATE_H

#include "engine/context_internal.h"
#include "target.h"

struct prism_kernel_state {
    void *stream; /* cudaStream_t of the kernels; NULL = the default stream */
    /* CUDA: a stream of the device's highest priority, which the kernels
     * take while `urgent` (a propagation's tail: few photons live, each
     * step waiting on the last). Where another context shares the device,
     * a tail's blocks then go ahead of that context's full launches
     * instead of queueing behind them. NULL: the kernels' stream. */
    void *urgent_stream;
    bool urgent;
    /* The render colour table where kernels read it, kept between frames
     * so a viewer does not allocate and copy it 60 times a second. */
    prism__scratch colors;
    uint32_t *colors_host; /* what `colors` holds */
    uint32_t colors_count;
    /* The launch size the last propagation grew to on this geometry (its
     * node array names it), where the next call starts rather than ramping
     * up from the first slice again: a run's batches each paid that ramp. */
    const void *slice_geometry;
    uint32_t slice;
    /* Scratch held between the calls of a run (target.h) */
    unsigned keeping;
    prism__kept kept[PRISM__KEPT_BLOCKS];
    /* The CUDA render's variant and block (engine/launch/render_tuning.h);
     * until render_chosen, the defaults of engine/cuda/kernels.cu. */
    bool render_chosen;
    int render_variant;
    unsigned render_block;
    /* The wavefront's queue order (propagate_scheme.h: PRISM__SORT_*) and
     * its scratch, set for a step loop's run. */
    int sort_mode;
    void *sort_scratch;
    size_t sort_bytes;
    /* The propagation scheme chosen for the context
     * (engine/launch/propagate_scheme.h); 0: scheme_default. */
    int propagate_scheme;
    /* The photon steps' settings, read from the environment once, when
     * the context is made (prism__propagate_settings_init): the scheme
     * AUTO stands for, the wavefront's queue order (PRISM__SORT_*), and
     * the megakernel's part in the wavefront's tail: tail_steps steps a
     * launch once fewer than tail_photons photons live. */
    int scheme_default;
    int sort_choice;
    uint32_t tail_steps, tail_photons;
};

#endif
