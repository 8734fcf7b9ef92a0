/* Small helpers shared by prism-bench's subcommands: a monotonic clock,
 * medians, the --json flag, and --device-budget's byte sizes and upload. */
#ifndef PRISM_BENCH_UTIL_H
#define PRISM_BENCH_UTIL_H

#include <stdbool.h>
#include <stddef.h>

#include "prism/bvh.h"
#include "prism/context.h"
#include "prism/geometry.h"
#include "prism/scene.h"

/* Seconds on a monotonic clock. */
double prism_bench_now(void);
/* A 100 ms pause before a timed run, so that it does not pay for the
 * previous one's aftermath: worker threads that still spin after a
 * parallel section (bvh), or the device memory the previous upload freed,
 * which the driver is still taking back (upload). */
void prism_bench_settle(void);
/* Median of n values (sorts them in place). 0 when n == 0. */
double prism_bench_median(double *values, size_t n);
/* Whether `flag` ("--json") is among argv[1..argc-1]. */
bool prism_bench_has_flag(int argc, char **argv, const char *flag);
/* Whether --help or -h is: every stage then prints its usage on stdout and
 * exits 0, before it looks at anything else on the line. */
bool prism_bench_wants_help(int argc, char **argv);
/* The first argument that is neither an option nor an option's value (the
 * FILE), or NULL. `flags` (NULL-terminated) names the options that take no
 * value; every other option is taken to be followed by one. */
const char *prism_bench_positional(int argc, char **argv, const char *const *flags);
/* The value after `option` ("--repeat 5"), or `fallback`. */
const char *prism_bench_option(int argc, char **argv, const char *option, const char *fallback);
/* --unit m|cm|mm|auto (prism_length_unit_parse; default auto) into *unit:
 * false, with a message naming `stage` on stderr, for any other value. */
bool prism_bench_unit(int argc, char **argv, const char *stage, prism_length_unit *unit);
/* "16M,64M,1G": up to `max` byte sizes, each a whole number of bytes
 * with an optional k, M or G (2^10, 2^20, 2^30; either case), into out.
 * The count, or -1 for an empty or malformed list, a 0 or too many. */
int prism_bench_bytes_list(const char *text, size_t *out, int max);
/* The label of a --device-budget row: "budget:64M" (the largest of G, M,
 * k that divides `bytes`, else bytes). */
void prism_bench_budget_label(size_t bytes, char *buf, size_t size);
/* --device-budget's sizes (prism_bench_bytes_list) into out[0, max), their
 * number in *n (0 without the option); false, with the message on stderr,
 * when they do not parse. */
bool prism_bench_budgets(int argc, char **argv, const char *stage, size_t *out, int max, int *n);
/* The BVH nodes' bytes in device and in mapped memory, by the report. */
void prism_bench_node_bytes(const prism_upload_report *r, size_t *device, size_t *mapped);
/* The tree the shared walk (prism_trace_closest) and the CUDA render's
 * default variant take: "wide" where the upload made the wide tree, else
 * "binary". */
const char *prism_bench_tree(const prism_upload_report *r);
/* The usage line's piece for it. */
#define PRISM_BENCH_UNIT_HELP                                                                      \
    "  --unit m|cm|mm|auto   the file's length unit (default auto: its <unit>, else mm for a\n"    \
    "                        Geant4 export, else m)\n"

#endif
