/* prism-propagate: optical photons through a detector, kept as NumPy
 * files. Loads the detector, uploads it to the chosen backend, runs the
 * photons in batches (propagate_batches.c) and prints the summary
 * (propagate_summary.c); --validate compares CUDA with the host backend
 * instead (propagate_validate.c). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "progress.h"
#include "propagate_tool.h"
#ifdef PRISM_HAVE_MPI
#include "propagate_mpi.h"
#else
typedef struct propagate_mpi propagate_mpi; /* never made without MPI */
#endif

static void on_engine_log(void *user, prism_log_level level, const char *message)
{
    (void)user;
    /* DEBUG reaches here only when the environment asked for a trace (cli.h) */
    if (level >= PRISM_LOG_WARNING || level == PRISM_LOG_DEBUG)
        fprintf(stderr, "prism: %s\n", message);
}

static prism_scene *load(const propagate_options *o, double *seconds)
{
    char error[1024] = "";
    tool_progress bar;
    tool_progress_begin(&bar, "loading", NULL, !o->quiet);
    prism_load_desc desc = {.progress = tool_progress_update, .progress_user = &bar,
                            .error = error, .error_size = sizeof error, .log = on_engine_log,
                            .length_unit = o->engine.unit};
    tool_env_load(&desc);
    prism_scene *scene = NULL;
    const double t0 = tool_now();
    prism_result r = prism_scene_load(o->file, &desc, &scene);
    *seconds = tool_now() - t0;
    tool_progress_end(&bar, r == PRISM_SUCCESS ? "" : "failed");
    if (r != PRISM_SUCCESS) {
        fprintf(stderr, "prism-propagate: %s\n", error[0] ? error : prism_result_string(r));
        return NULL;
    }
    if (scene->triangles_count == 0) {
        fprintf(stderr, "prism-propagate: %s: no triangles: nothing for photons to meet\n",
                o->file);
        prism_scene_free(scene);
        return NULL;
    }
    return scene;
}

/* No material with a refractive index: the geometry has no optics. */
static bool no_rindex(const prism_scene *scene)
{
    for (size_t i = 0; i < scene->materials_count; i++)
        if (prism_material_property(&scene->materials[i], "RINDEX") != NULL)
            return false;
    return true;
}

static prism_context *open_context(const propagate_options *o, prism_context_desc desc,
                                   const char *name)
{
    desc.log = on_engine_log;
    desc.log_level = PRISM_LOG_WARNING;
    tool_env_context(&desc);
    prism_context *ctx = NULL;
    prism_result r = prism_context_create(&desc, &ctx);
    if (r != PRISM_SUCCESS) {
        fprintf(stderr, "prism-propagate: %s backend%s%s: %s\n",
                prism_backend_name(desc.backend), name[0] ? ", " : "", name,
                prism_result_string(r));
        return NULL;
    }
    if (o->engine.backend == PRISM_BACKEND_AUTO &&
        prism_context_backend(ctx) == PRISM_BACKEND_HOST && !o->quiet)
        fprintf(stderr, "prism-propagate: no CUDA device: the host backend\n");
    return ctx;
}

static prism_geometry *upload(const propagate_options *o, prism_context *ctx,
                              const prism_scene *scene, double *seconds)
{
    prism_geometry_desc desc = {.policy = o->engine.placement, .builder = o->engine.bvh};
    tool_env_geometry(&desc);
    prism_geometry *g = NULL;
    const double t0 = tool_now();
    if (prism_geometry_upload(ctx, scene, NULL, &desc, &g) != PRISM_SUCCESS) {
        fprintf(stderr, "prism-propagate: upload: %s\n", prism_context_last_error(ctx));
        return NULL;
    }
    *seconds = tool_now() - t0;
    return g;
}

static void close_contexts(propagate_run_info *run, bool *ok)
{
    for (size_t i = 0; i < run->contexts_n; i++) {
        prism_geometry_destroy((prism_geometry *)run->geometries[i]);
        run->geometries[i] = NULL;
        if (prism_context_destroy(run->contexts[i]) != PRISM_SUCCESS)
            *ok = false;
    }
    run->contexts_n = 0;
}

typedef struct context_job {
    const propagate_options *o;
    prism_context_desc desc;
    const char *name;
    prism_context *ctx;
    pthread_t thread;
    bool started;
} context_job;

