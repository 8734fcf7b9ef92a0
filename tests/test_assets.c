/* The assets in assets/ and the generated 192-PMT detector, loaded through
 * prism_scene_load and checked against figures derived by hand from how
 * each file was written (see the comments at each figure and the comments
 * in the files themselves): counts, boxes, units, axes, materials and
 * surfaces with their tables, which solid and material every triangle
 * belongs to, and that every solid is closed and wound outwards (its signed
 * volume equals its volume). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "prism/scene.h"

#define HC_EV_NM 1239.84198 /* h c in eV nm */
#define INCH 0.0254
#define SQRT2 1.41421356237309505
#define PI 3.14159265358979323846

/* ---- helpers ---- */

static char load_error[1024];

static prism_scene *load_with(const char *path, const prism_load_desc *given)
{
    prism_load_desc desc = given ? *given : (prism_load_desc){0};
    desc.error = load_error;
    desc.error_size = sizeof load_error;
    load_error[0] = 0;
    prism_scene *scene = NULL;
    prism_result r = prism_scene_load(path, &desc, &scene);
    if (r != PRISM_SUCCESS)
        print_error("loading %s: %s: %s\n", path, prism_result_string(r), load_error);
    assert_int_equal(r, PRISM_SUCCESS);
    assert_non_null(scene);
    return scene;
}

static prism_scene *load_asset(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", PRISM_ASSETS, name);
    return load_with(path, NULL);
}

static void assert_near(double got, double want, double tol, const char *what)
{
    if (!(fabs(got - want) <= tol)) {
        print_error("%s: got %.9g, want %.9g (+-%g)\n", what, got, want, tol);
        fail();
    }
}

static void assert_bbox(const prism_scene *s, double x0, double y0, double z0, double x1, double y1,
                        double z1, double tol)
{
    assert_near(s->bbox_min[0], x0, tol, "bbox min x");
    assert_near(s->bbox_min[1], y0, tol, "bbox min y");
    assert_near(s->bbox_min[2], z0, tol, "bbox min z");
    assert_near(s->bbox_max[0], x1, tol, "bbox max x");
    assert_near(s->bbox_max[1], y1, tol, "bbox max y");
    assert_near(s->bbox_max[2], z1, tol, "bbox max z");
}

static const float *vtx(const prism_scene *s, size_t t, int k)
{
    return s->positions + 3 * (size_t)s->indices[3 * t + k];
}

