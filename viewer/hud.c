/* HUD text rendering with stb_easy_font: it emits quads of 16-byte
 * vertices (x, y, z, RGBA8); they are drawn as indexed triangles. */
#include "hud.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef PRISM_VIEWER_HAVE_STB
#include <stb/stb_easy_font.h>
#else
/* Built without libstb-dev: text takes no room and draws nothing. */
static int stb_easy_font_print(float x, float y, char *text, unsigned char color[4],
                               void *vertex_buffer, int vbuf_size)
{
    return 0;
}
static int stb_easy_font_width(char *text)
{
    return 0;
}
static int stb_easy_font_height(char *text)
{
    return 0;
}
#endif

static const char *VERTEX = "#version 330 core\n"
                            "layout(location = 0) in vec2 position;\n"
                            "layout(location = 1) in vec4 colour_in;\n"
                            "uniform vec2 viewport;\n"
                            "out vec4 colour_v;\n"
                            "void main() {\n"
                            "  vec2 p = position / viewport * 2.0 - 1.0;\n"
                            "  gl_Position = vec4(p.x, -p.y, 0.0, 1.0);\n"
                            "  colour_v = colour_in;\n"
                            "}\n";

static const char *FRAGMENT = "#version 330 core\n"
                              "in vec4 colour_v;\n"
                              "out vec4 colour;\n"
                              "void main() { colour = colour_v; }\n";

int viewer_hud_create(viewer_hud *hud)
{
    memset(hud, 0, sizeof *hud);
    hud->program = viewer_gl_program("hud", VERTEX, FRAGMENT);
    if (!hud->program)
        return -1;
    hud->u_viewport = glGetUniformLocation(hud->program, "viewport");
    glGenVertexArrays(1, &hud->vao);
    glGenBuffers(1, &hud->vbo);
    glGenBuffers(1, &hud->ibo);
    glBindVertexArray(hud->vao);
    glBindBuffer(GL_ARRAY_BUFFER, hud->vbo);
    glEnableVertexAttribArray(0);
    glVertexAttribPointer(0, 2, GL_FLOAT, GL_FALSE, 16, NULL);
    glEnableVertexAttribArray(1);
    glVertexAttribPointer(1, 4, GL_UNSIGNED_BYTE, GL_TRUE, 16, (void *)12);
    glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, hud->ibo);
    glBindVertexArray(0);
    return 0;
}

/* Room for `quads` quads, and the index pattern for them. */
static int reserve(viewer_hud *hud, size_t quads)
{
    if (quads <= hud->capacity)
        return 0;
    size_t cap = quads * 2;
    float *v = realloc(hud->vertices, cap * 4 * 16);
    uint32_t *idx = malloc(cap * 6 * sizeof *idx);
    if (!v || !idx) {
        free(idx);
        if (v)
            hud->vertices = v;
        return -1;
    }
    hud->vertices = v;
    for (uint32_t q = 0; q < cap; q++) {
        const uint32_t pattern[6] = {0, 1, 2, 0, 2, 3};
        for (int k = 0; k < 6; k++)
            idx[q * 6 + k] = q * 4 + pattern[k];
    }
    glBindVertexArray(hud->vao);
    glBufferData(GL_ELEMENT_ARRAY_BUFFER, (GLsizeiptr)(cap * 6 * sizeof *idx), idx, GL_STATIC_DRAW);
    glBindVertexArray(0);
    free(idx);
    hud->capacity = cap;
    return 0;
}

/* A quad in stb_easy_font's vertex format. */
static void put_quad(float *v, float x0, float y0, float x1, float y1, const uint8_t rgba[4])
{
    float xs[4] = {x0, x1, x1, x0}, ys[4] = {y0, y0, y1, y1};
    for (int i = 0; i < 4; i++) {
        v[i * 4] = xs[i];
        v[i * 4 + 1] = ys[i];
        v[i * 4 + 2] = 0;
        memcpy(&v[i * 4 + 3], rgba, 4);
    }
}

/* Append the quads of `text` at (x, y), scaled; returns the quad count. */
static int put_text(viewer_hud *hud, int at, const char *text, float x, float y, float scale)
{
    static const uint8_t ink[4] = {235, 235, 235, 255};
    float *v = hud->vertices + (size_t)at * 16;
    int quads = stb_easy_font_print(0, 0, (char *)text, (unsigned char *)ink, v,
                                    (int)((hud->capacity - (size_t)at) * 64));
    for (int i = 0; i < quads * 4; i++) { /* place and scale on the CPU: few vertices */
        v[i * 4] = x + v[i * 4] * scale;
        v[i * 4 + 1] = y + v[i * 4 + 1] * scale;
    }
    return quads;
}

static void flush(viewer_hud *hud, int quads, int w, int h)
{
    glDisable(GL_DEPTH_TEST);
    glEnable(GL_BLEND);
    glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
    glUseProgram(hud->program);
    glUniform2f(hud->u_viewport, (float)w, (float)h);
    glBindVertexArray(hud->vao);
    glBindBuffer(GL_ARRAY_BUFFER, hud->vbo);
    glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)quads * 64, hud->vertices, GL_STREAM_DRAW);
    glDrawElements(GL_TRIANGLES, quads * 6, GL_UNSIGNED_INT, NULL);
    glBindVertexArray(0);
    glDisable(GL_BLEND);
}

void viewer_hud_draw_columns(viewer_hud *hud, const char *left, const char *right, float x, float y,
                             float scale, int w, int h)
{
    size_t len = strlen(left) + (right ? strlen(right) : 0);
    if (!len || reserve(hud, len * 70 + 1)) /* stb_easy_font: < 70 quads a glyph */
        return;
    float lw = (float)stb_easy_font_width((char *)left) * scale;
    float th = (float)stb_easy_font_height((char *)left) * scale;
    float gap = right ? 12 * scale : 0;
    float rw = right ? (float)stb_easy_font_width((char *)right) * scale : 0;
    if (right && (float)stb_easy_font_height((char *)right) * scale > th)
        th = (float)stb_easy_font_height((char *)right) * scale;
    if (x < 0) /* centred */
        x = 0.5f * ((float)w - (lw + gap + rw));
    static const uint8_t backdrop[4] = {0, 0, 0, 150};
    put_quad(hud->vertices, x - 4, y - 4, x + lw + gap + rw + 4, y + th + 2, backdrop);
    int quads = 1 + put_text(hud, 1, left, x, y, scale);
    if (right)
        quads += put_text(hud, quads, right, x + lw + gap, y, scale);
    flush(hud, quads, w, h);
}

void viewer_hud_draw(viewer_hud *hud, const char *text, float x, float y, float scale, int w, int h)
{
    viewer_hud_draw_columns(hud, text, NULL, x, y, scale, w, h);
}

void viewer_hud_destroy(viewer_hud *hud)
{
    if (!hud->program)
        return;
    glDeleteBuffers(1, &hud->vbo);
    glDeleteBuffers(1, &hud->ibo);
    glDeleteVertexArrays(1, &hud->vao);
    glDeleteProgram(hud->program);
    free(hud->vertices);
    memset(hud, 0, sizeof *hud);
}
