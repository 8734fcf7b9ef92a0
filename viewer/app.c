/* Start-up and shut-down of the viewer: load the file and build its BVH
 * (scene_job.c, on its own thread) while the display (window, else
 * headless EGL) and the engine context on the GL context's device open,
 * make the views; the raster view as soon as the scene is loaded. What
 * needs the BVH (upload, so the ray-traced view and photons) comes in
 * viewer_app_ready: in a window the first frame is drawn before it, so
 * it shows the detector without waiting on the BVH or the photons. Each
 * stage is timed for the benchmark. */
#include "app.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <prism/placement.h>
#include <prism/render.h>

#include "clock.h"
#include "scene_job.h"

#include <EGL/egl.h>
#include <GLFW/glfw3.h>

/* Engine warnings go to stderr, except the engine's note that GL buffers
 * use the copy path: the viewer says that itself, once, in its own words
 * (PRISM_VIEW_VERBOSE shows everything, info included). Errors are the
 * viewer's to print, once, from what the failed call returns
 * (tool_log_engine). Debug lines come only when the environment asked for
 * a trace (cli.h). */
static void on_engine_log(void *user, prism_log_level level, const char *message)
{
    bool verbose = getenv("PRISM_VIEW_VERBOSE") != NULL;
    if (level == PRISM_LOG_ERROR)
        tool_log_engine(user, level, message);
    else if (verbose || level == PRISM_LOG_DEBUG ||
             (level >= PRISM_LOG_WARNING &&
              strncmp(message, "CUDA-GL interop unavailable", 27) != 0))
        fprintf(stderr, "prism: %s\n", message);
}

void viewer_app_sync_world(viewer_app *app)
{
    app->raster.show_hidden = app->show_world;
    app->raytrace.hidden = app->show_world ? NULL : app->world;
    app->raytrace.hidden_count = app->show_world ? 0 : app->world_count;
}

static int open_headless(viewer_app *app)
{
    char err[512];
    if (viewer_egl_create(&app->egl, err, sizeof err)) {
        fprintf(stderr, "prism-view: headless: %s\n", err);
        return -1;
    }
    if (viewer_fbo_create(&app->fbo, app->width, app->height)) {
        fprintf(stderr, "prism-view: headless: no %dx%d framebuffer\n", app->width, app->height);
        return -1;
    }
    snprintf(app->display_name, sizeof app->display_name, "%s", viewer_egl_platform(app->egl));
    return 0;
}

/* A window when one can be had, else headless (said once). */
static int open_display(viewer_app *app)
{
    double t0 = viewer_clock();
    app->width = app->opt.width;
    app->height = app->opt.height;
    int r;
    if (app->opt.headless) {
        r = open_headless(app);
    } else {
        char err[512], title[300];
        const char *base = strrchr(app->opt.file, '/');
        snprintf(title, sizeof title, "prism-view: %s", base ? base + 1 : app->opt.file);
        if (viewer_window_create(app->width, app->height, title, &app->input, &app->window, err,
                                 sizeof err) == 0) {
            viewer_window_framebuffer_size(app->window, &app->width, &app->height);
            snprintf(app->display_name, sizeof app->display_name, "GLFW window");
            r = 0;
        } else {
            fprintf(stderr, "prism-view: %s: running headless\n", err);
            app->opt.headless = true;
            r = open_headless(app);
        }
    }
    app->startup.gl = viewer_clock() - t0;
    if (r == 0 && getenv("PRISM_VIEW_VERBOSE"))
        fprintf(stderr, "prism-view: %s, OpenGL %s, %s\n", app->display_name,
                (const char *)glGetString(GL_VERSION), (const char *)glGetString(GL_RENDERER));
    return r;
}

static prism_context_desc engine_desc(const viewer_app *app, tool_log *log)
{
    prism_context_desc d = {.backend = app->opt.engine.backend,
                            .log = on_engine_log,
                            .log_user = log,
                            .log_level = getenv("PRISM_VIEW_VERBOSE") ? PRISM_LOG_INFO
                                                                      : PRISM_LOG_WARNING,
                            .share_gl = app->opt.engine.backend != PRISM_BACKEND_HOST};
    tool_env_context(&d);
    return d;
}

/* CUDA's own start (driver and primary context, ~0.2 s on an H200, the
 * longest step before the first frame) runs on this thread from the first
 * moment, while the main thread opens the display and the scene job loads;
 * open_engine joins it. */
