/* The ranks of an mpirun job as a propagate_group. Only Open MPI's and
 * PMIx's launch variables make one, so a plain run of an MPI build never
 * touches MPI. MPI is called from the main thread only (the stream's sink
 * runs there); the engine's threads never call it.
 *
 * Under Open MPI's mpirun the group is made before MPI starts, from the
 * launcher's variables, so that the rank's CUDA start runs while MPI_Init
 * does. The ranks of a node then map one file of the job's session
 * directory (which mpirun removes with the job): a propagate_cursor.
 * Their CUDA starts take turns through it, and where every rank of the
 * job is on that node they claim batches from it as forked processes do,
 * so a rank whose device starts first takes more of the run. Ranks on
 * several nodes take batches in turn. */
#define _GNU_SOURCE /* sched_setaffinity */
#include <mpi.h>
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "propagate_cursor.h"
#include "propagate_group.h"
#include "propagate_launch.h"

typedef struct mpi_group {
    char path[512]; /* the node's shared file (the group's node, where mapped) */
    bool started;   /* MPI_Init done */
} mpi_group;

static mpi_group *impl(propagate_group *g)
{
    return g->impl;
}

static bool under_mpirun(void)
{
    return getenv("OMPI_COMM_WORLD_SIZE") != NULL || getenv("PMIX_RANK") != NULL ||
           getenv("PMI_SIZE") != NULL;
}

static MPI_Op op_of(group_op op)
{
    return op == GROUP_SUM ? MPI_SUM : op == GROUP_MIN ? MPI_MIN : MPI_MAX;
}

static void mpi_allreduce_u64(propagate_group *g, uint64_t *v, size_t n, group_op op)
{
    (void)g;
    MPI_Allreduce(MPI_IN_PLACE, v, (int)n, MPI_UINT64_T, op_of(op), MPI_COMM_WORLD);
}

static void mpi_allreduce_f64(propagate_group *g, double *v, size_t n, group_op op)
{
    (void)g;
    MPI_Allreduce(MPI_IN_PLACE, v, (int)n, MPI_DOUBLE, op_of(op), MPI_COMM_WORLD);
}

