/* COLLADA loader: files from the wild. The length unit and the rule that
 * decided it (the caller's choice, the file's <unit>, the marks of a
 * Geant4 exporter, COLLADA's metres), each from a fixture in
 * tests/data/collada; the quirks exporters write and the loader forgives
 * with a warning naming file:line:col (a <float_array count> that
 * disagrees with its text, positions of two components); and whether a
 * scene has optics at all. Each fixture's comment says what it holds. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "geometry/collada/internal.h"
#include "test_collada_util.h"

static prism_scene *load_desc(const char *path, prism_load_desc d, load_out *o)
{
    memset(o, 0, sizeof *o);
    d.error = o->error;
    d.error_size = sizeof o->error;
    d.log = count_log;
    d.log_user = o;
    prism_scene *s = (prism_scene *)1;
    o->r = prism_scene_load(path, &d, &s);
    if (o->r != PRISM_SUCCESS && s)
        print_error("%s: %s\n", path, o->error);
    return s;
}

static void assert_prefix(const char *text, const char *head)
{
    if (strncmp(text, head, strlen(head)) != 0)
        print_error("expected \"%s...\", got \"%s\"\n", head, text);
    assert_int_equal(strncmp(text, head, strlen(head)), 0);
}

/* ---- the length unit ---- */

typedef struct unit_case {
    const char *file;
    double unit;
    prism_unit_source source;
    uint32_t marks;
    const char *rule;
    float half; /* the box's half width in metres */
} unit_case;

/* Every fixture's box is +-1000 file units but g4dae_mini's (the tank,
 * +-1000 mm) and cube.dae's (+-8 cm in x). */
static const unit_case unit_cases[] = {
    {"unit_none.dae", 1.0, PRISM_UNIT_FROM_DEFAULT, 0, "no <unit>: metres (COLLADA default)",
     1000.0f},
    {"unit_odd_pointer.dae", 1.0, PRISM_UNIT_FROM_DEFAULT, 0, "no <unit>: metres (COLLADA default)",
     1000.0f},
    {"unit_g4_meta.dae", 0.001, PRISM_UNIT_FROM_GEANT4, PRISM_GEANT4_META,
     "Geant4 export (<meta> extras): millimetres", 1.0f},
    {"unit_g4_pointer_ids.dae", 0.001, PRISM_UNIT_FROM_GEANT4, PRISM_GEANT4_POINTER_IDS,
     "Geant4 export (pointer-suffixed ids): millimetres", 1.0f},
    {"unit_g4_dd_paths.dae", 0.001, PRISM_UNIT_FROM_GEANT4, PRISM_GEANT4_DD_PATHS,
     "Geant4 export (__dd__ paths): millimetres", 1.0f},
    {"g4dae_mini.dae", 0.001, PRISM_UNIT_FROM_GEANT4, PRISM_GEANT4_EXTRAS,
     "Geant4 export (G4DAE material or surface extras): millimetres", 1.0f},
    {"unit_file_wins.dae", 0.01, PRISM_UNIT_FROM_FILE, PRISM_GEANT4_META | PRISM_GEANT4_POINTER_IDS,
     "<unit meter=\"0.01\"> in the file", 10.0f},
    {"cube.dae", 0.01, PRISM_UNIT_FROM_FILE, 0, "<unit meter=\"0.01\"> in the file", 0.08f},
};

/* Each rule: the unit, the source, the marks found, the rule in words,
 * logged once (INFO) after the file's name, and the geometry it scaled. */
