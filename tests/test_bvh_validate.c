/* prism_bvh_validate: it accepts every tree prism_bvh_build makes (bundled
 * assets, random soups, leaf sizes 1..64, breadth- and depth-first orders),
 * and for each rule of the layout a hand-corrupted copy is rejected with a
 * message that names the node and the rule. A validator that accepted
 * everything would pass the first half; the second half is why it exists. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bvh_test_util.h"

#include "prism/bvh.h"
#include "prism/scene.h"

#if defined(__SANITIZE_ADDRESS__)
/* test_out_of_memory asks for an impossible scratch size: under ASan that
 * must come back NULL (as from the C library) rather than abort. Default
 * visibility, so the ASan runtime finds it under -fvisibility=hidden. */
__attribute__((visibility("default"))) const char *__asan_default_options(void);
__attribute__((visibility("default"))) const char *__asan_default_options(void)
{
    return "allocator_may_return_null=1";
}
#endif

/* ---- accepting the builder's trees ------------------------------------- */

static void expect_valid(const prism_bvh *bvh, unsigned leaf)
{
    char msg[256] = "unset";
    prism_result r = prism_bvh_validate(bvh->nodes, bvh->node_count, bvh->vertices,
                                        bvh->vertex_count, bvh->triangles, bvh->triangle_ids,
                                        bvh->triangle_count, leaf, msg, sizeof msg);
    if (r != PRISM_SUCCESS)
        fail_msg("%zu triangles, leaf %u: %s", bvh->triangle_count, leaf, msg);
    assert_string_equal(msg, ""); /* success clears the message */
    assert_int_equal(prism_bvh_check(bvh, msg, sizeof msg), PRISM_SUCCESS);
}

static prism_bvh *build(const soup *s, unsigned leaf, unsigned order, unsigned bfs_levels)
{
    prism_bvh_desc d = {.max_leaf_size = leaf, .order = order, .bfs_levels = bfs_levels};
    prism_bvh *bvh = NULL;
    assert_int_equal(prism_bvh_build(s->pos, s->nv, s->idx, s->nt, &d, &bvh), PRISM_SUCCESS);
    return bvh;
}

static void accept_all_configs(const soup *s, unsigned leaf_step)
{
    for (unsigned leaf = 1; leaf <= 64; leaf += leaf_step) {
        for (unsigned order = 0; order <= PRISM_BVH_ORDER_DFS; order++) {
            prism_bvh *bvh = build(s, leaf, order, order ? 1 + leaf % 5 : 0);
            expect_valid(bvh, leaf);
            prism_bvh_free(bvh);
        }
    }
}

static void test_accepts_soups(void **state)
{
    (void)state;
    const float zero[3] = {0, 0, 0};
    for (int kind = SOUP_MIXED; kind <= SOUP_SMALL; kind++) {
        for (size_t n = 1; n <= 3000; n *= 7) {
            soup s = {0};
            rng r = {0x1234567u + (uint64_t)kind * 977 + n};
            soup_random(&s, (soup_kind)kind, n, &r, 1.0f, zero);
            accept_all_configs(&s, n < 100 ? 1 : 9);
            soup_free(&s);
        }
    }
}

static void accept_asset(const char *path, void *user)
{
    (void)user;
    char err[512] = "";
    prism_load_desc d = {.error = err, .error_size = sizeof err};
    prism_scene *scene = NULL;
    if (prism_scene_load(path, &d, &scene) != PRISM_SUCCESS)
        fail_msg("%s: %s", path, err);
    soup s = {.pos = scene->positions,
              .idx = scene->indices,
              .nv = scene->vertices_count,
              .nt = scene->triangles_count};
    accept_all_configs(&s, 7);
    prism_scene_free(scene);
}

static void test_accepts_assets(void **state)
{
    (void)state;
    for_each_asset(accept_asset, NULL);
}

