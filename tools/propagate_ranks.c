/* prism-propagate as one rank of several (propagate_ranks.h), over the
 * steps of a propagate_group: mpirun's ranks or forked processes. */
#define _GNU_SOURCE /* sync_file_range */
#include "propagate_ranks.h"

#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "npy.h"
#include "propagate_cursor.h"

#define HOST_BYTES 256
/* a rank's batches claimed and not yet written: two a context, and more */
#define CLAIMED_MAX 512
#define CAPTURE_BYTES 2048

struct propagate_ranks {
    propagate_group *g;
    int rank, ranks;
    const char *final[3]; /* the outputs asked for: hits, out, records (NULL: not asked) */
    uint64_t dims[3][2];
    int saved_stderr;  /* the real stderr while this rank's is kept */
    char capture[512]; /* where it is kept */
    bool closed, finished;
    int closed_rc, rc;
    propagate_options *opt;
    /* the run: propagate_ranks_ready */
    bool readied;
    uint64_t count, batch;        /* the run's photons; ranks taking turns: their one batch */
    uint64_t rounds, rounds_done; /* exchanges of hit counts: one a round of batches */
    /* the group's shared cursor (propagate_group.claims): the batches this
     * rank claimed (on the stream's threads) and has not yet written (on
     * the sink's), in order, under claim_lock, as by_other is */
    pthread_mutex_t claim_lock;
    uint64_t claimed[CLAIMED_MAX], claimed_first[CLAIMED_MAX]; /* number in the run, photon */
    size_t claimed_head, claimed_n;
    uint64_t written;             /* batches this rank wrote */
    bool stopped;                 /* a rank said it failed */
    bool by_other;                /* this rank stopped for another's failure only */
    double finish_seconds;        /* from the end of its run to the files in place */
    uint64_t hits_total;          /* hits of the rounds so far, every rank's */
    uint64_t *counts;             /* [ranks]: the last round's */
    npy_writer file[3];           /* rank 0: the files, until committed */
    int fd[3];                    /* this rank's descriptor of each */
    size_t header[3], row[3];     /* bytes before the first row; bytes a row */
    uint64_t io_read, io_written; /* bytes of the outputs: this rank's own rows (and the header) */
    uint64_t photons;             /* this rank's photons */
};

void propagate_ranks_capture_name(char *path, size_t size, long pid, int rank)
{
    const char *tmp = getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp";
    snprintf(path, size, "%s/prism-propagate.%ld.%d.stderr", tmp, pid, rank);
}

/* This rank's stderr into a file until finish, for rank 0 to show. */
static void capture_stderr(propagate_ranks *m)
{
    propagate_ranks_capture_name(m->capture, sizeof m->capture, (long)getpid(), m->rank);
    fflush(stderr);
    int fd = open(m->capture, O_RDWR | O_CREAT | O_TRUNC, 0600);
    m->saved_stderr = fd >= 0 ? dup(2) : -1;
    if (fd >= 0 && m->saved_stderr >= 0)
        dup2(fd, 2);
    if (fd >= 0)
        close(fd);
}

static void release_stderr(propagate_ranks *m, char *text)
{
    text[0] = 0;
    if (m->saved_stderr < 0)
        return;
    fflush(stderr);
    dup2(m->saved_stderr, 2);
    close(m->saved_stderr);
    m->saved_stderr = -1;
    FILE *f = fopen(m->capture, "rb");
    if (f != NULL) { /* its last CAPTURE_BYTES - 1 bytes */
        fseek(f, 0, SEEK_END);
        long size = ftell(f), from = size > CAPTURE_BYTES - 1 ? size - (CAPTURE_BYTES - 1) : 0;
        fseek(f, from, SEEK_SET);
        size_t n = fread(text, 1, CAPTURE_BYTES - 1, f);
        text[n] = 0;
        fclose(f);
    }
    unlink(m->capture);
}

