/* The fuzzers' findings, kept (fuzz/README.md). Every input a harness once
 * failed on, under tests/data as collada/fuzz_*.dae, npy/fuzz_*.npy and
 * options/fuzz_*.txt, is replayed through that harness itself: fuzz/'s
 * sources are built into this test with their entry points renamed
 * (tests/fuzz_regress.cmake), and a harness aborts on what it checks. Each
 * finding's fix is then said exactly. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli.h"
#include "npy.h"
#include "propagate_tool.h"

int fuzz_collada_one(const uint8_t *data, size_t size);
int fuzz_npy_one(const uint8_t *data, size_t size);
int fuzz_options_one(const uint8_t *data, size_t size);

static uint8_t *read_all(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    const long n = ftell(f);
    assert_true(n >= 0);
    rewind(f);
    uint8_t *data = malloc((size_t)n + 1);
    assert_non_null(data);
    assert_int_equal(fread(data, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *size = (size_t)n;
    return data;
}

/* Every fuzz_* file of tests/data/`dir` ending in `suffix` through `one`;
 * how many there were. */
static int replay(const char *dir, const char *suffix, int (*one)(const uint8_t *, size_t))
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", PRISM_TEST_DATA, dir);
    DIR *d = opendir(path);
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        const size_t len = strlen(e->d_name), sl = strlen(suffix);
        if (strncmp(e->d_name, "fuzz_", 5) != 0 || len < sl ||
            strcmp(e->d_name + len - sl, suffix) != 0)
            continue;
        snprintf(path, sizeof path, "%s/%s/%s", PRISM_TEST_DATA, dir, e->d_name);
        size_t size;
        uint8_t *data = read_all(path, &size);
        print_message("replay %s/%s (%zu bytes)\n", dir, e->d_name, size);
        assert_int_equal(one(data, size), 0);
        free(data);
        n++;
    }
    closedir(d);
    return n;
}

static void test_replay_collada(void **state)
{
    (void)state;
    replay("collada", ".dae", fuzz_collada_one);
}

static void test_replay_npy(void **state)
{
    (void)state;
    assert_true(replay("npy", ".npy", fuzz_npy_one) >= 1);
}

static void test_replay_options(void **state)
{
    (void)state;
    assert_true(replay("options", ".txt", fuzz_options_one) >= 1);
}

/* npy/fuzz_descr_newline.npy: a dtype with a line break in its quotes was
 * quoted whole in a two-line message; Python refuses the header, and so
 * does the reader now, at the break. */
static void test_npy_descr_newline(void **state)
{
    (void)state;
    const uint64_t dims[2] = {4, 4};
    npy_reader r;
    const char *path = PRISM_TEST_DATA "/npy/fuzz_descr_newline.npy";
    assert_int_equal(npy_reader_open(&r, path, dims, 2), -1);
    npy_reader_close(&r);
    assert_non_null(strstr(r.error, path));
    assert_non_null(strstr(r.error, "malformed header at byte 61 of 116"));
    assert_null(strchr(r.error, '\n'));
}

/* npy/fuzz_dtype_size_overflow.npy: the words for a dtype the reader
 * refuses multiplied its size by 8 as an int (UBSan: signed overflow);
 * past 32 bytes they now leave the size out. */
static void test_npy_dtype_size_overflow(void **state)
{
    (void)state;
    const uint64_t dims[2] = {4, 4};
    npy_reader r;
    const char *path = PRISM_TEST_DATA "/npy/fuzz_dtype_size_overflow.npy";
    assert_int_equal(npy_reader_open(&r, path, dims, 2), -1);
    npy_reader_close(&r);
    assert_non_null(strstr(r.error, path));
    assert_non_null(strstr(r.error, ": dtype '<f08888888888888888888' (little-endian float); "
                                    "expected '<f4' (little-endian float32)"));
}

/* options/fuzz_count_space_minus.txt: " -7" read as a count was 2^64 - 7
 * (strtoull skips the space, then negates), so `--seed ' -7'` ran with
 * that seed where `--seed -7` is refused. A count is digits now. */
static void test_count_space_minus(void **state)
{
    (void)state;
    uint64_t v = 0;
    assert_int_equal(tool_parse_count(" -7", 0, UINT64_MAX, &v), -1);
    assert_int_equal(tool_parse_count(" 7", 0, UINT64_MAX, &v), -1);
    assert_int_equal(tool_parse_count("\t-1", 0, UINT64_MAX, &v), -1);
    assert_int_equal(tool_parse_count("7", 0, UINT64_MAX, &v), 0);
    assert_int_equal(v, 7);
    assert_int_equal(tool_parse_count("2.5e6", 0, UINT64_MAX, &v), 0);
    assert_int_equal(v, 2500000);

    char prog[] = "prism-propagate", file[] = "det.dae", seed[] = "--seed", val[] = " -7";
    char *argv[] = {prog, file, seed, val, NULL};
    propagate_options o;
    char err[256];
    assert_int_equal(propagate_options_parse(4, argv, &o, err, sizeof err), -1);
    assert_string_equal(err, "--seed: expected an integer >= 0, got ' -7'");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replay_collada),          cmocka_unit_test(test_replay_npy),
        cmocka_unit_test(test_replay_options),          cmocka_unit_test(test_npy_descr_newline),
        cmocka_unit_test(test_npy_dtype_size_overflow), cmocka_unit_test(test_count_space_minus),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
