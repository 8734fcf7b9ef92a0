/* The COLLADA loader's </mesh> step: cut the positions out of their source
 * through the accessor (two components, params X and Y, get z = 0 and a
 * warning), bounds-check every index, and turn triangles,
 * polylists, polygons (with holes), strips and fans into one triangle list
 * per geometry, grouped by material symbol. Vertices with NaN or infinite
 * coordinates are kept but every triangle using one is dropped (counted in
 * skipped.nonfinite_vertices, with a warning): one bad vertex should not
 * cost the whole detector. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

typedef struct build {
    prism__cl *L;
    const float *pos;
    uint32_t nverts;
    const uint8_t *bad; /* per vertex, NULL when all are finite */
    prism__vec tris;    /* uint32 */
} build;

static cl_source *find_source(prism__cl *L, cl_str id)
{
    const char *want = prism__cl_s(L, id);
    for (size_t i = 0; i < L->mesh.sources.count; i++) {
        cl_source *s = &CL_AT(L->mesh.sources, cl_source, i);
        if (s->id && strcmp(prism__cl_s(L, s->id), want) == 0)
            return s;
    }
    return NULL;
}

/* Positions of two components: an accessor of stride 2 whose params are
 * X and Y, as some exporters write a flat mesh. */
static bool flat_xy(const cl_source *s)
{
    return s->has_accessor && s->acc_stride == 2 && s->acc_params == 2 && s->acc_names[0] == 'X' &&
           s->acc_names[1] == 'Y';
}

static bool check_accessor(prism__cl *L, const cl_source *s, size_t count, size_t stride,
                           size_t off, size_t comps)
{
    size_t n = s->data.count;
    if (stride < comps) {
        prism__cl_fail(L, PRISM_ERROR_PARSE, s->acc_pos, "accessor",
                       "stride=%zu: a position needs 3 values (or 2, with params X and Y)", stride);
        return false;
    }
    if (count && (n < comps || off > n - comps || count - 1 > (n - comps - off) / stride)) {
        prism__cl_fail(L, PRISM_ERROR_PARSE, s->has_accessor ? s->acc_pos : s->pos,
                       s->has_accessor ? "accessor" : "source",
                       "count=%zu stride=%zu offset=%zu reads past the %zu numbers of its "
                       "<float_array>",
                       count, stride, off, n);
        return false;
    }
    if (count > UINT32_MAX) {
        prism__cl_fail(L, PRISM_ERROR_LIMIT, s->acc_pos, "accessor",
                       "count=%zu: more than 2^32-1 vertices", count);
        return false;
    }
    return true;
}

static bool extract_positions(prism__cl *L, cl_geometry *g)
{
    cl_mesh *m = &L->mesh;
    if (!m->position_ref) {
        prism__cl_fail(L, PRISM_ERROR_PARSE, m->vertices_pos, "vertices",
                       "no <input semantic=\"POSITION\">");
        return false;
    }
    cl_source *s = find_source(L, m->position_ref);
    if (!s) {
        prism__cl_fail(L, PRISM_ERROR_PARSE, m->position_pos, "input",
                       "no <source id=\"%s\"> in this mesh", prism__cl_s(L, m->position_ref));
        return false;
    }
    if (!prism__cl_source_settle(L, s))
        return false;
    size_t stride = s->has_accessor ? s->acc_stride : 3;
    size_t count = s->has_accessor ? s->acc_count : s->data.count / 3;
    size_t off = s->has_accessor ? s->acc_offset : 0;
    size_t comps = flat_xy(s) ? 2 : 3;
    if (!check_accessor(L, s, count, stride, off, comps))
        return false;
    if (comps == 2)
        prism__cl_quirk(L, CL_QUIRK_FLAT_POSITIONS, s->acc_pos, "accessor",
                        "stride=2 with params X and Y: %zu positions read with z = 0", count);
    if (comps == 3 && stride == 3 && off == 0 && count * 3 == s->data.count && count) {
        g->positions = s->data.data; /* the common case: take the array as is */
        s->data.data = NULL;
        s->data.count = s->data.cap = 0;
    } else if (count) {
        float *p = malloc(count * 3 * sizeof *p);
        if (!p) {
            prism__cl_oom(L);
            return false;
        }
        const float *d = s->data.data;
        for (size_t i = 0; i < count; i++) {
            const float *v = d + off + i * stride;
            p[3 * i] = v[0];
            p[3 * i + 1] = v[1];
            p[3 * i + 2] = comps == 3 ? v[2] : 0.0f;
        }
        g->positions = p;
    }
    g->vertices = (uint32_t)count;
    return true;
}

