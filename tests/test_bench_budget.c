/* prism-bench propagate and render --device-budget on the host backend, so
 * that it runs without a GPU: the option's sizes and its errors, each row's
 * policy label and placement (the nodes split at a whole node, the device
 * bytes within the budget), and the split tree's photons equal to the
 * unsplit tree's. $PRISM_BENCH is the program. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "exec_util.h"

#define DETECTOR PRISM_ASSETS "/tiny_detector.dae"

static void bench(exec_run *r, const char *const *args)
{
    const char *argv[40] = {getenv("PRISM_BENCH")};
    if (argv[0] == NULL)
        fail_msg("PRISM_BENCH is not set");
    int n = 1;
    for (; args[n - 1] != NULL && n < 39; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    exec_program(r, argv, false);
}

/* The 16 hex digits of "hash" in the row that `anchor` starts. */
static void row_hash(const char *json, const char *anchor, char hash[17])
{
    const char *at = strstr(json, anchor);
    assert_non_null(at);
    at = strstr(at, "\"hash\":\"");
    assert_non_null(at);
    memcpy(hash, at + 8, 16);
    hash[16] = 0;
}

#define NUM(json, anchor, key) ((size_t)exec_json_number((json), (anchor), (key)))

/* The binary walk (PRISM_TRAVERSAL=binary; the host otherwise walks the
 * wide tree, which a split leaves whole in mapped memory) on a split
 * node array: the same photons as on the unsplit one. */
static void test_propagate_rows(void **state)
{
    (void)state;
    static exec_run r;
    assert_int_equal(setenv("PRISM_TRAVERSAL", "binary", 1), 0);
    bench(&r, (const char *[]){"propagate", DETECTOR, "--no-cuda", "--host-count", "2000",
                               "--device-budget", "1k,1G", "--json", NULL});
    assert_int_equal(unsetenv("PRISM_TRAVERSAL"), 0);
    assert_int_equal(r.exit_code, 0);
    const char *a = "\"policy\":\"auto\"", *k = "\"policy\":\"budget:1k\"",
               *g = "\"policy\":\"budget:1G\"";
    const size_t nodes = NUM(r.out, a, "node_device_bytes");
    assert_true(nodes > 1024); /* so that 1k splits them */
    assert_int_equal(NUM(r.out, a, "device_budget"), 0);
    assert_int_equal(NUM(r.out, a, "node_mapped_bytes"), 0);
    /* 1k: 32 nodes of 32 bytes on the device, nothing else */
    assert_int_equal(NUM(r.out, k, "device_budget"), 1024);
    assert_int_equal(NUM(r.out, k, "node_device_bytes"), 1024);
    assert_int_equal(NUM(r.out, k, "node_mapped_bytes"), nodes - 1024);
    assert_int_equal(NUM(r.out, k, "device_bytes"), 1024);
    assert_int_equal(NUM(r.out, k, "device_bytes") + NUM(r.out, k, "mapped_bytes"),
                     NUM(r.out, a, "device_bytes"));
    /* 1G holds everything: as auto */
    assert_int_equal(NUM(r.out, g, "device_budget"), (size_t)1 << 30);
    assert_int_equal(NUM(r.out, g, "node_mapped_bytes"), 0);
    assert_int_equal(NUM(r.out, g, "device_bytes"), NUM(r.out, a, "device_bytes"));
    assert_non_null(strstr(strstr(r.out, k), "\"tree\":\"binary\""));
    char h_auto[17], h_split[17], h_all[17];
    row_hash(r.out, a, h_auto);
    row_hash(r.out, k, h_split);
    row_hash(r.out, g, h_all);
    assert_string_equal(h_split, h_auto);
    assert_string_equal(h_all, h_auto);
    assert_int_equal(NUM(r.out, k, "steps"), NUM(r.out, a, "steps"));
}

/* The table labels the rows and shows where the nodes went. */
static void test_propagate_table(void **state)
{
    (void)state;
    static exec_run r;
    bench(&r, (const char *[]){"propagate", DETECTOR, "--no-cuda", "--host-count", "500",
                               "--device-budget", "2048,3k", NULL});
    assert_int_equal(r.exit_code, 0);
    assert_non_null(strstr(r.out, "node dev MB"));
    assert_non_null(strstr(r.out, "node map MB"));
    assert_non_null(strstr(r.out, "\nhost   auto "));
    assert_non_null(strstr(r.out, "\nhost   budget:2k "));
    assert_non_null(strstr(r.out, "\nhost   budget:3k "));
}

static void test_render_rows(void **state)
{
    (void)state;
    static exec_run r;
    bench(&r, (const char *[]){"render", DETECTOR, "--no-cuda", "--width", "32", "--height", "18",
                               "--device-budget", "1k", "--json", NULL});
    assert_int_equal(r.exit_code, 0);
    const char *views[4] = {"outside", "inside", "outside-xray", "inside-xray"};
    for (int v = 0; v < 4; v++) {
        char anchor[96];
        snprintf(anchor, sizeof anchor, "\"policy\":\"budget:1k\",\"variant\":\"\",\"view\":\"%s\"",
                 views[v]);
        assert_int_equal(NUM(r.out, anchor, "device_budget"), 1024);
        assert_int_equal(NUM(r.out, anchor, "node_device_bytes"), 1024);
        assert_true(NUM(r.out, anchor, "device_bytes") <= 1024);
        assert_true(NUM(r.out, anchor, "node_mapped_bytes") > 0);
    }
    assert_non_null(strstr(r.out, "\"policy\":\"auto\""));
}

/* Malformed sizes: a message naming the option, the usage, exit 2. */
static void test_bad_sizes(void **state)
{
    (void)state;
    static exec_run r;
    static const char *const bad[] = {"0",
                                      "4X",
                                      "1,,2",
                                      ",1",
                                      "1k,",
                                      "",
                                      "-1",
                                      "1.5M",
                                      "1,2,3,4,5,6,7,8,9",
                                      "99999999999999999999999G"};
    const char *stages[2] = {"propagate", "render"};
    for (int s = 0; s < 2; s++)
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            bench(&r, (const char *[]){stages[s], DETECTOR, "--no-cuda", "--device-budget", bad[i],
                                       NULL});
            assert_int_equal(r.exit_code, 2);
            assert_non_null(strstr(r.err, "--device-budget: expected up to 8 sizes"));
            assert_non_null(strstr(r.err, "usage: prism-bench"));
        }
}

static void test_help(void **state)
{
    (void)state;
    static exec_run r;
    const char *stages[2] = {"propagate", "render"};
    for (int s = 0; s < 2; s++) {
        bench(&r, (const char *[]){stages[s], "--help", NULL});
        assert_int_equal(r.exit_code, 0);
        assert_non_null(strstr(r.out, "[--device-budget B,B..]"));
        assert_non_null(strstr(r.out, "2^10, 2^20, 2^30 bytes"));
        assert_non_null(strstr(r.out, "budget:B"));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_propagate_rows), cmocka_unit_test(test_propagate_table),
        cmocka_unit_test(test_render_rows),    cmocka_unit_test(test_bad_sizes),
        cmocka_unit_test(test_help),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
