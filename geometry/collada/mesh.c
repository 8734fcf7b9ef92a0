/* The COLLADA loader's geometry stage: <source>/<float_array>/<accessor>,
 * <vertices>, and the primitives, read as they stream by. Only the VERTEX
 * indices of <p> are kept (the other inputs are skipped while parsing), so
 * memory follows the output. At </mesh> the positions are cut out of their
 * source, every index is bounds-checked, and the primitives become one
 * triangle list per geometry, grouped by material symbol. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static cl_source *last_source(prism__cl *L)
{
    return L->mesh.sources.count ? &CL_AT(L->mesh.sources, cl_source, L->mesh.sources.count - 1)
                                 : NULL;
}

static cl_prim *last_prim(prism__cl *L)
{
    return L->mesh.prims.count ? &CL_AT(L->mesh.prims, cl_prim, L->mesh.prims.count - 1) : NULL;
}

static bool is_prim(unsigned tag)
{
    return tag == CL_T_TRIANGLES || tag == CL_T_POLYLIST || tag == CL_T_POLYGONS ||
           tag == CL_T_TRISTRIPS || tag == CL_T_TRIFANS;
}

static void geometry_start(prism__cl *L, const XML_Char **atts)
{
    cl_geometry *g = prism__vec_push(&L->geometries, sizeof *g);
    if (!g) {
        prism__cl_oom(L);
        return;
    }
    memset(g, 0, sizeof *g);
    const char *id = prism__cl_attr(atts, "id"), *name = prism__cl_attr(atts, "name");
    g->pos = prism__cl_top_pos(L);
    g->scope = L->stack[L->depth - 1].scope;
    if (id)
        g->id = prism__cl_str(L, id, strlen(id));
    if (name)
        g->name = prism__cl_str(L, name, strlen(name));
    L->cur_geometry = (uint32_t)(L->geometries.count - 1);
    L->geometry_has_mesh = false;
    L->stats.geometries++;
    prism__cl_activate(L);
}

/* A float_array's text is all read (or kept for later): convert what
 * waits, then compare the count with the text. Exporters write counts that
 * disagree with the text: the fewer of the two is read (the accessor's
 * bounds are checked against it later), with a warning; an array left much
 * smaller than its count reserved gives the memory back. An array with a
 * bad number is not compared: reading it fails. */
static bool array_done(prism__cl *L, cl_source *s)
{
    if (!s->has_array || s->settled)
        return true;
    if (!prism__cl_source_convert(L, s))
        return false;
    s->settled = true;
    size_t have = s->data.count, want = s->declared;
    if (s->err || want == SIZE_MAX || want == have)
        return true;
    size_t read = have < want ? have : want;
    prism__cl_quirk(L, CL_QUIRK_FLOAT_ARRAY_COUNT, s->fa_pos, "float_array",
                    "count=%zu but the text holds %zu numbers: %s%zu are read", want, have,
                    have < want ? "the " : "the first ", read);
    s->data.count = read;
    if (s->data.cap > 2 * read + 64) {
        void *p = read ? realloc(s->data.data, read * sizeof(float)) : NULL;
        if (p || !read) {
            if (!read)
                free(s->data.data);
            s->data.data = p;
            s->data.cap = read;
        }
    }
    return true;
}

bool prism__cl_source_settle(prism__cl *L, cl_source *s)
{
    if (!array_done(L, s))
        return false;
    if (s->err) {
        prism__cl_fail(L, PRISM_ERROR_PARSE, s->err_pos, "float_array", "%s",
                       prism__cl_s(L, s->err));
        return false;
    }
    return true;
}