/* (v1-v0)x(v2-v0): twice the area, pointing out of the solid. */
static void tri_normal(const prism_scene *s, size_t t, double n[3])
{
    const float *a = vtx(s, t, 0), *b = vtx(s, t, 1), *c = vtx(s, t, 2);
    double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
    double w[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
    n[0] = u[1] * w[2] - u[2] * w[1];
    n[1] = u[2] * w[0] - u[0] * w[2];
    n[2] = u[0] * w[1] - u[1] * w[0];
}

static void tri_centroid(const prism_scene *s, size_t t, double c[3])
{
    for (int k = 0; k < 3; k++)
        c[k] = (vtx(s, t, 0)[k] + vtx(s, t, 1)[k] + vtx(s, t, 2)[k]) / 3.0;
}

/* The per-solid helpers walk the solid's triangle range, which
 * assert_consistent checks first. */

/* Signed volume of a closed mesh by the divergence theorem, relative to
 * `o` (near the solid, to keep the float error small). Positive and equal
 * to the volume only when the mesh is closed and wound outwards. */
static double solid_volume(const prism_scene *s, uint32_t solid, const double o[3])
{
    double v = 0.0;
    const prism_solid *so = &s->solids[solid];
    for (size_t t = so->first_triangle; t < (size_t)so->first_triangle + so->triangle_count; t++) {
        double p[3][3];
        for (int k = 0; k < 3; k++)
            for (int j = 0; j < 3; j++)
                p[k][j] = vtx(s, t, k)[j] - o[j];
        v += (p[0][0] * (p[1][1] * p[2][2] - p[1][2] * p[2][1]) -
              p[0][1] * (p[1][0] * p[2][2] - p[1][2] * p[2][0]) +
              p[0][2] * (p[1][0] * p[2][1] - p[1][1] * p[2][0])) /
             6.0;
    }
    return v;
}

/* Box of the vertices of one solid's triangles. */
static void solid_box(const prism_scene *s, uint32_t solid, double lo[3], double hi[3])
{
    for (int j = 0; j < 3; j++) {
        lo[j] = INFINITY;
        hi[j] = -INFINITY;
    }
    const prism_solid *so = &s->solids[solid];
    for (size_t t = so->first_triangle; t < (size_t)so->first_triangle + so->triangle_count; t++)
        for (int k = 0; k < 3; k++)
            for (int j = 0; j < 3; j++) {
                lo[j] = fmin(lo[j], vtx(s, t, k)[j]);
                hi[j] = fmax(hi[j], vtx(s, t, k)[j]);
            }
}

static void solid_center(const prism_scene *s, uint32_t solid, double c[3])
{
    double lo[3], hi[3];
    solid_box(s, solid, lo, hi);
    for (int j = 0; j < 3; j++)
        c[j] = 0.5 * (lo[j] + hi[j]);
}

/* What every scene must satisfy whatever the file: indices in range,
 * per-triangle ids in range and agreeing with the solids' ranges, the box
 * enclosing every vertex, and no zero-area triangle. */
static void assert_consistent(const prism_scene *s)
{
    size_t covered = 0;
    for (size_t i = 0; i < 3 * s->triangles_count; i++)
        assert_true(s->indices[i] < s->vertices_count);
    for (uint32_t i = 0; i < s->solids_count; i++) {
        const prism_solid *so = &s->solids[i];
        assert_true((size_t)so->first_triangle + so->triangle_count <= s->triangles_count);
        for (uint32_t t = so->first_triangle; t < so->first_triangle + so->triangle_count; t++)
            assert_int_equal(s->triangle_solid[t], i);
        covered += so->triangle_count;
        assert_true(so->parent == PRISM_NONE || so->parent < s->solids_count);
        assert_true(so->material == PRISM_NONE || so->material < s->materials_count);
        assert_non_null(so->name);
        assert_non_null(so->path);
    }
    assert_int_equal(covered, s->triangles_count);
    for (size_t t = 0; t < s->triangles_count; t++) {
        const prism_solid *so = &s->solids[s->triangle_solid[t]];
        assert_int_equal(s->triangle_material_inner[t], so->material);
        uint32_t outer = so->parent == PRISM_NONE ? PRISM_NONE : s->solids[so->parent].material;
        assert_int_equal(s->triangle_material_outer[t], outer);
        assert_true(s->triangle_surface[t] == PRISM_NONE ||
                    s->triangle_surface[t] < s->surfaces_count);
        double n[3];
        tri_normal(s, t, n);
        assert_true(n[0] * n[0] + n[1] * n[1] + n[2] * n[2] > 0.0);
    }
    for (size_t v = 0; v < s->vertices_count; v++)
        for (int j = 0; j < 3; j++) {
            assert_true(s->positions[3 * v + j] >= s->bbox_min[j]);
            assert_true(s->positions[3 * v + j] <= s->bbox_max[j]);
        }
}

static size_t count_material(const prism_scene *s, const uint32_t *per_triangle, uint32_t m)
{
    size_t n = 0;
    for (size_t t = 0; t < s->triangles_count; t++)
        n += per_triangle[t] == m;
    return n;
}

static uint32_t material(const prism_scene *s, const char *name)
{
    uint32_t m = prism_scene_find_material(s, name);
    if (m == PRISM_NONE)
        print_error("no material '%s'\n", name);
    assert_int_not_equal(m, PRISM_NONE);
    assert_string_equal(s->materials[m].name, name);
    return m;
}

static uint32_t surface(const prism_scene *s, const char *name)
{
    for (uint32_t i = 0; i < s->surfaces_count; i++)
        if (!strcmp(s->surfaces[i].name, name))
            return i;
    print_error("no surface '%s'\n", name);
    fail();
    return PRISM_NONE;
}

static const prism_property *surface_property(const prism_surface *sf, const char *name)
{
    for (size_t i = 0; i < sf->properties_count; i++)
        if (!strcmp(sf->properties[i].name, name))
            return &sf->properties[i];
    return NULL;
}

/* The one solid whose material is m and whose box centre is c (within tol). */
static uint32_t solid_at(const prism_scene *s, uint32_t m, const double c[3], double tol)
{
    uint32_t found = PRISM_NONE;
    for (uint32_t i = 0; i < s->solids_count; i++) {
        if (s->solids[i].material != m)
            continue;
        double cc[3];
        solid_center(s, i, cc);
        if (fabs(cc[0] - c[0]) <= tol && fabs(cc[1] - c[1]) <= tol && fabs(cc[2] - c[2]) <= tol) {
            assert_int_equal(found, PRISM_NONE);
            found = i;
        }
    }
    if (found == PRISM_NONE)
        print_error("no solid of material %u at (%g %g %g)\n", m, c[0], c[1], c[2]);
    assert_int_not_equal(found, PRISM_NONE);
    return found;
}

/* Property table check: count, wavelengths increasing, and the values at
 * the shortest and longest wavelength. */
static void assert_table(const prism_property *p, size_t count, double nm_first, double v_first,
                         double nm_last, double v_last, double rel)
{
    assert_non_null(p);
    assert_int_equal(p->count, count);
    for (size_t i = 1; i < p->count; i++)
        assert_true(p->wavelength_nm[i] > p->wavelength_nm[i - 1]);
    assert_near(p->wavelength_nm[0], nm_first, 1e-4 * nm_first, p->name);
    assert_near(p->wavelength_nm[count - 1], nm_last, 1e-4 * nm_last, p->name);
    assert_near(p->value[0], v_first, rel * fabs(v_first) + 1e-12, p->name);
    assert_near(p->value[count - 1], v_last, rel * fabs(v_last) + 1e-12, p->name);
}

static size_t file_size(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fclose(f);
    return (size_t)n;
}

/* ---- cube.dae: a 2 cm cube on the floor ---- */

static void test_cube(void **state)
{
    prism_scene *s = load_asset("cube.dae");
    *state = s; /* freed by free_scene, even when an assertion fails */
    assert_consistent(s);
    assert_near(s->unit_meter, 0.01, 1e-12, "unit");
    assert_int_equal(s->up_axis, PRISM_UP_Y);
    assert_false(s->g4dae);
    /* 6 faces x 2 triangles; 8 corners (normals are per face, positions
     * are shared: the scene keeps one vertex per position index). */
    assert_int_equal(s->triangles_count, 12);
    assert_int_equal(s->vertices_count, 8);
    /* Corners +-1 cm, moved up 1 cm by <translate>0 1 0</translate>. */
    assert_bbox(s, -0.01, 0.0, -0.01, 0.01, 0.02, 0.01, 1e-7);
    assert_int_equal(s->solids_count, 1);
    assert_int_equal(s->solids[0].parent, PRISM_NONE);
    assert_int_equal(s->solids[0].triangle_count, 12);
    /* One material, bound from the symbol "RedSymbol"; no G4DAE tables. */
    assert_int_equal(s->materials_count, 1);
    uint32_t red = material(s, "Red");
    assert_int_equal(s->materials[red].properties_count, 0);
    assert_int_equal(s->solids[0].material, red);
    assert_int_equal(s->surfaces_count, 0);
    const double centre[3] = {0.0, 0.01, 0.0};
    /* (2 cm)^3 = 8e-6 m^3, positive: closed and wound outwards. */
    assert_near(solid_volume(s, 0, centre), 8e-6, 1e-11, "cube volume");
    for (size_t t = 0; t < s->triangles_count; t++) {
        double n[3], c[3];
        tri_normal(s, t, n);
        tri_centroid(s, t, c);
        /* Half of a 2 cm x 2 cm face: |n| = 2 * area = 4e-4 m^2. */
        assert_near(sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]), 4e-4, 1e-9, "face area");
        assert_true(
            n[0] * (c[0] - centre[0]) + n[1] * (c[1] - centre[1]) + n[2] * (c[2] - centre[2]) > 0);
        assert_int_equal(s->triangle_material_inner[t], red);
        assert_int_equal(s->triangle_material_outer[t], PRISM_NONE);
        assert_int_equal(s->triangle_surface[t], PRISM_NONE);
    }
    assert_int_equal(s->stats.geometries, 1);
    assert_int_equal(s->stats.nodes, 1);
    assert_int_equal(s->stats.instances, 1);
    assert_int_equal(s->stats.unique_triangles, 12);
    assert_int_equal(s->stats.unique_vertices, 8);
    assert_int_equal(s->stats.bytes, file_size(PRISM_ASSETS "/cube.dae"));
    assert_int_equal(s->skipped.lines, 0);
    assert_int_equal(s->skipped.degenerate_polygons, 0);
    assert_int_equal(s->skipped.nonfinite_vertices, 0);
}

