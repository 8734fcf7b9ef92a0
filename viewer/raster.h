/* The raster view of the geometry: indexed triangles drawn with flat
 * headlight shading and one colour per material; the world volume's
 * triangles hidden unless shown. The vertex buffer can be
 * handed to the engine so that CUDA reads the same vertices through interop. */
#ifndef VIEWER_RASTER_H
#define VIEWER_RASTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gl.h"

typedef struct viewer_raster {
    GLuint program, vao, vertices, indices;
    GLuint codes_buffer, codes_texture;     /* per triangle: solid, materials (RG32UI) */
    GLuint palette_buffer, palette_texture; /* per material, RGBA8; the last: none */
    GLuint hidden_buffer, hidden_texture;   /* per solid, R8UI: 1 hides its triangles */
    GLsizei index_count;
    GLint u_mvp, u_modelview, u_show_hidden;
    bool show_hidden; /* draw the hidden solids' triangles too */
} viewer_raster;

/* What the raster view is made of. positions (3 floats each) and
 * triangles (3 indices each) may be NULL: the buffers are sized and left
 * for the engine to write (prism_geometry_desc.gl_fill) or
 * viewer_raster_fill. The per-triangle codes (codes_buffer, two uint32 a
 * triangle in prism_geometry_desc.gl_triangle_buffer's layout) are always
 * left to the engine or viewer_raster_map_codes. */
typedef struct viewer_raster_desc {
    const float *positions;
    size_t vertex_count;
    const uint32_t *triangles;
    size_t triangle_count;
    const uint8_t (*palette)[4];  /* colour of material i; the last entry for none */
    size_t palette_count;         /* materials + 1, at least 1 */
    const uint8_t *hidden_solids; /* per solid: 1 = hidden (NULL: none) */
    size_t solid_count;
} viewer_raster_desc;

/* Returns 0, or -1 (no palette, shader or GL failure). */
int viewer_raster_create(viewer_raster *r, const viewer_raster_desc *desc);
/* Write positions and triangles into the buffers made empty. 0 or -1. */
int viewer_raster_fill(viewer_raster *r, const float *positions, size_t vertex_count,
                       const uint32_t *triangles, size_t triangle_count);
/* The codes buffer mapped for writing, triangle_count x {solid,
 * materials}: the caller writes every entry in place, then unmaps. NULL
 * when GL cannot map it. */
uint32_t *viewer_raster_map_codes(viewer_raster *r, size_t triangle_count);
int viewer_raster_unmap_codes(viewer_raster *r);
void viewer_raster_draw(const viewer_raster *r, const float view[16], const float proj[16]);
void viewer_raster_destroy(viewer_raster *r);

#endif
