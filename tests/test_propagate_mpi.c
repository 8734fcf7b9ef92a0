/* mpirun -np N prism-propagate on the host backend (CI's two cores,
 * oversubscribed): the gathered files are byte for byte those of one
 * process with 2, 3 and 4 ranks, each rank reading and writing only its
 * own rows, whether the ranks claim batches from their node's shared
 * cursor (one node, as here) or take them in turn (ranks on several
 * nodes, which the test hook $PRISM_PROPAGATE_TEST_APART makes of them),
 * with generated photons and with photons read from a file, also when a
 * rank has no photons; a rank whose device starts late takes less of the
 * run and holds no one up; a rank that mpirun binds to a core by its
 * default runs on the CPUs mpirun may use, one bound by the user's choice
 * keeps it; ranks that cannot all claim from the node's cursor fail the
 * job at once; a rank that fails (a file it cannot
 * open) fails the whole job, named with its cause, leaving no output and
 * no rank's file behind; --processes is refused under mpirun; a slow
 * mpirun start is measured in every rank and noted by rank 0, unless
 * HWLOC_COMPONENTS is set.
 * $PRISM_PROPAGATE is the program, $PRISM_MPIRUN
 * Open MPI's mpirun. */
#define _GNU_SOURCE /* sched_getaffinity */
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "exec_util.h"
#include "rank_shares.h"

#define DETECTOR PRISM_ASSETS "/tiny_detector.dae"

/* prism-propagate DETECTOR args..., directly (np 0) or under mpirun -np np,
 * the command run by `via` (NULL-ended; NULL: none). */