static void *open_one(void *arg)
{
    context_job *j = arg;
    j->ctx = open_context(j->o, j->desc, j->name);
    return NULL;
}

/* A context per device asked for (o's list, or one), each started on a
 * thread of its own: a device's start is mostly the driver's waiting on
 * that device. */
static int create_contexts(const propagate_options *o, propagate_run_info *run)
{
    prism_context_desc descs[PROPAGATE_MAX_CONTEXTS];
    char names[PROPAGATE_MAX_CONTEXTS][32];
    size_t n = 0;
    int rc = propagate_device_descs(o, descs, names, &n);
    if (rc != PROPAGATE_OK)
        return rc;
    context_job jobs[PROPAGATE_MAX_CONTEXTS];
    for (size_t i = 0; i < n; i++) {
        jobs[i] = (context_job){.o = o, .desc = descs[i], .name = names[i]};
        jobs[i].started = i > 0 && pthread_create(&jobs[i].thread, NULL, open_one, &jobs[i]) == 0;
    }
    open_one(&jobs[0]);
    for (size_t i = 0; i < n; i++) {
        if (jobs[i].started)
            pthread_join(jobs[i].thread, NULL);
        else if (i > 0)
            open_one(&jobs[i]);
        if (jobs[i].ctx == NULL)
            rc = PROPAGATE_FAILED;
        else
            run->contexts[run->contexts_n++] = jobs[i].ctx;
    }
    run->ctx = run->contexts_n > 0 ? run->contexts[0] : NULL;
    return rc;
}

/* The contexts made while the detector loads: starting CUDA takes as long
 * as loading a detector, and the two need nothing of each other. */
typedef struct early_contexts {
    const propagate_options *o;
    propagate_run_info *run;
    pthread_t thread;
    bool started;
    int rc;
} early_contexts;

static void *create_in_thread(void *arg)
{
    early_contexts *e = arg;
    e->rc = create_contexts(e->o, e->run);
    return NULL;
}

static void create_early(early_contexts *e, const propagate_options *o, propagate_run_info *run)
{
    *e = (early_contexts){.o = o, .run = run};
    e->started = pthread_create(&e->thread, NULL, create_in_thread, e) == 0;
}

static int created(early_contexts *e)
{
    if (e->started)
        pthread_join(e->thread, NULL);
    else
        e->rc = create_contexts(e->o, e->run);
    e->started = false;
    return e->rc;
}

typedef struct upload_job {
    const propagate_options *o;
    propagate_run_info *run;
    const prism_scene *scene;
    size_t i;
    pthread_t thread;
    bool started;
    prism_geometry *g;
} upload_job;

static void *upload_one(void *arg)
{
    upload_job *j = arg;
    j->g = upload(j->o, j->run->contexts[j->i], j->scene, &j->run->upload_each[j->i]);
    return NULL;
}

/* The geometry uploaded to every context at once (each device reads its
 * own copy: see README on peer access). */
static int upload_all(const propagate_options *o, const prism_scene *scene,
                      propagate_run_info *run)
{
    upload_job jobs[PROPAGATE_MAX_CONTEXTS];
    for (size_t i = 0; i < run->contexts_n; i++) {
        jobs[i] = (upload_job){.o = o, .run = run, .scene = scene, .i = i};
        jobs[i].started = i > 0 && pthread_create(&jobs[i].thread, NULL, upload_one, &jobs[i]) == 0;
    }
    upload_one(&jobs[0]);
    int rc = PROPAGATE_OK;
    for (size_t i = 0; i < run->contexts_n; i++) {
        if (jobs[i].started)
            pthread_join(jobs[i].thread, NULL);
        else if (i > 0)
            upload_one(&jobs[i]);
        run->geometries[i] = jobs[i].g;
        if (jobs[i].g == NULL)
            rc = PROPAGATE_FAILED;
        if (run->upload_each[i] > run->upload_seconds)
            run->upload_seconds = run->upload_each[i];
    }
    run->geometry = run->geometries[0];
    return rc;
}

/* After the run: under MPI the ranks agree and rank 0 gathers; *print on
 * the process that prints the summary. */
