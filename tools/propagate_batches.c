/* prism-propagate's run: prism_propagate_stream propagates the photons
 * (read from --photons, or generated) a batch at a time on every context,
 * with the summary tallied and the hits selected on the devices; its sink,
 * here, appends each batch's hits (and the final photons and records when
 * asked) to their .npy files in photon order while the devices go on. The
 * files are committed only after the last batch. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "cli.h"
#include "outputs.h"
#include "prism/device/genstep.h"
#include "prism/memory.h"
#include "progress.h"
#include "propagate_tool.h"
#include "propagate_ranks.h"

prism_photon_source propagate_source(const propagate_options *o, const prism_scene *scene,
                                     uint64_t count)
{
    prism_photon_source src = o->engine.source;
    src.count = (size_t)count;
    if (o->wavelength) {
        src.wavelength_nm = o->wavelength_nm[0];
        src.wavelength_max_nm = o->wavelength_nm[1];
    }
    if (o->photons != NULL)
        src.kind = PRISM_SOURCE_PHOTONS;
    else if (o->gensteps != NULL || o->muon)
        src.kind = PRISM_SOURCE_GENSTEPS; /* the gensteps: the caller's to give */
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

static const uint64_t GENSTEP_DIMS[2] = {6, 4};

int propagate_read_gensteps(const char *path, float **data, size_t *count, uint64_t *photons,
                            char *err, size_t size)
{
    *data = NULL;
    *count = 0;
    *photons = 0;
    npy_reader in;
    if (npy_reader_open(&in, path, GENSTEP_DIMS, 2)) {
        tool_fail(err, size, "%s (gensteps: float32 (N,6,4))", in.error);
        npy_reader_close(&in);
        return -1;
    }
    int rc = 0;
    if (in.rows == 0)
        rc = tool_fail(err, size, "%s: no gensteps in it", path);
    else if (in.rows > SIZE_MAX / sizeof(prism_genstep) ||
             (*data = malloc((size_t)in.rows * sizeof(prism_genstep))) == NULL)
        rc = tool_fail(err, size, "%s: no memory for %llu gensteps", path,
                       (unsigned long long)in.rows);
    else if (npy_reader_read(&in, *data, (size_t)in.rows))
        rc = tool_fail(err, size, "%s", in.error);
    if (rc == 0) {
        *count = (size_t)in.rows;
        const prism_genstep *g = (const prism_genstep *)(const void *)*data;
        for (size_t k = 0; k < *count; k++)
            *photons += g[k].photons;
        if (*photons == 0)
            rc = tool_fail(err, size, "%s: its %zu gensteps hold no photons", path, *count);
    }
    if (rc != 0) {
        free(*data);
        *data = NULL;
        *count = 0;
    }
    npy_reader_close(&in);
    return rc;
}

int propagate_write_gensteps(const char *path, const float *data, size_t count, char *err,
                             size_t size)
{
    npy_writer w;
    if (npy_writer_open(&w, path, GENSTEP_DIMS, 2))
        return tool_fail(err, size, "%s", w.error);
    if (npy_writer_append(&w, data, count) || npy_writer_commit(&w)) {
        tool_fail(err, size, "%s", w.error);
        npy_writer_abort(&w);
        return -1;
    }
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
            return tool_fail(err, size,
                             "%s: photon %llu: position (%g, %g, %g) is not finite; "
                             "expected metres",
                             in->path, (unsigned long long)(first + i), (double)p[0], (double)p[1],
                             (double)p[2]);
    }
    return 0;
}

/* The photons the run will write: --count, else --photons' rows (0 when
 * that file cannot be read: its own check says why, later), else the
 * default; gensteps' photons are not known before they are read or made
 * (0: not checked). */
