/* prism-view --bench: headless timings of every stage. Start-up stages
 * (load, BVH, GL, upload, first frame) once; then, over --frames frames
 * (default 30), the median of the ray-traced render, the raster draw, and
 * for each photon mode that works here, propagate (+ copy) and draw. A table
 * on stdout, or one JSON object with --json. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "clock.h"
#include "progress.h"
#include "screenshot.h"

#define MAX_FRAMES 1000
/* The timed frames of a run are at most this many times --frames: ray-traced
 * (1), its parts (draw, three renders, in flight: 5), device memory (1),
 * raster (1), the two buffer kinds (2), the two photon modes (2). */
#define FRAME_PASSES 12

/* The bar over the timed frames: a minute and more on the host backend. */
typedef struct bench_progress {
    tool_progress bar;
    size_t done, total;
} bench_progress;

/* `frames` more frames timed (or skipped: the bar still reaches its end). */
static void tick(bench_progress *p, long frames)
{
    p->done += (size_t)frames;
    tool_progress_update(&p->bar, p->done < p->total ? p->done : p->total, p->total);
}

typedef struct mode_times {
    bool measured;
    double propagate, copy, draw, frame; /* medians, seconds */
} mode_times;

typedef struct bench_result {
    double first_frame, first_photons, render, raster;
    double render_engine, render_kernel; /* medians: prism_render, and its launches alone */
    double gl_draw;       /* median: the draw that shows the image, with no render before it */
    double in_flight;     /* a frame when frames follow each other with no glFinish between */
    double no_interop;    /* render into device memory (no GL buffer), then the same draw */
    double render_alone;  /* prism_render with no GL work between frames */
    double render_finish; /* prism_render, then glFinish with nothing drawn */
    double render_pixel;  /* prism_render, then a 1-pixel clear and glFinish: the switch */
    double via_unpack, via_array; /* render + texture, buffer made as PBO / as VBO */
    bool render_ok;
    mode_times modes[2]; /* PHOTONS_VBO, PHOTONS_COPY */
    long frames;
} bench_result;

static int compare(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, long n)
{
    qsort(v, (size_t)n, sizeof *v, compare);
    return n ? (n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2])) : 0;
}

/* Time `n` ray-traced frames (engine into the PBO, then the draw that
 * shows it: in place, or through the texture copy);
 * also the medians of prism_render's time and of its kernel launches, so
 * the frame's overhead over the kernel shows. */
static double time_render(viewer_app *app, long n, bool *ok, double *engine, double *kernel,
                          bench_progress *pg)
{
    double t[MAX_FRAMES], e[MAX_FRAMES], k[MAX_FRAMES];
    char err[512];
    *ok = true;
    for (long i = 0; i < n; i++) {
        double t0 = viewer_clock();
        if (viewer_raytrace_render(&app->raytrace, app->ctx, app->geometry, &app->camera,
                                   viewer_background, err, sizeof err)) {
            fprintf(stderr, "prism-view: bench: %s\n", err);
            *ok = false;
            return 0;
        }
        viewer_raytrace_draw(&app->raytrace);
        glFinish();
        t[i] = viewer_clock() - t0;
        e[i] = app->raytrace.render_seconds;
        k[i] = app->raytrace.launch_seconds;
        tick(pg, 1);
    }
    *engine = median(e, n);
    *kernel = median(k, n);
    return median(t, n);
}

/* Where the frame's time beyond the kernel goes: the draw alone (the image
 * already there, no CUDA work before it), and frames one after another
 * with one glFinish at the end, as a window's loop runs them (the GL side
 * of one frame may then overlap the next one's engine work). */