propagate_ranks *propagate_ranks_begin(propagate_options *o, propagate_group *g)
{
    propagate_ranks *m = calloc(1, sizeof *m);
    if (m == NULL) {
        fprintf(stderr, "prism-propagate: no memory\n");
        g->ops->abort(g, PROPAGATE_FAILED);
        return NULL;
    }
    m->g = g;
    pthread_mutex_init(&m->claim_lock, NULL);
    m->rank = g->rank;
    m->ranks = g->size;
    const int local_ranks = g->local_size;
    /* The ranks of a node share its cores: each takes its part for its
     * threads (the load, the host's staging), unless OMP_NUM_THREADS says. */
    if (getenv("OMP_NUM_THREADS") == NULL && local_ranks > 1) {
        const int each = omp_get_num_procs() / local_ranks;
        omp_set_num_threads(each > 0 ? each : 1);
    }
    /* as the launcher's variables gave them early, or set now; written
     * only when they change, since a context may be being made from them
     * already */
    if (o->local_rank != g->local_rank)
        o->local_rank = g->local_rank;
    m->opt = o;
    if (m->rank > 0 && !o->quiet)
        o->quiet = true;
    const char *paths[3] = {o->hits, o->out, o->records};
    const uint32_t k = o->record_steps ? o->record_steps : PROPAGATE_DEFAULT_RECORD_STEPS;
    for (int i = 0; i < 3; i++) {
        m->final[i] = paths[i];
        m->dims[i][0] = i == 2 ? k : 4;
        m->dims[i][1] = i == 2 ? 8 : 4;
        m->fd[i] = -1;
    }
    m->counts = calloc((size_t)m->ranks, sizeof *m->counts);
    if (m->counts == NULL) {
        fprintf(stderr, "prism-propagate: no memory\n");
        g->ops->abort(g, PROPAGATE_FAILED);
    }
    m->saved_stderr = -1;
    capture_stderr(m);
    return m;
}

/* Rank 0 makes each file (a temporary beside the path asked for, its
 * header of a fixed size written); every rank opens it by name. Returns
 * 0, or -1 on every rank where one could not. */
static int make_files(propagate_ranks *m)
{
    int made = 1;
    for (int i = 0; i < 3; i++) {
        if (m->final[i] == NULL)
            continue;
        char temp[sizeof m->file[i].temp] = "";
        if (m->rank == 0) {
            if (npy_writer_open(&m->file[i], m->final[i], m->dims[i], 2) == 0 &&
                fflush(m->file[i].file) == 0) {
                snprintf(temp, sizeof temp, "%s", m->file[i].temp);
                m->io_written += npy_writer_header_size(&m->file[i]);
            } else {
                fprintf(stderr, "prism-propagate: rank 0: %s\n", m->file[i].error);
                made = 0;
            }
        }
        m->g->ops->bcast(m->g, temp, sizeof temp);
        npy_writer w = {.ndims = 2, .dims = {m->dims[i][0], m->dims[i][1]}};
        m->header[i] = npy_writer_header_size(&w);
        m->row[i] = 4 * (size_t)(m->dims[i][0] * m->dims[i][1]);
        m->fd[i] = temp[0] ? open(temp, O_WRONLY) : -1;
        if (temp[0] && m->fd[i] < 0) {
            fprintf(stderr, "prism-propagate: rank %d: cannot open %s: %s\n", m->rank, temp,
                    strerror(errno));
            made = 0;
        }
        if (!temp[0])
            made = 0;
    }
    uint64_t all = (uint64_t)made;
    m->g->ops->allreduce_u64(m->g, &all, 1, GROUP_MIN);
    return all ? 0 : -1;
}

/* The outputs checked, and made, while the ranks still meet anyway (their
 * devices start meanwhile), so that the run itself needs no step in
 * common before a rank's first batch. */
int propagate_ranks_check_outputs(propagate_ranks *m)
{
    char err[1024] = "";
    int bad = m->rank == 0 && propagate_check_outputs(m->opt, m->final, err, sizeof err) != 0;
    m->g->ops->bcast(m->g, &bad, sizeof bad);
    if (bad && m->rank == 0)
        fprintf(stderr, "prism-propagate: %s\n", err);
    if (bad)
        return PROPAGATE_FAILED;
    return make_files(m) == 0 ? PROPAGATE_OK : PROPAGATE_FAILED;
}

/* Whether the test hook's variable names `rank` (a rank, or a list of
 * them: "0,2"). */
