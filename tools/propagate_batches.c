/* prism-propagate's batch loop: photons read (--photons) or generated a
 * batch at a time, propagated with desc.first_photon at the batch's start
 * (so any batch size gives the same photons), the final photons, hits and
 * records appended to their .npy files, counted into the summary. Host
 * memory holds one batch; the files are committed only after the last. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "cli.h"
#include "prism/memory.h"
#include "progress.h"
#include "propagate_tool.h"

prism_photon_source propagate_source(const propagate_options *o, const prism_scene *scene,
                                     uint64_t count)
{
    prism_photon_source src = o->engine.source;
    src.count = (size_t)count;
    if (o->photons != NULL)
        src.kind = PRISM_SOURCE_PHOTONS;
    else if (!o->engine.source_given)
        for (int i = 0; i < 3; i++)
            src.position[i] = 0.5f * (scene->bbox_min[i] + scene->bbox_max[i]);
    return src;
}

int propagate_open_photons(const propagate_options *o, npy_reader *in, char *err, size_t size)
{
    const uint64_t dims[2] = {4, 4};
    if (npy_reader_open(in, o->photons, dims, 2))
        return tool_fail(err, size, "%s", in->error);
    if (in->rows == 0)
        return tool_fail(err, size, "%s: no photons in it", o->photons);
    if (o->count > in->rows)
        return tool_fail(err, size, "--count %llu, but %s holds %llu photons",
                         (unsigned long long)o->count, o->photons, (unsigned long long)in->rows);
    return 0;
}

int propagate_read_photons(npy_reader *in, prism_photon *photons, size_t n, uint64_t first,
                           char *err, size_t size)
{
    if (npy_reader_read(in, photons, n))
        return tool_fail(err, size, "%s", in->error);
    for (size_t i = 0; i < n; i++) {
        const float *p = photons[i].pos;
        if (!isfinite(p[0]) || !isfinite(p[1]) || !isfinite(p[2]))
            return tool_fail(err, size, "%s: photon %llu: position (%g, %g, %g) is not finite; "
                             "expected metres", in->path, (unsigned long long)(first + i),
                             (double)p[0], (double)p[1], (double)p[2]);
    }
    return 0;
}

typedef struct outputs {
    npy_writer hits, out, records;
    bool open[3];
} outputs;

static int open_outputs(const propagate_options *o, uint32_t k, outputs *w, char *err,
                        size_t size)
{
    const uint64_t photon[2] = {4, 4}, record[2] = {k, 8};
    npy_writer *ws[3] = {&w->hits, &w->out, &w->records};
    const char *paths[3] = {o->hits, o->out, o->records};
    for (int i = 0; i < 3; i++) {
        if (paths[i] == NULL)
            continue;
        if (npy_writer_open(ws[i], paths[i], i == 2 ? record : photon, 2))
            return tool_fail(err, size, "%s", ws[i]->error);
        w->open[i] = true;
    }
    return 0;
}

static void abort_outputs(outputs *w)
{
    npy_writer *ws[3] = {&w->hits, &w->out, &w->records};
    for (int i = 0; i < 3; i++)
        if (w->open[i])
            npy_writer_abort(ws[i]);
}

/* Every file on disk first, then the renames: a failure before the last
 * rename leaves none of them. */
static int commit_outputs(outputs *w, char *err, size_t size)
{
    npy_writer *ws[3] = {&w->hits, &w->out, &w->records};
    for (int i = 0; i < 3; i++)
        if (w->open[i] && npy_writer_finish(ws[i]))
            return tool_fail(err, size, "%s", ws[i]->error);
    for (int i = 0; i < 3; i++)
        if (w->open[i] && npy_writer_commit(ws[i]))
            return tool_fail(err, size, "%s", ws[i]->error);
    return 0;
}

/* Host memory of one batch: pinned where the engine has CUDA (copies at
 * link speed), the heap on the host backend. */
typedef struct batch_memory {
    prism_buffer *in, *out, *records;
} batch_memory;

static void *host_array(prism_context *ctx, size_t bytes, const char *tag, prism_buffer **b)
{
    return prism_buffer_create_pinned(ctx, bytes, 0, tag, b) == PRISM_SUCCESS
               ? prism_buffer_host_pointer(*b)
               : NULL;
}

static void release_memory(batch_memory *m)
{
    prism_buffer_release(m->in);
    prism_buffer_release(m->out);
    prism_buffer_release(m->records);
}