typedef struct viewer_prewarm {
    pthread_t thread;
    prism_context_desc desc;
    tool_log log;
    double seconds;
} viewer_prewarm;

static void *prewarm_main(void *p)
{
    viewer_prewarm *w = p;
    double t0 = viewer_clock();
    prism_context_prewarm(&w->desc);
    w->seconds = viewer_clock() - t0;
    return NULL;
}

static void prewarm_start(viewer_app *app)
{
    const char *flag = getenv("PRISM_VIEW_PREWARM");
    if (app->opt.engine.backend == PRISM_BACKEND_HOST || (flag && strcmp(flag, "0") == 0))
        return;
    viewer_prewarm *w = calloc(1, sizeof *w);
    if (!w)
        return; /* the context starts CUDA itself, only later */
    w->desc = engine_desc(app, &w->log);
    if (pthread_create(&w->thread, NULL, prewarm_main, w)) {
        free(w);
        return;
    }
    app->prewarm = w;
}

static void prewarm_join(viewer_app *app)
{
    if (!app->prewarm)
        return;
    pthread_join(app->prewarm->thread, NULL);
    app->startup.prewarm = app->prewarm->seconds;
    free(app->prewarm);
    app->prewarm = NULL;
}

/* The engine on the GL context's CUDA device when there is one; else CUDA
 * without sharing (copy path), else the host backend, said once. */
static int open_engine(viewer_app *app)
{
    prewarm_join(app);
    prism_context_desc desc = engine_desc(app, &app->engine_log);
    const double t0 = viewer_clock();
    prism_result r = prism_context_create(&desc, &app->ctx);
    app->startup.engine_create = viewer_clock() - t0;
    if (r != PRISM_SUCCESS && desc.share_gl && prism_cuda_device_count() > 0) {
        desc.share_gl = false;
        r = prism_context_create(&desc, &app->ctx);
        if (r == PRISM_SUCCESS)
            fprintf(stderr, "prism-view: the GL context is not on a CUDA device: "
                            "no interop, images and photons go through the copy path\n");
    }
    if (r != PRISM_SUCCESS) {
        fprintf(stderr, "prism-view: engine: %s\n",
                app->engine_log.error[0] ? app->engine_log.error : prism_result_string(r));
        return -1;
    }
    if (prism_context_backend(app->ctx) == PRISM_BACKEND_HOST &&
        app->opt.engine.backend != PRISM_BACKEND_HOST)
        fprintf(stderr, "prism-view: no CUDA device: host backend, images and photons go "
                        "through the copy path\n");
    return 0;
}

/* The box of what the raster view shows (everything but the hidden world
 * volumes), for framing the camera. A placement's vertices are a block of
 * their own in the flattened scene, so it is the box of every vertex
 * outside the hidden solids' blocks: one streaming pass over the positions.
 * (Gathering the three vertices of every shown triangle took ~100 ms of a
 * 155-190 ms raster view at 25.6M triangles on an H200.) Vertices no
 * triangle uses count too; for framing that is harmless. */
static void shown_box(viewer_app *app)
{
    const prism_scene *s = app->scene;
    if (app->world_count == 0)
        return; /* the scene's own box is the shown one */
    enum { MAX_HIDDEN = 16 };
    size_t block_lo[MAX_HIDDEN], block_hi[MAX_HIDDEN], blocks = 0;
    for (size_t i = 0; i < app->world_count && blocks < MAX_HIDDEN; i++) {
        const prism_solid *so = &s->solids[app->world[i]];
        size_t lo = SIZE_MAX, hi = 0;
        for (size_t t = so->first_triangle; t < (size_t)so->first_triangle + so->triangle_count;
             t++)
            for (int v = 0; v < 3; v++) {
                const size_t x = s->indices[3 * t + v];
                lo = x < lo ? x : lo;
                hi = x > hi ? x : hi;
            }
        if (lo <= hi) {
            block_lo[blocks] = lo;
            block_hi[blocks++] = hi;
        }
    }
    float lo0 = INFINITY, lo1 = INFINITY, lo2 = INFINITY, hi0 = -INFINITY, hi1 = -INFINITY,
          hi2 = -INFINITY;
    const long nv = (long)s->vertices_count;
#pragma omp parallel for schedule(static) reduction(min                                            \
                                                    : lo0, lo1, lo2) reduction(max                 \
                                                                               : hi0, hi1, hi2)
    for (long v = 0; v < nv; v++) {
        bool hidden = false;
        for (size_t b = 0; b < blocks; b++)
            hidden |= (size_t)v >= block_lo[b] && (size_t)v <= block_hi[b];
        if (hidden)
            continue;
        const float *x = s->positions + 3 * (size_t)v;
        lo0 = fminf(lo0, x[0]), lo1 = fminf(lo1, x[1]), lo2 = fminf(lo2, x[2]);
        hi0 = fmaxf(hi0, x[0]), hi1 = fmaxf(hi1, x[1]), hi2 = fmaxf(hi2, x[2]);
    }
    const float lo[3] = {lo0, lo1, lo2}, hi[3] = {hi0, hi1, hi2};
    memcpy(app->shown_min, lo, sizeof lo);
    memcpy(app->shown_max, hi, sizeof hi);
}

