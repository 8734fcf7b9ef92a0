/* Checks of a shared run's per_rank figures (rank_shares.h). */
#include "rank_shares.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

int rank_json_array(const char *json, const char *key, double *v, int max)
{
    char pattern[64];
    snprintf(pattern, sizeof pattern, "\"%s\":[", key);
    const char *p = strstr(json, pattern);
    int n = 0;
    if (p == NULL)
        return 0;
    p += strlen(pattern);
    while (n < max && *p != ']') {
        char *end;
        v[n++] = strtod(p, &end);
        p = *end == ',' ? end + 1 : end;
    }
    return n;
}

static double file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (double)st.st_size : -1.0;
}

void assert_rank_shares(const char *json, int np, const char files[3][512], double photons,
                        const double *expected)
{
    double read[8], written[8], taken[8], setup[8], init[8], finish[8], launch[8];
    assert_true(np <= 8);
    assert_non_null(strstr(json, "\"per_rank\":{"));
    assert_int_equal(rank_json_array(json, "read_bytes", read, 8), np);
    assert_int_equal(rank_json_array(json, "written_bytes", written, 8), np);
    assert_int_equal(rank_json_array(json, "photons", taken, 8), np);
    assert_int_equal(rank_json_array(json, "setup_seconds", setup, 8), np);
    assert_int_equal(rank_json_array(json, "init_seconds", init, 8), np);
    assert_int_equal(rank_json_array(json, "finish_seconds", finish, 8), np);
    assert_int_equal(rank_json_array(json, "launch_seconds", launch, 8), np);
    enum { HEADER = 128 }; /* npy_writer's header for these shapes */
    double data = 0, total = 0, all = 0;
    for (int k = 0; k < 3; k++)
        data += file_size(files[k]) - HEADER;
    for (int r = 0; r < np; r++) {
        const double rows = taken[r] * (64 + 3 * 32),
                     hits = written[r] - rows - (r == 0 ? 3 * HEADER : 0);
        if (expected != NULL)
            assert_true(taken[r] == expected[r]);
        assert_true(read[r] == 0);
        assert_true(hits >= 0 && fmod(hits, 64) == 0);
        assert_true(setup[r] > 0);
        assert_true(launch[r] >= 0 && launch[r] < 60); /* known on Linux */
        total += written[r] - (r == 0 ? 3 * HEADER : 0);
        all += taken[r];
    }
    assert_true(total == data);
    assert_true(all == photons);
}
