/* COLLADA loader: what good files turn into. Expected counts, boxes and
 * coordinates below are worked out by hand from the fixtures in
 * tests/data/collada (comments say how). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "geometry/collada/internal.h"
#include "geometry/fast_float.h"
#include "test_collada_util.h"

static void assert_near(double a, double b, double tol)
{
    if (fabs(a - b) > tol) {
        print_error("%.9g is not %.9g (+-%g)\n", a, b, tol);
        fail();
    }
}

static void assert_vertex(const prism_scene *s, size_t v, double x, double y, double z)
{
    assert_near(s->positions[3 * v], x, 1e-5);
    assert_near(s->positions[3 * v + 1], y, 1e-5);
    assert_near(s->positions[3 * v + 2], z, 1e-5);
}

static void test_tag_table_sorted(void **state)
{
    (void)state;
    for (unsigned t = 0; t < CL_T_UNKNOWN; t++)
        assert_int_equal(prism__cl_tag(prism__cl_tag_name(t)), t);
    assert_int_equal(prism__cl_tag("library_animations"), CL_T_UNKNOWN);
}

static void parse(const char *text, double *out, const char **end)
{
    *end = prism__ff_parse_double(text, text + strlen(text), out);
}

static void test_fast_float(void **state)
{
    (void)state;
    const struct {
        const char *s;
        double v;
    } cases[] = {{"0", 0},
                 {"-1.5", -1.5},
                 {"+2.25", 2.25},
                 {".5", 0.5},
                 {"5.", 5},
                 {"1e3", 1000},
                 {"1.5E-3", 0.0015},
                 {"123456.789", 123456.789},
                 {"1.55e-06", 1.55e-6},
                 {"0.000000000000000000000000001", 1e-27},
                 {"12345678901234567890123", 1.2345678901234568e22}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        double v;
        const char *end;
        parse(cases[i].s, &v, &end);
        assert_non_null(end);
        assert_int_equal(*end, 0);
        assert_near(v, cases[i].v, fabs(cases[i].v) * 1e-15);
    }
    double v;
    const char *end;
    parse("nan", &v, &end);
    assert_true(isnan(v));
    parse("-INF", &v, &end);
    assert_true(isinf(v) && v < 0);
    parse("1e999", &v, &end);
    assert_true(isinf(v));
    parse("abc", &v, &end);
    assert_null(end);
    parse("1.5x", &v, &end);
    assert_int_equal(*end, 'x');
    uint32_t u;
    bool overflow;
    const char *t = "4294967296";
    assert_null(prism__ff_parse_u32(t, t + strlen(t), &u, &overflow));
    assert_true(overflow);
    t = "4294967295";
    assert_non_null(prism__ff_parse_u32(t, t + strlen(t), &u, &overflow));
    assert_int_equal(u, UINT32_MAX);
}

/* cube.dae: a 2-unit cube placed 4 times (a pair at x=-3,+3, and the pair
 * again scaled by 2 and raised by 10), centimetres, Z up. */
static void check_cube(const prism_scene *s)
{
    assert_int_equal(s->triangles_count, 48);
    assert_int_equal(s->vertices_count, 32);
    assert_int_equal(s->solids_count, 4);
    assert_int_equal(s->up_axis, PRISM_UP_Z);
    assert_near(s->unit_meter, 0.01, 1e-12);
    assert_near(s->bbox_min[0], -0.08, 1e-6);
    assert_near(s->bbox_max[0], 0.08, 1e-6);
    assert_near(s->bbox_min[2], -0.01, 1e-6);
    assert_near(s->bbox_max[2], 0.12, 1e-6);
    assert_string_equal(s->solids[0].name, "Left");
    assert_string_equal(s->solids[0].path, "Top/Pair/Left");
    assert_string_equal(s->solids[2].path, "Top/Up/Pair/Left");
    assert_int_equal(s->solids[0].copy_number, 0);
    assert_int_equal(s->solids[2].copy_number, 1);
    assert_int_equal(s->solids[3].first_triangle, 36);
    assert_int_equal(s->materials_count, 1);
    assert_string_equal(s->materials[0].name, "Steel");
    assert_int_equal(prism_scene_find_material(s, "Steel"), 0);
    assert_int_equal(prism_scene_find_material(s, "Gold"), PRISM_NONE);
    for (size_t t = 0; t < s->triangles_count; t++) {
        assert_int_equal(s->triangle_solid[t], t / 12);
        assert_int_equal(s->triangle_material_inner[t], 0);
        assert_int_equal(s->triangle_material_outer[t], PRISM_NONE);
        assert_int_equal(s->triangle_surface[t], PRISM_NONE);
    }
    assert_int_equal(s->stats.geometries, 1);
    assert_int_equal(s->stats.instances, 4);
    assert_int_equal(s->stats.unique_triangles, 12);
    assert_false(s->g4dae);
}

