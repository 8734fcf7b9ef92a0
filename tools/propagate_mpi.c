/* prism-propagate's MPI form (propagate_mpi.h). Only Open MPI's and
 * PMIx's launch variables start it, so a plain run of an MPI build never
 * touches MPI. */
#define _POSIX_C_SOURCE 200809L
#include "propagate_mpi.h"

#include <fcntl.h>
#include <mpi.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CAPTURE_BYTES 2048
#define CHUNK_BYTES ((size_t)64 << 20)

struct propagate_mpi {
    int rank, ranks, local_rank;
    const char *final[3]; /* the outputs asked for: hits, out, records */
    char mine[3][512];    /* this rank's files of them */
    uint64_t dims[3][2];
    int saved_stderr;  /* the real stderr while this rank's is kept */
    char capture[512]; /* where it is kept */
    bool finished;
    int rc;
    propagate_options *opt;       /* whose output paths begin replaced */
    uint64_t io_read, io_written; /* gather's bytes: this rank's own rows (and the header) */
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

propagate_mpi *propagate_mpi_begin(propagate_options *o, int *argc, char ***argv, int *rc)
{
    *rc = PROPAGATE_OK;
    if (!under_mpirun())
        return NULL;
    propagate_mpi *m = calloc(1, sizeof *m);
    if (m == NULL || MPI_Init(argc, argv) != MPI_SUCCESS) {
        fprintf(stderr, "prism-propagate: MPI_Init failed\n");
        free(m);
        *rc = PROPAGATE_FAILED;
        return NULL;
    }
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
    o->local_rank = m->local_rank;
    o->scratch_outputs = true;
    m->opt = o;
    if (m->rank > 0)
        o->quiet = true;
    const char *tmp = getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp";
    const char *names[3] = {"hits", "out", "records"};
    const char **paths[3] = {&o->hits, &o->out, &o->records};
    const uint32_t k = o->record_steps ? o->record_steps : PROPAGATE_DEFAULT_RECORD_STEPS;
    for (int i = 0; i < 3; i++) {
        m->final[i] = *paths[i];
        m->dims[i][0] = i == 2 ? k : 4;
        m->dims[i][1] = i == 2 ? 8 : 4;
        if (*paths[i] == NULL)
            continue;
        snprintf(m->mine[i], sizeof m->mine[i], "%s/prism-propagate.%d.%d.%s.npy", tmp,
                 (int)getpid(), m->rank, names[i]);
        *paths[i] = m->mine[i];
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

void propagate_mpi_range(const propagate_mpi *m, uint64_t count, propagate_run_info *run)
{
    /* count * rank / ranks without overflow: count is below 2^56 */
    const unsigned __int128 c = count;
    run->begin = (uint64_t)(c * (unsigned)m->rank / (unsigned)m->ranks);
    run->end = (uint64_t)(c * (unsigned)(m->rank + 1) / (unsigned)m->ranks);
    run->rank = m->rank;
    run->ranks = m->ranks;
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

/* Output i into the one file asked for, without a funnel: the ranks
 * learn their row offsets from each other's counts (MPI_Exscan), rank 0
 * makes the file its final size with the header, and every rank writes
 * its own rows, read back from its own file, at its offset
 * (MPI_File_write_at_all); rank 0 renames the file into place once all
 * succeeded. A rank reads and writes its own rows only, and rank 0 the
 * header too; m->io counts the bytes to show it. */
static int write_shared(propagate_mpi *m, int i, void *buf, size_t chunk_rows)
{
    npy_reader in;
    memset(&in, 0, sizeof in);
    int ok = npy_reader_open(&in, m->mine[i], m->dims[i], 2) == 0;
    if (!ok)
        fprintf(stderr, "prism-propagate: rank %d: %s\n", m->rank, in.error);
    uint64_t rows = ok ? in.rows : 0, offset = 0, total = 0;
    MPI_Exscan(&rows, &offset, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    if (m->rank == 0)
        offset = 0; /* MPI_Exscan leaves rank 0's undefined */
    MPI_Allreduce(&rows, &total, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    /* rank 0: the file, its header for `total` rows, its final size */
    npy_writer w;
    memset(&w, 0, sizeof w);
    char temp[sizeof w.temp] = "";
    uint64_t header = 0;
    if (m->rank == 0 && ok) {
        ok = npy_writer_open(&w, m->final[i], m->dims[i], 2) == 0 &&
             npy_writer_reserve(&w, total) == 0 && npy_writer_finish(&w) == 0;
        if (ok) {
            snprintf(temp, sizeof temp, "%s", w.temp);
            header = npy_writer_header_size(&w);
            m->io_written += header;
        } else {
            fprintf(stderr, "prism-propagate: rank 0: %s\n", w.error);
        }
    }
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Bcast(temp, (int)sizeof temp, MPI_CHAR, 0, MPI_COMM_WORLD);
    MPI_Bcast(&header, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    MPI_File f = MPI_FILE_NULL;
    if (all &&
        MPI_File_open(MPI_COMM_WORLD, temp, MPI_MODE_WRONLY, MPI_INFO_NULL, &f) != MPI_SUCCESS) {
        fprintf(stderr, "prism-propagate: rank %d: cannot open %s with MPI-IO\n", m->rank, temp);
        ok = 0;
    }
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    /* every rank calls the collective write as often as the busiest */
    const size_t row = in.row_bytes;
    uint64_t chunks = row > 0 ? (rows + chunk_rows - 1) / chunk_rows : 0, most = 0;
    MPI_Allreduce(&chunks, &most, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    for (uint64_t c = 0, done = 0; all && c < most; c++) {
        const size_t n = (size_t)(rows - done < chunk_rows ? rows - done : chunk_rows);
        if (n > 0 && npy_reader_read(&in, buf, n) != 0) {
            fprintf(stderr, "prism-propagate: rank %d: %s\n", m->rank, in.error);
            ok = 0;
        }
        m->io_read += n * row;
        const MPI_Offset at = (MPI_Offset)(header + (offset + done) * row);
        if (MPI_File_write_at_all(f, at, buf, ok ? (int)(n * row) : 0, MPI_BYTE,
                                  MPI_STATUS_IGNORE) != MPI_SUCCESS) {
            fprintf(stderr, "prism-propagate: rank %d: writing %s failed\n", m->rank, temp);
            ok = 0;
        }
        m->io_written += ok ? n * row : 0;
        done += n;
    }
    if (f != MPI_FILE_NULL) {
        if (MPI_File_sync(f) != MPI_SUCCESS)
            ok = 0;
        MPI_File_close(&f);
    }
    npy_reader_close(&in);
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    int rc = all ? PROPAGATE_OK : PROPAGATE_FAILED;
    if (m->rank == 0) {
        if (all && npy_writer_commit(&w) != 0) {
            fprintf(stderr, "prism-propagate: rank 0: %s\n", w.error);
            rc = PROPAGATE_FAILED;
        }
        npy_writer_abort(&w);
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return rc;
}

/* The outputs, in rank order, into the files asked for. */
static int gather(propagate_mpi *m)
{
    void *buf = malloc(CHUNK_BYTES);
    int ok = buf != NULL, all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all) {
        fprintf(stderr, "prism-propagate: rank %d: no memory to write the outputs\n", m->rank);
        free(buf);
        return PROPAGATE_FAILED;
    }
    int rc = PROPAGATE_OK;
    for (int i = 0; i < 3 && rc == PROPAGATE_OK; i++) {
        if (m->final[i] == NULL)
            continue;
        const size_t row = 4 * (size_t)(m->dims[i][0] * m->dims[i][1]);
        rc = write_shared(m, i, buf, CHUNK_BYTES / row);
    }
    free(buf);
    return rc;
}

/* Rank 0: each rank's bytes read and written by gather, and its time
 * before its run, for the summary. */
static void gather_io(propagate_mpi *m, propagate_summary *s, double setup)
{
    const uint64_t mine[2] = {m->io_read, m->io_written};
    uint64_t *all = m->rank == 0 ? calloc((size_t)m->ranks * 2, sizeof *all) : NULL;
    double *setups = m->rank == 0 ? calloc((size_t)m->ranks, sizeof *setups) : NULL;
    MPI_Gather(mine, 2, MPI_UINT64_T, all, 2, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    MPI_Gather(&setup, 1, MPI_DOUBLE, setups, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (m->rank == 0 && s != NULL && all != NULL && setups != NULL) {
        s->rank_io = all;
        s->rank_setup = setups;
        s->ranks = (size_t)m->ranks;
        return;
    }
    free(all);
    free(setups);
}

static void remove_mine(propagate_mpi *m)
{
    for (int i = 0; i < 3; i++)
        if (m->final[i] != NULL)
            unlink(m->mine[i]);
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
    int worst = agree(m, rc);
    if (worst == PROPAGATE_OK) {
        sum_summary(m, sum);
        worst = gather(m);
        gather_io(m, sum, setup);
        *print = m->rank == 0 && worst == PROPAGATE_OK;
    }
    remove_mine(m);
    /* the summary names the files asked for, not this rank's */
    const char **paths[3] = {&m->opt->hits, &m->opt->out, &m->opt->records};
    for (int i = 0; i < 3; i++)
        *paths[i] = m->final[i];
    m->rc = worst == PROPAGATE_OK ? PROPAGATE_OK : PROPAGATE_FAILED;
    return m->rc;
}

int propagate_mpi_end(propagate_mpi *m, int rc)
{
    bool print;
    rc = propagate_mpi_finish(m, rc, NULL, &print, 0.0);
    MPI_Finalize();
    free(m);
    return rc;
}