static uint64_t photons_to_write(const propagate_options *o)
{
    if (o->count == 0 && (o->gensteps != NULL || o->muon))
        return 0;
    if (o->count != 0 || o->photons == NULL)
        return o->count != 0 ? o->count : PROPAGATE_DEFAULT_COUNT;
    npy_reader in;
    const uint64_t dims[2] = {4, 4};
    const uint64_t rows = npy_reader_open(&in, o->photons, dims, 2) == 0 ? in.rows : 0;
    npy_reader_close(&in);
    return rows;
}

/* The size of an npy file of `rows` rows of d0 x d1 float32. */
static uint64_t npy_bytes(uint64_t rows, uint64_t d0, uint64_t d1)
{
    npy_writer w = {.ndims = 2, .dims = {d0, d1}};
    return tool_add_sat(npy_writer_header_size(&w), tool_mul_sat(rows, d0 * d1 * 4));
}

int propagate_check_outputs(const propagate_options *o, const char *const paths[3], char *err,
                            size_t size)
{
    const uint64_t n = photons_to_write(o);
    const uint32_t k = o->record_steps ? o->record_steps : PROPAGATE_DEFAULT_RECORD_STEPS;
    const uint64_t bytes[3] = {0, n ? npy_bytes(n, 4, 4) : 0, n ? npy_bytes(n, k, 8) : 0};
    tool_output outs[3];
    size_t m = 0;
    for (int i = 0; i < 3; i++)
        if (paths[i] != NULL)
            outs[m++] = (tool_output){paths[i], bytes[i]};
    return tool_outputs_check(outs, m, err, size);
}

typedef struct outputs {
    npy_writer hits, out, records;
    bool open[3];
} outputs;

static int open_outputs(const propagate_options *o, uint32_t k, outputs *w, char *err, size_t size)
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

typedef struct run_state {
    const propagate_run_info *run;
    prism_photon_source src;
    prism_propagate_desc desc;
    outputs w;
    propagate_summary *sum;
    tool_progress bar;
    uint64_t done, total;
    double start; /* when the stream began */
    double write_seconds;
    uint64_t read_next; /* --photons: the file's next row */
    bool completed;     /* complete() ran: its status in completed_rc */
    int completed_rc;
    char err[1024];
} run_state;

/* After the first batch of a long run: the time left and the size of the
 * hits file, extrapolated from that batch (the whole run's, across ranks,
 * where the files gather every rank's share). */
static void first_estimate(run_state *r, uint64_t done)
{
    const double took = tool_now() - r->start;
    const double left = took * (double)(r->total - done) / (double)done;
    if (left < r->bar.interval)
        return; /* short work: the summary comes soon enough */
    char when[32], line[800];
    tool_duration_text(when, sizeof when, left);
    int n = snprintf(line, sizeof line, "first batch of %llu photons in %.2f s: about %s left",
                     (unsigned long long)r->done, took, when);
    if (r->run->opt->hits != NULL && n > 0 && (size_t)n < sizeof line) {
        const double whole = (double)r->run->source->count;
        const double hits = (double)r->sum->hits / (double)r->done * whole;
        char size[32];
        tool_bytes_text(size, sizeof size, npy_bytes((uint64_t)hits, 4, 4));
        snprintf(line + n, sizeof line - (size_t)n, "; the hits file about %s (%.0f hits)", size,
                 hits);
    }
    tool_progress_note(&r->bar, "%s", line);
}

