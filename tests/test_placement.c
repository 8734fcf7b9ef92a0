/* Placement rules with made-up memory figures: every policy, the edge cases
 * the issue lists, the split landing on a BFS node prefix, and the device
 * budget (a cap on the device bytes) of each policy. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "prism/bvh.h"
#include "prism/placement.h"

#define MB ((size_t)1000000)

enum { NODES, TRIANGLES, VERTICES, INFO, N_ARRAYS };

static prism_placement_array arrays[N_ARRAYS];

/* A geometry the size of a small detector: 1M nodes (32 MB), 2M triangles. */
static void geometry(size_t nodes, size_t triangles, size_t vertices)
{
    arrays[NODES] = (prism_placement_array){"bvh.nodes", nodes * 32, 8.0,
                                            true,        32,         PRISM_ARRAY_NODES};
    arrays[TRIANGLES] = (prism_placement_array){"triangles", triangles * 12,       2.0, false,
                                                12,          PRISM_ARRAY_TRIANGLES};
    arrays[VERTICES] = (prism_placement_array){"vertices", vertices * 12,       1.0, false,
                                               12,         PRISM_ARRAY_VERTICES};
    arrays[INFO] = (prism_placement_array){"triangle_info",  triangles * 16, 0.1, false, 16,
                                           PRISM_ARRAY_OTHER};
}

static prism_result plan_with(prism_placement_policy policy, size_t free_bytes, size_t total,
                              size_t reserve, prism_placement *plan, char *msg)
{
    prism_placement_desc d = {arrays, N_ARRAYS, free_bytes, total, reserve, policy, false, 0};
    return prism_placement_plan(&d, plan, msg, 256);
}

static void assert_consistent(const prism_placement *plan, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(plan[i].device_bytes + plan[i].mapped_bytes, plan[i].bytes);
        assert_true(plan[i].reason[0] != 0);
        assert_string_equal(plan[i].name, arrays[i].name);
    }
}

static size_t device_total(const prism_placement *plan, size_t n)
{
    size_t s = 0;
    for (size_t i = 0; i < n; i++)
        s += plan[i].device_bytes;
    return s;
}

static void test_zero_free_memory(void **state)
{
    (void)state;
    geometry(1000000, 2000000, 1000000);
    prism_placement plan[N_ARRAYS];
    char msg[256];
    assert_int_equal(plan_with(PRISM_PLACEMENT_AUTO, 0, 80000 * MB, 0, plan, msg), PRISM_SUCCESS);
    assert_consistent(plan, N_ARRAYS);
    assert_int_equal(device_total(plan, N_ARRAYS), 0);
    assert_non_null(strstr(plan[NODES].reason, "mapped"));
    assert_int_equal(plan_with(PRISM_PLACEMENT_DEVICE, 0, 80000 * MB, 0, plan, msg),
                     PRISM_ERROR_PLACEMENT);
    assert_non_null(strstr(msg, "policy device"));
    assert_non_null(strstr(msg, "leaves 0 B"));
    /* Chroma keeps at least 100 nodes on the device, whatever is free. */
    assert_int_equal(plan_with(PRISM_PLACEMENT_CHROMA, 0, 80000 * MB, 0, plan, msg), PRISM_SUCCESS);
    assert_int_equal(plan[NODES].device_bytes, 100 * 32);
    assert_int_equal(plan[TRIANGLES].device_bytes, 0);
    assert_int_equal(plan[VERTICES].device_bytes, 0);
    assert_int_equal(plan[INFO].device_bytes, 0);
    assert_non_null(strstr(plan[NODES].reason, "split at node 100"));
}

