/* The COLLADA loader's last stage: walk the node graph from the scene,
 * resolve every reference met on the way (only what the scene reaches), and
 * write world-space triangles. A first walk counts what every node places
 * (memoised per node: the graph is a DAG) and finds cycles, so the output is
 * allocated once, at its exact size, and a file that would place too much
 * is refused before anything big is allocated. The second walk transforms
 * each placed geometry's vertices once into the output. */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define CL_MAX_VISITS (UINT64_C(1) << 26)   /* nodes the scene may place, in all */
#define CL_MAX_NAME_BYTES ((size_t)1 << 30) /* solid names and paths, in all */

/* A node's visit in the walk: its path is its parent visit's, '/', and
 * its label (no '/' after an empty path). */
typedef struct cl_visit {
    uint32_t parent, node;
    size_t len; /* of the path, without the NUL */
} cl_visit;

typedef struct flat {
    prism__cl *L;
    prism_scene *S;
    size_t tri, vert, solid, name_bytes;
    prism__vec visits; /* cl_visit */
    uint32_t visit;    /* the current one, CL_NONE at the scene */
    uint32_t *holder, *pv, *visit_of;
    size_t *name_at;     /* per solid: its name's offset in the names' block */
    struct cl_job *jobs; /* one per solid */
} flat;

static cl_node *node_at(prism__cl *L, uint32_t i)
{
    return &CL_AT(L->nodes, cl_node, i);
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX / 4 - b ? UINT64_MAX / 4 : a + b;
}

/* The material bound to `symbol` in the item; *missing: a binding named a
 * material the file lacks (the walk warns when it reaches the item). */
static uint32_t bound_material(const prism__cl *L, const cl_item *it, cl_str symbol,
                               const cl_binding **missing)
{
    if (!symbol)
        return CL_NONE;
    const char *sym = prism__cl_s(L, symbol);
    for (uint32_t i = 0; i < it->bind_count; i++) {
        const cl_binding *b = &CL_AT(L->bindings, cl_binding, it->bind_first + i);
        if (!b->symbol || strcmp(prism__cl_s(L, b->symbol), sym) != 0)
            continue;
        uint32_t m = prism__cl_map_get(L, &L->material_ids, prism__cl_s(L, b->target));
        if (m == CL_NONE && missing && !*missing)
            *missing = b;
        return m;
    }
    /* Unbound symbols: some exporters write the material id itself. */
    return prism__cl_map_get(L, &L->material_ids, sym);
}

/* Every instance_geometry's geometry and materials, and every
 * instance_node's node, on all cores before the walk: hash look-ups into
 * scattered strings, a visible part of a large load when the walk made
 * them one by one. Items the scene never reaches are resolved too, but
 * only the walk reports. */
static bool resolve_geometries(prism__cl *L)
{
    long long n = (long long)L->items.count;
    size_t groups = 0;
#pragma omp parallel for schedule(dynamic, 256) reduction(+ : groups) if (n > 10000)
    for (long long i = 0; i < n; i++) {
        cl_item *it = &CL_AT(L->items, cl_item, i);
        if (it->kind == CL_ITEM_NODE && it->target == CL_NONE)
            it->target = prism__cl_map_get(L, &L->node_ids, prism__cl_s(L, it->url));
        if (it->kind != CL_ITEM_GEOMETRY)
            continue;
        it->target = prism__cl_map_get(L, &L->geometry_ids, prism__cl_s(L, it->url));
        if (it->target != CL_NONE)
            groups += CL_AT(L->geometries, cl_geometry, it->target).groups_count;
    }
    if (groups > UINT32_MAX || !prism__vec_grow(&L->item_mats, sizeof(uint32_t), groups + 1)) {
        prism__cl_oom(L);
        return false;
    }
    size_t at = 0;
    for (long long i = 0; i < n; i++) {
        cl_item *it = &CL_AT(L->items, cl_item, i);
        if (it->kind != CL_ITEM_GEOMETRY || it->target == CL_NONE)
            continue;
        it->mat_first = (uint32_t)at;
        at += CL_AT(L->geometries, cl_geometry, it->target).groups_count;
    }
    L->item_mats.count = groups;
    uint32_t *mats = L->item_mats.data;
#pragma omp parallel for schedule(dynamic, 256) if (n > 10000)
    for (long long i = 0; i < n; i++) {
        const cl_item *it = &CL_AT(L->items, cl_item, i);
        if (it->kind != CL_ITEM_GEOMETRY || it->target == CL_NONE)
            continue;
        const cl_geometry *geo = &CL_AT(L->geometries, cl_geometry, it->target);
        for (uint32_t k = 0; k < geo->groups_count; k++)
            mats[it->mat_first + k] = bound_material(L, it, geo->groups[k].material, NULL);
    }
    return true;
}

