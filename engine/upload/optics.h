/* Optics tables on the device: the scene's materials and surfaces resampled
 * for the propagation kernels. Created by the geometry upload, owned by the
 * prism_geometry, built and read by the kernels module (engine/upload/optics.c). */
#ifndef PRISM_OPTICS_H
#define PRISM_OPTICS_H

#include "prism/context.h"
#include "prism/scene.h"

typedef struct prism_optics prism_optics;

/* Build and upload the tables of `scene` (NULL scene: no optics, *out NULL). */
prism_result prism__optics_create(prism_context *ctx, const prism_scene *scene, prism_optics **out);
/* Release them. Accepts NULL. */
void prism__optics_destroy(prism_context *ctx, prism_optics *optics);

#endif