static bool hooked(const char *name, int rank)
{
    const char *v = getenv(name);
    for (char *end; v != NULL && *v;) {
        const long r = strtol(v, &end, 10);
        if (end == v)
            return false;
        if (r == rank)
            return true;
        v = *end == ',' ? end + 1 : end;
    }
    return false;
}

int propagate_ranks_share(propagate_ranks *m, uint64_t count, propagate_run_info *run)
{
    run->count = count;
    run->rank = m->rank;
    run->ranks = m->ranks;
    run->launcher = m->g->launcher;
    run->ranked = m;
    m->count = count;
    if (hooked("PRISM_PROPAGATE_TEST_FAIL", m->rank)) {
        fprintf(stderr, "prism-propagate: test hook: rank %d fails\n", m->rank);
        return PROPAGATE_FAILED;
    }
    return PROPAGATE_OK;
}

/* Every rank's status and what it said; rank 0 shows them. Returns the
 * worst status. */
static int agree(propagate_ranks *m, int rc)
{
    char said[CAPTURE_BYTES], host[HOST_BYTES] = "";
    release_stderr(m, said);
    m->g->ops->host(m->g, host, sizeof host);
    int *codes = m->rank == 0 ? calloc((size_t)m->ranks, sizeof *codes) : NULL;
    char *texts = m->rank == 0 ? calloc((size_t)m->ranks, CAPTURE_BYTES) : NULL;
    char *hosts = m->rank == 0 ? calloc((size_t)m->ranks, HOST_BYTES) : NULL;
    m->g->ops->gather(m->g, &rc, sizeof rc, codes);
    m->g->ops->gather(m->g, said, CAPTURE_BYTES, texts);
    m->g->ops->gather(m->g, host, HOST_BYTES, hosts);
    if (m->rank == 0 && codes != NULL && texts != NULL && hosts != NULL) {
        for (int r = 0; r < m->ranks; r++) {
            /* each line a rank said, named by rank and host */
            for (char *line = texts + (size_t)r * CAPTURE_BYTES, *next; *line; line = next) {
                next = line + strcspn(line, "\n");
                if (*next)
                    *next++ = 0;
                if (*line && line[0] != '\r')
                    fprintf(stderr, "[rank %d on %s] %s\n", r, hosts + (size_t)r * HOST_BYTES,
                            line);
            }
        }
        for (int r = 0; r < m->ranks; r++)
            if (codes[r] != PROPAGATE_OK)
                fprintf(stderr,
                        "prism-propagate: rank %d of %d (on %s) failed (exit %d): no "
                        "output written\n",
                        r, m->ranks, hosts + (size_t)r * HOST_BYTES, codes[r]);
    }
    free(codes);
    free(texts);
    free(hosts);
    uint64_t worst = (uint64_t)rc; /* exit statuses are not negative */
    m->g->ops->allreduce_u64(m->g, &worst, 1, GROUP_MAX);
    return (int)worst;
}

static void sum_summary(const propagate_ranks *m, propagate_summary *s)
{
    uint64_t counts[7] = {s->photons,     s->steps,   s->hits, s->out_rows,
                          s->record_rows, s->batches, s->batch};
    propagate_group *g = m->g;
    g->ops->allreduce_u64(g, counts, 7, GROUP_SUM);
    g->ops->allreduce_u64(g, s->flagged, 32, GROUP_SUM);
    g->ops->allreduce_u64(g, s->ended, 32, GROUP_SUM);
    g->ops->allreduce_u64(g, s->detected_by_solid, s->solids + 1, GROUP_SUM);
    double secs[2] = {s->propagate_seconds, s->seconds};
    g->ops->allreduce_f64(g, secs, 2, GROUP_MAX);
    if (m->rank != 0)
        return;
    s->photons = counts[0];
    s->steps = counts[1];
    s->hits = counts[2];
    s->out_rows = counts[3];
    s->record_rows = counts[4];
    s->batches = (unsigned)counts[5];
    s->batch = counts[6] / (uint64_t)m->ranks; /* the ranks' mean */
    s->propagate_seconds = secs[0];
    s->seconds = secs[1];
}

