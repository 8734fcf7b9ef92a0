/* An offscreen render target (colour RGBA8 + depth), what the headless mode
 * draws into and screenshots read from. */
#ifndef VIEWER_FBO_H
#define VIEWER_FBO_H

#include "gl.h"

typedef struct viewer_fbo {
    GLuint framebuffer, colour, depth;
    int width, height;
} viewer_fbo;

/* Returns 0, or -1 when the framebuffer is incomplete. */
int viewer_fbo_create(viewer_fbo *fbo, int width, int height);
void viewer_fbo_destroy(viewer_fbo *fbo);

#endif
