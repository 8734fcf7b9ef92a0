/* Screenshots: the pixels of the framebuffer being drawn, read before the
 * buffer swap (after it, NVIDIA's default framebuffer reads back black), and
 * written as an RGB PNG with libpng. */
#ifndef VIEWER_SCREENSHOT_H
#define VIEWER_SCREENSHOT_H

#include <stddef.h>
#include <stdint.h>

/* Read w x h RGBA pixels of the bound read framebuffer, top row first.
 * Returns a malloc'ed buffer or NULL. */
uint8_t *viewer_read_pixels(int w, int h);
/* Write RGBA pixels (top row first) as a PNG. Returns 0, or -1 with `err`. */
int viewer_write_png(const char *path, const uint8_t *rgba, int w, int h, char *err,
                     size_t err_size);
/* Both: read the current framebuffer and write it. */
int viewer_screenshot(const char *path, int w, int h, char *err, size_t err_size);

#endif
