/* The programs' manners on the command line (issue 28), where they are
 * not prism-propagate's own (test_propagate_tool.c): a directory given as
 * the detector, an error said once, every prism-bench stage's --help,
 * prism-info's load time of a small file. $PRISM_INFO, $PRISM_BENCH,
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
    for (char *line = strtok(list, "\n"); line != NULL && line[0] == ' '; line = strtok(NULL, "\n")) {
        char stage[32], usage[64];
        if (sscanf(line, " %31s", stage) != 1)
            continue;
        snprintf(usage, sizeof usage, "usage: prism-bench %s ", stage);
        const char *forms[3][3] = {{stage, "--help", NULL}, {stage, "-h", NULL},
                                   {stage, "no-such.dae", "--help"}};
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_directory_as_detector),
        cmocka_unit_test(test_info_load_time),
        cmocka_unit_test(test_bench_help),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
