/* Placement rules with made-up memory figures: every policy, the edge cases
 * the issue lists, and the split landing on a BFS node prefix. */
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
    prism_placement_desc d = {arrays, N_ARRAYS, free_bytes, total, reserve, policy, false};
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
                              false};
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
    prism_placement_desc d = {arrays, N_ARRAYS, 0, 1000 * MB, 0, PRISM_PLACEMENT_MAPPED, true};
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
    prism_placement_desc d = {NULL, 1, 0, 0, 0, PRISM_PLACEMENT_AUTO, false};
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
    d = (prism_placement_desc){&empty, 1, 0, 0, 0, PRISM_PLACEMENT_CHROMA, true};
    assert_int_equal(prism_placement_plan(&d, plan, msg, sizeof msg), PRISM_SUCCESS);
    assert_int_equal(plan[0].device_bytes + plan[0].mapped_bytes, 0);
    assert_non_null(strstr(plan[0].reason, "empty"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zero_free_memory),  cmocka_unit_test(test_reserve_larger_than_free),
        cmocka_unit_test(test_exact_fit),         cmocka_unit_test(test_larger_than_device),
        cmocka_unit_test(test_many_small_arrays), cmocka_unit_test(test_split_on_node_prefix),
        cmocka_unit_test(test_mapped_and_deny),   cmocka_unit_test(test_bad_arguments_and_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