/* Photons a batch: --batch, or what the engine says fits the device, at
 * most PROPAGATE_MAX_BATCH_*. */
static int batch_size(const propagate_run_info *run, const prism_photon_source *src,
                      const prism_propagate_desc *d, uint64_t total, uint64_t *batch, char *err,
                      size_t size)
{
    uint64_t b = run->opt->batch;
    if (b == 0) {
        size_t fits = 0;
        if (prism_propagate_batch_limit(run->ctx, run->geometry, src->kind, d, &fits) !=
            PRISM_SUCCESS)
            return tool_fail(err, size, "%s (set --batch)", prism_context_last_error(run->ctx));
        const bool cuda = prism_context_backend(run->ctx) == PRISM_BACKEND_CUDA;
        b = cuda ? PROPAGATE_MAX_BATCH_CUDA : PROPAGATE_MAX_BATCH_HOST;
        b = fits < b ? fits : b;
        /* several contexts: a batch for each (prism_propagate_multi splits it) */
        b *= run->contexts_n > 1 ? run->contexts_n : 1;
    }
    *batch = b < total ? b : total;
    return 0;
}

/* The detected photons moved to the front, in order; their number. Each
 * thread compacts its own slice in place, then the slices' hits (a few
 * percent of the bytes) are moved together. */
static size_t compact_hits(prism_photon *ph, size_t n)
{
    enum { SLICES = 64 };
    size_t kept[SLICES];
#pragma omp parallel for schedule(dynamic, 1)
    for (int c = 0; c < SLICES; c++) {
        const size_t lo = n * (size_t)c / SLICES, hi = n * (size_t)(c + 1) / SLICES;
        size_t k = lo;
        for (size_t i = lo; i < hi; i++)
            if (ph[i].history & PRISM_SURFACE_DETECT)
                ph[k++] = ph[i];
        kept[c] = k - lo;
    }
    size_t h = 0;
    for (int c = 0; c < SLICES; c++) {
        memmove(ph + h, ph + n * (size_t)c / SLICES, kept[c] * sizeof *ph);
        h += kept[c];
    }
    return h;
}

/* The final photons of one batch: every one to --out, the detected ones
 * (compacted in place, after --out has them) to --hits. */
static int write_photons(const propagate_options *o, outputs *w, prism_photon *ph, size_t n,
                         propagate_summary *sum, char *err, size_t size)
{
    if (o->out) {
        if (npy_writer_append(&w->out, ph, n))
            return tool_fail(err, size, "%s", w->out.error);
        sum->out_rows += n;
    }
    if (!o->hits)
        return 0;
    const size_t h = compact_hits(ph, n);
    if (npy_writer_append(&w->hits, ph, h))
        return tool_fail(err, size, "%s", w->hits.error);
    sum->hits += h;
    return 0;
}

typedef struct run_state {
    const propagate_run_info *run;
    prism_photon_source src;
    prism_propagate_desc desc;
    outputs w;
    batch_memory mem;
    prism_photon *in_p, *out_p;
    prism_step_record *rec_p;
} run_state;

static int one_batch(run_state *r, uint64_t first, size_t n, propagate_summary *sum, char *err,
                     size_t size)
{
    const propagate_options *o = r->run->opt;
    if (o->photons && propagate_read_photons(r->run->photons, r->in_p, n, first, err, size))
        return -1;
    r->src.count = n;
    r->src.photons = r->in_p;
    r->desc.first_photon = first;
    prism_propagate_outputs outs = {.photons = {.kind = PRISM_TARGET_HOST, .host = r->out_p}};
    if (o->records) {
        outs.records.kind = PRISM_TARGET_HOST;
        outs.records.host = r->rec_p;
    }
    prism_propagate_stats st;
    const propagate_run_info *run = r->run;
    const prism_result res =
        run->contexts_n > 1
            ? prism_propagate_multi(run->contexts, run->geometries, run->contexts_n, &r->src,
                                    &r->desc, &outs, &st, NULL)
            : prism_propagate(run->ctx, run->geometry, &r->src, &r->desc, &outs, &st);
    if (res != PRISM_SUCCESS)
        return tool_fail(err, size, "propagate (photons %llu to %llu): %s",
                         (unsigned long long)first, (unsigned long long)(first + n - 1),
                         prism_context_last_error(r->run->ctx));
    sum->propagate_seconds += st.seconds;
    sum->batches++;
    propagate_summary_add(sum, r->out_p, n);
    if (o->records) {
        if (npy_writer_append(&r->w.records, r->rec_p, n))
            return tool_fail(err, size, "%s", r->w.records.error);
        sum->record_rows += n;
    }
    return write_photons(o, &r->w, r->out_p, n, sum, err, size);
}

