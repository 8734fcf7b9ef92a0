/* prism_render: ray-traced pictures of an uploaded geometry. One primary ray
 * per pixel from a pinhole camera, through the BVH, shaded so a detector can
 * be read: headlight diffuse with a colour per material, or "x-ray" layers
 * blended with alpha. The same per-pixel code runs on the CUDA and the host
 * backend (include/prism/device/); the host backend is the reference. */
#ifndef PRISM_RENDER_H
#define PRISM_RENDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "context.h"
#include "result.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Defined by prism/geometry.h and prism/memory.h; repeated here so this
 * header stands alone (C11 allows the same typedef twice). */
typedef struct prism_geometry prism_geometry;
typedef struct prism_buffer prism_buffer;

/* A pinhole camera. Units are the scene's: metres.
 *
 * Defaults (all-zero): no valid camera (eye == look_at is an error), up
 * (0,1,0), vertical field of view 45 degrees.
 *
 * With use_matrix, `matrix` is the camera-to-world transform (the inverse
 * of an OpenGL view matrix), column-major as OpenGL and cglm store it: the
 * camera sits at its translation (m[12], m[13], m[14]), looks along its -Z
 * column and has its +Y column up, as a GL camera does; eye, look_at and up
 * are then ignored. vfov_degrees applies in both cases. The aspect ratio is
 * the image's (width / height); pixels are square. */
typedef struct prism_camera {
    float eye[3];
    float look_at[3];
    float up[3];        /* all-zero = (0,1,0); need not be orthogonal to the view */
    float vfov_degrees; /* 0 = 45; must be in (0, 180) */
    bool use_matrix;
    float matrix[16];
} prism_camera;

typedef enum prism_render_mode {
    /* Headlight diffuse: colour * (ambient + (1 - ambient) * |cos|) of the
     * first surface hit, where cos is between the ray and the triangle's
     * normal (a light at the eye). */
    PRISM_RENDER_SHADED = 0,
    /* The first `xray_layers` surfaces along the ray, each shaded as above
     * and blended front to back with alpha `xray_alpha`, then over the
     * background: the inside of a closed detector shows through. */
    PRISM_RENDER_XRAY
} prism_render_mode;

/* Pixels are RGBA8 (R first in memory, as GL_RGBA / GL_UNSIGNED_BYTE) with
 * premultiplied alpha: opaque wherever a surface or an opaque background
 * is seen; x-ray layers over a transparent background are partly so.
 *
 * Defaults (all-zero): shaded mode; transparent black background; colours
 * from a fixed palette indexed by material (prism_render_palette_color);
 * ambient 0.2; 4 x-ray layers of alpha 0.3; rays unlimited in length; rows
 * stored top row first (as PNG); no solid hidden; the context's stream.
 * width and height must be set (1 .. 16384 each). */
typedef struct prism_render_desc {
    uint32_t width, height;
    prism_render_mode mode;
    uint8_t background[4]; /* RGBA of pixels whose ray hits nothing */
    /* RGBA per material index; materials at or above the count, and
     * triangles without a material, use the palette. Copied during the call. */
    const uint8_t (*material_colors)[4];
    size_t material_colors_count;
    float ambient;        /* 0 = 0.2; in [0, 1] */
    unsigned xray_layers; /* 0 = 4; at most 16 */
    float xray_alpha;     /* 0 = 0.3; in (0, 1] */
    float max_distance;   /* 0 = unlimited */
    /* Store the bottom row first, as glTexSubImage2D from a pixel-unpack
     * buffer expects, so a GL viewer draws the image without flipping. */
    bool bottom_row_first;
    /* Solids (scene solid ids: indices into prism_scene.solids, as
     * prism_triangle_info.solid holds them) whose surfaces rays pass
     * through as if they were not there, e.g. the world volume, a closed
     * box around the whole detector that would otherwise be all one sees.
     * A ray goes on through at most PRISM_RENDER_MAX_HIDDEN_CROSSINGS
     * hidden surfaces (then it stops as if it had hit nothing), so hide
     * a few enclosing volumes, not thousands of solids in a row. Ids
     * must be below PRISM_RENDER_MAX_SOLID_ID; the list is copied during
     * the call (the engine keeps a bit mask of it between frames). */
    const uint32_t *hidden_solids;
    size_t hidden_solids_count;
} prism_render_desc;

