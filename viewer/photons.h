/* Photons: the engine's step records in one GL buffer, drawn as short
 * tracks with a point at the head, animated in time by a vertex shader
 * that interpolates each photon between its records, coloured by history
 * and filtered by a history flag. Two ways to fill the buffer:
 *   VBO mode   the engine writes the records straight into the GL buffer
 *              (registered with CUDA: they never leave the GPU);
 *   copy mode  the engine writes device memory, which is copied to the host
 *              and sent to GL with glBufferSubData.
 * VBO mode without interop falls back to copy mode, saying so once. */
#ifndef VIEWER_PHOTONS_H
#define VIEWER_PHOTONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <prism/geometry.h>
#include <prism/memory.h>
#include <prism/propagate.h>

#include "gl.h"
#include "options.h"

#define VIEWER_FILTER_COUNT 7

typedef struct viewer_photons {
    GLuint vbo, texture, program, vao;
    GLint u_mvp, u_records, u_steps, u_time, u_track, u_filter, u_per_photon, u_point;
    size_t count;            /* photons */
    unsigned steps;          /* records per photon (K) */
    viewer_photon_mode mode; /* the mode in use */
    bool fallback_said;
    prism_buffer *gl_buffer; /* VBO mode: the VBO as the engine sees it */
    prism_buffer *device;    /* copy mode: records in device memory */
    void *staging;           /* copy mode: their host copy (pinned when it can be) */
    prism_buffer *pinned;    /* the pinned buffer holding `staging`, or NULL (heap) */
    prism_gl_get_proc_address_fn loader;
    uint64_t seed;
    double time_max; /* ns: the last photon's end */
    int filter;      /* index into the filter list, 0 = all */
    prism_propagate_stats stats;
    double propagate_seconds; /* prism_propagate */
    double copy_seconds;      /* copy mode: device -> host -> GL */
} viewer_photons;

/* GL objects for `count` photons (0: nothing is drawn): GL only, so it
 * may come before the engine opens; viewer_photons_set_mode then makes the
 * buffers of a mode. Returns 0, or -1 with `err`. */
int viewer_photons_create(viewer_photons *ph, size_t count, prism_gl_get_proc_address_fn loader,
                          char *err, size_t err_size);
/* Switch mode (V key); VBO without interop stays in copy mode. */
int viewer_photons_set_mode(viewer_photons *ph, prism_context *ctx, viewer_photon_mode mode,
                            char *err, size_t err_size);
/* Propagate from `source` and fill the GL buffer. */
int viewer_photons_propagate(viewer_photons *ph, prism_context *ctx, const prism_geometry *geometry,
                             const prism_photon_source *source, char *err, size_t err_size);
/* Draw at simulation time `time` (ns). */
void viewer_photons_draw(const viewer_photons *ph, const float view[16], const float proj[16],
                         double time);
void viewer_photons_destroy(viewer_photons *ph);

/* The filter's name ("all", "SURFACE_DETECT", ...) and bits (0 = all). */
const char *viewer_photons_filter_name(int filter);
uint32_t viewer_photons_filter_bits(int filter);
const char *viewer_photon_mode_name(viewer_photon_mode mode);

#endif