/* ---- box_with_hole.dae: a frame with a square hole, and an L ---- */

/* Triangles of solid `so` whose three vertices lie at height z: their
 * count, total area, and whether all face up (+1) or down (-1). */
static size_t cap_triangles(const prism_scene *s, uint32_t so, double z, int up, double *area)
{
    size_t n = 0;
    *area = 0.0;
    for (size_t t = 0; t < s->triangles_count; t++) {
        if (s->triangle_solid[t] != so)
            continue;
        if (fabs(vtx(s, t, 0)[2] - z) > 1e-7 || fabs(vtx(s, t, 1)[2] - z) > 1e-7 ||
            fabs(vtx(s, t, 2)[2] - z) > 1e-7)
            continue;
        double nn[3];
        tri_normal(s, t, nn);
        assert_true(nn[2] * up > 0); /* no folded-over triangle */
        *area += 0.5 * fabs(nn[2]);
        n++;
    }
    return n;
}

/* Caps: 8 triangles each, all facing out, covering 12 in^2 and never
 * the hole (a triangulation that ignored <h> would cover it). */
static void check_frame_caps(const prism_scene *s, uint32_t frame)
{
    double area;
    assert_int_equal(cap_triangles(s, frame, INCH, 1, &area), 8);
    assert_near(area, 12 * INCH * INCH, 1e-4 * INCH * INCH, "frame top area");
    assert_int_equal(cap_triangles(s, frame, 0.0, -1, &area), 8);
    assert_near(area, 12 * INCH * INCH, 1e-4 * INCH * INCH, "frame bottom area");
    for (size_t t = 0; t < s->triangles_count; t++) {
        double c[3];
        tri_centroid(s, t, c);
        if (s->triangle_solid[t] == frame)
            assert_false(fabs(c[0]) < INCH - 1e-7 && fabs(c[1]) < INCH - 1e-7);
    }
}

/* The L's caps are concave hexagons listed from (2,0), where a fan
 * folds over: 4 triangles each, all facing out, area 3 in^2. */
static void check_ell_caps(const prism_scene *s, uint32_t ell)
{
    double area;
    assert_int_equal(cap_triangles(s, ell, INCH, 1, &area), 4);
    assert_near(area, 3 * INCH * INCH, 1e-4 * INCH * INCH, "L top area");
    assert_int_equal(cap_triangles(s, ell, 0.0, -1, &area), 4);
    assert_near(area, 3 * INCH * INCH, 1e-4 * INCH * INCH, "L bottom area");
    for (size_t t = 0; t < s->triangles_count; t++) {
        if (s->triangle_solid[t] != ell)
            continue;
        double c[3];
        tri_centroid(s, t, c);
        /* Back to the L's own axes: x = Y + 1, y = 5 - X (inches); the
         * notch of the L is x > 1 and y > 1. */
        double lx = c[1] / INCH + 1.0, ly = 5.0 - c[0] / INCH;
        assert_false(lx > 1.0 + 1e-5 && ly > 1.0 + 1e-5);
    }
}

static void test_box_with_hole(void **state)
{
    prism_scene *s = load_asset("box_with_hole.dae");
    *state = s; /* freed by free_scene, even when an assertion fails */
    assert_consistent(s);
    /* meter="0,0254": an inch, written with a decimal comma. */
    assert_near(s->unit_meter, INCH, 1e-12, "unit");
    assert_int_equal(s->up_axis, PRISM_UP_Z);
    /* Frame: each cap is a square with a square hole, 8 vertices and one
     * hole: n + 2h - 2 = 8 triangles; 8 walls (4 outside, 4 in the hole)
     * of 2 triangles: 16 + 16 = 32. L: each cap a hexagon, 6 - 2 = 4
     * triangles, 6 walls: 8 + 12 = 20. Vertices 16 + 12. */
    assert_int_equal(s->triangles_count, 52);
    assert_int_equal(s->vertices_count, 28);
    /* Frame x, y in +-2, z 0..1 inch; the L (x, y in 0..2) turned 90
     * degrees about z goes to x -2..0, y 0..2, then +(5,-1,0): x 3..5,
     * y -1..1. */
    assert_bbox(s, -2 * INCH, -2 * INCH, 0, 5 * INCH, 2 * INCH, INCH, 1e-7);
    assert_int_equal(s->materials_count, 2);
    assert_int_equal(s->solids_count, 2);
    uint32_t al = material(s, "Aluminium"), pl = material(s, "Plastic");
    uint32_t frame = s->solids[0].material == al ? 0 : 1, ell = 1 - frame;
    assert_int_equal(s->solids[frame].material, al);
    assert_int_equal(s->solids[ell].material, pl);
    assert_int_equal(s->solids[frame].triangle_count, 32);
    assert_int_equal(s->solids[ell].triangle_count, 20);
    assert_int_equal(count_material(s, s->triangle_material_inner, al), 32);
    /* Volumes: (4x4 - 2x2) x 1 = 12 in^3; the L, 3 unit squares x 1. */
    const double o_frame[3] = {0, 0, 0.5 * INCH}, o_ell[3] = {4 * INCH, 0, 0.5 * INCH};
    const double in3 = INCH * INCH * INCH;
    assert_near(solid_volume(s, frame, o_frame), 12 * in3, 1e-4 * in3, "frame volume");
    assert_near(solid_volume(s, ell, o_ell), 3 * in3, 1e-4 * in3, "L volume");
    check_frame_caps(s, frame);
    check_ell_caps(s, ell);
}

/* ---- sphere.dae: four primitive kinds, COLLADA's defaults ---- */

