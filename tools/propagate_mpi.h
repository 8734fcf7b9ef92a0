/* prism-propagate under mpirun (builds with PRISM_MPI): each rank loads the
 * detector, takes one device by its node-local rank and propagates its
 * share [N r / R, N (r+1) / R) of the run's photons, generated from the
 * seed and their indices (or read from --photons, which every rank must
 * see), into files of its own; then the ranks agree on success, learn
 * their row offsets from each other's counts, and each writes its own rows
 * at its offset of the one file asked for (MPI-IO; rank 0 the header), so
 * no rank carries another's photons (the same bytes as one process); rank 0
 * prints the summed summary. A rank that fails makes every
 * rank exit 1 after rank 0 has printed what the failing rank said, named
 * by rank and host: nobody waits on it. */
#ifndef PRISM_TOOLS_PROPAGATE_MPI_H
#define PRISM_TOOLS_PROPAGATE_MPI_H

#include "propagate_tool.h"

typedef struct propagate_mpi propagate_mpi;

/* Under mpirun (Open MPI's or PMIx's variables set) in an MPI build:
 * MPI_Init, o's outputs replaced by this rank's files, o->local_rank set,
 * stderr kept for rank 0 to show; NULL otherwise (a plain run). On a
 * setup failure *rc is set and NULL returned. */
propagate_mpi *propagate_mpi_begin(propagate_options *o, int *argc, char ***argv, int *rc);
/* Rank 0 checks the outputs it will gather into (propagate_check_outputs)
 * and tells the others: every rank gets PROPAGATE_FAILED when one cannot
 * be written (the message on rank 0's stderr), before any loads. */
int propagate_mpi_check_outputs(propagate_mpi *m);
/* This rank's photons of `count`. */
void propagate_mpi_range(const propagate_mpi *m, uint64_t count, propagate_run_info *run);
/* After this rank's run (rc its exit status; sum NULL when it never got
 * that far): the agreement, the summed summary into *sum on rank 0, the
 * outputs written (setup: this rank's seconds before its run). Returns the job's exit status; *print is true on the
 * rank that prints the summary. */
int propagate_mpi_finish(propagate_mpi *m, int rc, propagate_summary *sum, bool *print,
                         double setup);
/* finish (with rc) if not yet done, MPI_Finalize, free. Returns the exit status. */
int propagate_mpi_end(propagate_mpi *m, int rc);

#endif