/* Limits of prism_render_desc.hidden_solids. */
#define PRISM_RENDER_MAX_HIDDEN_CROSSINGS 8u
#define PRISM_RENDER_MAX_SOLID_ID (1u << 24)

typedef enum prism_target_kind {
    PRISM_TARGET_HOST = 0, /* `host`: memory the caller owns */
    PRISM_TARGET_BUFFER    /* `buffer`: a prism_buffer: device memory, mapped
                              memory, or a GL buffer (a pixel-unpack buffer
                              for images, a vertex buffer for step records).
                              A GL buffer registered with CUDA is written in
                              place; otherwise the copy path runs (see
                              prism/memory.h). */
} prism_target_kind;

/* Where an output goes. The image is width x height RGBA8 pixels, rows
 * `row_bytes` apart (0 = width * 4; must be >= width * 4) from `offset`
 * bytes into the buffer (buffers only). The region must fit the buffer:
 * PRISM_ERROR_OUT_OF_RANGE otherwise. */
typedef struct prism_target {
    prism_target_kind kind;
    void *host;
    prism_buffer *buffer;
    size_t offset;
    size_t row_bytes;
} prism_target;

/* What a call did (optional out-parameter of prism_render). */
typedef struct prism_render_stats {
    double seconds;        /* wall time of the call, upload of the result included */
    unsigned launches;     /* kernel launches (row bands: each kept short, see below) */
    double launch_seconds; /* the launches alone (they are synchronous): `seconds`
                              less the mapping of GL buffers and the result's copy */
    bool interop;          /* the target was written in place through GL interop */
} prism_render_stats;

/** Render `geometry` seen by `camera` into `target`.
 *
 * Long images are cut into bands of rows so that no kernel launch runs
 * much beyond ~50 ms (display GPUs kill long kernels).
 *
 * @errors PRISM_ERROR_INVALID_ARGUMENT (NULL ctx/geometry/camera/desc/target,
 *   a geometry uploaded with another context, a zero or oversized image, an
 *   unknown mode, eye == look_at, up parallel to the view, a camera matrix
 *   with a zero or non-finite axis, a bad field of view, alpha, layer
 *   count, ambient or max_distance, a colour or hidden-solid count without
 *   its array, a hidden solid id >= PRISM_RENDER_MAX_SOLID_ID, a buffer
 *   target without `buffer`, row_bytes < width * 4 or not a multiple of 4,
 *   an offset not a multiple of 4), PRISM_ERROR_OUT_OF_RANGE (the image does
 *   not fit the buffer), PRISM_ERROR_OUT_OF_MEMORY,
 *   PRISM_ERROR_OUT_OF_DEVICE_MEMORY, PRISM_ERROR_CUDA, PRISM_ERROR_GL. A
 *   host target without `host` is no error: the image is made and dropped.
 * @thread_safety As the context: one thread at a time; a GL target on the
 *   copy path needs the GL context current on it.
 * @pointer_lifetime desc->material_colors, desc->hidden_solids and
 *   target->host are used during the call only. */
PRISM_API prism_result prism_render(prism_context *ctx, const prism_geometry *geometry,
                                    const prism_camera *camera, const prism_render_desc *desc,
                                    const prism_target *target, prism_render_stats *stats);

/** The default colour of material `index` (opaque, distinct neighbours).
 * @errors None.
 * @thread_safety Any thread. */
PRISM_API void prism_render_palette_color(uint32_t index, uint8_t rgba[4]);

#ifdef __cplusplus
}
#endif

#endif