/* Inputs, outputs and host memory for batches of sum->batch photons. */
static int prepare(run_state *r, uint64_t total, propagate_summary *sum, char *err, size_t size)
{
    const propagate_options *o = r->run->opt;
    if (batch_size(r->run, &r->src, &r->desc, total, &sum->batch, err, size))
        return -1;
    if (o->photons && r->run->begin > 0 && npy_reader_skip(r->run->photons, r->run->begin))
        return tool_fail(err, size, "%s", r->run->photons->error);
    const size_t b = (size_t)sum->batch, k = r->desc.record_steps;
    r->out_p = host_array(r->run->ctx, b * sizeof *r->out_p, "prism-propagate.photons",
                          &r->mem.out);
    if (o->photons)
        r->in_p = host_array(r->run->ctx, b * sizeof *r->in_p, "prism-propagate.input",
                             &r->mem.in);
    if (o->records)
        r->rec_p = host_array(r->run->ctx, b * k * sizeof *r->rec_p, "prism-propagate.records",
                              &r->mem.records);
    if (!r->out_p || (o->photons && !r->in_p) || (o->records && !r->rec_p))
        return tool_fail(err, size, "no host memory for a batch of %zu photons (set a smaller "
                         "--batch)", b);
    /* what prism_propagate_batch_limit counts a photon at */
    sum->device_batch_bytes = b * (sizeof(prism_photon) + 2 * sizeof(uint32_t) +
                                   (o->photons ? sizeof(prism_photon) : 0) +
                                   k * sizeof(prism_step_record));
    sum->host_batch_bytes = b * ((o->photons ? 2 : 1) * sizeof(prism_photon) +
                                 k * sizeof(prism_step_record));
    return open_outputs(o, (uint32_t)k, &r->w, err, size);
}

int propagate_run(const propagate_run_info *run, propagate_summary *sum)
{
    const propagate_options *o = run->opt;
    run_state r;
    memset(&r, 0, sizeof r);
    r.run = run;
    r.src = *run->source;
    r.desc = (prism_propagate_desc){.seed = o->seed, .max_steps = o->max_steps, .math = o->math};
    if (o->records)
        r.desc.record_steps = o->record_steps ? o->record_steps : PROPAGATE_DEFAULT_RECORD_STEPS;
    char err[1024] = "";
    const double t0 = tool_now();
    const uint64_t end = run->end, total = end - run->begin;
    int rc = total > 0 ? prepare(&r, total, sum, err, sizeof err) : 0;
    if (rc == 0 && total == 0)
        rc = open_outputs(o, r.desc.record_steps, &r.w, err, sizeof err);
    tool_progress bar;
    tool_progress_begin(&bar, "propagating", "photons", !o->quiet);
    for (uint64_t first = run->begin; rc == 0 && first < end; first += sum->batch) {
        const size_t n = (size_t)(end - first < sum->batch ? end - first : sum->batch);
        rc = one_batch(&r, first, n, sum, err, sizeof err);
        tool_progress_update(&bar, (size_t)(first + n - run->begin), (size_t)total);
    }
    tool_progress_end(&bar, rc == 0 ? "" : "failed");
    if (rc == 0)
        rc = commit_outputs(&r.w, err, sizeof err);
    abort_outputs(&r.w);
    release_memory(&r.mem);
    sum->seconds = tool_now() - t0;
    prism_memory_report report;
    if (prism_memory_report_get(run->ctx, &report) == PRISM_SUCCESS)
        sum->engine_peak_bytes = report.peak_bytes;
    struct rusage usage;
    if (getrusage(RUSAGE_SELF, &usage) == 0)
        sum->host_peak_bytes = (size_t)usage.ru_maxrss * 1024; /* Linux: kilobytes */
    if (rc != 0)
        fprintf(stderr, "prism-propagate: %s\n", err);
    return rc == 0 ? PROPAGATE_OK : PROPAGATE_FAILED;
}
