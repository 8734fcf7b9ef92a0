/* Command-line options of prism-view: the parsed form, and the parser that
 * turns argv into it with a clear message for every mistake. */
#ifndef VIEWER_OPTIONS_H
#define VIEWER_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "prism/scene.h"

typedef enum viewer_view { VIEW_RASTER = 0, VIEW_RAYTRACE } viewer_view;
typedef enum viewer_photon_mode { PHOTONS_VBO = 0, PHOTONS_COPY } viewer_photon_mode;
typedef enum viewer_source_kind { SOURCE_AUTO = 0, SOURCE_POINT, SOURCE_BEAM } viewer_source_kind;
typedef enum viewer_backend { BACKEND_AUTO = 0, BACKEND_CUDA, BACKEND_HOST } viewer_backend;
/* Who builds the BVH: auto (the device when the engine is CUDA and has the
 * memory, else the host), the host (OpenMP, on the scene thread), cuda. */
typedef enum viewer_bvh { BVH_AUTO = 0, BVH_HOST, BVH_CUDA } viewer_bvh;
typedef enum viewer_placement {
    PLACEMENT_AUTO = 0, PLACEMENT_DEVICE, PLACEMENT_MAPPED, PLACEMENT_CHROMA
} viewer_placement;

/* A photon source. A beam is a disc of `radius` centred on `pos`, shining
 * along `dir` with a half-angle `divergence` (radians). */
typedef struct viewer_source {
    viewer_source_kind kind;   /* AUTO: a point at the centre of the scene */
    float pos[3];
    float dir[3];
    float radius;
    float divergence;
} viewer_source;

typedef struct viewer_options {
    const char *file;
    bool headless;
    bool headless_forced;      /* --headless given (not just no display) */
    int width, height;         /* default 1024x768 */
    long frames;               /* 0 = run until the window closes (headless: 1) */
    const char *screenshot;
    long photons;              /* default 10000; 0 = none */
    viewer_source source;
    viewer_photon_mode mode;
    bool mode_given;
    viewer_view view;
    bool camera_given;
    float eye[3], target[3], up[3], fov; /* fov in degrees */
    viewer_backend backend;
    viewer_placement placement;
    viewer_bvh bvh;
    double reserve_mb;         /* <0 = engine default */
    prism_length_unit unit;    /* --unit: the file's length unit (AUTO: the loader's rule) */
    bool show_world;           /* draw the outermost volume(s) (hidden by default) */
    bool bench;
    bool json;
    bool help;
    double start_clock;        /* viewer_clock() when main began (not an option) */
} viewer_options;

/* Fill `opts` from argv. Returns 0 on success, -1 on a mistake with the
 * message (one line, no newline) in `err`. --help sets opts->help. */
int viewer_options_parse(int argc, char **argv, viewer_options *opts, char *err, size_t err_size);

/* The --help text. */
void viewer_options_usage(FILE *out);

#endif
