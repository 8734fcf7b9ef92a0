/* Start-up and shut-down of the viewer: load the file, build its BVH, open
 * the display (window, else headless EGL), create the engine context on the
 * GL context's device, upload, and make the views. Each stage is timed for
 * the benchmark. */
#include "app.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <prism/placement.h>
#include <prism/render.h>

#include "clock.h"
#include "progress.h"

#include <EGL/egl.h>
#include <GLFW/glfw3.h>

/* Engine warnings and errors go to stderr, except the engine's note that
 * GL buffers use the copy path: the viewer says that itself, once, in its
 * own words (PRISM_VIEW_VERBOSE shows everything, info included). */
static void on_engine_log(void *user, prism_log_level level, const char *message)
{
    bool verbose = getenv("PRISM_VIEW_VERBOSE") != NULL;
    if (!verbose && (level < PRISM_LOG_WARNING ||
                     strncmp(message, "CUDA-GL interop unavailable", 27) == 0))
        return;
    fprintf(stderr, "prism: %s\n", message);
}

static int load_scene(viewer_app *app)
{
    char error[1024] = "";
    viewer_progress progress;
    viewer_progress_begin(&progress, "loading");
    prism_load_desc desc = {.progress = viewer_progress_update, .progress_user = &progress,
                            .error = error, .error_size = sizeof error};
    double t0 = viewer_clock();
    prism_result r = prism_scene_load(app->opt.file, &desc, &app->scene);
    app->startup.load = viewer_clock() - t0;
    if (r != PRISM_SUCCESS) {
        viewer_progress_end(&progress, "failed");
        fprintf(stderr, "prism-view: %s\n", error[0] ? error : prism_result_string(r));
        return -1;
    }
    char note[96];
    snprintf(note, sizeof note, "%zu triangles in %.2f s", app->scene->triangles_count,
             app->startup.load);
    viewer_progress_end(&progress, note);
    if (app->scene->triangles_count == 0) {
        fprintf(stderr, "prism-view: %s: no triangles to show\n", app->opt.file);
        return -1;
    }
    return 0;
}

/* The world: solids without a parent that are the parent of another, so
 * a scene of one solid, or of side-by-side solids, hides nothing. */
static int find_world(viewer_app *app)
{
    const prism_scene *s = app->scene;
    bool *encloses = calloc(s->solids_count + 1, sizeof *encloses);
    app->world = malloc((s->solids_count + 1) * sizeof *app->world);
    if (!encloses || !app->world) {
        free(encloses);
        fprintf(stderr, "prism-view: out of memory\n");
        return -1;
    }
    for (size_t i = 0; i < s->solids_count; i++)
        if (s->solids[i].parent < s->solids_count)
            encloses[s->solids[i].parent] = true;
    for (size_t i = 0; i < s->solids_count; i++)
        if (s->solids[i].parent == PRISM_NONE && encloses[i])
            app->world[app->world_count++] = (uint32_t)i;
    free(encloses);
    return 0;
}

void viewer_app_sync_world(viewer_app *app)
{
    app->raster.show_hidden = app->show_world;
    app->raytrace.hidden = app->show_world ? NULL : app->world;
    app->raytrace.hidden_count = app->show_world ? 0 : app->world_count;
}

