/* The backend table: every call the shared engine makes into a backend,
 * in one struct chosen once when a context is made (engine/context.c) and
 * kept in ctx->be, as GLFW's _GLFWplatform. The host's is
 * engine/host/backend.c, CUDA's engine/cuda/backend.c. An entry a backend
 * does not have is NULL: the shared code tests the entry, never the build,
 * and answers PRISM_ERROR_UNSUPPORTED or takes another path.
 *
 * Pointers given to the kernels are the backend's own: heap memory on the
 * host; device pointers (device, mapped or GL-mapped memory) on CUDA. The
 * calls that need no context (device enumeration, engine/devices.h; NVRTC,
 * engine/module/internal.h) stay link-time functions, and so does the
 * bench's choice of render variant (engine/launch/render_tuning.h: it
 * keeps the choice in the context's kernel state, but only the CUDA
 * backend has variants), which engine/cuda/no_cuda.c answers in a build
 * without CUDA. */
#ifndef PRISM_BACKEND_H
#define PRISM_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/context_internal.h"
#include "prism/bvh.h"
#include "prism/device/geometry_view.h"
#include "prism/device/optics_view.h"
#include "prism/device/photon.h"
#include "prism/device/shade.h"
#include "prism/device/source.h"
#include "prism/geometry.h"
#include "prism/memory.h"
#include "prism/module.h"
#include "prism/propagate.h"

