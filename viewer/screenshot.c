/* glReadPixels + libpng. */
#include "screenshot.h"

#include <errno.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gl.h"

uint8_t *viewer_read_pixels(int w, int h)
{
    size_t row = (size_t)w * 4;
    uint8_t *px = malloc(row * (size_t)h), *tmp = malloc(row);
    if (!px || !tmp) {
        free(px);
        free(tmp);
        return NULL;
    }
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glReadPixels(0, 0, w, h, GL_RGBA, GL_UNSIGNED_BYTE, px);
    for (int y = 0; y < h / 2; y++) { /* GL's rows go bottom-up */
        memcpy(tmp, px + row * (size_t)y, row);
        memcpy(px + row * (size_t)y, px + row * (size_t)(h - 1 - y), row);
        memcpy(px + row * (size_t)(h - 1 - y), tmp, row);
    }
    free(tmp);
    return px;
}

/* libpng reports errors by longjmp: the locals used after setjmp are not
 * changed after it, so they need not be volatile. */
int viewer_write_png(const char *path, const uint8_t *rgba, int w, int h, char *err,
                     size_t err_size)
{
    FILE *f = fopen(path, "wb");
    if (!f) {
        snprintf(err, err_size, "%s: %s", path, strerror(errno));
        return -1;
    }
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!info || setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        fclose(f);
        snprintf(err, err_size, "%s: PNG write failed", path);
        return -1;
    }
    png_init_io(png, f);
    png_set_IHDR(png, info, (png_uint_32)w, (png_uint_32)h, 8, PNG_COLOR_TYPE_RGB_ALPHA,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    for (int y = 0; y < h; y++)
        png_write_row(png, rgba + (size_t)y * (size_t)w * 4);
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    if (fclose(f)) {
        snprintf(err, err_size, "%s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

int viewer_screenshot(const char *path, int w, int h, char *err, size_t err_size)
{
    uint8_t *px = viewer_read_pixels(w, h);
    if (!px) {
        snprintf(err, err_size, "out of memory for a %dx%d screenshot", w, h);
        return -1;
    }
    /* The picture is opaque: alpha from blending the HUD is not the image. */
    for (size_t i = 0; i < (size_t)w * (size_t)h; i++)
        px[i * 4 + 3] = 255;
    int r = viewer_write_png(path, px, w, h, err, err_size);
    free(px);
    return r;
}