static void test_sphere(void **state)
{
    prism_scene *s = load_asset("sphere.dae");
    *state = s; /* freed by free_scene, even when an assertion fails */
    assert_consistent(s);
    /* No <unit>, no <up_axis>: metres and Y_UP; no G4DAE extras. */
    assert_near(s->unit_meter, 1.0, 0, "unit");
    assert_int_equal(s->up_axis, PRISM_UP_Y);
    assert_false(s->g4dae);
    /* 12 segments x 6 rings: 2 poles + 5 rings of 12 = 62 vertices.
     * Trifan of 14 indices: 12; two tristrips of 26: 24 each; 24 quads:
     * 48; 12 triangles: 12 + 48 + 48 + 12 = 120. */
    assert_int_equal(s->triangles_count, 120);
    assert_int_equal(s->vertices_count, 62);
    /* Poles at y = +-1; the equator ring (t = 90 degrees) has vertices at
     * azimuth 0, 90, 180, 270: x and z reach +-1 exactly. */
    assert_bbox(s, -1, -1, -1, 1, 1, 1, 1e-6);
    assert_int_equal(s->solids_count, 1);
    assert_int_equal(s->solids[0].material, material(s, "Glass"));
    /* Volume: 6 frusta between regular 12-gons (area 3 r^2) at heights
     * cos(30 i deg), by the prismatoid rule h/6 (A1 + A2 + 4 Amid):
     * 2 x (0.0334936 + 0.5245190 + 1.3080127) = 2 + sqrt(3). */
    const double o[3] = {0, 0, 0};
    assert_near(solid_volume(s, 0, o), 2.0 + sqrt(3.0), 1e-5, "sphere volume");
    for (size_t t = 0; t < s->triangles_count; t++) {
        double n[3], c[3];
        tri_normal(s, t, n);
        tri_centroid(s, t, c);
        /* Strips alternate their winding; fans and strips must come out
         * facing out like the rest. */
        assert_true(n[0] * c[0] + n[1] * c[1] + n[2] * c[2] > 0);
        for (int k = 0; k < 3; k++) {
            const float *v = vtx(s, t, k);
            assert_near(sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]), 1.0, 1e-6, "radius");
        }
    }
    assert_int_equal(s->stats.unique_triangles, 120);
}

/* ---- tiny_detector.dae: G4DAE style, millimetres ---- */

#define TD_AIR "__dd__Materials__Air0xc0d4c80"
#define TD_STEEL "__dd__Materials__StainlessSteel0xc2adc00"
#define TD_LS "__dd__Materials__LiquidScintillator0xc2308d0"
#define TD_PYREX "__dd__Materials__Pyrex0xc1f2d40"
#define TD_VACUUM "__dd__Materials__Vacuum0xc0bf8b8"
#define TD_CATHODE "__dd__Geometry__PMT__PmtHemiCathodeSurface"
#define TD_WALL "__dd__Geometry__Tank__SteelWallSurface"

typedef struct log_record {
    int messages;
    int millimetres; /* messages that say the unit was taken as mm */
} log_record;

static void record_log(void *user, prism_log_level level, const char *message)
{
    log_record *r = user;
    (void)level;
    r->messages++;
    if (strstr(message, "millimet") || strstr(message, "mm"))
        r->millimetres++;
}

/* Material tables: energies written in MeV go to nm as 1239.84198e-6 / E
 * (6.19921e-06 MeV -> 200.000 nm, 3.0996e-06 -> 400.001, 1.5498e-06 ->
 * 800.001), sorted by increasing wavelength; ABSLENGTH and RAYLEIGH go
 * from mm to m. */
static void check_tiny_materials(const prism_scene *s)
{
    assert_int_equal(s->materials_count, 5);
    const prism_material *ls = &s->materials[material(s, TD_LS)];
    assert_int_equal(ls->properties_count, 3);
    assert_table(prism_material_property(ls, "RINDEX"), 6, 200.0, 1.60, 800.0, 1.48, 1e-6);
    assert_table(prism_material_property(ls, "ABSLENGTH"), 4, 200.0, 1e-6, 800.0, 20.0, 1e-6);
    assert_table(prism_material_property(ls, "RAYLEIGH"), 3, 200.0, 2.0, 800.0, 500.0, 1e-6);
    /* RINDEX of LS at 3.0996e-06 MeV (the 3rd shortest wavelength, 400 nm)
     * is 1.51. */
    assert_near(prism_material_property(ls, "RINDEX")->value[2], 1.51, 1e-6, "LS RINDEX 400");
    const prism_material *pyrex = &s->materials[material(s, TD_PYREX)];
    assert_table(prism_material_property(pyrex, "RINDEX"), 2, 200.0, 1.458, 800.0, 1.458, 1e-6);
    assert_table(prism_material_property(pyrex, "ABSLENGTH"), 2, 200.0, 1.0, 800.0, 1.0, 1e-6);
    assert_null(prism_material_property(pyrex, "RAYLEIGH"));
    const prism_material *steel = &s->materials[material(s, TD_STEEL)];
    assert_null(prism_material_property(steel, "RINDEX"));
    assert_table(prism_material_property(steel, "ABSLENGTH"), 2, 200.0, 1e-6, 800.0, 1e-6, 1e-6);
    const prism_material *air = &s->materials[material(s, TD_AIR)];
    assert_table(prism_material_property(air, "RINDEX"), 2, 200.0, 1.000293, 800.0, 1.000293, 1e-7);
    const prism_material *vac = &s->materials[material(s, TD_VACUUM)];
    assert_table(prism_material_property(vac, "RINDEX"), 2, 200.0, 1.0, 800.0, 1.0, 1e-7);
}

/* Surfaces: one skin (the PMT glass, volumeref to lvPmtHemi) and one
 * border (liquid -> steel), each with its opticalsurface's attributes. */