static void test_accepts_empty_and_single(void **state)
{
    (void)state;
    soup s = {0};
    prism_bvh *bvh = build(&s, 0, 0, 0);
    expect_valid(bvh, 4);
    prism_bvh_free(bvh);
    soup_triangle(&s, soup_vertex(&s, 0, 0, 0), soup_vertex(&s, 1, 0, 0), soup_vertex(&s, 0, 1, 0));
    bvh = build(&s, 1, 0, 0);
    assert_int_equal(bvh->node_count, 1); /* a leaf root: no padding node */
    expect_valid(bvh, 1);
    prism_bvh_free(bvh);
    soup_free(&s);
}

/* ---- a corruptible copy ------------------------------------------------ */

typedef struct tree {
    prism_bvh_node *nodes;
    size_t node_count;
    const float *vertices;
    size_t vertex_count;
    uint32_t *triangles, *ids;
    size_t triangle_count;
    unsigned leaf;
    prism_bvh *bvh;
    soup s;
    char msg[512];
} tree;

/* A random soup's tree, copied (room for 2 extra nodes) so a test may
 * break it. */
static int setup(void **state)
{
    tree *t = calloc(1, sizeof *t);
    const float zero[3] = {0, 0, 0};
    rng r = {0xfeedu};
    soup_random(&t->s, SOUP_MIXED, 3000, &r, 2.0f, zero);
    t->leaf = 4;
    t->bvh = build(&t->s, t->leaf, 0, 0);
    const prism_bvh *b = t->bvh;
    t->node_count = b->node_count;
    t->nodes = malloc((b->node_count + 2) * sizeof *t->nodes);
    t->triangles = malloc(b->triangle_count * 3 * sizeof *t->triangles);
    t->ids = malloc(b->triangle_count * sizeof *t->ids);
    memcpy(t->nodes, b->nodes, b->node_count * sizeof *t->nodes);
    memcpy(t->triangles, b->triangles, b->triangle_count * 3 * sizeof *t->triangles);
    memcpy(t->ids, b->triangle_ids, b->triangle_count * sizeof *t->ids);
    t->vertices = b->vertices;
    t->vertex_count = b->vertex_count;
    t->triangle_count = b->triangle_count;
    *state = t;
    return 0;
}

static int teardown(void **state)
{
    tree *t = *state;
    free(t->nodes);
    free(t->triangles);
    free(t->ids);
    prism_bvh_free(t->bvh);
    soup_free(&t->s);
    free(t);
    return 0;
}

static prism_result validate(tree *t)
{
    return prism_bvh_validate(t->nodes, t->node_count, t->vertices, t->vertex_count, t->triangles,
                              t->ids, t->triangle_count, t->leaf, t->msg, sizeof t->msg);
}

