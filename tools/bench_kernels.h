/* What prism-bench render and propagate share: loading a detector file,
 * building its BVH, contexts of each backend, and uploads by placement
 * policy. */
#ifndef PRISM_BENCH_KERNELS_H
#define PRISM_BENCH_KERNELS_H

#include <stdbool.h>
#include <stddef.h>

#include "prism/bvh.h"
#include "prism/context.h"
#include "prism/geometry.h"
#include "prism/render.h"
#include "prism/scene.h"

typedef struct bench_scene {
    prism_scene *scene;
    prism_bvh *bvh; /* the host's tree: host-backend rows, and CUDA with --bvh host */
    double load_seconds, bvh_seconds;
    bool device_bvh; /* CUDA uploads build their own tree on the device (the default) */
} bench_scene;

/* --bvh cuda|host (default cuda) and --bvh-order: the CUDA builder lays
 * out breadth-first only, so dfs asks for the host's tree. False on a bad
 * value. */
bool bench_bvh_option(int argc, char **argv, unsigned bvh_order, bool *device_bvh);

/* Load FILE in `unit` (--unit) and build its BVH in node order `bvh_order`
 * (PRISM_BVH_ORDER_*); false with `why` filled on failure. */
bool bench_scene_load(const char *file, prism_length_unit unit, unsigned bvh_order,
                      bench_scene *out, char *why, size_t why_size);
void bench_scene_free(bench_scene *s);
/* A context of `backend` (CUDA or HOST), or NULL with `why`. */
prism_context *bench_context(prism_backend backend, char *why, size_t why_size);
/* Upload with `policy` and at most `device_budget` bytes on the device (0:
 * no cap; a --device-budget row), the environment's settings applied (a
 * CUDA context builds the tree on the device when s->device_bvh); NULL
 * with `why` (the context's last error). */
prism_geometry *bench_upload(prism_context *ctx, const bench_scene *s,
                             prism_placement_policy policy, size_t device_budget, char *why,
                             size_t why_size);
/* A --device-budget row's geometry: bench_upload on the auto policy with
 * `budget` bytes at most on the device, and the row's label ("budget:64M")
 * into label. */
prism_geometry *bench_upload_budget(prism_context *ctx, const bench_scene *s, size_t budget,
                                    char label[24], char *why, size_t why_size);
const char *bench_policy_name(prism_placement_policy policy);
/* The render bench's two views of a detector: [0] outside the tank (from
 * 90% of the way to a corner, a third of the way up), [1] its centre. */
void bench_cameras(const prism_scene *s, prism_camera cam[2]);

#endif