static void check_tiny_surfaces(const prism_scene *s)
{
    assert_int_equal(s->surfaces_count, 2);
    const prism_surface *cath = &s->surfaces[surface(s, TD_CATHODE)];
    assert_int_equal(cath->kind, PRISM_SURFACE_SKIN);
    assert_int_equal(cath->model, 1);
    assert_int_equal(cath->finish, 0);
    assert_int_equal(cath->type, 0);
    assert_near(cath->value, 1.0, 0, "cathode value");
    const prism_property *eff = surface_property(cath, "EFFICIENCY");
    assert_table(eff, 6, 200.0, 0.0, 800.0, 0.0, 0);
    /* Peak 0.25 at 3.0996e-06 MeV = 400 nm, the third from 200 nm. */
    assert_near(eff->wavelength_nm[2], 400.0, 0.01, "EFFICIENCY peak nm");
    assert_near(eff->value[2], 0.25, 1e-7, "EFFICIENCY peak");
    assert_table(surface_property(cath, "REFLECTIVITY"), 2, 200.0, 0.0, 800.0, 0.0, 0);
    const prism_surface *wall = &s->surfaces[surface(s, TD_WALL)];
    assert_int_equal(wall->kind, PRISM_SURFACE_BORDER);
    assert_int_equal(wall->model, 1);
    assert_int_equal(wall->finish, 3);
    assert_near(wall->value, 0.2, 1e-12, "wall value");
    assert_table(surface_property(wall, "REFLECTIVITY"), 2, 200.0, 0.1, 800.0, 0.1, 1e-6);
}

/* Triangles by material: world box 12 (Air); 16-sided prisms: 2 caps of
 * 14 + 16 walls x 2 = 60 (steel, liquid); octagonal prisms: 2 x 6 + 16 =
 * 28, six PMTs: 168 Pyrex and 168 Vacuum. The outer material is the
 * enclosing volume's; the cathode skin covers the Pyrex triangles, the
 * border surface the liquid's (the boundary liquid -> steel). */
static void check_tiny_triangles(const prism_scene *s)
{
    uint32_t air = material(s, TD_AIR), steel = material(s, TD_STEEL), ls = material(s, TD_LS);
    uint32_t pyrex = material(s, TD_PYREX), vac = material(s, TD_VACUUM);
    assert_int_equal(count_material(s, s->triangle_material_inner, air), 12);
    assert_int_equal(count_material(s, s->triangle_material_inner, steel), 60);
    assert_int_equal(count_material(s, s->triangle_material_inner, ls), 60);
    assert_int_equal(count_material(s, s->triangle_material_inner, pyrex), 168);
    assert_int_equal(count_material(s, s->triangle_material_inner, vac), 168);
    uint32_t cath = surface(s, TD_CATHODE), wall = surface(s, TD_WALL);
    for (size_t t = 0; t < s->triangles_count; t++) {
        uint32_t in = s->triangle_material_inner[t], out = s->triangle_material_outer[t];
        uint32_t want_out = in == air     ? PRISM_NONE
                            : in == steel ? air
                            : in == ls    ? steel
                            : in == pyrex ? ls
                                          : pyrex;
        assert_int_equal(out, want_out);
        uint32_t want_surface = in == pyrex ? cath : in == ls ? wall : PRISM_NONE;
        assert_int_equal(s->triangle_surface[t], want_surface);
    }
}

/* Solids: volumes of the regular prisms (n/2 r^2 sin(2 pi/n) x height):
 * world 2^3 = 8 m^3; steel 8 x 0.62^2 x sin(22.5) x 1.04 = 1.223903;
 * liquid 8 x 0.6^2 x sin(22.5) x 1.0 = 1.102128; Pyrex 2 sqrt(2) x 0.1^2
 * x 0.1 = 2.828427e-3; Vacuum 2 sqrt(2) x 0.08^2 x 0.08 = 1.448155e-3.
 * PMT centres: (+-0.5,0,0), (0,+-0.5,0) facing the axis, (0,0,+-0.4)
 * facing the middle: 0.05 m deep along the facing, 0.1 m across. */
static void check_tiny_solids(const prism_scene *s)
{
    static const double pmt[6][3] = {{0.5, 0, 0},  {0, 0.5, 0}, {-0.5, 0, 0},
                                     {0, -0.5, 0}, {0, 0, 0.4}, {0, 0, -0.4}};
    const double zero[3] = {0, 0, 0};
    uint32_t air = material(s, TD_AIR), steel = material(s, TD_STEEL), ls = material(s, TD_LS);
    uint32_t world = solid_at(s, air, zero, 1e-6), tank = solid_at(s, steel, zero, 1e-6);
    uint32_t liquid = solid_at(s, ls, zero, 1e-6);
    assert_int_equal(s->solids[world].parent, PRISM_NONE);
    assert_int_equal(s->solids[tank].parent, world);
    assert_int_equal(s->solids[liquid].parent, tank);
    assert_near(solid_volume(s, world, zero), 8.0, 1e-5, "world volume");
    assert_near(solid_volume(s, tank, zero), 8 * 0.62 * 0.62 * sin(PI / 8) * 1.04, 1e-5,
                "steel volume");
    assert_near(solid_volume(s, liquid, zero), 8 * 0.36 * sin(PI / 8), 1e-5, "liquid volume");
    for (int k = 0; k < 6; k++) {
        uint32_t glass = solid_at(s, material(s, TD_PYREX), pmt[k], 1e-6);
        uint32_t vac = solid_at(s, material(s, TD_VACUUM), pmt[k], 1e-6);
        assert_int_equal(s->solids[glass].parent, liquid);
        assert_int_equal(s->solids[vac].parent, glass);
        assert_int_equal(s->solids[glass].triangle_count, 28);
        assert_near(solid_volume(s, glass, pmt[k]), 2 * SQRT2 * 0.01 * 0.1, 1e-8, "Pyrex");
        assert_near(solid_volume(s, vac, pmt[k]), 2 * SQRT2 * 0.0064 * 0.08, 1e-8, "Vacuum");
        assert_non_null(strstr(s->solids[glass].path, "pvPmt"));
        /* The solid is named for the node that holds the geometry (the
         * logical volume); placed six times, its k-th placement in
         * document order is PMT k. */
        assert_string_equal(s->solids[glass].name, "__dd__Geometry__PMT__lvPmtHemi0xc133740");
        assert_int_equal(s->solids[glass].copy_number, k);
        assert_int_equal(s->solids[vac].copy_number, k);
        double lo[3], hi[3];
        solid_box(s, glass, lo, hi);
        for (int j = 0; j < 3; j++) /* the facing axis is where the centre is off 0 */
            assert_near(hi[j] - lo[j], pmt[k][j] != 0 ? 0.1 : 0.2, 1e-6, "PMT extent");
    }
    for (uint32_t i = 0; i < s->solids_count; i++)
        for (uint32_t j = 0; j < i; j++)
            assert_string_not_equal(s->solids[i].path, s->solids[j].path);
}