/* --- The outputs: one file each, written by every rank in place. ---
 *
 * Rank 0 makes each file (a temporary beside the path asked for, with the
 * npy header of a fixed size); every rank opens it and writes its own rows
 * with pwrite at their offsets as its batches reach its sink, so no rank
 * reads or writes another's rows and nothing is copied after the run.
 * --out and --records rows sit at their photons' indices. The hits of
 * batch k follow those of batches 0..k-1. Ranks on several nodes take
 * batches in turn (batch k on rank k mod R), and after each round of R
 * batches they tell each other their counts (an allgather of one number
 * each), so a rank knows where its batch's hits go. That exchange is the
 * ranks' only step in common during the run; a rank blocked in it still
 * has its devices working on its next batches. A count of ROUND_FAILED
 * says a rank stopped: every rank then stops at that round, and no file
 * is kept.
 *
 * Where the group shares a cursor (propagate_group.claims: forked
 * processes, or mpirun's ranks all on one node), the ranks claim batches
 * from it instead, so a rank whose device starts first or runs faster
 * takes more of the run, and each batch's hits go after those of every
 * batch claimed before it, whoever took them (propagate_cursor_place). A
 * rank that stops stops the cursor: the others' next claim or place
 * fails, and no file is kept. */

#define ROUND_FAILED UINT64_MAX

/* This rank's batches of a run of `count` photons in batches of `batch`. */
static uint64_t rounds_of(uint64_t count, uint64_t batch, int ranks)
{
    const uint64_t batches = (count + batch - 1) / batch;
    return (batches + (uint64_t)ranks - 1) / (uint64_t)ranks;
}

int propagate_ranks_ready(propagate_ranks *m, bool ok, uint64_t count, uint64_t *batch)
{
    m->readied = true;
    m->count = count;
    if (m->g->claims) {
        /* no step in common: a rank whose device is ready claims at once,
         * in batches of its own size (each batch's hits go after those
         * claimed before it, whatever their sizes); one that cannot start
         * stops the cursor, and the others stop at their next claim */
        if (!ok || *batch == 0) {
            propagate_cursor_stop(m->g->node);
            return -1; /* it says why in the agreement */
        }
        if (hooked("PRISM_PROPAGATE_TEST_LATE", m->rank))
            sleep(1); /* the test hook: a rank whose device starts late */
        return 0;
    }
    /* any rank not ready, and the least batch: one reduce of minima */
    uint64_t v[2] = {ok ? UINT64_MAX : 0, ok ? *batch : UINT64_MAX}, got[2] = {0, 0};
    memcpy(got, v, sizeof got);
    m->g->ops->allreduce_u64(m->g, got, 2, GROUP_MIN);
    if (got[0] != UINT64_MAX || got[1] == 0 || got[1] == UINT64_MAX) {
        m->by_other = ok && *batch != 0;
        return -1; /* a rank could not start: it says why in the agreement */
    }
    *batch = got[1];
    m->batch = got[1];
    m->rounds = rounds_of(count, m->batch, m->ranks);
    return 0;
}

/* Exchange this round's hit count; the offset of this rank's hits into
 * *at. Returns 0, or -1 when a rank stopped. */
static int next_round(propagate_ranks *m, uint64_t mine, uint64_t *at)
{
    uint64_t *counts = m->counts;
    m->g->ops->allgather(m->g, &mine, sizeof mine, counts);
    m->rounds_done++;
    uint64_t before = 0, all = 0;
    int failed = -1;
    for (int r = 0; r < m->ranks; r++) {
        if (counts[r] == ROUND_FAILED) {
            failed = failed < 0 ? r : failed;
            continue;
        }
        before += r < m->rank ? counts[r] : 0;
        all += counts[r];
    }
    if (failed >= 0) {
        m->by_other = !m->stopped && mine != ROUND_FAILED;
        m->stopped = true;
        return -1;
    }
    *at = m->hits_total + before;
    m->hits_total += all;
    return 0;
}

