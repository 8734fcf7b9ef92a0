/* The BVH builder's progress callback (prism_bvh_desc.progress): the calls
 * run from (0, total) to (total, total) with done growing, at a bounded
 * rate, all on the calling thread and never overlapping; a false return
 * cancels with PRISM_ERROR_IO and nothing left allocated (the ASan run
 * checks that); and a callback never changes the tree. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "bvh_test_util.h"

/* What the callback saw. `cancel_at`: the call (0-based) that returns
 * false; -1 never, -2 the one with done == total. */
typedef struct recorder {
    pthread_t caller;
    int calls, inside, overlapped, foreign_thread, non_monotonic, wrong_total;
    int calls_after_false, cancel_at;
    size_t first_done, last_done, total;
    bool said_false;
} recorder;

static bool record(void *user, size_t done, size_t total)
{
    recorder *r = user;
    if (__atomic_fetch_add(&r->inside, 1, __ATOMIC_SEQ_CST) != 0)
        r->overlapped++;
    if (!pthread_equal(pthread_self(), r->caller))
        r->foreign_thread++;
    if (r->said_false)
        r->calls_after_false++;
    if (r->calls == 0)
        r->first_done = done;
    else if (done < r->last_done || (done == r->last_done && done != total))
        r->non_monotonic++;
    if (total != r->total)
        r->wrong_total++;
    r->last_done = done;
    bool go_on = !(r->cancel_at == r->calls || (r->cancel_at == -2 && done == total));
    r->said_false |= !go_on;
    r->calls++;
    __atomic_fetch_sub(&r->inside, 1, __ATOMIC_SEQ_CST);
    return go_on;
}

typedef struct log_capture {
    char text[512];
} log_capture;

static void capture(void *user, prism_log_level level, const char *message)
{
    log_capture *c = user;
    if (level == PRISM_LOG_ERROR)
        snprintf(c->text, sizeof c->text, "%s", message);
}

static void make_soup(soup *s, size_t n, uint64_t seed)
{
    rng r = {seed};
    *s = (soup){0};
    soup_random(s, SOUP_MIXED, n, &r, 1.0f, NULL);
}

static prism_result build(const soup *s, int threads, recorder *rec, log_capture *log,
                          prism_bvh **out)
{
    if (rec) {
        rec->caller = pthread_self();
        rec->total = s->nt;
    }
    prism_bvh_desc d = {.threads = threads,
                        .progress = rec ? record : NULL,
                        .progress_user = rec,
                        .log = capture,
                        .log_user = log};
    return prism_bvh_build(s->pos, s->nv, s->idx, s->nt, &d, out);
}

static void check_calls(const recorder *r, size_t n)
{
    assert_int_equal(r->overlapped, 0);
    assert_int_equal(r->foreign_thread, 0);
    assert_int_equal(r->non_monotonic, 0);
    assert_int_equal(r->wrong_total, 0);
    assert_int_equal(r->first_done, 0);
    assert_true(r->last_done == n);
    assert_true(r->calls >= 2);
    assert_true(r->calls <= 102); /* (0, n), ~100 steps, (n, n) */
}

/* Large enough for the parallel binning and partitions (2^16 references). */
#define BIG 150000

static void test_calls(void **state)
{
    (void)state;
    soup s;
    make_soup(&s, BIG, 11);
    for (int threads = 1; threads <= 3; threads++) {
        recorder rec = {.cancel_at = -1};
        log_capture log = {""};
        prism_bvh *bvh = NULL;
        assert_int_equal(build(&s, threads, &rec, &log, &bvh), PRISM_SUCCESS);
        assert_non_null(bvh);
        check_calls(&rec, s.nt);
        if (threads == 1) /* the caller places every leaf: every step reported */
            assert_true(rec.calls >= 50);
        prism_bvh_free(bvh);
    }
    soup_free(&s);
}