static void run_via(exec_run *r, const char *const *via, int np, const char *const *args)
{
    const char *argv[48];
    char nps[16];
    int n = 0;
    for (int i = 0; via != NULL && via[i] != NULL && n < 8; i++)
        argv[n++] = via[i];
    if (np > 0) {
        snprintf(nps, sizeof nps, "%d", np);
        argv[n++] = getenv("PRISM_MPIRUN");
        argv[n++] = "-np";
        argv[n++] = nps;
        argv[n++] = "--oversubscribe";
    }
    argv[n++] = getenv("PRISM_PROPAGATE");
    argv[n++] = DETECTOR;
    for (int i = 0; args[i] != NULL && n < 46; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    exec_program(r, argv, false);
}

static void run(exec_run *r, int np, const char *const *args)
{
    run_via(r, NULL, np, args);
}

static const char *rank_tmp;

static int setup(void **state)
{
    (void)state;
    rank_tmp = strdup(exec_path("ranks"));
    if (mkdir(rank_tmp, 0755) != 0)
        return -1;
    /* the ranks keep their shares here until rank 0 gathers them */
    setenv("TMPDIR", rank_tmp, 1);
    /* CI runs as root; Open MPI refuses that unless told */
    setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
    setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
    /* In the sanitizer build, the ranks keep AddressSanitizer's checks but
     * not its leak report: Open MPI leaves allocations of plugins it has
     * unloaded (about 120 kB, frames "<unknown module>", which no
     * suppression can name). This test itself is still checked for leaks,
     * and the tool's code without MPI by propagate_tool. */
    const char *asan = getenv("ASAN_OPTIONS");
    if (asan != NULL) {
        char opts[1024];
        snprintf(opts, sizeof opts, "%s:detect_leaks=0", asan);
        setenv("ASAN_OPTIONS", opts, 1);
    }
    return 0;
}

/* No funnel: the ranks take batches of 7001 of the 30000 photons in turn
 * (batch k on rank k mod np), and each writes its own rows in place and
 * reads nothing (assert_rank_shares). */
static void assert_own_share(const char *json, int np, char files[3][512])
{
    enum { PHOTONS = 30000, BATCH = 7001 };
    double own[8] = {0}; /* photons of rank r's batches */
    for (int r = 0; r < np && r < 8; r++)
        for (int first = r * BATCH; first < PHOTONS; first += np * BATCH)
            own[r] += PHOTONS - first < BATCH ? PHOTONS - first : BATCH;
    assert_rank_shares(json, np, (const char(*)[512])files, PHOTONS, own);
}

/* The three outputs of 30000 photons in batches of 7001 into files[np],
 * on np ranks (np 1: one process, no mpirun); the ranks claim batches,
 * or take them in turn when apart. */
static void three_outputs(int np, bool apart, char files[5][3][512])
{
    static exec_run r;
    const char *kinds[3] = {"hits", "out", "rec"};
    for (int k = 0; k < 3; k++) {
        char name[64];
        snprintf(name, sizeof name, "np%d%s_%s.npy", np, apart ? "_apart" : "", kinds[k]);
        snprintf(files[np][k], sizeof files[np][k], "%s", exec_path(name));
    }
    const char *args[] = {"--backend", "host",       "--count",   "30000",      "--seed",
                          "4",         "--batch",    "7001",      "--hits",     files[np][0],
                          "--out",     files[np][1], "--records", files[np][2], "--record-steps",
                          "3",         "--json",     NULL};
    if (apart)
        setenv("PRISM_PROPAGATE_TEST_APART", "1", 1);
    run(&r, np == 1 ? 0 : np, args);
    unsetenv("PRISM_PROPAGATE_TEST_APART");
    assert_int_equal(r.exit_code, 0);
    char ranks[32];
    snprintf(ranks, sizeof ranks, "\"ranks\":%d", np);
    assert_non_null(strstr(r.out, ranks));
    assert_non_null(strstr(r.out, "\"photons\":30000"));
    if (np > 1 && apart) {
        assert_non_null(strstr(r.out, "\"ranks_batches\":\"in turn\""));
        assert_own_share(r.out, np, files[np]);
    } else if (np > 1) { /* whoever claims a batch writes it, and only it */
        assert_non_null(strstr(r.out, "\"ranks_batches\":\"claimed\""));
        assert_rank_shares(r.out, np, (const char(*)[512])files[np], 30000, NULL);
    }
    /* the summary names the files asked for, not a rank's own */
    assert_non_null(strstr(r.out, files[np][0]));
    assert_null(strstr(r.out, rank_tmp));
}

static void test_same_bytes_whatever_ranks(void **state)
{
    (void)state;
    static exec_run r;
    char files[5][3][512], apart[5][3][512];
    three_outputs(1, false, files);
    for (int np = 2; np <= 4; np++) {
        three_outputs(np, false, files);
        three_outputs(np, true, apart);
    }
    for (int np = 2; np <= 4; np++)
        for (int k = 0; k < 3; k++) {
            if (!exec_same_files(files[1][k], files[np][k]))
                fail_msg("%s and %s differ", files[1][k], files[np][k]);
            if (!exec_same_files(files[1][k], apart[np][k]))
                fail_msg("%s and %s differ", files[1][k], apart[np][k]);
        }
    assert_int_equal(exec_count_entries(rank_tmp, false), 0);
    /* photons read from a file (the one-process run's final photons), and
     * more ranks than photons: a rank with none */
    const char *a = exec_path("in_a.npy"), *b = exec_path("in_b.npy");
    run(&r, 0,
        (const char *[]){"--backend", "host", "--photons", files[1][1], "--out", a, "--quiet",
                         NULL});
    assert_int_equal(r.exit_code, 0);
    run(&r, 2,
        (const char *[]){"--backend", "host", "--photons", files[1][1], "--out", b, "--quiet",
                         NULL});
    assert_int_equal(r.exit_code, 0);
    assert_true(exec_same_files(a, b));
    run(&r, 0,
        (const char *[]){"--backend", "host", "--count", "1", "--hits", a, "--out", b, "--quiet",
                         NULL});
    assert_int_equal(r.exit_code, 0);
    const char *c = exec_path("one_c.npy"), *d = exec_path("one_d.npy");
    run(&r, 3,
        (const char *[]){"--backend", "host", "--count", "1", "--hits", c, "--out", d, "--quiet",
                         NULL});
    assert_int_equal(r.exit_code, 0);
    assert_true(exec_same_files(a, c));
    assert_true(exec_same_files(b, d));
    assert_int_equal(exec_count_entries(rank_tmp, false), 0);
}

/* Rank 0's device starts a second late (the test hook): rank 1 claims
 * the batches meanwhile, so it takes more of the run, and the files are
 * those of one process. */
static void test_late_rank_waited_for_by_none(void **state)
{
    (void)state;
    static exec_run r;
    const char *one = exec_path("late_1.npy"), *two = exec_path("late_2.npy");
    const char *args[] = {"--backend", "host", "--count", "40000", "--seed", "6",
                          "--batch",   "2000", "--hits",  NULL,    "--json", NULL};
    args[9] = one;
    run(&r, 0, args);
    assert_int_equal(r.exit_code, 0);
    args[9] = two;
    setenv("PRISM_PROPAGATE_TEST_LATE", "0", 1);
    run(&r, 2, args);
    unsetenv("PRISM_PROPAGATE_TEST_LATE");
    assert_int_equal(r.exit_code, 0);
    double photons[2] = {0, 0};
    assert_int_equal(rank_json_array(r.out, "photons", photons, 2), 2);
    if (!(photons[1] > photons[0]))
        fail_msg("late rank 0 took %.0f photons, rank 1 %.0f: rank 1 waited for it", photons[0],
                 photons[1]);
    assert_true(exec_same_files(one, two));
    assert_int_equal(exec_count_entries(rank_tmp, false), 0);
}

/* Two ranks, which Open MPI binds to a core each by its default: each runs
 * on the CPUs this test may (per_rank's cpus), and rank 0 says so; bound
 * by the user's choice (the MCA variable --bind-to sets), each keeps its
 * one CPU and nothing is said. */
static void test_default_binding_widened(void **state)
{
    (void)state;
    static exec_run r;
    cpu_set_t set;
    assert_int_equal(sched_getaffinity(0, sizeof set, &set), 0);
    const double mine = CPU_COUNT(&set);
    const char *args[] = {"--backend", "host", "--count", "2000", "--json", NULL};
    run(&r, 2, args);
    assert_int_equal(r.exit_code, 0);
    double cpus[2] = {0, 0};
    assert_int_equal(rank_json_array(r.out, "cpus", cpus, 2), 2);
    assert_true(cpus[0] == mine && cpus[1] == mine);
    if (mine < 2)
        skip(); /* one CPU: nothing to bind ranks apart on */
    assert_non_null(strstr(r.err, "mpirun bound each rank to 1 CPU by its default"));
    setenv("OMPI_MCA_hwloc_base_binding_policy", "core", 1);
    run(&r, 2, args);
    unsetenv("OMPI_MCA_hwloc_base_binding_policy");
    assert_int_equal(r.exit_code, 0);
    assert_int_equal(rank_json_array(r.out, "cpus", cpus, 2), 2);
    assert_true(cpus[0] == 1 && cpus[1] == 1);
    assert_null(strstr(r.err, "mpirun bound"));
}

/* mpirun started 0.4 s late (by a shell that sleeps, then becomes
 * mpirun): each rank's launch_seconds says at least that, and rank 0 notes
 * it with the hwloc setting that speeds mpirun up on GPU hosts; with that
 * setting already made, no note. */
static void test_slow_launch_noted(void **state)
{
    (void)state;
    static exec_run r;
    const char *late[] = {"/bin/sh", "-c", "sleep 0.4; exec \"$0\" \"$@\"", NULL};
    const char *args[] = {"--backend", "host", "--count", "2000", "--json", NULL};
    for (int set = 0; set < 2; set++) {
        if (set)
            setenv("HWLOC_COMPONENTS", "-cuda,-nvml,-opencl,-rsmi,-levelzero", 1);
        run_via(&r, late, 2, args);
        unsetenv("HWLOC_COMPONENTS");
        assert_int_equal(r.exit_code, 0);
        double launch[2] = {0, 0};
        assert_int_equal(rank_json_array(r.out, "launch_seconds", launch, 2), 2);
        assert_true(launch[0] >= 0.39 && launch[1] >= 0.39);
        const char *note = strstr(r.err, "before it started this rank");
        if (set)
            assert_null(note);
        else {
            assert_non_null(note);
            assert_non_null(strstr(r.err, "prism-propagate: mpirun ran 0."));
            assert_non_null(strstr(r.err, "HWLOC_COMPONENTS=-cuda,-nvml,-opencl,-rsmi,-levelzero"));
        }
    }
}

/* No --backend: each rank runs where a plain run would, the host where
 * there is no CUDA device (CI), a device where there is one. */
/* A muon's gensteps (Cerenkov photons made where they are propagated),
 * batches of 20000 taken in turn by 3 ranks: the hits of one process. */
static void test_gensteps_across_ranks(void **state)
{
    (void)state;
    static exec_run r;
    const char *one = exec_path("muon_1.npy"), *three = exec_path("muon_3.npy");
    const char *args[] = {"--backend", "host",  "--source", "muon:0,0,-1,0,0,1,2",
                          "--batch",   "20000", "--hits",   NULL,
                          "--json",    NULL};
    args[7] = one;
    run(&r, 0, args);
    assert_int_equal(r.exit_code, 0);
    assert_non_null(strstr(r.out, "\"cerenkov_photons\":"));
    args[7] = three;
    run(&r, 3, args);
    assert_int_equal(r.exit_code, 0);
    assert_non_null(strstr(r.out, "\"ranks\":3"));
    size_t bytes = 0;
    free(exec_read_file(one, &bytes));
    assert_true(bytes > 128); /* hits, not just a header */
    assert_true(exec_same_files(one, three));
    assert_int_equal(exec_count_entries(rank_tmp, false), 0);
}

static void test_default_backend(void **state)
{
    (void)state;
    static exec_run r;
    run(&r, 2, (const char *[]){"--count", "2000", "--seed", "5", "--json", NULL});
    assert_int_equal(r.exit_code, 0);
    assert_non_null(strstr(r.out, "\"ranks\":2"));
    assert_non_null(strstr(r.out, "\"photons\":2000"));
    assert_int_equal(exec_count_entries(rank_tmp, false), 0);
}

/* Open MPI's MPMD form: rank 0 a plain run of 2000 photons into `hits`,
 * rank 1 the command `rank1` (NULL-ended), which writes `hits` too. */
static void run_two_apps(exec_run *r, const char *hits, const char *const *rank1)
{
    const char *argv[40] = {getenv("PRISM_MPIRUN"),
                            "-np",
                            "1",
                            "--oversubscribe",
                            getenv("PRISM_PROPAGATE"),
                            DETECTOR,
                            "--backend",
                            "host",
                            "--count",
                            "2000",
                            "--hits",
                            hits,
                            ":",
                            "-np",
                            "1"};
    int n = 15;
    for (int i = 0; rank1[i] != NULL && n < 39; i++)
        argv[n++] = rank1[i];
    argv[n] = NULL;
    exec_program(r, argv, false);
}

/* Rank 1 is given a file that does not exist: the job fails, rank 0's
 * message names rank 1 and the file, nothing is written, nothing is
 * left. */
static void test_failing_rank(void **state)
{
    (void)state;
    static exec_run r;
    const char *hits = exec_path("failed_hits.npy");
    run_two_apps(&r, hits,
                 (const char *[]){getenv("PRISM_PROPAGATE"), DETECTOR, "--backend", "host",
                                  "--photons", "/nonexistent/in.npy", "--hits", hits, NULL});
    assert_int_not_equal(r.exit_code, 0);
    assert_non_null(strstr(r.err, "[rank 1 on "));
    assert_non_null(strstr(r.err, "/nonexistent/in.npy: No such file or directory"));
    assert_non_null(strstr(r.err, "prism-propagate: rank 1 of 2"));
    assert_non_null(strstr(r.err, "failed (exit 1): no output written"));
    assert_false(exec_exists(hits));
    assert_int_equal(exec_count_entries(rank_tmp, false), 0);
}

/* Rank 1 cannot claim batches from the node's shared cursor (the test
 * hook makes it a rank on a node apart) where rank 0 can: the job fails
 * at once, rank 0 says why, and nothing is written. */
static void test_ranks_disagree_on_cursor(void **state)
{
    (void)state;
    static exec_run r;
    const char *hits = exec_path("disagree_hits.npy");
    run_two_apps(&r, hits,
                 (const char *[]){"env", "PRISM_PROPAGATE_TEST_APART=1", getenv("PRISM_PROPAGATE"),
                                  DETECTOR, "--backend", "host", "--count", "2000", "--hits", hits,
                                  NULL});
    assert_int_not_equal(r.exit_code, 0);
    assert_non_null(strstr(r.err, "rank 0: not every rank can claim batches from"));
    assert_non_null(strstr(r.err, "no output written"));
    assert_false(exec_exists(hits));
    assert_int_equal(exec_count_entries(rank_tmp, false), 0);
}

/* An output that cannot be written: rank 0 finds it before any rank loads
 * the detector, names it, and the job writes nothing. */
static void test_output_checked_first(void **state)
{
    (void)state;
    static exec_run r;
    const char *dir = exec_path("a_directory.npy");
    assert_int_equal(mkdir(dir, 0755), 0);
    run(&r, 2, (const char *[]){"--backend", "host", "--count", "2000", "--hits", dir, NULL});
    assert_int_not_equal(r.exit_code, 0);
    assert_non_null(strstr(r.err, "[rank 0 on "));
    assert_non_null(strstr(r.err, "a_directory.npy: is a directory"));
    assert_non_null(strstr(r.err, "no output written"));
    assert_int_equal(exec_count_entries(dir, false) + exec_count_entries(dir, true), 0);
    assert_int_equal(exec_count_entries(rank_tmp, false), 0);
}

/* --processes under mpirun: each rank is one process already; refused
 * before anything starts, naming mpirun. */
static void test_processes_refused(void **state)
{
    (void)state;
    static exec_run r;
    const char *hits = exec_path("refused_hits.npy");
    run(&r, 2,
        (const char *[]){"--backend", "host", "--count", "2000", "--processes", "2", "--hits", hits,
                         NULL});
    assert_int_not_equal(r.exit_code, 0);
    assert_non_null(strstr(r.err, "--processes: under mpirun each rank is one process"));
    assert_false(exec_exists(hits));
    assert_int_equal(exec_count_entries(rank_tmp, false), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_bytes_whatever_ranks),
        cmocka_unit_test(test_gensteps_across_ranks),
        cmocka_unit_test(test_late_rank_waited_for_by_none),
        cmocka_unit_test(test_default_binding_widened),
        cmocka_unit_test(test_slow_launch_noted),
        cmocka_unit_test(test_default_backend),
        cmocka_unit_test(test_failing_rank),
        cmocka_unit_test(test_ranks_disagree_on_cursor),
        cmocka_unit_test(test_output_checked_first),
        cmocka_unit_test(test_processes_refused),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
