/* COLLADA loader: every kind of bad input the issue lists, each from a
 * fixture in tests/data/collada. Each must fail with the documented result,
 * a message "FILE:LINE:COL: <element>: ...", *out NULL, the message logged
 * once, and nothing leaked (ASan runs this suite in CI). NaN/inf
 * coordinates are the one case that loads: the triangles using them are
 * dropped with a warning and counted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "test_collada_util.h"

/* Load `file`, expect failure `r` and a message naming file:line:col,
 * the element, and `what`. */
static void expect_bad(const char *file, unsigned max_depth, prism_result r, int line,
                       const char *element, const char *what)
{
    char path[512], head[600];
    snprintf(path, sizeof path, "%s/collada/%s", PRISM_TEST_DATA, file);
    load_out o;
    prism_scene *s = load_file(path, max_depth, &o);
    if (o.r != r || !strstr(o.error, element) || !strstr(o.error, what))
        print_error("%s: got %s \"%s\"\n", file, prism_result_string(o.r), o.error);
    assert_int_equal(o.r, r);
    assert_null(s);
    assert_int_equal(o.logged_errors, 1);
    snprintf(head, sizeof head, "%s:%d:", path, line);
    if (line > 0 && strncmp(o.error, head, strlen(head)) != 0)
        print_error("%s: expected the message to start with %s: \"%s\"\n", file, head, o.error);
    if (line > 0)
        assert_int_equal(strncmp(o.error, head, strlen(head)), 0);
    assert_non_null(strstr(o.error, element));
    assert_non_null(strstr(o.error, what));
}

static void test_malformed(void **state)
{
    (void)state;
    expect_bad("bad_malformed.dae", 0, PRISM_ERROR_PARSE, 12, "<mesh>", "mismatched tag");
}

static void test_truncated(void **state)
{
    (void)state;
    expect_bad("bad_truncated.dae", 0, PRISM_ERROR_PARSE, -1, "<", "XML error");
}

static void test_empty(void **state)
{
    (void)state;
    expect_bad("bad_empty.dae", 0, PRISM_ERROR_PARSE, 1, "<document>", "no element found");
}

static void test_not_collada(void **state)
{
    (void)state;
    expect_bad("bad_not_collada.dae", 0, PRISM_ERROR_PARSE, 2, "<svg>", "not a COLLADA document");
}

static void test_missing_id(void **state)
{
    (void)state;
    expect_bad("bad_missing_id.dae", 0, PRISM_ERROR_PARSE, 15, "<instance_geometry>",
               "no <geometry id=\"nothere\">");
}

static void test_index_out_of_range(void **state)
{
    (void)state;
    expect_bad("bad_index_range.dae", 0, PRISM_ERROR_PARSE, 11, "<p>",
               "index 8 is out of range: the mesh has 8 vertices");
}

static void test_counts_disagree(void **state)
{
    (void)state;
    expect_bad("bad_count_array.dae", 0, PRISM_ERROR_PARSE, 7, "<float_array>",
               "count=25 but the text holds 24 numbers");
    expect_bad("bad_count_triangles.dae", 0, PRISM_ERROR_PARSE, 11, "<triangles>",
               "count=11 but the data holds 12 triangles");
}

static void test_count_beyond_file(void **state)
{
    (void)state;
    expect_bad("bad_huge_count.dae", 0, PRISM_ERROR_PARSE, 7, "<float_array>",
               "count=4000000000 is more than a file of");
}

static void test_nonfinite_skipped(void **state)
{
    (void)state;
    load_out o;
    prism_scene *s = load_file(PRISM_TEST_DATA "/collada/nonfinite.dae", 0, &o);
    assert_int_equal(o.r, PRISM_SUCCESS);
    /* Vertex 0 is NaN; 5 of the cube's 12 triangles use it. */
    assert_int_equal(s->skipped.nonfinite_vertices, 1);
    assert_int_equal(s->triangles_count, 7);
    assert_int_equal(o.logged_warnings, 1);
    for (int k = 0; k < 3; k++) {
        assert_true(s->bbox_min[k] == -1.0f);
        assert_true(s->bbox_max[k] == 1.0f);
    }
    prism_scene_free(s);
}

static void test_cycle(void **state)
{
    (void)state;
    expect_bad("bad_cycle.dae", 0, PRISM_ERROR_PARSE, 17, "<instance_node>",
               "cycle: node \"a\" is placed inside itself");
}

static void test_nesting_limits(void **state)
{
    (void)state;
    /* 40 nested <node>s: fine by default (256), refused under a limit of 16. */
    load_out o;
    prism_scene *s = load_file(PRISM_TEST_DATA "/collada/bad_deep_nodes.dae", 0, &o);
    assert_int_equal(o.r, PRISM_SUCCESS);
    assert_int_equal(s->triangles_count, 12);
    prism_scene_free(s);
    expect_bad("bad_deep_nodes.dae", 16, PRISM_ERROR_LIMIT, 15, "<node>",
               "nodes nested deeper than 16");
    /* A chain of 41 instance_node levels through library_nodes. */
    expect_bad("bad_deep_instances.dae", 16, PRISM_ERROR_LIMIT, -1, "<instance_node>",
               "nested deeper than 16");
}

static void test_external_entity_never_fetched(void **state)
{
    (void)state;
    expect_bad("bad_external_entity.dae", 0, PRISM_ERROR_PARSE, 3, "<!ENTITY>",
               "external entity \"secret\", never fetched");
}

static void test_billion_laughs(void **state)
{
    (void)state;
    expect_bad("bad_billion_laughs.dae", 0, PRISM_ERROR_PARSE, 3, "<!ENTITY>",
               "entity declarations are not allowed");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_not_collada),
        cmocka_unit_test(test_missing_id),
        cmocka_unit_test(test_index_out_of_range),
        cmocka_unit_test(test_counts_disagree),
        cmocka_unit_test(test_count_beyond_file),
        cmocka_unit_test(test_nonfinite_skipped),
        cmocka_unit_test(test_cycle),
        cmocka_unit_test(test_nesting_limits),
        cmocka_unit_test(test_external_entity_never_fetched),
        cmocka_unit_test(test_billion_laughs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