static void test_unit_rules(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof unit_cases / sizeof *unit_cases; i++) {
        const unit_case *c = &unit_cases[i];
        char path[512], head[600];
        snprintf(path, sizeof path, "%s/collada/%s", PRISM_TEST_DATA, c->file);
        load_out o;
        prism_scene *s = load_desc(path, (prism_load_desc){0}, &o);
        assert_int_equal(o.r, PRISM_SUCCESS);
        if (s->unit_source != c->source || strcmp(s->unit_rule, c->rule) != 0)
            print_error("%s: source %d, rule \"%s\"\n", c->file, (int)s->unit_source, s->unit_rule);
        assert_true(s->unit_meter == c->unit);
        assert_int_equal(s->unit_source, c->source);
        assert_int_equal(s->geant4_marks, c->marks);
        assert_string_equal(s->unit_rule, c->rule);
        assert_int_equal(o.logged_infos, 1);
        assert_int_equal(o.logged_warnings, 0);
        snprintf(head, sizeof head, "%s: ", path);
        assert_prefix(o.info, head);
        assert_non_null(strstr(o.info, c->rule));
        assert_float_equal(s->bbox_max[0], c->half, 1e-6f * c->half);
        prism_scene_free(s);
    }
}

/* The caller's unit wins over the file's <unit> and over the Geant4 rule;
 * length_unit wins over unit_meter; auto changes nothing. */
