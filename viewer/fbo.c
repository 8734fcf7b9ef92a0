/* Offscreen framebuffer for the headless mode. */
#include "fbo.h"

#include <string.h>

int viewer_fbo_create(viewer_fbo *fbo, int width, int height)
{
    memset(fbo, 0, sizeof *fbo);
    fbo->width = width;
    fbo->height = height;
    glGenFramebuffers(1, &fbo->framebuffer);
    glBindFramebuffer(GL_FRAMEBUFFER, fbo->framebuffer);
    glGenRenderbuffers(1, &fbo->colour);
    glBindRenderbuffer(GL_RENDERBUFFER, fbo->colour);
    glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, width, height);
    glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, fbo->colour);
    glGenRenderbuffers(1, &fbo->depth);
    glBindRenderbuffer(GL_RENDERBUFFER, fbo->depth);
    glRenderbufferStorage(GL_RENDERBUFFER, GL_DEPTH_COMPONENT24, width, height);
    glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_DEPTH_ATTACHMENT, GL_RENDERBUFFER, fbo->depth);
    if (glCheckFramebufferStatus(GL_FRAMEBUFFER) != GL_FRAMEBUFFER_COMPLETE) {
        viewer_fbo_destroy(fbo);
        return -1;
    }
    return 0;
}

void viewer_fbo_destroy(viewer_fbo *fbo)
{
    if (!fbo->framebuffer)
        return;
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    glDeleteRenderbuffers(1, &fbo->colour);
    glDeleteRenderbuffers(1, &fbo->depth);
    glDeleteFramebuffers(1, &fbo->framebuffer);
    memset(fbo, 0, sizeof *fbo);
}
