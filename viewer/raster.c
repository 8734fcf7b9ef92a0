/* Raster view: flat-shaded triangles, colour per material, headlight. */
#include "raster.h"

#include <string.h>

#include "camera.h"

/* The face normal comes from screen-space derivatives of the view-space
 * position, so vertices shared between faces need no normals; the colour
 * comes from a buffer texture indexed by gl_PrimitiveID, so triangles
 * keep their material without duplicating vertices. A colour of alpha 0
 * marks a hidden triangle (the world volume's), discarded unless shown. */
static const char *VERTEX =
    "#version 330 core\n"
    "layout(location = 0) in vec3 position;\n"
    "uniform mat4 mvp, modelview;\n"
    "out vec3 view_pos;\n"
    "void main() {\n"
    "  view_pos = (modelview * vec4(position, 1.0)).xyz;\n"
    "  gl_Position = mvp * vec4(position, 1.0);\n"
    "}\n";

static const char *FRAGMENT =
    "#version 330 core\n"
    "in vec3 view_pos;\n"
    "uniform samplerBuffer colours;\n"
    "uniform bool show_hidden;\n"
    "out vec4 colour;\n"
    "void main() {\n"
    "  vec3 n = normalize(cross(dFdx(view_pos), dFdy(view_pos)));\n"
    "  float headlight = abs(dot(n, normalize(view_pos)));\n"
    "  vec4 c = texelFetch(colours, gl_PrimitiveID);\n"
    "  if (c.a < 0.5 && !show_hidden) discard;\n"
    "  colour = vec4(c.rgb * (0.25 + 0.75 * headlight), 1.0);\n"
    "}\n";

void viewer_material_colour(uint32_t index, uint8_t rgba[4])
{
    rgba[3] = 255;
    if (index == UINT32_MAX) {
        rgba[0] = rgba[1] = rgba[2] = 160;
        return;
    }
    /* Golden-ratio hue steps: neighbouring materials look different. */
    float h = (float)index * 0.618034f;
    h -= (float)(int)h;
    float s = 0.55f, v = 0.95f, f = h * 6, p = v * (1 - s);
    int i = (int)f % 6;
    float fr = f - (float)(int)f, q = v * (1 - s * fr), t = v * (1 - s * (1 - fr));
    float rgb[6][3] = {{v, t, p}, {q, v, p}, {p, v, t}, {p, q, v}, {t, p, v}, {v, p, q}};
    for (int k = 0; k < 3; k++)
        rgba[k] = (uint8_t)(rgb[i][k] * 255.0f + 0.5f);
}

int viewer_raster_create(viewer_raster *r, const float *positions, size_t vertex_count,
                         const uint32_t *triangles, size_t triangle_count,
                         const uint8_t *triangle_rgba)
{
    memset(r, 0, sizeof *r);
    r->program = viewer_gl_program("raster", VERTEX, FRAGMENT);
    if (!r->program)
        return -1;
    r->u_mvp = glGetUniformLocation(r->program, "mvp");
    r->u_modelview = glGetUniformLocation(r->program, "modelview");
    r->u_colours = glGetUniformLocation(r->program, "colours");
    r->u_show_hidden = glGetUniformLocation(r->program, "show_hidden");
    glGenVertexArrays(1, &r->vao);
    glBindVertexArray(r->vao);
    glGenBuffers(1, &r->vertices);
    glBindBuffer(GL_ARRAY_BUFFER, r->vertices);
    glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)(vertex_count * 3 * sizeof(float)), positions,
                 GL_STATIC_DRAW);
    glEnableVertexAttribArray(0);
    glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, 0, NULL);
    glGenBuffers(1, &r->indices);
    glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, r->indices);
    glBufferData(GL_ELEMENT_ARRAY_BUFFER, (GLsizeiptr)(triangle_count * 3 * sizeof(uint32_t)),
                 triangles, GL_STATIC_DRAW);
    glBindVertexArray(0);
    glGenBuffers(1, &r->colour_buffer);
    glBindBuffer(GL_TEXTURE_BUFFER, r->colour_buffer);
    glBufferData(GL_TEXTURE_BUFFER, (GLsizeiptr)(triangle_count * 4 + 4), triangle_rgba,
                 GL_STATIC_DRAW);
    glGenTextures(1, &r->colour_texture);
    glBindTexture(GL_TEXTURE_BUFFER, r->colour_texture);
    glTexBuffer(GL_TEXTURE_BUFFER, GL_RGBA8, r->colour_buffer);
    glBindTexture(GL_TEXTURE_BUFFER, 0);
    r->index_count = (GLsizei)(triangle_count * 3);
    return glGetError() == GL_NO_ERROR ? 0 : -1;
}