/* The walk reaches an instance_geometry: fail when it names no geometry,
 * warn (once per item, in walk order) for each material the file lacks. */
static bool resolve_geometry(prism__cl *L, cl_item *it)
{
    if (it->target == CL_NONE) {
        prism__cl_fail(L, PRISM_ERROR_PARSE, it->pos, "instance_geometry",
                       "no <geometry id=\"%s\">", prism__cl_s(L, it->url));
        return false;
    }
    const cl_geometry *geo = &CL_AT(L->geometries, cl_geometry, it->target);
    const uint32_t *mats = CL_PTR(L->item_mats, uint32_t, it->mat_first);
    for (uint32_t i = 0; i < geo->groups_count; i++) {
        const cl_binding *b = NULL;
        if (mats[i] != CL_NONE)
            continue;
        bound_material(L, it, geo->groups[i].material, &b);
        /* A missing material costs only the material (files in the wild,
         * such as assimp's cube_emptyTags.dae, do this): warn, go on. */
        if (b)
            prism__cl_log(L, PRISM_LOG_WARNING,
                          "%s:%u:%u: <instance_material>: no <material id=\"%s\">; the "
                          "triangles get no material",
                          L->file, b->pos.line, b->pos.col, prism__cl_s(L, b->target));
    }
    return true;
}

/* resolve_geometries has looked every instance_node up already */
static uint32_t item_node(prism__cl *L, cl_item *it)
{
    if (it->kind == CL_ITEM_NODE && it->target == CL_NONE)
        prism__cl_fail(L, PRISM_ERROR_PARSE, it->pos, "instance_node", "no <node id=\"%s\">",
                       prism__cl_s(L, it->url));
    return it->target;
}

static const char *node_label(const prism__cl *L, const cl_node *n)
{
    return n->name ? prism__cl_s(L, n->name) : n->id ? prism__cl_s(L, n->id) : "node";
}

/* First walk: resolve, count (memoised), and find cycles and depth. */
static bool count_node(prism__cl *L, uint32_t ni, unsigned depth, cl_pos via)
{
    cl_node *n = node_at(L, ni);
    if (n->state == 2)
        return true;
    if (n->state == 1) {
        prism__cl_fail(L, PRISM_ERROR_PARSE, via, "instance_node",
                       "cycle: node \"%s\" is placed inside itself", node_label(L, n));
        return false;
    }
    if (depth > L->max_depth) {
        prism__cl_fail(L, PRISM_ERROR_LIMIT, via, "instance_node",
                       "nodes and instances nested deeper than %u", L->max_depth);
        return false;
    }
    n->state = 1;
    uint64_t tri = 0, vert = 0, visits = 1, solids = 0;
    for (uint32_t i = n->first_item; i != CL_NONE; i = CL_AT(L->items, cl_item, i).next) {
        cl_item *it = &CL_AT(L->items, cl_item, i);
        if (it->kind == CL_ITEM_GEOMETRY) {
            if (!resolve_geometry(L, it))
                return false;
            const cl_geometry *g = &CL_AT(L->geometries, cl_geometry, it->target);
            tri = sat_add(tri, g->triangles);
            vert = sat_add(vert, g->vertices);
            visits = sat_add(visits, 1);
            solids = sat_add(solids, 1);
            continue;
        }
        uint32_t c = item_node(L, it);
        if (c == CL_NONE || !count_node(L, c, depth + 1, it->pos))
            return false;
        const cl_node *cn = node_at(L, c);
        tri = sat_add(tri, cn->sub_triangles);
        vert = sat_add(vert, cn->sub_vertices);
        visits = sat_add(visits, cn->sub_visits);
        solids = sat_add(solids, cn->sub_solids);
    }
    n = node_at(L, ni);
    n->state = 2;
    n->sub_triangles = tri, n->sub_vertices = vert, n->sub_visits = visits, n->sub_solids = solids;
    return true;
}

