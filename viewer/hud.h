/* The heads-up display: lines of text drawn with stb_easy_font over a
 * translucent backdrop, in pixels from the top-left corner. */
#ifndef VIEWER_HUD_H
#define VIEWER_HUD_H

#include "gl.h"

typedef struct viewer_hud {
    GLuint program, vao, vbo, ibo;
    GLint u_viewport;
    float *vertices; /* scratch for stb_easy_font: 4 floats per vertex */
    size_t capacity; /* in quads */
} viewer_hud;

int viewer_hud_create(viewer_hud *hud);
/* Draw `text` (lines separated by '\n') at (x, y) pixels from the top left
 * of a viewport of w x h, at `scale` (1 = stb_easy_font's 7-pixel glyphs). */
void viewer_hud_draw(viewer_hud *hud, const char *text, float x, float y, float scale, int w,
                     int h);
/* Two columns side by side (keys and what they do); x < 0 centres them. */
void viewer_hud_draw_columns(viewer_hud *hud, const char *left, const char *right, float x, float y,
                             float scale, int w, int h);
void viewer_hud_destroy(viewer_hud *hud);

#endif
