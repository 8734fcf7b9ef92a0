/* Small in-memory scenes for the kernels suites (kernels_test_scene.h). */
#include "kernels_test_scene.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define KT_PI 3.14159265358979323846

static void *grow(void *p, size_t n, size_t size)
{
    void *q = realloc(p, n * size);
    if (q == NULL)
        abort();
    return q;
}

static uint32_t add_vertex(kt_scene *s, float x, float y, float z)
{
    s->positions = grow(s->positions, s->vertices + 1, 3 * sizeof(float));
    float *v = s->positions + 3 * s->vertices;
    v[0] = x;
    v[1] = y;
    v[2] = z;
    return (uint32_t)s->vertices++;
}

static void add_triangle(kt_scene *s, uint32_t a, uint32_t b, uint32_t c, uint32_t solid,
                         uint32_t inner, uint32_t outer, uint32_t surface)
{
    size_t n = s->triangles + 1;
    s->indices = grow(s->indices, n, 3 * sizeof(uint32_t));
    s->solid = grow(s->solid, n, sizeof(uint32_t));
    s->inner = grow(s->inner, n, sizeof(uint32_t));
    s->outer = grow(s->outer, n, sizeof(uint32_t));
    s->surface = grow(s->surface, n, sizeof(uint32_t));
    uint32_t *t = s->indices + 3 * s->triangles;
    t[0] = a;
    t[1] = b;
    t[2] = c;
    s->solid[s->triangles] = solid;
    s->inner[s->triangles] = inner;
    s->outer[s->triangles] = outer;
    s->surface[s->triangles] = surface;
    s->triangles = n;
}

static char *dup(const char *s)
{
    char *d = malloc(strlen(s) + 1);
    if (d == NULL)
        abort();
    strcpy(d, s);
    return d;
}

static void constant_property(prism_property *p, const char *name, float value)
{
    p->name = dup(name);
    p->count = 2;
    p->wavelength_nm = malloc(2 * sizeof(float));
    p->value = malloc(2 * sizeof(float));
    p->wavelength_nm[0] = 100.0f;
    p->wavelength_nm[1] = 900.0f;
    p->value[0] = p->value[1] = value;
}

uint32_t kt_material(kt_scene *s, const char *name, float rindex, float abslength, float rayleigh)
{
    prism_scene *sc = &s->scene;
    sc->materials = grow(sc->materials, sc->materials_count + 1, sizeof(prism_material));
    prism_material *m = &sc->materials[sc->materials_count];
    memset(m, 0, sizeof *m);
    m->name = dup(name);
    m->properties = calloc(KT_MAX_PROPS, sizeof(prism_property));
    const char *names[3] = {"RINDEX", "ABSLENGTH", "RAYLEIGH"};
    float values[3] = {rindex, abslength, rayleigh};
    for (int i = 0; i < 3; i++)
        if (values[i] != 0.0f)
            constant_property(&m->properties[m->properties_count++], names[i], values[i]);
    return (uint32_t)sc->materials_count++;
}

uint32_t kt_surface(kt_scene *s, const char *name, float detect, float absorb, float specular,
                    float diffuse)
{
    prism_scene *sc = &s->scene;
    sc->surfaces = grow(sc->surfaces, sc->surfaces_count + 1, sizeof(prism_surface));
    prism_surface *f = &sc->surfaces[sc->surfaces_count];
    memset(f, 0, sizeof *f);
    f->name = dup(name);
    f->properties = calloc(KT_MAX_PROPS, sizeof(prism_property));
    const char *names[4] = {"detect", "absorb", "reflect_specular", "reflect_diffuse"};
    float values[4] = {detect, absorb, specular, diffuse};
    for (int i = 0; i < 4; i++)
        constant_property(&f->properties[f->properties_count++], names[i], values[i]);
    return (uint32_t)sc->surfaces_count++;
}