static void time_render_parts(viewer_app *app, long n, bench_result *b, bench_progress *pg)
{
    double t[MAX_FRAMES];
    char err[512];
    for (long i = 0; i < n; i++) {
        double t0 = viewer_clock();
        viewer_raytrace_draw(&app->raytrace);
        glFinish();
        t[i] = viewer_clock() - t0;
        tick(pg, 1);
    }
    b->gl_draw = median(t, n);
    /* The floor under the frame: renders alone (their PBO unmap already
     * hands the buffer to GL, so GL runs between them), each followed by
     * glFinish, and each followed by the least GL work there is (one pixel
     * cleared). On an H200 the GPU's switch from CUDA's work to GL's and
     * back costs ~0.3 ms whatever GL does: in a program of its own
     * (tools/probe_gl_switch.cu), a 0.75 ms kernel then a 1-pixel glClear
     * took 1.06-1.07 ms, the clear alone 0.01 ms; a full-screen clear or
     * draw adds ~0.15 ms more (the few graphics-capable SMs of a compute
     * GPU). */
    double *rows[3] = {&b->render_alone, &b->render_finish, &b->render_pixel};
    for (int k = 0; k < 3; k++) {
        for (long i = 0; i < n; i++) {
            double s = viewer_clock();
            if (viewer_raytrace_render(&app->raytrace, app->ctx, app->geometry, &app->camera,
                                       viewer_background, err, sizeof err))
                return;
            if (k == 2) {
                glEnable(GL_SCISSOR_TEST);
                glScissor(0, 0, 1, 1);
                glClear(GL_COLOR_BUFFER_BIT);
                glDisable(GL_SCISSOR_TEST);
            }
            if (k)
                glFinish();
            t[i] = viewer_clock() - s;
            tick(pg, 1);
        }
        *rows[k] = median(t, n);
    }
    double t0 = viewer_clock();
    for (long i = 0; i < n; i++) {
        if (viewer_raytrace_render(&app->raytrace, app->ctx, app->geometry, &app->camera,
                                   viewer_background, err, sizeof err))
            return;
        viewer_raytrace_draw(&app->raytrace);
        tick(pg, 1);
    }
    glFinish();
    b->in_flight = (viewer_clock() - t0) / (double)n;
}

/* Time `n` frames of one photon mode: propagate (+ copy), then draw. */
static void time_mode(viewer_app *app, viewer_photon_mode mode, long n, mode_times *out,
                      bench_progress *pg)
{
    char err[512];
    if (viewer_photons_set_mode(&app->photons, app->ctx, mode, err, sizeof err) ||
        app->photons.mode != mode)
        return; /* VBO mode without interop: not measured */
    double prop[MAX_FRAMES], copy[MAX_FRAMES], draw[MAX_FRAMES], frame[MAX_FRAMES];
    app->view = VIEW_RASTER;
    for (long i = 0; i < n; i++) {
        double t0 = viewer_clock();
        if (viewer_app_propagate(app))
            return;
        glFinish();
        double t1 = viewer_clock();
        viewer_frame_draw(app, false);
        glFinish();
        double t2 = viewer_clock();
        prop[i] = app->photons.propagate_seconds;
        copy[i] = mode == PHOTONS_COPY ? app->photons.copy_seconds : 0;
        draw[i] = t2 - t1;
        frame[i] = t2 - t0;
        tick(pg, 1);
    }
    out->measured = true;
    out->propagate = median(prop, n);
    out->copy = median(copy, n);
    out->draw = median(draw, n);
    out->frame = median(frame, n);
}

/* g4daeview found a CUDA-written buffer made as a GL_PIXEL_UNPACK_BUFFER
 * ten times faster to turn into a texture than one made as a
 * GL_ARRAY_BUFFER (the driver places them differently). Measure both:
 * render into the buffer, then texture from it. */
