/* prism-propagate: optical photons through a detector, kept as NumPy
 * files. Loads the detector, uploads it to the chosen backend, runs the
 * photons in batches (propagate_batches.c) and prints the summary
 * (propagate_summary.c); --validate compares CUDA with the host backend
 * instead (propagate_validate.c). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prism/device/genstep.h"
#include "progress.h"
#include "propagate_cursor.h"
#include "propagate_ranks.h"
#include "propagate_tool.h"

static prism_scene *load(const propagate_options *o, double *seconds)
{
    char error[1024] = "";
    tool_progress bar;
    tool_progress_begin(&bar, "prism-propagate", "loading", NULL, !o->quiet);
    prism_load_desc desc = {.progress = tool_progress_update,
                            .progress_user = &bar,
                            .error = error,
                            .error_size = sizeof error,
                            .log = tool_log_engine,
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
                                   const char *name, tool_log *log)
{
    desc.log = tool_log_engine;
    desc.log_user = log;
    desc.log_level = PRISM_LOG_WARNING;
    tool_env_context(&desc);
    prism_context *ctx = NULL;
    prism_result r = prism_context_create(&desc, &ctx);
    if (r != PRISM_SUCCESS) {
        fprintf(stderr, "prism-propagate: %s backend%s%s: %s\n", prism_backend_name(desc.backend),
                name[0] ? ", " : "", name, log->error[0] ? log->error : prism_result_string(r));
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
        run->logs[i].print_errors = true; /* what was left alive, if anything */
        if (prism_context_destroy(run->contexts[i]) != PRISM_SUCCESS)
            *ok = false;
    }
    run->contexts_n = 0;
}

/* The contexts asked for (o's list, or one). The list is read and the first
 * context made on a thread of its own while the detector loads (starting
 * CUDA takes about as long, and neither needs the other); the others join the run on the stream's
 * threads (prism_propagate_stream's join), so a device's start and upload
 * overlap the first device's work instead of delaying it. */
typedef struct startup {
    const propagate_options *o;
    propagate_run_info *run;
    propagate_group *group; /* the processes a run forked: their CUDA starts take turns */
    const prism_scene *scene;
    prism_context_desc descs[PROPAGATE_MAX_CONTEXTS];
    char names[PROPAGATE_MAX_CONTEXTS][32];
    pthread_t thread;
    bool started, ran;
    /* the other devices' CUDA start, at once with the first's */
    pthread_t warm[PROPAGATE_MAX_CONTEXTS];
    bool warming[PROPAGATE_MAX_CONTEXTS];
    int rc;
} startup;

/* Contexts 1.. join the run on its threads once the first device works.
 * Their devices' CUDA start (most of a context's making) is begun now,
 * with the first's, while the detector loads. The driver makes contexts
 * one at a time across the machine and holds other CUDA calls meanwhile
 * (on a host of two GPUs, two started at once both took 0.55 s, one alone
 * 0.23-0.43 s), so this saves no start time: warming the others after the
 * first context instead slowed its upload from 0.02 to 0.12-0.22 s and
 * gained nothing. It keeps the first device's work from being interrupted
 * by the others' start. */
typedef struct warm_arg {
    startup *s;
    size_t i;
} warm_arg;

static void *warm_device(void *arg)
{
    const warm_arg *w = arg;
    prism_context_prewarm(&w->s->descs[w->i]); /* its failure: the join's create says why */
    return NULL;
}

static void warm_others(startup *s, size_t n)
{
    static warm_arg args[PROPAGATE_MAX_CONTEXTS];
    for (size_t i = 1; i < n; i++) {
        bool seen = false; /* a device listed twice (--lanes) is warmed once */
        for (size_t j = 0; j < i && !seen; j++)
            seen = strcmp(s->names[i], s->names[j]) == 0;
        if (seen)
            continue;
        args[i] = (warm_arg){s, i};
        s->warming[i] = pthread_create(&s->warm[i], NULL, warm_device, &args[i]) == 0;
    }
}