static void test_reserve_larger_than_free(void **state)
{
    (void)state;
    geometry(1000, 2000, 1000);
    prism_placement plan[N_ARRAYS];
    char msg[256];
    assert_int_equal(plan_with(PRISM_PLACEMENT_AUTO, 200 * MB, 1000 * MB, 0, plan, msg),
                     PRISM_SUCCESS);
    assert_int_equal(device_total(plan, N_ARRAYS), 0);
    assert_non_null(strstr(plan[TRIANGLES].reason, "does not fit in the 0 B left"));
    /* Chroma: info fits in free (it ignores the reserve there), nodes: 100, the
     * rest stays mapped because free - reserve is negative. */
    assert_int_equal(plan_with(PRISM_PLACEMENT_CHROMA, 200 * MB, 1000 * MB, 0, plan, msg),
                     PRISM_SUCCESS);
    assert_int_equal(plan[INFO].device_bytes, plan[INFO].bytes);
    assert_int_equal(plan[NODES].device_bytes, 100 * 32);
    assert_int_equal(plan[TRIANGLES].device_bytes, 0);
    assert_non_null(strstr(plan[TRIANGLES].reason, "(none)"));
}

static void test_exact_fit(void **state)
{
    (void)state;
    geometry(1000, 2000, 1000);
    size_t need = arrays[NODES].bytes + arrays[TRIANGLES].bytes + arrays[VERTICES].bytes +
                  arrays[INFO].bytes;
    prism_placement plan[N_ARRAYS];
    char msg[256];
    size_t reserve = 300 * MB;
    assert_int_equal(plan_with(PRISM_PLACEMENT_AUTO, need + reserve, 1000 * MB, 0, plan, msg),
                     PRISM_SUCCESS);
    assert_int_equal(device_total(plan, N_ARRAYS), need);
    assert_int_equal(plan_with(PRISM_PLACEMENT_DEVICE, need + reserve, 1000 * MB, 0, plan, msg),
                     PRISM_SUCCESS);
    assert_int_equal(device_total(plan, N_ARRAYS), need);
    /* One byte short: device fails, auto splits the nodes (hottest, but
     * splittable: the less hot unsplittable arrays are not evicted). */
    assert_int_equal(plan_with(PRISM_PLACEMENT_DEVICE, need + reserve - 1, 1000 * MB, 0, plan, msg),
                     PRISM_ERROR_PLACEMENT);
    assert_int_equal(plan_with(PRISM_PLACEMENT_AUTO, need + reserve - 1, 1000 * MB, 0, plan, msg),
                     PRISM_SUCCESS);
    assert_consistent(plan, N_ARRAYS);
    assert_int_equal(plan[NODES].device_bytes, arrays[NODES].bytes);
    assert_int_equal(plan[INFO].device_bytes, 0); /* coldest, does not fit in what is left */
    /* Chroma promotes only when bytes < free - reserve, strictly. */
    size_t chroma_need = arrays[INFO].bytes + arrays[NODES].bytes + arrays[TRIANGLES].bytes;
    assert_int_equal(plan_with(PRISM_PLACEMENT_CHROMA, chroma_need + reserve, 1000 * MB, 0, plan,
                               msg),
                     PRISM_SUCCESS);
    assert_int_equal(plan[TRIANGLES].device_bytes, 0);
    assert_int_equal(plan_with(PRISM_PLACEMENT_CHROMA, chroma_need + reserve + 1, 1000 * MB, 0,
                               plan, msg),
                     PRISM_SUCCESS);
    assert_int_equal(plan[TRIANGLES].device_bytes, plan[TRIANGLES].bytes);
    assert_int_equal(plan[VERTICES].device_bytes, 0); /* free was lowered by the promotion */
}

static void test_larger_than_device(void **state)
{
    (void)state;
    geometry(10, 100000000, 10); /* 1.2 GB of triangles on a 1 GB device */
    prism_placement plan[N_ARRAYS];
    char msg[256];
    assert_int_equal(plan_with(PRISM_PLACEMENT_AUTO, 900 * MB, 1000 * MB,
                               PRISM_PLACEMENT_NO_RESERVE, plan, msg),
                     PRISM_SUCCESS);
    assert_int_equal(plan[TRIANGLES].device_bytes, 0);
    assert_non_null(strstr(plan[TRIANGLES].reason, "larger than the whole device"));
    assert_int_equal(plan[NODES].device_bytes, plan[NODES].bytes);
    assert_int_equal(plan_with(PRISM_PLACEMENT_DEVICE, 900 * MB, 1000 * MB, 0, plan, msg),
                     PRISM_ERROR_PLACEMENT);
}