/* Rows [at, at + n) of output i from `rows`. */
static int write_rows(propagate_ranks *m, int i, uint64_t at, const void *rows, uint64_t n,
                      char *err, size_t size)
{
    const char *p = rows;
    uint64_t left = n * m->row[i];
    off_t where = (off_t)(m->header[i] + at * m->row[i]);
    while (left > 0) {
        const ssize_t w = pwrite(m->fd[i], p, left < ((size_t)1 << 30) ? left : (size_t)1 << 30,
                                 where);
        if (w <= 0) {
            snprintf(err, size, "%s: write failed: %s", m->final[i],
                     w < 0 ? strerror(errno) : "no progress");
            return -1;
        }
        p += w;
        where += w;
        left -= (uint64_t)w;
    }
    m->io_written += n * m->row[i];
#if defined(__linux__) && defined(SYNC_FILE_RANGE_WRITE)
    /* start the disk on them now, so the sync at the end is short */
    sync_file_range(m->fd[i], (off64_t)(m->header[i] + at * m->row[i]), (off64_t)(n * m->row[i]),
                    SYNC_FILE_RANGE_WRITE);
#endif
    return 0;
}

/* The hits a batch adds to the hits file: its hits where one is asked,
 * else none (its place is still exchanged, which is where a rank learns
 * that another stopped). */
static uint64_t batch_hits(const propagate_ranks *m, const prism_propagate_batch *b)
{
    return m->final[0] != NULL ? b->hits_count : 0;
}

int propagate_ranks_write(propagate_ranks *m, const prism_propagate_batch *b, char *err,
                          size_t size)
{
    if (m->written++ == 0 && hooked("PRISM_PROPAGATE_TEST_KILL", m->rank))
        raise(SIGKILL);
    if (m->written == 1 && hooked("PRISM_PROPAGATE_TEST_STOP", m->rank)) {
        snprintf(err, size, "test hook: rank %d stops at its first batch", m->rank);
        return -1;
    }
    uint64_t at = 0;
    const uint64_t hits = batch_hits(m, b);
    /* the round's exchange, or the batch's place, hits asked or not: it is
     * where a rank learns that another stopped */
    int placed = 0;
    if (m->g->claims) {
        placed = -1;
        pthread_mutex_lock(&m->claim_lock);
        const bool any = m->claimed_n > 0;
        const uint64_t seq = any ? m->claimed[m->claimed_head] : 0;
        if (any) {
            m->claimed_head = (m->claimed_head + 1) % CLAIMED_MAX;
            m->claimed_n--;
        }
        pthread_mutex_unlock(&m->claim_lock);
        if (any)
            placed = propagate_cursor_place(m->g->node, seq, b->count, hits, &at);
        if (placed != 0) { /* another stopped the cursor */
            pthread_mutex_lock(&m->claim_lock);
            m->by_other = true;
            pthread_mutex_unlock(&m->claim_lock);
        }
    } else {
        placed = next_round(m, hits, &at);
    }
    if (placed != 0) {
        snprintf(err, size, "another rank stopped");
        return -1;
    }
    if (m->final[0] != NULL && write_rows(m, 0, at, b->hits, b->hits_count, err, size) != 0)
        return -1;
    if (m->final[1] != NULL && write_rows(m, 1, b->first, b->photons, b->count, err, size) != 0)
        return -1;
    if (m->final[2] != NULL && write_rows(m, 2, b->first, b->records, b->count, err, size) != 0)
        return -1;
    return 0;
}

bool propagate_ranks_stopped_by_other(propagate_ranks *m)
{
    pthread_mutex_lock(&m->claim_lock);
    const bool other = m->by_other;
    pthread_mutex_unlock(&m->claim_lock);
    return other;
}

int propagate_ranks_rank(const propagate_ranks *m)
{
    return m->rank;
}

bool propagate_ranks_claiming(const propagate_ranks *m)
{
    return m->g->claims;
}

int propagate_ranks_claim(propagate_ranks *m, uint64_t batch, uint64_t contexts, uint64_t *first,
                          uint64_t *count)
{
    uint64_t seq = 0;
    *count = 0;
    pthread_mutex_lock(&m->claim_lock);
    const bool full = m->claimed_n == CLAIMED_MAX;
    pthread_mutex_unlock(&m->claim_lock);
    const int rc = full ? -1
                        : propagate_cursor_claim(m->g->node, m->count, batch,
                                                 contexts * (uint64_t)m->ranks, first, count, &seq);
    pthread_mutex_lock(&m->claim_lock);
    if (rc != 0 && !full)
        m->by_other = true; /* another stopped the cursor */
    if (rc == 0 && *count > 0) {
        const size_t k = (m->claimed_head + m->claimed_n) % CLAIMED_MAX;
        m->claimed[k] = seq;
        m->claimed_first[k] = *first;
        m->claimed_n++;
    }
    pthread_mutex_unlock(&m->claim_lock);
    return rc;
}