/* Outward normals: the cube's triangles are written counter-clockwise
 * seen from outside, so each normal points away from the cube's centre. */
static void check_outward(const prism_scene *s, uint32_t solid, const double c[3])
{
    const prism_solid *so = &s->solids[solid];
    for (uint32_t t = so->first_triangle; t < so->first_triangle + so->triangle_count; t++) {
        const float *a = s->positions + 3 * s->indices[3 * t];
        const float *b = s->positions + 3 * s->indices[3 * t + 1];
        const float *d = s->positions + 3 * s->indices[3 * t + 2];
        double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
        double v[3] = {d[0] - a[0], d[1] - a[1], d[2] - a[2]};
        double n[3] = {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2],
                       u[0] * v[1] - u[1] * v[0]};
        double m[3] = {(a[0] + b[0] + d[0]) / 3 - c[0], (a[1] + b[1] + d[1]) / 3 - c[1],
                       (a[2] + b[2] + d[2]) / 3 - c[2]};
        assert_true(n[0] * m[0] + n[1] * m[1] + n[2] * m[2] > 0);
    }
}

static void test_cube(void **state)
{
    (void)state;
    load_out o;
    prism_scene *s = load_file(DATA("cube.dae"), 0, &o);
    assert_int_equal(o.r, PRISM_SUCCESS);
    check_cube(s);
    check_outward(s, 0, (double[3]){-0.03, 0, 0});
    prism_scene_free(s);
}

static void test_bom_and_utf16(void **state)
{
    (void)state;
    load_out o;
    prism_scene *s = load_file(DATA("bom.dae"), 0, &o);
    assert_int_equal(o.r, PRISM_SUCCESS);
    check_cube(s);
    prism_scene_free(s);
    s = load_file(DATA("utf16.dae"), 0, &o);
    assert_int_equal(o.r, PRISM_SUCCESS);
    check_cube(s);
    prism_scene_free(s);
}

static double total_area(const prism_scene *s, double *min_nz)
{
    double area = 0;
    *min_nz = INFINITY;
    for (size_t t = 0; t < s->triangles_count; t++) {
        const float *a = s->positions + 3 * s->indices[3 * t];
        const float *b = s->positions + 3 * s->indices[3 * t + 1];
        const float *c = s->positions + 3 * s->indices[3 * t + 2];
        double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
        double v[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
        double n[3] = {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2],
                       u[0] * v[1] - u[1] * v[0]};
        double len = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        area += len / 2;
        if (n[2] / len < *min_nz)
            *min_nz = n[2] / len;
    }
    return area;
}

/* polygons.dae (unit "0,5" with a decimal comma), all faces facing +z:
 *   <ph> 4x4 square with a 2x2 hole: area 12, 8 triangles
 *   concave L of area 3, written from the corner that a fan would get
 *   wrong (its diagonal to the far corner leaves the L): 4 triangles
 *   polylist: convex quad of area 3 (2 triangles) + triangle of area 8
 *   tristrip and trifan over the 4x4 square: 2 triangles, area 16 each
 * Total 19 triangles, 58 square units = 14.5 m^2 at 0.5 m per unit. */
