/* prism-propagate's MPI form (propagate_mpi.h). Only Open MPI's and
 * PMIx's launch variables start it, so a plain run of an MPI build never
 * touches MPI. */
#define _GNU_SOURCE /* sync_file_range */
#include "propagate_mpi.h"

#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "npy.h"

#define CAPTURE_BYTES 2048

struct propagate_mpi {
    int rank, ranks, local_rank;
    const char *final[3]; /* the outputs asked for: hits, out, records (NULL: not asked) */
    uint64_t dims[3][2];
    int saved_stderr;  /* the real stderr while this rank's is kept */
    char capture[512]; /* where it is kept */
    bool finished;
    int rc;
    propagate_options *opt;
    /* the run: propagate_mpi_ready */
    bool readied;
    uint64_t count, batch;        /* the run's photons; photons a batch, the same on all */
    uint64_t rounds, rounds_done; /* exchanges of hit counts: one a round of batches */
    bool stopped;                 /* a rank said it failed */
    bool by_other;                /* this rank stopped for another's failure only */
    double init_seconds;          /* in MPI_Init_thread */
    double finish_seconds;        /* from the end of its run to the files in place */
    uint64_t hits_total;          /* hits of the rounds so far, every rank's */
    uint64_t *counts;             /* [ranks]: the last round's */
    npy_writer file[3];           /* rank 0: the files, until committed */
    int fd[3];                    /* this rank's descriptor of each */
    size_t header[3], row[3];     /* bytes before the first row; bytes a row */
    uint64_t io_read, io_written; /* bytes of the outputs: this rank's own rows (and the header) */
};

static bool under_mpirun(void)
{
    return getenv("OMPI_COMM_WORLD_SIZE") != NULL || getenv("PMIX_RANK") != NULL ||
           getenv("PMI_SIZE") != NULL;
}

/* This rank's stderr into a file until finish, for rank 0 to show. */
static void capture_stderr(propagate_mpi *m)
{
    const char *tmp = getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp";
    snprintf(m->capture, sizeof m->capture, "%s/prism-propagate.%d.%d.stderr", tmp, (int)getpid(),
             m->rank);
    fflush(stderr);
    int fd = open(m->capture, O_RDWR | O_CREAT | O_TRUNC, 0600);
    m->saved_stderr = fd >= 0 ? dup(2) : -1;
    if (fd >= 0 && m->saved_stderr >= 0)
        dup2(fd, 2);
    if (fd >= 0)
        close(fd);
}

static void release_stderr(propagate_mpi *m, char *text)
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

bool propagate_mpi_prepare(propagate_options *o)
{
    const char *local = getenv("OMPI_COMM_WORLD_LOCAL_RANK"),
               *rank = getenv("OMPI_COMM_WORLD_RANK");
    if (!under_mpirun() || local == NULL || rank == NULL)
        return false;
    o->local_rank = atoi(local);
    if (atoi(rank) > 0)
        o->quiet = true;
    return true;
}

propagate_mpi *propagate_mpi_begin(propagate_options *o, int *argc, char ***argv, int *rc)
{
    *rc = PROPAGATE_OK;
    if (!under_mpirun())
        return NULL;
    propagate_mpi *m = calloc(1, sizeof *m);
    /* MPI is called from the main thread only (the stream's sink runs
     * there); the engine's threads never call it */
    int provided = 0;
    const double t0 = omp_get_wtime();
    if (m == NULL || MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
        fprintf(stderr, "prism-propagate: MPI_Init failed\n");
        free(m);
        *rc = PROPAGATE_FAILED;
        return NULL;
    }
    m->init_seconds = omp_get_wtime() - t0;
    MPI_Comm_rank(MPI_COMM_WORLD, &m->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &m->ranks);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, m->rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &m->local_rank);
    int local_ranks = 1;
    MPI_Comm_size(node, &local_ranks);
    MPI_Comm_free(&node);
    /* The ranks of a node share its cores: each takes its part for its
     * threads (the load, the host's staging), unless OMP_NUM_THREADS says. */
    if (getenv("OMP_NUM_THREADS") == NULL && local_ranks > 1) {
        const int each = omp_get_num_procs() / local_ranks;
        omp_set_num_threads(each > 0 ? each : 1);
    }
    /* as propagate_mpi_prepare guessed them, or set now; written only when
     * they change, since a context may be being made from them already */
    if (o->local_rank != m->local_rank)
        o->local_rank = m->local_rank;
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
        MPI_Abort(MPI_COMM_WORLD, PROPAGATE_FAILED);
    }
    m->saved_stderr = -1;
    capture_stderr(m);
    return m;
}

int propagate_mpi_check_outputs(propagate_mpi *m)
{
    char err[1024] = "";
    int bad = m->rank == 0 && propagate_check_outputs(m->opt, m->final, err, sizeof err) != 0;
    MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (bad && m->rank == 0)
        fprintf(stderr, "prism-propagate: %s\n", err);
    return bad ? PROPAGATE_FAILED : PROPAGATE_OK;
}