static void test_tiny_detector(void **state)
{
    log_record log = {0, 0};
    prism_load_desc desc = {.log = record_log, .log_user = &log};
    prism_scene *s = load_with(PRISM_ASSETS "/tiny_detector.dae", &desc);
    *state = s; /* freed by free_scene, even when an assertion fails */
    assert_consistent(s);
    /* G4DAE extras and no <unit>: millimetres, and the loader says so. */
    assert_true(s->g4dae);
    assert_near(s->unit_meter, 0.001, 1e-15, "unit");
    assert_true(log.millimetres > 0);
    assert_int_equal(s->up_axis, PRISM_UP_Y); /* no <up_axis>: COLLADA's default */
    /* 12 + 60 + 60 + 6 x (28 + 28) = 468 triangles; vertices 8 + 32 + 32
     * + 6 x (16 + 16) = 264; solids: world, steel, liquid, 6 x 2 = 15. */
    assert_int_equal(s->triangles_count, 468);
    assert_int_equal(s->vertices_count, 264);
    assert_int_equal(s->solids_count, 15);
    assert_bbox(s, -1, -1, -1, 1, 1, 1, 1e-6); /* the world box, +-1000 mm */
    check_tiny_materials(s);
    check_tiny_surfaces(s);
    check_tiny_triangles(s);
    check_tiny_solids(s);
    /* 5 geometries; 15 <node>s (5 logical volumes, 9 placements, top.0);
     * 15 placements after flattening; unique 12 + 60 + 60 + 28 + 28 = 188
     * triangles, 8 + 32 + 32 + 16 + 16 = 104 vertices. */
    assert_int_equal(s->stats.geometries, 5);
    assert_int_equal(s->stats.nodes, 15);
    assert_int_equal(s->stats.instances, 15);
    assert_int_equal(s->stats.unique_triangles, 188);
    assert_int_equal(s->stats.unique_vertices, 104);
}

/* The descriptor's unit wins over the file's: the same numbers read as
 * metres give a box of +-1000 m. */
static void test_tiny_detector_unit_override(void **state)
{
    prism_load_desc desc = {.unit_meter = 1.0};
    prism_scene *s = load_with(PRISM_ASSETS "/tiny_detector.dae", &desc);
    *state = s; /* freed by free_scene, even when an assertion fails */
    assert_near(s->unit_meter, 1.0, 0, "unit");
    assert_bbox(s, -1000, -1000, -1000, 1000, 1000, 1000, 1e-3);
    assert_int_equal(s->triangles_count, 468);
}

/* ---- the generated detector, prism-gen-detector --pmts 192 ---- */

#define GD_M "__dd__Materials__"

/* Figures from tools/gen_detector.c's rules, worked out for N = 192:
 * R = 10 ceil(35 sqrt(192 / 6 pi)) = 10 ceil(111.70) = 1120 mm = H.
 * PMT centres 150 mm inside: wall radius 0.97 m, caps at z = +-0.97 m.
 * Wall area 2 pi 970 x 2 x 820 = 9.995e6, caps pi 770^2 = 1.863e6 each:
 * wall = round(192 x 0.7285) = 140, top = bottom = 26; rows = round(sqrt(
 * 140 x 1640 / (2 pi 970))) = 6, so wall PMTs have |z| <= 0.82 x 5/6. */
#ifdef PRISM_GENERATED_DETECTOR /* the helpers are unused without the generator */
/* How far solid `so` reaches from point p in direction f. */
static double reach(const prism_scene *s, uint32_t so, const double p[3], const double f[3])
{
    double r = -INFINITY;
    const prism_solid *sol = &s->solids[so];
    for (size_t t = sol->first_triangle; t < (size_t)sol->first_triangle + sol->triangle_count; t++)
        for (int k = 0; k < 3; k++) {
            const float *v = vtx(s, t, k);
            r = fmax(r, (v[0] - p[0]) * f[0] + (v[1] - p[1]) * f[1] + (v[2] - p[2]) * f[2]);
        }
    return r;
}

static void check_generated_pmts(const prism_scene *s, uint32_t pyrex)
{
    size_t wall = 0, top = 0, bottom = 0, n = 0;
    double c[192][3];
    for (uint32_t i = 0; i < s->solids_count; i++) {
        if (s->solids[i].material != pyrex)
            continue;
        assert_true(n < 192);
        double *p = c[n++], lo[3], hi[3], f[3];
        solid_box(s, i, lo, hi);
        for (int j = 0; j < 3; j++)
            p[j] = 0.5 * (lo[j] + hi[j]);
        double r = sqrt(p[0] * p[0] + p[1] * p[1]);
        if (fabs(fabs(p[2]) - 0.97) < 1e-4) {
            f[0] = f[1] = 0;
            f[2] = p[2] > 0 ? -1 : 1;
            top += p[2] > 0;
            bottom += p[2] < 0;
            assert_true(r <= 0.77 + 1e-4);
        } else {
            assert_near(r, 0.97, 1e-4, "wall PMT radius");
            assert_true(fabs(p[2]) <= 0.82 * 5 / 6 + 1e-4);
            f[0] = -p[0] / r;
            f[1] = -p[1] / r;
            f[2] = 0;
            wall++;
        }
        /* The bulb is 70 mm deep along its face and 100 mm across: the
         * front pole lies 70 mm from the centre towards the middle. */
        assert_near(reach(s, i, p, f), 0.07, 1e-5, "PMT front");
        assert_true(solid_volume(s, i, p) > 0);
    }
    assert_int_equal(n, 192);
    /* One node placed 192 times: copy numbers 0..191, each once. */
    bool seen[192] = {false};
    for (uint32_t i = 0; i < s->solids_count; i++)
        if (s->solids[i].material == pyrex) {
            int copy = s->solids[i].copy_number;
            assert_true(copy >= 0 && copy < 192 && !seen[copy]);
            seen[copy] = true;
        }
    assert_int_equal(wall, 140);
    assert_int_equal(top, 26);
    assert_int_equal(bottom, 26);
    for (size_t i = 0; i < n; i++) /* bulbs 0.2 m wide never overlap */
        for (size_t j = 0; j < i; j++) {
            double d[3] = {c[i][0] - c[j][0], c[i][1] - c[j][1], c[i][2] - c[j][2]};
            assert_true(sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]) > 0.2);
        }
}

