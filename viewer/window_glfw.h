/* The windowed mode: a GLFW window with an OpenGL 3.3+ core context,
 * current on the calling thread, whose callbacks fill a viewer_input. */
#ifndef VIEWER_WINDOW_GLFW_H
#define VIEWER_WINDOW_GLFW_H

#include <stdbool.h>
#include <stddef.h>

#include "input.h"

typedef struct viewer_window viewer_window;

/* Open a window of w x h with its context current and GL loaded. Returns 0,
 * or -1 with `err` set (no display, no GL 3.3 core, ...). */
int viewer_window_create(int w, int h, const char *title, viewer_input *input, viewer_window **out,
                         char *err, size_t err_size);
void viewer_window_destroy(viewer_window *win);
bool viewer_window_should_close(const viewer_window *win);
void viewer_window_close(viewer_window *win);
/* Process events into the input record. */
void viewer_window_poll(viewer_window *win);
void viewer_window_swap(viewer_window *win);
void viewer_window_framebuffer_size(const viewer_window *win, int *w, int *h);

#endif
