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

/* A <float_array count> that disagrees with its text is forgiven
 * (test_collada_wild.c), a primitive's is not; and an array shorter than
 * its count is still too short for an accessor that reads past it. */
static void test_counts_disagree(void **state)
{
    (void)state;
    expect_bad("bad_count_triangles.dae", 0, PRISM_ERROR_PARSE, 11, "<triangles>",
               "count=11 but the data holds 12 triangles");
    expect_bad("bad_count_short.dae", 0, PRISM_ERROR_PARSE, 9, "<accessor>",
               "count=8 stride=3 offset=0 reads past the 21 numbers of its <float_array>");
}

/* Two components are positions only when the params say X and Y. */
static void test_stride_two_not_xy(void **state)
{
    (void)state;
    expect_bad("bad_stride2_st.dae", 0, PRISM_ERROR_PARSE, 9, "<accessor>",
               "stride=2: a position needs 3 values (or 2, with params X and Y)");
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

/* Smaller cases, written inline: a triangle mesh and a scene around it. */
#define POS                                                                                        \
    "<source id=\"p\"><float_array count=\"9\">0 0 0 1 0 0 0 1 0</float_array>"                    \
    "<technique_common><accessor count=\"3\" stride=\"3\"/></technique_common></source>"           \
    "<vertices id=\"v\"><input semantic=\"POSITION\" source=\"#p\"/></vertices>"
#define TRI(p)                                                                                     \
    "<triangles count=\"1\"><input semantic=\"VERTEX\" source=\"#v\" offset=\"0\"/><p>" p          \
    "</p></triangles>"
#define GEOM(body)                                                                                 \
    "<library_geometries><geometry id=\"g\"><mesh>" body "</mesh></geometry></library_geometries>"
#define SCENE(node)                                                                                \
    "<library_visual_scenes><visual_scene id=\"s\"><node id=\"n\">" node                           \
    "</node></visual_scene></library_visual_scenes>"
#define PLACE "<instance_geometry url=\"#g\"/>"
#define DOC(x) "<COLLADA>" x "</COLLADA>"

static void expect_bad_text(const char *doc, prism_result r, const char *element, const char *what)
{
    char err[512] = "";
    prism_load_desc d = {.error = err, .error_size = sizeof err};
    prism_scene *s = (prism_scene *)1;
    prism_result got = prism_scene_load_memory(doc, strlen(doc), "inline.dae", &d, &s);
    if (got != r || !strstr(err, element) || !strstr(err, what))
        print_error("got %s \"%s\", want %s %s ... %s\n", prism_result_string(got), err,
                    prism_result_string(r), element, what);
    assert_int_equal(got, r);
    assert_null(s);
    assert_int_equal(strncmp(err, "inline.dae:1:", 13), 0);
    assert_non_null(strstr(err, element));
    assert_non_null(strstr(err, what));
}

/* <vertices> reading source p as positions. */
#define USE_P "<vertices id=\"v\"><input semantic=\"POSITION\" source=\"#p\"/></vertices>"

static void test_bad_numbers(void **state)
{
    (void)state;
    expect_bad_text(
        DOC(GEOM(
            "<source id=\"p\"><float_array>0 0 zero</float_array></source>" USE_P TRI("0 1 2"))),
        PRISM_ERROR_PARSE, "<float_array>", "not a number: \"zero\"");
    expect_bad_text(DOC(GEOM(POS TRI("0 1 99999999999"))), PRISM_ERROR_PARSE, "<p>",
                    "index beyond 32 bits");
    expect_bad_text(DOC(GEOM(POS TRI("0 1 -2"))), PRISM_ERROR_PARSE, "<p>", "not an index");
    expect_bad_text(DOC(GEOM("<source id=\"p\"><float_array>1"
                             "00000000000000000000000000000000000000000000000000000000000000000"
                             "00000000000000000000000000000000000000000000000000000000000000000"
                             "</float_array></source>" USE_P TRI("0 1 2"))),
                    PRISM_ERROR_PARSE, "<float_array>", "number too long");
    expect_bad_text(DOC(GEOM("<source><float_array count=\"x1\"/></source>")), PRISM_ERROR_PARSE,
                    "<float_array>", "count=\"x1\" is not a non-negative integer");
}

/* A source no primitive reads as positions: its numbers are not read, so
 * a bad one is no error (and its count is not compared). */
static void test_unread_numbers(void **state)
{
    (void)state;
    const char *doc = DOC(GEOM(POS "<source id=\"n\"><float_array count=\"2\">0 zero 1"
                                   "</float_array></source><triangles count=\"1\"><input "
                                   "semantic=\"VERTEX\" source=\"#v\" offset=\"0\"/><input "
                                   "semantic=\"NORMAL\" source=\"#n\" offset=\"1\"/><p>0 0 1 0 2 0"
                                   "</p></triangles>") SCENE(PLACE));
    char err[512] = "";
    prism_load_desc d = {.error = err, .error_size = sizeof err};
    prism_scene *s = NULL;
    assert_int_equal(prism_scene_load_memory(doc, strlen(doc), "inline.dae", &d, &s),
                     PRISM_SUCCESS);
    assert_int_equal(s->triangles_count, 1);
    assert_int_equal(s->quirks.float_array_counts, 0);
    prism_scene_free(s);
}

static void test_bad_structure(void **state)
{
    (void)state;
    expect_bad_text(DOC(GEOM(POS "<triangles count=\"1\"><input semantic=\"VERTEX\" "
                                 "source=\"#v\" offset=\"0\"/><input semantic=\"NORMAL\" "
                                 "source=\"#p\" offset=\"1\"/><p>0 0 1 1 2</p></triangles>")),
                    PRISM_ERROR_PARSE, "<p>", "5 integers is not a whole number of 2-index");
    expect_bad_text(DOC(GEOM(POS "<triangles><p>0 1 2</p></triangles>")), PRISM_ERROR_PARSE, "<p>",
                    "no <input semantic=\"VERTEX\">");
    expect_bad_text(DOC(GEOM("<source id=\"p\"><float_array>0 0 0 1 0 0 0 1 0</float_array>"
                             "<technique_common><accessor count=\"4\" stride=\"3\"/>"
                             "</technique_common></source><vertices id=\"v\"><input "
                             "semantic=\"POSITION\" source=\"#p\"/></vertices>" TRI("0 1 2"))),
                    PRISM_ERROR_PARSE, "<accessor>", "count=4 stride=3 offset=0 reads past");
    expect_bad_text(DOC(GEOM("<vertices id=\"v\"><input semantic=\"POSITION\" "
                             "source=\"#nope\"/></vertices>" TRI("0 1 2"))),
                    PRISM_ERROR_PARSE, "<input>", "no <source id=\"nope\">");
    expect_bad_text(DOC(GEOM(POS "<polylist count=\"1\"><input semantic=\"VERTEX\" "
                                 "source=\"#v\" offset=\"0\"/><vcount>4</vcount><p>0 1 2</p>"
                                 "</polylist>")),
                    PRISM_ERROR_PARSE, "<polylist>", "<vcount> adds up to 4 vertices");
}

static void test_bad_scene(void **state)
{
    (void)state;
    expect_bad_text(DOC(GEOM(POS TRI("0 1 2")) SCENE("<translate>1 2</translate>" PLACE)),
                    PRISM_ERROR_PARSE, "<translate>", "2 values where 3 are needed");
    expect_bad_text(DOC(GEOM(POS TRI("0 1 2")) SCENE("<matrix>1 2 3 4 5 6 7 8 9 10 11 12 13 14 "
                                                     "15 16 17</matrix>" PLACE)),
                    PRISM_ERROR_PARSE, "<matrix>", "more than 16 values");
    expect_bad_text(DOC(GEOM(POS TRI("0 1 2")) SCENE("<instance_node url=\"#nope\"/>")),
                    PRISM_ERROR_PARSE, "<instance_node>", "no <node id=\"nope\">");
    expect_bad_text(DOC(GEOM(POS TRI("0 1 2")) SCENE("<instance_geometry url=\"x.dae#g\"/>")),
                    PRISM_ERROR_PARSE, "<instance_geometry>", "is not a local \"#id\"");
    expect_bad_text(DOC(SCENE(PLACE) "<scene><instance_visual_scene url=\"#nope\"/></scene>"),
                    PRISM_ERROR_PARSE, "<instance_visual_scene>", "no <visual_scene id=\"nope\">");
    /* a skew that is no transform: an axis of no length, an infinite shear,
     * a shear that flattens space (r = t = X at -45 degrees: x' = 0) */
    expect_bad_text(DOC(GEOM(POS TRI("0 1 2")) SCENE("<skew>30 0 0 0 1 0 0</skew>" PLACE)),
                    PRISM_ERROR_PARSE, "<skew>", "30 0 0 0 1 0 0: the rotation axis has length 0");
    expect_bad_text(DOC(GEOM(POS TRI("0 1 2")) SCENE("<skew>30 0 1 0 0 0 0</skew>" PLACE)),
                    PRISM_ERROR_PARSE, "<skew>", "the translation axis has length 0");
    expect_bad_text(DOC(GEOM(POS TRI("0 1 2")) SCENE("<skew>-270 0 1 0 1 0 0</skew>" PLACE)),
                    PRISM_ERROR_PARSE, "<skew>",
                    "-270 0 1 0 1 0 0: an angle of 90 degrees (mod 180) makes the shear");
    expect_bad_text(DOC(GEOM(POS TRI("0 1 2")) SCENE("<skew>-45 1 0 0 2 0 0</skew>" PLACE)),
                    PRISM_ERROR_PARSE, "<skew>", "the shear flattens space");
    expect_bad_text(DOC(GEOM(POS TRI("0 1 2")) SCENE("<skew>1 2 3 4 5 6</skew>" PLACE)),
                    PRISM_ERROR_PARSE, "<skew>", "6 values where 7 are needed");
    expect_bad_text(DOC("<asset><up_axis>W_UP</up_axis></asset>"), PRISM_ERROR_PARSE, "<up_axis>",
                    "\"W_UP\" is not X_UP, Y_UP or Z_UP");
    expect_bad_text(DOC("<asset><unit meter=\"-1\"/></asset>"), PRISM_ERROR_PARSE, "<unit>",
                    "meter=\"-1\" is not a positive number");
    /* nested <asset>s are read as the root's, with the same errors */
    expect_bad_text(DOC("<library_geometries><asset><unit meter=\"0\"/></asset>"
                        "</library_geometries>"),
                    PRISM_ERROR_PARSE, "<unit>", "meter=\"0\" is not a positive number");
    expect_bad_text(DOC("<library_geometries><geometry id=\"g\"><asset><unit meter=\"1 inch\"/>"
                        "</asset></geometry></library_geometries>"),
                    PRISM_ERROR_PARSE, "<unit>", "meter=\"1 inch\" is not a positive number");
    expect_bad_text(DOC(GEOM(POS TRI("0 1 2"))
                            SCENE("<asset><up_axis>y_up</up_axis></asset>" PLACE)),
                    PRISM_ERROR_PARSE, "<up_axis>", "\"y_up\" is not X_UP, Y_UP or Z_UP");
}

/* An <asset> where Prism scopes nothing (in a <source>, a <material>, a
 * <node> outside any scene or library) is not read, as before. */
static void test_unscoped_assets(void **state)
{
    (void)state;
    const char *doc = DOC(
        "<library_materials><material id=\"m\"><asset><unit meter=\"-1\"/></asset></material>"
        "</library_materials><library_geometries><geometry id=\"g\"><mesh><source id=\"p\">"
        "<asset><unit meter=\"0.5\"/></asset><float_array count=\"9\">0 0 0 1 0 0 0 1 0"
        "</float_array></source><vertices id=\"v\"><input semantic=\"POSITION\" source=\"#p\"/>"
        "</vertices>" TRI(
            "0 1 2") "</mesh></geometry></library_geometries>"
                     "<library_animations><node><asset><up_axis>nonsense</up_axis></asset></node>"
                     "</library_animations>" SCENE(PLACE));
    char err[512] = "";
    prism_load_desc d = {.error = err, .error_size = sizeof err};
    prism_scene *s = NULL;
    assert_int_equal(prism_scene_load_memory(doc, strlen(doc), "inline.dae", &d, &s),
                     PRISM_SUCCESS);
    assert_true(s->bbox_max[0] == 1.0f);
    prism_scene_free(s);
}

#define MAT(extra)                                                                                 \
    "<library_materials><material id=\"m\"><extra>" extra "</extra></material></library_materials>"

static void test_bad_g4dae(void **state)
{
    (void)state;
    expect_bad_text(DOC(MAT("<property name=\"RINDEX\" ref=\"nope\"/>")), PRISM_ERROR_PARSE,
                    "<property>", "no <matrix name=\"nope\">");
    expect_bad_text(DOC(MAT("<matrix coldim=\"2\" name=\"t\">1e-6 1 2e-6</matrix>")),
                    PRISM_ERROR_PARSE, "<matrix>", "3 values: a coldim=\"2\" table needs pairs");
    expect_bad_text(DOC(MAT("<matrix coldim=\"3\" name=\"t\">1 2 3</matrix>")), PRISM_ERROR_PARSE,
                    "<matrix>", "coldim=\"3\"");
    expect_bad_text(DOC(MAT("<matrix coldim=\"2\" name=\"t\">0 1</matrix>"
                            "<property name=\"RINDEX\" ref=\"t\"/>")),
                    PRISM_ERROR_PARSE, "<matrix>", "photon energy 0 MeV is not positive");
    /* G4DAE's constants ("-1 V 1 V") load; energies -1 and 1 with two
     * values are no constant and no spectrum. */
    expect_bad_text(DOC(MAT("<matrix coldim=\"2\" name=\"t\">-1 5 1 6</matrix>"
                            "<property name=\"YIELDRATIO\" ref=\"t\"/>")),
                    PRISM_ERROR_PARSE, "<matrix>", "photon energy -1 MeV is not positive");
    expect_bad_text(
        DOC(GEOM(
            POS TRI("0 1 2")) "<library_nodes><node id=\"lv\">" PLACE
                              "</node><extra><skinsurface name=\"k\" surfaceproperty=\"nope\">"
                              "<volumeref ref=\"lv\"/></skinsurface></extra></library_nodes>" SCENE(
                                  "<instance_node url=\"#lv\"/>")),
        PRISM_ERROR_PARSE, "<skinsurface>", "no <opticalsurface name=\"nope\">");
    expect_bad_text(DOC("<library_nodes><extra><bordersurface name=\"b\"><physvolref ref=\"a\"/>"
                        "</bordersurface></extra></library_nodes>"),
                    PRISM_ERROR_PARSE, "<bordersurface>", "1 volume references where 2");
}

/* An instancing bomb: 24 levels, each placing the level below twice, would
 * be 2^24 copies; with max_triangles it is refused before any allocation. */
static void test_instancing_bomb(void **state)
{
    (void)state;
    char doc[8192];
    size_t n =
        (size_t)snprintf(doc, sizeof doc,
                         "<COLLADA>" GEOM(POS TRI("0 1 2")) "<library_nodes><node id=\"l0\">" PLACE
                                                            "</node>");
    for (int i = 1; i <= 24; i++)
        n += (size_t)snprintf(doc + n, sizeof doc - n,
                              "<node id=\"l%d\"><instance_node url=\"#l%d\"/><node><translate>1 0 "
                              "0</translate><instance_node url=\"#l%d\"/></node></node>",
                              i, i - 1, i - 1);
    snprintf(doc + n, sizeof doc - n,
             "</library_nodes>" SCENE("<instance_node url=\"#l24\"/>") "</COLLADA>");
    char err[512];
    prism_load_desc d = {.error = err, .error_size = sizeof err, .max_triangles = 1000000};
    prism_scene *s = (prism_scene *)1;
    assert_int_equal(prism_scene_load_memory(doc, strlen(doc), "bomb.dae", &d, &s),
                     PRISM_ERROR_LIMIT);
    assert_null(s);
    assert_non_null(strstr(err, "16777216 world triangles, more than the limit 1000000"));
}

/* Placements of an empty geometry cost names and paths, not triangles:
 * max_triangles bounds the solids too. */
static void test_solid_limit(void **state)
{
    (void)state;
    char doc[8192];
    size_t n = (size_t)snprintf(doc, sizeof doc,
                                "<COLLADA><library_geometries><geometry id=\"g\"/>"
                                "</library_geometries><library_nodes><node id=\"l0\">"
                                "<instance_geometry url=\"#g\"/></node>");
    for (int i = 1; i <= 12; i++)
        n += (size_t)snprintf(doc + n, sizeof doc - n,
                              "<node id=\"l%d\"><instance_node url=\"#l%d\"/>"
                              "<instance_node url=\"#l%d\"/></node>",
                              i, i - 1, i - 1);
    snprintf(doc + n, sizeof doc - n,
             "</library_nodes>" SCENE("<instance_node url=\"#l12\"/>") "</COLLADA>");
    char err[512];
    prism_load_desc d = {.error = err, .error_size = sizeof err, .max_triangles = 1000};
    prism_scene *s = (prism_scene *)1;
    assert_int_equal(prism_scene_load_memory(doc, strlen(doc), "solids.dae", &d, &s),
                     PRISM_ERROR_LIMIT);
    assert_null(s);
    assert_non_null(strstr(err, "places 4096 solids, more than the limit 1000"));
    d.max_triangles = 0;
    assert_int_equal(prism_scene_load_memory(doc, strlen(doc), "solids.dae", &d, &s),
                     PRISM_SUCCESS);
    assert_int_equal(s->solids_count, 4096);
    assert_int_equal(s->triangles_count, 0);
    assert_int_equal(s->skipped.unknown_elements, 1); /* the geometry without a mesh */
    prism_scene_free(s);
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
        cmocka_unit_test(test_stride_two_not_xy),
        cmocka_unit_test(test_nonfinite_skipped),
        cmocka_unit_test(test_cycle),
        cmocka_unit_test(test_nesting_limits),
        cmocka_unit_test(test_external_entity_never_fetched),
        cmocka_unit_test(test_billion_laughs),
        cmocka_unit_test(test_bad_numbers),
        cmocka_unit_test(test_unread_numbers),
        cmocka_unit_test(test_bad_structure),
        cmocka_unit_test(test_bad_scene),
        cmocka_unit_test(test_unscoped_assets),
        cmocka_unit_test(test_bad_g4dae),
        cmocka_unit_test(test_instancing_bomb),
        cmocka_unit_test(test_solid_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