void kt_box(kt_scene *s, const float lo[3], const float hi[3], uint32_t solid, uint32_t inner,
            uint32_t outer, uint32_t surface)
{
    uint32_t v[8];
    for (int i = 0; i < 8; i++)
        v[i] = add_vertex(s, i & 1 ? hi[0] : lo[0], i & 2 ? hi[1] : lo[1], i & 4 ? hi[2] : lo[2]);
    /* Faces as quads (a, b, c, d) counter-clockwise seen from outside. */
    static const int q[6][4] = {{0, 4, 6, 2}, {1, 3, 7, 5}, {0, 1, 5, 4},
                                {2, 6, 7, 3}, {0, 2, 3, 1}, {4, 5, 7, 6}};
    for (int f = 0; f < 6; f++) {
        add_triangle(s, v[q[f][0]], v[q[f][1]], v[q[f][2]], solid, inner, outer, surface);
        add_triangle(s, v[q[f][0]], v[q[f][2]], v[q[f][3]], solid, inner, outer, surface);
    }
}

void kt_quad(kt_scene *s, const float a[3], const float b[3], const float c[3], const float d[3],
             uint32_t solid, uint32_t inner, uint32_t outer, uint32_t surface)
{
    uint32_t v[4] = {add_vertex(s, a[0], a[1], a[2]), add_vertex(s, b[0], b[1], b[2]),
                     add_vertex(s, c[0], c[1], c[2]), add_vertex(s, d[0], d[1], d[2])};
    add_triangle(s, v[0], v[1], v[2], solid, inner, outer, surface);
    add_triangle(s, v[0], v[2], v[3], solid, inner, outer, surface);
}

void kt_sphere(kt_scene *s, const float c[3], float r, unsigned seg, uint32_t solid, uint32_t inner,
               uint32_t outer, uint32_t surface)
{
    unsigned rings = seg / 2;
    uint32_t base = (uint32_t)s->vertices;
    for (unsigned i = 0; i <= rings; i++) {
        double th = KT_PI * i / rings;
        for (unsigned j = 0; j < seg; j++) {
            double ph = 2.0 * KT_PI * j / seg;
            add_vertex(s, c[0] + (float)(r * sin(th) * cos(ph)),
                       c[1] + (float)(r * sin(th) * sin(ph)), c[2] + (float)(r * cos(th)));
        }
    }
    for (unsigned i = 0; i < rings; i++)
        for (unsigned j = 0; j < seg; j++) {
            uint32_t a = base + i * seg + j, b = base + i * seg + (j + 1) % seg;
            uint32_t d = a + seg, e = b + seg;
            if (i > 0) /* (a, d, b) is counter-clockwise from outside */
                add_triangle(s, a, d, b, solid, inner, outer, surface);
            if (i + 1 < rings)
                add_triangle(s, b, d, e, solid, inner, outer, surface);
        }
}

int kt_build(kt_scene *s, prism_context *ctx)
{
    if (prism_bvh_build(s->positions, s->vertices, s->indices, s->triangles, NULL, &s->bvh) !=
        PRISM_SUCCESS)
        return -1;
    prism_bvh *b = s->bvh;
    s->info = calloc(b->triangle_count + 1, sizeof *s->info);
    for (size_t i = 0; i < b->triangle_count; i++) {
        uint32_t t = b->triangle_ids[i];
        s->info[i].id = t;
        s->info[i].solid = s->solid[t];
        s->info[i].materials = prism_materials_pack(s->inner[t], s->outer[t]);
        s->info[i].surface = s->surface[t];
    }
    prism_geometry_view *v = &s->view;
    memset(v, 0, sizeof *v);
    v->nodes_head = b->nodes;
    v->nodes_split = v->node_count = (uint32_t)b->node_count;
    v->vertices = b->vertices;
    v->triangles = b->triangles;
    v->triangle_info = s->info;
    v->vertex_count = (uint32_t)b->vertex_count;
    v->triangle_count = (uint32_t)b->triangle_count;
    s->scene.positions = s->positions;
    s->scene.vertices_count = s->vertices;
    s->scene.indices = s->indices;
    s->scene.triangles_count = s->triangles;
    s->scene.triangle_solid = s->solid;
    s->scene.triangle_material_inner = s->inner;
    s->scene.triangle_material_outer = s->outer;
    s->scene.triangle_surface = s->surface;
    return prism__optics_create(ctx, &s->scene, &s->optics) == PRISM_SUCCESS ? 0 : -1;
}

static void free_properties(prism_property *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(p[i].name);
        free(p[i].wavelength_nm);
        free(p[i].value);
    }
    free(p);
}