static uint32_t material16(const uint32_t *m, long t)
{
    return m && m[t] < 0xFFFFu ? m[t] : 0xFFFFu;
}

/* Where the upload does not write the raster view's per-triangle codes
 * (no interop: host backend, Mesa, GL on another GPU), the viewer writes
 * them in the same layout (prism_geometry_desc.gl_triangle_buffer), into
 * the mapped GL buffer on all threads: written once, front to back per
 * thread, never read. 0, or -1 when GL cannot map it. */
static int write_codes(viewer_app *app)
{
    const prism_scene *s = app->scene;
    uint32_t *codes = viewer_raster_map_codes(&app->raster, s->triangles_count);
    if (!codes)
        return -1;
    const long n = (long)s->triangles_count;
#pragma omp parallel for schedule(static)
    for (long t = 0; t < n; t++) {
        const uint32_t c[2] = {s->triangle_solid ? s->triangle_solid[t] : PRISM_NONE,
                               material16(s->triangle_material_inner, t) |
                                   material16(s->triangle_material_outer, t) << 16};
        memcpy(codes + 2 * t, c, sizeof c);
    }
    return viewer_raster_unmap_codes(&app->raster);
}

/* The raster view's buffers from the scene, where the upload does not
 * write them. 0, or -1 (said). */
static int fill_raster(viewer_app *app)
{
    const prism_scene *s = app->scene;
    double t0 = viewer_clock();
    int r = viewer_raster_fill(&app->raster, s->positions, s->vertices_count, s->indices,
                               s->triangles_count) ||
            write_codes(app);
    app->startup.raster += viewer_clock() - t0;
    if (r)
        fprintf(stderr, "prism-view: raster view: GL failure\n");
    return r ? -1 : 0;
}

static int upload(viewer_app *app)
{
    prism_geometry_desc desc = {.policy = app->opt.engine.placement,
                                .builder = app->opt.engine.bvh};
    tool_env_geometry(&desc);
    if (app->opt.reserve_mb == 0)
        desc.reserve = PRISM_PLACEMENT_NO_RESERVE;
    else if (app->opt.reserve_mb > 0)
        desc.reserve = (size_t)(app->opt.reserve_mb * 1e6);
    /* The raster view's vertex buffer holds the scene's positions, which
     * the BVH keeps in their order: with interop the kernels can read it,
     * and the geometry is stored once, as issue 7 asks. Mapping it around
     * each launch cost 0.3 ms (at times 2.8 ms) on an H100 (a 1.27 ms
     * ray-traced frame became 1.6-4.0 ms), so it stays mapped
     * (gl_keep_mapped) and is released only before a raster draw.
     * PRISM_VIEW_SHARE_GEOMETRY=0 keeps the engine's own copy instead. */
    const char *share = getenv("PRISM_VIEW_SHARE_GEOMETRY");
    if (!(share && strcmp(share, "0") == 0) && app->raster.vertices &&
        prism_context_gl_shared(app->ctx) &&
        (!app->bvh || app->bvh->vertex_count == app->scene->vertices_count))
        desc.gl_vertex_buffer = app->raster.vertices;
    desc.gl_keep_mapped = desc.gl_vertex_buffer != 0;
    if (app->gl_by_engine) {
        desc.gl_fill = true;
        desc.gl_index_buffer = app->raster.indices;
        desc.gl_triangle_buffer = app->raster.codes_buffer;
    }
    /* No host BVH: the upload builds one, on the device when it can. */
    double t0 = viewer_clock();
    prism_result r = prism_geometry_upload(app->ctx, app->scene, app->bvh, &desc, &app->geometry);
    app->startup.upload = viewer_clock() - t0;
    if (r != PRISM_SUCCESS) {
        fprintf(stderr, "prism-view: upload: %s (%s)\n", prism_context_last_error(app->ctx),
                prism_result_string(r));
        return -1;
    }
    const prism_upload_report *rep = prism_geometry_report(app->geometry);
    const prism_bvh_build_report *b = &rep->bvh;
    if (app->gl_by_engine && !rep->gl_filled) { /* no interop after all: the upload said why */
        if (fill_raster(app))
            return -1;
        app->gl_by_engine = false;
    }
    if (!app->bvh) { /* built by the upload: its time is part of the upload's */
        app->startup.bvh = b->seconds;
        app->startup.bvh_where = b->builder;
    }
    return 0;
}

