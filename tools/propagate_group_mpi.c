/* The ranks of an mpirun job as a propagate_group. Only Open MPI's and
 * PMIx's launch variables make one, so a plain run of an MPI build never
 * touches MPI. MPI is called from the main thread only (the stream's sink
 * runs there); the engine's threads never call it. */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "propagate_group.h"

static bool under_mpirun(void)
{
    return getenv("OMPI_COMM_WORLD_SIZE") != NULL || getenv("PMIX_RANK") != NULL ||
           getenv("PMI_SIZE") != NULL;
}

bool propagate_group_mpi_early(int *local_rank, int *rank)
{
    const char *local = getenv("OMPI_COMM_WORLD_LOCAL_RANK"),
               *world = getenv("OMPI_COMM_WORLD_RANK");
    if (!under_mpirun() || local == NULL || world == NULL)
        return false;
    *local_rank = atoi(local);
    *rank = atoi(world);
    return true;
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
    MPI_Finalize();
    free(g);
}

/* no shared cursor, no turns: the ranks take batches in turn */
static const group_ops mpi_ops = {.allreduce_u64 = mpi_allreduce_u64,
                                  .allreduce_f64 = mpi_allreduce_f64,
                                  .bcast = mpi_bcast,
                                  .allgather = mpi_allgather,
                                  .gather = mpi_gather,
                                  .host = mpi_host,
                                  .abort = mpi_abort,
                                  .end = mpi_end};

propagate_group *propagate_group_mpi(int *argc, char ***argv, bool *failed)
{
    *failed = false;
    if (!under_mpirun())
        return NULL;
    propagate_group *g = calloc(1, sizeof *g);
    int provided = 0;
    const double t0 = omp_get_wtime();
    if (g == NULL || MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
        fprintf(stderr, "prism-propagate: MPI_Init failed\n");
        free(g);
        *failed = true;
        return NULL;
    }
    g->init_seconds = omp_get_wtime() - t0;
    g->launcher = "mpirun";
    g->ops = &mpi_ops;
    MPI_Comm_rank(MPI_COMM_WORLD, &g->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g->size);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, g->rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &g->local_rank);
    g->local_size = 1;
    MPI_Comm_size(node, &g->local_size);
    MPI_Comm_free(&node);
    return g;
}