static void test_unit_override(void **state)
{
    (void)state;
    static const struct {
        const char *file;
        prism_length_unit unit;
        double unit_meter, want;
        const char *rule;
    } cases[] = {
        {DATA("unit_file_wins.dae"), PRISM_UNIT_MM, 0, 0.001, "mm (user's choice)"},
        {DATA("unit_file_wins.dae"), PRISM_UNIT_M, 0, 1.0, "m (user's choice)"},
        {DATA("unit_g4_meta.dae"), PRISM_UNIT_CM, 0, 0.01, "cm (user's choice)"},
        {DATA("unit_g4_meta.dae"), PRISM_UNIT_M, 0.5, 1.0, "m (user's choice)"},
        {DATA("unit_none.dae"), PRISM_UNIT_AUTO, 0.5, 0.5, "unit_meter=0.5 (user's choice)"},
        {DATA("unit_none.dae"), PRISM_UNIT_MM, 0, 0.001, "mm (user's choice)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        load_out o;
        prism_load_desc d = {.length_unit = cases[i].unit, .unit_meter = cases[i].unit_meter};
        prism_scene *s = load_desc(cases[i].file, d, &o);
        assert_int_equal(o.r, PRISM_SUCCESS);
        assert_true(s->unit_meter == cases[i].want);
        assert_int_equal(s->unit_source, PRISM_UNIT_FROM_USER);
        assert_string_equal(s->unit_rule, cases[i].rule);
        assert_float_equal(s->bbox_max[0], 1000.0 * cases[i].want, 1e-6 * 1000 * cases[i].want);
        assert_non_null(strstr(o.info, cases[i].rule));
        prism_scene_free(s);
    }
    /* A value outside the enum is refused before anything is read. */
    load_out o;
    prism_scene *s = load_desc(DATA("unit_none.dae"),
                               (prism_load_desc){.length_unit = (prism_length_unit)7}, &o);
    assert_int_equal(o.r, PRISM_ERROR_INVALID_ARGUMENT);
    assert_null(s);
    assert_int_equal(o.logged_errors, 1);
    assert_non_null(strstr(o.error, "length_unit=7"));
    char err[256] = "";
    prism_load_desc d = {.length_unit = (prism_length_unit)-1,
                         .error = err,
                         .error_size = sizeof err};
    s = (prism_scene *)1;
    assert_int_equal(prism_scene_load_memory("<COLLADA/>", 10, "x", &d, &s),
                     PRISM_ERROR_INVALID_ARGUMENT);
    assert_null(s);
    assert_non_null(strstr(err, "not a prism_length_unit"));
}

static void assert_vertex(const prism_scene *s, size_t v, double x, double y, double z)
{
    for (int k = 0; k < 3; k++) {
        double got = s->positions[3 * v + (size_t)k], want = k == 0 ? x : k == 1 ? y : z;
        if (fabs(got - want) > 1e-6)
            print_error("vertex %zu[%d]: %.9g is not %.9g\n", v, k, got, want);
        assert_true(fabs(got - want) <= 1e-6);
    }
}

/* asset_nested.dae: a root in centimetres, Z up; <asset>s nested in a
 * library, geometries and a node. Each geometry's positions come in its
 * nearest <asset>'s unit and axes (Y up to Z up: (x, y, z) -> (x, -z, y)),
 * each node's transforms likewise; in metres: */
static void test_nested_assets(void **state)
{
    (void)state;
    load_out o;
    prism_scene *s = load_desc(DATA("asset_nested.dae"), (prism_load_desc){0}, &o);
    assert_int_equal(o.r, PRISM_SUCCESS);
    assert_int_equal(o.logged_warnings, 0);
    assert_int_equal(s->up_axis, PRISM_UP_Z);
    assert_true(s->unit_meter == 0.01);
    assert_int_equal(s->unit_source, PRISM_UNIT_FROM_FILE);
    assert_int_equal(s->vertices_count, 23);
    /* the cone: inches and Y up in its own <asset> (over the library's
     * millimetres): a base of +-10 in, its apex 50 in = 1.27 m up (+Z) */
    assert_vertex(s, 0, -0.254, 0.254, 0);
    assert_vertex(s, 1, 0.254, 0.254, 0);
    assert_vertex(s, 2, 0.254, -0.254, 0);
    assert_vertex(s, 4, 0, 0, 1.27);
    /* the library's millimetres: (1000, 0, 0) is 1 m */
    assert_vertex(s, 6, 1, 0, 0);
    assert_vertex(s, 7, 0, 1, 0);
    /* the library's millimetres, its own Y up: (0,1000,0) up, (0,0,1000) towards -Y */
    assert_vertex(s, 9, 0, 0, 1);
    assert_vertex(s, 10, 0, -1, 0);
    /* a library of nodes in metres: <translate>2 0 0</translate> is 2 m;
     * the geometry it places is the root's (centimetres) */
    assert_vertex(s, 11, 2, 0, 0);
    assert_vertex(s, 12, 3, 0, 0);
    /* a node in X up (centimetres): <translate>0 3 0</translate> is 3 cm
     * towards -X (X up's right is -Y), <rotate>1 0 0 90</rotate> turns
     * about its up axis, the root's Z */
    assert_vertex(s, 14, -0.03, 0, 0);
    assert_vertex(s, 15, -0.03, 1, 0);
    assert_vertex(s, 16, -1.03, 0, 0);
    /* its child is in X up too: <translate>5 0 0</translate> is 5 cm up */
    assert_vertex(s, 17, -0.03, 0, 0.05);
    assert_vertex(s, 18, -0.03, 1, 0.05);
    /* the root's centimetres */
    assert_vertex(s, 20, 0, 0, 0.07);
    assert_vertex(s, 21, 1, 0, 0.07);
    assert_true(s->bbox_max[2] == 1.27f);
    prism_scene_free(s);
}

/* A nested <unit> is relative to the root's <unit> (metres without one):
 * the caller's unit, which replaces the root's, scales it alike. Read in
 * millimetres, the cone is 50 in x 2.54 = 127 of them tall. */
static void test_nested_assets_user_unit(void **state)
{
    (void)state;
    load_out o;
    prism_scene *s = load_desc(DATA("asset_nested.dae"),
                               (prism_load_desc){.length_unit = PRISM_UNIT_MM}, &o);
    assert_int_equal(o.r, PRISM_SUCCESS);
    assert_true(s->unit_meter == 0.001);
    assert_vertex(s, 4, 0, 0, 0.127);
    assert_vertex(s, 12, 0.3, 0, 0); /* 2 m and 100 cm, read as 200 mm and 100 mm */
    prism_scene_free(s);
}

/* The one parser every tool's --unit goes through. */
static void test_unit_parse(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        prism_length_unit unit;
    } good[] = {{"auto", PRISM_UNIT_AUTO}, {"m", PRISM_UNIT_M},   {"cm", PRISM_UNIT_CM},
                {"mm", PRISM_UNIT_MM},     {"MM", PRISM_UNIT_MM}, {"Auto", PRISM_UNIT_AUTO}};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        prism_length_unit u = (prism_length_unit)99;
        assert_int_equal(prism_length_unit_parse(good[i].text, &u), PRISM_SUCCESS);
        assert_int_equal(u, good[i].unit);
    }
    static const char *bad[] = {"", "km", "mmm", "m ", " m", "c", "metres", "0.001"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        prism_length_unit u = PRISM_UNIT_CM;
        assert_int_equal(prism_length_unit_parse(bad[i], &u), PRISM_ERROR_INVALID_ARGUMENT);
        assert_int_equal(u, PRISM_UNIT_CM); /* left alone */
    }
    prism_length_unit u;
    assert_int_equal(prism_length_unit_parse(NULL, &u), PRISM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(prism_length_unit_parse("m", NULL), PRISM_ERROR_INVALID_ARGUMENT);
    assert_string_equal(prism_length_unit_name(PRISM_UNIT_MM), "mm");
    assert_string_equal(prism_length_unit_name(PRISM_UNIT_AUTO), "auto");
    assert_string_equal(prism_length_unit_name((prism_length_unit)9), "?");
    assert_true(prism_length_unit_meter(PRISM_UNIT_CM) == 0.01);
    assert_true(prism_length_unit_meter(PRISM_UNIT_MM) == 0.001);
    assert_true(prism_length_unit_meter(PRISM_UNIT_M) == 1.0);
    assert_true(prism_length_unit_meter(PRISM_UNIT_AUTO) == 0.0);
}

