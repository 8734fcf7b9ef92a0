/* prism_propagate_multi: one propagation across several contexts. A
 * thread per context takes batches from a shared cursor until none is
 * left (work stealing of batches), each batch a plain prism_propagate with
 * desc.first_photon at its start, writing straight into its place in the
 * host outputs: the result is the single call's, whatever the split. */
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "engine/context_internal.h"
#include "engine/upload/geometry_internal.h"
#include "gensteps_source.h"
#include "propagate_internal.h"

#define MULTI_MAX_CONTEXTS 64
/* Batches below this are not worth a call (a call's fixed cost on CUDA is
 * a few launches and allocations); the last batch of a run may be less. */
#define MULTI_MIN_BATCH ((size_t)1 << 16)
/* The first batch of each context, before its speed is known, is this
 * fraction of its fair share; later ones are sized by measured speed. */
#define MULTI_FIRST_FRACTION 4

typedef struct multi_run multi_run;

typedef struct multi_worker {
    multi_run *run;
    prism_context *ctx;
    const prism_geometry *geometry;
    size_t limit; /* photons a call */
    double rate;  /* photons per second so far, 0 = unknown */
    prism_propagate_share share;
    prism_propagate_stats stats; /* sums over its calls */
    prism_result result;
    pthread_t thread;
    bool started;
} multi_worker;

struct multi_run {
    pthread_mutex_t lock;
    size_t next, total; /* the cursor over the call's photons */
    bool failed;
    size_t n;
    multi_worker *workers;
    const prism_photon_source *source;
    const prism_propagate_desc *desc;
    const prism_propagate_outputs *outputs;
};

/* This worker's next batch: a share of what is left in proportion to its
 * speed among the workers' (unknown speeds counted as the mean of the
 * known), halved so that later batches can even out what this one gets
 * wrong; between MULTI_MIN_BATCH and the worker's limit. 0 when done. */
static size_t take(multi_run *run, multi_worker *w, size_t *first)
{
    pthread_mutex_lock(&run->lock);
    size_t left = run->failed ? 0 : run->total - run->next, count = 0;
    if (left > 0) {
        double known = 0.0, sum = 0.0;
        size_t nknown = 0;
        for (size_t i = 0; i < run->n; i++)
            if (run->workers[i].rate > 0.0) {
                known += run->workers[i].rate;
                nknown++;
            }
        double want;
        if (w->rate > 0.0) {
            const double mean = known / (double)nknown;
            sum = known + mean * (double)(run->n - nknown);
            want = (double)left * (w->rate / sum) / 2.0;
        } else {
            want = (double)left / (double)(run->n * MULTI_FIRST_FRACTION);
        }
        count = want < (double)MULTI_MIN_BATCH ? MULTI_MIN_BATCH : (size_t)want;
        if (count > w->limit)
            count = w->limit;
        if (count > left)
            count = left;
        *first = run->next;
        run->next += count;
    }
    pthread_mutex_unlock(&run->lock);
    return count;
}

static prism_result one_batch(multi_worker *w, size_t first, size_t count)
{
    const multi_run *run = w->run;
    prism_photon_source src = *run->source;
    src.count = count;
    if (src.kind == PRISM_SOURCE_PHOTONS)
        src.photons += first;
    prism_propagate_desc d = *run->desc;
    d.first_photon += first;
    prism_propagate_outputs out = *run->outputs;
    if (out.photons.host != NULL)
        out.photons.host = (prism_photon *)out.photons.host + first;
    if (out.records.host != NULL)
        out.records.host = (prism_step_record *)out.records.host + first * d.record_steps;
    prism_propagate_stats st;
    prism_result r = prism_propagate(w->ctx, w->geometry, &src, &d, &out, &st);
    if (r == PRISM_SUCCESS) {
        prism__stats_add(&w->stats, &st);
        w->share.photons += count;
        w->share.batches++;
        w->share.seconds += st.seconds;
    }
    return r;
}

static void *work(void *arg)
{
    multi_worker *w = arg;
    multi_run *run = w->run;
    size_t first, count;
    while ((count = take(run, w, &first)) > 0) {
        w->result = one_batch(w, first, count);
        pthread_mutex_lock(&run->lock);
        if (w->result != PRISM_SUCCESS)
            run->failed = true;
        else if (w->share.seconds > 0.0)
            w->rate = (double)w->share.photons / w->share.seconds;
        pthread_mutex_unlock(&run->lock);
        if (w->result != PRISM_SUCCESS)
            break;
    }
    return NULL;
}