#ifdef __cplusplus
extern "C" {
#endif

struct prism__memory_backend; /* engine/memory/internal.h */
struct prism_kernel_state;    /* engine/launch/kernel_state.h */
struct prism_optics;          /* engine/upload/optics_tables.h */

/* What the device BVH builder made: three device buffers the caller owns
 * (release them, or keep them as the geometry's arrays), the figures of
 * the tree and of the build. */
typedef struct prism__device_bvh {
    prism_buffer *nodes;     /* node_count x prism_bvh_node */
    prism_buffer *triangles; /* triangle_count x 3 uint32, leaf order */
    prism_buffer *ids;       /* triangle_count x uint32: scene triangle id */
    size_t node_count;
    float bbox_lo[3], bbox_hi[3];
    prism_bvh_build_report report; /* stats, phases, iterations, peak memory */
} prism__device_bvh;

/* How the device builder builds: prism_geometry_desc's fields for it,
 * checked by the upload. */
typedef struct prism__device_bvh_settings {
    unsigned max_leaf_size; /* 1..64; 0 = 4 */
    unsigned radius;        /* the nearest-neighbour window: 8 or 16; 0 = 16 */
    unsigned tail;          /* clusters the tail kernel starts from: 2..4096; 0 = 4096 */
    bool hploc;             /* H-PLOC's one launch instead of PLOC's passes */
    bool trace;             /* log where the clustering's time goes (PRISM_LOG_DEBUG) */
} prism__device_bvh_settings;

/* Where the device collapse puts the wide tree: the caller's buffers for
 * node_count prism_wide_node and triangle_count prism_wide_triangle,
 * kernel-writable (device or mapped memory), 16-byte aligned. */
typedef prism_result (*prism__wide_place)(void *user, size_t node_count, size_t triangle_count,
                                          void **nodes, void **triangles);

/* What the device collapse made (the arrays are the caller's). */
typedef struct prism__device_wide {
    size_t node_count;
    unsigned depth; /* deepest node, root = 0 */
} prism__device_wide;

typedef struct prism__backend {
    /* Memory: allocation, copies, streams, pools, GL interop. */
    const struct prism__memory_backend *memory;
    /* Make ctx's device current on the calling thread (the CUDA runtime
     * keeps the current device per thread). NULL: nothing to bind. */
    prism_result (*bind)(prism_context *ctx);

    /* ---- kernels (engine/launch/kernel_backend.h says what each does) */
    /* The backend's part of the kernel state (CUDA: the kernel stream). */
    prism_result (*kernels_init)(prism_context *ctx, struct prism_kernel_state *state);
    void (*kernels_shutdown)(prism_context *ctx, struct prism_kernel_state *state);
    /* Rows [y0, y0 + rows) of the image. Synchronous. */
    prism_result (*render)(prism_context *ctx, const prism_geometry_view *g,
                           const prism_render_params *p, uint32_t *image, uint32_t y0,
                           uint32_t rows);
    /* Photons [0, count) in arithmetic `math`: generated, record 0
     * written, queue[i] = i. The host has one arithmetic (the exact one).
     * `o`: the optics tables gensteps read (NULL: vacuum). */
    prism_result (*generate)(prism_context *ctx, prism_propagate_math math,
                             const prism_source_params *s, const prism_optics_view *o,
                             const prism_propagate_params *q, const prism_photon *given,
                             prism_photon *photons, prism_step_record *records, uint32_t *queue,
                             uint32_t count);
    /* Up to `budget` steps of queue_in[0, n_in); survivors appended to
     * queue_out, their number in *n_out. `counter`: one uint32 of the
     * kernels' memory the CUDA kernels count in (the host needs none). */
    prism_result (*propagate)(prism_context *ctx, prism_propagate_math math,
                              const prism_geometry_view *g, const prism_optics_view *o,
                              const prism_propagate_params *q, prism_photon *photons,
                              prism_step_record *records, const uint32_t *queue_in, uint32_t n_in,
                              uint32_t *queue_out, uint32_t *n_out, uint32_t budget,
                              uint32_t *counter);
    /* One step of queue_in[0, n_in) as a wavefront: a trace kernel writes
     * each photon's hit to hits[0, n_in) (kernel memory), a physics kernel
     * takes the rest of the step from it; survivors as propagate's.
     * `tuned`: the trace on the GPU binary walk. NULL: no wavefront (the
     * host runs propagate). */
    prism_result (*propagate_wave)(prism_context *ctx, prism_propagate_math math,
                                   const prism_geometry_view *g, const prism_optics_view *o,
                                   const prism_propagate_params *q, prism_photon *photons,
                                   prism_step_record *records, const uint32_t *queue_in,
                                   uint32_t n_in, uint32_t *queue_out, uint32_t *n_out,
                                   uint32_t *counter, prism_trace_hit *hits, int tuned);
    /* The stats' photon figures from `count` photons where the kernels
     * wrote them. */
    prism_result (*tally)(prism_context *ctx, const prism_photon *photons, uint32_t count,
                          prism_propagate_stats *st);
    /* Add photons[0, count) (where the kernels wrote them) to a run's
     * summary (engine/launch/summary.h). */
    prism_result (*summary)(prism_context *ctx, const prism_photon *photons, size_t count,
                            prism_propagate_summary *s);
    /* Count the photons of in[0, count) with any bit of `any_of`; when
     * `out` is given and they fit `capacity`, copy them there in order.
     * *selected is the count in every case; PRISM_ERROR_OUT_OF_RANGE when
     * they do not fit. */
    prism_result (*select)(prism_context *ctx, const prism_photon *in, size_t count,
                           uint32_t any_of, prism_photon *out, size_t capacity, size_t *selected);
    /* Registers and static shared memory of a kernel by name ("render",
     * "generate", "propagate", "propagate_exact", "propagate_fast", and the
     * wavefront's "propagate_trace_*", "propagate_trace_generic_*",
     * "propagate_physics_*" with * exact or fast).
     * NULL: no kernels to measure. */
    prism_result (*kernel_attributes)(prism_context *ctx, const char *name, int *registers,
                                      size_t *shared_bytes);
    /* Seconds one pass of the backend's kernels (host: threads) takes to
     * read bytes [0, bytes) at p, averaged over `repeat` passes. */
    prism_result (*read_bandwidth)(prism_context *ctx, const void *p, size_t bytes, int repeat,
                                   double *seconds);

    /* ---- upload (engine/upload) */
    /* The optics tables where the kernels read them; NULL: they stay on the
     * heap, where the host backend reads them. */
    prism_result (*optics_upload)(prism_context *ctx, struct prism_optics *optics);
    void (*optics_release)(struct prism_optics *optics);
    /* The device BVH builder (engine/cuda/bvh/build.h); NULL: the host
     * builds. bvh_bytes: device bytes it needs for `triangle_count`
     * triangles at most, temporaries and outputs together. */
    size_t (*bvh_bytes)(size_t triangle_count);
    prism_result (*bvh_build)(prism_context *ctx, const float *vertices, uint32_t vertex_count,
                              const uint32_t *triangles, uint32_t triangle_count,
                              const prism__device_bvh_settings *settings, prism__device_bvh *out);
    prism_result (*gather_info)(prism_context *ctx, const void *src, const uint32_t *ids,
                                uint32_t n, void *dst);
    prism_result (*pack_info)(prism_context *ctx, const uint32_t *codes, uint32_t n, void *dst,
                              prism_stream *stream);
    prism_result (*gl_codes)(prism_context *ctx, const void *info, uint32_t n, void *dst);
    /* The wide tree collapsed on the device from the binary one in `view`;
     * NULL: the host collapses. */
    prism_result (*wide_collapse)(prism_context *ctx, const prism_geometry_view *view,
                                  prism__wide_place place, void *user, prism__device_wide *out);

    /* ---- runtime-compiled modules (engine/module/internal.h); NULL:
     * no runtime compilation on this backend. */
    prism_result (*library_load)(prism_context *ctx, const void *image, void **library);
    void (*library_unload)(prism_context *ctx, void *library);
    prism_result (*library_kernel)(prism_context *ctx, void *library, const char *name,
                                   void **kernel, char *names, size_t names_size);
    prism_result (*kernel_launch)(prism_context *ctx, void *kernel, const prism_launch *launch,
                                  void *stream, void **args, const char *what);
} prism__backend;

extern const prism__backend prism__host_backend;
/* The CUDA backend's table; NULL in a build without CUDA. */
const prism__backend *prism__cuda_backend(void);

#ifdef __cplusplus
}
#endif

#endif