static void test_polygons(void **state)
{
    (void)state;
    load_out o;
    prism_scene *s = load_file(DATA("polygons.dae"), 0, &o);
    assert_int_equal(o.r, PRISM_SUCCESS);
    assert_near(s->unit_meter, 0.5, 1e-12);
    assert_int_equal(s->triangles_count, 19);
    assert_int_equal(s->vertices_count, 16);
    double min_nz;
    assert_near(total_area(s, &min_nz), 14.5, 1e-5);
    assert_near(min_nz, 1.0, 1e-9);
    assert_int_equal(s->skipped.lines, 1);
    assert_int_equal(s->skipped.unknown_elements, 1);
    assert_int_equal(s->skipped.degenerate_polygons, 0);
    /* No instance_visual_scene: the first visual scene is used. */
    assert_int_equal(s->solids_count, 1);
    assert_int_equal(s->triangle_material_inner[0], PRISM_NONE);
    prism_scene_free(s);
}

/* transforms.dae: the triangle (0,0,0) (1,0,0) (0,1,0) under each transform. */
static void test_transforms(void **state)
{
    (void)state;
    load_out o;
    prism_scene *s = load_file(DATA("transforms.dae"), 0, &o);
    assert_int_equal(o.r, PRISM_SUCCESS);
    assert_int_equal(s->solids_count, 5);
    assert_int_equal(s->up_axis, PRISM_UP_Y);
    /* translate 10 0 0, then rotate 90 degrees about z */
    assert_vertex(s, 1, 10, 1, 0);
    assert_vertex(s, 2, 9, 0, 0);
    /* matrix: diag(2,3,4) plus (1,2,3), row major */
    assert_vertex(s, 3, 1, 2, 3);
    assert_vertex(s, 4, 3, 2, 3);
    /* lookat from (5,0,0) at the origin, y up: x axis -> -z, origin -> eye */
    assert_vertex(s, 6, 5, 0, 0);
    assert_vertex(s, 7, 5, 0, -1);
    assert_vertex(s, 8, 5, 1, 0);
    /* skew 45 degrees, y turning towards x: x' = x + y */
    assert_vertex(s, 10, 1, 0, 0);
    assert_vertex(s, 11, 1, 1, 0);
    /* scale (1,2,3) applied after translate (1,1,1), document order */
    assert_vertex(s, 12, 1, 2, 3);
    assert_vertex(s, 13, 2, 2, 3);
    prism_scene_free(s);
}

/* lookat_degenerate.dae: the triangle (0,0,0) (1,0,0) (0,1,0) under a
 * <lookat> whose up vector gives no sideways axis (x = up x z, z the view
 * reversed), or whose eye is the interest point. The frame's columns are
 * x, y = z x x, z; each case warns once, at its <lookat>. */
static void test_lookat_degenerate(void **state)
{
    (void)state;
    load_out o;
    prism_scene *s = load_file(DATA("lookat_degenerate.dae"), 0, &o);
    assert_int_equal(o.r, PRISM_SUCCESS);
    assert_int_equal(s->solids_count, 6);
    const double a = sqrt(0.5);
    /* eye (0,5,0), up along the view: x = X, y = -Z */
    assert_vertex(s, 0, 0, 5, 0);
    assert_vertex(s, 1, 1, 5, 0);
    assert_vertex(s, 2, 0, 5, -1);
    /* eye (5,0,0), up (2,0,0) along the view (X): x = Z, y = -Y */
    assert_vertex(s, 3, 5, 0, 0);
    assert_vertex(s, 4, 5, 0, 1);
    assert_vertex(s, 5, 5, -1, 0);
    /* eye (0,0,3), up zero: x = X, y = Y */
    assert_vertex(s, 7, 1, 0, 3);
    assert_vertex(s, 8, 0, 1, 3);
    /* eye on the interest point (1,2,3): the view down -Z (z = Z), up Y */
    assert_vertex(s, 9, 1, 2, 3);
    assert_vertex(s, 10, 2, 2, 3);
    assert_vertex(s, 11, 1, 3, 3);
    /* eye (3,3,0), up (1,1,0) along the view: X less its part along the
     * view, x = (a,-a,0); y = z x x = (0,0,-1) */
    assert_vertex(s, 13, 3 + a, 3 - a, 0);
    assert_vertex(s, 14, 3, 3, -1);
    /* a sound one: eye (0,0,5), up Y */
    assert_vertex(s, 16, 1, 0, 5);
    assert_vertex(s, 17, 0, 1, 5);
    assert_int_equal(o.logged_warnings, 5);
    static const char *const want[4] = {
        "18:31: <lookat>: the up vector (0 1 0) is along the view: X is taken as the sideways axis",
        "19:31: <lookat>: the up vector (2 0 0) is along the view: Z is taken as the sideways axis",
        "20:28: <lookat>: the up vector (0 0 0) is zero: X is taken as the sideways axis",
        "21:28: <lookat>: the eye (1 2 3) is the interest point: the view is taken down -Z"};
    for (int i = 0; i < 4; i++) {
        char line[600];
        snprintf(line, sizeof line, "%s:%s", DATA("lookat_degenerate.dae"), want[i]);
        assert_string_equal(o.warning[i], line);
    }
    prism_scene_free(s);
}