static int finish(propagate_mpi *mpi, int rc, propagate_summary *sum, bool *print, double setup)
{
#ifdef PRISM_HAVE_MPI
    if (mpi != NULL)
        return propagate_mpi_finish(mpi, rc, sum, print, setup);
#endif
    (void)setup;
    (void)mpi;
    (void)sum;
    *print = rc == PROPAGATE_OK;
    return rc;
}

/* Upload, run, summarise (the contexts are being made by `early`). */
static int simulate(const propagate_options *o, prism_scene *scene, propagate_run_info *run,
                    propagate_mpi *mpi, early_contexts *early)
{
    npy_reader in;
    memset(&in, 0, sizeof in);
    char err[1024];
    if (o->photons && propagate_open_photons(o, &in, err, sizeof err)) {
        fprintf(stderr, "prism-propagate: %s\n", err);
        npy_reader_close(&in);
        bool print, ok;
        created(early);
        close_contexts(run, &ok);
        return finish(mpi, PROPAGATE_FAILED, NULL, &print, 0.0);
    }
    const uint64_t count = o->count ? o->count : o->photons ? in.rows : PROPAGATE_DEFAULT_COUNT;
    const prism_photon_source src = propagate_source(o, scene, count);
    run->photons = &in;
    run->source = &src;
    run->begin = 0;
    run->end = count;
#ifdef PRISM_HAVE_MPI
    if (mpi != NULL)
        propagate_mpi_range(mpi, count, run);
#endif
    propagate_summary sum;
    bool print = false;
    int rc = created(early);
    if (rc == PROPAGATE_OK)
        rc = upload_all(o, scene, run);
    run->setup_seconds = tool_now() - run->started;
    if (rc == PROPAGATE_OK && propagate_summary_init(&sum, scene) == 0) {
        rc = finish(mpi, propagate_run(run, &sum), &sum, &print, run->setup_seconds);
        if (print && o->json)
            propagate_summary_json(&sum, run);
        else if (print)
            propagate_summary_print(&sum, run);
        propagate_summary_free(&sum);
    } else {
        rc = finish(mpi, rc == PROPAGATE_OK ? PROPAGATE_FAILED : rc, NULL, &print,
                    run->setup_seconds);
    }
    bool ok = true;
    close_contexts(run, &ok);
    if (!ok && rc == PROPAGATE_OK)
        rc = PROPAGATE_FAILED;
    npy_reader_close(&in);
    return rc;
}

int main(int argc, char **argv)
{
    const double started = tool_now();
    propagate_options o;
    char err[512];
    if (propagate_options_parse(argc, argv, &o, err, sizeof err)) {
        fprintf(stderr, "prism-propagate: %s\n", err);
        return PROPAGATE_USAGE;
    }
    if (o.help) {
        propagate_options_usage(stdout);
        return PROPAGATE_OK;
    }
    npy_remove_temporaries_on_signals();
    propagate_mpi *mpi = NULL;
#ifdef PRISM_HAVE_MPI
    int mpi_rc;
    mpi = propagate_mpi_begin(&o, &argc, &argv, &mpi_rc);
    if (mpi_rc != PROPAGATE_OK)
        return mpi_rc;
    if (mpi != NULL && o.validate) {
        fprintf(stderr, "prism-propagate: --validate runs in one process: not under mpirun\n");
        return propagate_mpi_end(mpi, PROPAGATE_USAGE);
    }
#endif
    propagate_run_info run = {.opt = &o, .started = started};
    early_contexts early = {.rc = PROPAGATE_OK};
    if (!o.validate)
        create_early(&early, &o, &run);
    prism_scene *scene = load(&o, &run.load_seconds);
    int rc = PROPAGATE_FAILED;
    if (scene != NULL) {
        run.scene = scene;
        run.no_rindex = no_rindex(scene);
        if (run.no_rindex && !(mpi != NULL && o.quiet))
            fprintf(stderr, "prism-propagate: %s: no RINDEX anywhere: every material is "
                    "vacuum\n", o.file);
        rc = o.validate ? propagate_validate(&o, scene) : simulate(&o, scene, &run, mpi, &early);
        prism_scene_free(scene);
    } else if (!o.validate) {
        bool ok;
        created(&early);
        close_contexts(&run, &ok);
    }
#ifdef PRISM_HAVE_MPI
    if (mpi != NULL)
        rc = propagate_mpi_end(mpi, rc);
#endif
    return rc;
}
