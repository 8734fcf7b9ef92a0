/* prism-propagate as one rank of several processes that share a run: the
 * ranks of an mpirun job, or the processes prism-propagate forks, one a
 * device (propagate_group.h makes either). Each rank loads the detector,
 * takes one device by its node-local rank, and the ranks claim the run's
 * batches from a cursor they share where their group has one (ranks on
 * one node), else take them in turn (batch k on rank k mod R:
 * prism_propagate_stream's stride and phase), with photons generated from
 * the seed and their indices (or read from --photons, which every rank
 * must see). Each rank writes its own rows straight into the one file of
 * each output, at their offsets: --out and --records by photon index, the
 * hits after those of every batch before theirs. No rank reads or writes
 * another's rows, nothing is copied after the run, and the files are the
 * bytes one process writes; rank 0 writes the headers and renames them
 * into place, and prints the summed summary. A rank that fails makes
 * every rank stop at their next claim or round and exit 1 after rank 0
 * has printed what the failing rank said, named by rank and host: nobody
 * waits on it. */
#ifndef PRISM_TOOLS_PROPAGATE_RANKS_H
#define PRISM_TOOLS_PROPAGATE_RANKS_H

#include "propagate_group.h"
#include "propagate_tool.h"

typedef struct propagate_ranks propagate_ranks;

/* This process's part of the group g (which it now owns): o->local_rank
 * and o->quiet (ranks > 0) set, stderr kept for rank 0 to show. NULL
 * when there is no memory for it (the group is then ended). */
propagate_ranks *propagate_ranks_begin(propagate_options *o, propagate_group *g);
/* Rank 0 checks the outputs (propagate_check_outputs) and tells the
 * others, then makes their files, which every rank opens: every rank gets
 * PROPAGATE_FAILED when one cannot be written (the message on rank 0's
 * stderr), before any loads. */
int propagate_ranks_check_outputs(propagate_ranks *m);
/* The run of `count` photons: run's rank, ranks and ranked set. Returns
 * PROPAGATE_FAILED when the test hook $PRISM_PROPAGATE_TEST_FAIL names
 * this rank (it then fails as a rank whose input is bad does). */
int propagate_ranks_share(propagate_ranks *m, uint64_t count, propagate_run_info *run);
/* Every rank once, before its run (ok) or instead of it (ok false, from
 * propagate_ranks_finish). Ranks that take batches in turn agree on the
 * batch (the least of those proposed in *batch, set to it): 0 when every
 * rank is ready; -1 otherwise (the failing rank's message comes at the
 * agreement). Ranks that claim batches meet no one here: each keeps its
 * own *batch and starts at once; one not ok stops the cursor, and -1. */
int propagate_ranks_ready(propagate_ranks *m, bool ok, uint64_t count, uint64_t *batch);
/* The sink's part for this rank's batch b: the round's exchange, then its
 * rows written at their offsets. 0, or -1 with the message in err. The
 * test hooks $PRISM_PROPAGATE_TEST_KILL and _STOP name a rank that kills
 * itself (SIGKILL), or fails as a write does, at its first batch. */
int propagate_ranks_write(propagate_ranks *m, const prism_propagate_batch *b, char *err,
                          size_t err_size);
/* This process's rank in its group: rank 0 alone writes what there is one
 * of for the whole job (the saved gensteps). */
int propagate_ranks_rank(const propagate_ranks *m);
/* The ranks claim batches from a cursor they share (forked processes,
 * mpirun's ranks on one node) instead of taking them in turn. */
bool propagate_ranks_claiming(const propagate_ranks *m);
/* The next batch from that cursor (prism_propagate_stream_desc.claim): its
 * first photon and count (0: the run has none left), at most `batch`;
 * `contexts` this rank's. 0, or -1 when another rank stopped. */
int propagate_ranks_claim(propagate_ranks *m, uint64_t batch, uint64_t contexts, uint64_t *first,
                          uint64_t *count);
/* A claimed batch's hit count told to the cursor as soon as it is known
 * (prism_propagate_stream_desc.counted), so that the ranks' writes, each
 * waiting for the counts of the batches claimed before its own, wait for
 * those batches' propagation only, not for other ranks' writes. Nothing
 * where the ranks do not claim. */
void propagate_ranks_counted(propagate_ranks *m, const prism_propagate_batch *b);
/* Photons done, for progress: every rank's placed so far where they
 * claim, else `own`. */
uint64_t propagate_ranks_photons_done(propagate_ranks *m, uint64_t own);
/* After this rank's stream: the rounds it took no part in, as none (ok) or
 * as failed (ok false). 0 when every rank got through every round. */
int propagate_ranks_drain(propagate_ranks *m, bool ok);
/* This rank stopped only because another failed (that one says why). */
bool propagate_ranks_stopped_by_other(propagate_ranks *m);
/* After this rank's batches (rc its status so far): the rounds it took no
 * part in, the agreement, and the files committed (or removed). Every rank
 * closes once, in the same place among the group's exchanges; a later call
 * returns the first's status. Returns the job's exit status. */
int propagate_ranks_close(propagate_ranks *m, int rc);
/* After this rank's run (rc its exit status; sum NULL when it never got
 * that far): closed (propagate_ranks_close) if not yet, the summed
 * summary into *sum on rank 0 (setup: this rank's seconds before its
 * run). Returns the job's exit status; *print is true on the rank that
 * prints the summary. */
int propagate_ranks_finish(propagate_ranks *m, int rc, propagate_summary *sum, bool *print,
                           double setup);
/* finish (with rc) if not yet done, the group ended, m freed. Returns the
 * exit status. The test hook $PRISM_PROPAGATE_TEST_KILL_AFTER names a rank
 * that kills itself (SIGKILL) here, its part done; _HOLD_AFTER one that
 * waits here for the file $PRISM_PROPAGATE_TEST_HOLD_FILE (a slow exit). */
int propagate_ranks_end(propagate_ranks *m, int rc);
/* Where the rank `rank` of process `pid` keeps its stderr until the
 * agreement ($TMPDIR, else /tmp). */
void propagate_ranks_capture_name(char *path, size_t size, long pid, int rank);

#endif