static void float_array_start(prism__cl *L, const XML_Char **atts)
{
    cl_source *s = last_source(L);
    size_t count = 0;
    bool has = prism__cl_attr_size(L, atts, "count", &count, "float_array");
    if (L->result || !array_done(L, s)) /* a second array in the source: the first is done */
        return;
    s->declared = has ? count : SIZE_MAX;
    s->fa_pos = prism__cl_top_pos(L);
    s->has_array = true;
    s->settled = false;
    /* Reserve what the count promises, up to 16 MB and up to what the file
     * can hold (a number takes a character and a separator): beyond that
     * the array grows as the numbers arrive. A count that promises more
     * than the text holds is forgiven when the array is read, so it must
     * not cost more than the text. The reserve is taken when the text
     * comes: an array whose text waits (lazy) costs nothing until read. */
    size_t reserve = count < ((size_t)1 << 22) ? count : ((size_t)1 << 22);
    if (reserve > L->total / 2 + 1)
        reserve = L->total / 2 + 1;
    prism__cl_text_source(L, (uint32_t)(L->mesh.sources.count - 1), has ? reserve : 0);
    prism__cl_activate(L);
}

static void accessor_start(prism__cl *L, const XML_Char **atts)
{
    cl_source *s = last_source(L);
    s->has_accessor = true;
    s->acc_pos = prism__cl_top_pos(L);
    s->acc_count = 0;
    s->acc_stride = 1;
    s->acc_offset = 0;
    prism__cl_attr_size(L, atts, "count", &s->acc_count, "accessor");
    prism__cl_attr_size(L, atts, "stride", &s->acc_stride, "accessor");
    prism__cl_attr_size(L, atts, "offset", &s->acc_offset, "accessor");
    s->acc_params = 0;
}

static void param_start(prism__cl *L, const XML_Char **atts)
{
    cl_source *s = last_source(L);
    if (!s->has_accessor)
        return;
    const char *name = prism__cl_attr(atts, "name");
    char c = '-';
    if (name)
        c = (name[0] == 'X' || name[0] == 'Y' || name[0] == 'Z') && !name[1] ? name[0] : '?';
    if (s->acc_params < sizeof s->acc_names)
        s->acc_names[s->acc_params] = c;
    s->acc_params++;
}

static void input_start(prism__cl *L, const XML_Char **atts, unsigned parent)
{
    const char *sem = prism__cl_attr(atts, "semantic"), *src = prism__cl_attr(atts, "source");
    cl_pos pos = prism__cl_top_pos(L);
    if (parent == CL_T_VERTICES) {
        if (sem && strcmp(sem, "POSITION") == 0) {
            L->mesh.position_ref = prism__cl_url(L, src, pos, "input");
            L->mesh.position_pos = pos;
        }
        return;
    }
    cl_prim *pr = last_prim(L);
    if (!pr)
        return;
    size_t off = 0;
    prism__cl_attr_size(L, atts, "offset", &off, "input");
    if (off >= (1u << 16)) {
        prism__cl_fail(L, PRISM_ERROR_LIMIT, pos, "input", "offset=%zu is beyond 65535", off);
        return;
    }
    if (off + 1 > pr->stride)
        pr->stride = (uint32_t)off + 1;
    if (sem && strcmp(sem, "VERTEX") == 0) {
        pr->has_vertex = true;
        pr->voff = (uint32_t)off;
        pr->vertex_ref = prism__cl_url(L, src, pos, "input");
        pr->vertex_pos = pos;
    }
}

static void prim_start(prism__cl *L, unsigned tag, const XML_Char **atts)
{
    cl_prim *pr = prism__vec_push(&L->mesh.prims, sizeof *pr);
    if (!pr) {
        prism__cl_oom(L);
        return;
    }
    memset(pr, 0, sizeof *pr);
    pr->tag = (uint8_t)tag;
    pr->kind = tag == CL_T_TRIANGLES   ? CL_TRIANGLES
               : tag == CL_T_POLYLIST  ? CL_POLYLIST
               : tag == CL_T_POLYGONS  ? CL_POLYGONS
               : tag == CL_T_TRISTRIPS ? CL_TRISTRIPS
                                       : CL_TRIFANS;
    pr->pos = prism__cl_top_pos(L);
    const char *mat = prism__cl_attr(atts, "material");
    if (mat)
        pr->material = prism__cl_str(L, mat, strlen(mat));
    pr->has_count = prism__cl_attr_size(L, atts, "count", &pr->count, prism__cl_tag_name(tag));
    pr->idx_first = L->mesh.idx.count;
    pr->ring_first = L->mesh.rings.count;
    prism__cl_activate(L);
}