/* The sink: one batch's outputs appended, in photon order. */
static prism_result write_batch(void *user, const prism_propagate_batch *b)
{
    run_state *r = user;
    const propagate_options *o = r->run->opt;
    propagate_summary *sum = r->sum;
    const double t0 = tool_now();
    int bad = 0;
    if (r->run->ranked != NULL) { /* in place, in the one file of each output */
        if (propagate_ranks_write(r->run->ranked, b, r->err, sizeof r->err) != 0) {
            r->write_seconds += tool_now() - t0;
            return PRISM_ERROR_IO;
        }
        sum->out_rows += o->out ? b->count : 0;
        sum->record_rows += o->records ? b->count : 0;
        sum->hits += o->hits ? b->hits_count : 0;
        bad = -1; /* written: skip the appends below */
    }
    if (bad == 0 && o->out && !(bad = npy_writer_append(&r->w.out, b->photons, b->count)))
        sum->out_rows += b->count;
    if (!bad && o->records && !(bad = npy_writer_append(&r->w.records, b->records, b->count)))
        sum->record_rows += b->count;
    if (!bad && o->hits && !(bad = npy_writer_append(&r->w.hits, b->hits, b->hits_count)))
        sum->hits += b->hits_count;
    r->write_seconds += tool_now() - t0;
    if (bad > 0) {
        const npy_writer *w = o->out && r->w.out.error[0]           ? &r->w.out
                              : o->records && r->w.records.error[0] ? &r->w.records
                                                                    : &r->w.hits;
        tool_fail(r->err, sizeof r->err, "%s", w->error);
        return PRISM_ERROR_IO;
    }
    sum->batches++;
    if (b->count > sum->batch)
        sum->batch = b->count;
    r->done += b->count;
    /* across ranks that claim batches, the run's photons done by all */
    const uint64_t done =
        r->run->ranked != NULL ? propagate_ranks_photons_done(r->run->ranked, r->done) : r->done;
    if (sum->batches == 1 && done < r->total)
        first_estimate(r, done);
    tool_progress_update(&r->bar, (size_t)(done < r->total ? done : r->total), (size_t)r->total);
    return PRISM_SUCCESS;
}

/* Context i joins the run (prism_propagate_stream_desc.join). */
static prism_result join_batches(void *user, size_t i, prism_context **ctx,
                                 const prism_geometry **geometry)
{
    const run_state *r = user;
    return r->run->join(r->run->join_user, i, ctx, geometry);
}

/* The next batch from the ranks' shared cursor (prism_propagate_stream_desc.claim). */
static prism_result claim_batch(void *user, size_t batch, uint64_t *first, uint64_t *count)
{
    run_state *r = user;
    if (propagate_ranks_claim(r->run->ranked, batch, r->run->contexts_n, first, count) != 0) {
        tool_fail(r->err, sizeof r->err, "another rank stopped");
        return PRISM_ERROR_IO;
    }
    return PRISM_SUCCESS;
}

/* A claimed batch's hits counted (prism_propagate_stream_desc.counted). */
static prism_result count_batch(void *user, const prism_propagate_batch *b)
{
    const run_state *r = user;
    propagate_ranks_counted(r->run->ranked, b);
    return PRISM_SUCCESS;
}

/* --photons, a batch at a time, in order (across ranks, skipping the other
 * ranks' batches). */
static prism_result read_batch(void *user, uint64_t first, size_t count, prism_photon *dst)
{
    run_state *r = user;
    if (first > r->read_next && npy_reader_skip(r->run->photons, first - r->read_next)) {
        tool_fail(r->err, sizeof r->err, "%s", r->run->photons->error);
        return PRISM_ERROR_IO;
    }
    r->read_next = first + count;
    if (propagate_read_photons(r->run->photons, dst, count, first, r->err, sizeof r->err))
        return PRISM_ERROR_IO;
    return PRISM_SUCCESS;
}

/* A rank's batch: what it would take alone (--batch, else what its first
 * device holds, at most PRISM_PROPAGATE_STREAM_MAX_BATCH, and at most a
 * quarter of a device's share of the run so that the ranks end together,
 * not below 2^16). Ranks that take batches in turn need the same one, and
 * propagate_ranks_ready takes the least; ranks that claim keep their own. */