static void test_many_small_arrays(void **state)
{
    (void)state;
    enum { COUNT = 500 };
    static prism_placement_array many[COUNT];
    static prism_placement plan[COUNT];
    static char names[COUNT][16];
    for (int i = 0; i < COUNT; i++) {
        snprintf(names[i], sizeof names[i], "a%d", i);
        /* heat rises with i: the last arrays are the hottest */
        many[i] = (prism_placement_array){names[i], 1000, (double)i, false, 4, PRISM_ARRAY_OTHER};
    }
    prism_placement_desc d = {many,      COUNT, 300 * MB + 100 * 1000 + 999,
                              1000 * MB, 0,     PRISM_PLACEMENT_AUTO,
                              false,     0};
    char msg[256];
    assert_int_equal(prism_placement_plan(&d, plan, msg, sizeof msg), PRISM_SUCCESS);
    size_t on_device = 0;
    for (int i = 0; i < COUNT; i++) {
        assert_int_equal(plan[i].device_bytes + plan[i].mapped_bytes, 1000);
        on_device += plan[i].device_bytes != 0;
        /* exactly the 100 hottest */
        assert_int_equal(plan[i].device_bytes, i >= COUNT - 100 ? 1000 : 0);
    }
    assert_int_equal(on_device, 100);
}

/* A complete binary tree in BFS order, as prism/bvh.h lays nodes out. */
static void test_split_on_node_prefix(void **state)
{
    (void)state;
    enum { LEVELS = 12, NODES_N = (1 << LEVELS) - 1 };
    static prism_bvh_node nodes[NODES_N];
    for (uint32_t i = 0; i < NODES_N; i++) {
        bool inner = 2 * i + 2 < NODES_N;
        nodes[i].first = inner ? 2 * i + 1 : i;
        nodes[i].count = inner ? 0 : 1;
    }
    geometry(NODES_N, 0, 0);
    prism_placement plan[N_ARRAYS];
    char msg[256];
    for (size_t avail = 0; avail < NODES_N * 32; avail += 1237) {
        assert_int_equal(plan_with(PRISM_PLACEMENT_AUTO, avail, 1000 * MB,
                                   PRISM_PLACEMENT_NO_RESERVE, plan, msg),
                         PRISM_SUCCESS);
        size_t head = plan[NODES].device_bytes;
        assert_int_equal(head % 32, 0);
        assert_int_equal(head, avail / 32 * 32);
        size_t k = head / 32;
        /* The prefix is the top of the tree: each head node's parent is in the head. */
        for (size_t i = 1; i < k; i++)
            assert_true((i - 1) / 2 < k);
        for (size_t i = 0; i < k; i++)
            if (nodes[i].count == 0)
                assert_true(nodes[i].first > i);
        if (k && k < NODES_N)
            assert_non_null(strstr(plan[NODES].reason, "split at element"));
    }
    /* Chroma's split: (free - reserve) / 32, at least 100. */
    assert_int_equal(plan_with(PRISM_PLACEMENT_CHROMA, 300 * MB + 1000 * 32 + 31, 1000 * MB, 0,
                               plan, msg),
                     PRISM_SUCCESS);
    assert_int_equal(plan[NODES].device_bytes, 1000 * 32);
}