void propagate_ranks_counted(propagate_ranks *m, const prism_propagate_batch *b)
{
    if (!m->g->claims)
        return;
    bool any = false;
    uint64_t seq = 0;
    pthread_mutex_lock(&m->claim_lock);
    for (size_t i = 0; i < m->claimed_n && !any; i++) {
        const size_t k = (m->claimed_head + i) % CLAIMED_MAX;
        any = m->claimed_first[k] == b->first;
        seq = m->claimed[k];
    }
    pthread_mutex_unlock(&m->claim_lock);
    if (any)
        propagate_cursor_count(m->g->node, seq, b->count, batch_hits(m, b));
}

uint64_t propagate_ranks_photons_done(propagate_ranks *m, uint64_t own)
{
    uint64_t photons = own;
    if (m->g->claims)
        propagate_cursor_placed(m->g->node, &photons);
    return photons;
}

int propagate_ranks_drain(propagate_ranks *m, bool ok)
{
    uint64_t at;
    if (m->g->claims) { /* the others stop at their next claim or place */
        if (!ok)
            propagate_cursor_stop(m->g->node);
        return ok ? 0 : -1;
    }
    while (m->rounds_done < m->rounds)
        if (next_round(m, ok && !m->stopped ? 0 : ROUND_FAILED, &at) != 0)
            ok = false;
    return ok && !m->stopped ? 0 : -1;
}

/* Every rank's rows on disk, then rank 0 writes the headers with the row
 * counts and renames the files into place; or, after a failure, removes
 * them. Returns an exit status, the same on every rank. */
static int commit(propagate_ranks *m, int ok)
{
    for (int i = 0; i < 3; i++) {
        if (m->fd[i] < 0)
            continue;
        if (ok && fdatasync(m->fd[i]) != 0) {
            fprintf(stderr, "prism-propagate: rank %d: %s: %s\n", m->rank, m->final[i],
                    strerror(errno));
            ok = 0;
        }
        close(m->fd[i]);
        m->fd[i] = -1;
    }
    uint64_t all = (uint64_t)(ok != 0);
    m->g->ops->allreduce_u64(m->g, &all, 1, GROUP_MIN);
    int rc = all ? PROPAGATE_OK : PROPAGATE_FAILED;
    if (m->rank == 0) {
        const uint64_t rows[3] = {m->hits_total, m->count, m->count};
        for (int i = 0; i < 3 && rc == PROPAGATE_OK; i++)
            if (m->final[i] != NULL && (npy_writer_reserve(&m->file[i], rows[i]) != 0 ||
                                        npy_writer_finish(&m->file[i]) != 0)) {
                fprintf(stderr, "prism-propagate: rank 0: %s\n", m->file[i].error);
                rc = PROPAGATE_FAILED;
            }
        /* every file complete first, then the renames */
        for (int i = 0; i < 3 && rc == PROPAGATE_OK; i++)
            if (m->final[i] != NULL && npy_writer_commit(&m->file[i]) != 0) {
                fprintf(stderr, "prism-propagate: rank 0: %s\n", m->file[i].error);
                rc = PROPAGATE_FAILED;
            }
        for (int i = 0; i < 3; i++)
            if (m->final[i] != NULL)
                npy_writer_abort(&m->file[i]);
    }
    m->g->ops->bcast(m->g, &rc, sizeof rc);
    return rc;
}

/* The CPUs this thread (the rank's main thread, whose mask its others
 * inherit) may run on. */
static uint64_t cpus(void)
{
    cpu_set_t set;
    return sched_getaffinity(0, sizeof set, &set) == 0 ? (uint64_t)CPU_COUNT(&set) : 0;
}

/* Rank 0: each rank's bytes read and written of the outputs, its photons,
 * its CPUs, its time before its run, in making the group (MPI_Init, the
 * fork) and in finishing, for the summary. */