/* One placed geometry, written to the world arrays after the walk. */
typedef struct cl_job {
    double m[12]; /* the top three rows of the world transform */
    uint32_t geometry, mat_first, solid, outer, surface;
    size_t vert, tri;
    float lo[3], hi[3]; /* this placement's box */
} cl_job;

static void grow_box(float *lo, float *hi, const float *p)
{
    for (int k = 0; k < 3; k++) {
        lo[k] = p[k] < lo[k] ? p[k] : lo[k];
        hi[k] = p[k] > hi[k] ? p[k] : hi[k];
    }
}

/* A mirroring transform (negative determinant) turns counter-clockwise
 * triangles clockwise: swap two corners so normals still point outwards. */
static bool mirrors(const double *m)
{
    double det = m[0] * (m[5] * m[10] - m[6] * m[9]) - m[1] * (m[4] * m[10] - m[6] * m[8]) +
                 m[2] * (m[4] * m[9] - m[5] * m[8]);
    return det < 0;
}

static void write_vertices(prism_scene *S, const cl_geometry *g, cl_job *j)
{
    const double *m = j->m;
    float *out = S->positions + 3 * j->vert;
    for (uint32_t v = 0; v < g->vertices; v++) {
        const float *p = g->positions + 3 * (size_t)v;
        double x = p[0], y = p[1], z = p[2];
        float *o = out + 3 * (size_t)v;
        o[0] = (float)(m[0] * x + m[1] * y + m[2] * z + m[3]);
        o[1] = (float)(m[4] * x + m[5] * y + m[6] * z + m[7]);
        o[2] = (float)(m[8] * x + m[9] * y + m[10] * z + m[11]);
        if (g->all_used)
            grow_box(j->lo, j->hi, o);
    }
}

/* The box grows per vertex when every vertex is used (the usual case), else
 * per triangle corner: unused or non-finite vertices must not stretch it. */
static void write_triangles(prism_scene *S, const cl_geometry *g, const uint32_t *mats, cl_job *j)
{
    uint32_t base = (uint32_t)j->vert;
    const int corner[2][3] = {{0, 1, 2}, {0, 2, 1}};
    int flip = mirrors(j->m);
    size_t o = j->tri;
    for (uint32_t k = 0; k < g->groups_count; k++) {
        const cl_group *gr = &g->groups[k];
        for (uint32_t t = gr->first; t < gr->first + gr->count; t++, o++) {
            for (int c = 0; c < 3; c++) {
                S->indices[3 * o + c] = g->tris[3 * (size_t)t + corner[flip][c]] + base;
                if (!g->all_used)
                    grow_box(j->lo, j->hi, S->positions + 3 * (size_t)S->indices[3 * o + c]);
            }
            S->triangle_solid[o] = j->solid;
            S->triangle_material_inner[o] = mats[k];
            S->triangle_material_outer[o] = j->outer;
            S->triangle_surface[o] = j->surface;
        }
    }
}

/* The placements write disjoint parts of the arrays: big scenes use every
 * core (OpenMP); the box is reduced afterwards, in order. */
static void write_world(prism__cl *L, prism_scene *S, cl_job *jobs, size_t n,
                        const uint32_t *surface_of)
{
    long long count = (long long)n;
#pragma omp parallel for schedule(dynamic, 16) if (S->triangles_count > 100000)
    for (long long i = 0; i < count; i++) {
        cl_job *j = &jobs[i];
        const cl_geometry *g = &CL_AT(L->geometries, cl_geometry, j->geometry);
        j->surface = surface_of[j->solid];
        for (int k = 0; k < 3; k++)
            j->lo[k] = FLT_MAX, j->hi[k] = -FLT_MAX;
        write_vertices(S, g, j);
        write_triangles(S, g, CL_PTR(L->item_mats, uint32_t, j->mat_first), j);
    }
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < 3; k++) {
            S->bbox_min[k] = jobs[i].lo[k] < S->bbox_min[k] ? jobs[i].lo[k] : S->bbox_min[k];
            S->bbox_max[k] = jobs[i].hi[k] > S->bbox_max[k] ? jobs[i].hi[k] : S->bbox_max[k];
        }
}