static uint8_t *find_nonfinite(prism__cl *L, const cl_geometry *g)
{
    size_t bad = 0;
    uint8_t *mask = NULL;
    for (uint32_t i = 0; i < g->vertices; i++) {
        const float *p = g->positions + 3 * (size_t)i;
        if (isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2]))
            continue;
        if (!mask && !(mask = calloc(g->vertices, 1))) {
            prism__cl_oom(L);
            return NULL;
        }
        mask[i] = 1;
        bad++;
    }
    if (bad) {
        L->skipped.nonfinite_vertices += bad;
        prism__cl_log(L, PRISM_LOG_WARNING,
                      "%s:%u:%u: <geometry id=\"%s\">: %zu vertices with NaN or infinite "
                      "coordinates; the triangles using them are dropped",
                      L->file, g->pos.line, g->pos.col, prism__cl_s(L, g->id), bad);
    }
    return mask;
}

static bool emit(build *b, uint32_t x, uint32_t y, uint32_t z)
{
    if (x == y || y == z || x == z) {
        b->L->skipped.degenerate_polygons++;
        return true;
    }
    if (b->bad && (b->bad[x] | b->bad[y] | b->bad[z]))
        return true;
    if (b->tris.count + 3 > b->tris.cap && !prism__vec_grow(&b->tris, 4, b->tris.count + 3)) {
        prism__cl_oom(b->L);
        return false;
    }
    uint32_t *t = &CL_AT(b->tris, uint32_t, b->tris.count);
    t[0] = x, t[1] = y, t[2] = z;
    b->tris.count += 3;
    return true;
}

/* One polygon: `rings` ring sizes (the first is the outer ring). */
static bool polygon(build *b, const uint32_t *idx, const uint32_t *sizes, size_t rings)
{
    size_t total = 0;
    for (size_t r = 0; r < rings; r++)
        total += sizes[r] & ~CL_HOLE;
    uint32_t outer = sizes[0] & ~CL_HOLE;
    if (outer < 3) {
        b->L->skipped.degenerate_polygons++;
        return true;
    }
    if (rings == 1 && outer == 3)
        return emit(b, idx[0], idx[1], idx[2]);
    if (b->bad)
        for (size_t i = 0; i < total; i++)
            if (b->bad[idx[i]])
                return true;
    size_t max = total + 2 * rings;
    if (!prism__vec_grow(&b->tris, 4, b->tris.count + 3 * max)) {
        prism__cl_oom(b->L);
        return false;
    }
    size_t t = prism__triangulate(&b->L->tri, b->pos, idx, sizes, rings,
                                  &CL_AT(b->tris, uint32_t, b->tris.count));
    if (t == SIZE_MAX) {
        prism__cl_oom(b->L);
        return false;
    }
    if (t == 0)
        b->L->skipped.degenerate_polygons++;
    b->tris.count += 3 * t;
    return true;
}

static bool strip_or_fan(build *b, const uint32_t *v, uint32_t n, bool fan)
{
    if (n < 3) {
        b->L->skipped.degenerate_polygons++;
        return true;
    }
    for (uint32_t i = 0; i + 2 < n; i++) {
        bool ok = fan     ? emit(b, v[0], v[i + 1], v[i + 2])
                  : i & 1 ? emit(b, v[i + 1], v[i], v[i + 2])
                          : emit(b, v[i], v[i + 1], v[i + 2]);
        if (!ok)
            return false;
    }
    return true;
}

static bool prim_triangles(build *b, const cl_prim *pr)
{
    prism__cl *L = b->L;
    const uint32_t *idx = CL_PTR(L->mesh.idx, uint32_t, pr->idx_first);
    const uint32_t *r = CL_PTR(L->mesh.rings, uint32_t, pr->ring_first);
    if (pr->kind == CL_TRIANGLES) {
        for (size_t i = 0; i + 2 < pr->idx_count; i += 3)
            if (!emit(b, idx[i], idx[i + 1], idx[i + 2]))
                return false;
        return true;
    }
    size_t at = 0;
    for (size_t i = 0; i < pr->ring_count;) {
        size_t j = i + 1, n = r[i] & ~CL_HOLE;
        while (pr->kind == CL_POLYGONS && j < pr->ring_count && (r[j] & CL_HOLE))
            n += r[j++] & ~CL_HOLE;
        bool ok = pr->kind == CL_TRISTRIPS || pr->kind == CL_TRIFANS
                      ? strip_or_fan(b, idx + at, r[i], pr->kind == CL_TRIFANS)
                      : polygon(b, idx + at, r + i, j - i);
        if (!ok)
            return false;
        at += n;
        i = j;
    }
    return true;
}

static bool check_prim(prism__cl *L, const cl_prim *pr, uint32_t nverts)
{
    cl_mesh *m = &L->mesh;
    if (strcmp(prism__cl_s(L, pr->vertex_ref), prism__cl_s(L, m->vertices_id)) != 0 ||
        !m->has_vertices) {
        prism__cl_fail(L, PRISM_ERROR_PARSE, pr->vertex_pos, "input",
                       "no <vertices id=\"%s\"> in this mesh", prism__cl_s(L, pr->vertex_ref));
        return false;
    }
    const uint32_t *idx = CL_PTR(m->idx, uint32_t, pr->idx_first);
    for (size_t i = 0; i < pr->idx_count; i++) {
        if (idx[i] >= nverts) {
            prism__cl_fail(L, PRISM_ERROR_PARSE, pr->p_pos, "p",
                           "index %u is out of range: the mesh has %u vertices", idx[i], nverts);
            return false;
        }
    }
    return true;
}