static void gather_io(propagate_ranks *m, propagate_summary *s, double setup)
{
    const uint64_t mine[4] = {m->io_read, m->io_written, m->photons, cpus()};
    uint64_t *all = m->rank == 0 ? calloc((size_t)m->ranks * 4, sizeof *all) : NULL;
    double *setups = m->rank == 0 ? calloc((size_t)m->ranks * 4, sizeof *setups) : NULL;
    const double times[4] = {setup, m->g->init_seconds, m->finish_seconds, m->g->launch_seconds};
    m->g->ops->gather(m->g, mine, sizeof mine, all);
    m->g->ops->gather(m->g, times, sizeof times, setups);
    if (m->rank == 0 && s != NULL && all != NULL && setups != NULL) {
        s->rank_io = all;
        s->rank_setup = setups;
        s->ranks = (size_t)m->ranks;
        return;
    }
    free(all);
    free(setups);
}

int propagate_ranks_close(propagate_ranks *m, int rc)
{
    if (m->closed)
        return m->closed_rc;
    m->closed = true;
    /* the steps every rank takes whatever happened to it, so none waits */
    const double t0 = omp_get_wtime();
    uint64_t batch = 0;
    if (!m->readied)
        propagate_ranks_ready(m, false, 0, &batch);
    propagate_ranks_drain(m, rc == PROPAGATE_OK);
    /* a rank that stopped only because another failed is not named as failed */
    int worst = agree(m, m->by_other ? PROPAGATE_OK : rc);
    if (m->g->claims) /* every rank is past its run: all hits are placed */
        m->hits_total = propagate_cursor_placed(m->g->node, NULL);
    if (rc != PROPAGATE_OK && worst == PROPAGATE_OK)
        worst = rc;
    worst = commit(m, worst == PROPAGATE_OK) != PROPAGATE_OK ? PROPAGATE_FAILED : worst;
    m->finish_seconds = omp_get_wtime() - t0;
    m->closed_rc = worst;
    return worst;
}

int propagate_ranks_finish(propagate_ranks *m, int rc, propagate_summary *sum, bool *print,
                           double setup)
{
    *print = false;
    if (m->finished)
        return m->rc;
    m->finished = true;
    if (sum == NULL && rc == PROPAGATE_OK) /* stopped before its run */
        rc = PROPAGATE_FAILED;
    const int worst = propagate_ranks_close(m, rc);
    if (worst == PROPAGATE_OK) {
        m->photons = sum->photons; /* this rank's, before the sum */
        sum_summary(m, sum);
        gather_io(m, sum, setup);
        *print = m->rank == 0;
    }
    m->rc = worst == PROPAGATE_OK ? PROPAGATE_OK : PROPAGATE_FAILED;
    return m->rc;
}

/* The test hook $PRISM_PROPAGATE_TEST_HOLD_AFTER: a rank whose exit is
 * slow (as CUDA's teardown is), held until the file
 * $PRISM_PROPAGATE_TEST_HOLD_FILE exists, then said gone in that name
 * with ".gone" added; after 20 s unheld, it ends without saying so. */
static void hold_after(void)
{
    const char *path = getenv("PRISM_PROPAGATE_TEST_HOLD_FILE");
    if (path == NULL)
        return;
    for (int i = 0; i < 2000 && access(path, F_OK) != 0; i++)
        nanosleep(&(struct timespec){.tv_nsec = 10000000}, NULL);
    if (access(path, F_OK) != 0)
        return;
    char gone[600];
    snprintf(gone, sizeof gone, "%s.gone", path);
    FILE *f = fopen(gone, "w");
    if (f != NULL)
        fclose(f);
}

int propagate_ranks_end(propagate_ranks *m, int rc)
{
    bool print;
    rc = propagate_ranks_finish(m, rc, NULL, &print, 0.0);
    m->g->ops->end(m->g, rc);
    const bool killed = hooked("PRISM_PROPAGATE_TEST_KILL_AFTER", m->rank);
    const bool held = hooked("PRISM_PROPAGATE_TEST_HOLD_AFTER", m->rank);
    pthread_mutex_destroy(&m->claim_lock);
    free(m->counts);
    free(m);
    if (killed) /* the test hook: a rank that dies once its part is done */
        raise(SIGKILL);
    if (held)
        hold_after();
    return rc;
}
