/* The ray-traced view: the engine renders into a GL pixel-unpack buffer
 * (written in place by CUDA through interop, or by the copy path), which
 * becomes a texture drawn over the whole viewport. */
#ifndef VIEWER_RAYTRACE_H
#define VIEWER_RAYTRACE_H

#include <stdbool.h>
#include <stdint.h>

#include <prism/geometry.h>
#include <prism/memory.h>
#include <prism/render.h>

#include "camera.h"
#include "gl.h"

typedef struct viewer_raytrace {
    GLuint pbo, texture, program, vao;
    GLuint buffer_texture; /* the PBO as a GL_TEXTURE_BUFFER (in_place) */
    GLint u_image, u_size;
    bool in_place;        /* the draw reads the PBO itself; else it is copied to `texture` */
    prism_buffer *buffer; /* the PBO as the engine sees it */
    int width, height;
    bool interop;           /* written in place through CUDA-GL interop */
    bool xray;              /* a few layers blended: the inside of a closed detector shows */
    const uint32_t *hidden; /* scene solids rays pass through (the world), not owned */
    size_t hidden_count;    /* 0: none hidden */
    double render_seconds;  /* the engine's last prism_render */
    double launch_seconds;  /* of which its kernel launches */
} viewer_raytrace;

/* Returns 0, or -1 with `err` set. */
int viewer_raytrace_create(viewer_raytrace *rt, prism_context *ctx, int width, int height,
                           prism_gl_get_proc_address_fn loader, char *err, size_t err_size);
/* The engine's camera and render description of the view as `cam` sees it
 * (mode, hidden solids, background): what viewer_raytrace_render renders,
 * for renders into other targets (the benchmark's). */
void viewer_raytrace_setup(const viewer_raytrace *rt, const viewer_camera *cam,
                           const uint8_t background[4], prism_camera *camera,
                           prism_render_desc *desc);
/* Render the geometry into the PBO and update the texture. */
int viewer_raytrace_render(viewer_raytrace *rt, prism_context *ctx, const prism_geometry *geometry,
                           const viewer_camera *cam, const uint8_t background[4], char *err,
                           size_t err_size);
void viewer_raytrace_draw(const viewer_raytrace *rt);
void viewer_raytrace_destroy(viewer_raytrace *rt);

#endif
