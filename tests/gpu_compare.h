/* What the CUDA suites share: a host context (the reference) and a CUDA
 * context side by side, a main that skips without a CUDA device, and the
 * comparison of the same photons propagated on both backends, photon by
 * photon. The contexts are process-wide, as kt_ctx is for the host suites. */
#ifndef GPU_COMPARE_H
#define GPU_COMPARE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "kernels_test_scene.h"
#include "prism/propagate.h"

/* The host and CUDA contexts of the group that gc_run_group_tests runs. */
extern prism_context *gc_host, *gc_cuda;

/* cmocka_run_group_tests, with gc_host and gc_cuda made before the group
 * (setup and teardown, when given, run inside) and destroyed after it.
 * Without a CUDA device it prints "no CUDA device: skipped" and returns
 * 77, ctest's skip; a context that cannot be destroyed (memory a test left
 * in it) fails the run. The suite's main returns what it returns. */
#define gc_run_group_tests(tests, setup, teardown)                                                 \
    gc_run_group_tests_(#tests, tests, sizeof(tests) / sizeof((tests)[0]), setup, teardown)
int gc_run_group_tests_(const char *name, const struct CMUnitTest *tests, size_t count,
                        CMFixtureFunction setup, CMFixtureFunction teardown);

/* n photons, or n / 50 with PRISM_TEST_SMALL set (compute-sanitizer, which
 * is slow). */
size_t gc_photons(size_t n);

/* The megakernel and the wavefront: the CUDA step schemes that the exact
 * comparisons go through. */
enum { GC_SCHEMES = 2 };
extern const int gc_schemes[GC_SCHEMES];
/* Puts gc_cuda's propagations on `scheme` (PRISM__SCHEME_AUTO: back to the
 * default); returns the scheme's name. */
const char *gc_scheme(int scheme);

/* Builds s on the host and uploads it to both contexts: the host's with the
 * automatic placement, CUDA's with `cuda_policy`. */
void gc_upload_both(kt_scene *s, prism_placement_policy cuda_policy, prism_geometry **hg,
                    prism_geometry **cg);
/* Destroys both geometries, then frees s. */
void gc_free_both(kt_scene *s, prism_geometry *hg, prism_geometry *cg);

/* prism_propagate on ctx into a new host array of src->count photons (the
 * caller frees it); records and stats, where not NULL, receive theirs.
 * Fails the test, with the context's message, when the call fails. */
prism_photon *gc_propagate(prism_context *ctx, const prism_geometry *g,
                           const prism_photon_source *src, const prism_propagate_desc *d,
                           prism_step_record *records, prism_propagate_stats *stats);

/* How many of the n photons of b are a's, bit for bit. */
size_t gc_identical(const prism_photon *a, const prism_photon *b, size_t n);
/* Fails the test unless b's n photons are a's (the reference: the host's,
 * or another CUDA run's) bit for bit, printing the first photon that
 * differs from both. */
void gc_assert_identical(const prism_photon *a, const prism_photon *b, size_t n);
/* Exact arithmetic, the host's photons a (records ra) against CUDA's b
 * (rb), `k` records a photon: prints "# exact, <label>: S of N photons
 * bit-identical<tail>", then fails unless every photon and record is the
 * same. */
void gc_expect_exact(const char *label, const char *tail, const prism_photon *a,
                     const prism_photon *b, size_t n, const prism_step_record *ra,
                     const prism_step_record *rb, size_t k);

/* How far two counts of one kind in independent samples may lie apart: 5
 * sigma of their difference, sqrt(na + nb), plus one. */
double gc_tolerance(size_t na, size_t nb);
/* For each history bit that a (the host's) or b (CUDA's) set, prints "#
 * <prefix><flag> host NA cuda NB (tolerance T)" and fails unless the
 * counts agree within gc_tolerance. */
void gc_expect_history_counts(const char *prefix, const prism_photon *a, const prism_photon *b,
                              size_t n);

#endif
