/* The frame loop: keys and mouse, simulation time, drawing the chosen view
 * with the photons and the HUD, screenshots read before the swap. */
#include "app.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <prism/placement.h>

#include "clock.h"
#include "screenshot.h"

const uint8_t viewer_background[4] = {26, 31, 41, 255};

/* A loop through the photons' time range takes this long, in seconds. */
#define LOOP_SECONDS 6.0

/* The help overlay (H): every key, in two columns. */
static const char *HELP_KEYS =
    "left drag\nright drag\nwheel\nW A S D\nR\nV\nP\nspace\n[  ]\nF\nG\nH\nS\nEsc";
static const char *HELP_WHAT = "orbit\n"
                               "pan (middle drag too)\n"
                               "zoom\n"
                               "fly (shift: faster)\n"
                               "raster / ray-traced / x-ray view\n"
                               "VBO / copy photon mode\n"
                               "propagate again (new seed)\n"
                               "pause\n"
                               "scrub time back / forward\n"
                               "filter photons by history flag\n"
                               "show / hide the world volume\n"
                               "this help\n"
                               "screenshot (tap; hold: fly back)\n"
                               "quit";

static void switch_mode(viewer_app *app)
{
    char err[512];
    viewer_photon_mode want = app->photons.mode == PHOTONS_VBO ? PHOTONS_COPY : PHOTONS_VBO;
    if (viewer_photons_set_mode(&app->photons, app->ctx, want, err, sizeof err) ||
        viewer_app_propagate(app)) {
        snprintf(app->status, sizeof app->status, "mode switch failed: %s", err);
        return;
    }
    snprintf(app->status, sizeof app->status, "photons: %s mode%s",
             viewer_photon_mode_name(app->photons.mode),
             app->photons.mode != want ? " (no interop for VBO mode)" : "");
}

static void take_screenshot(viewer_app *app, const char *path)
{
    char err[512];
    if (viewer_screenshot(path, app->width, app->height, err, sizeof err))
        snprintf(app->status, sizeof app->status, "screenshot failed: %s", err);
    else
        snprintf(app->status, sizeof app->status, "wrote %s", path);
    fprintf(stderr, "prism-view: %s\n", app->status);
}

static void on_key(viewer_app *app, int key, bool *screenshot)
{
    double step = app->photons.time_max * 0.02;
    switch (key) {
    case 'R':
        /* raster -> ray-traced -> ray-traced x-ray -> raster */
        if (app->raytrace.buffer && app->view == VIEW_RAYTRACE && !app->raytrace.xray) {
            app->raytrace.xray = true;
        } else if (app->raytrace.buffer) {
            app->view = app->view == VIEW_RASTER ? VIEW_RAYTRACE : VIEW_RASTER;
            app->raytrace.xray = false;
        } else
            snprintf(app->status, sizeof app->status, "no ray-traced view (see stderr)");
        break;
    case 'V': switch_mode(app); break;
    case 'P':
        app->photons.seed++;
        viewer_app_propagate(app);
        app->sim_time = 0;
        break;
    case ' ': app->paused = !app->paused; break;
    case '[':
        app->paused = true;
        app->sim_time = app->sim_time > step ? app->sim_time - step : 0;
        break;
    case ']':
        app->paused = true;
        app->sim_time += step;
        break;
    case 'F': app->photons.filter = (app->photons.filter + 1) % VIEWER_FILTER_COUNT; break;
    case 'G':
        app->show_world = !app->show_world;
        viewer_app_sync_world(app);
        snprintf(app->status, sizeof app->status, "world volume %s",
                 !app->world_count ? "(none in this scene)"
                 : app->show_world ? "shown"
                                   : "hidden");
        break;
    case 'H': app->help = !app->help; break;
    case 'S': *screenshot = true; break;
    case VIEWER_KEY_ESCAPE:
        if (app->window)
            viewer_window_close(app->window);
        break;
    default: break;
    }
}

static void move_camera(viewer_app *app, double dt)
{
    viewer_input *in = &app->input;
    if (in->orbit_dx || in->orbit_dy)
        viewer_camera_orbit(&app->camera, (float)(-in->orbit_dx * 0.005),
                            (float)(in->orbit_dy * 0.005));
    if (in->pan_dx || in->pan_dy)
        viewer_camera_pan(&app->camera, (float)(in->pan_dx / app->height),
                          (float)(in->pan_dy / app->height));
    if (in->scroll)
        viewer_camera_zoom(&app->camera, powf(0.9f, (float)in->scroll));
    float speed = app->camera.scene_size * 0.25f * (in->shift ? 4.0f : 1.0f) * (float)dt;
    float fwd = (float)(in->fly_forward - in->fly_back),
          right = (float)(in->fly_right - in->fly_left);
    if (fwd || right)
        viewer_camera_fly(&app->camera, fwd * speed, right * speed);
}

