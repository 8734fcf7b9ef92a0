/* prism-bench run on the host backend: its runs of prism-propagate in each
 * layout (one process, --processes 2, mpirun -np 2 where this build has
 * MPI), the hits compared between them, the times and ratios it reports,
 * a run that fails, the options' mistakes, and no file left behind.
 * $PRISM_BENCH is the program (prism-propagate beside it); $PRISM_MPIRUN
 * Open MPI's mpirun, when the build has MPI. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "exec_util.h"

#define DETECTOR PRISM_ASSETS "/tiny_detector.dae"

static void bench(exec_run *r, const char *const *args)
{
    const char *argv[48] = {getenv("PRISM_BENCH"), "run"};
    if (argv[0] == NULL)
        fail_msg("PRISM_BENCH is not set");
    int n = 2;
    for (; args[n - 2] != NULL && n < 47; n++)
        argv[n] = args[n - 2];
    argv[n] = NULL;
    exec_program(r, argv, false);
}

/* A fresh, empty directory for one test's runs. */
static const char *run_dir(const char *name)
{
    const char *dir = exec_path(name);
    assert_int_equal(mkdir(dir, 0755), 0);
    return dir;
}

/* The number of `"key":value` pairs in a JSON text. */
static int count_of(const char *json, const char *pair)
{
    int n = 0;
    for (const char *p = strstr(json, pair); p != NULL; p = strstr(p + 1, pair))
        n++;
    return n;
}

/* Each run's whole time is to the hits file in place, before the command's
 * end; the form "one" against itself is 1x. */
static void check_runs(const char *json, int runs)
{
    assert_int_equal(count_of(json, "\"round\":"), runs);
    assert_int_equal(count_of(json, "\"same\":true"), runs);
    const char *p = strstr(json, "\"runs\":[");
    assert_non_null(p);
    for (int i = 0; i < runs; i++) {
        p = strstr(p, "{\"form\":");
        assert_non_null(p);
        const double whole = exec_json_number(p, "{\"form\":", "whole_seconds");
        const double command = exec_json_number(p, "{\"form\":", "command_seconds");
        const double calls = exec_json_number(p, "{\"form\":", "in_calls_photons_per_second");
        assert_true(whole > 0.0);
        assert_true(whole <= command);
        assert_true(calls > 0.0);
        p++;
    }
    assert_true(exec_json_number(json, "\"medians\":[{\"form\":\"one\"", "x_one_whole") == 1.0);
}

static void test_one_and_each(void **state)
{
    (void)state;
    static exec_run r;
    const char *dir = run_dir("each");
    bench(&r, (const char *[]){DETECTOR, "--counts", "3000,2e3", "--repeat", "2", "--gap", "0",
                               "--forms", "one,each", "--dir", dir, "--json", "--", "--backend",
                               "host", NULL});
    assert_int_equal(r.exit_code, 0);
    check_runs(r.out, 8);
    assert_int_equal(count_of(r.out, "\"form\":\"each\",\"photons\":3000,\"round\""), 2);
    assert_int_equal(count_of(r.out, "\"form\":\"one\",\"photons\":2000,\"round\""), 2);
    /* the medians: a form and count each */
    assert_int_equal(count_of(r.out, "\"x_one_command\":"), 4);
    /* progress on stderr, a line a run */
    assert_int_equal(count_of(r.err, "prism-bench run: "), 8);
    assert_int_equal((int)exec_count_entries(dir, false) + (int)exec_count_entries(dir, true), 0);
}

static void test_table(void **state)
{
    (void)state;
    static exec_run r;
    const char *dir = run_dir("table");
    bench(&r, (const char *[]){DETECTOR, "--counts", "2000", "--repeat", "1", "--gap", "0",
                               "--ranks", "3", "--forms", "each,one", "--dir", dir, "--",
                               "--backend", "host", NULL});
    assert_int_equal(r.exit_code, 0);
    assert_non_null(strstr(r.out, "whole s"));
    assert_non_null(strstr(r.out, "\nmedians:\n"));
    assert_non_null(strstr(r.out, "each                       2000     1"));
    assert_null(strstr(r.out, " NO\n"));
}

