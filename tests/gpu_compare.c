/* What the CUDA suites share (gpu_compare.h). */
#include "gpu_compare.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/launch/propagate_scheme.h"

prism_context *gc_host, *gc_cuda;

const int gc_schemes[GC_SCHEMES] = {PRISM__SCHEME_MEGA, PRISM__SCHEME_WAVE};

static bool destroyed(prism_context *ctx, const char *which)
{
    const prism_result r = prism_context_destroy(ctx);
    if (r != PRISM_SUCCESS)
        printf("%s context destroy: %s\n", which, prism_result_string(r));
    return r == PRISM_SUCCESS;
}

int gc_run_group_tests_(const char *name, const struct CMUnitTest *tests, size_t count,
                        CMFixtureFunction setup, CMFixtureFunction teardown)
{
    gc_cuda = kt_cuda_context();
    if (gc_cuda == NULL) {
        printf("no CUDA device: skipped\n");
        return 77;
    }
    gc_host = kt_host_context();
    int failed = 1;
    if (gc_host != NULL)
        failed = _cmocka_run_group_tests(name, tests, count, setup, teardown);
    else
        printf("no host context\n");
    const bool host_ok = gc_host == NULL || destroyed(gc_host, "host");
    const bool cuda_ok = destroyed(gc_cuda, "CUDA");
    return host_ok && cuda_ok ? failed : 1;
}

size_t gc_photons(size_t n)
{
    return getenv("PRISM_TEST_SMALL") != NULL ? n / 50 : n;
}

const char *gc_scheme(int scheme)
{
    assert_true(prism__propagate_scheme(gc_cuda, scheme));
    return prism__propagate_scheme_name(scheme);
}

void gc_upload_both(kt_scene *s, prism_placement_policy cuda_policy, prism_geometry **hg,
                    prism_geometry **cg)
{
    assert_int_equal(kt_build(s, gc_host), 0);
    *hg = kt_upload(s, gc_host, PRISM_PLACEMENT_AUTO, false);
    *cg = kt_upload(s, gc_cuda, cuda_policy, false);
    assert_non_null(*hg);
    assert_non_null(*cg);
}

void gc_free_both(kt_scene *s, prism_geometry *hg, prism_geometry *cg)
{
    prism_geometry_destroy(hg);
    prism_geometry_destroy(cg);
    kt_free(s, gc_host);
}

prism_photon *gc_propagate(prism_context *ctx, const prism_geometry *g,
                           const prism_photon_source *src, const prism_propagate_desc *d,
                           prism_step_record *records, prism_propagate_stats *stats)
{
    prism_photon *ph = calloc(src->count, sizeof *ph);
    assert_non_null(ph);
    prism_propagate_outputs out = {.photons = {.kind = PRISM_TARGET_HOST, .host = ph}};
    if (records != NULL)
        out.records = (prism_target){.kind = PRISM_TARGET_HOST, .host = records};
    if (prism_propagate(ctx, g, src, d, &out, stats) != PRISM_SUCCESS)
        fail_msg("propagate: %s", prism_context_last_error(ctx));
    return ph;
}

size_t gc_identical(const prism_photon *a, const prism_photon *b, size_t n)
{
    size_t same = 0;
    for (size_t i = 0; i < n; i++)
        same += memcmp(&a[i], &b[i], sizeof *a) == 0;
    return same;
}

/* Every field, floats to the digits that tell two of them apart. */
static void print_photon(const char *backend, const prism_photon *p)
{
    printf("%-4s pos (%.9g %.9g %.9g) time %.9g dir (%.9g %.9g %.9g) wavelength %.9g pol (%.9g "
           "%.9g %.9g) history 0x%x solid %u triangle %u steps %u reserved 0x%x\n",
           backend, p->pos[0], p->pos[1], p->pos[2], p->time, p->dir[0], p->dir[1], p->dir[2],
           p->wavelength, p->pol[0], p->pol[1], p->pol[2], p->history, p->solid, p->triangle,
           p->steps, p->reserved);
}

void gc_assert_identical(const prism_photon *a, const prism_photon *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (memcmp(&a[i], &b[i], sizeof *a) != 0) {
            print_photon("want", &a[i]);
            print_photon("got", &b[i]);
            fail_msg("photon %zu of %zu differs (%zu of them bit-identical)", i, n,
                     gc_identical(a, b, n));
        }
}

void gc_expect_exact(const char *label, const char *tail, const prism_photon *a,
                     const prism_photon *b, size_t n, const prism_step_record *ra,
                     const prism_step_record *rb, size_t k)
{
    printf("# exact, %s: %zu of %zu photons bit-identical%s\n", label, gc_identical(a, b, n), n,
           tail);
    gc_assert_identical(a, b, n);
    if (k > 0)
        assert_memory_equal(ra, rb, n * k * sizeof *ra);
}

double gc_tolerance(size_t na, size_t nb)
{
    return 5.0 * sqrt((double)(na + nb)) + 1.0;
}

void gc_expect_history_counts(const char *prefix, const prism_photon *a, const prism_photon *b,
                              size_t n)
{
    for (int bit = 0; bit < 32; bit++) {
        size_t na = 0, nb = 0;
        for (size_t i = 0; i < n; i++) {
            na += (a[i].history >> bit) & 1u;
            nb += (b[i].history >> bit) & 1u;
        }
        if (na + nb == 0)
            continue;
        const double tol = gc_tolerance(na, nb);
        printf("# %s%-18s host %8zu cuda %8zu (tolerance %.0f)\n", prefix,
               prism_history_flag_name(1u << bit), na, nb, tol);
        assert_true(fabs((double)na - (double)nb) <= tol);
    }
}
