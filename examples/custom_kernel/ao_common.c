/* The example's shared host side (ao_common.h). */
#define _POSIX_C_SOURCE 200809L
#include "ao_common.h"

#include <math.h>
#include <png.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double ao_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void normalize(float v[3])
{
    const float l = sqrtf(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    for (int i = 0; i < 3; i++)
        v[i] /= l;
}

/* Look at the middle of the geometry's box from a corner-ish direction
 * above it, 45 degrees vertical field of view. */
static void frame_camera(ao_frame *f)
{
    const float *lo = f->view.geometry.bbox_lo, *hi = f->view.geometry.bbox_hi;
    const float dir[3] = {0.55f, 0.45f, 0.7f};
    float c[3], size = 0;
    for (int i = 0; i < 3; i++) {
        c[i] = 0.5f * (lo[i] + hi[i]);
        size = fmaxf(size, hi[i] - lo[i]);
    }
    for (int i = 0; i < 3; i++) {
        f->eye[i] = c[i] + 1.2f * size * dir[i];
        f->forward[i] = c[i] - f->eye[i];
    }
    normalize(f->forward);
    const float *d = f->forward;
    float r[3] = {-d[2], 0.0f, d[0]}; /* forward x (0, 1, 0) */
    normalize(r);
    const float u[3] = {r[1] * d[2] - r[2] * d[1], r[2] * d[0] - r[0] * d[2],
                        r[0] * d[1] - r[1] * d[0]};
    const float t = tanf(0.5f * 45.0f * 3.14159265f / 180.0f);
    for (int i = 0; i < 3; i++) {
        f->right[i] = r[i] * t * (float)f->width / (float)f->height;
        f->up[i] = u[i] * t;
    }
    f->radius = 0.08f * size;
}

int ao_open(int argc, char **argv, const char *default_output, ao_frame *f)
{
    memset(f, 0, sizeof *f);
    if (argc < 2 || argc > 7 || argv[1][0] == '-') {
        const bool help = argc == 2 && strcmp(argv[1], "--help") == 0;
        fprintf(help ? stdout : stderr,
                "usage: %s scene.dae [out.png [width height [samples [peel]]]]\n"
                "  Ambient occlusion of the scene, written as a PNG. peel: surfaces the\n"
                "  camera rays pass through first (a cutaway: 3 shows a G4DAE detector's PMTs\n"
                "  through its world, tank and scintillator boundaries).\n"
                "  defaults: %s, 800 600, 32 samples, peel 2\n",
                argv[0], default_output);
        return help ? 0 : 1;
    }
    f->output = argc > 2 ? argv[2] : default_output;
    f->width = argc > 4 ? (unsigned)atoi(argv[3]) : 800;
    f->height = argc > 4 ? (unsigned)atoi(argv[4]) : 600;
    f->samples = argc > 5 ? (unsigned)atoi(argv[5]) : 32;
    f->peel = argc > 6 ? (unsigned)atoi(argv[6]) : 2;
    if (f->width == 0 || f->height == 0 || f->width > 16384 || f->height > 16384 ||
        f->samples > 4096) {
        fprintf(stderr, "%s: size %ux%u or %u samples out of range\n", argv[0], f->width, f->height,
                f->samples);
        return 1;
    }
    if (prism_cuda_device_count() == 0) {
        printf("%s: no CUDA device: nothing to render\n", argv[0]);
        return 77;
    }
    prism_context_desc cd = {.backend = PRISM_BACKEND_CUDA};
    char error[1024] = "";
    prism_load_desc ld = {.error = error, .error_size = sizeof error};
    prism_geometry_desc gd = {0};
    if (prism_context_create(&cd, &f->ctx) != PRISM_SUCCESS ||
        prism_scene_load(argv[1], &ld, &f->scene) != PRISM_SUCCESS ||
        prism_geometry_upload(f->ctx, f->scene, NULL, &gd, &f->geometry) != PRISM_SUCCESS ||
        prism_geometry_device_view(f->geometry, &f->view) != PRISM_SUCCESS ||
        prism_buffer_create_device(f->ctx, (size_t)f->width * f->height * 4, "ao.image",
                                   &f->image) != PRISM_SUCCESS) {
        fprintf(stderr, "%s: %s\n", argv[0], error[0] ? error : prism_context_last_error(f->ctx));
        ao_close(f);
        return 1;
    }
    frame_camera(f);
    return 0;
}

static int write_png(const char *path, const uint8_t *rgba, unsigned w, unsigned h)
{
    FILE *file = fopen(path, "wb");
    if (file == NULL)
        return 1;
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png != NULL ? png_create_info_struct(png) : NULL;
    if (info == NULL || setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        fclose(file);
        return 1;
    }
    png_init_io(png, file);
    png_set_IHDR(png, info, w, h, 8, PNG_COLOR_TYPE_RGB_ALPHA, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    for (unsigned y = 0; y < h; y++)
        png_write_row(png, (png_const_bytep)(rgba + (size_t)y * w * 4));
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    return fclose(file) != 0;
}

int ao_finish(ao_frame *f)
{
    const size_t bytes = (size_t)f->width * f->height * 4;
    uint8_t *rgba = malloc(bytes);
    int bad = rgba == NULL || prism_buffer_read(f->image, 0, rgba, bytes) != PRISM_SUCCESS ||
              write_png(f->output, rgba, f->width, f->height) != 0;
    if (bad)
        fprintf(stderr, "%s: %s\n", f->output, prism_context_last_error(f->ctx));
    free(rgba);
    return bad;
}

int ao_close(ao_frame *f)
{
    prism_buffer_release(f->image);
    prism_geometry_destroy(f->geometry);
    prism_scene_free(f->scene);
    prism_result r = prism_context_destroy(f->ctx);
    memset(f, 0, sizeof *f);
    return r != PRISM_SUCCESS;
}