static void test_mpirun(void **state)
{
    (void)state;
    if (getenv("PRISM_MPIRUN") == NULL || !*getenv("PRISM_MPIRUN"))
        skip();
    static exec_run r;
    const char *dir = run_dir("mpirun");
    setenv("OMPI_MCA_rmaps_base_oversubscribe", "1", 1); /* CI may have fewer cores */
    /* the sanitizer build's ranks without the leak report, as in
     * test_propagate_mpi: Open MPI leaves its unloaded plugins' memory */
    const char *asan = getenv("ASAN_OPTIONS");
    char *kept = asan != NULL ? strdup(asan) : NULL;
    if (asan != NULL) {
        char opts[1024];
        snprintf(opts, sizeof opts, "%s:detect_leaks=0", asan);
        setenv("ASAN_OPTIONS", opts, 1);
    }
    bench(&r,
          (const char *[]){DETECTOR, "--counts", "3000", "--repeat", "1", "--gap", "0", "--forms",
                           "one,mpirun,mpirun-probes-off", "--mpirun", getenv("PRISM_MPIRUN"),
                           "--dir", dir, "--json", "--", "--backend", "host", NULL});
    unsetenv("OMPI_MCA_rmaps_base_oversubscribe");
    if (kept != NULL) {
        setenv("ASAN_OPTIONS", kept, 1);
        free(kept);
    }
    assert_int_equal(r.exit_code, 0);
    /* the ranks' hits, byte for byte one process's */
    check_runs(r.out, 3);
    assert_int_equal(count_of(r.out, "\"form\":\"mpirun-probes-off\",\"photons\":3000"), 2);
    assert_int_equal((int)exec_count_entries(dir, false), 0);
}

/* A run that fails stops the bench with what prism-propagate said, and
 * leaves only its stderr in the directory. */
static void test_failing_run(void **state)
{
    (void)state;
    static exec_run r;
    const char *dir = run_dir("failing");
    bench(&r, (const char *[]){DETECTOR, "--counts", "2000", "--repeat", "2", "--gap", "0",
                               "--forms", "one", "--dir", dir, "--", "--backend", "host",
                               "--wavelength", "900:100", NULL});
    assert_int_equal(r.exit_code, 1);
    assert_non_null(strstr(r.err, "prism-bench run: one at 2000 photons, round 1: failed: "
                                  "prism-propagate: --wavelength"));
    assert_string_equal(r.out, "");
    char kept[512];
    snprintf(kept, sizeof kept, "%s/prism-bench-run.err", dir);
    assert_non_null(strstr(r.err, kept));
    char *said = exec_read_file(kept, NULL);
    assert_non_null(said);
    assert_non_null(strstr(said, "prism-propagate: --wavelength: expected NM or MIN:MAX"));
    free(said);
    assert_int_equal((int)exec_count_entries(dir, false) + (int)exec_count_entries(dir, true), 1);
}

static void test_mistakes(void **state)
{
    (void)state;
    static exec_run r;
    static const struct {
        const char *args[8];
        const char *says;
    } bad[] = {
        {{"--counts", "0", DETECTOR}, "--counts: '0' is not a photon count"},
        {{"--forms", "one,two", DETECTOR}, "--forms: 'two' is not one of one, each"},
        {{"--forms", "one,one", DETECTOR}, "--forms: 'one' twice"},
        {{"--forms", "inproc", DETECTOR}, "--forms inproc: it needs --devices"},
        {{"--repeat", "0", DETECTOR}, "--repeat: expected 1 to 20"},
        {{"--gap", "-1", DETECTOR}, "--gap: expected seconds from 0 to 600"},
        {{"--ranks", "1", DETECTOR}, "--ranks: expected 2 to 64"},
        {{"--dir", "/no/such/dir", DETECTOR}, "--dir: /no/such/dir: not a directory"},
        {{"--propagate", "/no/such/program", DETECTOR}, "--propagate: /no/such/program: not an"},
        {{"--mpirun", "/no/such/mpirun", DETECTOR}, "--mpirun: /no/such/mpirun: not an"},
        {{"/no/such/detector.dae"}, "/no/such/detector.dae: No such file"},
        {{"--json"}, "no detector file"},
        {{"--frobnicate", DETECTOR}, "--frobnicate"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        bench(&r, bad[i].args);
        assert_int_equal(r.exit_code, 2);
        assert_non_null(strstr(r.err, bad[i].says));
        assert_non_null(strstr(r.err, "usage: prism-bench run"));
    }
}

static void test_help(void **state)
{
    (void)state;
    static exec_run r;
    bench(&r, (const char *[]){"--help", NULL});
    assert_int_equal(r.exit_code, 0);
    assert_non_null(strstr(r.out, "usage: prism-bench run FILE.dae"));
    assert_non_null(strstr(r.out, "mpirun-probes-off"));
    assert_non_null(strstr(r.out, "to the hits file in place"));
    assert_non_null(strstr(r.out, "median of the form one"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_and_each), cmocka_unit_test(test_table),
        cmocka_unit_test(test_mpirun),       cmocka_unit_test(test_failing_run),
        cmocka_unit_test(test_mistakes),     cmocka_unit_test(test_help),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
