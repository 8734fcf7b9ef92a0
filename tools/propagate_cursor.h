/* What the processes of one node share during a prism-propagate run, in
 * memory each of them maps: a cursor of the run's batches, which they
 * claim and whose hits' places they learn (propagate_group.claims), and
 * the turns of their CUDA start (propagate_node_turn). The
 * forked processes map it before the fork (propagate_group_fork.c); the
 * ranks of an mpirun job on one node map a file of the job's session
 * directory, before MPI starts (propagate_group_mpi.c), since their CUDA
 * start, which takes turns, runs while MPI_Init does. */
#ifndef PRISM_TOOLS_PROPAGATE_CURSOR_H
#define PRISM_TOOLS_PROPAGATE_CURSOR_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "propagate_group.h"
#include "propagate_tool.h"

/* Batches claimed and not yet placed: at most a few a context */
#define CURSOR_RING 1024
/* How long a member waits for the one before to pass its CUDA start's
 * turn before it starts anyway (a member that never mapped the cursor,
 * or one slow to load a large detector) */
#define CURSOR_TURN_LIMIT 10.0

typedef struct cursor_entry {
    uint64_t seq, count, hits, at;
    int state;
} cursor_entry;

typedef struct propagate_cursor {
    int made;                        /* a file's: 0 new, 1 being made, 2 ready */
    int ended[PROPAGATE_MAX_RANKS];  /* a member that took its last step */
    int turned[PROPAGATE_MAX_RANKS]; /* a member whose CUDA start is done */
    pthread_mutex_t lock;            /* the batch cursor, under lock */
    pthread_cond_t changed;
    uint64_t next_first, next_seq;    /* photons and batches claimed */
    uint64_t placed_upto;             /* batches whose hits' place is known */
    uint64_t hits_upto, photons_upto; /* their hits and photons */
    int stopped;
    cursor_entry ring[CURSOR_RING]; /* batch seq at seq mod CURSOR_RING */
} propagate_cursor;

/* c's lock made for processes to share (c zeroed, in shared memory).
 * 0, or an errno value. */
int propagate_cursor_init(propagate_cursor *c);

/* The file `path`, made by the first of the node's processes to come and
 * opened by the others, mapped: the cursor they share. NULL, with why in
 * err, when it cannot be. propagate_cursor_detach unmaps it. */
propagate_cursor *propagate_cursor_attach(const char *path, char *err, size_t err_size);
void propagate_cursor_detach(propagate_cursor *c);

/* claim: the next batch of a run of `total` photons, of at most `batch`
 * photons and fewer near the end, so that the `contexts` the members have
 * in all finish together; its first photon, count and number in the run
 * into *first, *count, *seq (*count 0: none left). count: batch seq's hit
 * count told, without waiting, as soon as it is known (before the batch's
 * hits are written: a member whose writes wait for another's batches
 * holds no one up with its own). place: its count told unless count was,
 * and the hits of every batch before it into *at, once known (a wait for
 * the members still counting them). claim and place return -1 once a
 * member stopped the cursor (stop), which also wakes those waiting.
 * placed: the run's hits so far, and its photons placed into *photons. */
int propagate_cursor_claim(propagate_cursor *c, uint64_t total, uint64_t batch, uint64_t contexts,
                           uint64_t *first, uint64_t *count, uint64_t *seq);
void propagate_cursor_count(propagate_cursor *c, uint64_t seq, uint64_t count, uint64_t hits);
int propagate_cursor_place(propagate_cursor *c, uint64_t seq, uint64_t count, uint64_t hits,
                           uint64_t *at);
void propagate_cursor_stop(propagate_cursor *c);
uint64_t propagate_cursor_placed(propagate_cursor *c, uint64_t *photons);

/* turn: member `member` (> 0) waits until member - 1 has passed the turn,
 * ended, or the run stopped, or `limit` seconds passed (a member that
 * never maps the cursor holds no one up for longer). turned: `member`
 * passes the turn. ended: `member` took its last step. */
void propagate_cursor_turn(propagate_cursor *c, int member, double limit);
void propagate_cursor_turned(propagate_cursor *c, int member);
void propagate_cursor_ended(propagate_cursor *c, int member);
bool propagate_cursor_has_ended(propagate_cursor *c, int member);

/* The members' CUDA start one at a time, in the order of g->member: the
 * driver brings up devices and contexts for one process at a time across
 * a machine and holds the other members' uploads meanwhile, where one
 * after the other the first member starts its work at once. turn waits
 * for the member before (or its end, or the run's stop); turned, once the
 * member's device holds the geometry, lets the next go. Neither does
 * anything for a group without a node (g->node NULL), or no group. */
void propagate_node_turn(propagate_group *g);
void propagate_node_turned(propagate_group *g);

#endif