static double time_buffer_made_as(viewer_app *app, GLenum target, long n, bench_progress *pg)
{
    size_t bytes = (size_t)app->width * (size_t)app->height * 4;
    GLuint gl;
    glGenBuffers(1, &gl);
    glBindBuffer(target, gl);
    glBufferData(target, (GLsizeiptr)bytes, NULL,
                 target == GL_PIXEL_UNPACK_BUFFER ? GL_STREAM_DRAW : GL_DYNAMIC_DRAW);
    glBindBuffer(target, 0);
    prism_buffer *buf = NULL;
    double t[MAX_FRAMES], result = 0;
    if (prism_buffer_create_gl(app->ctx, gl, bytes, PRISM_GL_WRITE_DISCARD,
                               viewer_app_gl_loader(app), "bench.image", &buf) == PRISM_SUCCESS) {
        prism_camera cam;
        prism_render_desc desc;
        viewer_raytrace_setup(&app->raytrace, &app->camera, viewer_background, &cam, &desc);
        prism_target tgt = {.kind = PRISM_TARGET_BUFFER, .buffer = buf};
        long i = 0;
        for (; i < n; i++) {
            double t0 = viewer_clock();
            if (prism_render(app->ctx, app->geometry, &cam, &desc, &tgt, NULL) != PRISM_SUCCESS)
                break;
            glBindBuffer(GL_PIXEL_UNPACK_BUFFER, gl);
            glBindTexture(GL_TEXTURE_2D, app->raytrace.texture);
            glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, app->width, app->height, GL_RGBA,
                            GL_UNSIGNED_BYTE, NULL);
            glBindTexture(GL_TEXTURE_2D, 0);
            glBindBuffer(GL_PIXEL_UNPACK_BUFFER, 0);
            glFinish();
            t[i] = viewer_clock() - t0;
            tick(pg, 1);
        }
        result = i == n ? median(t, n) : 0;
    }
    prism_buffer_release(buf);
    glDeleteBuffers(1, &gl);
    return result;
}

/* The frame's GL side without interop: the same render into device
 * memory (no GL buffer to map, nothing handed to GL), then the same draw.
 * What is left over the kernel is the switch between CUDA's work and
 * GL's, not the interop. */
static double time_no_interop(viewer_app *app, long n, bench_progress *pg)
{
    prism_buffer *dev = NULL;
    if (prism_buffer_create_device(app->ctx, (size_t)app->width * (size_t)app->height * 4,
                                   "bench.image", &dev) != PRISM_SUCCESS)
        return 0;
    prism_camera cam;
    prism_render_desc desc;
    viewer_raytrace_setup(&app->raytrace, &app->camera, viewer_background, &cam, &desc);
    prism_target tgt = {.kind = PRISM_TARGET_BUFFER, .buffer = dev};
    double t[MAX_FRAMES];
    long i = 0;
    for (; i < n; i++) {
        double t0 = viewer_clock();
        if (prism_render(app->ctx, app->geometry, &cam, &desc, &tgt, NULL) != PRISM_SUCCESS)
            break;
        viewer_raytrace_draw(&app->raytrace);
        glFinish();
        t[i] = viewer_clock() - t0;
        tick(pg, 1);
    }
    prism_buffer_release(dev);
    return i == n ? median(t, n) : 0;
}

