/* Raster view: flat-shaded triangles, colour per material, headlight. */
#include "raster.h"

#include <string.h>

#include "camera.h"

/* The face normal comes from screen-space derivatives of the view-space
 * position, so vertices shared between faces need no normals. Each
 * triangle's solid and materials come from a buffer texture indexed by
 * gl_PrimitiveID (the layout prism_geometry_desc.gl_triangle_buffer
 * gives), so triangles keep their material without duplicating vertices;
 * the colour is the palette's entry for the inner material (the last
 * entry for none), and a triangle of a hidden solid (the world volume's)
 * is discarded unless shown. */
static const char *VERTEX = "#version 330 core\n"
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
    "uniform usamplerBuffer codes;\n"
    "uniform samplerBuffer palette;\n"
    "uniform usamplerBuffer hidden;\n"
    "uniform int palette_last, solids;\n"
    "uniform bool show_hidden;\n"
    "out vec4 colour;\n"
    "void main() {\n"
    "  uvec2 c = texelFetch(codes, gl_PrimitiveID).xy;\n"
    "  bool hid = c.x < uint(solids) && texelFetch(hidden, int(c.x)).r != 0u;\n"
    "  if (hid && !show_hidden) discard;\n"
    "  vec3 n = normalize(cross(dFdx(view_pos), dFdy(view_pos)));\n"
    "  float headlight = abs(dot(n, normalize(view_pos)));\n"
    "  vec4 p = texelFetch(palette, int(min(c.y & 0xFFFFu, uint(palette_last))));\n"
    "  colour = vec4(p.rgb * (0.25 + 0.75 * headlight), 1.0);\n"
    "}\n";

static void buffer_texture(GLuint *buffer, GLuint *texture, GLenum format, size_t bytes,
                           const void *data)
{
    glGenBuffers(1, buffer);
    glBindBuffer(GL_TEXTURE_BUFFER, *buffer);
    glBufferData(GL_TEXTURE_BUFFER, (GLsizeiptr)bytes, data, GL_STATIC_DRAW);
    glGenTextures(1, texture);
    glBindTexture(GL_TEXTURE_BUFFER, *texture);
    glTexBuffer(GL_TEXTURE_BUFFER, format, *buffer);
    glBindTexture(GL_TEXTURE_BUFFER, 0);
    glBindBuffer(GL_TEXTURE_BUFFER, 0);
}

int viewer_raster_create(viewer_raster *r, const viewer_raster_desc *d)
{
    memset(r, 0, sizeof *r);
    if (d->palette_count == 0)
        return -1;
    r->program = viewer_gl_program("raster", VERTEX, FRAGMENT);
    if (!r->program)
        return -1;
    r->u_mvp = glGetUniformLocation(r->program, "mvp");
    r->u_modelview = glGetUniformLocation(r->program, "modelview");
    r->u_show_hidden = glGetUniformLocation(r->program, "show_hidden");
    glGenVertexArrays(1, &r->vao);
    glBindVertexArray(r->vao);
    glGenBuffers(1, &r->vertices);
    glBindBuffer(GL_ARRAY_BUFFER, r->vertices);
    glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)(d->vertex_count * 3 * sizeof(float)), d->positions,
                 GL_STATIC_DRAW);
    glEnableVertexAttribArray(0);
    glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, 0, NULL);
    glGenBuffers(1, &r->indices);
    glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, r->indices);
    glBufferData(GL_ELEMENT_ARRAY_BUFFER, (GLsizeiptr)(d->triangle_count * 3 * sizeof(uint32_t)),
                 d->triangles, GL_STATIC_DRAW);
    glBindVertexArray(0);
    /* one spare entry each: GL buffers of no bytes are not textures */
    buffer_texture(&r->codes_buffer, &r->codes_texture, GL_RG32UI, d->triangle_count * 8 + 8, NULL);
    buffer_texture(&r->palette_buffer, &r->palette_texture, GL_RGBA8, d->palette_count * 4,
                   d->palette);
    uint8_t none = 0;
    buffer_texture(&r->hidden_buffer, &r->hidden_texture, GL_R8UI,
                   d->solid_count ? d->solid_count : 1, d->solid_count ? d->hidden_solids : &none);
    /* what never changes once made: the textures' units, the sizes */
    glUseProgram(r->program);
    static const char *const units[3] = {"codes", "palette", "hidden"};
    for (int i = 0; i < 3; i++)
        glUniform1i(glGetUniformLocation(r->program, units[i]), i);
    glUniform1i(glGetUniformLocation(r->program, "palette_last"), (GLint)(d->palette_count - 1));
    glUniform1i(glGetUniformLocation(r->program, "solids"),
                d->hidden_solids ? (GLint)d->solid_count : 0);
    glUseProgram(0);
    r->index_count = (GLsizei)(d->triangle_count * 3);
    return glGetError() == GL_NO_ERROR ? 0 : -1;
}

/* Written in place rather than given to glBufferData from host memory:
 * the driver's copy of client memory ran at ~0.5 GB/s (0.2 s for 102 MB
 * at 25.6M triangles on an H200). With interop the upload writes them
 * instead (gl_triangle_buffer), and this is the fallback. */
uint32_t *viewer_raster_map_codes(viewer_raster *r, size_t triangle_count)
{
    glBindBuffer(GL_TEXTURE_BUFFER, r->codes_buffer);
    void *p = glMapBufferRange(GL_TEXTURE_BUFFER, 0, (GLsizeiptr)(triangle_count * 8 + 8),
                               GL_MAP_WRITE_BIT | GL_MAP_INVALIDATE_BUFFER_BIT);
    glBindBuffer(GL_TEXTURE_BUFFER, 0);
    return p;
}

int viewer_raster_unmap_codes(viewer_raster *r)
{
    glBindBuffer(GL_TEXTURE_BUFFER, r->codes_buffer);
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
    const GLuint textures[3] = {r->codes_texture, r->palette_texture, r->hidden_texture};
    for (int i = 0; i < 3; i++) {
        glActiveTexture(GL_TEXTURE0 + (GLenum)i);
        glBindTexture(GL_TEXTURE_BUFFER, textures[i]);
    }
    glUniform1i(r->u_show_hidden, r->show_hidden);
    glBindVertexArray(r->vao);
    glDrawElements(GL_TRIANGLES, r->index_count, GL_UNSIGNED_INT, NULL);
    glBindVertexArray(0);
    for (int i = 2; i >= 0; i--) {
        glActiveTexture(GL_TEXTURE0 + (GLenum)i);
        glBindTexture(GL_TEXTURE_BUFFER, 0);
    }
}

void viewer_raster_destroy(viewer_raster *r)
{
    if (!r->program)
        return;
    const GLuint textures[3] = {r->codes_texture, r->palette_texture, r->hidden_texture};
    const GLuint buffers[3] = {r->codes_buffer, r->palette_buffer, r->hidden_buffer};
    glDeleteTextures(3, textures);
    glDeleteBuffers(3, buffers);
    glDeleteBuffers(1, &r->indices);
    glDeleteBuffers(1, &r->vertices);
    glDeleteVertexArrays(1, &r->vao);
    glDeleteProgram(r->program);
    memset(r, 0, sizeof *r);
}