/* The top three rows of the world transform m, after the matrix of the
 * geometry's nested <asset> scope when it has one (geometry/collada/asset.c). */
static void placement(const prism__cl *L, const cl_geometry *g, const double *m, double out[12])
{
    const cl_scope *sc = g->scope < L->scopes.count ? CL_PTR(L->scopes, cl_scope, g->scope) : NULL;
    memcpy(out, m, 12 * sizeof *out);
    if (!sc || sc->identity)
        return;
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++)
            out[4 * r + c] = m[4 * r] * sc->c[c] + m[4 * r + 1] * sc->c[3 + c] +
                             m[4 * r + 2] * sc->c[6 + c];
}

static uint32_t place_geometry(flat *f, const cl_item *it, const double *m, uint32_t ni,
                               uint32_t pv, uint32_t parent)
{
    prism__cl *L = f->L;
    const cl_geometry *g = &CL_AT(L->geometries, cl_geometry, it->target);
    const uint32_t *mats = CL_PTR(L->item_mats, uint32_t, it->mat_first);
    cl_node *n = node_at(L, ni);
    size_t path = f->visit == CL_NONE ? 0 : CL_AT(f->visits, cl_visit, f->visit).len;
    f->name_at[f->solid] = f->name_bytes; /* name, NUL, path, NUL */
    f->name_bytes += strlen(node_label(L, n)) + path + 2;
    if (f->name_bytes > CL_MAX_NAME_BYTES) {
        prism__cl_fail(L, PRISM_ERROR_LIMIT, it->pos, "instance_geometry",
                       "solid names and paths would take more than %zu MB",
                       CL_MAX_NAME_BYTES >> 20);
        return CL_NONE;
    }
    uint32_t s = (uint32_t)f->solid++;
    prism_solid *so = &f->S->solids[s];
    f->visit_of[s] = f->visit; /* name and path are written after the walk */
    so->copy_number = (int)n->copies++;
    so->parent = parent;
    so->material = g->groups_count ? mats[0] : PRISM_NONE;
    so->first_triangle = (uint32_t)f->tri;
    so->triangle_count = g->triangles;
    f->holder[s] = ni;
    f->pv[s] = pv;
    cl_job *j = &f->jobs[s];
    placement(L, g, m, j->m);
    j->geometry = it->target;
    j->mat_first = it->mat_first;
    j->solid = s;
    j->outer = parent != CL_NONE ? f->S->solids[parent].material : PRISM_NONE;
    j->vert = f->vert;
    j->tri = f->tri;
    f->vert += g->vertices;
    f->tri += g->triangles;
    return s;
}

static bool visit_push(flat *f, uint32_t ni)
{
    const cl_visit *up = f->visit == CL_NONE ? NULL : &CL_AT(f->visits, cl_visit, f->visit);
    size_t len = (up && up->len ? up->len + 1 : 0) + strlen(node_label(f->L, node_at(f->L, ni)));
    cl_visit *v = prism__vec_push(&f->visits, sizeof *v);
    if (!v || f->visits.count > UINT32_MAX) {
        prism__cl_oom(f->L);
        return false;
    }
    *v = (cl_visit){f->visit, ni, len};
    f->visit = (uint32_t)(f->visits.count - 1);
    return true;
}

/* Names and paths of the solids, on all cores, into one block at the
 * offsets the walk gave them: solid 0's name is its start, and
 * prism_scene_free frees it whole. A malloc per name and per path (two
 * per solid) cost a large scene's first load far more than the names'
 * bytes, most of it system time on many cores (glibc growing one arena
 * per thread while the others fault); the walk, which must run in order,
 * makes none either. */