void viewer_frame_input(viewer_app *app, double dt)
{
    for (int i = 0; i < app->input.key_count; i++)
        on_key(app, app->input.keys[i], &app->screenshot_wanted);
    move_camera(app, dt);
    viewer_input_clear(&app->input);
    if (!app->paused && app->photons.time_max > 0) {
        app->sim_time += dt * app->photons.time_max / LOOP_SECONDS;
        if (app->sim_time > app->photons.time_max * 1.1)
            app->sim_time = 0;
    }
}

static void megabytes(double bytes, char *out, size_t size)
{
    if (bytes < 1e6)
        snprintf(out, size, "%.1f KB", bytes / 1e3);
    else
        snprintf(out, size, "%.1f MB", bytes / 1e6);
}

/* "placement auto (1.2 MB device, 0 KB mapped): bvh.nodes device, ..." */
static int placement_summary(const viewer_app *app, char *out, size_t size)
{
    if (!app->geometry) /* a window's first frame */
        return snprintf(out, size, "placement: not yet (BVH building)");
    const prism_upload_report *rep = prism_geometry_report(app->geometry);
    if (!rep)
        return snprintf(out, size, "placement: no report");
    char dev[32], map[32];
    megabytes((double)rep->device_bytes, dev, sizeof dev);
    megabytes((double)rep->mapped_bytes, map, sizeof map);
    /* the host backend's "device" and "mapped" memory are both its heap */
    const bool host = prism_context_backend(app->ctx) == PRISM_BACKEND_HOST;
    int n = host ? snprintf(out, size, "placement: host backend (%s in host memory)\n ", dev)
                 : snprintf(out, size, "placement %s (%s device, %s mapped)\n ",
                            prism_placement_policy_name(rep->policy), dev, map);
    for (size_t i = 0; i < rep->array_count && n >= 0 && (size_t)n < size; i++) {
        const prism_upload_entry *e = &rep->arrays[i];
        const char *where = e->gl_shared       ? "GL buffer"
                            : host             ? "host"
                            : !e->mapped_bytes ? "device"
                            : !e->device_bytes ? "mapped"
                                               : "split";
        n += snprintf(out + n, size - (size_t)n, "%s %s %s", i ? "," : "", e->name, where);
    }
    return n;
}

static void hud_text(const viewer_app *app, char *t, size_t size)
{
    const prism_device_info *dev = prism_context_device(app->ctx);
    const viewer_photons *ph = &app->photons;
    bool interop = app->photons.gl_buffer || app->raytrace.interop;
    char rate[64] = "first frame";
    if (app->frame > 0)
        snprintf(rate, sizeof rate, "%.1f fps  %.2f ms/frame", app->fps,
                 app->last_frame_seconds * 1e3);
    int n = snprintf(t, size,
                     "%s\n"
                     "view %s%s   photons: %s\n"
                     "%zu photons  t = %.2f / %.2f ns  filter %s%s\n"
                     "backend %s  device %s  (%s)\n",
                     rate,
                     app->view == VIEW_RASTER ? "raster"
                     : app->raytrace.xray     ? "ray-traced x-ray"
                                              : "ray-traced",
                     !app->world_count ? ""
                     : app->show_world ? ", world shown (G)"
                                       : ", world hidden (G)",
                     !ph->count                ? "none"
                     : ph->mode == PHOTONS_VBO ? "VBO mode"
                                               : "copy mode",
                     ph->count, app->sim_time, ph->time_max, viewer_photons_filter_name(ph->filter),
                     app->paused ? "  [paused]" : "",
                     prism_backend_name(prism_context_backend(app->ctx)), dev ? dev->name : "?",
                     app->display_name);
    n += placement_summary(app, t + n, size - (size_t)n);
    /* The kernels read the raster view's vertex buffer when it was shared
     * (with interop, unless PRISM_VIEW_SHARE_GEOMETRY=0: see app.c); else the
     * engine holds its own copy. */
    bool shared = prism_geometry_vertices_shared(app->geometry);
    interop = interop || shared;
    snprintf(t + n, size - (size_t)n,
             "\ninterop %s: image %s, photons %s; geometry %s\n%s%sH: help",
             interop ? "active" : "off (copy path)", app->raytrace.interop ? "in place" : "copied",
             !ph->count      ? "none"
             : ph->gl_buffer ? "in place"
                             : "copied",
             shared ? "stored once (GL buffer shared)" : "in GL and engine (2 copies)", app->status,
             app->status[0] ? "\n" : "");
}

