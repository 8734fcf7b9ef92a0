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
    /* A cursor of batches all members share, and the hits before each
     * (propagate_cursor.h; NULL where the group has none: mpirun's ranks
     * on several nodes take batches in turn instead). claim: the next
     * batch of a run of `total` photons, of at most `batch` photons and
     * fewer near the end, so that the `contexts`
     * the members have in all finish together; its first photon, count
     * and number in the run into *first, *count, *seq (*count 0: none
     * left). place: batch seq's hit count told, and the hits of every
     * batch before it into *at, once known (a wait for the members still
     * counting them). Both return -1 once a member stopped (stop), which
     * also wakes those waiting. placed: the run's hits so far, and its
     * photons placed into *photons. */
    int (*claim)(propagate_group *g, uint64_t total, uint64_t batch, uint64_t contexts,
                 uint64_t *first, uint64_t *count, uint64_t *seq);
    int (*place)(propagate_group *g, uint64_t seq, uint64_t count, uint64_t hits, uint64_t *at);
    void (*stop)(propagate_group *g);
    uint64_t (*placed)(propagate_group *g, uint64_t *photons);
    /* The members' CUDA start one at a time, in rank order: the driver
     * makes contexts one at a time across a machine and holds the other
     * members' uploads meanwhile, where one after the other the first
     * member starts its work at once. turn waits for the member before
     * (or its end, or the run's stop); turned, once the member's device
     * holds the geometry, lets the next go. NULL: the members start as
     * they come. */
    void (*turn)(propagate_group *g);
    void (*turned)(propagate_group *g);
    /* after the last step, with this member's exit status as the members
     * agreed it: the group's resources returned; g freed */
    void (*end)(propagate_group *g, int status);
} group_ops;

struct propagate_group {
    int rank, size;             /* this member and how many */
    int local_rank, local_size; /* the same on this member's node */
    /* what the members of this member's node share (claims, turns), NULL
     * where they share nothing; member: its place in the node's turns */
    struct propagate_cursor *node;
    int member;
    const char *launcher; /* "mpirun" or "fork", for the summary */
    double init_seconds;  /* making the group: MPI_Init, or the fork */
    const group_ops *ops;
    void *impl;
};

/* propagate_group_mpi_early: under Open MPI's mpirun, before MPI starts,
 * this rank's group with its rank and node-local rank from the launcher's
 * variables, so that its first context can be made while MPI_Init runs
 * (its ops' turn is usable at once; nothing else is before
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
 * the parent once every child has ended, with *status the run's exit
 * status: rank 0's, or PROPAGATE_FAILED when a rank died without ending
 * its part (named on stderr, the others stopped) or the processes could
 * not be made. The parent passes SIGINT, SIGTERM and SIGHUP on to the
 * ranks; a rank whose parent dies gets SIGTERM. */
bool propagate_group_fork(int n, propagate_group **g, int *status);

#endif