static char last_warning[512];
static void keep_last_warning(void *user, prism_log_level level, const char *msg)
{
    count_log(user, level, msg);
    if (level == PRISM_LOG_WARNING)
        snprintf(last_warning, sizeof last_warning, "%s", msg);
}

/* Ten degenerate <lookat>s: the first CL_QUIRK_LOG_MAX warned one by
 * one, the rest in one line, whole and in chunks alike. The first lacks
 * both a view and, along the view taken (down -Z), a sideways axis: one
 * warning says both. */
static void test_lookat_warnings_limited(void **state)
{
    (void)state;
    static char doc[8192];
    size_t n = (size_t)snprintf(doc, sizeof doc,
                                "<COLLADA><library_visual_scenes><visual_scene id=\"s\">\n");
    for (int i = 0; i < 10; i++)
        n += (size_t)snprintf(doc + n, sizeof doc - n,
                              "<node><lookat>0 0 %d 0 0 0 0 0 1</lookat></node>\n", i);
    n += (size_t)snprintf(doc + n, sizeof doc - n,
                          "</visual_scene></library_visual_scenes></COLLADA>\n");
    for (int chunked = 0; chunked < 2; chunked++) {
        load_out o = {0};
        prism_load_desc d = {.log = keep_last_warning, .log_user = &o};
        prism_scene *s = NULL;
        prism_result r = chunked ? prism__scene_load_memory_chunked(doc, n, "many", &d, 100, &s)
                                 : prism_scene_load_memory(doc, n, "many", &d, &s);
        assert_int_equal(r, PRISM_SUCCESS);
        assert_int_equal(o.logged_warnings, CL_QUIRK_LOG_MAX + 1);
        assert_string_equal(o.warning[0],
                            "many:2:7: <lookat>: the eye (0 0 0) is the interest point: the view "
                            "is taken down -Z; the up vector (0 0 1) is along the view: X is "
                            "taken as the sideways axis");
        assert_string_equal(o.warning[1], "many:3:7: <lookat>: the up vector (0 0 1) is along "
                                          "the view: X is taken as the sideways axis");
        assert_non_null(strstr(last_warning, "many: 2 more <lookat>s with no view direction"));
        prism_scene_free(s);
    }
}

/* skew.dae: the triangle (0,0,0) (1,0,0) (0,1,0) under the spec's skew,
 * p' = p + tan(angle) (r.p) t with r and t normalised. */
static void test_skew(void **state)
{
    (void)state;
    load_out o;
    prism_scene *s = load_file(DATA("skew.dae"), 0, &o);
    assert_int_equal(o.r, PRISM_SUCCESS);
    assert_int_equal(o.logged_warnings, 0);
    const double pi = 3.14159265358979323846, t30 = tan(pi / 6), a = sqrt(0.5);
    /* 30 degrees, r = Y, t = X: x' = x + tan 30 y */
    assert_vertex(s, 1, 1, 0, 0);
    assert_vertex(s, 2, t30, 1, 0);
    /* 45 degrees, r = (1,1,0)/sqrt 2, t = X: x' = x + (x + y)/sqrt 2
     * (RenderMan's skew, which Prism read before, left this one whole) */
    assert_vertex(s, 4, 1 + a, 0, 0);
    assert_vertex(s, 5, a, 1, 0);
    /* -30 degrees, r = (3,0,0) normalised, t = Z: z' = z - tan 30 x */
    assert_vertex(s, 7, 1, 0, -t30);
    assert_vertex(s, 8, 0, 1, 0);
    /* translate (0,0,2), then 60 degrees, r = Y, t = Z: z' = z + tan 60 y + 2 */
    assert_vertex(s, 9, 0, 0, 2);
    assert_vertex(s, 10, 1, 0, 2);
    assert_vertex(s, 11, 0, 1, 2 + tan(pi / 3));
    prism_scene_free(s);
}