static void test_mapped_and_deny(void **state)
{
    (void)state;
    geometry(1000, 2000, 1000);
    prism_placement plan[N_ARRAYS];
    char msg[256];
    assert_int_equal(plan_with(PRISM_PLACEMENT_MAPPED, 80000 * MB, 80000 * MB, 0, plan, msg),
                     PRISM_SUCCESS);
    assert_int_equal(device_total(plan, N_ARRAYS), 0);
    assert_consistent(plan, N_ARRAYS);
    prism_placement_desc d = {arrays, N_ARRAYS, 0, 1000 * MB, 0, PRISM_PLACEMENT_MAPPED, true, 0};
    assert_int_equal(prism_placement_plan(&d, plan, msg, sizeof msg),
                     PRISM_ERROR_MAPPED_NOT_ALLOWED);
    assert_non_null(strstr(msg, "deny_mapped_memory"));
    d.policy = PRISM_PLACEMENT_AUTO;
    assert_int_equal(prism_placement_plan(&d, plan, msg, sizeof msg), PRISM_ERROR_PLACEMENT);
    assert_non_null(strstr(msg, "\"bvh.nodes\" needs"));
    d.free_bytes = 1000 * MB;
    assert_int_equal(prism_placement_plan(&d, plan, msg, sizeof msg), PRISM_SUCCESS);
}

static void test_bad_arguments_and_names(void **state)
{
    (void)state;
    char msg[256];
    prism_placement plan[1];
    assert_int_equal(prism_placement_plan(NULL, plan, msg, sizeof msg),
                     PRISM_ERROR_INVALID_ARGUMENT);
    prism_placement_desc d = {NULL, 1, 0, 0, 0, PRISM_PLACEMENT_AUTO, false, 0};
    assert_int_equal(prism_placement_plan(&d, plan, msg, sizeof msg), PRISM_ERROR_INVALID_ARGUMENT);
    d.array_count = 0;
    d.policy = (prism_placement_policy)42;
    assert_int_equal(prism_placement_plan(&d, plan, msg, sizeof msg), PRISM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(msg, "unknown policy"));
    d.policy = PRISM_PLACEMENT_AUTO;
    assert_int_equal(prism_placement_plan(&d, NULL, NULL, 0), PRISM_SUCCESS);
    prism_placement_policy p;
    for (int i = 0; i < PRISM_PLACEMENT_POLICY_COUNT_; i++) {
        assert_true(prism_placement_policy_parse(prism_placement_policy_name(i), &p));
        assert_int_equal(p, i);
    }
    assert_false(prism_placement_policy_parse("fastest", &p));
    assert_string_equal(prism_placement_policy_name(PRISM_PLACEMENT_CHROMA), "chroma");
    /* An empty array is placed nowhere and says so. */
    prism_placement_array empty = {"empty", 0, 1.0, true, 32, PRISM_ARRAY_NODES};
    d = (prism_placement_desc){&empty, 1, 0, 0, 0, PRISM_PLACEMENT_CHROMA, true, 0};
    assert_int_equal(prism_placement_plan(&d, plan, msg, sizeof msg), PRISM_SUCCESS);
    assert_int_equal(plan[0].device_bytes + plan[0].mapped_bytes, 0);
    assert_non_null(strstr(plan[0].reason, "empty"));
}

/* ---- device_budget: a cap on the device bytes, on top of free memory */

static prism_result plan_budget(prism_placement_policy policy, size_t free_bytes, size_t reserve,
                                size_t budget, prism_placement *plan, char *msg)
{
    prism_placement_desc d = {arrays,  N_ARRAYS, free_bytes, 80000 * MB,
                              reserve, policy,   false,      budget};
    return prism_placement_plan(&d, plan, msg, 256);
}

static size_t need_all(void)
{
    size_t need = 0;
    for (int i = 0; i < N_ARRAYS; i++)
        need += arrays[i].bytes;
    return need;
}

/* A budget below the nodes' bytes: the head of the BFS node array, a whole
 * number of nodes, on the device; every other array mapped. */
