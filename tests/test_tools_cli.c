/* The programs' manners on the command line (issue 28), where they are
 * not prism-propagate's own (test_propagate_tool.c): a directory given as
 * the detector, an error said once, every prism-bench stage's --help,
 * prism-info's load time of a small file, prism-view's --screenshot
 * checked before the work. $PRISM_INFO, $PRISM_BENCH,
 * $PRISM_PROPAGATE and $PRISM_VIEW are the programs; a check whose program
 * was not built is skipped. */
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

/* Run the program $`program` with `args` (NULL-terminated); false when it
 * was not built. */
static bool run(exec_run *r, const char *program, const char *const *args)
{
    const char *argv[40] = {getenv(program)};
    if (argv[0] == NULL) {
        printf("%s is not set: that program's checks skipped\n", program);
        return false;
    }
    int n = 1;
    for (; args[n - 1] != NULL && n < 39; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    exec_program(r, argv, false);
    return true;
}

static size_t occurrences(const char *text, const char *what)
{
    size_t n = 0;
    for (const char *at = strstr(text, what); at != NULL; at = strstr(at + 1, what))
        n++;
    return n;
}

/* A directory named as the input file: the loader says so. */
static void test_directory_as_detector(void **state)
{
    (void)state;
    static exec_run r;
    const char *dir = exec_path("adir.dae");
    assert_int_equal(mkdir(dir, 0755), 0);
    const char *programs[2] = {"PRISM_INFO", "PRISM_PROPAGATE"};
    for (int i = 0; i < 2; i++) {
        if (!run(&r, programs[i], (const char *[]){dir, NULL}))
            continue;
        assert_int_equal(r.exit_code, 1);
        assert_non_null(strstr(r.err, "adir.dae: is a directory"));
        assert_null(strstr(r.err, "read error"));
    }
}

/* A small file loads in well under a millisecond: the time is shown in
 * milliseconds rather than as "0.000 s". */
static void test_info_load_time(void **state)
{
    (void)state;
    static exec_run r;
    if (!run(&r, "PRISM_INFO", (const char *[]){DETECTOR, NULL}))
        return;
    assert_int_equal(r.exit_code, 0);
    const char *at = strstr(r.out, "  load       ");
    assert_non_null(at);
    char *end;
    const double t = strtod(at + strlen("  load       "), &end);
    if (!(t > 0) || (strncmp(end, " ms,", 4) != 0 && strncmp(end, " s,", 3) != 0))
        fail_msg("expected a nonzero time in ms or s: %s", at);
    assert_null(strstr(r.out, "load       0.000 s"));
}

/* Every stage prism-bench lists answers --help and -h on stdout with exit
 * 0, whatever else is on the line. */
static void test_bench_help(void **state)
{
    (void)state;
    static exec_run r;
    if (!run(&r, "PRISM_BENCH", (const char *[]){"--help", NULL}))
        return;
    assert_int_equal(r.exit_code, 0);
    const char *at = strstr(r.out, "stages:\n");
    assert_non_null(at);
    char list[4096];
    snprintf(list, sizeof list, "%s", at + strlen("stages:\n"));
    int stages = 0;
    for (char *line = strtok(list, "\n"); line != NULL && line[0] == ' ';
         line = strtok(NULL, "\n")) {
        char stage[32], usage[64];
        if (sscanf(line, " %31s", stage) != 1)
            continue;
        snprintf(usage, sizeof usage, "usage: prism-bench %s ", stage);
        const char *forms[3][4] = {{stage, "--help", NULL},
                                   {stage, "-h", NULL},
                                   {stage, "no-such.dae", "--help", NULL}};
        for (int f = 0; f < 3; f++) {
            static exec_run h;
            run(&h, "PRISM_BENCH", forms[f]);
            if (h.exit_code != 0 || strstr(h.out, usage) != h.out || h.err[0] != 0)
                fail_msg("prism-bench %s %s: exit %d, stdout '%.60s', stderr '%.200s'", stage,
                         forms[f][1], h.exit_code, h.out, h.err);
        }
        stages++;
    }
    assert_true(stages >= 2); /* load and bvh are always built */
}

/* A failing run's message, once: the engine's log callback the programs
 * install keeps errors to itself (the failed call returns them), and the
 * program prints them in its own words. A load error and an engine (upload)
 * error of each program. */
static void test_errors_once(void **state)
{
    (void)state;
    const char *bad = exec_path("bad.dae");
    FILE *f = fopen(bad, "w");
    assert_non_null(f);
    fputs("<COLLADA><bad", f);
    fclose(f);
    const char *load = "XML error: unclosed token";
    const char *upload = "the host backend has no device builder";
    const struct {
        const char *program, *args[12], *message;
    } cases[] = {
        {"PRISM_INFO", {bad}, load},
        {"PRISM_BENCH", {"render", bad}, load},
        {"PRISM_BENCH", {"propagate", bad}, load},
        {"PRISM_PROPAGATE", {bad, "--backend", "host"}, load},
        {"PRISM_PROPAGATE",
         {DETECTOR, "--backend", "host", "--bvh", "cuda", "--count", "10"},
         upload},
        {"PRISM_VIEW", {"--headless", bad}, load},
        {"PRISM_VIEW",
         {"--headless", "--frames", "1", "--backend", "host", "--bvh", "cuda", DETECTOR},
         upload},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        static exec_run r;
        if (!run(&r, cases[i].program, cases[i].args))
            continue;
        if (strcmp(cases[i].program, "PRISM_VIEW") == 0 && strstr(r.err, "headless:") != NULL) {
            printf("case %zu: no headless GL here: skipped\n", i);
            continue;
        }
        assert_int_not_equal(r.exit_code, 0);
        if (occurrences(r.err, cases[i].message) != 1)
            fail_msg("case %zu: expected '%s' once in: %s", i, cases[i].message, r.err);
    }
}

/* prism-view --screenshot that cannot be written: said before the file
 * (missing here) is even opened, exit 1, nothing created. */
static void test_view_screenshot_checked_first(void **state)
{
    (void)state;
    const char *dir = exec_path("shots");
    assert_int_equal(mkdir(dir, 0755), 0);
    char in_missing[600];
    snprintf(in_missing, sizeof in_missing, "%s/missing/x.png", dir);
    const struct {
        const char *path, *message;
    } cases[] = {{dir, "shots: is a directory"}, {in_missing, "directory '"}};
    for (int i = 0; i < 2; i++) {
        static exec_run r;
        if (!run(&r, "PRISM_VIEW",
                 (const char *[]){"--headless", "--screenshot", cases[i].path,
                                  exec_path("missing.dae"), NULL}))
            return;
        assert_int_equal(r.exit_code, 1);
        if (strstr(r.err, cases[i].message) == NULL || strstr(r.err, "missing.dae") != NULL)
            fail_msg("case %d: expected '%s' (and nothing about the file) in: %s", i,
                     cases[i].message, r.err);
        assert_int_equal(exec_count_entries(dir, false) + exec_count_entries(dir, true), 0);
    }
}

/* prism-view --bench (make run's last and longest step) shows its
 * progress over the timed frames: plain lines off a terminal, here one a
 * frame ($PRISM_PROGRESS_INTERVAL=0). */
static void test_view_bench_progress(void **state)
{
    (void)state;
    static exec_run r;
    setenv("PRISM_PROGRESS_INTERVAL", "0", 1);
    const bool ran = run(&r, "PRISM_VIEW",
                         (const char *[]){"--headless", "--bench", "--frames", "2", "--size",
                                          "64x48", "--photons", "100", DETECTOR, NULL});
    unsetenv("PRISM_PROGRESS_INTERVAL");
    if (!ran)
        return;
    if (strstr(r.err, "headless:") != NULL) {
        printf("no headless GL here: skipped\n");
        return;
    }
    assert_int_equal(r.exit_code, 0);
    assert_non_null(strstr(r.err, "prism-view: benchmark 0.0%: 0/24 frames"));
    assert_non_null(strstr(r.err, "prism-view: benchmark 50.0%: 12/24 frames, "));
    assert_non_null(strstr(r.err, "prism-view: benchmark: done in "));
    assert_non_null(strstr(r.out, "raster draw (median)"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_directory_as_detector),
        cmocka_unit_test(test_info_load_time),
        cmocka_unit_test(test_bench_help),
        cmocka_unit_test(test_errors_once),
        cmocka_unit_test(test_view_screenshot_checked_first),
        cmocka_unit_test(test_view_bench_progress),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