/* g4dae_mini.dae: a water tank (cube +-1000 mm) holding two glass PMTs
 * (cubes +-10 mm at x=+-100 mm) placed through one library node; a skin
 * surface on the PMT logical volume and a border surface between the top
 * volume and the second PMT. No <unit>: millimetres. */
static void test_g4dae(void **state)
{
    (void)state;
    load_out o;
    prism_scene *s = load_file(DATA("g4dae_mini.dae"), 0, &o);
    assert_int_equal(o.r, PRISM_SUCCESS);
    assert_true(s->g4dae);
    assert_near(s->unit_meter, 0.001, 1e-15);
    assert_near(s->bbox_max[0], 1.0, 1e-6);
    assert_int_equal(s->triangles_count, 36);
    assert_int_equal(s->solids_count, 3);
    assert_string_equal(s->solids[0].name, "lvTank0x8");
    assert_string_equal(s->solids[1].path, "top0xe/lvTank0x8/pvPmt0x9/lvPmt0x7");
    assert_int_equal(s->solids[1].parent, 0);
    assert_int_equal(s->solids[2].copy_number, 1);
    uint32_t water = prism_scene_find_material(s, "Water0x1");
    uint32_t glass = prism_scene_find_material(s, "Glass0x4");
    assert_int_equal(s->solids[0].material, water);
    assert_int_equal(s->solids[1].material, glass);
    assert_int_equal(s->triangle_material_inner[12], glass);
    assert_int_equal(s->triangle_material_outer[12], water);
    assert_int_equal(s->triangle_material_outer[0], PRISM_NONE);
    const prism_property *rindex = prism_material_property(&s->materials[water], "RINDEX");
    assert_non_null(rindex);
    assert_int_equal(rindex->count, 3);
    assert_near(rindex->wavelength_nm[0], 1239.84198e-6 / 6.2e-6, 1e-3);
    assert_near(rindex->wavelength_nm[2], 1239.84198e-6 / 1.5e-6, 1e-3);
    assert_near(rindex->value[0], 1.36, 1e-6);
    const prism_property *abs = prism_material_property(&s->materials[water], "ABSLENGTH");
    assert_near(abs->value[0], 0.5, 1e-6); /* 500 mm at the short wavelength */
    assert_near(abs->value[1], 1.0, 1e-6);
    assert_int_equal(s->materials[glass].properties_count, 0);
    assert_int_equal(s->surfaces_count, 2);
    assert_int_equal(s->surfaces[0].kind, PRISM_SURFACE_SKIN);
    assert_int_equal(s->surfaces[1].kind, PRISM_SURFACE_BORDER);
    assert_int_equal(s->surfaces[0].model, 1);
    assert_int_equal(s->surfaces[0].finish, 3);
    assert_int_equal(s->surfaces[1].properties_count, 1);
    assert_string_equal(s->surfaces[1].properties[0].name, "EFFICIENCY");
    assert_int_equal(s->triangle_surface[0], PRISM_NONE); /* tank */
    assert_int_equal(s->triangle_surface[12], 0);         /* first PMT: skin */
    assert_int_equal(s->triangle_surface[24], 1);         /* second PMT: border */
    prism_scene_free(s);
}

/* Numbers split across expat callbacks and chunks: a float_array of 300k
 * numbers over many lines (2+ MB), loaded from memory. */