/* The raster view draws the scene's own arrays, so it can be made while
 * the BVH is still building (the engine's copy is in the BVH's order),
 * and, its buffers made empty, before the engine is open: GL objects,
 * shader and the shown box, while CUDA still starts. Its colours come
 * from a palette (one entry per material, engine's colours) and a
 * per-solid table of what is hidden (the world volumes), looked up by
 * the per-triangle codes in the shader. */
static int make_raster(viewer_app *app)
{
    double t0 = viewer_clock();
    const prism_scene *s = app->scene;
    uint8_t(*palette)[4] = malloc((s->materials_count + 1) * sizeof *palette);
    uint8_t *hidden = calloc(s->solids_count + 1, 1);
    int r = palette && hidden ? 0 : -1;
    if (r == 0) {
        for (size_t m = 0; m < s->materials_count; m++)
            prism_render_palette_color((uint32_t)m, palette[m]);
        prism_render_palette_color(PRISM_NONE, palette[s->materials_count]);
        for (size_t i = 0; i < app->world_count; i++)
            hidden[app->world[i]] = 1;
        /* only sized here: the upload writes them (gl_by_engine), else
         * fill_raster once the engine has said which */
        viewer_raster_desc d = {.vertex_count = s->vertices_count,
                                .triangle_count = s->triangles_count,
                                .palette = (const uint8_t(*)[4])palette,
                                .palette_count = s->materials_count + 1,
                                .hidden_solids = hidden,
                                .solid_count = s->solids_count};
        r = viewer_raster_create(&app->raster, &d);
        if (r)
            fprintf(stderr, "prism-view: raster view: GL failure\n");
    } else {
        fprintf(stderr, "prism-view: raster view: out of memory\n");
    }
    free(palette);
    free(hidden);
    shown_box(app);
    app->startup.raster = viewer_clock() - t0;
    return r;
}

static void source_from_options(const viewer_app *app, prism_photon_source *src)
{
    *src = app->opt.engine.source;
    if (!app->opt.engine.source_given)
        for (int i = 0; i < 3; i++)
            src->position[i] = 0.5f * (app->scene->bbox_min[i] + app->scene->bbox_max[i]);
}

/* Propagate once more (P key, V key, start). Before the first photons
 * (viewer_app_first_photons) there is nothing to redo. */
int viewer_app_propagate(viewer_app *app)
{
    if (app->photons_pending)
        return 0;
    prism_photon_source src;
    source_from_options(app, &src);
    char err[512];
    if (viewer_photons_propagate(&app->photons, app->ctx, app->geometry, &src, err, sizeof err)) {
        fprintf(stderr, "prism-view: %s\n", err);
        return -1;
    }
    if (app->photons.time_max <= 0) /* light crossing the scene a few times */
        app->photons.time_max = 4.0 * app->camera.scene_size * 1.5 / 0.299792458;
    return 0;
}

prism_gl_get_proc_address_fn viewer_app_gl_loader(const viewer_app *app)
{
    return app->window ? (prism_gl_get_proc_address_fn)glfwGetProcAddress
                       : (prism_gl_get_proc_address_fn)eglGetProcAddress;
}

/* The views' GL objects that need no engine (HUD; photon program and
 * buffer), made while CUDA still starts. */