void kt_free(kt_scene *s, prism_context *ctx)
{
    prism__optics_destroy(ctx, s->optics);
    prism_bvh_free(s->bvh);
    for (size_t i = 0; i < s->scene.materials_count; i++) {
        free(s->scene.materials[i].name);
        free_properties(s->scene.materials[i].properties, s->scene.materials[i].properties_count);
    }
    for (size_t i = 0; i < s->scene.surfaces_count; i++) {
        free(s->scene.surfaces[i].name);
        free_properties(s->scene.surfaces[i].properties, s->scene.surfaces[i].properties_count);
    }
    free(s->scene.materials);
    free(s->scene.surfaces);
    free(s->positions);
    free(s->indices);
    free(s->solid);
    free(s->inner);
    free(s->outer);
    free(s->surface);
    free(s->info);
    memset(s, 0, sizeof *s);
}

prism_context *kt_host_context(void)
{
    prism_context_desc d = {0};
    d.backend = PRISM_BACKEND_HOST;
    prism_context *ctx = NULL;
    return prism_context_create(&d, &ctx) == PRISM_SUCCESS ? ctx : NULL;
}

prism_context *kt_ctx;

int kt_host_setup(void **state)
{
    (void)state;
    kt_ctx = kt_host_context();
    return kt_ctx != NULL ? 0 : -1;
}

int kt_host_teardown(void **state)
{
    (void)state;
    return prism_context_destroy(kt_ctx) == PRISM_SUCCESS ? 0 : -1;
}

prism_context *kt_cuda_context(void)
{
    if (prism_cuda_device_count() == 0)
        return NULL;
    prism_context_desc d = {0};
    d.backend = PRISM_BACKEND_CUDA;
    prism_context *ctx = NULL;
    return prism_context_create(&d, &ctx) == PRISM_SUCCESS ? ctx : NULL;
}

prism_geometry *kt_upload(kt_scene *s, prism_context *ctx, prism_placement_policy policy,
                          bool split)
{
    prism_geometry_desc d = {0};
    d.policy = policy;
    if (split) {
        d.reserve = PRISM_PLACEMENT_NO_RESERVE;
        d.budget = 100 * sizeof(prism_bvh_node);
    }
    prism_geometry *g = NULL;
    return prism_geometry_upload(ctx, &s->scene, s->bvh, &d, &g) == PRISM_SUCCESS ? g : NULL;
}

void kt_detector_scene(kt_scene *s)
{
    uint32_t air = kt_material(s, "air", 1.0f, 0, 0);
    uint32_t water = kt_material(s, "water", 1.33f, 10, 20);
    uint32_t steel = kt_material(s, "steel", 2.0f, 0.001f, 0);
    const float hlo[3] = {-10, -10, -10}, hhi[3] = {10, 10, 10};
    const float tlo[3] = {-4, -4, -4}, thi[3] = {4, 4, 4}, clo[3] = {-1, -1, -1},
                chi[3] = {1, 1, 1};
    kt_box(s, hlo, hhi, 0, air, PRISM_NONE, PRISM_NONE);
    kt_box(s, tlo, thi, 1, water, air, PRISM_NONE);
    kt_box(s, clo, chi, 2, steel, water, PRISM_NONE);
    for (int i = 0; i < 8; i++) {
        const float c[3] = {(i & 1) ? 2.5f : -2.5f, (i & 2) ? 2.5f : -2.5f, (i & 4) ? 2.5f : -2.5f};
        kt_sphere(s, c, 1.0f, 48, 3 + i, steel, water, PRISM_NONE);
    }
}

void kt_rich_scene(kt_scene *s, unsigned segments)
{
    uint32_t vac = kt_material(s, "vacuum", 1.0f, 0, 0);
    uint32_t water = kt_material(s, "water", 1.33f, 3.0f, 2.0f);
    uint32_t wall = kt_surface(s, "wall", 0.3f, 0.2f, 0.1f, 0.3f);
    const float lo[3] = {-3, -3, -3}, hi[3] = {3, 3, 3}, c[3] = {0.2f, 0, 0};
    kt_box(s, lo, hi, 1, vac, PRISM_NONE, wall);
    kt_sphere(s, c, 1.5f, segments, 2, water, vac, PRISM_NONE);
}