/* `path` parsed in chunks of 200 bytes by the chunked parse itself, which
 * must take it (a chunk that fails sends a document to the serial parse,
 * which would hide a chunk's mistake behind the right answer). */
static prism__cl *parse_chunked(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static char text[8192];
    size_t size = fread(text, 1, sizeof text, f);
    fclose(f);
    prism__cl *L = calloc(1, sizeof *L);
    assert_non_null(L);
    prism__cl_init(L, path, NULL, size);
    assert_true(prism__cl_parse_parallel(L, text, size, 200));
    assert_int_equal(L->result, PRISM_SUCCESS);
    return L;
}

/* A <meta> deeper than right inside an <extra> is no mark, whole or in
 * chunks (where a node's <extra> is read by the scan, not by expat); right
 * inside, the chunked parse finds it as the serial one does. */
static void test_meta_where(void **state)
{
    (void)state;
    static const char *const extras[] = {
        "<extra><technique profile=\"x\"><meta id=\"a\"/></technique></extra>",
        "<extra>\n<meta id=\"a\"><copyNo>3</copyNo></meta>\n</extra>"};
    for (int k = 0; k < 2; k++) {
        char doc[2048];
        int n = snprintf(doc, sizeof doc,
                         "<COLLADA><library_geometries>\n<geometry id=\"g\"><mesh><source "
                         "id=\"p\"><float_array count=\"9\">0 0 0 1000 0 0 0 1000 0"
                         "</float_array></source><vertices id=\"v\"><input semantic=\"POSITION\" "
                         "source=\"#p\"/></vertices><triangles count=\"1\"><input "
                         "semantic=\"VERTEX\" source=\"#v\" offset=\"0\"/><p>0 1 2</p>"
                         "</triangles></mesh></geometry>\n</library_geometries>"
                         "<library_visual_scenes><visual_scene id=\"s\">\n<node id=\"a\">"
                         "<instance_geometry url=\"#g\"/>%s</node>\n<node id=\"b\"/>\n"
                         "</visual_scene></library_visual_scenes></COLLADA>",
                         extras[k]);
        for (size_t chunk = 0; chunk <= 64; chunk += 64) {
            prism_scene *s = NULL;
            prism_result r = chunk ? prism__scene_load_memory_chunked(doc, (size_t)n, "meta", NULL,
                                                                      chunk, &s)
                                   : prism_scene_load_memory(doc, (size_t)n, "meta", NULL, &s);
            assert_int_equal(r, PRISM_SUCCESS);
            assert_int_equal(s->geant4_marks, k ? PRISM_GEANT4_META : 0u);
            assert_true(s->unit_meter == (k ? 0.001 : 1.0));
            prism_scene_free(s);
        }
    }
    /* The chunked parse itself takes the document (no serial fall-back) and
     * finds the <meta> of a node's <extra> that expat never saw. */
    prism__cl *L = parse_chunked(DATA("unit_g4_meta.dae"));
    assert_true(L->g4_meta);
    prism__cl_release(L);
    free(L);
}