static void warm_join(startup *s)
{
    for (size_t i = 1; i < PROPAGATE_MAX_CONTEXTS; i++)
        if (s->warming[i]) {
            pthread_join(s->warm[i], NULL);
            s->warming[i] = false;
        }
}

/* On the startup thread: the device list (asking CUDA for its devices
 * starts the driver, the larger part of CUDA's start), the other devices
 * warmed, and the first context made, all while the detector loads. */
static void *start_devices(void *arg)
{
    startup *s = arg;
    if (s->o->engine.backend != PRISM_BACKEND_HOST)
        propagate_node_turn(s->group);
    const double t0 = tool_now();
    size_t n = 0;
    s->rc = propagate_device_descs(s->o, s->descs, s->names, &n);
    if (s->rc == PROPAGATE_OK) {
        s->run->contexts_n = n;
        if (s->o->engine.backend != PRISM_BACKEND_HOST)
            warm_others(s, n);
        s->run->contexts[0] = open_context(s->o, s->descs[0], s->names[0], &s->run->logs[0]);
        s->rc = s->run->contexts[0] != NULL ? PROPAGATE_OK : PROPAGATE_FAILED;
    }
    s->run->context_seconds = tool_now() - t0;
    return NULL;
}

static void start_early(startup *s, const propagate_options *o, propagate_run_info *run,
                        propagate_group *group)
{
    *s = (startup){.o = o, .run = run, .group = group};
    s->started = pthread_create(&s->thread, NULL, start_devices, s) == 0;
}

/* The next forked rank's CUDA start, once this rank's device holds the
 * geometry (or this rank will not run). Two H100s, 10^9 photons over two
 * ranks: letting it go after the upload rather than after the context
 * took the run from 4.46-4.56 s to 4.39 s, and starting both at once gave
 * 4.54-4.57 s: a CUDA start holds the other device's upload, and this
 * way the first rank works from 0.35 s on, where the second, starting
 * beside a working device, is ready at 0.76 s. Starting every rank's
 * driver (cuInit) at once and only the context in turn held the first
 * rank back instead (0.59-0.66 s) and the second no sooner: 4.53-4.76 s
 * against 4.37-4.53 s. Side by side later, letting it go after this
 * rank's cuInit gave 4.55 / 4.55 s and after its context 4.51 / 4.50 s,
 * against 4.41 / 4.42 s after its upload: the next rank's cuInit holds
 * this rank's context and upload up to 0.27 s. */
static void pass_turn(startup *s)
{
    propagate_node_turned(s->group);
}

/* The first context made, with the geometry uploaded to it. */
static int first_ready(startup *s, const prism_scene *scene)
{
    if (s->started)
        pthread_join(s->thread, NULL);
    else if (!s->ran && s->o != NULL) /* no thread could be made */
        start_devices(s);
    s->started = false;
    s->ran = true;
    warm_join(s);
    s->scene = scene;
    propagate_run_info *run = s->run;
    run->ctx = run->contexts[0];
    if (s->rc != PROPAGATE_OK || scene == NULL) {
        pass_turn(s);
        return s->rc;
    }
    run->geometries[0] = upload(s->o, run->contexts[0], scene, &run->upload_each[0]);
    run->geometry = run->geometries[0];
    pass_turn(s);
    return run->geometry != NULL ? PROPAGATE_OK : PROPAGATE_FAILED;
}

/* Context i (> 0), made and given the geometry on a thread of the run. */
static prism_result join_context(void *user, size_t i, prism_context **ctx,
                                 const prism_geometry **geometry)
{
    startup *s = user;
    propagate_run_info *run = s->run;
    run->contexts[i] = open_context(s->o, s->descs[i], s->names[i], &run->logs[i]);
    if (run->contexts[i] == NULL)
        return PRISM_ERROR_DEVICE_UNAVAILABLE;
    prism_geometry *g = upload(s->o, run->contexts[i], s->scene, &run->upload_each[i]);
    if (g == NULL)
        return PRISM_ERROR_INVALID_ARGUMENT;
    run->geometries[i] = g;
    *ctx = run->contexts[i];
    *geometry = g;
    return PRISM_SUCCESS;
}