static void name_solids(flat *f)
{
    prism__cl *L = f->L;
    const cl_visit *vis = f->visits.data;
    prism_solid *solids = f->S->solids;
    long long n = (long long)f->solid;
    char *text = n ? prism__big_alloc(f->name_bytes) : NULL;
    if (n && !text) {
        prism__cl_oom(L);
        return;
    }
#pragma omp parallel for schedule(dynamic, 1024) if (n > 10000)
    for (long long i = 0; i < n; i++) {
        prism_solid *so = &solids[i];
        uint32_t v = f->visit_of[i];
        const char *label = node_label(L, node_at(L, f->holder[i]));
        size_t k = strlen(label) + 1, len = v == CL_NONE ? 0 : vis[v].len;
        so->name = memcpy(text + f->name_at[i], label, k);
        so->path = so->name + k;
        so->path[len] = 0;
        for (; v != CL_NONE; v = vis[v].parent) {
            const char *part = node_label(L, node_at(L, vis[v].node));
            size_t m = strlen(part), p = vis[v].len - m;
            memcpy(so->path + p, part, m);
            if (p)
                so->path[p - 1] = '/';
        }
    }
}

/* Second walk: the geometries of a node first (the first one is the solid
 * that encloses the node's children), then its children in order. */
static bool place(flat *f, uint32_t ni, const double *pm, uint32_t parent, uint32_t pv)
{
    prism__cl *L = f->L;
    double m[16];
    cl_node *n = node_at(L, ni);
    prism__cl_mat_mul(pm, n->m, m);
    uint32_t visit = f->visit;
    if (!n->is_scene && !visit_push(f, ni))
        return false;
    uint32_t own = parent;
    for (uint32_t i = n->first_item; i != CL_NONE; i = CL_AT(L->items, cl_item, i).next) {
        const cl_item *it = &CL_AT(L->items, cl_item, i);
        if (it->kind != CL_ITEM_GEOMETRY)
            continue;
        uint32_t s = place_geometry(f, it, m, ni, pv, parent);
        if (s == CL_NONE)
            return false;
        if (own == parent)
            own = s;
    }
    for (uint32_t i = n->first_item; i != CL_NONE; i = CL_AT(L->items, cl_item, i).next) {
        const cl_item *it = &CL_AT(L->items, cl_item, i);
        if (it->kind == CL_ITEM_GEOMETRY)
            continue;
        uint32_t c = it->target;
        if (!place(f, c, m, own, it->kind == CL_ITEM_CHILD ? c : ni))
            return false;
    }
    f->visit = visit;
    return true;
}

static uint32_t find_root(prism__cl *L)
{
    if (L->scene_url) {
        uint32_t r = prism__cl_map_get(L, &L->scene_ids, prism__cl_s(L, L->scene_url));
        if (r == CL_NONE)
            prism__cl_fail(L, PRISM_ERROR_PARSE, L->scene_pos, "instance_visual_scene",
                           "no <visual_scene id=\"%s\">", prism__cl_s(L, L->scene_url));
        return r;
    }
    return L->scenes.count ? CL_AT(L->scenes, uint32_t, 0) : CL_NONE;
}

static bool check_totals(prism__cl *L, const cl_node *root)
{
    uint64_t max = L->desc && L->desc->max_triangles ? L->desc->max_triangles : UINT32_MAX;
    cl_pos at = root->pos;
    if (root->sub_visits > CL_MAX_VISITS)
        prism__cl_fail(L, PRISM_ERROR_LIMIT, at, "visual_scene",
                       "the scene places more than %llu nodes", (unsigned long long)CL_MAX_VISITS);
    else if (root->sub_triangles > max)
        prism__cl_fail(L, PRISM_ERROR_LIMIT, at, "visual_scene",
                       "the scene places %llu world triangles, more than the limit %llu",
                       (unsigned long long)root->sub_triangles, (unsigned long long)max);
    else if (root->sub_solids > max)
        prism__cl_fail(L, PRISM_ERROR_LIMIT, at, "visual_scene",
                       "the scene places %llu solids, more than the limit %llu",
                       (unsigned long long)root->sub_solids, (unsigned long long)max);
    else if (root->sub_vertices > UINT32_MAX || root->sub_solids >= UINT32_MAX)
        prism__cl_fail(L, PRISM_ERROR_LIMIT, at, "visual_scene",
                       "the scene places more than 2^32-1 vertices or solids");
    return !L->result;
}