void propagate_mpi_share(propagate_mpi *m, uint64_t count, propagate_run_info *run)
{
    run->count = count;
    run->rank = m->rank;
    run->ranks = m->ranks;
    run->mpi = m;
    m->count = count;
}

/* Every rank's status and what it said; rank 0 shows them. Returns the
 * worst status. */
static int agree(propagate_mpi *m, int rc)
{
    char said[CAPTURE_BYTES], host[MPI_MAX_PROCESSOR_NAME] = "";
    release_stderr(m, said);
    int len = 0;
    MPI_Get_processor_name(host, &len);
    int *codes = m->rank == 0 ? calloc((size_t)m->ranks, sizeof *codes) : NULL;
    char *texts = m->rank == 0 ? calloc((size_t)m->ranks, CAPTURE_BYTES) : NULL;
    char *hosts = m->rank == 0 ? calloc((size_t)m->ranks, MPI_MAX_PROCESSOR_NAME) : NULL;
    MPI_Gather(&rc, 1, MPI_INT, codes, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Gather(said, CAPTURE_BYTES, MPI_CHAR, texts, CAPTURE_BYTES, MPI_CHAR, 0, MPI_COMM_WORLD);
    MPI_Gather(host, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, hosts, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0,
               MPI_COMM_WORLD);
    if (m->rank == 0 && codes != NULL && texts != NULL && hosts != NULL) {
        for (int r = 0; r < m->ranks; r++) {
            /* each line a rank said, named by rank and host */
            for (char *line = texts + (size_t)r * CAPTURE_BYTES, *next; *line; line = next) {
                next = line + strcspn(line, "\n");
                if (*next)
                    *next++ = 0;
                if (*line && line[0] != '\r')
                    fprintf(stderr, "[rank %d on %s] %s\n", r,
                            hosts + (size_t)r * MPI_MAX_PROCESSOR_NAME, line);
            }
        }
        for (int r = 0; r < m->ranks; r++)
            if (codes[r] != PROPAGATE_OK)
                fprintf(stderr,
                        "prism-propagate: rank %d of %d (on %s) failed (exit %d): no "
                        "output written\n",
                        r, m->ranks, hosts + (size_t)r * MPI_MAX_PROCESSOR_NAME, codes[r]);
    }
    free(codes);
    free(texts);
    free(hosts);
    int worst = 0;
    MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return worst;
}

static void sum_summary(const propagate_mpi *m, propagate_summary *s)
{
    uint64_t counts[7] = {s->photons,     s->steps,   s->hits, s->out_rows,
                          s->record_rows, s->batches, s->batch};
    MPI_Reduce(m->rank == 0 ? MPI_IN_PLACE : counts, counts, 7, MPI_UINT64_T, MPI_SUM, 0,
               MPI_COMM_WORLD);
    MPI_Reduce(m->rank == 0 ? MPI_IN_PLACE : s->flagged, s->flagged, 32, MPI_UINT64_T, MPI_SUM, 0,
               MPI_COMM_WORLD);
    MPI_Reduce(m->rank == 0 ? MPI_IN_PLACE : s->ended, s->ended, 32, MPI_UINT64_T, MPI_SUM, 0,
               MPI_COMM_WORLD);
    MPI_Reduce(m->rank == 0 ? MPI_IN_PLACE : s->detected_by_solid, s->detected_by_solid,
               (int)s->solids + 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    double secs[2] = {s->propagate_seconds, s->seconds};
    MPI_Reduce(m->rank == 0 ? MPI_IN_PLACE : secs, secs, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
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
 * batch k follow those of batches 0..k-1: the ranks take batches in turn
 * (batch k on rank k mod R), and after each round of R batches they tell
 * each other their counts (MPI_Allgather of one number each), so a rank
 * knows where its batch's hits go. That exchange is the ranks' only step
 * in common during the run; a rank blocked in it still has its devices
 * working on its next batches. A count of ROUND_FAILED says a rank
 * stopped: every rank then stops at that round, and no file is kept. */

#define ROUND_FAILED UINT64_MAX

/* This rank's batches of a run of `count` photons in batches of `batch`. */
static uint64_t rounds_of(uint64_t count, uint64_t batch, int ranks)
{
    const uint64_t batches = (count + batch - 1) / batch;
    return (batches + (uint64_t)ranks - 1) / (uint64_t)ranks;
}

int propagate_mpi_ready(propagate_mpi *m, bool ok, uint64_t count, uint64_t *batch)
{
    m->readied = true;
    m->count = count;
    /* any rank not ready, and the least batch: one reduce of minima */
    uint64_t v[2] = {ok ? UINT64_MAX : 0, ok ? *batch : UINT64_MAX}, got[2] = {0, 0};
    MPI_Allreduce(v, got, 2, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
    if (got[0] != UINT64_MAX || got[1] == 0 || got[1] == UINT64_MAX) {
        m->by_other = ok && *batch != 0;
        return -1; /* a rank could not start: it says why in the agreement */
    }
    *batch = got[1];
    m->batch = got[1];
    m->rounds = rounds_of(count, m->batch, m->ranks);
    /* rank 0 makes the files; the others open them by name */
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
        MPI_Bcast(temp, (int)sizeof temp, MPI_CHAR, 0, MPI_COMM_WORLD);
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
    int all = 0;
    MPI_Allreduce(&made, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all ? 0 : -1;
}

/* Exchange this round's hit count; the offset of this rank's hits into
 * *at. Returns 0, or -1 when a rank stopped. */
static int next_round(propagate_mpi *m, uint64_t mine, uint64_t *at)
{
    uint64_t *counts = m->counts;
    MPI_Allgather(&mine, 1, MPI_UINT64_T, counts, 1, MPI_UINT64_T, MPI_COMM_WORLD);
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
static int write_rows(propagate_mpi *m, int i, uint64_t at, const void *rows, uint64_t n, char *err,
                      size_t size)
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

int propagate_mpi_write(propagate_mpi *m, const prism_propagate_batch *b, char *err, size_t size)
{
    uint64_t at = 0;
    /* the round's exchange, hits asked or not: it is where a rank learns
     * that another stopped */
    if (next_round(m, m->final[0] != NULL ? b->hits_count : 0, &at) != 0) {
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

bool propagate_mpi_stopped_by_other(const propagate_mpi *m)
{
    return m->by_other;
}

int propagate_mpi_drain(propagate_mpi *m, bool ok)
{
    uint64_t at;
    while (m->rounds_done < m->rounds)
        if (next_round(m, ok && !m->stopped ? 0 : ROUND_FAILED, &at) != 0)
            ok = false;
    return ok && !m->stopped ? 0 : -1;
}

/* Every rank's rows on disk, then rank 0 writes the headers with the row
 * counts and renames the files into place; or, after a failure, removes
 * them. Returns an exit status, the same on every rank. */
static int commit(propagate_mpi *m, int ok)
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
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
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
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return rc;
}

/* Rank 0: each rank's bytes read and written of the outputs, its time
 * before its run, in MPI_Init and in finishing, for the summary. */
static void gather_io(propagate_mpi *m, propagate_summary *s, double setup)
{
    const uint64_t mine[2] = {m->io_read, m->io_written};
    uint64_t *all = m->rank == 0 ? calloc((size_t)m->ranks * 2, sizeof *all) : NULL;
    double *setups = m->rank == 0 ? calloc((size_t)m->ranks * 3, sizeof *setups) : NULL;
    const double times[3] = {setup, m->init_seconds, m->finish_seconds};
    MPI_Gather(mine, 2, MPI_UINT64_T, all, 2, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    MPI_Gather(times, 3, MPI_DOUBLE, setups, 3, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (m->rank == 0 && s != NULL && all != NULL && setups != NULL) {
        s->rank_io = all;
        s->rank_setup = setups;
        s->ranks = (size_t)m->ranks;
        return;
    }
    free(all);
    free(setups);
}

int propagate_mpi_finish(propagate_mpi *m, int rc, propagate_summary *sum, bool *print,
                         double setup)
{
    *print = false;
    if (m->finished)
        return m->rc;
    m->finished = true;
    if (sum == NULL && rc == PROPAGATE_OK) /* stopped before its run */
        rc = PROPAGATE_FAILED;
    /* the steps every rank takes whatever happened to it, so none waits */
    const double t0 = omp_get_wtime();
    uint64_t batch = 0;
    if (!m->readied)
        propagate_mpi_ready(m, false, 0, &batch);
    propagate_mpi_drain(m, rc == PROPAGATE_OK);
    /* a rank that stopped only because another failed is not named as failed */
    int worst = agree(m, m->by_other ? PROPAGATE_OK : rc);
    if (rc != PROPAGATE_OK && worst == PROPAGATE_OK)
        worst = rc;
    worst = commit(m, worst == PROPAGATE_OK) != PROPAGATE_OK ? PROPAGATE_FAILED : worst;
    m->finish_seconds = omp_get_wtime() - t0;
    if (worst == PROPAGATE_OK) {
        sum_summary(m, sum);
        gather_io(m, sum, setup);
        *print = m->rank == 0;
    }
    m->rc = worst == PROPAGATE_OK ? PROPAGATE_OK : PROPAGATE_FAILED;
    return m->rc;
}

int propagate_mpi_end(propagate_mpi *m, int rc)
{
    bool print;
    rc = propagate_mpi_finish(m, rc, NULL, &print, 0.0);
    MPI_Finalize();
    free(m->counts);
    free(m);
    return rc;
}
