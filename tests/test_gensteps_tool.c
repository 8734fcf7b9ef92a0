/* prism-propagate with gensteps, end to end on a detector made by
 * prism-gen-detector (host backend): a muon through it writes hits and its
 * gensteps, the summary and --json say how many gensteps and photons, the
 * saved gensteps read back with --gensteps give the same hits byte for
 * byte, and a file of the wrong shape, a bad muon and a --count beyond the
 * gensteps are refused with nothing written. $PRISM_PROPAGATE and
 * $PRISM_GEN_DETECTOR are the programs. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "exec_util.h"
#include "npy.h"
#include "prism/device/genstep.h"

static char detector[4096];

static void run(exec_run *r, const char *const *args)
{
    const char *argv[40] = {getenv("PRISM_PROPAGATE")};
    int n = 1;
    for (; args[n - 1] != NULL && n < 39; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    exec_program(r, argv, false);
}

static int setup(void **state)
{
    (void)state;
    snprintf(detector, sizeof detector, "%s", exec_path("detector.dae"));
    static exec_run r;
    const char *argv[] = {getenv("PRISM_GEN_DETECTOR"), "--pmts", "64", "-o", detector, NULL};
    exec_program(&r, argv, false);
    return r.exit_code == 0 ? 0 : -1;
}

/* A 10 GeV muon down the detector's axis: hits, the gensteps saved, and
 * their counts in the summary; then the saved gensteps again, in batches
 * of 7000: the same hits file. */
static void test_muon_end_to_end(void **state)
{
    (void)state;
    static exec_run r;
    char hits[4096], gs[4096], again[4096];
    snprintf(hits, sizeof hits, "%s", exec_path("muon_hits.npy"));
    snprintf(gs, sizeof gs, "%s", exec_path("muon_gensteps.npy"));
    snprintf(again, sizeof again, "%s", exec_path("again_hits.npy"));
    run(&r, (const char *[]){detector, "--backend", "host", "--source", "muon:0,0,-3,0,0,1,10",
                             "--hits", hits, "--save-gensteps", gs, "--json", "--quiet", NULL});
    assert_int_equal(r.exit_code, 0);
    const double count = exec_json_number(r.out, "\"gensteps\":", "count");
    const double photons = exec_json_number(r.out, "\"gensteps\":", "photons");
    assert_true(count > 0);
    assert_true(photons > 1000);
    assert_true(exec_json_number(r.out, "\"gensteps\":", "cerenkov_photons") > 0);
    /* the generated detector's liquid scintillator scintillates */
    assert_true(exec_json_number(r.out, "\"gensteps\":", "scintillation_photons") > 0);
    assert_true(exec_json_number(r.out, "\"history\":", "photons") > 0);
    const uint64_t dims[2] = {6, 4}, photon[2] = {4, 4};
    npy_reader in;
    if (npy_reader_open(&in, gs, dims, 2) != 0)
        fail_msg("%s", in.error);
    assert_int_equal(in.rows, (uint64_t)count);
    prism_genstep *g = calloc(in.rows, sizeof *g);
    assert_int_equal(npy_reader_read(&in, g, (size_t)in.rows), 0);
    npy_reader_close(&in);
    uint64_t sum = 0;
    int kinds = 0;
    for (size_t k = 0; k < (size_t)count; k++) {
        assert_true(g[k].gentype == PRISM_GENSTEP_CERENKOV ||
                    g[k].gentype == PRISM_GENSTEP_SCINTILLATION);
        kinds |= g[k].gentype == PRISM_GENSTEP_CERENKOV ? 1 : 2;
        assert_true(g[k].pos[2] >= -3.0f && g[k].pos[2] <= 3.0f);
        sum += g[k].photons;
    }
    assert_int_equal(sum, (uint64_t)photons);
    assert_int_equal(kinds, 3);
    free(g);
    if (npy_reader_open(&in, hits, photon, 2) != 0)
        fail_msg("%s", in.error);
    assert_true(in.rows > 0);
    npy_reader_close(&in);
    run(&r, (const char *[]){detector, "--backend", "host", "--gensteps", gs, "--batch", "7000",
                             "--hits", again, NULL});
    assert_int_equal(r.exit_code, 0);
    assert_non_null(strstr(r.out, "gensteps from"));
    assert_non_null(strstr(r.out, " gensteps of "));
    assert_true(exec_same_files(hits, again));
}

/* Refusals, each with its message and no output left behind. */
static void test_refused(void **state)
{
    (void)state;
    static exec_run r;
    char hits[4096], photons[4096];
    snprintf(hits, sizeof hits, "%s", exec_path("refused_hits.npy"));
    snprintf(photons, sizeof photons, "%s", exec_path("photons.npy"));
    /* a (N, 4, 4) file given as gensteps */
    npy_writer w;
    const uint64_t photon[2] = {4, 4};
    float rows[2][16] = {{0}};
    assert_int_equal(npy_writer_open(&w, photons, photon, 2), 0);
    assert_int_equal(npy_writer_append(&w, rows, 2), 0);
    assert_int_equal(npy_writer_commit(&w), 0);
    run(&r, (const char *[]){detector, "--backend", "host", "--gensteps", photons, "--hits", hits,
                             NULL});
    assert_int_equal(r.exit_code, 1);
    assert_non_null(strstr(r.err, photons));
    assert_non_null(strstr(r.err, "(N, 6, 4)"));
    assert_int_equal(access(hits, F_OK), -1);
    /* a muon below its mass, or without a direction */
    run(&r, (const char *[]){detector, "--source", "muon:0,0,-3,0,0,1,0.05", NULL});
    assert_int_equal(r.exit_code, 2);
    assert_non_null(strstr(r.err, "muon:x,y,z,dx,dy,dz,energy"));
    run(&r, (const char *[]){detector, "--source", "muon:0,0,-3,0,0,0,5", NULL});
    assert_int_equal(r.exit_code, 2);
    /* one source only; --save-gensteps needs gensteps */
    run(&r, (const char *[]){detector, "--gensteps", photons, "--source", "point:0,0,0", NULL});
    assert_int_equal(r.exit_code, 2);
    run(&r, (const char *[]){detector, "--save-gensteps", photons, NULL});
    assert_int_equal(r.exit_code, 2);
    /* a muon that misses the detector makes no photons */
    run(&r, (const char *[]){detector, "--backend", "host", "--source", "muon:0,0,-30,1,0,0,10",
                             "--hits", hits, NULL});
    assert_int_equal(r.exit_code, 1);
    assert_non_null(strstr(r.err, "the muon made no photons"));
    assert_int_equal(access(hits, F_OK), -1);
    /* more photons than the gensteps hold */
    run(&r, (const char *[]){detector, "--backend", "host", "--source", "muon:0,0,-3,0,0,1,10",
                             "--count", "1e9", "--hits", hits, NULL});
    assert_int_equal(r.exit_code, 1);
    assert_non_null(strstr(r.err, "but the gensteps hold"));
    assert_int_equal(access(hits, F_OK), -1);
}

static void test_help(void **state)
{
    (void)state;
    static exec_run r;
    run(&r, (const char *[]){"--help", NULL});
    assert_int_equal(r.exit_code, 0);
    const char *words[] = {"--gensteps in.npy", "muon:x,y,z,dx,dy,dz,energy", "--save-gensteps",
                           "genstep layout", "15 Cerenkov, 16 scintillation"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strstr(r.out, words[i]) == NULL)
            fail_msg("--help does not mention %s", words[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_help),
        cmocka_unit_test(test_muon_end_to_end),
        cmocka_unit_test(test_refused),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
