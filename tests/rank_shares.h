/* What the ranks of a shared prism-propagate run (mpirun's, or
 * --processes') say in --json's per_rank, checked against the files
 * they wrote: the helpers test_propagate_mpi and test_propagate_processes
 * share. */
#ifndef TEST_RANK_SHARES_H
#define TEST_RANK_SHARES_H

/* The numbers of the JSON array "key":[...] in `json` into v; their count. */
int rank_json_array(const char *json, const char *key, double *v, int max);

/* A run of `photons` photons with --hits, --out and --records
 * --record-steps 3 (files[0..2]) on np ranks: per_rank has each rank's
 * figures; no rank read anything; each wrote its own rows (64 + 3 x 32
 * bytes a photon it took) and its hits (64 bytes each), rank 0 the three
 * headers too; together they wrote every byte of the files once, and
 * their photons make the run; each rank's launch is known. `expected`
 * (np values), when given, is what
 * each rank should have taken. */
void assert_rank_shares(const char *json, int np, const char files[3][512], double photons,
                        const double *expected);

#endif
