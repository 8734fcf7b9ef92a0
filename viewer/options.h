/* Command-line options of prism-view: the parsed form, and the parser that
 * turns argv into it with a clear message for every mistake. */
#ifndef VIEWER_OPTIONS_H
#define VIEWER_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "cli.h"

typedef enum viewer_view { VIEW_RASTER = 0, VIEW_RAYTRACE } viewer_view;
typedef enum viewer_photon_mode { PHOTONS_VBO = 0, PHOTONS_COPY } viewer_photon_mode;

typedef struct viewer_options {
    const char *file;
    bool headless;
    bool headless_forced; /* --headless given (not just no display) */
    int width, height;    /* default 1024x768 */
    long frames;          /* 0 = run until the window closes (headless: 1) */
    const char *screenshot;
    long photons; /* default 10000; 0 = none */
    viewer_photon_mode mode;
    bool mode_given;
    viewer_view view;
    bool camera_given;
    float eye[3], target[3], up[3], fov; /* fov in degrees */
    /* --source (default a point at the centre of the scene), --backend,
     * --placement, --bvh: who builds the BVH, auto (the device when the
     * engine is CUDA and has the memory, else the host), the host (OpenMP,
     * on the scene thread), or cuda; --unit: the file's length unit (AUTO:
     * the loader's rule). */
    tool_engine_options engine;
    double reserve_mb; /* <0 = engine default */
    bool show_world;   /* draw the outermost volume(s) (hidden by default) */
    bool bench;
    bool json;
    bool help;
    double start_clock; /* viewer_clock() when main began (not an option) */
} viewer_options;

/* Fill `opts` from argv. Returns 0 on success, -1 on a mistake with the
 * message (one line, no newline) in `err`. --help sets opts->help. */
int viewer_options_parse(int argc, char **argv, viewer_options *opts, char *err, size_t err_size);

/* The --help text. */
void viewer_options_usage(FILE *out);

#endif
