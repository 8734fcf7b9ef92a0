/* The processes that share one prism-propagate run, and the few steps they
 * take together. Two kinds make them: mpirun (propagate_group_mpi.c, in
 * builds with MPI), and prism-propagate itself, which forks one process a
 * device so that each starts CUDA on its own device at once with the
 * others (propagate_group_fork.c; the driver brings up the devices one
 * process sees one after the other). What the ranks do with these steps
 * is propagate_ranks.h's.
 *
 * Every member takes every step, in the same order; each step's result is
 * the same on every member (gather's on rank 0). A member that dies stops
 * the group: mpirun's job ends, and a forked group's parent stops the
 * others. */
#ifndef PRISM_TOOLS_PROPAGATE_GROUP_H
#define PRISM_TOOLS_PROPAGATE_GROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum { GROUP_SUM, GROUP_MIN, GROUP_MAX } group_op;

typedef struct propagate_group propagate_group;

typedef struct group_ops {
    /* v[0..n) of every member combined by op, into every member's v */
    void (*allreduce_u64)(propagate_group *g, uint64_t *v, size_t n, group_op op);
    void (*allreduce_f64)(propagate_group *g, double *v, size_t n, group_op op);
    /* rank 0's buf[0..bytes) into every member's */
    void (*bcast)(propagate_group *g, void *buf, size_t bytes);
    /* every member's `bytes` bytes, in rank order, into all (every
     * member's for allgather, rank 0's only for gather) */
    void (*allgather)(propagate_group *g, const void *mine, size_t bytes, void *all);
    void (*gather)(propagate_group *g, const void *mine, size_t bytes, void *all);
    /* this member's host, for messages */
    void (*host)(propagate_group *g, char *name, size_t size);
    /* stop every member now, with this exit status */
    void (*abort)(propagate_group *g, int code);
    /* after the last step, with this member's exit status as the members
     * agreed it: the group's resources returned; g freed */
    void (*end)(propagate_group *g, int status);
} group_ops;

struct propagate_group {
    int rank, size;             /* this member and how many */
    int local_rank, local_size; /* the same on this member's node */
    /* What the members of this member's node share (propagate_cursor.h),
     * NULL where they share nothing; member: its place there. With a node,
     * its members start CUDA one at a time (propagate_node_turn); and
     * where `claims`, every member of the group is on that node and takes
     * its batches from the node's cursor (propagate_cursor_claim and
     * place), where without it batch k is rank k mod size's. */
    struct propagate_cursor *node;
    int member;
    bool claims;
    const char *launcher;  /* "mpirun" or "fork", for the summary */
    double init_seconds;   /* making the group: MPI_Init, or the fork */
    double launch_seconds; /* its launcher's start to its own (mpirun's, or the
                              forking process's; propagate_launch.h), -1 unknown */
    const group_ops *ops;
    void *impl;
};

/* propagate_group_mpi_early: under Open MPI's mpirun, before MPI starts,
 * this rank's group with its rank and node-local rank from the launcher's
 * variables, so that its first context can be made while MPI_Init runs
 * (its node's turns are usable at once; nothing else is before
 * propagate_group_mpi); NULL when they are not known. Called before any
 * thread starts: a rank that mpirun bound to a core by its default is
 * given the CPUs mpirun may use and runs argv anew (said on stderr by
 * rank 0 unless quiet).
 * propagate_group_mpi: under mpirun (Open MPI's or PMIx's variables set),
 * MPI_Init and the group of the job's ranks: `early`, now started, or a
 * new one; NULL otherwise (a plain run, early NULL), or on failure with
 * *failed set and the message on stderr (early is then still to be ended
 * by its ops' end). In a build without MPI they are stand-ins: NULL. */
#ifdef PRISM_HAVE_MPI
propagate_group *propagate_group_mpi_early(char **argv, bool quiet);
propagate_group *propagate_group_mpi(propagate_group *early, int *argc, char ***argv, bool *failed);
#else
static inline propagate_group *propagate_group_mpi_early(char **argv, bool quiet)
{
    (void)argv;
    (void)quiet;
    return NULL;
}

static inline propagate_group *propagate_group_mpi(propagate_group *early, int *argc, char ***argv,
                                                   bool *failed)
{
    (void)early;
    (void)argc;
    (void)argv;
    *failed = false;
    return NULL;
}
#endif

/* `n` processes forked from this one (n >= 2), before it starts any
 * thread. Returns true in each child, with *g its group. Returns false in
 * the parent once every child has ended its part (its ops' end: what it
 * printed is out, the outputs are settled; its exit goes on without the
 * parent), with *status the run's exit status: rank 0's, or
 * PROPAGATE_FAILED when a rank died without ending its part (named on
 * stderr, the others stopped and waited for) or the processes could not
 * be made. The parent passes SIGINT, SIGTERM and SIGHUP on to the
 * ranks; a rank whose parent dies before the rank ended its part gets
 * SIGTERM. */
bool propagate_group_fork(int n, propagate_group **g, int *status);

#endif