/* <p> (in a primitive or a <ph>) or <h>: a run of index tuples. */
static void p_start(prism__cl *L, unsigned tag)
{
    cl_prim *pr = last_prim(L);
    if (!pr)
        return;
    if (!pr->has_vertex) {
        prism__cl_fail(L, PRISM_ERROR_PARSE, prism__cl_top_pos(L), prism__cl_tag_name(tag),
                       "no <input semantic=\"VERTEX\"> before it in <%s>",
                       prism__cl_tag_name(pr->tag));
        return;
    }
    if (!pr->p_pos.line)
        pr->p_pos = prism__cl_top_pos(L);
    L->ring_start = L->mesh.idx.count;
    L->ring_hole = tag == CL_T_H;
    prism__cl_text_indices(L, pr->stride, pr->voff);
    prism__cl_activate(L);
}

void prism__cl_mesh_start(prism__cl *L, unsigned tag, const XML_Char **atts)
{
    unsigned parent = prism__cl_up(L, 1), grand = prism__cl_up(L, 2);
    bool in_mesh = L->mesh.active;
    if (tag == CL_T_GEOMETRY && parent == CL_T_LIBRARY_GEOMETRIES && grand == CL_T_COLLADA)
        geometry_start(L, atts);
    else if (tag == CL_T_MESH && parent == CL_T_GEOMETRY && L->cur_geometry != CL_NONE &&
             !L->geometry_has_mesh) {
        L->mesh.active = L->geometry_has_mesh = true;
        prism__cl_activate(L);
    } else if (!in_mesh)
        return;
    else if (tag == CL_T_SOURCE && parent == CL_T_MESH) {
        cl_source *s = prism__vec_push(&L->mesh.sources, sizeof *s);
        if (!s) {
            prism__cl_oom(L);
            return;
        }
        memset(s, 0, sizeof *s);
        const char *id = prism__cl_attr(atts, "id");
        s->id = id ? prism__cl_str(L, id, strlen(id)) : 0;
        s->pos = prism__cl_top_pos(L);
    } else if (tag == CL_T_FLOAT_ARRAY && parent == CL_T_SOURCE && grand == CL_T_MESH)
        float_array_start(L, atts);
    else if (tag == CL_T_ACCESSOR && parent == CL_T_TECHNIQUE_COMMON && grand == CL_T_SOURCE &&
             prism__cl_up(L, 3) == CL_T_MESH)
        accessor_start(L, atts);
    else if (tag == CL_T_PARAM && parent == CL_T_ACCESSOR && grand == CL_T_TECHNIQUE_COMMON &&
             prism__cl_up(L, 3) == CL_T_SOURCE && prism__cl_up(L, 4) == CL_T_MESH)
        param_start(L, atts);
    else if (tag == CL_T_VERTICES && parent == CL_T_MESH) {
        const char *id = prism__cl_attr(atts, "id");
        L->mesh.has_vertices = true;
        L->mesh.vertices_id = id ? prism__cl_str(L, id, strlen(id)) : 0;
        L->mesh.vertices_pos = prism__cl_top_pos(L);
    } else if (tag == CL_T_INPUT && grand == CL_T_MESH &&
               (parent == CL_T_VERTICES || is_prim(parent)))
        input_start(L, atts, parent);
    else if (is_prim(tag) && parent == CL_T_MESH)
        prim_start(L, tag, atts);
    else if ((tag == CL_T_LINES || tag == CL_T_LINESTRIPS) && parent == CL_T_MESH)
        L->skipped.lines++;
    else if ((tag == CL_T_P && is_prim(parent) && grand == CL_T_MESH) ||
             ((tag == CL_T_P || tag == CL_T_H) && parent == CL_T_PH && grand == CL_T_POLYGONS &&
              prism__cl_up(L, 3) == CL_T_MESH))
        p_start(L, tag);
    else if (tag == CL_T_VCOUNT && parent == CL_T_POLYLIST && grand == CL_T_MESH) {
        prism__cl_text_counts(L);
        prism__cl_activate(L);
    }
}

