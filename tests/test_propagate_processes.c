/* prism-propagate --processes N on the host backend: the program forks N
 * ranks that share the run as mpirun -np N does, without MPI. The files
 * are byte for byte those of one process with 2, 3 and 4 ranks, each rank
 * reading nothing and writing only its own rows, with generated photons
 * and with photons read from a file, also when there are more ranks than
 * batches; a muon's saved gensteps are one file, a plain run's bytes. A
 * rank that fails before its run (the test hook
 * PRISM_PROPAGATE_TEST_FAIL) or in it, with the others waiting on its
 * batches (_STOP), or is killed (_KILL) fails the whole job, named
 * with its cause, leaving no output and no temporary beside it; one
 * killed once its part is done (_KILL_AFTER) leaves complete files and
 * exit 0, and one slow to exit then (_HOLD_AFTER) is not waited for: the
 * job has returned, its files complete, while that rank is still held; a
 * bad --processes, or --processes with --validate, is a usage error. A rank ready late (_LATE) is waited for by none: rank 0
 * takes more of the run, the bytes unchanged.
 * $PRISM_PROPAGATE is the program. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <cmocka.h>

#include "exec_util.h"
#include "rank_shares.h"

#define DETECTOR PRISM_ASSETS "/tiny_detector.dae"

/* prism-propagate DETECTOR args..., with --processes np when np > 0. */
static void run(exec_run *r, int np, const char *const *args)
{
    const char *argv[48];
    char nps[16];
    int n = 0;
    argv[n++] = getenv("PRISM_PROPAGATE");
    argv[n++] = DETECTOR;
    if (np > 0) {
        snprintf(nps, sizeof nps, "%d", np);
        argv[n++] = "--processes";
        argv[n++] = nps;
    }
    for (int i = 0; args[i] != NULL && n < 46; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    exec_program(r, argv, false);
}

/* A fresh directory `name` in the test's own, its path in dir: a case's
 * outputs go there, so that any temporary left beside them is seen. */
static void fresh_dir(char dir[512], const char *name)
{
    if (snprintf(dir, 512, "%s", exec_path(name)) >= 512)
        fail_msg("%s: too long a path", name);
    assert_int_equal(mkdir(dir, 0755), 0);
}

/* `name` in directory dir, into path. */
static void in_dir(char path[512], const char *dir, const char *name)
{
    if (snprintf(path, 512, "%s/%s", dir, name) >= 512)
        fail_msg("%s/%s: too long a path", dir, name);
}

/* Directory dir holds exactly `files` entries, none of them hidden. */
static void assert_entries(const char *dir, size_t files)
{
    assert_int_equal(exec_count_entries(dir, false), files);
    assert_int_equal(exec_count_entries(dir, true), 0);
}

static char tmp[512];

static int setup(void **state)
{
    (void)state;
    snprintf(tmp, sizeof tmp, "%s", exec_path("tmp"));
    if (mkdir(tmp, 0755) != 0)
        return -1;
    /* whatever the ranks might keep in $TMPDIR is seen there too */
    setenv("TMPDIR", tmp, 1);
    return 0;
}

/* The test hooks are for one case each, also when it fails. */
static int unset_hooks(void **state)
{
    (void)state;
    unsetenv("PRISM_PROPAGATE_TEST_FAIL");
    unsetenv("PRISM_PROPAGATE_TEST_KILL");
    unsetenv("PRISM_PROPAGATE_TEST_STOP");
    unsetenv("PRISM_PROPAGATE_TEST_KILL_AFTER");
    unsetenv("PRISM_PROPAGATE_TEST_HOLD_AFTER");
    unsetenv("PRISM_PROPAGATE_TEST_HOLD_FILE");
    unsetenv("PRISM_PROPAGATE_TEST_LATE");
    return 0;
}

/* 30000 photons of seed 4 in batches of `batch`, their hits, final
 * photons and 3-step records into files[0..2], with --json, on np
 * processes (0: a plain run), the test hook `hook` naming `rank` when
 * given. */
static void three_outputs(exec_run *r, int np, const char *batch, const char files[3][512],
                          const char *hook, const char *rank)
{
    const char *args[] = {"--backend", "host",   "--count",        "30000",  "--seed", "4",
                          "--batch",   batch,    "--hits",         files[0], "--out",  files[1],
                          "--records", files[2], "--record-steps", "3",      "--json", NULL};
    if (hook != NULL)
        setenv(hook, rank, 1);
    run(r, np, args);
    if (hook != NULL)
        unsetenv(hook);
}

static void test_same_bytes_whatever_processes(void **state)
{
    (void)state;
    static exec_run r;
    const char *names[3] = {"hits.npy", "out.npy", "rec.npy"};
    char dirs[5][512], files[5][3][512];
    for (int np = 1; np <= 4; np++) { /* 1: one process, no --processes; then 2 to 4 */
        char name[32];
        snprintf(name, sizeof name, "np%d", np);
        fresh_dir(dirs[np], name);
        for (int k = 0; k < 3; k++)
            in_dir(files[np][k], dirs[np], names[k]);
        three_outputs(&r, np == 1 ? 0 : np, "7001", (const char(*)[512])files[np], NULL, NULL);
        assert_int_equal(r.exit_code, 0);
        char ranks[32];
        snprintf(ranks, sizeof ranks, "\"ranks\":%d", np);
        assert_non_null(strstr(r.out, ranks));
        assert_non_null(strstr(r.out, "\"photons\":30000"));
        if (np > 1) {
            assert_non_null(strstr(r.out, "\"launcher\":\"fork\""));
            assert_rank_shares(r.out, np, (const char(*)[512])files[np], 30000, NULL);
        }
        /* the summary names the files asked for */
        for (int k = 0; k < 3; k++)
            assert_non_null(strstr(r.out, files[np][k]));
        assert_entries(dirs[np], 3);
    }
    for (int np = 2; np <= 4; np++)
        for (int k = 0; k < 3; k++)
            if (!exec_same_files(files[1][k], files[np][k]))
                fail_msg("%s and %s differ", files[1][k], files[np][k]);
    assert_entries(tmp, 0);
}

/* A muon's gensteps saved under --processes 3: rank 0 writes the one file,
 * the bytes of a plain run's, hits likewise, nothing else left beside. */
static void test_saved_gensteps(void **state)
{
    (void)state;
    static exec_run r;
    char dirs[2][512], gs[2][512], hits[2][512];
    for (int k = 0; k < 2; k++) {
        fresh_dir(dirs[k], k == 0 ? "gs1" : "gs3");
        in_dir(gs[k], dirs[k], "gensteps.npy");
        in_dir(hits[k], dirs[k], "hits.npy");
        const char *args[] = {"--backend", "host",  "--source",        "muon:0,0,-3,0,0,1,10",
                              "--batch",   "20000", "--save-gensteps", gs[k],
                              "--hits",    hits[k], "--quiet",         NULL};
        run(&r, k == 0 ? 0 : 3, args);
        assert_int_equal(r.exit_code, 0);
        assert_entries(dirs[k], 2);
    }
    if (!exec_same_files(gs[0], gs[1]))
        fail_msg("%s and %s differ", gs[0], gs[1]);
    if (!exec_same_files(hits[0], hits[1]))
        fail_msg("%s and %s differ", hits[0], hits[1]);
    assert_entries(tmp, 0);
}

/* One photon, one batch, three processes (two with nothing to do), and
 * --processes 1: the files of a plain run. */
static void test_more_processes_than_batches(void **state)
{
    (void)state;
    static exec_run r;
    const int nps[3] = {0, 1, 3};
    char dirs[3][512], hits[3][512], out[3][512];
    for (int i = 0; i < 3; i++) {
        char name[32];
        snprintf(name, sizeof name, "one_np%d", nps[i]);
        fresh_dir(dirs[i], name);
        in_dir(hits[i], dirs[i], "hits.npy");
        in_dir(out[i], dirs[i], "out.npy");
        run(&r, nps[i],
            (const char *[]){"--backend", "host", "--count", "1", "--hits", hits[i], "--out",
                             out[i], "--quiet", NULL});
        assert_int_equal(r.exit_code, 0);
        assert_entries(dirs[i], 2);
    }
    for (int i = 1; i < 3; i++) {
        assert_true(exec_same_files(hits[0], hits[i]));
        assert_true(exec_same_files(out[0], out[i]));
    }
    assert_entries(tmp, 0);
}

/* Photons read from a file (a plain run's final photons), in batches that
 * both processes take: the hits and final photons of one process. */
static void test_photons_from_file(void **state)
{
    (void)state;
    static exec_run r;
    char dir[512], in[512], hits[2][512], out[2][512];
    fresh_dir(dir, "from_file");
    in_dir(in, dir, "in.npy");
    run(&r, 0,
        (const char *[]){"--backend", "host", "--count", "5000", "--seed", "7", "--out", in,
                         "--quiet", NULL});
    assert_int_equal(r.exit_code, 0);
    for (int i = 0; i < 2; i++) {
        char name[32];
        snprintf(name, sizeof name, "hits_%d.npy", i);
        in_dir(hits[i], dir, name);
        snprintf(name, sizeof name, "out_%d.npy", i);
        in_dir(out[i], dir, name);
        run(&r, i == 0 ? 0 : 2,
            (const char *[]){"--backend", "host", "--photons", in, "--batch", "1500", "--hits",
                             hits[i], "--out", out[i], "--json", NULL});
        assert_int_equal(r.exit_code, 0);
        assert_non_null(strstr(r.out, "\"photons\":5000"));
        if (i == 1)
            assert_non_null(strstr(r.out, "\"ranks\":2"));
    }
    assert_true(exec_same_files(hits[0], hits[1]));
    assert_true(exec_same_files(out[0], out[1]));
    assert_entries(dir, 5);
    assert_entries(tmp, 0);
}

/* prism-propagate with the test hook `hook` naming rank `rank`, the hook
 * cleared again after the run. */
static void run_hooked(exec_run *r, const char *hook, const char *rank, int np,
                       const char *const *args)
{
    setenv(hook, rank, 1);
    run(r, np, args);
    unsetenv(hook);
}

/* A job that failed as a whole: a nonzero exit of its own (no signal),
 * said to have written nothing, and nothing left in dir or in TMPDIR. */
static void assert_failed_leaving_nothing(const exec_run *r, const char *dir)
{
    assert_int_not_equal(r->exit_code, 0);
    assert_int_equal(r->signal, 0);
    assert_non_null(strstr(r->err, "no output written"));
    assert_entries(dir, 0);
    assert_entries(tmp, 0);
}

/* A job of 30000 photons in batches of `batch` over np processes, its
 * hits and final photons (and step records with `records`) in a fresh
 * directory `name`, the test hook `hook` naming rank 1: it must fail as a
 * whole, leaving nothing. The other ranks start a second late (_LATE), so
 * that rank 1, which they do not wait for, surely claims a batch. */
static void failing_job(exec_run *r, const char *name, const char *hook, int np, const char *batch,
                        bool records)
{
    char dir[512], hits[512], out[512], rec[512];
    fresh_dir(dir, name);
    in_dir(hits, dir, "hits.npy");
    in_dir(out, dir, "out.npy");
    in_dir(rec, dir, "rec.npy");
    const char *args[] = {"--backend",      "host", "--count", "30000", "--batch",   batch,
                          "--hits",         hits,   "--out",   out,     "--records", rec,
                          "--record-steps", "3",    NULL};
    if (!records)
        args[10] = NULL;
    setenv("PRISM_PROPAGATE_TEST_LATE", np == 2 ? "0" : "0,2", 1);
    run_hooked(r, hook, "1", np, args);
    unsetenv("PRISM_PROPAGATE_TEST_LATE");
    assert_failed_leaving_nothing(r, dir);
}

/* Rank 1 of 2 is ready a second after rank 0 (the test hook
 * PRISM_PROPAGATE_TEST_LATE, as a device whose CUDA start comes second):
 * rank 0 does not wait for it but claims batches at once, so it takes
 * more of the run, and the files are still a plain run's bytes. */
static void test_late_rank_waited_for_by_none(void **state)
{
    (void)state;
    static exec_run r;
    char dir[512], files[2][3][512];
    const char *names[3] = {"hits.npy", "out.npy", "rec.npy"};
    fresh_dir(dir, "late");
    for (int j = 0; j < 2; j++)
        for (int k = 0; k < 3; k++) {
            char name[32];
            snprintf(name, sizeof name, "%d-%s", j, names[k]);
            in_dir(files[j][k], dir, name);
        }
    for (int j = 0; j < 2; j++) { /* a plain run, then two ranks, rank 1 late */
        three_outputs(&r, 2 * j, "2001", (const char(*)[512])files[j],
                      j ? "PRISM_PROPAGATE_TEST_LATE" : NULL, "1");
        assert_int_equal(r.exit_code, 0);
    }
    double taken[8];
    assert_int_equal(rank_json_array(r.out, "photons", taken, 8), 2);
    if (!(taken[0] > taken[1]))
        fail_msg("rank 0 took %.0f photons, late rank 1 %.0f: rank 0 waited for it", taken[0],
                 taken[1]);
    assert_rank_shares(r.out, 2, (const char(*)[512])files[1], 30000, NULL);
    for (int k = 0; k < 3; k++)
        if (!exec_same_files(files[0][k], files[1][k]))
            fail_msg("%s and %s differ", files[0][k], files[1][k]);
    assert_entries(dir, 6);
    assert_entries(tmp, 0);
}

/* Rank 1 of 2 fails before its run: the job fails, naming rank 1 and its
 * message, and writes nothing. */
static void test_failing_rank(void **state)
{
    (void)state;
    static exec_run r;
    failing_job(&r, "failed", "PRISM_PROPAGATE_TEST_FAIL", 2, "7001", false);
    assert_non_null(strstr(r.err, "[rank 1 on "));
    assert_non_null(strstr(r.err, "test hook: rank 1 fails"));
    assert_non_null(strstr(r.err, "prism-propagate: rank 1 of 2 (on "));
    assert_non_null(strstr(r.err, "failed (exit 1): no output written"));
}

/* Rank 1 of 3 fails at its first batch while the others claim and wait
 * for its batches' hits: they stop at their next claim or place, the job
 * names rank 1 and its cause, and writes nothing. */
static void test_rank_stopping_midway(void **state)
{
    (void)state;
    static exec_run r;
    failing_job(&r, "stopped", "PRISM_PROPAGATE_TEST_STOP", 3, "2001", false);
    assert_non_null(strstr(r.err, "test hook: rank 1 stops at its first batch"));
    assert_non_null(strstr(r.err, "prism-propagate: rank 1 of 3 (on "));
    assert_null(strstr(r.err, "rank 0 of 3 (on ")); /* the others stopped for it, not failed */
    assert_null(strstr(r.err, "rank 2 of 3 (on "));
}

/* Rank 1 of 3 is killed (SIGKILL) at its first batch, with the others at
 * work: the job stops them, names rank 1 and the signal, and writes
 * nothing. */
static void test_killed_rank(void **state)
{
    (void)state;
    static exec_run r;
    failing_job(&r, "killed", "PRISM_PROPAGATE_TEST_KILL", 3, "7001", true);
    assert_non_null(strstr(r.err, "prism-propagate: rank 1 of 3 ended by signal 9"));
}

/* 30000 photons' hits in batches of 7001 by one process into `one`; it
 * must succeed. */
static void one_process_hits(exec_run *r, const char *one)
{
    run(r, 0,
        (const char *[]){"--backend", "host", "--count", "30000", "--batch", "7001", "--hits", one,
                         "--quiet", NULL});
    assert_int_equal(r->exit_code, 0);
}

/* The same over 2 processes into `two`, the test hook `hook` naming rank
 * `rank`. */
static void two_processes_hits(exec_run *r, const char *hook, const char *rank, const char *two)
{
    run_hooked(r, hook, rank, 2,
               (const char *[]){"--backend", "host", "--count", "30000", "--batch", "7001",
                                "--hits", two, NULL});
}

/* Rank 1 of 2 dies (SIGKILL) after its part of the run is done, as in a
 * crash of CUDA's teardown at exit: the files are complete and the same as
 * one process's, and the job exits 0 (the status the ranks agreed), not
 * said to have failed; the parent, which returns once the ranks ended
 * their parts, says the death only if it saw it by then. Rank 0 dying
 * there too keeps its printed summary. */
static void test_killed_after_its_part(void **state)
{
    (void)state;
    static exec_run r;
    char dir[512], one[512], two[512];
    fresh_dir(dir, "after");
    in_dir(one, dir, "one.npy");
    in_dir(two, dir, "two.npy");
    one_process_hits(&r, one);
    for (int k = 1; k >= 0; k--) {
        two_processes_hits(&r, "PRISM_PROPAGATE_TEST_KILL_AFTER", k ? "1" : "0", two);
        assert_int_equal(r.exit_code, 0);
        assert_null(strstr(r.err, "no output written"));
        assert_null(strstr(r.err, "before the run's end"));
        assert_non_null(strstr(r.out, "30000 photons"));
        assert_true(exec_same_files(one, two));
    }
    assert_entries(dir, 2);
    assert_entries(tmp, 0);
}

/* Rank 1 of 2 is slow to exit after its part (held by the test hook, as
 * CUDA's teardown holds a GPU's rank): the job has returned, exit 0, its
 * files complete and the same as one process's, while rank 1 is still
 * held; let go, rank 1 ends (it says so in a file). A job that waited for
 * its ranks' exits would return only when rank 1 gave up, 20 s on,
 * without saying so. */
static void test_slow_exit_not_waited_for(void **state)
{
    (void)state;
    static exec_run r;
    char dir[512], one[512], two[512], hold[512], gone[512];
    fresh_dir(dir, "held");
    in_dir(one, dir, "one.npy");
    in_dir(two, dir, "two.npy");
    in_dir(hold, dir, "hold");
    in_dir(gone, dir, "hold.gone");
    one_process_hits(&r, one);
    setenv("PRISM_PROPAGATE_TEST_HOLD_FILE", hold, 1);
    two_processes_hits(&r, "PRISM_PROPAGATE_TEST_HOLD_AFTER", "1", two);
    assert_int_equal(r.exit_code, 0);
    assert_non_null(strstr(r.out, "30000 photons"));
    assert_true(exec_same_files(one, two));
    assert_false(exec_exists(gone)); /* rank 1 is still held */
    FILE *f = fopen(hold, "w");
    assert_non_null(f);
    fclose(f);
    for (int i = 0; i < 1000 && !exec_exists(gone); i++)
        nanosleep(&(struct timespec){.tv_nsec = 10000000}, NULL);
    assert_true(exec_exists(gone));
    assert_entries(dir, 4);
    assert_entries(tmp, 0);
}

/* A bad process count, and --validate with several: usage errors (exit
 * 2), before anything is written. */
static void test_usage_errors(void **state)
{
    (void)state;
    static exec_run r;
    char dir[512], hits[512];
    fresh_dir(dir, "usage");
    in_dir(hits, dir, "hits.npy");
    const char *bad[] = {"0", "65", "x"};
    for (int i = 0; i < 3; i++) {
        const char *argv[] = {getenv("PRISM_PROPAGATE"),
                              DETECTOR,
                              "--backend",
                              "host",
                              "--count",
                              "1000",
                              "--processes",
                              bad[i],
                              "--hits",
                              hits,
                              NULL};
        exec_program(&r, argv, false);
        assert_int_equal(r.exit_code, 2);
        assert_non_null(strstr(r.err, "prism-propagate: --processes"));
    }
    run(&r, 2, (const char *[]){"--validate", "--count", "1000", NULL});
    assert_int_equal(r.exit_code, 2);
    assert_non_null(strstr(r.err, "--validate runs in one process"));
    assert_entries(dir, 0);
    assert_entries(tmp, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_bytes_whatever_processes),
        cmocka_unit_test(test_saved_gensteps),
        cmocka_unit_test(test_more_processes_than_batches),
        cmocka_unit_test(test_photons_from_file),
        cmocka_unit_test_teardown(test_late_rank_waited_for_by_none, unset_hooks),
        cmocka_unit_test_teardown(test_failing_rank, unset_hooks),
        cmocka_unit_test_teardown(test_rank_stopping_midway, unset_hooks),
        cmocka_unit_test_teardown(test_killed_rank, unset_hooks),
        cmocka_unit_test_teardown(test_killed_after_its_part, unset_hooks),
        cmocka_unit_test_teardown(test_slow_exit_not_waited_for, unset_hooks),
        cmocka_unit_test(test_usage_errors),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