static uint64_t ranks_batch_proposal(const propagate_run_info *run, const prism_photon_source *src,
                                     const prism_propagate_desc *desc)
{
    if (run->opt->batch != 0)
        return run->opt->batch;
    size_t limit = PRISM_PROPAGATE_STREAM_MAX_BATCH_HOST;
    if (prism_context_backend(run->ctx) == PRISM_BACKEND_CUDA &&
        prism_propagate_batch_limit(run->ctx, run->geometry, src->kind, desc, &limit) !=
            PRISM_SUCCESS) {
        fprintf(stderr, "prism-propagate: %s\n", prism_context_last_error(run->ctx));
        return 0; /* rank 0 shows it at the agreement */
    }
    uint64_t b = limit < PRISM_PROPAGATE_STREAM_MAX_BATCH ? limit
                                                          : PRISM_PROPAGATE_STREAM_MAX_BATCH;
    const uint64_t share = run->count / (4 * (uint64_t)run->ranks * (uint64_t)run->contexts_n);
    if (share < b)
        b = share > ((uint64_t)1 << 16) ? share : (uint64_t)1 << 16;
    return b;
}

/* After the last batch (rc 0) or a failure: the rounds this rank took no
 * part in, the progress ended, and the files completed: this process's
 * committed, or a rank's closed with the others' (propagate_ranks_close,
 * whose status propagate_ranks_finish reports). Once; 0 or -1 with r->err. */
static int complete(run_state *r, int rc)
{
    if (r->completed)
        return r->completed_rc;
    r->completed = true;
    const propagate_run_info *run = r->run;
    if (run->ranked != NULL && propagate_ranks_drain(run->ranked, rc == 0) != 0 && rc == 0)
        rc = tool_fail(r->err, sizeof r->err, "another rank stopped");
    tool_progress_end(&r->bar, rc == 0 ? "" : "failed");
    const double t0 = tool_now();
    if (rc == 0)
        rc = commit_outputs(&r->w, r->err, sizeof r->err);
    if (rc == 0 && run->ranked != NULL)
        propagate_ranks_close(run->ranked, PROPAGATE_OK);
    r->sum->commit_seconds = tool_now() - t0;
    r->completed_rc = rc;
    return rc;
}

/* The stream's `done`: every batch written, the files completed before the
 * stream releases its memory (0.009-0.016 s of unlocking and freeing that
 * the hits file's close no longer waits for, two H100s). */
static prism_result all_written(void *user)
{
    return complete(user, 0) == 0 ? PRISM_SUCCESS : PRISM_ERROR_IO;
}