static void test_budget_splits_nodes(void **state)
{
    (void)state;
    geometry(1000000, 2000000, 1000000); /* 32 MB of nodes */
    prism_placement plan[N_ARRAYS];
    char msg[256];
    const size_t budgets[] = {32, 33, 4u << 20, (4u << 20) + 17, 16u << 20, 32 * MB - 1};
    for (size_t k = 0; k < sizeof budgets / sizeof budgets[0]; k++) {
        const size_t budget = budgets[k];
        assert_int_equal(plan_budget(PRISM_PLACEMENT_AUTO, 80000 * MB, 0, budget, plan, msg),
                         PRISM_SUCCESS);
        assert_consistent(plan, N_ARRAYS);
        assert_int_equal(plan[NODES].device_bytes, budget / 32 * 32);
        assert_int_equal(plan[NODES].device_bytes % 32, 0);
        assert_true(plan[NODES].mapped_bytes > 0);
        assert_int_equal(plan[TRIANGLES].device_bytes, 0);
        assert_int_equal(plan[VERTICES].device_bytes, 0);
        assert_int_equal(plan[INFO].device_bytes, 0);
        assert_true(device_total(plan, N_ARRAYS) <= budget);
        assert_non_null(strstr(plan[NODES].reason, "split at element"));
        assert_non_null(strstr(plan[NODES].reason, "device budget"));
        assert_non_null(strstr(plan[TRIANGLES].reason, "device budget"));
        assert_null(strstr(plan[NODES].reason, "reserve"));
    }
    /* 4 MiB: 131072 nodes, the top 17 levels of a complete tree and one more. */
    assert_int_equal(plan_budget(PRISM_PLACEMENT_AUTO, 80000 * MB, 0, 4u << 20, plan, msg),
                     PRISM_SUCCESS);
    assert_non_null(strstr(plan[NODES].reason, "split at element 131072: head 4.19 MB"));
    assert_non_null(strstr(plan[NODES].reason, "left of the 4.19 MB device budget"));
}

/* 0 is no cap: the plan is the one without the field, reasons included. */
static void test_budget_zero_is_no_cap(void **state)
{
    (void)state;
    geometry(1000000, 2000000, 1000000);
    prism_placement plan[N_ARRAYS], plain[N_ARRAYS];
    char msg[256];
    const size_t frees[] = {0, 300 * MB + 20 * MB, 80000 * MB};
    for (size_t k = 0; k < 3; k++) {
        assert_int_equal(plan_with(PRISM_PLACEMENT_AUTO, frees[k], 80000 * MB, 0, plain, msg),
                         PRISM_SUCCESS);
        assert_int_equal(plan_budget(PRISM_PLACEMENT_AUTO, frees[k], 0, 0, plan, msg),
                         PRISM_SUCCESS);
        for (int i = 0; i < N_ARRAYS; i++) {
            assert_int_equal(plan[i].device_bytes, plain[i].device_bytes);
            assert_string_equal(plan[i].reason, plain[i].reason);
            assert_null(strstr(plan[i].reason, "budget"));
        }
    }
    assert_int_equal(device_total(plan, N_ARRAYS), need_all());
    assert_int_equal(plan_budget(PRISM_PLACEMENT_DEVICE, 80000 * MB, 0, 0, plan, msg),
                     PRISM_SUCCESS);
    assert_int_equal(plan_budget(PRISM_PLACEMENT_CHROMA, 80000 * MB, 0, 0, plan, msg),
                     PRISM_SUCCESS);
}

/* A budget that holds everything places everything, as with no budget;
 * one byte less and the coldest array no longer fits (the hotter ones are
 * not split to make room for it). */