static int make_gl_objects(viewer_app *app)
{
    double t0 = viewer_clock();
    char err[512];
    if (viewer_hud_create(&app->hud))
        return -1;
    app->startup.hud = viewer_clock() - t0;
    if (viewer_photons_create(&app->photons, (size_t)app->opt.photons, viewer_app_gl_loader(app),
                              err, sizeof err)) {
        fprintf(stderr, "prism-view: %s\n", err);
        return -1;
    }
    app->startup.views = viewer_clock() - t0;
    return 0;
}

/* The views' parts that need the engine: the ray-traced view's PBO and
 * the photon mode's buffers (registered with CUDA where there is interop). */
static int make_gl_views(viewer_app *app)
{
    char err[512];
    const double t1 = viewer_clock();
    /* Without the ray-traced view the raster view still shows the scene. */
    if (viewer_raytrace_create(&app->raytrace, app->ctx, app->width, app->height,
                               viewer_app_gl_loader(app), err, sizeof err)) {
        fprintf(stderr, "prism-view: %s: raster view only\n", err);
        app->view = VIEW_RASTER;
    }
    app->startup.raytrace_view = viewer_clock() - t1;
    /* Unless asked for, VBO mode only where interop can exist: on the
     * host backend or with GL not shared it would only fall back. */
    viewer_photon_mode mode = app->opt.mode;
    if (!app->opt.mode_given && !prism_context_gl_shared(app->ctx))
        mode = PHOTONS_COPY;
    if (viewer_photons_set_mode(&app->photons, app->ctx, mode, err, sizeof err)) {
        fprintf(stderr, "prism-view: %s\n", err);
        return -1;
    }
    app->startup.views += viewer_clock() - t1;
    return 0;
}

/* Frame the part that is shown (the world hidden: what it holds). */
static void set_camera(viewer_app *app)
{
    const prism_scene *s = app->scene;
    int up = s->up_axis == PRISM_UP_X ? 0 : s->up_axis == PRISM_UP_Z ? 2 : 1;
    bool shown = !app->show_world && app->world_count && app->shown_min[0] <= app->shown_max[0];
    viewer_camera_frame(&app->camera, shown ? app->shown_min : s->bbox_min,
                        shown ? app->shown_max : s->bbox_max, up, 45.0f);
    if (app->opt.camera_given) {
        memcpy(app->camera.eye, app->opt.eye, sizeof app->camera.eye);
        memcpy(app->camera.target, app->opt.target, sizeof app->camera.target);
        memcpy(app->camera.up, app->opt.up, sizeof app->camera.up);
        app->camera.fov_deg = app->opt.fov;
    }
}

/* Display, engine and the scene-free views on this thread while the scene
 * job loads and builds; the raster view as soon as the scene is loaded.
 * The job may still be building the BVH on return. */
static int start(viewer_app *app)
{
    prewarm_start(app);
    app->job = calloc(1, sizeof *app->job);
    if (!app->job || viewer_scene_job_start(app->job, app)) {
        free(app->job);
        app->job = NULL;
        prewarm_join(app);
        fprintf(stderr, "prism-view: out of memory\n");
        return -1;
    }
    double t0 = viewer_clock();
    int r = open_display(app) || make_gl_objects(app);
    /* The scene is often loaded before CUDA has started: its raster view
     * (GL only) then comes before the engine, in CUDA's shadow. */
    bool raster = false;
    if (r == 0 && viewer_scene_job_poll_loaded(app->job) > 0) {
        r = make_raster(app);
        raster = true;
    }
    const double raster_early = raster ? app->startup.raster : 0;
    r = r || open_engine(app) || make_gl_views(app);
    prewarm_join(app); /* when the display failed first */
    app->startup.engine = viewer_clock() - t0 - app->startup.gl - app->startup.views - raster_early;
    app->startup.raster_early = raster;
    /* The host builds the BVH only for the host backend or when asked;
     * otherwise the upload builds it on the device (or, short of device
     * memory, on the host after all, which it says). */
    const prism_bvh_builder bvh = app->opt.engine.bvh;
    viewer_scene_job_decide(app->job,
                            r == 0 && (bvh == PRISM_BVH_BUILDER_HOST ||
                                       (bvh == PRISM_BVH_BUILDER_AUTO &&
                                        prism_context_backend(app->ctx) == PRISM_BACKEND_HOST)));
    if (r == 0)
        r = viewer_scene_job_wait_loaded(app->job);
    /* Said once, on the HUD too, so that nobody takes straight lines for physics. */
    if (r == 0 && !prism_scene_has_optics(app->scene)) {
        snprintf(app->status, sizeof app->status, "no RINDEX anywhere: every material is vacuum");
        fprintf(stderr, "prism-view: %s: %s\n", app->opt.file, app->status);
    }
    /* With CUDA sharing GL and the tree built by the upload on the device
     * (milliseconds), the upload comes before the first frame and writes
     * the raster view's vertex and index buffers through interop: each
     * byte crosses PCIe once (glBufferData from host memory took 2.17 s
     * of a 2.79 s start at 25.6M triangles on an H200). */
    if (r == 0) {
        const char *share = getenv("PRISM_VIEW_SHARE_GEOMETRY");
        app->gl_by_engine = prism_context_backend(app->ctx) == PRISM_BACKEND_CUDA &&
                            prism_context_gl_shared(app->ctx) &&
                            app->opt.engine.bvh != PRISM_BVH_BUILDER_HOST &&
                            !(share && strcmp(share, "0") == 0);
        r = (!raster && make_raster(app)) ||
            (app->gl_by_engine ? viewer_app_ready(app) : fill_raster(app));
    }
    return r ? -1 : 0;
}