static int build_bvh(viewer_app *app)
{
    viewer_progress progress;
    viewer_progress_begin(&progress, "building BVH"); /* no progress callback: 0 then 100% */
    double t0 = viewer_clock();
    prism_result r = prism_bvh_build(app->scene->positions, app->scene->vertices_count,
                                     app->scene->indices, app->scene->triangles_count, NULL,
                                     &app->bvh);
    app->startup.bvh = viewer_clock() - t0;
    if (r != PRISM_SUCCESS) {
        viewer_progress_end(&progress, "failed");
        fprintf(stderr, "prism-view: BVH: %s\n", prism_result_string(r));
        return -1;
    }
    char note[96];
    snprintf(note, sizeof note, "%zu nodes in %.2f s", app->bvh->node_count, app->startup.bvh);
    viewer_progress_end(&progress, note);
    return 0;
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
    snprintf(app->display_name, sizeof app->display_name, "%s",
             viewer_egl_platform(app->egl));
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
        if (viewer_window_create(app->width, app->height, title, &app->input,
                                 &app->window, err, sizeof err) == 0) {
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

static const prism_backend BACKENDS[] = {PRISM_BACKEND_AUTO, PRISM_BACKEND_CUDA,
                                         PRISM_BACKEND_HOST};

/* The engine on the GL context's CUDA device when there is one; else CUDA
 * without sharing (copy path), else the host backend, said once. */
static int open_engine(viewer_app *app)
{
    prism_context_desc desc = {.backend = BACKENDS[app->opt.backend], .log = on_engine_log,
                               .log_level = getenv("PRISM_VIEW_VERBOSE") ? PRISM_LOG_INFO
                                                                     : PRISM_LOG_WARNING,
                               .share_gl = app->opt.backend != BACKEND_HOST};
    prism_result r = prism_context_create(&desc, &app->ctx);
    if (r != PRISM_SUCCESS && desc.share_gl && prism_cuda_device_count() > 0) {
        desc.share_gl = false;
        r = prism_context_create(&desc, &app->ctx);
        if (r == PRISM_SUCCESS)
            fprintf(stderr, "prism-view: the GL context is not on a CUDA device: "
                    "no interop, images and photons go through the copy path\n");
    }
    if (r != PRISM_SUCCESS) {
        fprintf(stderr, "prism-view: engine: %s\n", prism_result_string(r));
        return -1;
    }
    if (prism_context_backend(app->ctx) == PRISM_BACKEND_HOST && app->opt.backend != BACKEND_HOST)
        fprintf(stderr, "prism-view: no CUDA device: host backend, images and photons go "
                "through the copy path\n");
    return 0;
}

static const prism_placement_policy POLICIES[] = {PRISM_PLACEMENT_AUTO, PRISM_PLACEMENT_DEVICE,
                                                  PRISM_PLACEMENT_MAPPED, PRISM_PLACEMENT_CHROMA};

static int upload(viewer_app *app)
{
    prism_geometry_desc desc = {.policy = POLICIES[app->opt.placement]};
    if (app->opt.reserve_mb == 0)
        desc.reserve = PRISM_PLACEMENT_NO_RESERVE;
    else if (app->opt.reserve_mb > 0)
        desc.reserve = (size_t)(app->opt.reserve_mb * 1e6);
    double t0 = viewer_clock();
    prism_result r = prism_geometry_upload(app->ctx, app->scene, app->bvh, &desc, &app->geometry);
    app->startup.upload = viewer_clock() - t0;
    if (r != PRISM_SUCCESS) {
        fprintf(stderr, "prism-view: upload: %s (%s)\n", prism_context_last_error(app->ctx),
                prism_result_string(r));
        return -1;
    }
    return 0;
}

/* The raster view draws the BVH's reordered arrays, the ones the engine
 * uploads, coloured by the material of each original triangle; the
 * world's triangles get alpha 0, which the raster view hides. */
static int make_raster(viewer_app *app)
{
    const prism_bvh *b = app->bvh;
    const prism_scene *s = app->scene;
    uint8_t *rgba = malloc(b->triangle_count * 4 + 4);
    bool *world = calloc(s->solids_count + 1, sizeof *world);
    if (!rgba || !world) {
        free(rgba);
        free(world);
        return -1;
    }
    for (size_t i = 0; i < app->world_count; i++)
        world[app->world[i]] = true;
    for (size_t i = 0; i < b->triangle_count; i++) {
        uint32_t t = b->triangle_ids[i];
        uint32_t m = s->triangle_material_inner ? s->triangle_material_inner[t] : PRISM_NONE;
        prism_render_palette_color(m, rgba + i * 4);
        uint32_t solid = s->triangle_solid ? s->triangle_solid[t] : PRISM_NONE;
        if (solid < s->solids_count && world[solid])
            rgba[i * 4 + 3] = 0;
    }
    free(world);
    int r = viewer_raster_create(&app->raster, b->vertices, b->vertex_count, b->triangles,
                                 b->triangle_count, rgba);
    free(rgba);
    if (r)
        fprintf(stderr, "prism-view: raster view: GL failure\n");
    return r;
}

static void source_from_options(const viewer_app *app, prism_photon_source *src)
{
    const viewer_source *s = &app->opt.source;
    memset(src, 0, sizeof *src);
    if (s->kind == SOURCE_BEAM) {
        src->kind = PRISM_SOURCE_BEAM;
        memcpy(src->direction, s->dir, sizeof src->direction);
        src->radius = s->radius;
        src->divergence = s->divergence;
    }
    if (s->kind == SOURCE_AUTO)
        for (int i = 0; i < 3; i++)
            src->position[i] = 0.5f * (app->scene->bbox_min[i] + app->scene->bbox_max[i]);
    else
        memcpy(src->position, s->pos, sizeof src->position);
}

/* Propagate once more (P key, V key, start). */
int viewer_app_propagate(viewer_app *app)
{
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

static int make_views(viewer_app *app)
{
    char err[512];
    if (make_raster(app) || viewer_hud_create(&app->hud))
        return -1;
    /* Without the ray-traced view the raster view still shows the scene. */
    if (viewer_raytrace_create(&app->raytrace, app->ctx, app->width, app->height,
                               viewer_app_gl_loader(app), err, sizeof err)) {
        fprintf(stderr, "prism-view: %s: raster view only\n", err);
        app->view = VIEW_RASTER;
    }
    /* Unless asked for, VBO mode only where interop can exist: on the
     * host backend or with GL not shared it would only fall back. */
    viewer_photon_mode mode = app->opt.mode;
    if (!app->opt.mode_given && !prism_context_gl_shared(app->ctx))
        mode = PHOTONS_COPY;
    if (viewer_photons_create(&app->photons, app->ctx, (size_t)app->opt.photons, mode,
                              viewer_app_gl_loader(app), err, sizeof err)) {
        fprintf(stderr, "prism-view: %s\n", err);
        return -1;
    }
    return viewer_app_propagate(app);
}

static void set_camera(viewer_app *app)
{
    const prism_scene *s = app->scene;
    int up = s->up_axis == PRISM_UP_X ? 0 : s->up_axis == PRISM_UP_Z ? 2 : 1;
    viewer_camera_frame(&app->camera, s->bbox_min, s->bbox_max, up, 45.0f);
    if (app->opt.camera_given) {
        memcpy(app->camera.eye, app->opt.eye, sizeof app->camera.eye);
        memcpy(app->camera.target, app->opt.target, sizeof app->camera.target);
        memcpy(app->camera.up, app->opt.up, sizeof app->camera.up);
        app->camera.fov_deg = app->opt.fov;
    }
}

int viewer_app_init(viewer_app *app, const viewer_options *opt)
{
    memset(app, 0, sizeof *app);
    app->opt = *opt;
    app->view = opt->view;
    double t0 = viewer_clock();
    app->show_world = opt->show_world;
    if (load_scene(app) || find_world(app) || build_bvh(app) || open_display(app) ||
        open_engine(app) || upload(app))
        return -1;
    set_camera(app);
    if (make_views(app))
        return -1;
    viewer_app_sync_world(app);
    app->sim_time = app->opt.headless ? 0.5 * app->photons.time_max : 0.0;
    if (getenv("PRISM_VIEW_VERBOSE"))
        fprintf(stderr, "prism-view: interop: ray-traced image %s, photons %s (%s mode)\n",
                app->raytrace.interop ? "yes" : "no", app->photons.gl_buffer ? "yes" : "no",
                viewer_photon_mode_name(app->photons.mode));
    app->startup.total = viewer_clock() - t0;
    return 0;
}

void viewer_app_destroy(viewer_app *app)
{
    if (app->window || app->egl) { /* GL objects need their context */
        viewer_photons_destroy(&app->photons);
        viewer_raytrace_destroy(&app->raytrace);
        viewer_raster_destroy(&app->raster);
        viewer_hud_destroy(&app->hud);
        viewer_fbo_destroy(&app->fbo);
    }
    prism_geometry_destroy(app->geometry);
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