static void mpi_bcast(propagate_group *g, void *buf, size_t bytes)
{
    (void)g;
    MPI_Bcast(buf, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
}

static void mpi_allgather(propagate_group *g, const void *mine, size_t bytes, void *all)
{
    (void)g;
    MPI_Allgather(mine, (int)bytes, MPI_BYTE, all, (int)bytes, MPI_BYTE, MPI_COMM_WORLD);
}

static void mpi_gather(propagate_group *g, const void *mine, size_t bytes, void *all)
{
    (void)g;
    MPI_Gather(mine, (int)bytes, MPI_BYTE, all, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
}

static void mpi_host(propagate_group *g, char *name, size_t size)
{
    (void)g;
    char host[MPI_MAX_PROCESSOR_NAME] = "";
    int len = 0;
    MPI_Get_processor_name(host, &len);
    snprintf(name, size, "%s", host);
}

static void mpi_abort(propagate_group *g, int code)
{
    (void)g;
    MPI_Abort(MPI_COMM_WORLD, code);
}

static void mpi_end(propagate_group *g, int status)
{
    (void)status; /* mpirun takes it from the exit */
    mpi_group *m = impl(g);
    if (g->node != NULL) {
        propagate_cursor_ended(g->node, g->member);
        propagate_cursor_detach(g->node);
    }
    if (m->started)
        MPI_Finalize();
    free(m);
    free(g);
}

static const group_ops mpi_ops = {.allreduce_u64 = mpi_allreduce_u64,
                                  .allreduce_f64 = mpi_allreduce_f64,
                                  .bcast = mpi_bcast,
                                  .allgather = mpi_allgather,
                                  .gather = mpi_gather,
                                  .host = mpi_host,
                                  .abort = mpi_abort,
                                  .end = mpi_end};

static int env_int(const char *name, int fallback)
{
    const char *v = getenv(name);
    return v != NULL && *v ? atoi(v) : fallback;
}

/* The node's file: in the job's session directory, named by the job. */
static bool node_path(char *path, size_t size)
{
    const char *dir = getenv("PMIX_SERVER_TMPDIR"), *job = getenv("PMIX_NAMESPACE");
    if (dir == NULL)
        dir = getenv("OMPI_MCA_orte_jobfam_session_dir");
    if (job == NULL)
        job = getenv("OMPI_MCA_ess_base_jobid");
    if (dir == NULL || job == NULL || !*dir || !*job)
        return false;
    const int n = snprintf(path, size, "%s/prism-propagate-", dir);
    if (n < 0 || (size_t)n >= size)
        return false;
    size_t k = (size_t)n;
    for (const char *c = job; *c && k + 1 < size; c++) /* a namespace may hold '/' */
        path[k++] = *c == '/' ? '_' : *c;
    path[k] = 0;
    return k + 1 < size;
}

/* Open MPI binds each rank to one core when it is told nothing and runs
 * at most two ranks; a rank's threads (the devices' feeders, the hits'
 * writer, the load) then share that core (two H100s, 10^9 photons: 4.92
 * and 4.95 s bound, 4.43 s with --bind-to none). A rank bound by that
 * default (no binding or mapping policy among its variables) takes the
 * CPUs its launcher may use and starts itself anew (an exec, before MPI
 * or any thread has started): OpenMP fixes the thread count of threads
 * other than the main one when it is loaded, so widened in place, the
 * engine's workers kept one thread for their loops (page-locking the
 * hits' memory took 0.16-0.24 s instead of 0.04 s). A --bind-to or
 * --map-by of the user's is kept. $PRISM_PROPAGATE_WIDENED carries the
 * CPUs the rank had into the new image, which says so. */
#define WIDENED "PRISM_PROPAGATE_WIDENED"

static void unbind_default(char **argv)
{
    const char *bound = getenv("OMPI_MCA_orte_bound_at_launch");
    if (getenv(WIDENED) != NULL || bound == NULL || strcmp(bound, "1") != 0 ||
        getenv("OMPI_MCA_hwloc_base_binding_policy") != NULL ||
        getenv("OMPI_MCA_rmaps_base_mapping_policy") != NULL)
        return;
    cpu_set_t mine, launcher;
    if (sched_getaffinity(0, sizeof mine, &mine) != 0 ||
        sched_getaffinity(getppid(), sizeof launcher, &launcher) != 0)
        return;
    const int had = CPU_COUNT(&mine);
    if (CPU_COUNT(&launcher) <= had || sched_setaffinity(0, sizeof launcher, &launcher) != 0)
        return;
    char text[16];
    snprintf(text, sizeof text, "%d", had);
    setenv(WIDENED, text, 1);
    fflush(NULL);
    execv("/proc/self/exe", argv);
    /* no exec: this image goes on, widened, its workers' loops on one thread */
}

/* The CPUs the rank had before it was widened (0: it was not), said by
 * rank 0 unless quiet. */
static void say_widened(int rank, bool quiet)
{
    const char *w = getenv(WIDENED);
    const int had = w != NULL ? atoi(w) : 0;
    unsetenv(WIDENED);
    if (had <= 0 || rank != 0 || quiet)
        return;
    cpu_set_t now;
    if (sched_getaffinity(0, sizeof now, &now) == 0)
        fprintf(stderr,
                "prism-propagate: mpirun bound each rank to %d CPU%s by its default; the ranks "
                "run on the %d it may use (mpirun's --bind-to chooses)\n",
                had, had == 1 ? "" : "s", CPU_COUNT(&now));
}

/* Rank 0, unless quiet: mpirun's own start, where it took long. */
static void say_slow_launch(const propagate_group *g, bool quiet)
{
    char note[512];
    if (g->rank == 0 && !quiet &&
        propagate_launch_note(g->launch_seconds, getenv("HWLOC_COMPONENTS"), note, sizeof note))
        fprintf(stderr, "prism-propagate: %s\n", note);
}

propagate_group *propagate_group_mpi_early(char **argv, bool quiet)
{
    const char *local = getenv("OMPI_COMM_WORLD_LOCAL_RANK"),
               *world = getenv("OMPI_COMM_WORLD_RANK");
    if (!under_mpirun() || local == NULL || world == NULL)
        return NULL;
    unbind_default(argv); /* returns only where it was not widened, or widened anew */
    propagate_group *g = calloc(1, sizeof *g);
    mpi_group *m = calloc(1, sizeof *m);
    if (g == NULL || m == NULL) {
        free(g);
        free(m);
        return NULL; /* made after MPI_Init instead, or said there */
    }
    *g = (propagate_group){.rank = atoi(world),
                           .size = env_int("OMPI_COMM_WORLD_SIZE", 1),
                           .local_rank = atoi(local),
                           .local_size = env_int("OMPI_COMM_WORLD_LOCAL_SIZE", 1),
                           .launcher = "mpirun",
                           .ops = &mpi_ops,
                           .impl = m};
    g->member = g->local_rank;
    g->launch_seconds = propagate_launch_seconds(getpid(), getppid());
    say_widened(g->rank, quiet);
    say_slow_launch(g, quiet);
    char err[768];
    if (node_path(m->path, sizeof m->path) &&
        (g->node = propagate_cursor_attach(m->path, err, sizeof err)) == NULL)
        fprintf(stderr, /* what follows (batches in turn, or a job that stops) is said later */
                "prism-propagate: rank %d: no cursor shared with the node's ranks: %s\n", g->rank,
                err);
    /* the test hook $PRISM_PROPAGATE_TEST_APART: the ranks as on nodes apart */
    const char *apart = getenv("PRISM_PROPAGATE_TEST_APART");
    g->claims = g->node != NULL && g->local_size == g->size && g->size <= PROPAGATE_MAX_RANKS &&
                !(apart != NULL && strcmp(apart, "1") == 0);
    return g;
}

/* After MPI_Init: the ranks check that all of them claim batches from
 * their node's file, as their group says (made from the launcher's variables
 * before MPI started), or none does, and the file's name goes (every rank
 * has mapped it). A rank does not claim from a file that holds another
 * run's cursor, nor where MPI finds the ranks on several nodes. Returns
 * false (the message on stderr) when some would claim and others not. */
static bool agree_on_cursor(propagate_group *g)
{
    mpi_group *m = impl(g);
    const bool planned = g->claims;
    if (g->claims && (g->node->next_seq != 0 || g->node->stopped)) {
        fprintf(stderr, "prism-propagate: rank %d: %s holds another run's batches\n", g->rank,
                m->path);
        g->claims = false;
    }
    if (g->claims && g->local_size != g->size) { /* the launcher said one node, MPI not */
        fprintf(stderr, "prism-propagate: rank %d: %d of the %d ranks share its node\n", g->rank,
                g->local_size, g->size);
        g->claims = false;
    }
    int agreed[2] = {g->claims, !planned}; /* all claim; none was to */
    MPI_Allreduce(MPI_IN_PLACE, agreed, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (g->node != NULL && g->local_rank == 0)
        unlink(m->path); /* after the reduce: every rank of the node has it mapped */
    if (agreed[0] || agreed[1])
        return true;
    if (g->claims)
        fprintf(stderr,
                "prism-propagate: rank %d: not every rank can claim batches from %s, the "
                "ranks' shared cursor: no output written\n",
                g->rank, m->path);
    return false;
}

propagate_group *propagate_group_mpi(propagate_group *early, int *argc, char ***argv, bool *failed)
{
    *failed = false;
    if (early == NULL && !under_mpirun())
        return NULL;
    propagate_group *g = early != NULL ? early : calloc(1, sizeof *g);
    mpi_group *m = early != NULL ? impl(early) : calloc(1, sizeof *m);
    int provided = 0;
    const double t0 = omp_get_wtime();
    if (g == NULL || m == NULL ||
        MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
        fprintf(stderr, "prism-propagate: MPI_Init failed\n");
        if (early == NULL) {
            free(g);
            free(m);
        }
        *failed = true;
        return NULL;
    }
    m->started = true;
    g->init_seconds = omp_get_wtime() - t0;
    g->impl = m;
    if (early == NULL) {
        g->launcher = "mpirun";
        g->ops = &mpi_ops;
        g->launch_seconds = propagate_launch_seconds(getpid(), getppid());
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &g->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g->size);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, g->rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &g->local_rank);
    g->local_size = 1;
    MPI_Comm_size(node, &g->local_size);
    MPI_Comm_free(&node);
    if (early != NULL && !agree_on_cursor(g)) {
        *failed = true;
        return NULL; /* early is still the caller's, to end */
    }
    return g;
}
