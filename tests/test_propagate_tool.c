/* prism-propagate end to end on the bundled detector, host backend: the
 * outputs and their shapes, a summary whose counts add up, --json that
 * parses, byte-identical files whatever the batch size, photons read back
 * in, bad input files refused with no output left behind, the no-RINDEX
 * note, --validate without a device, the command line's mistakes.
 * $PRISM_PROPAGATE is the program. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "exec_util.h"
#include "npy.h"
#include "prism/context.h"
#include "prism/propagate.h"

#define DETECTOR PRISM_ASSETS "/tiny_detector.dae"

static const uint64_t PHOTON[2] = {4, 4};

extern char **environ;

/* Run prism-propagate with `args` (NULL-terminated); stdout and stderr apart. */
static void run(exec_run *r, const char *const *args)
{
    const char *argv[40] = {getenv("PRISM_PROPAGATE")};
    int n = 1;
    for (; args[n - 1] != NULL && n < 39; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    exec_program(r, argv, false);
}

static float *read_npy(const char *path, const uint64_t *dims, uint64_t *rows)
{
    npy_reader r;
    if (npy_reader_open(&r, path, dims, 2) != 0)
        fail_msg("%s", r.error);
    size_t row = (size_t)(4 * dims[0] * dims[1]);
    float *data = malloc(r.rows * row + 1);
    assert_non_null(data);
    assert_int_equal(npy_reader_read(&r, data, (size_t)r.rows), 0);
    *rows = r.rows;
    npy_reader_close(&r);
    return data;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static size_t file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (size_t)st.st_size : 0;
}

static void test_help(void **state)
{
    (void)state;
    static exec_run r;
    run(&r, (const char *[]){"--help", NULL});
    assert_int_equal(r.exit_code, 0);
    const char *words[] = {"--photons in.npy",
                           "--source point:",
                           "beam:",
                           "--count N",
                           "--hits hits.npy",
                           "--out photons.npy",
                           "--records",
                           "--record-steps K",
                           "--seed S",
                           "--max-steps N",
                           "--backend auto|cuda|host",
                           "--placement auto|device|mapped|chroma",
                           "--bvh",
                           "--math exact|fast",
                           "--batch N",
                           "--unit m|cm|mm|auto",
                           "--json",
                           "--quiet",
                           "--validate",
                           "view(np.uint32)",
                           "--devices all|0,1",
                           "PRISM_PROGRESS_INTERVAL",
                           "exit status"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strstr(r.out, words[i]) == NULL)
            fail_msg("--help does not mention %s", words[i]);
}

static void test_bad_options(void **state)
{
    (void)state;
    const struct {
        const char *args[8];
        const char *message;
    } cases[] = {
        {{"--bogus", DETECTOR}, "unknown option '--bogus'"},
        {{"--count", "0", DETECTOR}, "--count: expected a number of photons"},
        {{"--count", "1.5", DETECTOR}, "--count: expected a number of photons"},
        {{"--count", "-3", DETECTOR}, "--count: expected a number of photons"},
        {{"--batch", "lots", DETECTOR}, "--batch: expected photons a batch"},
        {{"--seed", "x", DETECTOR}, "--seed: expected an integer"},
        {{"--lanes", "5", DETECTOR}, "--lanes: expected 1 to 4 contexts a device"},
        {{"--wavelength", "500:400", DETECTOR}, "--wavelength: expected NM or MIN:MAX"},
        {{"--wavelength", "blue", DETECTOR}, "--wavelength: expected NM or MIN:MAX"},
        {{"--wavelength", "400", "--photons", "p.npy", DETECTOR}, "--wavelength goes with"},
        {{"--max-steps", "0", DETECTOR}, "--max-steps: expected a positive integer"},
        {{"--record-steps", "2000", "--records", "r.npy", DETECTOR},
         "--record-steps: expected 1 to 1024"},
        {{"--record-steps", "4", DETECTOR}, "--record-steps goes with --records"},
        {{"--source", "line:1,2", DETECTOR}, "--source: expected point:x,y,z"},
        {{"--backend", "opencl", DETECTOR}, "--backend: expected auto, cuda or host"},
        {{"--placement", "gpu", DETECTOR}, "--placement: expected auto, device, mapped or chroma"},
        {{"--math", "sloppy", DETECTOR}, "--math: expected exact or fast"},
        {{"--unit", "km", DETECTOR}, "--unit: expected m, cm, mm or auto"},
        {{"--photons", "a.npy", "--source", "point:0,0,0", DETECTOR}, "one source of photons only"},
        {{"--hits", "x.npy", "--out", "x.npy", DETECTOR}, "'x.npy' named for two outputs"},
        {{"--validate", "--hits", "h.npy", DETECTOR}, "--validate writes no files"},
        {{"--validate", "--backend", "host", DETECTOR}, "leave out --backend host"},
        {{"--validate", "--devices", "0,1", DETECTOR}, "leave out --devices"},
        {{DETECTOR, "other.dae"}, "one detector only"},
        {{"--seed"}, "--seed needs a value"},
        {{"--quiet"}, "no DETECTOR.dae given"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        static exec_run r;
        run(&r, cases[i].args);
        assert_int_equal(r.exit_code, 2);
        if (strstr(r.err, cases[i].message) == NULL || strstr(r.err, "prism-propagate: ") == NULL)
            fail_msg("case %zu: expected \"%s\" in: %s", i, cases[i].message, r.err);
    }
}

/* The outputs of one run against its JSON summary. */
static void test_end_to_end(void **state)
{
    (void)state;
    static exec_run r;
    const char *hits = exec_path("e2e_hits.npy"), *out = exec_path("e2e_out.npy");
    const char *rec = exec_path("e2e_rec.npy");
    run(&r, (const char *[]){DETECTOR, "--count", "20000", "--seed", "3", "--hits", hits, "--out",
                             out, "--records", rec, "--record-steps", "6", "--json", "--backend",
                             "host", NULL});
    assert_int_equal(r.exit_code, 0);
    /* the JSON parses (when there is a python3 to ask) */
    char py[512];
    if (exec_on_path("python3", py, sizeof py)) {
        FILE *f = fopen(exec_path("summary.json"), "wb");
        fputs(r.out, f);
        fclose(f);
        static exec_run j;
        exec_program(&j, (const char *[]){py, "-m", "json.tool", exec_path("summary.json"), NULL},
                     true);
        assert_int_equal(j.exit_code, 0);
    } else {
        printf("# no python3: the JSON is checked by the figures below only\n");
    }
    assert_float_equal(exec_json_number(r.out, "{", "photons"), 20000, 0);
    assert_float_equal(exec_json_number(r.out, "{", "unit_meter"), 0.001, 1e-12); /* Geant4's mm */
    /* the start's stages: the first context is made while the detector
     * loads, and both are part of the setup */
    const double setup = exec_json_number(r.out, "\"seconds\":", "setup");
    const double context = exec_json_number(r.out, "\"seconds\":", "context");
    assert_true(context > 0 && context <= setup);
    assert_true(exec_json_number(r.out, "\"seconds\":", "load") <= setup);
    /* inside the calls: the parts are parts of the whole */
    const double launches = exec_json_number(r.out, "\"inside\":", "launches");
    assert_true(launches > 0);
    assert_true(exec_json_number(r.out, "\"inside\":", "tail_launches") <= launches);
    const double inside = exec_json_number(r.out, "\"seconds\":", "propagate");
    assert_true(exec_json_number(r.out, "\"inside\":", "tail") <= inside);
    assert_true(exec_json_number(r.out, "\"inside\":", "generate") <= inside);
    assert_true(exec_json_number(r.out, "\"inside\":", "hits") > 0); /* --hits was asked */
    /* the stream's time outside the calls: within the run */
    const double run = exec_json_number(r.out, "\"seconds\":", "run");
    const char *const outside[] = {"start", "finish", "pin", "hits_wait"};
    for (int i = 0; i < 4; i++) {
        const double v = exec_json_number(r.out, "\"stream\":", outside[i]);
        assert_true(v >= 0 && v <= run);
    }
    /* every photon ended one way, once */
    const char *ended = strstr(r.out, "\"ended\":{");
    assert_non_null(ended);
    double sum = 0;
    for (const char *p = ended;
         (p = strstr(p, "\"photons\":")) != NULL && p < strstr(ended, "\"detected\":"); p++)
        sum += strtod(p + 10, NULL);
    assert_float_equal(sum, 20000, 0);
    /* hits: every detected photon and nothing else; per solid they add up */
    uint64_t nh = 0, no = 0, nr = 0;
    float *h = read_npy(hits, PHOTON, &nh), *o = read_npy(out, PHOTON, &no);
    const uint64_t rdims[2] = {6, 8};
    float *rr = read_npy(rec, rdims, &nr);
    assert_int_equal(no, 20000);
    assert_int_equal(nr, 20000);
    const double detected = exec_json_number(r.out, "\"detected\":", "photons");
    assert_true(nh > 0);
    assert_float_equal((double)nh, detected, 0);
    const prism_photon *hp = (const prism_photon *)h, *op = (const prism_photon *)o;
    const prism_step_record *rp = (const prism_step_record *)rr;
    uint64_t seen = 0;
    for (uint64_t i = 0; i < no; i++) {
        if (op[i].history & PRISM_SURFACE_DETECT)
            assert_memory_equal(&hp[seen++], &op[i], sizeof *op);
        assert_int_equal(rp[i * 6].photon, i);
        assert_memory_equal(rp[i * 6 + 5].pos, op[i].pos, sizeof op[i].pos);
    }
    assert_int_equal(seen, nh);
    const char *top = strstr(r.out, "\"top\":[");
    double per_solid = 0;
    for (const char *p = top; (p = strstr(p, "\"photons\":")) != NULL; p++)
        per_solid += strtod(p + 10, NULL);
    assert_float_equal(per_solid, detected, 0); /* 6 PMTs: all in the top 10 */
    assert_int_equal(file_size(out), 128 + 20000 * 64);
    assert_int_equal(file_size(rec), 128 + 20000 * 6 * 32);
    free(h);
    free(o);
    free(rr);
}

/* Batches of 1000, 7919 and the automatic size: the same bytes. */
static void test_batches_same_bytes(void **state)
{
    (void)state;
    const char *batch[3] = {"1000", "7919", NULL};
    char files[3][3][512];
    for (int b = 0; b < 3; b++) {
        const char *names[3] = {"hits", "out", "rec"};
        for (int k = 0; k < 3; k++) {
            char n[64];
            snprintf(n, sizeof n, "batch%d_%s.npy", b, names[k]);
            snprintf(files[b][k], sizeof files[b][k], "%s", exec_path(n));
        }
        static exec_run r;
        const char *args[20] = {DETECTOR,
                                "--count",
                                "20000",
                                "--seed",
                                "7",
                                "--quiet",
                                "--backend",
                                "host",
                                "--hits",
                                files[b][0],
                                "--out",
                                files[b][1],
                                "--records",
                                files[b][2],
                                "--record-steps",
                                "5",
                                batch[b] ? "--batch" : NULL,
                                batch[b],
                                NULL};
        run(&r, args);
        assert_int_equal(r.exit_code, 0);
        assert_non_null(strstr(r.out, b == 0 ? "20 batches" : b == 1 ? "3 batches" : "1 batch "));
        /* the host backend's memory is named for what it is */
        assert_non_null(strstr(r.out, "in host memory"));
        assert_null(strstr(r.out, "on the device"));
    }
    for (int b = 1; b < 3; b++)
        for (int k = 0; k < 3; k++)
            if (!exec_same_files(files[0][k], files[b][k]))
                fail_msg("%s and %s differ", files[0][k], files[b][k]);
}

/* Several contexts (host contexts standing in for devices): the same
 * bytes as one, generated or read from a file, whatever the batch; a
 * device list CUDA cannot meet is refused, naming it. */
static void test_devices_same_bytes(void **state)
{
    (void)state;
    const char *names[3] = {"hits", "out", "rec"};
    const char *devices[3] = {NULL, "0,1", "0,1,2"}, *batch[3] = {NULL, "3001", NULL};
    char files[3][3][512];
    for (int d = 0; d < 3; d++) {
        for (int k = 0; k < 3; k++) {
            char n[64];
            snprintf(n, sizeof n, "devices%d_%s.npy", d, names[k]);
            snprintf(files[d][k], sizeof files[d][k], "%s", exec_path(n));
        }
        static exec_run r;
        const char *args[24] = {DETECTOR,
                                "--count",
                                "20000",
                                "--seed",
                                "9",
                                "--json",
                                "--backend",
                                "host",
                                "--hits",
                                files[d][0],
                                "--out",
                                files[d][1],
                                "--records",
                                files[d][2],
                                "--record-steps",
                                "3",
                                batch[d] ? "--batch" : "--quiet",
                                batch[d] ? batch[d] : "--quiet",
                                devices[d] ? "--devices" : NULL,
                                devices[d],
                                NULL};
        run(&r, args);
        assert_int_equal(r.exit_code, 0);
        assert_int_equal(exec_json_number(r.out, "{", "contexts"), d + 1);
    }
    for (int d = 1; d < 3; d++)
        for (int k = 0; k < 3; k++)
            if (!exec_same_files(files[0][k], files[d][k]))
                fail_msg("%s and %s differ", files[0][k], files[d][k]);
    /* photons from a file, spread over two contexts */
    const char *in = files[0][1], *a = exec_path("devices_in_a.npy"),
               *b = exec_path("devices_in_b.npy");
    static exec_run r;
    run(&r, (const char *[]){DETECTOR, "--photons", in, "--out", a, "--backend", "host", "--quiet",
                             NULL});
    assert_int_equal(r.exit_code, 0);
    run(&r, (const char *[]){DETECTOR, "--photons", in, "--out", b, "--backend", "host",
                             "--devices", "0,0", "--batch", "4999", "--quiet", NULL});
    assert_int_equal(r.exit_code, 0);
    assert_true(exec_same_files(a, b));
    /* CUDA devices that are not there (no device in CI; 64 on no machine) */
    run(&r, (const char *[]){DETECTOR, "--devices", "0,63", "--backend", "cuda", "--count", "10",
                             NULL});
    assert_int_not_equal(r.exit_code, 0);
    assert_non_null(strstr(r.err, "prism-propagate: --devices: device argument \"0,63\""));
    run(&r,
        (const char *[]){DETECTOR, "--devices", "0;1", "--backend", "cuda", "--count", "10", NULL});
    assert_int_not_equal(r.exit_code, 0);
    assert_non_null(strstr(r.err, "not a device index"));
}

/* Photons given in a file: read in batches, the same answer as one batch;
 * a NaN position in the second batch fails the run and leaves no output
 * and no temporary (an old file keeps its bytes); a file of the wrong
 * dtype is named with what it holds. */
static void test_photons_in(void **state)
{
    (void)state;
    enum { N = 3000 };
    prism_photon *ph = calloc(N, sizeof *ph);
    for (int i = 0; i < N; i++) {
        const float a = 0.002f * (float)i;
        ph[i] = (prism_photon){.pos = {0.1f, 0, 0},
                               .dir = {cosf(a), sinf(a), 0.3f},
                               .wavelength = 400.0f + (float)(i % 100),
                               .time = 1.0f};
    }
    const char *in = exec_path("in.npy"), *nan_in = exec_path("nan_in.npy");
    npy_writer w;
    assert_int_equal(npy_writer_open(&w, in, PHOTON, 2), 0);
    assert_int_equal(npy_writer_append(&w, ph, N), 0);
    assert_int_equal(npy_writer_commit(&w), 0);
    ph[1500].pos[1] = NAN;
    assert_int_equal(npy_writer_open(&w, nan_in, PHOTON, 2), 0);
    assert_int_equal(npy_writer_append(&w, ph, N), 0);
    assert_int_equal(npy_writer_commit(&w), 0);
    free(ph);
    static exec_run r;
    const char *a = exec_path("in_a.npy"), *b = exec_path("in_b.npy");
    run(&r, (const char *[]){DETECTOR, "--photons", in, "--out", a, "--backend", "host", NULL});
    assert_int_equal(r.exit_code, 0);
    assert_non_null(strstr(r.out, "3000 photons (photons from"));
    run(&r, (const char *[]){DETECTOR, "--photons", in, "--out", b, "--batch", "701", "--backend",
                             "host", NULL});
    assert_int_equal(r.exit_code, 0);
    assert_true(exec_same_files(a, b));
    /* the first --count photons only */
    run(&r,
        (const char *[]){DETECTOR, "--photons", in, "--count", "10", "--backend", "host", NULL});
    assert_int_equal(r.exit_code, 0);
    assert_non_null(strstr(r.out, "10 photons"));
    /* failures: nothing left but the old file, which keeps its bytes */
    const char *dir = exec_path("failing");
    assert_int_equal(mkdir(dir, 0755), 0);
    char hits[600], out[600];
    snprintf(hits, sizeof hits, "%s/hits.npy", dir);
    snprintf(out, sizeof out, "%s/out.npy", dir);
    FILE *f = fopen(out, "wb");
    fputs("an older run", f);
    fclose(f);
    run(&r, (const char *[]){DETECTOR, "--photons", nan_in, "--batch", "1000", "--hits", hits,
                             "--out", out, "--backend", "host", NULL});
    assert_int_equal(r.exit_code, 1);
    assert_non_null(strstr(r.err, "nan_in.npy: photon 1500: position (0.1, nan, 0) is not "
                                  "finite"));
    assert_int_equal(exec_count_entries(dir, false), 1);
    assert_int_equal(file_size(out), 12);
    run(&r, (const char *[]){DETECTOR, "--photons", nan_in, "--count", "5000", NULL});
    assert_int_equal(r.exit_code, 1);
    assert_non_null(strstr(r.err, "--count 5000, but"));
    assert_non_null(strstr(r.err, "nan_in.npy holds 3000 photons"));
    run(&r, (const char *[]){DETECTOR, "--photons", DETECTOR, NULL});
    assert_int_equal(r.exit_code, 1);
    assert_non_null(strstr(r.err, "tiny_detector.dae: not a .npy file"));
}

/* An output that cannot be written is found before any work: exit 1 with
 * a message naming it, and nothing created. The detector named does not
 * exist, so a message about the output shows it came first. */
static void test_outputs_checked_first(void **state)
{
    (void)state;
    const char *dir = exec_path("outputs");
    assert_int_equal(mkdir(dir, 0755), 0);
    char sub[600], file[600], in_sub[600], in_file[600], big[600], ok[600], locked[600],
        in_locked[600];
    snprintf(sub, sizeof sub, "%s/existing", dir);
    snprintf(file, sizeof file, "%s/plain", dir);
    snprintf(in_sub, sizeof in_sub, "%s/missing/x.npy", dir);
    snprintf(in_file, sizeof in_file, "%s/plain/x.npy", dir);
    snprintf(big, sizeof big, "%s/big.npy", dir);
    snprintf(ok, sizeof ok, "%s/ok.npy", dir);
    snprintf(locked, sizeof locked, "%s/locked", dir);
    snprintf(in_locked, sizeof in_locked, "%s/locked/x.npy", dir);
    assert_int_equal(mkdir(sub, 0755), 0);
    assert_int_equal(mkdir(locked, 0555), 0);
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    fclose(f);
    const char *missing = exec_path("missing.dae");
    const struct {
        const char *args[10];
        const char *message;
    } cases[] = {
        {{"--hits", sub}, "existing: is a directory"},
        {{"--out", in_sub}, "missing/x.npy: directory '"},
        {{"--records", in_file}, "plain/x.npy: '"},
        {{"--out", big, "--count", "1e15"}, "big.npy: needs 64.0 PB, but the file system of '"},
        {{"--records", big, "--count", "1e15", "--record-steps", "16"}, "big.npy: needs 512.0 PB"},
        {{"--hits", ok, "--out", big, "--count", "1e15"}, "big.npy: needs 64.0 PB"},
        {{"--hits", in_locked}, "locked/x.npy: cannot create a file in '"},
    };
    const size_t entries = exec_count_entries(dir, false);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (i == 6 && geteuid() == 0) {
            printf("root writes in a read-only directory: the unwritable case skipped\n");
            continue;
        }
        const char *args[16] = {missing, "--backend", "host"};
        for (int a = 0; cases[i].args[a] != NULL; a++)
            args[3 + a] = cases[i].args[a];
        static exec_run r;
        const double t0 = now();
        run(&r, args);
        assert_int_equal(r.exit_code, 1);
        if (strstr(r.err, cases[i].message) == NULL || strstr(r.err, "missing.dae") != NULL)
            fail_msg("case %zu: expected \"%s\" (and nothing about the detector) in: %s", i,
                     cases[i].message, r.err);
        assert_true(now() - t0 < 10.0);
        assert_int_equal(exec_count_entries(dir, false), entries);
        assert_int_equal(exec_count_entries(dir, true), 0);
        assert_int_equal(exec_count_entries(sub, false) + exec_count_entries(sub, true), 0);
    }
    chmod(locked, 0755);
}

/* stderr not a terminal: plain progress lines, here one a batch
 * ($PRISM_PROGRESS_INTERVAL=0), the estimate after the first batch, the
 * counts in one unit from the first line on; none with --quiet, and none
 * in a run shorter than the default interval. */
static void test_progress_lines(void **state)
{
    (void)state;
    static exec_run r;
    const char *hits = exec_path("progress_hits.npy");
    const char *args[] = {DETECTOR, "--count",   "20000", "--batch", "5000", "--hits",
                          hits,     "--backend", "host",  NULL,      NULL};
    setenv("PRISM_PROGRESS_INTERVAL", "0", 1);
    run(&r, args);
    assert_int_equal(r.exit_code, 0);
    const char *lines[] = {"prism-propagate: propagating 0.0%: 0/20 k photons, 0/s\n",
                           "prism-propagate: first batch of 5000 photons in ",
                           " left; the hits file about ",
                           "prism-propagate: propagating 50.0%: 10/20 k photons, ",
                           "prism-propagate: propagating: done in "};
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
        if (strstr(r.err, lines[i]) == NULL)
            fail_msg("expected '%s' in: %s", lines[i], r.err);
    assert_null(strchr(r.err, '\r'));
    assert_null(strstr(r.err, "e-0"));
    args[9] = "--quiet";
    run(&r, args);
    assert_int_equal(r.exit_code, 0);
    assert_null(strstr(r.err, "propagating"));
    assert_null(strstr(r.err, "first batch"));
    unsetenv("PRISM_PROGRESS_INTERVAL");
    args[9] = NULL;
    run(&r, args);
    assert_int_equal(r.exit_code, 0);
    assert_null(strstr(r.err, "propagating"));
    assert_null(strstr(r.err, "first batch"));
}

/* SIGINT in the middle of a run: the temporaries go, and the program says
 * so in one line before it dies of the signal. */
static void test_interrupted(void **state)
{
    (void)state;
    const char *dir = exec_path("interrupted");
    assert_int_equal(mkdir(dir, 0755), 0);
    char hits[600], err[600];
    snprintf(hits, sizeof hits, "%s/hits.npy", dir);
    snprintf(err, sizeof err, "%s.err", dir);
    const char *argv[] = {getenv("PRISM_PROPAGATE"),
                          DETECTOR,
                          "--count",
                          "1e9",
                          "--hits",
                          hits,
                          "--backend",
                          "host",
                          "--quiet",
                          NULL};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid;
    assert_int_equal(posix_spawn(&pid, argv[0], &fa, NULL, (char *const *)argv, environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    /* running: the hits' temporary is there */
    for (int i = 0; i < 600 && exec_count_entries(dir, true) == 0; i++)
        nanosleep(&(struct timespec){0, 50 * 1000 * 1000}, NULL);
    assert_int_equal(exec_count_entries(dir, true), 1);
    assert_int_equal(kill(pid, SIGINT), 0);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGINT);
    char *said = exec_read_file(err, NULL);
    assert_non_null(said);
    if (strcmp(said, "prism-propagate: interrupted: no output written\n") != 0)
        fail_msg("stderr: '%s'", said);
    free(said);
    assert_int_equal(exec_count_entries(dir, true) + exec_count_entries(dir, false), 0);
}

/* The note about a geometry without optics: once, and only then; the
 * unit the user imposes. */
static void test_no_rindex_note(void **state)
{
    (void)state;
    static exec_run r;
    const char *note = "no RINDEX anywhere: every material is vacuum";
    run(&r, (const char *[]){PRISM_ASSETS "/cube.dae", "--count", "1000", "--backend", "host",
                             "--json", NULL});
    assert_int_equal(r.exit_code, 0);
    const char *at = strstr(r.err, note);
    assert_non_null(at);
    assert_null(strstr(at + 1, note));
    assert_non_null(strstr(r.out, "\"no_rindex\":true"));
    run(&r, (const char *[]){DETECTOR, "--count", "1000", "--backend", "host", NULL});
    assert_int_equal(r.exit_code, 0);
    assert_null(strstr(r.err, note));
    /* --unit: the user's unit, said in the summary */
    run(&r, (const char *[]){DETECTOR, "--count", "1000", "--backend", "host", "--unit", "m",
                             "--json", NULL});
    assert_int_equal(r.exit_code, 0);
    assert_float_equal(exec_json_number(r.out, "{", "unit_meter"), 1.0, 0);
    assert_non_null(strstr(r.out, "user"));
}

/* --validate: without a device it says so (exit 4); with one it compares
 * (the gpu-labelled test propagate_tool_validate asks for agreement). */
static void test_validate_without_device(void **state)
{
    (void)state;
    static exec_run r;
    run(&r, (const char *[]){DETECTOR, "--validate", "--count", "2000", NULL});
    if (prism_cuda_device_count() > 0) {
        assert_int_equal(r.exit_code, 0);
        assert_non_null(strstr(r.out, "agree"));
    } else {
        assert_int_equal(r.exit_code, 4);
        assert_non_null(strstr(r.err, "nothing to compare the host backend with"));
    }
}

/* CUDA_DEVICE_MAX_CONNECTIONS: set to 4 before CUDA starts unless the
 * user set it (then kept, and not reported), and left alone on the host
 * backend; --json says what the run set. */
static void test_cuda_connections(void **state)
{
    (void)state;
    static exec_run r;
    const char *key = "\"cuda_device_max_connections\":\"4\"";
    const char *const plain[] = {DETECTOR, "--count", "1000", "--json", NULL};
    unsetenv("CUDA_DEVICE_MAX_CONNECTIONS");
    run(&r, plain);
    assert_int_equal(r.exit_code, 0);
    assert_non_null(strstr(r.out, key));
    run(&r, (const char *[]){DETECTOR, "--count", "1000", "--json", "--backend", "host", NULL});
    assert_int_equal(r.exit_code, 0);
    assert_null(strstr(r.out, "cuda_device_max_connections"));
    setenv("CUDA_DEVICE_MAX_CONNECTIONS", "8", 1);
    run(&r, plain);
    unsetenv("CUDA_DEVICE_MAX_CONNECTIONS");
    assert_int_equal(r.exit_code, 0);
    assert_null(strstr(r.out, "cuda_device_max_connections"));
}

int main(void)
{
    if (getenv("PRISM_PROPAGATE") == NULL) {
        printf("PRISM_PROPAGATE is not set: skipped\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_help),
        cmocka_unit_test(test_bad_options),
        cmocka_unit_test(test_end_to_end),
        cmocka_unit_test(test_batches_same_bytes),
        cmocka_unit_test(test_devices_same_bytes),
        cmocka_unit_test(test_photons_in),
        cmocka_unit_test(test_outputs_checked_first),
        cmocka_unit_test(test_progress_lines),
        cmocka_unit_test(test_interrupted),
        cmocka_unit_test(test_no_rindex_note),
        cmocka_unit_test(test_validate_without_device),
        cmocka_unit_test(test_cuda_connections),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