/* ---- quirks ---- */

static prism_scene *load_quirk(const char *file, load_out *o, char *path, size_t path_size)
{
    snprintf(path, path_size, "%s/collada/%s", PRISM_TEST_DATA, file);
    prism_scene *s = load_desc(path, (prism_load_desc){0}, o);
    assert_int_equal(o->r, PRISM_SUCCESS);
    return s;
}

static void assert_box(const prism_scene *s, float lo, float hi)
{
    for (int k = 0; k < 3; k++) {
        assert_true(s->bbox_min[k] == lo);
        assert_true(s->bbox_max[k] == hi);
    }
}

/* count=25 with 24 numbers, count=24 with 27 (7 7 7 after the cube), and
 * a count no file of this size could hold: the fewer of the two is read,
 * the cube loads whole, and one warning names file:line:col. */
static void test_float_array_count(void **state)
{
    (void)state;
    static const struct {
        const char *file, *what;
    } cases[] = {
        {"quirk_count_fewer.dae", "count=25 but the text holds 24 numbers: the 24 are read"},
        {"quirk_count_more.dae", "count=24 but the text holds 27 numbers: the first 24 are read"},
        {"quirk_count_huge.dae", "count=4000000000 but the text holds 24 numbers: the 24 are read"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char path[512], want[700];
        load_out o;
        prism_scene *s = load_quirk(cases[i].file, &o, path, sizeof path);
        assert_int_equal(s->triangles_count, 12);
        assert_int_equal(s->vertices_count, 8);
        assert_box(s, -1.0f, 1.0f);
        assert_int_equal(s->quirks.float_array_counts, 1);
        assert_int_equal(s->quirks.flat_positions, 0);
        assert_int_equal(o.logged_warnings, 1);
        snprintf(want, sizeof want, "%s:8:11: <float_array>: %s", path, cases[i].what);
        assert_string_equal(o.warning[0], want);
        prism_scene_free(s);
    }
}

/* Stride 2, params X and Y: a unit square and a triangle beside it, read
 * with z = 0 and one warning at the accessor. */
static void test_flat_positions(void **state)
{
    (void)state;
    char path[512], want[700];
    load_out o;
    prism_scene *s = load_quirk("quirk_flat_positions.dae", &o, path, sizeof path);
    assert_int_equal(s->triangles_count, 3);
    assert_int_equal(s->vertices_count, 7);
    static const float xy[7][2] = {{0, 0}, {1, 0}, {1, 1}, {0, 1}, {2, 0}, {3, 0}, {2, 1}};
    for (int v = 0; v < 7; v++) {
        assert_true(s->positions[3 * v] == xy[v][0]);
        assert_true(s->positions[3 * v + 1] == xy[v][1]);
        assert_true(s->positions[3 * v + 2] == 0.0f);
    }
    assert_true(s->bbox_max[0] == 3.0f && s->bbox_max[1] == 1.0f && s->bbox_max[2] == 0.0f);
    assert_int_equal(s->quirks.flat_positions, 1);
    assert_int_equal(o.logged_warnings, 1);
    snprintf(want, sizeof want,
             "%s:9:29: <accessor>: stride=2 with params X and Y: 7 positions read with z = 0",
             path);
    assert_string_equal(o.warning[0], want);
    prism_scene_free(s);
    /* In chunks, the params of a stride-2 accessor reach the mesh stage
     * (those of the others never go through expat). */
    prism__cl *L = parse_chunked(path);
    assert_int_equal(L->quirks.flat_positions, 1);
    assert_int_equal(L->stats.unique_triangles, 3);
    prism__cl_release(L);
    free(L);
}

typedef struct log_text {
    char text[8192];
    size_t len;
    int warnings;
} log_text;

static void keep_log(void *user, prism_log_level level, const char *msg)
{
    log_text *t = user;
    t->warnings += level == PRISM_LOG_WARNING;
    int n = snprintf(t->text + t->len, sizeof t->text - t->len, "%d %s\n", (int)level, msg);
    if (n > 0 && t->len + (size_t)n < sizeof t->text)
        t->len += (size_t)n;
}

/* Twelve geometries whose counts are one too many, on lines of their own
 * (cuts fall between them): the first 8 are warned one by one, the rest
 * in one line; whole and in chunks, the same log. */
static void test_quirk_summary(void **state)
{
    (void)state;
    static char doc[16384];
    size_t n = (size_t)snprintf(doc, sizeof doc, "<COLLADA><library_geometries>\n");
    for (int g = 0; g < 12; g++)
        n += (size_t)snprintf(
            doc + n, sizeof doc - n,
            "<geometry id=\"g%d\"><mesh><source id=\"p\"><float_array count=\"10\">0 0 0 1 0 "
            "0 0 1 %d</float_array></source><vertices id=\"v\"><input semantic=\"POSITION\" "
            "source=\"#p\"/></vertices><triangles count=\"1\"><input semantic=\"VERTEX\" "
            "source=\"#v\" offset=\"0\"/><p>0 1 2</p></triangles></mesh></geometry>\n",
            g, g);
    n += (size_t)snprintf(doc + n, sizeof doc - n,
                          "</library_geometries><library_visual_scenes><visual_scene id=\"s\">"
                          "<node><instance_geometry url=\"#g11\"/></node></visual_scene>"
                          "</library_visual_scenes></COLLADA>");
    log_text whole = {.len = 0}, cut = {.len = 0};
    prism_load_desc d = {.log = keep_log, .log_user = &whole};
    prism_scene *s = NULL, *c = NULL;
    assert_int_equal(prism_scene_load_memory(doc, n, "many", &d, &s), PRISM_SUCCESS);
    d.log_user = &cut;
    assert_int_equal(prism__scene_load_memory_chunked(doc, n, "many", &d, 300, &c), PRISM_SUCCESS);
    assert_int_equal(s->quirks.float_array_counts, 12);
    assert_int_equal(c->quirks.float_array_counts, 12);
    assert_int_equal(whole.warnings, CL_QUIRK_LOG_MAX + 1);
    assert_non_null(strstr(whole.text, "many:9:"));
    assert_null(strstr(whole.text, "many:10:"));
    assert_non_null(strstr(whole.text, "many: 4 more <float_array>s whose count disagrees"));
    assert_string_equal(whole.text, cut.text);
    /* the one placed, g11: its z is 11 */
    assert_true(s->bbox_max[2] == 11.0f);
    prism_scene_free(s);
    prism_scene_free(c);
}

/* ---- optics ---- */

static void test_has_optics(void **state)
{
    (void)state;
    load_out o;
    prism_scene *s = load_desc(DATA("g4dae_mini.dae"), (prism_load_desc){0}, &o);
    assert_true(prism_scene_has_optics(s));
    prism_scene_free(s);
    /* materials, but none with RINDEX */
    s = load_desc(DATA("cube.dae"), (prism_load_desc){0}, &o);
    assert_true(s->materials_count > 0);
    assert_false(prism_scene_has_optics(s));
    prism_scene_free(s);
    s = load_desc(DATA("unit_none.dae"), (prism_load_desc){0}, &o);
    assert_false(prism_scene_has_optics(s));
    prism_scene_free(s);
    assert_false(prism_scene_has_optics(NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unit_rules),        cmocka_unit_test(test_unit_override),
        cmocka_unit_test(test_unit_parse),        cmocka_unit_test(test_meta_where),
        cmocka_unit_test(test_nested_assets),     cmocka_unit_test(test_nested_assets_user_unit),
        cmocka_unit_test(test_float_array_count), cmocka_unit_test(test_flat_positions),
        cmocka_unit_test(test_quirk_summary),     cmocka_unit_test(test_has_optics),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