static void test_budget_larger_than_everything(void **state)
{
    (void)state;
    geometry(1000000, 2000000, 1000000);
    prism_placement plan[N_ARRAYS];
    char msg[256];
    const size_t need = need_all();
    const size_t budgets[] = {need, need + 1, 2 * need, SIZE_MAX};
    for (size_t k = 0; k < 4; k++) {
        assert_int_equal(plan_budget(PRISM_PLACEMENT_AUTO, 80000 * MB, 0, budgets[k], plan, msg),
                         PRISM_SUCCESS);
        assert_consistent(plan, N_ARRAYS);
        for (int i = 0; i < N_ARRAYS; i++)
            assert_int_equal(plan[i].device_bytes, plan[i].bytes);
        assert_int_equal(plan_budget(PRISM_PLACEMENT_DEVICE, 80000 * MB, 0, budgets[k], plan, msg),
                         PRISM_SUCCESS);
        assert_int_equal(device_total(plan, N_ARRAYS), need);
    }
    /* Above what free memory leaves, the reserve decides and says so. */
    assert_int_equal(plan_budget(PRISM_PLACEMENT_AUTO, 300 * MB + 20 * MB, 0, SIZE_MAX, plan, msg),
                     PRISM_SUCCESS);
    assert_int_equal(plan[NODES].device_bytes, 20 * MB);
    assert_int_equal(device_total(plan, N_ARRAYS), 20 * MB);
    assert_non_null(strstr(plan[NODES].reason, "all that is left above the reserve"));
    assert_non_null(strstr(plan[TRIANGLES].reason, "0 B left above the reserve"));
    assert_int_equal(plan_budget(PRISM_PLACEMENT_AUTO, 80000 * MB, 0, need - 1, plan, msg),
                     PRISM_SUCCESS);
    assert_int_equal(plan[NODES].device_bytes, plan[NODES].bytes);
    assert_int_equal(plan[TRIANGLES].device_bytes, plan[TRIANGLES].bytes);
    assert_int_equal(plan[VERTICES].device_bytes, plan[VERTICES].bytes);
    assert_int_equal(plan[INFO].device_bytes, 0);
    assert_non_null(strstr(plan[INFO].reason, "device budget"));
}

/* Whatever the budget, free memory and reserve: the device bytes stay
 * within the budget and within free - reserve, nodes split on a node. */
static void test_budget_never_exceeded(void **state)
{
    (void)state;
    geometry(100000, 200000, 100000); /* 3.2 MB of nodes, 10.4 MB in all */
    prism_placement plan[N_ARRAYS];
    char msg[256];
    const size_t need = need_all();
    const size_t frees[] = {0, 1 * MB, 5 * MB, 12 * MB, 80000 * MB};
    for (size_t f = 0; f < 5; f++)
        for (size_t budget = 1; budget < need + 100000; budget += 99991) {
            assert_int_equal(plan_budget(PRISM_PLACEMENT_AUTO, frees[f], PRISM_PLACEMENT_NO_RESERVE,
                                         budget, plan, msg),
                             PRISM_SUCCESS);
            assert_consistent(plan, N_ARRAYS);
            const size_t dev = device_total(plan, N_ARRAYS);
            assert_true(dev <= budget);
            assert_true(dev <= frees[f]);
            assert_int_equal(plan[NODES].device_bytes % 32, 0);
            /* the hottest array takes what the tighter limit allows */
            const size_t limit = budget < frees[f] ? budget : frees[f];
            const size_t nodes = limit / 32 * 32;
            assert_int_equal(plan[NODES].device_bytes,
                             nodes < arrays[NODES].bytes ? nodes : arrays[NODES].bytes);
            prism_result r = plan_budget(PRISM_PLACEMENT_DEVICE, frees[f],
                                         PRISM_PLACEMENT_NO_RESERVE, budget, plan, msg);
            assert_int_equal(r, budget >= need && frees[f] >= need ? PRISM_SUCCESS
                                                                   : PRISM_ERROR_PLACEMENT);
            assert_true(device_total(plan, N_ARRAYS) <= budget);
        }
}