static bool allocate(prism_scene *S, const cl_node *root, const prism_load_desc *desc)
{
    size_t t = root->sub_triangles, v = root->sub_vertices, s = root->sub_solids;
    S->triangles_count = t;
    S->vertices_count = v;
    S->solids_count = s;
    if (desc && desc->arrays && desc->arrays->allocate && desc->arrays->release)
        S->arrays_allocator = *desc->arrays;
    S->positions = prism__scene_array(S, 3 * v * sizeof(float));
    S->indices = prism__scene_array(S, 3 * t * sizeof(uint32_t));
    S->triangle_solid = prism__scene_array(S, t * sizeof(uint32_t));
    S->triangle_material_inner = prism__scene_array(S, t * sizeof(uint32_t));
    S->triangle_material_outer = prism__scene_array(S, t * sizeof(uint32_t));
    S->triangle_surface = prism__scene_array(S, t * sizeof(uint32_t));
    S->solids = calloc(s + 1, sizeof *S->solids);
    return S->positions && S->indices && S->triangle_solid && S->triangle_material_inner &&
           S->triangle_material_outer && S->triangle_surface && S->solids;
}

prism_result prism__cl_build_scene(prism__cl *L, prism_scene *S)
{
    for (int k = 0; k < 3; k++)
        S->bbox_min[k] = FLT_MAX, S->bbox_max[k] = -FLT_MAX;
    prism__cl_apply_scopes(L);
    uint32_t root = find_root(L);
    if (root == CL_NONE || !resolve_geometries(L))
        return L->result;
    if (!count_node(L, root, 0, node_at(L, root)->pos) || !check_totals(L, node_at(L, root)))
        return L->result;
    prism__cl_trace(L, "count");
    const cl_node *r = node_at(L, root);
    flat f = {.L = L, .S = S, .visit = CL_NONE};
    f.holder = malloc((r->sub_solids + 1) * sizeof *f.holder);
    f.pv = malloc((r->sub_solids + 1) * sizeof *f.pv);
    f.visit_of = malloc((r->sub_solids + 1) * sizeof *f.visit_of);
    f.name_at = malloc((r->sub_solids + 1) * sizeof *f.name_at);
    f.jobs = prism__big_alloc((r->sub_solids + 1) * sizeof *f.jobs);
    if (!f.holder || !f.pv || !f.visit_of || !f.name_at || !f.jobs || !allocate(S, r, L->desc)) {
        prism__cl_oom(L);
    } else {
        prism__cl_trace(L, "allocate");
        double unit[16] = {L->unit, 0, 0, 0, 0, L->unit, 0, 0, 0, 0, L->unit, 0, 0, 0, 0, 1};
        bool placed = place(&f, root, unit, CL_NONE, root);
        prism__cl_trace(L, "place");
        if (placed)
            name_solids(&f);
        prism__cl_trace(L, "name solids");
        uint32_t *surface_of = placed ? malloc((f.solid + 1) * sizeof *surface_of) : NULL;
        if (placed && !surface_of)
            prism__cl_oom(L);
        for (size_t i = 0; surface_of && i < f.solid; i++)
            surface_of[i] = PRISM_NONE;
        if (placed && !L->result)
            prism__cl_build_surfaces(L, S, f.holder, f.pv, surface_of);
        prism__cl_trace(L, "surfaces");
        if (placed && !L->result)
            write_world(L, S, f.jobs, f.solid, surface_of);
        prism__cl_trace(L, "write world");
        free(surface_of);
    }
    L->stats.instances = f.solid;
    free(f.holder);
    free(f.pv);
    free(f.visit_of);
    free(f.name_at);
    free(f.jobs);
    prism__vec_free(&f.visits);
    return L->result;
}