/* </p> or </h>: whole tuples only; polygons, strips and fans keep the ring. */
void prism__cl_ring_end(prism__cl *L)
{
    cl_prim *pr = last_prim(L);
    if (L->p_ints % pr->stride) {
        prism__cl_fail(L, PRISM_ERROR_PARSE, prism__cl_top_pos(L), "p",
                       "%zu integers is not a whole number of %u-index vertices", L->p_ints,
                       pr->stride);
        return;
    }
    if (pr->kind == CL_TRIANGLES || pr->kind == CL_POLYLIST)
        return;
    size_t n = L->mesh.idx.count - L->ring_start;
    uint32_t *slot = n < CL_HOLE ? prism__vec_push(&L->mesh.rings, sizeof *slot) : NULL;
    if (!slot) {
        prism__cl_oom(L);
        return;
    }
    *slot = (uint32_t)n | (L->ring_hole ? CL_HOLE : 0);
}

static void count_mismatch(prism__cl *L, const cl_prim *pr, const char *what, size_t have)
{
    prism__cl_fail(L, PRISM_ERROR_PARSE, pr->pos, prism__cl_tag_name(pr->tag),
                   "count=%zu but the data holds %zu %s", pr->count, have, what);
}

/* </triangles> etc.: the count attribute must agree with the data. */
static void prim_end(prism__cl *L)
{
    cl_prim *pr = last_prim(L);
    pr->idx_count = L->mesh.idx.count - pr->idx_first;
    pr->ring_count = L->mesh.rings.count - pr->ring_first;
    const uint32_t *r = CL_PTR(L->mesh.rings, uint32_t, pr->ring_first);
    size_t polys = 0, sum = 0;
    for (size_t i = 0; i < pr->ring_count; i++) {
        polys += !(r[i] & CL_HOLE);
        sum += r[i] & ~CL_HOLE;
    }
    if (pr->kind == CL_TRIANGLES) {
        if (pr->idx_count % 3)
            prism__cl_fail(L, PRISM_ERROR_PARSE, pr->p_pos, "p",
                           "%zu vertices is not a whole number of triangles", pr->idx_count);
        else if (pr->has_count && pr->count != pr->idx_count / 3)
            count_mismatch(L, pr, "triangles", pr->idx_count / 3);
    } else if (pr->kind == CL_POLYLIST) {
        if (sum != pr->idx_count)
            prism__cl_fail(L, PRISM_ERROR_PARSE, pr->pos, "polylist",
                           "<vcount> adds up to %zu vertices but <p> holds %zu", sum,
                           pr->idx_count);
        else if (pr->has_count && pr->count != pr->ring_count)
            count_mismatch(L, pr, "polygons", pr->ring_count);
    } else if (pr->has_count && pr->count != polys) {
        count_mismatch(L, pr, pr->kind == CL_POLYGONS ? "polygons" : "strips or fans", polys);
    }
}

void prism__cl_mesh_end(prism__cl *L, unsigned tag)
{
    if (tag == CL_T_GEOMETRY) {
        if (!L->geometry_has_mesh)
            L->skipped.unknown_elements++; /* <convex_mesh>, <spline>, <brep> */
        L->cur_geometry = CL_NONE;
    } else if (tag == CL_T_MESH) {
        prism__cl_mesh_finish(L);
        L->mesh.active = false;
    } else if (tag == CL_T_P || tag == CL_T_H) {
        prism__cl_ring_end(L);
    } else if (is_prim(tag)) {
        prim_end(L);
    }
}