int propagate_run(const propagate_run_info *run, propagate_summary *sum)
{
    const propagate_options *o = run->opt;
    run_state r;
    memset(&r, 0, sizeof r);
    r.run = run;
    r.sum = sum;
    r.src = *run->source;
    r.desc = (prism_propagate_desc){.seed = o->seed, .max_steps = o->max_steps, .math = o->math};
    if (o->records)
        r.desc.record_steps = o->record_steps ? o->record_steps : PROPAGATE_DEFAULT_RECORD_STEPS;
    const double t0 = tool_now();
    r.total = run->count;
    int rc = 0;
    /* --batch, else 0: the engine's choice (what fits the device, at most
     * PRISM_PROPAGATE_STREAM_MAX_BATCH, or _HOST on the host backend) */
    uint64_t batch = run->opt->batch;
    uint32_t stride = 0, phase = 0;
    bool claiming = false;
    if (run->ranked != NULL) { /* no files of its own: every rank writes into the one */
        batch = ranks_batch_proposal(run, &r.src, &r.desc);
        if (propagate_ranks_ready(run->ranked, batch != 0, r.total, &batch) != 0)
            rc = tool_fail(r.err, sizeof r.err, "a rank could not start its run");
        claiming = rc == 0 && propagate_ranks_claiming(run->ranked);
        stride = claiming ? 0 : (uint32_t)run->ranks;
        phase = claiming ? 0 : (uint32_t)run->rank;
        /* claiming: the progress shown is every rank's, of the whole run */
        if (!claiming)
            r.total =
                rc == 0 ? prism_propagate_stream_photons(r.total, (size_t)batch, stride, phase) : 0;
    } else
        rc = open_outputs(o, r.desc.record_steps, &r.w, r.err, sizeof r.err);
    prism_propagate_summary tally = {.detected_by_solid = sum->detected_by_solid,
                                     .solids = sum->solids};
    prism_propagate_share shares[PROPAGATE_MAX_CONTEXTS];
    memset(shares, 0, sizeof shares);
    tool_progress_begin(&r.bar, "prism-propagate", "propagating", "photons", !o->quiet);
    tool_progress_update(&r.bar, 0, (size_t)r.total);
    if (rc == 0 && r.total > 0) {
        r.src.count = (size_t)run->count;
        const prism_propagate_stream_desc stream = {.batch = (size_t)batch,
                                                    .stride = stride,
                                                    .phase = phase,
                                                    .photons = o->out != NULL,
                                                    .sink = write_batch,
                                                    .fill = o->photons ? read_batch : NULL,
                                                    .user = &r,
                                                    .summary = &tally,
                                                    .claim = claiming ? claim_batch : NULL,
                                                    .counted = claiming ? count_batch : NULL,
                                                    .join = run->join != NULL ? join_batches : NULL,
                                                    .done = all_written};
        prism_propagate_stats st;
        r.start = tool_now();
        const prism_result res = prism_propagate_stream(run->contexts, run->geometries,
                                                        run->contexts_n, &r.src, &r.desc, &stream,
                                                        &st, shares);
        if (res == PRISM_SUCCESS)
            sum->inside = st;
        if (res != PRISM_SUCCESS && r.err[0] == 0)
            tool_fail(r.err, sizeof r.err, "propagate: %s", prism_context_last_error(run->ctx));
        rc = res != PRISM_SUCCESS ? -1 : 0;
    }
    rc = complete(&r, rc) != 0 ? -1 : rc;
    abort_outputs(&r.w);
    sum->photons += tally.photons;
    sum->steps += tally.steps;
    for (int b = 0; b < 32; b++) {
        sum->flagged[b] += tally.flagged[b];
        sum->ended[b] += tally.ended[b];
    }
    for (size_t i = 0; i < run->contexts_n; i++) {
        sum->propagate_seconds =
            shares[i].seconds > sum->propagate_seconds ? shares[i].seconds : sum->propagate_seconds;
        sum->wait_seconds += shares[i].wait_seconds;
        if (shares[i].start_seconds > sum->stream_start_seconds)
            sum->stream_start_seconds = shares[i].start_seconds;
        if (shares[i].finish_seconds > sum->stream_finish_seconds)
            sum->stream_finish_seconds = shares[i].finish_seconds;
        sum->pin_seconds += shares[i].pin_seconds;
        sum->hits_wait_seconds += shares[i].hits_wait_seconds;
    }
    sum->write_seconds = r.write_seconds;
    sum->seconds = tool_now() - t0;
    /* what prism_propagate_batch_limit counts a photon at, and the stream's
     * two host slots a context */
    const size_t b = (size_t)sum->batch, k = r.desc.record_steps;
    sum->device_batch_bytes = b * prism_propagate_photon_bytes(run->ctx, r.src.kind, &r.desc);
    sum->host_batch_bytes = 2 * b *
                            ((1 + (o->out != NULL) + (o->photons != NULL)) * sizeof(prism_photon) +
                             k * sizeof(prism_step_record));
    prism_memory_report report;
    if (prism_memory_report_get(run->ctx, &report) == PRISM_SUCCESS)
        sum->engine_peak_bytes = report.peak_bytes;
    struct rusage usage;
    if (getrusage(RUSAGE_SELF, &usage) == 0)
        sum->host_peak_bytes = (size_t)usage.ru_maxrss * 1024; /* Linux: kilobytes */
    /* another rank's failure: that one says why */
    const bool quiet_failure = run->ranked != NULL && propagate_ranks_stopped_by_other(run->ranked);
    if (rc != 0 && !quiet_failure)
        fprintf(stderr, "prism-propagate: %s\n", r.err);
    return rc == 0 ? PROPAGATE_OK : PROPAGATE_FAILED;
}