prism_result prism__multi_check(const char *what, prism_context *const *ctxs,
                                const prism_geometry *const *gs, size_t n,
                                const prism_photon_source *source, const prism_propagate_desc *desc,
                                bool late)
{
    prism_context *c0 = ctxs != NULL ? ctxs[0] : NULL;
    if (ctxs == NULL || gs == NULL || n == 0 || n > MULTI_MAX_CONTEXTS || source == NULL)
        return prism__error(c0, PRISM_ERROR_INVALID_ARGUMENT,
                            "%s: NULL contexts, geometries, source or outputs, or %zu contexts "
                            "(1 to %d)",
                            what, n, MULTI_MAX_CONTEXTS);
    for (size_t i = 0; i < n; i++) {
        if (late && i > 0 && ctxs[i] == NULL)
            continue;
        if (ctxs[i] == NULL || gs[i] == NULL || prism__geometry_context(gs[i]) != ctxs[i])
            return prism__error(c0, PRISM_ERROR_INVALID_ARGUMENT,
                                "%s: context %zu: NULL, or its geometry is NULL or another "
                                "context's",
                                what, i);
        for (size_t j = 0; j < i; j++)
            if (ctxs[j] == ctxs[i])
                return prism__error(c0, PRISM_ERROR_INVALID_ARGUMENT,
                                    "%s: contexts %zu and %zu are the same (one context per "
                                    "thread: create one for each)",
                                    what, j, i);
    }
    if (source->count == 0)
        return prism__error(c0, PRISM_ERROR_INVALID_ARGUMENT, "%s: photon count 0", what);
    if (desc->first_photon > PRISM_PROPAGATE_MAX_PHOTON_INDEX ||
        source->count > PRISM_PROPAGATE_MAX_PHOTON_INDEX - desc->first_photon)
        return prism__error(c0, PRISM_ERROR_INVALID_ARGUMENT,
                            "%s: photons %llu + %zu go beyond index 2^56", what,
                            (unsigned long long)desc->first_photon, source->count);
    return PRISM_SUCCESS;
}

static prism_result check(prism_context *const *ctxs, const prism_geometry *const *gs, size_t n,
                          const prism_photon_source *source, const prism_propagate_desc *desc,
                          const prism_propagate_outputs *outputs)
{
    prism_context *c0 = ctxs != NULL ? ctxs[0] : NULL;
    if (outputs == NULL)
        return prism__error(c0, PRISM_ERROR_INVALID_ARGUMENT, "propagate_multi: NULL outputs");
    prism_result r = prism__multi_check("propagate_multi", ctxs, gs, n, source, desc, false);
    if (r != PRISM_SUCCESS)
        return r;
    if (outputs->photons.kind != PRISM_TARGET_HOST || outputs->records.kind != PRISM_TARGET_HOST)
        return prism__error(c0, PRISM_ERROR_INVALID_ARGUMENT,
                            "propagate_multi: outputs must be host memory (kind HOST)");
    if (outputs->hits.kind != PRISM_TARGET_HOST || outputs->hits.host != NULL ||
        outputs->summary != NULL)
        return prism__error(c0, PRISM_ERROR_INVALID_ARGUMENT,
                            "propagate_multi: hits and summary outputs are "
                            "prism_propagate_stream's");
    return PRISM_SUCCESS;
}

prism_result prism__multi_limit(prism_context *const *ctxs, const prism_geometry *const *gs,
                                size_t n, size_t i, prism_source_kind kind,
                                const prism_propagate_desc *desc, size_t *limit)
{
    size_t fits = 0;
    prism_result r = prism_propagate_batch_limit(ctxs[i], gs[i], kind, desc, &fits);
    if (r != PRISM_SUCCESS)
        return r;
    size_t sharing = 0;
    for (size_t j = 0; j < n; j++)
        sharing += ctxs[j] != NULL && prism_context_backend(ctxs[j]) == PRISM_BACKEND_CUDA &&
                   prism_context_backend(ctxs[i]) == PRISM_BACKEND_CUDA &&
                   prism_context_device(ctxs[j])->index == prism_context_device(ctxs[i])->index;
    *limit = sharing > 1 ? fits / sharing : fits;
    if (*limit == 0)
        *limit = 1;
    return PRISM_SUCCESS;
}

/* Each context's photons a call: its batch limit, shared by the contexts
 * of one CUDA device (they draw on the same free memory). */