/* After the run: across ranks they agree and rank 0 gathers; *print on
 * the process that prints the summary. */
static int finish(propagate_ranks *ranks, int rc, propagate_summary *sum, bool *print, double setup)
{
    if (ranks != NULL)
        return propagate_ranks_finish(ranks, rc, sum, print, setup);
    *print = rc == PROPAGATE_OK;
    return rc;
}

/* The muon's gensteps through the first context's geometry (uploaded). */
static int muon_gensteps(const propagate_options *o, propagate_run_info *run, prism_gensteps *g)
{
    if (prism_gensteps_muon(run->geometry, &o->muon_desc, g) != PRISM_SUCCESS) {
        fprintf(stderr, "prism-propagate: muon: %s\n", prism_context_last_error(run->ctx));
        return PROPAGATE_FAILED;
    }
    if (g->photons == 0) {
        fprintf(stderr,
                "prism-propagate: the muon made no photons: its track met %zu material "
                "segment%s (%.3f m), none with beta n > 1 in 200-800 nm or a scintillation "
                "yield\n",
                g->segments, g->segments == 1 ? "" : "s", g->length);
        return PROPAGATE_FAILED;
    }
    return PROPAGATE_OK;
}

/* What the gensteps hold, for the summary. */
static void count_gensteps(propagate_run_info *run, const float *data, size_t count)
{
    const prism_genstep *g = (const prism_genstep *)(const void *)data;
    run->genstep_count = count;
    for (size_t k = 0; k < count; k++) {
        run->genstep_photons += g[k].photons;
        if (g[k].gentype == PRISM_GENSTEP_CERENKOV)
            run->cerenkov_photons += g[k].photons;
        else if (g[k].gentype == PRISM_GENSTEP_SCINTILLATION)
            run->scintillation_photons += g[k].photons;
    }
}

