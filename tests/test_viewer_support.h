/* Helpers of the prism-view suites: run the program and capture what it
 * says, read its PNGs, and look at pixels. */
#ifndef TEST_VIEWER_SUPPORT_H
#define TEST_VIEWER_SUPPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct viewer_run {
    int exit_code;      /* -1 when killed by a signal */
    int signal;         /* the signal, or 0 */
    char output[16384]; /* stdout and stderr together */
} viewer_run;

typedef struct viewer_image {
    int width, height;
    uint8_t *rgba;
} viewer_image;

/* Path of prism-view ($PRISM_VIEW); NULL when unset. */
const char *viewer_path(void);
/* A fresh temporary directory for this process's files. */
const char *viewer_tmpdir(void);
/* Run prism-view with `args` (NULL-terminated). */
void viewer_exec(viewer_run *run, const char *const *args);
/* Read a PNG into RGBA8; false when it cannot be read. */
bool viewer_image_read(const char *path, viewer_image *img);
void viewer_image_free(viewer_image *img);
const uint8_t *viewer_pixel(const viewer_image *img, int x, int y);
/* Whether two pixels are within `tol` per channel. */
bool viewer_pixel_near(const uint8_t *a, const uint8_t *b, int tol);
/* Fraction of pixels that differ by more than `tol` in some channel. */
double viewer_image_difference(const viewer_image *a, const viewer_image *b, int tol);
/* Re-run this test under `xvfb-run -a` when there is no display; exit 77
 * (skipped) when that cannot be done. Returns only with a display. */
void viewer_require_display(int argc, char **argv);

/* The viewer's background colour (frame.c). */
extern const uint8_t VIEWER_BACKGROUND[4];

#endif