/* done == total exactly once, in the last call. */
static void test_total_once(void **state)
{
    (void)state;
    soup s;
    make_soup(&s, 3000, 12);
    recorder rec = {.cancel_at = -1};
    prism_bvh *bvh = NULL; /* one thread: the same calls every time */
    assert_int_equal(build(&s, 1, &rec, &(log_capture){""}, &bvh), PRISM_SUCCESS);
    check_calls(&rec, s.nt);
    /* the non-monotonic check forbids a repeated done below total; a
     * repeated total would show as calls after it: */
    recorder again = {.cancel_at = -2};
    prism_bvh *none = NULL;
    assert_int_equal(build(&s, 1, &again, &(log_capture){""}, &none), PRISM_ERROR_IO);
    assert_int_equal(again.calls, rec.calls); /* false only at the very last call */
    prism_bvh_free(bvh);
    soup_free(&s);
}

static void assert_same_tree(const prism_bvh *a, const prism_bvh *b)
{
    assert_int_equal(a->node_count, b->node_count);
    assert_int_equal(a->triangle_count, b->triangle_count);
    assert_memory_equal(a->nodes, b->nodes, a->node_count * sizeof *a->nodes);
    assert_memory_equal(a->triangles, b->triangles, a->triangle_count * 3 * sizeof(uint32_t));
    assert_memory_equal(a->triangle_ids, b->triangle_ids, a->triangle_count * sizeof(uint32_t));
    assert_true(a->stats.sah_cost == b->stats.sah_cost);
}

static void test_same_tree(void **state)
{
    (void)state;
    soup s;
    make_soup(&s, BIG, 13);
    prism_bvh *plain = NULL, *watched = NULL;
    assert_int_equal(build(&s, 2, NULL, &(log_capture){""}, &plain), PRISM_SUCCESS);
    recorder rec = {.cancel_at = -1};
    assert_int_equal(build(&s, 2, &rec, &(log_capture){""}, &watched), PRISM_SUCCESS);
    assert_same_tree(plain, watched);
    prism_bvh_free(plain);
    soup_free(&s);
    prism_bvh_free(watched);
}

/* Cancel at the first call (before anything is allocated), in the middle
 * of the recursion, and at the last call (everything built): each returns
 * PRISM_ERROR_IO, *out NULL, a "cancelled" message, no call after the
 * false, and (under ASan) no leak. */
static void cancel_case(const soup *s, int threads, int at)
{
    recorder rec = {.cancel_at = at};
    log_capture log = {""};
    prism_bvh *bvh = (prism_bvh *)&rec; /* must be overwritten with NULL */
    assert_int_equal(build(s, threads, &rec, &log, &bvh), PRISM_ERROR_IO);
    assert_null(bvh);
    assert_true(rec.said_false);
    assert_int_equal(rec.calls_after_false, 0);
    assert_int_equal(rec.overlapped + rec.foreign_thread + rec.non_monotonic, 0);
    assert_non_null(strstr(log.text, "cancelled"));
    if (at >= 0)
        assert_int_equal(rec.calls, at + 1);
    else
        assert_true(rec.last_done == s->nt);
}

static void test_cancel(void **state)
{
    (void)state;
    soup s;
    make_soup(&s, BIG, 14);
    for (int threads = 1; threads <= 2; threads++) {
        cancel_case(&s, threads, 0);
        cancel_case(&s, threads, -2);
    }
    cancel_case(&s, 1, 5); /* one thread: call 5 is always reached */
    cancel_case(&s, 2, 1); /* a middle call, or with two threads possibly the last */
    soup_free(&s);
}

static void test_empty(void **state)
{
    (void)state;
    soup s = {0};
    recorder rec = {.cancel_at = -1};
    prism_bvh *bvh = NULL;
    assert_int_equal(build(&s, 2, &rec, &(log_capture){""}, &bvh), PRISM_SUCCESS);
    assert_int_equal(rec.calls, 2); /* (0, 0) before, (0, 0) done */
    assert_int_equal(rec.wrong_total + rec.overlapped + rec.foreign_thread, 0);
    assert_true(rec.last_done == 0);
    prism_bvh_free(bvh);
    recorder stop = {.cancel_at = 0};
    bvh = NULL;
    assert_int_equal(build(&s, 1, &stop, &(log_capture){""}, &bvh), PRISM_ERROR_IO);
    assert_null(bvh);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_calls),     cmocka_unit_test(test_total_once),
        cmocka_unit_test(test_same_tree), cmocka_unit_test(test_cancel),
        cmocka_unit_test(test_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