/* Upload, run, summarise (the first context is being made by `early`). */
static int simulate(const propagate_options *o, prism_scene *scene, propagate_run_info *run,
                    propagate_ranks *ranks, startup *early)
{
    npy_reader in;
    memset(&in, 0, sizeof in);
    char err[1024];
    float *gensteps = NULL; /* --gensteps' rows, or the muon's */
    size_t genstep_count = 0;
    uint64_t genstep_photons = 0;
    prism_gensteps muon;
    memset(&muon, 0, sizeof muon);
    if ((o->photons && propagate_open_photons(o, &in, err, sizeof err)) ||
        (o->gensteps && propagate_read_gensteps(o->gensteps, &gensteps, &genstep_count,
                                                &genstep_photons, err, sizeof err))) {
        fprintf(stderr, "prism-propagate: %s\n", err);
        npy_reader_close(&in);
        bool print, ok;
        first_ready(early, NULL);
        close_contexts(run, &ok);
        return finish(ranks, PROPAGATE_FAILED, NULL, &print, 0.0);
    }
    int rc = PROPAGATE_OK;
    bool ready = false; /* the first context made and the detector uploaded */
    if (o->muon) {      /* the track is traced through the uploaded geometry */
        rc = first_ready(early, scene);
        ready = true;
        if (rc == PROPAGATE_OK && (rc = muon_gensteps(o, run, &muon)) == PROPAGATE_OK) {
            gensteps = muon.data;
            genstep_count = muon.count;
            genstep_photons = muon.photons;
        }
    }
    if (rc == PROPAGATE_OK && gensteps != NULL) {
        count_gensteps(run, gensteps, genstep_count);
        if (o->count > genstep_photons) {
            fprintf(stderr, "prism-propagate: --count %llu, but the gensteps hold %llu photons\n",
                    (unsigned long long)o->count, (unsigned long long)genstep_photons);
            rc = PROPAGATE_FAILED;
        }
    }
    /* every rank has the same gensteps; one file, written by rank 0 */
    if (rc == PROPAGATE_OK && o->save_gensteps &&
        (ranks == NULL || propagate_ranks_rank(ranks) == 0) &&
        propagate_write_gensteps(o->save_gensteps, gensteps, genstep_count, err, sizeof err)) {
        fprintf(stderr, "prism-propagate: %s\n", err);
        rc = PROPAGATE_FAILED;
    }
    const uint64_t count = o->count           ? o->count
                           : o->photons       ? in.rows
                           : gensteps != NULL ? genstep_photons
                                              : PROPAGATE_DEFAULT_COUNT;
    prism_photon_source src = propagate_source(o, scene, count);
    src.gensteps = gensteps;
    src.genstep_count = genstep_count;
    run->photons = &in;
    run->source = &src;
    run->count = count;
    if (ranks != NULL && propagate_ranks_share(ranks, count, run) != PROPAGATE_OK)
        rc = PROPAGATE_FAILED;
    propagate_summary sum;
    bool print = false;
    if (!ready) {
        const int up = first_ready(early, rc == PROPAGATE_OK ? scene : NULL);
        rc = rc == PROPAGATE_OK ? up : rc;
    }
    run->join = join_context;
    run->join_user = early;
    run->setup_seconds = tool_now() - run->started;
    if (rc == PROPAGATE_OK && propagate_summary_init(&sum, scene) == 0) {
        rc = propagate_run(run, &sum);
        for (size_t i = 0; i < run->contexts_n; i++) /* the joiners' uploads too */
            if (run->upload_each[i] > run->upload_seconds)
                run->upload_seconds = run->upload_each[i];
        rc = finish(ranks, rc, &sum, &print, run->setup_seconds);
        if (print && o->json)
            propagate_summary_json(&sum, run);
        else if (print)
            propagate_summary_print(&sum, run);
        propagate_summary_free(&sum);
    } else {
        rc = finish(ranks, rc == PROPAGATE_OK ? PROPAGATE_FAILED : rc, NULL, &print,
                    run->setup_seconds);
    }
    bool ok = true;
    close_contexts(run, &ok);
    if (!ok && rc == PROPAGATE_OK)
        rc = PROPAGATE_FAILED;
    npy_reader_close(&in);
    if (o->muon)
        prism_gensteps_free(&muon);
    else
        free(gensteps);
    return rc;
}

/* The outputs, before anything is loaded or started (across ranks, rank 0
 * checks the files they will write into: propagate_ranks_check_outputs). */
static int check_outputs(const propagate_options *o)
{
    char err[1024];
    const char *const paths[3] = {o->hits, o->out, o->records};
    if (propagate_check_outputs(o, paths, err, sizeof err) == 0)
        return PROPAGATE_OK;
    fprintf(stderr, "prism-propagate: %s\n", err);
    return PROPAGATE_FAILED;
}

/* Under Open MPI's mpirun: this rank's group, made from the launcher's
 * variables before MPI starts, so that its first context can be made
 * while MPI_Init runs (a quarter of a second each on the test machine);
 * its node-local rank and o->quiet known from it. */