static int measure(viewer_app *app, bench_result *b, bench_progress *pg)
{
    /* As in a window: the first frame as soon as the scene is loaded (raster,
     * the BVH may still be building), then the first one with everything
     * (BVH, upload, photons). Both from the start of main(). */
    viewer_frame_draw(app, true);
    glFinish();
    b->first_frame = viewer_clock() - app->opt.start_clock;
    if (viewer_app_ready(app) || viewer_app_first_photons(app))
        return -1;
    viewer_frame_draw(app, true);
    glFinish();
    b->first_photons = viewer_clock() - app->opt.start_clock;
    b->frames = app->opt.frames > 1 ? app->opt.frames : 30;
    if (b->frames > MAX_FRAMES)
        b->frames = MAX_FRAMES;
    pg->total = (size_t)(FRAME_PASSES * b->frames);
    tool_progress_begin(&pg->bar, "prism-view", "benchmark", "frames", true);
    tool_progress_update(&pg->bar, 0, pg->total);
    const size_t start = pg->done;
    b->render = time_render(app, b->frames, &b->render_ok, &b->render_engine, &b->render_kernel,
                            pg);
    if (b->render_ok) {
        time_render_parts(app, b->frames, b, pg);
        b->no_interop = time_no_interop(app, b->frames, pg);
    }
    tick(pg, (long)(start + (size_t)(7 * b->frames) - pg->done)); /* what did not run */
    double t[MAX_FRAMES];
    float view[16], proj[16];
    viewer_camera_view(&app->camera, view);
    viewer_camera_projection(&app->camera, (float)app->width / (float)app->height, proj);
    prism_geometry_gl_release(app->geometry);
    for (long i = 0; i < b->frames; i++) {
        double s = viewer_clock();
        viewer_raster_draw(&app->raster, view, proj);
        glFinish();
        t[i] = viewer_clock() - s;
        tick(pg, 1);
    }
    b->raster = median(t, b->frames);
    if (b->render_ok && app->raytrace.texture) {
        b->via_unpack = time_buffer_made_as(app, GL_PIXEL_UNPACK_BUFFER, b->frames, pg);
        b->via_array = time_buffer_made_as(app, GL_ARRAY_BUFFER, b->frames, pg);
    }
    tick(pg, (long)(start + (size_t)(10 * b->frames) - pg->done));
    if (app->photons.count) {
        time_mode(app, PHOTONS_VBO, b->frames, &b->modes[PHOTONS_VBO], pg);
        time_mode(app, PHOTONS_COPY, b->frames, &b->modes[PHOTONS_COPY], pg);
    }
    tick(pg, (long)(pg->total - pg->done));
    tool_progress_end(&pg->bar, "");
    return 0;
}