/* Triangles by material (inner, outer, surface): world 12 (Air, none);
 * tank, acrylic and scintillator are 64-sided prisms: 2 x 62 + 128 = 252
 * each (oil in Air with the wall skin; acrylic in oil; LS in acrylic);
 * bulbs 16 x 4: 32 + 64 = 96 each, 18432 Pyrex in oil with the cathode
 * skin; vacuum 8 x 3: 16 + 16 = 32 each, 6144 in Pyrex. */
static void check_generated_triangles(const prism_scene *s)
{
    static const struct {
        const char *inner, *outer, *surface;
        size_t count;
    } want[] = {
        {GD_M "Air0xc0d4c80", NULL, NULL, 12},
        {GD_M "MineralOil0xc2ab6e8", GD_M "Air0xc0d4c80", "__dd__Geometry__Tank__TankWallSurface",
         252},
        {GD_M "Acrylic0xc2a4b38", GD_M "MineralOil0xc2ab6e8", NULL, 252},
        {GD_M "LiquidScintillator0xc2308d0", GD_M "Acrylic0xc2a4b38", NULL, 252},
        {GD_M "Pyrex0xc1f2d40", GD_M "MineralOil0xc2ab6e8",
         "__dd__Geometry__PMT__PmtCathodeSurface", 18432},
        {GD_M "Vacuum0xc0bf8b8", GD_M "Pyrex0xc1f2d40", NULL, 6144},
    };
    for (size_t w = 0; w < sizeof want / sizeof want[0]; w++) {
        uint32_t in = material(s, want[w].inner);
        uint32_t out = want[w].outer ? material(s, want[w].outer) : PRISM_NONE;
        uint32_t sf = want[w].surface ? surface(s, want[w].surface) : PRISM_NONE;
        size_t n = 0;
        for (size_t t = 0; t < s->triangles_count; t++) {
            if (s->triangle_material_inner[t] != in)
                continue;
            n++;
            assert_int_equal(s->triangle_material_outer[t], out);
            assert_int_equal(s->triangle_surface[t], sf);
        }
        assert_int_equal(n, want[w].count);
    }
}

/* Tables: 61 energies, 800 nm down to 200 nm by 10 nm. LS RINDEX is
 * 1.47 + 0.0045 / lambda_um^2: 1.5825 at 200 nm, 1.477031 at 800 nm;
 * LS RAYLEIGH is 25 m x (lambda / 430)^4: 299.516 m at 800 nm; the
 * cathode's EFFICIENCY peaks at 0.25 at 400 nm. */
static void check_generated_tables(const prism_scene *s)
{
    assert_int_equal(s->materials_count, 6);
    const prism_material *ls = &s->materials[material(s, GD_M "LiquidScintillator0xc2308d0")];
    assert_table(prism_material_property(ls, "RINDEX"), 61, 200, 1.5825, 800, 1.477031, 1e-5);
    assert_table(prism_material_property(ls, "RAYLEIGH"), 61, 200, 1.16998, 800, 299.516, 1e-4);
    assert_non_null(prism_material_property(ls, "ABSLENGTH"));
    /* The scintillator's reemission (0.8 below 430 nm) and emission tables,
     * and Geant4's constants as G4DAE writes them: one point at 0 nm. */
    assert_table(prism_material_property(ls, "REEMISSIONPROB"), 61, 200, 0.8, 800, 0, 1e-4);
    assert_int_equal(prism_material_property(ls, "FASTCOMPONENT")->count, 61);
    assert_int_equal(prism_material_property(ls, "SLOWCOMPONENT")->count, 61);
    static const struct {
        const char *name;
        float value;
    } constants[] = {{"SCINTILLATIONYIELD", 10000.0f},
                     {"RESOLUTIONSCALE", 1.0f},
                     {"FASTTIMECONSTANT", 4.9f},
                     {"SLOWTIMECONSTANT", 20.6f},
                     {"YIELDRATIO", 0.8f}};
    for (size_t i = 0; i < sizeof constants / sizeof constants[0]; i++) {
        const prism_property *c = prism_material_property(ls, constants[i].name);
        assert_non_null(c);
        assert_int_equal(c->count, 1);
        assert_true(c->wavelength_nm[0] == 0.0f);
        assert_true(c->value[0] == constants[i].value);
    }
    static const char *with_rindex[] = {"Air0xc0d4c80", "MineralOil0xc2ab6e8", "Acrylic0xc2a4b38",
                                        "Pyrex0xc1f2d40", "Vacuum0xc0bf8b8"};
    for (size_t i = 0; i < 5; i++) {
        char name[128];
        snprintf(name, sizeof name, GD_M "%s", with_rindex[i]);
        const prism_material *m = &s->materials[material(s, name)];
        const prism_property *p = prism_material_property(m, "RINDEX");
        assert_non_null(p);
        assert_int_equal(p->count, 61);
    }
    assert_int_equal(s->surfaces_count, 2);
    const prism_surface *cath = &s->surfaces[surface(s, "__dd__Geometry__PMT__PmtCathodeSurface")];
    assert_int_equal(cath->kind, PRISM_SURFACE_SKIN);
    const prism_property *eff = surface_property(cath, "EFFICIENCY");
    assert_non_null(eff);
    assert_int_equal(eff->count, 61);
    assert_near(eff->wavelength_nm[20], 400.0, 0.01, "EFFICIENCY nm"); /* 200 + 20 x 10 */
    assert_near(eff->value[20], 0.25, 1e-6, "EFFICIENCY peak");
    /* The tank wall: a unified ground reflector with lobe constants. */
    const prism_surface *wall = &s->surfaces[surface(s, "__dd__Geometry__Tank__TankWallSurface")];
    assert_int_equal(wall->model, 1);
    assert_int_equal(wall->type, 0);
    assert_int_equal(wall->finish, 3);
    assert_near(surface_property(wall, "REFLECTIVITY")->value[0], 0.9, 1e-6, "wall R");
    assert_near(surface_property(wall, "SPECULARLOBECONSTANT")->value[0], 0.2, 1e-6, "lobe");
    assert_near(surface_property(wall, "SPECULARSPIKECONSTANT")->value[0], 0.1, 1e-6, "spike");
    assert_non_null(surface_property(wall, "BACKSCATTERCONSTANT"));
}