int viewer_app_init(viewer_app *app, const viewer_options *opt)
{
    memset(app, 0, sizeof *app);
    app->opt = *opt;
    app->view = opt->view;
    app->show_world = opt->show_world;
    app->photons_pending = true;
    double t0 = viewer_clock();
    if (start(app))
        return -1;
    set_camera(app);
    viewer_app_sync_world(app);
    app->startup.total = viewer_clock() - t0;
    return 0;
}

/* Wait for the scene job (the BVH) if it still runs. Returns its result. */
static int join_job(viewer_app *app)
{
    if (!app->job)
        return 0;
    double t0 = viewer_clock();
    int r = viewer_scene_job_join(app->job);
    app->startup.wait_bvh = viewer_clock() - t0;
    free(app->job);
    app->job = NULL;
    return r;
}

int viewer_app_ready(viewer_app *app)
{
    if (app->geometry)
        return 0;
    if (join_job(app) || upload(app))
        return -1;
    if (getenv("PRISM_VIEW_VERBOSE")) {
        char report[4096];
        prism_geometry_report_format(prism_geometry_report(app->geometry), report, sizeof report);
        fprintf(stderr, "prism-view: %s", report);
    }
    if (getenv("PRISM_VIEW_VERBOSE"))
        fprintf(stderr,
                "prism-view: interop: ray-traced image %s, photons %s (%s mode), "
                "geometry %s\n",
                app->raytrace.interop ? "yes" : "no", app->photons.gl_buffer ? "yes" : "no",
                viewer_photon_mode_name(app->photons.mode),
                prism_geometry_vertices_shared(app->geometry) ? "stored once (GL buffer shared)"
                                                              : "uploaded twice (GL and engine)");
    return 0;
}

int viewer_app_first_photons(viewer_app *app)
{
    if (!app->photons_pending || viewer_app_ready(app))
        return app->photons_pending ? -1 : 0;
    app->photons_pending = false;
    double t0 = viewer_clock();
    int r = viewer_app_propagate(app);
    app->startup.photons = viewer_clock() - t0;
    app->sim_time = app->opt.headless ? 0.5 * app->photons.time_max : 0.0;
    return r;
}

void viewer_app_destroy(viewer_app *app)
{
    join_job(app); /* an early failure may leave the BVH building */
    /* First: it may hold the raster view's vertex buffer registered. */
    prism_geometry_destroy(app->geometry);
    app->geometry = NULL;
    if (app->window || app->egl) { /* GL objects need their context */
        viewer_photons_destroy(&app->photons);
        viewer_raytrace_destroy(&app->raytrace);
        viewer_raster_destroy(&app->raster);
        viewer_hud_destroy(&app->hud);
        viewer_fbo_destroy(&app->fbo);
    }
    app->engine_log.print_errors = true; /* what was left alive, if anything */
    prism_result r = prism_context_destroy(app->ctx);
    if (r != PRISM_SUCCESS)
        fprintf(stderr, "prism-view: engine shut-down: %s\n", prism_result_string(r));
    viewer_window_destroy(app->window);
    viewer_egl_destroy(app->egl);
    prism_bvh_free(app->bvh);
    prism_scene_free(app->scene);
    free(app->world);
    memset(app, 0, sizeof *app);
}