static void print_table(const viewer_app *app, const bench_result *b)
{
    const prism_device_info *dev = prism_context_device(app->ctx);
    printf("prism-view --bench %s  (%dx%d, %zu triangles, %zu photons, %ld frames)\n",
           app->opt.file, app->width, app->height, app->scene->triangles_count, app->photons.count,
           b->frames);
    printf("backend %s, device %s, display %s\n\n",
           prism_backend_name(prism_context_backend(app->ctx)), dev ? dev->name : "?",
           app->display_name);
    const viewer_startup *s = &app->startup;
    printf("%-34s %12s\n", "stage", "ms");
    printf("%-34s %12.3f  (scene thread)\n", "load", s->load * 1e3);
    if (s->bvh_where == PRISM_BVH_BUILDER_AUTO)
        printf("%-34s %12.3f  (scene thread, %d OpenMP threads)\n", "BVH build", s->bvh * 1e3,
               s->bvh_threads);
    else
        printf("%-34s %12.3f  (%s, inside the upload)\n", "BVH build", s->bvh * 1e3,
               s->bvh_where == PRISM_BVH_BUILDER_CUDA ? "on the device" : "on the host");
    printf("%-34s %12.3f  (main thread, meanwhile)\n", "GL context", s->gl * 1e3);
    if (s->prewarm > 0)
        printf("%-34s %12.3f  (own thread from the start, meanwhile)\n", "CUDA start (warm-up)",
               s->prewarm * 1e3);
    printf("%-34s %12.3f  (main thread, meanwhile%s)\n", "engine context", s->engine * 1e3,
           s->prewarm > 0 ? ", after the warm-up" : "");
    printf("%-34s %12.3f  (prism_context_create)\n", "  of which creating it",
           s->engine_create * 1e3);
    printf("%-34s %12.3f  (main thread, meanwhile)\n", "views (HUD, PBO, photon buffers)",
           s->views * 1e3);
    printf("%-34s %12.3f\n", "  of which the HUD", s->hud * 1e3);
    printf("%-34s %12.3f\n", "  of which the ray-traced view", s->raytrace_view * 1e3);
    printf("%-34s %12.3f  (main thread, %s; %s)\n", "raster view", s->raster * 1e3,
           s->raster_early ? "before the engine, the scene loaded first" : "once loaded",
           app->gl_by_engine ? "its buffers written by the upload" : "buffers from host memory");
    printf("%-34s %12.3f  (raster, the BVH may still build)\n", "start to first frame",
           b->first_frame * 1e3);
    printf("%-34s %12.3f  (after the first frame)\n", "then waited for the BVH", s->wait_bvh * 1e3);
    printf("%-34s %12.3f\n", "upload", s->upload * 1e3);
    printf("%-34s %12.3f\n", "first propagate", s->photons * 1e3);
    printf("%-34s %12.3f  (BVH, upload, photons)\n", "start to first complete frame",
           b->first_photons * 1e3);
    if (b->render_ok)
        printf("%-34s %12.3f  (%.1f fps, interop %s, PBO %s)\n", "render (ray-traced, median)",
               b->render * 1e3, b->render > 0 ? 1 / b->render : 0,
               app->raytrace.interop ? "on" : "off",
               app->raytrace.in_place ? "drawn in place" : "copied to a texture");
    if (b->render_ok && b->render_kernel > 0) {
        printf("%-34s %12.3f  (prism_render: maps, launches, unmaps)\n", "  of which the engine",
               b->render_engine * 1e3);
        printf("%-34s %12.3f  (the frame is %.2fx the kernel)\n", "  of which the kernel",
               b->render_kernel * 1e3, b->render / b->render_kernel);
        printf("%-34s %12.3f  (no render before it)\n", "  the draw that shows it, alone",
               b->gl_draw * 1e3);
        printf("%-34s %12.3f  (no GL work between renders)\n", "render alone",
               b->render_alone * 1e3);
        printf("%-34s %12.3f  (nothing drawn)\n", "render, then glFinish", b->render_finish * 1e3);
        printf("%-34s %12.3f  (%.2fx the kernel: the CUDA-GL switch)\n",
               "render, then one pixel cleared", b->render_pixel * 1e3,
               b->render_pixel / b->render_kernel);
        printf("%-34s %12.3f  (%.2fx the kernel; one glFinish after all)\n",
               "render, frames in flight", b->in_flight * 1e3, b->in_flight / b->render_kernel);
        if (b->no_interop > 0)
            printf("%-34s %12.3f  (%.2fx the kernel)\n", "render to device memory, then draw",
                   b->no_interop * 1e3, b->no_interop / b->render_kernel);
    }
    printf("%-34s %12.3f\n", "raster draw (median)", b->raster * 1e3);
    if (b->via_unpack > 0 && b->via_array > 0) {
        printf("%-34s %12.3f\n", "render+texture, PBO made as UNPACK", b->via_unpack * 1e3);
        printf("%-34s %12.3f  (%.2fx the UNPACK one)\n", "render+texture, PBO made as ARRAY",
               b->via_array * 1e3, b->via_array / b->via_unpack);
    }
    for (int m = 0; m < 2; m++) {
        const mode_times *t = &b->modes[m];
        const char *name = viewer_photon_mode_name((viewer_photon_mode)m);
        if (!t->measured) {
            printf("%s mode: not measured (%s)\n", name,
                   app->photons.count ? "no CUDA-GL interop" : "no photons");
            continue;
        }
        printf("%s mode: %-24s %12.3f\n", name, "propagate (median)", t->propagate * 1e3);
        if (m == PHOTONS_COPY)
            printf("%s mode: %-24s %12.3f\n", name, "copy to GL (median)", t->copy * 1e3);
        printf("%s mode: %-24s %12.3f\n", name, "draw (median)", t->draw * 1e3);
        printf("%s mode: %-24s %12.3f\n", name, "frame (median)", t->frame * 1e3);
    }
}

static void print_mode_json(const char *name, const mode_times *t, bool comma)
{
    if (!t->measured)
        printf("\"%s\":null%s", name, comma ? "," : "");
    else
        printf("\"%s\":{\"propagate_ms\":%.4f,\"copy_ms\":%.4f,\"draw_ms\":%.4f,"
               "\"frame_ms\":%.4f}%s",
               name, t->propagate * 1e3, t->copy * 1e3, t->draw * 1e3, t->frame * 1e3,
               comma ? "," : "");
}

/* File names and device names are plain here; quotes and backslashes are
 * replaced so the JSON stays valid whatever they hold. */
