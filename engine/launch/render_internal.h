/* Rendering's internal entry points, below prism_render: the camera basis,
 * the kernel parameters, and the banded launch loop over a geometry view
 * and a pointer the backend can write. Tests and benchmarks call them
 * directly with views built over host arrays. */
#ifndef PRISM_RENDER_INTERNAL_H
#define PRISM_RENDER_INTERNAL_H

#include "engine/context_internal.h"
#include "prism/device/shade.h"
#include "prism/render.h"

/* Pixels per launch: ~2M primary rays, far below 50 ms on any CUDA GPU
 * Prism supports, and rows enough that the host backend's threads share. */
#define PRISM_RENDER_PIXELS_PER_LAUNCH (1u << 21)

prism_result prism__camera_basis(prism_context *ctx, const prism_camera *camera, uint32_t width,
                                 uint32_t height, prism_camera_basis *out);
/* Check desc and fill p (colors left NULL: the caller places the table). */
prism_result prism__render_params(prism_context *ctx, const prism_camera *camera,
                                  const prism_render_desc *desc, prism_render_params *p);
/* The packed colour table for `count` materials (desc colours, then the
 * palette). The caller frees it. */
uint32_t *prism__render_colors(const prism_render_desc *desc, uint32_t count);
/* The hidden-solid bit mask: its size in 32-bit words (0 = none hidden),
 * and the mask itself written into `words` words. */
uint32_t prism__render_hidden_words(const prism_render_desc *desc);
void prism__render_hidden_mask(const prism_render_desc *desc, uint32_t *mask, uint32_t words);
/* Launch bands of rows over `image` (backend memory, p->row_pixels apart). */
prism_result prism__render_launch(prism_context *ctx, const prism_geometry_view *g,
                                  const prism_render_params *p, uint32_t *image,
                                  unsigned *launches);

#endif