/* Written in place rather than given to glBufferData from host memory:
 * the driver's copy of client memory ran at ~0.5 GB/s, 0.2 s of the raster
 * view for the 102 MB of colours at 25.6M triangles on an H200. */
uint8_t *viewer_raster_map_colours(viewer_raster *r, size_t triangle_count)
{
    glBindBuffer(GL_TEXTURE_BUFFER, r->colour_buffer);
    void *p = glMapBufferRange(GL_TEXTURE_BUFFER, 0, (GLsizeiptr)(triangle_count * 4 + 4),
                               GL_MAP_WRITE_BIT | GL_MAP_INVALIDATE_BUFFER_BIT);
    glBindBuffer(GL_TEXTURE_BUFFER, 0);
    return p;
}

int viewer_raster_unmap_colours(viewer_raster *r)
{
    glBindBuffer(GL_TEXTURE_BUFFER, r->colour_buffer);
    GLboolean ok = glUnmapBuffer(GL_TEXTURE_BUFFER);
    glBindBuffer(GL_TEXTURE_BUFFER, 0);
    return ok && glGetError() == GL_NO_ERROR ? 0 : -1;
}

int viewer_raster_fill(viewer_raster *r, const float *positions, size_t vertex_count,
                       const uint32_t *triangles, size_t triangle_count)
{
    glBindBuffer(GL_ARRAY_BUFFER, r->vertices);
    glBufferSubData(GL_ARRAY_BUFFER, 0, (GLsizeiptr)(vertex_count * 3 * sizeof(float)), positions);
    glBindBuffer(GL_ARRAY_BUFFER, 0);
    glBindVertexArray(r->vao);
    glBufferSubData(GL_ELEMENT_ARRAY_BUFFER, 0, (GLsizeiptr)(triangle_count * 3 * sizeof(uint32_t)),
                    triangles);
    glBindVertexArray(0);
    return glGetError() == GL_NO_ERROR ? 0 : -1;
}

void viewer_raster_draw(const viewer_raster *r, const float view[16], const float proj[16])
{
    float mvp[16];
    viewer_mat4_mul(proj, view, mvp);
    glEnable(GL_DEPTH_TEST);
    glUseProgram(r->program);
    glUniformMatrix4fv(r->u_mvp, 1, GL_FALSE, mvp);
    glUniformMatrix4fv(r->u_modelview, 1, GL_FALSE, view);
    glActiveTexture(GL_TEXTURE0);
    glBindTexture(GL_TEXTURE_BUFFER, r->colour_texture);
    glUniform1i(r->u_colours, 0);
    glUniform1i(r->u_show_hidden, r->show_hidden);
    glBindVertexArray(r->vao);
    glDrawElements(GL_TRIANGLES, r->index_count, GL_UNSIGNED_INT, NULL);
    glBindVertexArray(0);
    glBindTexture(GL_TEXTURE_BUFFER, 0);
}

void viewer_raster_destroy(viewer_raster *r)
{
    if (!r->program)
        return;
    glDeleteTextures(1, &r->colour_texture);
    glDeleteBuffers(1, &r->colour_buffer);
    glDeleteBuffers(1, &r->indices);
    glDeleteBuffers(1, &r->vertices);
    glDeleteVertexArrays(1, &r->vao);
    glDeleteProgram(r->program);
    memset(r, 0, sizeof *r);
}