static void test_budget_edges(void **state)
{
    (void)state;
    prism_placement plan[N_ARRAYS];
    char msg[256];
    /* Smaller than one node: the nodes are mapped, and a colder array small
     * enough for what is left still goes (the rule is hottest first). */
    geometry(10, 1, 3); /* 320 B nodes, 12 B triangles, 36 B vertices, 16 B info */
    assert_int_equal(plan_budget(PRISM_PLACEMENT_AUTO, 80000 * MB, 0, 31, plan, msg),
                     PRISM_SUCCESS);
    assert_consistent(plan, N_ARRAYS);
    assert_int_equal(plan[NODES].device_bytes, 0);
    assert_non_null(strstr(plan[NODES].reason, "does not fit in the 31 B left of the 31 B device"));
    assert_int_equal(plan[TRIANGLES].device_bytes, 12);
    assert_int_equal(plan[VERTICES].device_bytes, 0);
    assert_int_equal(plan[INFO].device_bytes, 16);
    assert_int_equal(device_total(plan, N_ARRAYS), 28);
    /* Device policy over the budget: fails naming it, nothing placed. */
    geometry(1000, 2000, 1000);
    assert_int_equal(plan_budget(PRISM_PLACEMENT_DEVICE, 80000 * MB, 0, 1000, plan, msg),
                     PRISM_ERROR_PLACEMENT);
    assert_non_null(strstr(msg, "device budget is 1.00 kB"));
    assert_int_equal(device_total(plan, N_ARRAYS), 0);
    assert_non_null(strstr(plan[NODES].reason, "exceed the device budget"));
    /* Mapped: nothing on the device, budget or not. */
    assert_int_equal(plan_budget(PRISM_PLACEMENT_MAPPED, 80000 * MB, 0, 1000, plan, msg),
                     PRISM_SUCCESS);
    assert_int_equal(device_total(plan, N_ARRAYS), 0);
    /* Chroma's rule has no budget: refused, every entry still filled. */
    assert_int_equal(plan_budget(PRISM_PLACEMENT_CHROMA, 80000 * MB, 0, 1000, plan, msg),
                     PRISM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(msg, "chroma takes no device budget"));
    for (int i = 0; i < N_ARRAYS; i++) {
        assert_int_equal(plan[i].device_bytes, 0);
        assert_int_equal(plan[i].mapped_bytes, plan[i].bytes);
    }
    /* A budget that maps anything while mapped memory is denied. */
    prism_placement_desc d = {arrays, N_ARRAYS, 80000 * MB, 80000 * MB, 0, PRISM_PLACEMENT_AUTO,
                              true,   1000};
    assert_int_equal(prism_placement_plan(&d, plan, msg, 256), PRISM_ERROR_PLACEMENT);
    assert_non_null(strstr(msg, "deny_mapped_memory"));
    d.device_budget = need_all();
    assert_int_equal(prism_placement_plan(&d, plan, msg, 256), PRISM_SUCCESS);
    /* Empty arrays with a budget: nothing placed, no error. */
    geometry(0, 0, 0);
    assert_int_equal(plan_budget(PRISM_PLACEMENT_AUTO, 80000 * MB, 0, 64, plan, msg),
                     PRISM_SUCCESS);
    assert_int_equal(device_total(plan, N_ARRAYS), 0);
    assert_non_null(strstr(plan[NODES].reason, "empty"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zero_free_memory),
        cmocka_unit_test(test_reserve_larger_than_free),
        cmocka_unit_test(test_exact_fit),
        cmocka_unit_test(test_larger_than_device),
        cmocka_unit_test(test_many_small_arrays),
        cmocka_unit_test(test_split_on_node_prefix),
        cmocka_unit_test(test_mapped_and_deny),
        cmocka_unit_test(test_bad_arguments_and_names),
        cmocka_unit_test(test_budget_splits_nodes),
        cmocka_unit_test(test_budget_zero_is_no_cap),
        cmocka_unit_test(test_budget_larger_than_everything),
        cmocka_unit_test(test_budget_never_exceeded),
        cmocka_unit_test(test_budget_edges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