/* Rejected, with `expected` (printf-formatted) in the message. */
static void expect_invalid(tree *t, const char *fmt, ...)
{
    char expected[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(expected, sizeof expected, fmt, ap);
    va_end(ap);
    const prism_result r = validate(t);
    if (r != PRISM_ERROR_INVALID_ARGUMENT || !strstr(t->msg, expected))
        fail_msg("expected \"%s\", got %s \"%s\"", expected, prism_result_string(r), t->msg);
}

/* The first inner node at index >= from (not the padding node). */
static size_t inner_from(const tree *t, size_t from)
{
    for (size_t i = from; i < t->node_count; i++)
        if (t->nodes[i].count == 0 && i != 1)
            return i;
    fail_msg("no inner node at or after %zu", from);
    return 0;
}

/* The first leaf at index >= from with at least min_count triangles. */
static size_t leaf_from(const tree *t, size_t from, uint32_t min_count)
{
    for (size_t i = from; i < t->node_count; i++)
        if (t->nodes[i].count >= min_count)
            return i;
    fail_msg("no leaf of %u triangles at or after %zu", min_count, from);
    return 0;
}

static void test_intact_copy_is_valid(void **state)
{
    tree *t = *state;
    assert_int_equal(validate(t), PRISM_SUCCESS);
    assert_true(t->node_count > 100);
    assert_int_equal(t->nodes[0].count, 0); /* the tests below need an inner root */
}

/* ---- one test per rule ------------------------------------------------- */

static void test_child_box_outside_parent(void **state)
{
    tree *t = *state;
    const size_t i = inner_from(t, 2), c = t->nodes[i].first + 1;
    t->nodes[c].hi[1] = t->nodes[i].hi[1] + 0.25f;
    expect_invalid(t, "node %zu: child %zu's box is not inside its parent's (axis y: %.9g > %.9g)",
                   i, c, t->nodes[c].hi[1], t->nodes[i].hi[1]);
    t->nodes[c].hi[1] = t->bvh->nodes[c].hi[1];
    t->nodes[c].lo[2] = nextafterf(t->nodes[i].lo[2], -INFINITY); /* one ulp is enough */
    expect_invalid(t, "node %zu: child %zu's box is not inside its parent's (axis z: %.9g < %.9g)",
                   i, c, t->nodes[c].lo[2], t->nodes[i].lo[2]);
}

static void test_leaf_box_misses_vertex(void **state)
{
    tree *t = *state;
    const size_t k = leaf_from(t, 2, 1);
    prism_bvh_node *n = &t->nodes[k];
    n->hi[0] = n->lo[0]; /* still inside the parent, but too thin for the triangles */
    expect_invalid(t, "node %zu: triangle ", k);
    expect_invalid(t, "is outside the leaf's box (axis x: ");
}

static void test_box_not_finite_or_inverted(void **state)
{
    tree *t = *state;
    t->nodes[0].lo[1] = NAN;
    expect_invalid(t, "node 0: box is not finite (axis y: lo nan");
    t->nodes[0].lo[1] = t->bvh->nodes[0].lo[1];
    const size_t k = leaf_from(t, 2, 1);
    for (int a = 0; a < 3; a++) {
        prism_bvh_node *n = &t->nodes[k];
        if (n->lo[a] < n->hi[a]) { /* swapped: still inside the parent, but inverted */
            float lo = n->lo[a];
            n->lo[a] = n->hi[a];
            n->hi[a] = lo;
            expect_invalid(t, "node %zu: box is inverted (axis %c: lo", k, "xyz"[a]);
            return;
        }
    }
    fail_msg("leaf %zu is flat on every axis", k);
}

static void test_triangle_in_two_leaves(void **state)
{
    tree *t = *state;
    const size_t a = leaf_from(t, 2, 1), b = leaf_from(t, a + 1, 1);
    t->nodes[b].first = t->nodes[a].first; /* the later leaf claims the earlier one's */
    expect_invalid(t, "node %zu: triangle %u is also in leaf %zu", b, t->nodes[a].first, a);
}

static void test_triangle_in_no_leaf(void **state)
{
    tree *t = *state;
    const size_t k = leaf_from(t, 2, 2);
    t->nodes[k].count--;
    expect_invalid(t, "triangle %u is in no leaf", t->nodes[k].first + t->nodes[k].count);
}

static void test_leaf_past_triangle_count(void **state)
{
    tree *t = *state;
    const size_t k = leaf_from(t, 2, 2);
    t->nodes[k].first = (uint32_t)t->triangle_count - 1;
    expect_invalid(t, "node %zu: leaf triangles [%zu, %zu) run past triangle_count %zu", k,
                   t->triangle_count - 1, t->triangle_count - 1 + t->nodes[k].count,
                   t->triangle_count);
    t->nodes[k].first = UINT32_MAX; /* no wraparound in first + count */
    expect_invalid(t, "node %zu: leaf triangles [4294967295, ", k);
}

static void test_leaf_too_large(void **state)
{
    tree *t = *state;
    const size_t k = leaf_from(t, 2, 2);
    t->leaf = t->nodes[k].count - 1;
    for (size_t i = 2; i < k; i++) /* the first leaf over the limit is named */
        if (t->nodes[i].count > t->leaf)
            fail_msg("leaf_from missed node %zu", i);
    expect_invalid(t, "node %zu: leaf of %u triangles exceeds max_leaf_size %u", k,
                   t->nodes[k].count, t->leaf);
    t->leaf = 0; /* 0: not checked */
    assert_int_equal(validate(t), PRISM_SUCCESS);
}

static void test_vertex_index_out_of_range(void **state)
{
    tree *t = *state;
    const size_t k = leaf_from(t, 2, 1), tri = t->nodes[k].first;
    t->triangles[3 * tri + 2] = (uint32_t)t->vertex_count;
    expect_invalid(t, "node %zu: triangle %zu: vertex index %zu >= vertex_count %zu", k, tri,
                   t->vertex_count, t->vertex_count);
    t->vertices = NULL; /* no containment check, but the index is still checked */
    expect_invalid(t, "vertex index %zu >= vertex_count", t->vertex_count);
    uint32_t *triangles = t->triangles;
    t->triangles = NULL; /* nothing to check it against: skipped */
    assert_int_equal(validate(t), PRISM_SUCCESS);
    t->triangles = triangles;
}

static void test_ids_not_permutation(void **state)
{
    tree *t = *state;
    const uint32_t keep = t->ids[7];
    t->ids[7] = t->ids[3];
    expect_invalid(t, "triangle 7: id %u repeats", t->ids[3]);
    t->ids[7] = (uint32_t)t->triangle_count;
    expect_invalid(t, "triangle 7: id %zu >= triangle_count %zu", t->triangle_count,
                   t->triangle_count);
    t->ids[7] = keep;
    assert_int_equal(validate(t), PRISM_SUCCESS);
    uint32_t *ids = t->ids;
    t->ids = NULL; /* skipped */
    ids[0] = ids[1];
    assert_int_equal(validate(t), PRISM_SUCCESS);
    t->ids = ids;
}

static void test_empty_interior_node(void **state)
{
    tree *t = *state;
    const size_t i = inner_from(t, 2);
    t->nodes[i].first = 0;
    expect_invalid(t, "node %zu: empty interior node (count 0, first 0: no children)", i);
}

static void test_children_out_of_range(void **state)
{
    tree *t = *state;
    const size_t i = inner_from(t, 2);
    t->nodes[i].first = (uint32_t)t->node_count - 1;
    expect_invalid(t, "node %zu: children %zu, %zu are outside the %zu nodes", i, t->node_count - 1,
                   t->node_count, t->node_count);
}

static void test_children_at_odd_index(void **state)
{
    tree *t = *state;
    const size_t i = inner_from(t, 2);
    t->nodes[i].first++;
    expect_invalid(t, "node %zu: children start at odd index %u", i, t->nodes[i].first);
}

static void test_child_before_parent(void **state)
{
    tree *t = *state;
    const size_t i = inner_from(t, 4);
    t->nodes[i].first = 2; /* a cycle too, where 2 is an ancestor of i */
    expect_invalid(t, "node %zu: child 2 is not after its parent", i);
    t->nodes[i].first = (uint32_t)(i % 2 ? i - 1 : i); /* its own pair: a cycle */
    expect_invalid(t, "node %zu: child %zu is not after its parent", i, i % 2 ? i - 1 : i);
}

static void test_shared_subtree(void **state)
{
    tree *t = *state;
    /* Two inner nodes i < j of one level, j before i's children: j may
     * point at i's pair by the index rules, and only sharing is wrong. */
    for (size_t i = 2; i < t->node_count; i++) {
        if (t->nodes[i].count)
            continue;
        for (size_t j = i + 1; j < t->nodes[i].first; j++)
            if (t->nodes[j].count == 0) {
                t->nodes[j].first = t->nodes[i].first;
                expect_invalid(t, "node %zu: child %u already has parent %zu (a shared subtree)", j,
                               t->nodes[i].first, i);
                return;
            }
    }
    fail_msg("no two inner nodes on one level");
}

static void test_unreachable_node(void **state)
{
    tree *t = *state;
    /* Two nodes past the end that nobody points at (a well-formed leaf pair). */
    const size_t k = leaf_from(t, 2, 1);
    t->nodes[t->node_count] = t->nodes[k];
    t->nodes[t->node_count + 1] = t->nodes[k];
    t->node_count += 2;
    expect_invalid(t, "node %zu: no parent before it (unreachable from the root",
                   t->node_count - 2);
}

static void test_padding_node(void **state)
{
    tree *t = *state;
    t->nodes[0].first = 1;
    expect_invalid(t, "node 0: child 1 is the padding node");
    t->nodes[0].first = t->bvh->nodes[0].first;
    t->nodes[1].count = 3;
    expect_invalid(t, "node 1: the padding node (the root is inner) has count 3, first 0");
    t->nodes[1].count = 0;
    t->nodes[1].lo[2] = t->nodes[1].hi[2] = 0.0f;
    expect_invalid(t, "node 1: padding node's box is not empty (axis z: lo 0 <= hi 0)");
}

/* A caterpillar: node 2k + 1 (k >= 1) is inner with children 2k + 2, 2k + 3,
 * the even nodes are leaves of one triangle; the deepest leaves are at
 * `depth`. Boxes all the unit cube, no vertices given. */
static prism_bvh_node *caterpillar(unsigned depth, size_t *node_count, size_t *triangles)
{
    const size_t n = 2 * (size_t)depth + 2;
    prism_bvh_node *nodes = calloc(n, sizeof *nodes);
    assert_non_null(nodes);
    uint32_t tri = 0;
    for (size_t i = 0; i < n; i++) {
        prism_bvh_node *x = &nodes[i];
        for (int a = 0; a < 3; a++)
            x->lo[a] = 0.0f, x->hi[a] = 1.0f;
        if (i == 1) { /* padding */
            for (int a = 0; a < 3; a++)
                x->lo[a] = 1.0f, x->hi[a] = 0.0f;
        } else if (i == 0 || (i % 2 && i + 1 < n)) {
            x->first = (uint32_t)(i == 0 ? 2 : i + 1);
        } else {
            x->first = tri++;
            x->count = 1;
        }
    }
    *node_count = n;
    *triangles = tri;
    return nodes;
}

static void test_depth_limit(void **state)
{
    (void)state;
    char msg[256];
    size_t n, tris;
    prism_bvh_node *nodes = caterpillar(PRISM_BVH_MAX_DEPTH, &n, &tris);
    assert_int_equal(prism_bvh_validate(nodes, n, NULL, 0, NULL, NULL, tris, 1, msg, sizeof msg),
                     PRISM_SUCCESS);
    free(nodes);
    nodes = caterpillar(PRISM_BVH_MAX_DEPTH + 1, &n, &tris);
    assert_int_equal(prism_bvh_validate(nodes, n, NULL, 0, NULL, NULL, tris, 1, msg, sizeof msg),
                     PRISM_ERROR_INVALID_ARGUMENT);
    char expected[128];
    snprintf(expected, sizeof expected, "node %zu: depth 65 exceeds PRISM_BVH_MAX_DEPTH (64)",
             n - 2);
    assert_string_equal(msg, expected);
    free(nodes);
}

static void test_empty_bvh_rules(void **state)
{
    (void)state;
    char msg[256];
    prism_bvh_node n[2] = {{{1, 1, 1}, 0, {0, 0, 0}, 0}, {{1, 1, 1}, 0, {0, 0, 0}, 0}};
    assert_int_equal(prism_bvh_validate(n, 1, NULL, 0, NULL, NULL, 0, 4, msg, sizeof msg),
                     PRISM_SUCCESS);
    assert_int_equal(prism_bvh_validate(n, 2, NULL, 0, NULL, NULL, 0, 4, msg, sizeof msg),
                     PRISM_ERROR_INVALID_ARGUMENT);
    assert_string_equal(msg, "node 0: the empty BVH has 2 nodes (expected 1)");
    n[0].hi[2] = 1;
    assert_int_equal(prism_bvh_validate(n, 1, NULL, 0, NULL, NULL, 0, 4, msg, sizeof msg),
                     PRISM_ERROR_INVALID_ARGUMENT);
    assert_string_equal(msg, "node 0: empty root's box is not empty (axis z: lo 1 <= hi 1)");
    n[0].count = 1;
    assert_int_equal(prism_bvh_validate(n, 1, NULL, 0, NULL, NULL, 0, 4, msg, sizeof msg),
                     PRISM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(msg, "node 0: triangle_count is 0 but the root is not the empty root"));
    n[0].count = 0; /* the empty root with triangles to hold */
    n[0].hi[2] = 0;
    assert_int_equal(prism_bvh_validate(n, 1, NULL, 0, NULL, NULL, 5, 4, msg, sizeof msg),
                     PRISM_ERROR_INVALID_ARGUMENT);
    assert_string_equal(msg, "node 0: the empty root (count 0, first 0) but triangle_count is 5");
}

static void test_arguments_and_message(void **state)
{
    tree *t = *state;
    char msg[16];
    assert_int_equal(prism_bvh_validate(NULL, 1, NULL, 0, NULL, NULL, 0, 0, msg, sizeof msg),
                     PRISM_ERROR_INVALID_ARGUMENT);
    assert_string_equal(msg, "nodes is NULL");
    assert_int_equal(prism_bvh_validate(t->nodes, 0, NULL, 0, NULL, NULL, 0, 0, NULL, 0),
                     PRISM_ERROR_INVALID_ARGUMENT); /* no message: fine */
    assert_int_equal(prism_bvh_check(NULL, msg, sizeof msg), PRISM_ERROR_INVALID_ARGUMENT);
    assert_string_equal(msg, "bvh is NULL");
    t->nodes[0].lo[0] = NAN;
    assert_int_equal(prism_bvh_validate(t->nodes, t->node_count, NULL, 0, NULL, NULL,
                                        t->triangle_count, 0, msg, sizeof msg),
                     PRISM_ERROR_INVALID_ARGUMENT);
    assert_string_equal(msg, "node 0: box is "); /* truncated, terminated (snprintf) */
    memset(msg, 'x', sizeof msg);
    assert_int_equal(prism_bvh_validate(t->nodes, t->node_count, NULL, 0, NULL, NULL,
                                        t->triangle_count, 0, msg, 0),
                     PRISM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(msg[0], 'x'); /* size 0: not written */
}

static void test_out_of_memory(void **state)
{
    tree *t = *state;
    char msg[256];
    /* Scratch of one byte per node: 2^60 nodes cannot be had. The nodes are
     * never read beyond the root before the scratch exists. */
    assert_int_equal(prism_bvh_validate(t->nodes, (size_t)1 << 60, NULL, 0, NULL, NULL,
                                        t->triangle_count, 0, msg, sizeof msg),
                     PRISM_ERROR_OUT_OF_MEMORY);
    assert_non_null(strstr(msg, "out of memory"));
}

#define CORRUPT(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_accepts_soups),
        cmocka_unit_test(test_accepts_assets),
        cmocka_unit_test(test_accepts_empty_and_single),
        CORRUPT(test_intact_copy_is_valid),
        CORRUPT(test_child_box_outside_parent),
        CORRUPT(test_leaf_box_misses_vertex),
        CORRUPT(test_box_not_finite_or_inverted),
        CORRUPT(test_triangle_in_two_leaves),
        CORRUPT(test_triangle_in_no_leaf),
        CORRUPT(test_leaf_past_triangle_count),
        CORRUPT(test_leaf_too_large),
        CORRUPT(test_vertex_index_out_of_range),
        CORRUPT(test_ids_not_permutation),
        CORRUPT(test_empty_interior_node),
        CORRUPT(test_children_out_of_range),
        CORRUPT(test_children_at_odd_index),
        CORRUPT(test_child_before_parent),
        CORRUPT(test_shared_subtree),
        CORRUPT(test_unreachable_node),
        CORRUPT(test_padding_node),
        cmocka_unit_test(test_depth_limit),
        cmocka_unit_test(test_empty_bvh_rules),
        CORRUPT(test_arguments_and_message),
        CORRUPT(test_out_of_memory),
    };
    return cmocka_run_group_tests_name("bvh_validate", tests, NULL, NULL);
}