static void test_big_array_streams(void **state)
{
    (void)state;
    const size_t n = 100000; /* vertices */
    size_t cap = n * 40 + 4096, len = 0;
    char *doc = malloc(cap);
    assert_non_null(doc);
    len += (size_t)sprintf(doc + len,
                           "<COLLADA><library_geometries><geometry id=\"g\"><mesh>"
                           "<source id=\"p\"><float_array count=\"%zu\">",
                           3 * n);
    for (size_t i = 0; i < n; i++)
        len += (size_t)sprintf(doc + len, "%zu.25 -%zu.5e-1\n%zu ", i, i, i % 7);
    len += (size_t)sprintf(doc + len,
                           "</float_array></source><vertices id=\"v\"><input semantic=\"POSITION\" "
                           "source=\"#p\"/></vertices><triangles count=\"1\"><input "
                           "semantic=\"VERTEX\" source=\"#v\" offset=\"0\"/><p>0 %zu 5</p>"
                           "</triangles></mesh></geometry></library_geometries>"
                           "<library_visual_scenes><visual_scene id=\"s\"><node><instance_geometry "
                           "url=\"#g\"/></node></visual_scene></library_visual_scenes></COLLADA>",
                           n - 1);
    prism_scene *s = NULL;
    assert_int_equal(prism_scene_load_memory(doc, len, "big", NULL, &s), PRISM_SUCCESS);
    assert_int_equal(s->vertices_count, n);
    assert_int_equal(s->triangles_count, 1);
    for (size_t i = 0; i < n; i += 997) {
        assert_near(s->positions[3 * i], (double)i + 0.25, 1e-9 * (double)i + 1e-6);
        assert_near(s->positions[3 * i + 1], -((double)i + 0.5) * 0.1, 1e-6 * (double)i + 1e-6);
        assert_near(s->positions[3 * i + 2], (double)(i % 7), 0);
    }
    assert_int_equal(s->stats.bytes, len);
    prism_scene_free(s);
    free(doc);
}

static bool cancel_at_once(void *user, size_t done, size_t total)
{
    (void)done;
    (void)total;
    ++*(int *)user;
    return false;
}

