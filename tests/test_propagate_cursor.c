/* The cursor the processes of a node share (tools/propagate_cursor.c):
 * made once by whoever maps its file first and found as it is by the
 * others; batches claimed in order across the mappings and across
 * processes, each placed after every batch claimed before it (counted
 * early or at its place); a stopped cursor refuses claims; a turn waits
 * for the member before (its turn passed, its end, the run's stop, or the
 * limit); a file that cannot be made is named with why. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "progress.h"
#include "propagate_cursor.h"

static char dir[256], path[512];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/prism-cursor-XXXXXX");
    if (mkdtemp(dir) == NULL)
        return -1;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return rmdir(dir);
}

static propagate_cursor *attach(const char *name)
{
    char err[768] = "";
    snprintf(path, sizeof path, "%s/%s", dir, name);
    propagate_cursor *c = propagate_cursor_attach(path, err, sizeof err);
    if (c == NULL)
        fail_msg("%s", err);
    return c;
}

/* Two mappings of one file and a forked process: one cursor. */
static void test_one_cursor_for_every_mapping(void **state)
{
    (void)state;
    propagate_cursor *a = attach("one"), *b = attach("one");
    assert_ptr_not_equal(a, b);
    uint64_t first = 9, count = 9, seq = 9, at = 9;
    assert_int_equal(propagate_cursor_claim(a, 10000, 3000, 1, &first, &count, &seq), 0);
    assert_int_equal(first, 0);
    assert_int_equal(count, 3000);
    assert_int_equal(seq, 0);
    assert_int_equal(propagate_cursor_claim(b, 10000, 3000, 1, &first, &count, &seq), 0);
    assert_int_equal(first, 3000);
    assert_int_equal(seq, 1);
    /* another process claims the third batch and places it once the
     * first two are placed */
    const pid_t pid = fork();
    if (pid == 0) {
        char err[768];
        propagate_cursor *c = propagate_cursor_attach(path, err, sizeof err);
        uint64_t f = 0, n = 0, s = 0, where = 0;
        const int ok = c != NULL && propagate_cursor_claim(c, 10000, 3000, 1, &f, &n, &s) == 0 &&
                       f == 6000 && s == 2 && propagate_cursor_place(c, s, n, 4, &where) == 0 &&
                       where == 12;
        _exit(ok ? 0 : 1);
    }
    assert_true(pid > 0);
    assert_int_equal(propagate_cursor_place(a, 0, 3000, 7, &at), 0);
    assert_int_equal(at, 0);
    assert_int_equal(propagate_cursor_place(b, 1, 3000, 5, &at), 0);
    assert_int_equal(at, 7);
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    uint64_t photons = 0;
    assert_int_equal(propagate_cursor_placed(b, &photons), 16);
    assert_int_equal(photons, 9000);
    /* found as it is by a later mapping, not made anew */
    propagate_cursor *c = attach("one");
    assert_int_equal(c->next_seq, 3);
    assert_int_equal(propagate_cursor_claim(c, 10000, 3000, 1, &first, &count, &seq), 0);
    assert_int_equal(first, 9000);
    assert_int_equal(count, 1000);
    assert_int_equal(propagate_cursor_place(c, 3, 1000, 0, &at), 0);
    assert_int_equal(at, 16);
    assert_int_equal(propagate_cursor_claim(a, 10000, 3000, 1, &first, &count, &seq), 0);
    assert_int_equal(count, 0); /* none left */
    propagate_cursor_stop(a);
    assert_int_equal(propagate_cursor_claim(b, 20000, 3000, 1, &first, &count, &seq), -1);
    propagate_cursor_detach(a);
    propagate_cursor_detach(b);
    propagate_cursor_detach(c);
    assert_int_equal(unlink(path), 0);
}

/* Counts told early: a batch's place is known as soon as every batch
 * before it is counted, without the place of any of them asked first; a
 * count told twice keeps the first; place after count does not count
 * again. */
static void test_counts_told_early(void **state)
{
    (void)state;
    propagate_cursor *c = attach("early");
    uint64_t first = 0, count = 0, seq = 0, at = 99;
    for (int k = 0; k < 3; k++) {
        assert_int_equal(propagate_cursor_claim(c, 9000, 3000, 1, &first, &count, &seq), 0);
        assert_int_equal(seq, (uint64_t)k);
    }
    /* the last batch counted first: nothing placed yet */
    propagate_cursor_count(c, 2, 3000, 11);
    assert_int_equal(propagate_cursor_placed(c, NULL), 0);
    /* the second counted, then the first: all three placed, in order */
    propagate_cursor_count(c, 1, 3000, 5);
    propagate_cursor_count(c, 1, 3000, 500); /* told again: ignored */
    assert_int_equal(propagate_cursor_placed(c, NULL), 0);
    propagate_cursor_count(c, 0, 3000, 7);
    uint64_t photons = 0;
    assert_int_equal(propagate_cursor_placed(c, &photons), 23);
    assert_int_equal(photons, 9000);
    /* their places, asked in any order, at once (a wait would hang here),
     * the counts given to place ignored for batches already counted */
    assert_int_equal(propagate_cursor_place(c, 2, 3000, 1000, &at), 0);
    assert_int_equal(at, 12);
    assert_int_equal(propagate_cursor_place(c, 0, 3000, 1000, &at), 0);
    assert_int_equal(at, 0);
    assert_int_equal(propagate_cursor_place(c, 1, 3000, 1000, &at), 0);
    assert_int_equal(at, 7);
    assert_int_equal(propagate_cursor_placed(c, NULL), 23);
    propagate_cursor_detach(c);
    assert_int_equal(unlink(path), 0);
}

/* A turn waits for the member before: its turn passed, or its end, or
 * the run's stop, or at most the limit. */
static void test_turns(void **state)
{
    (void)state;
    propagate_cursor *c = attach("turns");
    double t0 = tool_now();
    propagate_cursor_turn(c, 0, 5.0); /* the first waits for no one */
    propagate_cursor_turn(c, 1, 0.2); /* member 0 never passes: the limit */
    const double waited = tool_now() - t0;
    assert_true(waited >= 0.2);
    assert_true(waited < 2.0);
    propagate_cursor_turned(c, 0);
    t0 = tool_now();
    propagate_cursor_turn(c, 1, 5.0);
    propagate_cursor_ended(c, 1); /* ended without passing its turn */
    assert_true(propagate_cursor_has_ended(c, 1));
    assert_false(propagate_cursor_has_ended(c, 2));
    propagate_cursor_turn(c, 2, 5.0);
    assert_true(tool_now() - t0 < 1.0);
    propagate_cursor_stop(c);
    t0 = tool_now();
    propagate_cursor_turn(c, 4, 5.0); /* member 3 never started: the run stopped */
    assert_true(tool_now() - t0 < 1.0);
    propagate_cursor_detach(c);
    assert_int_equal(unlink(path), 0);
}

static void test_file_that_cannot_be_made(void **state)
{
    (void)state;
    char err[768] = "", where[600];
    snprintf(where, sizeof where, "%s/no/such/dir", dir);
    assert_null(propagate_cursor_attach(where, err, sizeof err));
    assert_non_null(strstr(err, where));
    assert_non_null(strstr(err, "No such file or directory"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_cursor_for_every_mapping),
        cmocka_unit_test(test_counts_told_early),
        cmocka_unit_test(test_turns),
        cmocka_unit_test(test_file_that_cannot_be_made),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