#endif

static void test_generated_detector(void **state)
{
    (void)state;
#ifndef PRISM_GENERATED_DETECTOR
    skip(); /* built without tools: no prism-gen-detector */
#else
    prism_scene *s = load_with(PRISM_GENERATED_DETECTOR, NULL);
    *state = s; /* freed by free_scene, even when an assertion fails */
    assert_consistent(s);
    assert_true(s->g4dae);
    assert_near(s->unit_meter, 0.001, 1e-15, "unit");
    /* 768 + 128 x 192 = 25344 triangles; vertices: world 8, three prisms
     * of 128, PMTs 192 x (50 + 18) = 13056: 13448. Solids 4 + 2 x 192. */
    assert_int_equal(s->triangles_count, 25344);
    assert_int_equal(s->vertices_count, 13448);
    assert_int_equal(s->solids_count, 388);
    /* World box: +-(1120 + 1000) mm on every axis. */
    assert_bbox(s, -2.12, -2.12, -2.12, 2.12, 2.12, 2.12, 1e-6);
    assert_int_equal(s->stats.instances, 388);
    assert_int_equal(s->stats.unique_triangles, 12 + 3 * 252 + 96 + 32);
    check_generated_tables(s);
    check_generated_triangles(s);
    check_generated_pmts(s, material(s, GD_M "Pyrex0xc1f2d40"));
#endif
}

/* --unique writes the same world with every PMT its own geometry, logical
 * volume and skin surface: the same counts and box as the instanced file,
 * 2 + 191 more surfaces (one skin per PMT volume), and every bulb triangle
 * still on a detecting cathode surface. */
static void test_generated_unique(void **state)
{
    (void)state;
#ifndef PRISM_GENERATED_UNIQUE
    skip();
#else
    prism_scene *s = load_with(PRISM_GENERATED_UNIQUE, NULL);
    *state = s; /* freed by free_scene, even when an assertion fails */
    assert_consistent(s);
    assert_int_equal(s->triangles_count, 25344);
    assert_int_equal(s->vertices_count, 13448);
    assert_int_equal(s->solids_count, 388);
    assert_bbox(s, -2.12, -2.12, -2.12, 2.12, 2.12, 2.12, 1e-6);
    assert_int_equal(s->stats.geometries, 4 + 2 * 192);
    assert_int_equal(s->stats.unique_triangles, 25344);
    assert_int_equal(s->surfaces_count, 193);
    uint32_t pyrex = material(s, GD_M "Pyrex0xc1f2d40");
    size_t bulbs = 0;
    for (size_t t = 0; t < s->triangles_count; t++) {
        if (s->triangle_material_inner[t] != pyrex)
            continue;
        bulbs++;
        uint32_t sf = s->triangle_surface[t];
        assert_int_not_equal(sf, PRISM_NONE);
        assert_string_equal(s->surfaces[sf].name, "__dd__Geometry__PMT__PmtCathodeSurface");
        assert_non_null(surface_property(&s->surfaces[sf], "EFFICIENCY"));
    }
    assert_int_equal(bulbs, 192 * 96);
#endif
}

/* Loading from memory gives the very scene the file gives: same counts,
 * same positions and indices, bit for bit, for every asset. */
static void test_assets_from_memory(void **state)
{
    (void)state;
    static const char *names[] = {"cube.dae", "box_with_hole.dae", "sphere.dae",
                                  "tiny_detector.dae"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", PRISM_ASSETS, names[i]);
        size_t n = file_size(path);
        char *data = malloc(n);
        assert_non_null(data);
        FILE *f = fopen(path, "rb");
        assert_non_null(f);
        size_t got = fread(data, 1, n, f);
        fclose(f);
        prism_scene *a = NULL, *b = NULL;
        prism_result ra = prism_scene_load_memory(data, got, names[i], NULL, &a);
        prism_result rb = prism_scene_load(path, NULL, &b);
        free(data);
        bool same = ra == PRISM_SUCCESS && rb == PRISM_SUCCESS && got == n &&
                    a->triangles_count == b->triangles_count &&
                    a->vertices_count == b->vertices_count &&
                    !memcmp(a->positions, b->positions, 3 * sizeof(float) * a->vertices_count) &&
                    !memcmp(a->indices, b->indices, 3 * sizeof(uint32_t) * a->triangles_count);
        prism_scene_free(a);
        prism_scene_free(b);
        if (!same)
            print_error("%s: memory and file loads differ\n", names[i]);
        assert_true(same);
    }
}

/* ---- error paths that concern the assets' callers ---- */

static void test_missing_asset(void **state)
{
    (void)state;
    char msg[256] = "";
    prism_load_desc desc = {.error = msg, .error_size = sizeof msg};
    prism_scene *s = (prism_scene *)&desc; /* must come back NULL */
    assert_int_equal(prism_scene_load(PRISM_ASSETS "/no_such_asset.dae", &desc, &s),
                     PRISM_ERROR_IO);
    assert_null(s);
    assert_non_null(strstr(msg, "no_such_asset.dae"));
    prism_scene_free(NULL);
}

static int free_scene(void **state)
{
    prism_scene_free(*state);
    *state = NULL;
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_cube, free_scene),
        cmocka_unit_test_teardown(test_box_with_hole, free_scene),
        cmocka_unit_test_teardown(test_sphere, free_scene),
        cmocka_unit_test_teardown(test_tiny_detector, free_scene),
        cmocka_unit_test_teardown(test_tiny_detector_unit_override, free_scene),
        cmocka_unit_test_teardown(test_generated_detector, free_scene),
        cmocka_unit_test_teardown(test_generated_unique, free_scene),
        cmocka_unit_test(test_assets_from_memory),
        cmocka_unit_test(test_missing_asset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
