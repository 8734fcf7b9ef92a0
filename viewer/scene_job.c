/* The scene side of start-up (load, world volume, and the BVH when it is
 * built on the host) on a thread of its own, so that the display and the
 * engine open meanwhile. The BVH build's
 * OpenMP threads are this thread's team (the loader's parallel loops have
 * already started them), one fewer than the cores: see job_threads. */
#include "scene_job.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "app.h"
#include "clock.h"
#include "progress.h"

/* The loader's warnings and its unit rule, kept while the progress bar
 * owns the line and printed after it. */
typedef struct load_log {
    char lines[8][512];
    int count, dropped;
} load_log;

static void keep_log(void *user, prism_log_level level, const char *message)
{
    load_log *l = user;
    if (level == PRISM_LOG_DEBUG) { /* PRISM_LOAD_TRACE's lines, as they come */
        fprintf(stderr, "%s\n", message);
        return;
    }
    if (level != PRISM_LOG_WARNING && level != PRISM_LOG_INFO)
        return; /* an error comes back as the load's message */
    if (l->count < 8)
        snprintf(l->lines[l->count++], sizeof l->lines[0], "%s", message);
    else
        l->dropped++;
}

static int load_scene(viewer_app *app)
{
    char error[1024] = "";
    tool_progress progress;
    load_log log = {.count = 0};
    tool_progress_begin(&progress, "prism-view", "loading", NULL, true);
    prism_load_desc desc = {.progress = tool_progress_update,
                            .progress_user = &progress,
                            .error = error,
                            .error_size = sizeof error,
                            .log = keep_log,
                            .log_user = &log,
                            .length_unit = app->opt.engine.unit};
    tool_env_load(&desc);
    double t0 = viewer_clock();
    prism_result r = prism_scene_load(app->opt.file, &desc, &app->scene);
    app->startup.load = viewer_clock() - t0;
    if (r != PRISM_SUCCESS) {
        tool_progress_end(&progress, "failed");
        fprintf(stderr, "prism-view: %s\n", error[0] ? error : prism_result_string(r));
        return -1;
    }
    char note[96];
    snprintf(note, sizeof note, "%zu triangles in %.2f s", app->scene->triangles_count,
             app->startup.load);
    tool_progress_end(&progress, note);
    for (int i = 0; i < log.count; i++)
        fprintf(stderr, "prism-view: %s\n", log.lines[i]);
    if (log.dropped)
        fprintf(stderr, "prism-view: %d more loader messages\n", log.dropped);
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

/* All cores but one from 4 cores up: the main thread opens GL and CUDA
 * and makes the raster view meanwhile, and an OpenMP team that shares a
 * core with it waits for the slow thread at every barrier (seen: a
 * 468-triangle build from 0.2 ms to 15-95 ms on 2 cores). On 2 or 3 cores
 * a core less would cost the build a third to a half, more than the
 * stalls while the main thread is busy (a fraction of the build).
 * $PRISM_VIEW_BVH_THREADS overrides. The loader's parallel loops get as
 * many (this thread's OpenMP setting). */
static int job_threads(void)
{
    const char *env = getenv("PRISM_VIEW_BVH_THREADS");
    if (env && atoi(env) > 0)
        return atoi(env);
    int n = omp_get_max_threads();
    return n >= 4 ? n - 1 : n;
}

static int build_bvh(viewer_app *app)
{
    tool_progress progress;
    tool_progress_begin(&progress, "prism-view", "building BVH", NULL, true);
    /* The builder calls back on this thread only (its OpenMP workers just
     * count), so the bar needs no lock: ~100 calls, triangles placed. */
    prism_bvh_desc desc = {.threads = omp_get_max_threads(),
                           .progress = tool_progress_update,
                           .progress_user = &progress};
    app->startup.bvh_threads = desc.threads;
    double t0 = viewer_clock();
    prism_result r = prism_bvh_build(app->scene->positions, app->scene->vertices_count,
                                     app->scene->indices, app->scene->triangles_count, &desc,
                                     &app->bvh);
    app->startup.bvh = viewer_clock() - t0;
    if (r != PRISM_SUCCESS) {
        tool_progress_end(&progress, "failed");
        fprintf(stderr, "prism-view: BVH: %s\n", prism_result_string(r));
        return -1;
    }
    char note[96];
    snprintf(note, sizeof note, "%zu nodes in %.2f s", app->bvh->node_count, app->startup.bvh);
    tool_progress_end(&progress, note);
    return 0;
}

static void set_loaded(viewer_scene_job *job, int loaded)
{
    pthread_mutex_lock(&job->lock);
    job->loaded = loaded;
    pthread_cond_broadcast(&job->cond);
    pthread_mutex_unlock(&job->lock);
}

/* The main thread's word on the host build (on the main thread itself,
 * when no thread could be made, it is not given yet: build then, as
 * before the device builder). */
static bool wants_host_bvh(viewer_scene_job *job)
{
    if (!job->threaded)
        return job->host_bvh != 0;
    pthread_mutex_lock(&job->lock);
    while (job->host_bvh < 0)
        pthread_cond_wait(&job->cond, &job->lock);
    bool host = job->host_bvh > 0;
    pthread_mutex_unlock(&job->lock);
    return host;
}

void viewer_scene_job_decide(viewer_scene_job *job, bool host_bvh)
{
    pthread_mutex_lock(&job->lock);
    job->host_bvh = host_bvh;
    pthread_cond_broadcast(&job->cond);
    pthread_mutex_unlock(&job->lock);
}

static void *run(void *arg)
{
    viewer_scene_job *job = arg;
    viewer_app *app = job->app;
    if (job->threaded) /* not when run on the main thread: the engine's threads are its */
        omp_set_num_threads(job_threads());
    if (load_scene(app) || find_world(app)) {
        set_loaded(job, -1);
        job->result = -1;
        return NULL;
    }
    set_loaded(job, 1);
    job->result = wants_host_bvh(job) ? build_bvh(app) : 0;
    return NULL;
}

int viewer_scene_job_start(viewer_scene_job *job, viewer_app *app)
{
    job->app = app;
    job->loaded = 0;
    job->result = 0;
    job->running = false;
    if (pthread_mutex_init(&job->lock, NULL))
        return -1;
    if (pthread_cond_init(&job->cond, NULL)) {
        pthread_mutex_destroy(&job->lock);
        return -1;
    }
    job->threaded = true;
    job->host_bvh = -1;
    if (pthread_create(&job->thread, NULL, run, job) == 0) {
        job->running = true;
    } else {
        job->threaded = false;
        run(job); /* no thread: the same work, one stage after the other */
    }
    return 0;
}

int viewer_scene_job_wait_loaded(viewer_scene_job *job)
{
    pthread_mutex_lock(&job->lock);
    while (job->loaded == 0)
        pthread_cond_wait(&job->cond, &job->lock);
    int loaded = job->loaded;
    pthread_mutex_unlock(&job->lock);
    return loaded > 0 ? 0 : -1;
}

int viewer_scene_job_poll_loaded(viewer_scene_job *job)
{
    pthread_mutex_lock(&job->lock);
    int loaded = job->loaded;
    pthread_mutex_unlock(&job->lock);
    return loaded;
}

int viewer_scene_job_join(viewer_scene_job *job)
{
    if (job->running)
        pthread_join(job->thread, NULL);
    job->running = false;
    pthread_cond_destroy(&job->cond);
    pthread_mutex_destroy(&job->lock);
    return job->result;
}
