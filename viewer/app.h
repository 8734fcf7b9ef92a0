/* The viewer's state, shared by start-up (app.c), the frame loop
 * (frame.c) and the benchmark (bench.c). Each part (raster, ray-traced
 * view, photons, HUD) is its own module; this struct only holds them. */
#ifndef VIEWER_APP_H
#define VIEWER_APP_H

#include <stdbool.h>
#include <stdint.h>

#include <prism/bvh.h>
#include <prism/context.h>
#include <prism/geometry.h>
#include <prism/memory.h>
#include <prism/scene.h>

#include "camera.h"
#include "context_egl.h"
#include "fbo.h"
#include "hud.h"
#include "input.h"
#include "options.h"
#include "photons.h"
#include "raster.h"
#include "raytrace.h"
#include "window_glfw.h"

/* Start-up stage times, seconds (the benchmark's first rows). load and
 * bvh run on the scene job's thread while gl, engine, views and raster
 * run on the main one; wait_bvh is how long viewer_app_ready then waited
 * for the BVH. total: viewer_app_init, start to ready for the first frame. */
typedef struct viewer_startup {
    double load, bvh, gl, engine, views, raster, wait_bvh, upload, photons, total;
    double prewarm;              /* CUDA's start on the warm-up thread (0: not run) */
    bool raster_early;           /* the raster view was made before the engine opened */
    double engine_create;        /* of engine: prism_context_create alone */
    double hud, raytrace_view;   /* of views: the HUD, the ray-traced view's PBO */
    int bvh_threads;             /* OpenMP threads the BVH build had (host build) */
    prism_bvh_builder bvh_where; /* AUTO: on the scene thread; CUDA or HOST: inside
                                  * the upload (HOST when the device lacked memory) */
} viewer_startup;

typedef struct viewer_app {
    viewer_options opt;
    prism_scene *scene;
    prism_bvh *bvh;
    bool gl_by_engine; /* the upload writes the raster view's vertex and index buffers */
    prism_context *ctx;
    tool_log engine_log;            /* ctx's (tools/cli.h) */
    prism_geometry *geometry;       /* NULL until viewer_app_ready */
    struct viewer_scene_job *job;   /* load + BVH thread, until joined */
    struct viewer_prewarm *prewarm; /* CUDA start-up thread, until joined */

    viewer_window *window; /* NULL when headless */
    viewer_egl *egl;       /* headless */
    viewer_fbo fbo;        /* headless render target */
    char display_name[96]; /* "GLFW window (llvmpipe ...)" */
    int width, height;

    viewer_camera camera;
    viewer_raster raster;
    viewer_raytrace raytrace;
    viewer_photons photons;
    viewer_hud hud;
    viewer_input input;

    /* The world: outermost solids that enclose others (a closed box around
     * the detector), hidden in both views unless show_world (--show-world,
     * G key). Found at load; none in a scene of one solid. */
    uint32_t *world;
    size_t world_count;
    bool show_world;
    float shown_min[3], shown_max[3]; /* box of the vertices not in the world volumes */
    bool photons_pending;             /* not propagated yet (viewer_app_first_photons) */

    viewer_view view;
    bool paused, help, screenshot_wanted;
    double sim_time; /* ns */
    double last_frame_seconds, fps;
    long frame;
    int screenshot_count;
    char status[640]; /* a transient line on the HUD (screenshot written...) */
    viewer_startup startup;
} viewer_app;

/* Load, open the display and the engine, make the views: everything the
 * raster view's first frame needs (the BVH may still be building: no
 * geometry yet). Returns 0, or -1 after printing the error. */
int viewer_app_init(viewer_app *app, const viewer_options *opt);
/* Wait for the BVH and upload: app->geometry is set after it. Returns 0,
 * or -1 after printing the error; does nothing the second time. */
int viewer_app_ready(viewer_app *app);
void viewer_app_destroy(viewer_app *app);
/* Frames until the window closes or --frames are done. Returns the exit code. */
int viewer_app_run(viewer_app *app);
/* One frame: input, camera, draw, HUD; `hud` false for benchmark frames. */
void viewer_frame_draw(viewer_app *app, bool hud);
/* Background of both views, so that raster and ray-traced pictures match
 * (frame.c). */
extern const uint8_t viewer_background[4];
/* Handle this frame's input (keys, mouse) with dt seconds elapsed. */
void viewer_frame_input(viewer_app *app, double dt);
/* End a frame: swap the window (headless: nothing). Screenshots are read
 * before this. */
void viewer_frame_present(viewer_app *app);
int viewer_bench_run(viewer_app *app);
/* Propagate the photons the first time, after viewer_app_ready (headless:
 * before the first frame; window: after it, so the detector shows without
 * waiting on them). Returns 0 or -1; does nothing the second time. */
int viewer_app_first_photons(viewer_app *app);
/* Propagate the photons again (P and V keys). Returns 0 or -1. */
int viewer_app_propagate(viewer_app *app);

/* Hand the world's visibility (app->show_world) to both views. */
void viewer_app_sync_world(viewer_app *app);

/* The GL loader the engine needs for GL buffers on the copy path. */
prism_gl_get_proc_address_fn viewer_app_gl_loader(const viewer_app *app);

#endif
