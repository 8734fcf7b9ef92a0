/* prism-propagate under mpirun (builds with PRISM_MPI): each rank loads the
 * detector, takes one device by its node-local rank, and the ranks take
 * the run's batches in turn (batch k on rank k mod R: prism_propagate_stream's
 * stride and phase), with photons generated from the seed and their
 * indices (or read from --photons, which every rank must see). Each rank
 * writes its own rows straight into the one file of each output, at their
 * offsets: --out and --records by photon index, the hits after every
 * round's exchange of hit counts (MPI_Allgather). No rank reads or writes
 * another's rows, nothing is copied after the run, and the files are the
 * bytes one process writes; rank 0 writes the headers and renames them
 * into place, and prints the summed summary. A rank that fails makes every
 * rank stop at the next round and exit 1 after rank 0 has printed what the
 * failing rank said, named by rank and host: nobody waits on it. */
#ifndef PRISM_TOOLS_PROPAGATE_MPI_H
#define PRISM_TOOLS_PROPAGATE_MPI_H

#include "propagate_tool.h"

typedef struct propagate_mpi propagate_mpi;

/* Before MPI starts: under Open MPI's mpirun, o->local_rank and o->quiet as
 * propagate_mpi_begin will set them, from the launcher's variables, so the
 * rank's first context can be made while MPI_Init runs. false when they
 * are not known (then begin sets them). */
bool propagate_mpi_prepare(propagate_options *o);
/* Under mpirun (Open MPI's or PMIx's variables set) in an MPI build:
 * MPI_Init, o's outputs replaced by this rank's files, o->local_rank set,
 * stderr kept for rank 0 to show; NULL otherwise (a plain run). On a
 * setup failure *rc is set and NULL returned. */
propagate_mpi *propagate_mpi_begin(propagate_options *o, int *argc, char ***argv, int *rc);
/* Rank 0 checks the outputs it will gather into (propagate_check_outputs)
 * and tells the others: every rank gets PROPAGATE_FAILED when one cannot
 * be written (the message on rank 0's stderr), before any loads. */
int propagate_mpi_check_outputs(propagate_mpi *m);
/* The run of `count` photons: run's rank, ranks and mpi set. */
void propagate_mpi_share(propagate_mpi *m, uint64_t count, propagate_run_info *run);
/* Every rank once, before its run (ok) or instead of it (ok false, from
 * propagate_mpi_finish): agree on the batch (the least of those proposed
 * in *batch, set to it) and make the outputs' files. 0 when every rank is
 * ready; -1 otherwise (the failing rank's message comes at the agreement). */
int propagate_mpi_ready(propagate_mpi *m, bool ok, uint64_t count, uint64_t *batch);
/* The sink's part for this rank's batch b: the round's exchange, then its
 * rows written at their offsets. 0, or -1 with the message in err. */
int propagate_mpi_write(propagate_mpi *m, const prism_propagate_batch *b, char *err,
                        size_t err_size);
/* After this rank's stream: the rounds it took no part in, as none (ok) or
 * as failed (ok false). 0 when every rank got through every round. */
int propagate_mpi_drain(propagate_mpi *m, bool ok);
/* This rank stopped only because another failed (that one says why). */
bool propagate_mpi_stopped_by_other(const propagate_mpi *m);
/* After this rank's run (rc its exit status; sum NULL when it never got
 * that far): the agreement, the files committed (or removed), the summed
 * summary into *sum on rank 0 (setup: this rank's seconds before its run). Returns the job's exit status; *print is true on the
 * rank that prints the summary. */
int propagate_mpi_finish(propagate_mpi *m, int rc, propagate_summary *sum, bool *print,
                         double setup);
/* finish (with rc) if not yet done, MPI_Finalize, free. Returns the exit status. */
int propagate_mpi_end(propagate_mpi *m, int rc);

#endif