static bool add_group(prism__cl *L, prism__vec *groups, cl_str material, size_t first, size_t end)
{
    if (end == first)
        return true;
    cl_group *gr = prism__vec_push(groups, sizeof *gr);
    if (!gr) {
        prism__cl_oom(L);
        return false;
    }
    *gr = (cl_group){material, (uint32_t)first, (uint32_t)(end - first)};
    return true;
}

static bool all_used(const cl_geometry *g)
{
    uint8_t *seen = calloc(g->vertices + 1, 1);
    if (!seen)
        return false; /* only an optimisation */
    uint32_t n = 0;
    for (size_t i = 0; i < 3 * (size_t)g->triangles; i++) {
        n += !seen[g->tris[i]];
        seen[g->tris[i]] = 1;
    }
    free(seen);
    return n == g->vertices;
}

static void build_triangles(prism__cl *L, cl_geometry *g, const uint8_t *bad)
{
    build b = {L, g->positions, g->vertices, bad, {0}};
    prism__vec groups = {0};
    /* Room for the likely triangles at once (a list's own, two per quad
     * else), not a realloc at each doubling: 40,000 small meshes in the
     * --unique detector. More are grown as they come. */
    size_t likely = 0;
    for (size_t i = 0; i < L->mesh.prims.count; i++) {
        const cl_prim *pr = &CL_AT(L->mesh.prims, cl_prim, i);
        likely += pr->kind == CL_TRIANGLES ? pr->idx_count : 2 * pr->idx_count;
    }
    if (!prism__vec_grow(&b.tris, 4, likely) ||
        !prism__vec_grow(&groups, sizeof(cl_group), L->mesh.prims.count)) {
        prism__cl_oom(L);
        prism__vec_free(&b.tris);
        return;
    }
    for (size_t i = 0; i < L->mesh.prims.count; i++) {
        const cl_prim *pr = &CL_AT(L->mesh.prims, cl_prim, i);
        size_t first = b.tris.count / 3;
        if (!pr->has_vertex)
            continue; /* no <p> either (checked at <p>): nothing to draw */
        if (!check_prim(L, pr, g->vertices) || !prim_triangles(&b, pr) ||
            !add_group(L, &groups, pr->material, first, b.tris.count / 3))
            break;
    }
    if (!L->result && b.tris.count / 3 > UINT32_MAX)
        prism__cl_fail(L, PRISM_ERROR_LIMIT, g->pos, "geometry", "more than 2^32-1 triangles");
    if (L->result) {
        prism__vec_free(&b.tris);
        prism__vec_free(&groups);
        return;
    }
    g->triangles = (uint32_t)(b.tris.count / 3);
    g->tris = b.tris.count ? realloc(b.tris.data, b.tris.count * 4) : NULL;
    if (!g->tris)
        free(b.tris.data);
    g->groups = groups.data;
    g->groups_count = (uint32_t)groups.count;
    g->all_used = all_used(g);
    L->stats.unique_triangles += g->triangles;
    L->stats.unique_vertices += g->vertices;
}

static void clear_mesh(cl_mesh *m)
{
    for (size_t i = 0; i < m->sources.count; i++)
        prism__vec_free(&CL_AT(m->sources, cl_source, i).data);
    m->sources.count = m->prims.count = m->idx.count = m->rings.count = 0;
    m->has_vertices = false;
    m->vertices_id = m->position_ref = 0;
}

void prism__cl_mesh_finish(prism__cl *L)
{
    if (L->cur_geometry == CL_NONE) {
        clear_mesh(&L->mesh);
        return;
    }
    cl_geometry *g = &CL_AT(L->geometries, cl_geometry, L->cur_geometry);
    if (L->mesh.prims.count && !L->mesh.has_vertices) {
        const cl_prim *pr = &CL_AT(L->mesh.prims, cl_prim, 0);
        prism__cl_fail(L, PRISM_ERROR_PARSE, pr->pos, prism__cl_tag_name(pr->tag),
                       "the mesh has no <vertices>");
    }
    if (!L->result && L->mesh.prims.count && extract_positions(L, g)) {
        uint8_t *bad = find_nonfinite(L, g);
        if (!L->result)
            build_triangles(L, g, bad);
        free(bad);
    }
    clear_mesh(&L->mesh);
}

void prism__cl_geometry_free(cl_geometry *g)
{
    free(g->positions);
    free(g->tris);
    free(g->groups);
}

void prism__cl_mesh_free(cl_mesh *m)
{
    clear_mesh(m);
    prism__vec_free(&m->sources);
    prism__vec_free(&m->prims);
    prism__vec_free(&m->idx);
    prism__vec_free(&m->rings);
}