static void test_progress_cancel_and_args(void **state)
{
    (void)state;
    int calls = 0;
    char err[256];
    prism_load_desc d = {.progress = cancel_at_once,
                         .progress_user = &calls,
                         .error = err,
                         .error_size = sizeof err};
    prism_scene *s = (prism_scene *)1;
    assert_int_equal(prism_scene_load(DATA("cube.dae"), &d, &s), PRISM_ERROR_IO);
    assert_null(s);
    assert_int_equal(calls, 1);
    assert_non_null(strstr(err, "cancelled"));
    assert_int_equal(prism_scene_load(NULL, NULL, &s), PRISM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(prism_scene_load(DATA("cube.dae"), NULL, NULL), PRISM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(prism_scene_load_memory(NULL, 5, "x", NULL, &s), PRISM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(prism_scene_load(DATA("no_such_file.dae"), &d, &s), PRISM_ERROR_IO);
    assert_non_null(strstr(err, "no_such_file.dae"));
    d = (prism_load_desc){.unit_meter = 2.0};
    assert_int_equal(prism_scene_load(DATA("cube.dae"), &d, &s), PRISM_SUCCESS);
    assert_near(s->bbox_max[0], 16.0, 1e-5); /* 8 file units at 2 m each */
    prism_scene_free(s);
    prism_scene_free(NULL);
    assert_int_equal(prism_scene_find_material(NULL, "x"), PRISM_NONE);
    assert_null(prism_material_property(NULL, "x"));
}

static int warnings;
static void count_warnings(void *user, prism_log_level level, const char *msg)
{
    (void)user;
    (void)msg;
    warnings += level == PRISM_LOG_WARNING;
}

/* Decimal commas in float_array (some exporters), a material target that
 * does not exist (warned, no material), and a strip's odd triangles turned
 * so the whole strip keeps one winding. */
static void test_lenient_input(void **state)
{
    (void)state;
    static const char doc[] =
        "<COLLADA><library_materials><material id=\"m\"/></library_materials>"
        "<library_geometries><geometry id=\"g\"><mesh><source id=\"p\"><float_array count=\"12\">"
        "0,0 0 0  1,5 0 0  0 1,5 0  1,5 1,5 0</float_array></source><vertices id=\"v\"><input "
        "semantic=\"POSITION\" source=\"#p\"/></vertices><tristrips count=\"1\" material=\"s\">"
        "<input semantic=\"VERTEX\" source=\"#v\" offset=\"0\"/><p>0 1 2 3</p></tristrips>"
        "</mesh></geometry></library_geometries><library_visual_scenes><visual_scene id=\"s\">"
        "<node><instance_geometry url=\"#g\"><bind_material><technique_common><instance_material "
        "symbol=\"s\" target=\"#missing\"/></technique_common></bind_material>"
        "</instance_geometry></node><node><instance_geometry url=\"#g\"><bind_material>"
        "<technique_common><instance_material symbol=\"s\" target=\"#m\"/></technique_common>"
        "</bind_material></instance_geometry></node></visual_scene></library_visual_scenes>"
        "</COLLADA>";
    prism_load_desc d = {.log = count_warnings};
    prism_scene *s = NULL;
    warnings = 0;
    assert_int_equal(prism_scene_load_memory(doc, sizeof doc - 1, "lenient", &d, &s),
                     PRISM_SUCCESS);
    assert_int_equal(warnings, 1);
    assert_int_equal(s->triangles_count, 4);
    assert_near(s->bbox_max[0], 1.5, 0);
    assert_near(s->bbox_max[1], 1.5, 0);
    assert_int_equal(s->triangle_material_inner[0], PRISM_NONE);
    assert_int_equal(s->triangle_material_inner[2], 0);
    double min_nz;
    assert_near(total_area(s, &min_nz), 2 * 2.25, 1e-6);
    assert_near(min_nz, 1.0, 1e-9); /* both strip triangles face +z */
    prism_scene_free(s);
}

/* A mirrored placement (scale -1 in x) keeps the cube's normals outward:
 * the loader swaps two corners of every triangle it places that way. */
static void test_mirror_keeps_winding(void **state)
{
    (void)state;
    FILE *f = fopen(DATA("cube.dae"), "rb");
    assert_non_null(f);
    char text[4096], doc[4100];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    char *at = strstr(text, "<scale>2 2 2</scale>");
    assert_non_null(at);
    *at = 0;
    n = (size_t)snprintf(doc, sizeof doc, "%s<scale>-2 2 2</scale>%s", text, at + 20);
    prism_scene *s = NULL;
    assert_int_equal(prism_scene_load_memory(doc, n, "mirror", NULL, &s), PRISM_SUCCESS);
    check_outward(s, 0, (double[3]){-0.03, 0, 0});
    /* Up/Pair/Left sits at x = -2 * -3 = +6 cm, 10 cm up */
    check_outward(s, 2, (double[3]){0.06, 0, 0.10});
    check_outward(s, 3, (double[3]){-0.06, 0, 0.10});
    prism_scene_free(s);
}

/* A border surface between two sibling PMTs covers nothing (their shared
 * boundary is not a set of whole triangles): kept, warned about once. */
static void test_sibling_border_warns(void **state)
{
    (void)state;
    FILE *f = fopen(DATA("g4dae_mini.dae"), "rb");
    assert_non_null(f);
    static char text[16384], doc[17000];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    char *at = strstr(text, "    </extra>\n  </library_nodes>");
    assert_non_null(at);
    *at = 0;
    n = (size_t)snprintf(doc, sizeof doc,
                         "%s<bordersurface name=\"Siblings\" surfaceproperty=\"CathodeSurface0xb\">"
                         "<physvolref ref=\"pvPmt0x9\"/><physvolref ref=\"pvPmt0xa\"/>"
                         "</bordersurface>\n%s",
                         text, at + 1);
    prism_load_desc d = {.log = count_warnings};
    prism_scene *s = NULL;
    warnings = 0;
    assert_int_equal(prism_scene_load_memory(doc, n, "siblings", &d, &s), PRISM_SUCCESS);
    assert_int_equal(warnings, 1);
    assert_int_equal(s->surfaces_count, 3);
    for (size_t t = 0; t < s->triangles_count; t++)
        assert_true(s->triangle_surface[t] != 2);
    assert_int_equal(s->triangle_surface[24], 1);
    prism_scene_free(s);
}

/* An element inside number text ends the number before it: "2<x/>3" is two. */
static void test_element_splits_numbers(void **state)
{
    (void)state;
    static const char doc[] =
        "<COLLADA><library_geometries><geometry id=\"g\"><mesh><source id=\"p\">"
        "<float_array count=\"9\">0 0 0 1 0 0 0 1<x/>0</float_array></source><vertices id=\"v\">"
        "<input semantic=\"POSITION\" source=\"#p\"/></vertices><triangles count=\"1\"><input "
        "semantic=\"VERTEX\" source=\"#v\" offset=\"0\"/><p>0 1<y/>2</p></triangles></mesh>"
        "</geometry></library_geometries><library_visual_scenes><visual_scene id=\"s\"><node>"
        "<instance_geometry url=\"#g\"/></node></visual_scene></library_visual_scenes></COLLADA>";
    prism_scene *s = NULL;
    assert_int_equal(prism_scene_load_memory(doc, sizeof doc - 1, "split", NULL, &s),
                     PRISM_SUCCESS);
    assert_int_equal(s->triangles_count, 1);
    assert_vertex(s, 2, 0, 1, 0);
    prism_scene_free(s);
}

/* desc.trace: one DEBUG line a stage to desc->log ("prism load: STAGE
 * ... ms (CPU ...)"), the last the release; none without the flag. */
typedef struct trace_lines {
    int stages, released;
} trace_lines;

static void count_stages(void *user, prism_log_level level, const char *msg)
{
    trace_lines *t = user;
    if (level != PRISM_LOG_DEBUG || strncmp(msg, "prism load: ", 12) != 0 ||
        strstr(msg, " ms  (CPU ") == NULL)
        return;
    t->stages++;
    t->released += strncmp(msg + 12, "release ", 8) == 0;
}

static void test_load_trace(void **state)
{
    (void)state;
    static const char doc[] =
        "<COLLADA><library_geometries><geometry id=\"g\"><mesh><source id=\"p\">"
        "<float_array count=\"9\">0 0 0 1 0 0 0 1 0</float_array></source><vertices id=\"v\">"
        "<input semantic=\"POSITION\" source=\"#p\"/></vertices><triangles count=\"1\"><input "
        "semantic=\"VERTEX\" source=\"#v\" offset=\"0\"/><p>0 1 2</p></triangles></mesh>"
        "</geometry></library_geometries><library_visual_scenes><visual_scene id=\"s\"><node>"
        "<instance_geometry url=\"#g\"/></node></visual_scene></library_visual_scenes></COLLADA>";
    for (int traced = 0; traced < 2; traced++) {
        trace_lines t = {0};
        prism_load_desc d = {.log = count_stages, .log_user = &t, .trace = traced};
        prism_scene *s = NULL;
        assert_int_equal(prism_scene_load_memory(doc, sizeof doc - 1, "traced", &d, &s),
                         PRISM_SUCCESS);
        assert_int_equal(s->triangles_count, 1);
        prism_scene_free(s);
        assert_int_equal(t.stages > 5, traced);
        assert_int_equal(t.released, traced);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tag_table_sorted),
        cmocka_unit_test(test_fast_float),
        cmocka_unit_test(test_cube),
        cmocka_unit_test(test_bom_and_utf16),
        cmocka_unit_test(test_polygons),
        cmocka_unit_test(test_transforms),
        cmocka_unit_test(test_lookat_degenerate),
        cmocka_unit_test(test_lookat_warnings_limited),
        cmocka_unit_test(test_skew),
        cmocka_unit_test(test_g4dae),
        cmocka_unit_test(test_big_array_streams),
        cmocka_unit_test(test_progress_cancel_and_args),
        cmocka_unit_test(test_lenient_input),
        cmocka_unit_test(test_mirror_keeps_winding),
        cmocka_unit_test(test_sibling_border_warns),
        cmocka_unit_test(test_element_splits_numbers),
        cmocka_unit_test(test_load_trace),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
