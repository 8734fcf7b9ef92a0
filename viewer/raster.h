/* The raster view of the geometry: indexed triangles drawn with flat
 * headlight shading and one colour per material. The vertex buffer can be
 * handed to the engine so that CUDA reads the same vertices through interop. */
#ifndef VIEWER_RASTER_H
#define VIEWER_RASTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gl.h"

typedef struct viewer_raster {
    GLuint program, vao, vertices, indices, colour_buffer, colour_texture;
    GLsizei index_count;
    GLint u_mvp, u_modelview, u_colours, u_show_hidden;
    bool show_hidden;      /* draw triangles whose colour has alpha 0 */
} viewer_raster;

/* Upload positions (3 floats each), triangles (3 indices each) and one
 * RGBA8 colour per triangle; alpha 0 hides a triangle unless show_hidden.
 * positions and triangles may be NULL: the buffers are sized and left for
 * the engine to write (prism_geometry_desc.gl_fill) or viewer_raster_fill;
 * triangle_rgba NULL: written in place (viewer_raster_map_colours).
 * Returns 0, or -1 (shader or GL failure). */
int viewer_raster_create(viewer_raster *r, const float *positions, size_t vertex_count,
                         const uint32_t *triangles, size_t triangle_count,
                         const uint8_t *triangle_rgba);
/* Write positions and triangles into the buffers made empty. 0 or -1. */
int viewer_raster_fill(viewer_raster *r, const float *positions, size_t vertex_count,
                       const uint32_t *triangles, size_t triangle_count);
/* The colour buffer mapped for writing, triangle_count x RGBA (made with
 * triangle_rgba NULL): the caller writes every entry in place, then
 * unmaps. NULL when GL cannot map it. */
uint8_t *viewer_raster_map_colours(viewer_raster *r, size_t triangle_count);
int viewer_raster_unmap_colours(viewer_raster *r);
void viewer_raster_draw(const viewer_raster *r, const float view[16], const float proj[16]);
void viewer_raster_destroy(viewer_raster *r);

/* A colour for material `index`, the same every run (PRISM_NONE: grey). */
void viewer_material_colour(uint32_t index, uint8_t rgba[4]);

#endif