static void json_string(const char *s)
{
    putchar('"');
    for (; *s; s++)
        putchar(*s == '"' || *s == '\\' || (unsigned char)*s < 32 ? '_' : *s);
    putchar('"');
}

static void print_json(const viewer_app *app, const bench_result *b)
{
    const prism_device_info *dev = prism_context_device(app->ctx);
    printf("{\"file\":");
    json_string(app->opt.file);
    printf(",\"width\":%d,\"height\":%d,\"triangles\":%zu,\"photons\":%zu,\"frames\":%ld,"
           "\"backend\":\"%s\",\"device\":",
           app->width, app->height, app->scene->triangles_count, app->photons.count, b->frames,
           prism_backend_name(prism_context_backend(app->ctx)));
    json_string(dev ? dev->name : "?");
    printf(",\"display\":");
    json_string(app->display_name);
    const viewer_startup *s = &app->startup;
    printf(",\"raster_buffers\":\"%s\"", app->gl_by_engine ? "upload" : "viewer");
    printf(",\"bvh_threads\":%d,\"bvh_builder\":\"%s\"", s->bvh_threads,
           s->bvh_where == PRISM_BVH_BUILDER_AUTO ? "host (scene thread)"
                                                  : prism_bvh_builder_name(s->bvh_where));
    printf(",\"prewarm_ms\":%.4f", s->prewarm * 1e3);
    printf(",\"engine_ms\":%.4f,\"views_ms\":%.4f,\"raster_view_ms\":%.4f,\"wait_bvh_ms\":%.4f,"
           "\"first_propagate_ms\":%.4f,\"first_complete_frame_ms\":%.4f",
           s->engine * 1e3, s->views * 1e3, s->raster * 1e3, s->wait_bvh * 1e3, s->photons * 1e3,
           b->first_photons * 1e3);
    printf(",\"render_alone_ms\":%.4f,\"render_finish_ms\":%.4f,\"render_pixel_ms\":%.4f,"
           "\"render_no_interop_ms\":%.4f",
           b->render_alone * 1e3, b->render_finish * 1e3, b->render_pixel * 1e3,
           b->no_interop * 1e3);
    printf(
        ",\"interop\":%s,\"load_ms\":%.4f,\"bvh_ms\":%.4f,\"gl_ms\":%.4f,\"upload_ms\":%.4f,"
        "\"first_frame_ms\":%.4f,\"render_ms\":%.4f,\"render_engine_ms\":%.4f,\"render_kernel_ms\":%.4f,\"render_gl_draw_ms\":%.4f,\"render_in_flight_ms\":%.4f,\"render_fps\":%.2f,\"raster_ms\":%.4f,"
        "\"render_texture_unpack_ms\":%.4f,\"render_texture_array_ms\":%.4f,",
        app->raytrace.interop ? "true" : "false", app->startup.load * 1e3, app->startup.bvh * 1e3,
        app->startup.gl * 1e3, app->startup.upload * 1e3, b->first_frame * 1e3, b->render * 1e3,
        b->render_engine * 1e3, b->render_kernel * 1e3, b->gl_draw * 1e3, b->in_flight * 1e3,
        b->render > 0 ? 1 / b->render : 0, b->raster * 1e3, b->via_unpack * 1e3,
        b->via_array * 1e3);
    print_mode_json("vbo", &b->modes[PHOTONS_VBO], true);
    print_mode_json("copy", &b->modes[PHOTONS_COPY], false);
    printf("}\n");
}

int viewer_bench_run(viewer_app *app)
{
    bench_result b;
    memset(&b, 0, sizeof b);
    bench_progress progress = {.done = 0};
    if (measure(app, &b, &progress))
        return 1;
    if (app->opt.json)
        print_json(app, &b);
    else
        print_table(app, &b);
    if (app->opt.screenshot) {
        viewer_frame_draw(app, true);
        char err[512];
        if (viewer_screenshot(app->opt.screenshot, app->width, app->height, err, sizeof err)) {
            fprintf(stderr, "prism-view: %s\n", err);
            return 1;
        }
    }
    return b.render_ok ? 0 : 1;
}