static prism_result limits(multi_run *run, prism_context *const *ctxs, size_t *failed)
{
    for (size_t i = 0; i < run->n; i++) {
        const prism_geometry *gs[MULTI_MAX_CONTEXTS];
        for (size_t j = 0; j < run->n; j++)
            gs[j] = run->workers[j].geometry;
        prism_result r = prism__multi_limit(ctxs, gs, run->n, i, run->source->kind, run->desc,
                                            &run->workers[i].limit);
        if (r != PRISM_SUCCESS) {
            *failed = i;
            return r;
        }
    }
    return PRISM_SUCCESS;
}

static prism_result run_workers(multi_run *run, size_t *failed)
{
    for (size_t i = 1; i < run->n; i++)
        run->workers[i].started = pthread_create(&run->workers[i].thread, NULL, work,
                                                 &run->workers[i]) == 0;
    /* A thread that could not start leaves its share to the others. */
    work(&run->workers[0]);
    for (size_t i = 1; i < run->n; i++)
        if (run->workers[i].started)
            pthread_join(run->workers[i].thread, NULL);
    for (size_t i = 0; i < run->n; i++)
        if (run->workers[i].result != PRISM_SUCCESS) {
            *failed = i;
            return run->workers[i].result;
        }
    return PRISM_SUCCESS;
}

void prism__stats_add(prism_propagate_stats *sum, const prism_propagate_stats *st)
{
    sum->steps += st->steps;
    sum->launches += st->launches;
    sum->history_or |= st->history_or;
    sum->detected += st->detected;
    sum->step_limited += st->step_limited;
    sum->hits += st->hits;
    sum->generate_seconds += st->generate_seconds;
    sum->tail_seconds += st->tail_seconds;
    sum->tail_launches += st->tail_launches;
    sum->tally_seconds += st->tally_seconds;
    sum->hits_seconds += st->hits_seconds;
    if (st->time_max > sum->time_max)
        sum->time_max = st->time_max;
}

prism_result prism__multi_failed(const char *what, prism_context *const *contexts, size_t failed,
                                 prism_result r)
{
    char why[1024];
    snprintf(why, sizeof why, "%s", prism_context_last_error(contexts[failed]));
    const prism_device_info *dev = prism_context_device(contexts[failed]);
    char where[64] = "host";
    if (prism_context_backend(contexts[failed]) == PRISM_BACKEND_CUDA)
        snprintf(where, sizeof where, "cuda:%d", dev->index);
    return prism__error(contexts[0], r, "%s: context %zu (%s): %s", what, failed, where, why);
}

prism_result prism_propagate_multi(prism_context *const *contexts,
                                   const prism_geometry *const *geometries, size_t n,
                                   const prism_photon_source *source,
                                   const prism_propagate_desc *desc,
                                   const prism_propagate_outputs *outputs,
                                   prism_propagate_stats *stats, prism_propagate_share *shares)
{
    static const prism_propagate_desc zero_desc;
    const double t0 = omp_get_wtime();
    if (desc == NULL)
        desc = &zero_desc;
    /* gensteps: the count resolved and each checked once, not per batch */
    prism_photon_source resolved;
    prism_result r = prism__gensteps_run_sources(contexts, geometries, n, source,
                                                 desc->first_photon, &resolved, "propagate_multi");
    if (r != PRISM_SUCCESS)
        return r;
    if (source != NULL)
        source = &resolved;
    r = check(contexts, geometries, n, source, desc, outputs);
    if (r != PRISM_SUCCESS)
        return r;
    multi_worker workers[MULTI_MAX_CONTEXTS];
    memset(workers, 0, n * sizeof *workers);
    multi_run run = {.total = source->count,
                     .n = n,
                     .workers = workers,
                     .source = source,
                     .desc = desc,
                     .outputs = outputs};
    for (size_t i = 0; i < n; i++)
        workers[i] = (multi_worker){.run = &run, .ctx = contexts[i], .geometry = geometries[i]};
    size_t failed = 0;
    r = limits(&run, contexts, &failed);
    if (r == PRISM_SUCCESS) {
        pthread_mutex_init(&run.lock, NULL);
        r = run_workers(&run, &failed);
        pthread_mutex_destroy(&run.lock);
    }
    if (r != PRISM_SUCCESS)
        return prism__multi_failed("propagate_multi", contexts, failed, r);
    prism_propagate_stats sum = {0};
    for (size_t i = 0; i < n; i++) {
        prism__stats_add(&sum, &workers[i].stats);
        if (shares != NULL)
            shares[i] = workers[i].share;
    }
    sum.seconds = omp_get_wtime() - t0;
    if (stats != NULL)
        *stats = sum;
    return PRISM_SUCCESS;
}
