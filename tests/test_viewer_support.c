/* Running prism-view from the tests (exec_util.c: stdout and stderr in a
 * file), PNG reading with libpng's simplified API. */
#define _XOPEN_SOURCE 700
#include "test_viewer_support.h"

#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec_util.h"

const uint8_t VIEWER_BACKGROUND[4] = {26, 31, 41, 255};

const char *viewer_path(void)
{
    return getenv("PRISM_VIEW");
}

const char *viewer_tmpdir(void)
{
    return exec_tmpdir();
}

void viewer_exec(viewer_run *run, const char *const *args)
{
    const char *argv[64] = {viewer_path()};
    int n = 1;
    for (; args[n - 1] && n < 63; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    static exec_run r;
    exec_program(&r, argv, true);
    run->exit_code = r.exit_code;
    run->signal = r.signal;
    const size_t len = strnlen(r.out, sizeof run->output - 1);
    memcpy(run->output, r.out, len);
    run->output[len] = 0;
}

bool viewer_image_read(const char *path, viewer_image *img)
{
    png_image png;
    memset(&png, 0, sizeof png);
    png.version = PNG_IMAGE_VERSION;
    memset(img, 0, sizeof *img);
    if (!png_image_begin_read_from_file(&png, path))
        return false;
    png.format = PNG_FORMAT_RGBA;
    img->rgba = malloc(PNG_IMAGE_SIZE(png));
    if (!img->rgba || !png_image_finish_read(&png, NULL, img->rgba, 0, NULL)) {
        png_image_free(&png);
        free(img->rgba);
        img->rgba = NULL;
        return false;
    }
    img->width = (int)png.width;
    img->height = (int)png.height;
    return true;
}

void viewer_image_free(viewer_image *img)
{
    free(img->rgba);
    img->rgba = NULL;
}

const uint8_t *viewer_pixel(const viewer_image *img, int x, int y)
{
    return img->rgba + ((size_t)y * (size_t)img->width + (size_t)x) * 4;
}

bool viewer_pixel_near(const uint8_t *a, const uint8_t *b, int tol)
{
    for (int c = 0; c < 3; c++)
        if (abs((int)a[c] - (int)b[c]) > tol)
            return false;
    return true;
}

double viewer_image_difference(const viewer_image *a, const viewer_image *b, int tol)
{
    if (a->width != b->width || a->height != b->height)
        return 1.0;
    size_t diff = 0, n = (size_t)a->width * (size_t)a->height;
    for (size_t i = 0; i < n; i++)
        if (!viewer_pixel_near(a->rgba + i * 4, b->rgba + i * 4, tol))
            diff++;
    return (double)diff / (double)n;
}

void viewer_require_display(int argc, char **argv)
{
    const char *d = getenv("DISPLAY");
    if (d && d[0])
        return;
    if (getenv("PRISM_TEST_UNDER_XVFB") || !exec_on_path("xvfb-run", NULL, 0)) {
        fprintf(stderr, "no display and no xvfb-run: skipped\n");
        exit(77);
    }
    setenv("PRISM_TEST_UNDER_XVFB", "1", 1);
    char *args[16] = {"xvfb-run", "-a", "-s", "-screen 0 1280x1024x24"};
    int n = 4;
    for (int i = 0; i < argc && n < 15; i++)
        args[n++] = argv[i];
    args[n] = NULL;
    execvp("xvfb-run", args);
    fprintf(stderr, "xvfb-run could not be started: skipped\n");
    exit(77);
}