void viewer_frame_draw(viewer_app *app, bool hud)
{
    glBindFramebuffer(GL_FRAMEBUFFER, app->window ? 0 : app->fbo.framebuffer);
    glViewport(0, 0, app->width, app->height);
    glClearColor(viewer_background[0] / 255.0f, viewer_background[1] / 255.0f,
                 viewer_background[2] / 255.0f, 1);
    glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
    float view[16], proj[16];
    viewer_camera_view(&app->camera, view);
    viewer_camera_projection(&app->camera, (float)app->width / (float)app->height, proj);
    char err[512];
    /* Before viewer_app_ready (a window's first frame) there is no
     * geometry to ray trace yet: that frame is raster. */
    bool traced = app->view == VIEW_RAYTRACE && app->geometry;
    if (traced && viewer_raytrace_render(&app->raytrace, app->ctx, app->geometry, &app->camera,
                                         viewer_background, err, sizeof err)) {
        fprintf(stderr, "prism-view: %s: back to the raster view\n", err);
        snprintf(app->status, sizeof app->status, "%s", err);
        app->view = VIEW_RASTER;
        traced = false;
    }
    if (traced)
        viewer_raytrace_draw(&app->raytrace);
    else if (prism_geometry_gl_release(app->geometry) == PRISM_SUCCESS) /* GL's turn */
        viewer_raster_draw(&app->raster, view, proj);
    if (!app->photons_pending)
        viewer_photons_draw(&app->photons, view, proj, app->sim_time);
    if (!hud)
        return;
    const char *hud_env = getenv("PRISM_VIEW_HUD"); /* "0": pictures to compare */
    if (!hud_env || strcmp(hud_env, "0")) {
        char text[2048];
        hud_text(app, text, sizeof text);
        viewer_hud_draw(&app->hud, text, 10, 10, app->width >= 1000 ? 1.5f : 1.0f, app->width,
                        app->height);
    }
    if (app->help)
        viewer_hud_draw_columns(&app->hud, HELP_KEYS, HELP_WHAT, -1, (float)app->height * 0.3f,
                                app->width >= 1000 ? 2.0f : 1.5f, app->width, app->height);
}

void viewer_frame_present(viewer_app *app)
{
    if (app->window)
        viewer_window_swap(app->window);
    else
        glFinish(); /* headless: a frame is done when the GPU is */
}

static void frame_timing(viewer_app *app, double dt)
{
    if (app->frame == 0)
        return; /* no frame before the first one to measure against */
    app->last_frame_seconds = dt;
    double fps = dt > 0 ? 1.0 / dt : 0;
    app->fps = app->frame < 2 ? fps : app->fps * 0.9 + fps * 0.1;
}

/* Follow the window's size: the ray-traced view's PBO and texture are
 * made again at the new size. */
static void follow_resize(viewer_app *app)
{
    int w, h;
    viewer_window_framebuffer_size(app->window, &w, &h);
    if (w < 1 || h < 1 || (w == app->width && h == app->height))
        return;
    app->width = w;
    app->height = h;
    if (!app->raytrace.buffer)
        return;
    char err[512];
    viewer_raytrace_destroy(&app->raytrace);
    if (viewer_raytrace_create(&app->raytrace, app->ctx, w, h, viewer_app_gl_loader(app), err,
                               sizeof err)) {
        fprintf(stderr, "prism-view: %s: raster view only\n", err);
        app->view = VIEW_RASTER;
    }
    viewer_app_sync_world(app);
}

int viewer_app_run(viewer_app *app)
{
    long frames = app->opt.frames ? app->opt.frames : app->window ? 0 : 1;
    /* In a window the first frame shows the detector (raster) as soon as
     * the scene is loaded, without waiting on the BVH, the upload or the
     * photons, which come from the second frame on; a headless or single
     * frame is a picture, so it has everything. */
    bool early = app->window && frames != 1;
    if (!early && (viewer_app_ready(app) || viewer_app_first_photons(app)))
        return 1;
    double prev = viewer_clock();
    for (app->frame = 0; frames == 0 || app->frame < frames; app->frame++) {
        if (app->frame == 1 && early && (viewer_app_ready(app) || viewer_app_first_photons(app)))
            return 1;
        if (app->window) {
            viewer_window_poll(app->window);
            if (viewer_window_should_close(app->window))
                break;
            follow_resize(app);
        }
        double now = viewer_clock();
        /* Headless frames step time evenly, so a given frame is the same picture every run. */
        double dt = app->window ? now - prev : 1.0 / 60.0;
        frame_timing(app, now - prev);
        prev = now;
        /* $PRISM_VIEW_KEYS: keys pressed one a frame from the second frame on,
         * so scripted runs and tests drive what a user's keys do. */
        const char *script = getenv("PRISM_VIEW_KEYS");
        if (script && app->frame >= 1 && (size_t)app->frame <= strlen(script))
            viewer_input_push_key(&app->input, script[app->frame - 1]);
        viewer_frame_input(app, app->frame ? dt : 0);
        viewer_frame_draw(app, true);
        if (app->screenshot_wanted) {
            char path[64];
            snprintf(path, sizeof path, "prism-view-%d.png", ++app->screenshot_count);
            take_screenshot(app, path);
            app->screenshot_wanted = false;
        }
        bool last = frames && app->frame + 1 == frames;
        if (app->opt.screenshot &&
            (last || (app->window && viewer_window_should_close(app->window))))
            take_screenshot(app, app->opt.screenshot);
        viewer_frame_present(app);
    }
    return strncmp(app->status, "screenshot failed", 17) == 0 ? 1 : 0;
}