static propagate_group *mpi_early(propagate_options *o, char **argv)
{
    propagate_group *g = o->validate ? NULL : propagate_group_mpi_early(argv, o->quiet);
    if (g != NULL) {
        o->local_rank = g->local_rank;
        o->quiet = o->quiet || g->rank > 0;
    }
    return g;
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
    npy_remove_temporaries_on_signals("prism-propagate");
    propagate_run_info run = {.opt = &o, .started = started};
    startup early = {.rc = PROPAGATE_OK};
    /* the rank's first context made before MPI starts */
    propagate_group *group = mpi_early(&o, argv);
    const bool mpi_pending = group != NULL; /* MPI_Init still to come */
    bool begun = mpi_pending;
    if (begun && o.processes > 1) {
        fprintf(stderr, "prism-propagate: --processes: under mpirun each rank is one process; "
                        "ask mpirun for more ranks instead\n");
        group->ops->end(group, PROPAGATE_USAGE);
        return PROPAGATE_USAGE;
    }
    /* a list of several CUDA devices: a process each, unless --processes
     * says (two H100s, 10^9 photons: 4.39 s in two processes against
     * 4.54-4.59 s in one, whose CUDA start brings up both devices before
     * its first batch, 0.23-0.36 s against 0.12-0.22 s for one) */
    if (!begun && o.processes == 0) {
        o.processes = propagate_auto_processes(&o);
        o.processes_auto = o.processes > 1;
    }
    /* --processes (refused with --validate): forked before anything starts
     * a thread or CUDA */
    if (!begun && o.processes > 1) {
        int status = PROPAGATE_FAILED;
        if (!propagate_group_fork(o.processes, &group, &status))
            return status; /* the parent, after its ranks */
        o.local_rank = group->local_rank;
        o.quiet = o.quiet || group->rank > 0;
        begun = true;
    }
    propagate_visible_devices(&o); /* a rank's node-local rank known: before CUDA starts */
    propagate_cuda_connections(&o);
    if (begun)
        start_early(&early, &o, &run, group);
    int bad = PROPAGATE_OK;
    propagate_group *unstarted = NULL; /* an early group whose MPI_Init failed */
    if (group == NULL || mpi_pending) {
        bool failed = false;
        propagate_group *made = propagate_group_mpi(group, &argc, &argv, &failed);
        bad = failed ? PROPAGATE_FAILED : PROPAGATE_OK;
        unstarted = failed ? group : NULL;
        group = made;
    }
    propagate_ranks *ranks = group != NULL ? propagate_ranks_begin(&o, group) : NULL;
    if (group != NULL && ranks == NULL)
        bad = PROPAGATE_FAILED;
    if (bad == PROPAGATE_OK && ranks != NULL && o.validate) {
        fprintf(stderr, "prism-propagate: --validate runs in one process: not under mpirun\n");
        bad = PROPAGATE_USAGE;
    }
    if (bad == PROPAGATE_OK && ranks != NULL &&
        propagate_ranks_check_outputs(ranks) != PROPAGATE_OK)
        bad = PROPAGATE_FAILED;
    if (bad == PROPAGATE_OK && ranks == NULL && check_outputs(&o) != PROPAGATE_OK)
        bad = PROPAGATE_FAILED;
    if (bad != PROPAGATE_OK) {
        if (begun) {
            bool ok;
            first_ready(&early, NULL);
            close_contexts(&run, &ok);
        }
        if (unstarted != NULL) /* after the startup thread, which takes its turns */
            unstarted->ops->end(unstarted, bad);
        return ranks != NULL ? propagate_ranks_end(ranks, bad) : bad;
    }
    if (!begun && !o.validate)
        start_early(&early, &o, &run, NULL);
    prism_scene *scene = load(&o, &run.load_seconds);
    int rc = PROPAGATE_FAILED;
    if (scene != NULL) {
        run.scene = scene;
        run.no_rindex = no_rindex(scene);
        if (run.no_rindex && !(ranks != NULL && o.quiet))
            fprintf(stderr,
                    "prism-propagate: %s: no RINDEX anywhere: every material is "
                    "vacuum\n",
                    o.file);
        rc = o.validate ? propagate_validate(&o, scene) : simulate(&o, scene, &run, ranks, &early);
        prism_scene_free(scene);
    } else if (!o.validate) {
        bool ok;
        first_ready(&early, NULL);
        close_contexts(&run, &ok);
    }
    if (ranks != NULL)
        rc = propagate_ranks_end(ranks, rc);
    return rc;
}
