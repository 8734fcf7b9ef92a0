/* The chunks' states folded into one (parallel.c). Each chunk's loader
 * numbers its arrays from 0 and opens stand-ins for the nodes open at its
 * cut, so its results mean nothing until shifted and linked onto those of
 * the chunks before it; that bookkeeping is kept out of the parse. */
#include <stdlib.h>
#include <string.h>

#include "parallel_internal.h"

static uint32_t shift(cl_str s, uint32_t base)
{
    return s ? s + base : 0;
}

static bool append_u32(prism__vec *dst, const prism__vec *src)
{
    if (!prism__vec_grow(dst, sizeof(uint32_t), dst->count + src->count + 1))
        return false;
    if (src->count)
        memcpy((uint32_t *)dst->data + dst->count, src->data, src->count * sizeof(uint32_t));
    dst->count += src->count;
    return true;
}

/* Where chunk C's arrays go in L's, and the L nodes its stand-ins are. */
typedef struct cl_base {
    uint32_t sb, nb, ib, bb, gb, mb, tb, pb, ob, fb, cb;
    size_t db;
    uint32_t *open; /* per stand-in: the real node, in L */
    uint32_t scb;
    uint32_t *outer; /* per prefix element: the scope inside it, in L */
} cl_base;

#define CL_VECS(X)                                                                                 \
    X(pool, 1)                                                                                     \
    X(nodes, sizeof(cl_node)) X(items, sizeof(cl_item)) X(bindings, sizeof(cl_binding))            \
        X(geometries, sizeof(cl_geometry)) X(materials, sizeof(cl_material))                       \
            X(tables, sizeof(cl_table)) X(table_data, sizeof(float)) X(props, sizeof(cl_prop))     \
                X(opticals, sizeof(cl_optical)) X(surfrefs, sizeof(cl_surfref))                    \
                    X(scenes, sizeof(uint32_t)) X(scopes, sizeof(cl_scope))

static uint32_t node_of(const cl_base *b, size_t proxies, uint32_t local)
{
    return local < proxies ? b->open[local] : b->nb + (uint32_t)(local - proxies);
}

/* A chunk's scope reference in L. */
static uint32_t scope_of(const cl_base *b, uint32_t local)
{
    if (local == CL_NONE)
        return CL_NONE;
    return local & CL_SCOPE_OUTER ? b->outer[local & ~CL_SCOPE_OUTER] : b->scb + local;
}

static bool is_identity(const double *m)
{
    for (int i = 0; i < 16; i++)
        if (m[i] != (i % 5 == 0 ? 1.0 : 0.0))
            return false;
    return true;
}

/* In order: every chunk's offsets in L, and its stand-ins' real nodes (the
 * nodes open where the chunk begins: those open where the one before it
 * ends). Then L's arrays grow once to their final sizes. */
static bool plan_merge(prism__cl *L, cl_chunk *ch, size_t n, cl_base *base)
{
    cl_base at = {0};
#define X(v, elem) size_t v = L->v.count;
    CL_VECS(X)
#undef X
    prism__vec open = {0}, open_sc = {0}; /* at the cut: the real nodes, the scopes */
    bool ok = append_u32(&open, &L->node_stack) && append_u32(&open_sc, &ch[0].open_scopes);
    for (size_t i = 1; ok && i < n; i++) {
        prism__cl *C = ch[i].L;
        size_t px = ch[i].proxies, depth = ch[i].depth;
        ok = open.count == px && C->nodes.count >= px && pool + C->pool.count <= UINT32_MAX &&
             open_sc.count == depth && scopes + C->scopes.count < CL_SCOPE_OUTER;
        if (!ok)
            break;
        at = (cl_base){(uint32_t)pool,
                       (uint32_t)nodes,
                       (uint32_t)items,
                       (uint32_t)bindings,
                       (uint32_t)geometries,
                       (uint32_t)materials,
                       (uint32_t)tables,
                       (uint32_t)props,
                       (uint32_t)opticals,
                       (uint32_t)surfrefs,
                       (uint32_t)scenes,
                       table_data,
                       malloc((px + 1) * sizeof(uint32_t)),
                       (uint32_t)scopes,
                       malloc((depth + 1) * sizeof(uint32_t))};
        ok = at.open != NULL && at.outer != NULL;
        if (ok) {
            memcpy(at.open, open.data, px * sizeof(uint32_t));
            if (depth)
                memcpy(at.outer, open_sc.data, depth * sizeof(uint32_t));
        }
        base[i] = at;
        open_sc.count = 0;
        ok = ok && prism__vec_grow(&open_sc, sizeof(uint32_t), ch[i].open_scopes.count + 1);
        for (size_t k = 0; ok && k < ch[i].open_scopes.count; k++)
            CL_AT(open_sc, uint32_t,
                  open_sc.count++) = scope_of(&at, CL_AT(ch[i].open_scopes, uint32_t, k));
        open.count = 0;
        for (size_t k = 0; ok && k < C->node_stack.count; k++) {
            uint32_t *slot = prism__vec_push(&open, sizeof *slot);
            ok = slot != NULL;
            if (ok)
                *slot = node_of(&at, px, CL_AT(C->node_stack, uint32_t, k));
        }
#define X(v, elem) v += C->v.count;
        CL_VECS(X)
#undef X
        nodes -= px;
    }
    prism__vec_free(&open);
    prism__vec_free(&open_sc);
#define X(v, elem) ok = ok && prism__vec_grow(&L->v, elem, v + 1);
    CL_VECS(X)
#undef X
    return ok;
}

/* One chunk's arrays into their places in L: offsets into the string pool
 * and the arrays moved; the stand-ins stay out. Chunks do this at once. */
static void copy_chunk(prism__cl *L, prism__cl *C, const cl_base *b, size_t px)
{
    uint32_t sb = b->sb;
    if (C->pool.count)
        memcpy((char *)L->pool.data + sb, C->pool.data, C->pool.count);
    for (size_t i = px; i < C->nodes.count; i++) {
        cl_node n = CL_AT(C->nodes, cl_node, i);
        n.id = shift(n.id, sb);
        n.name = shift(n.name, sb);
        n.first_item = n.first_item == CL_NONE ? CL_NONE : n.first_item + b->ib;
        n.last_item = n.last_item == CL_NONE ? CL_NONE : n.last_item + b->ib;
        n.scope = scope_of(b, n.scope);
        CL_AT(L->nodes, cl_node, b->nb + i - px) = n;
    }
    for (size_t i = 0; i < C->items.count; i++) {
        cl_item it = CL_AT(C->items, cl_item, i);
        it.url = shift(it.url, sb);
        it.next = it.next == CL_NONE ? CL_NONE : it.next + b->ib;
        it.bind_first += b->bb;
        if (it.kind == CL_ITEM_CHILD)
            it.target = node_of(b, px, it.target);
        CL_AT(L->items, cl_item, b->ib + i) = it;
    }
    for (size_t i = 0; i < C->bindings.count; i++) {
        cl_binding x = CL_AT(C->bindings, cl_binding, i);
        x.symbol = shift(x.symbol, sb);
        x.target = shift(x.target, sb);
        CL_AT(L->bindings, cl_binding, b->bb + i) = x;
    }
    for (size_t i = 0; i < C->scenes.count; i++)
        CL_AT(L->scenes, uint32_t, b->cb + i) = node_of(b, px, CL_AT(C->scenes, uint32_t, i));
    for (size_t i = 0; i < C->geometries.count; i++) {
        cl_geometry g = CL_AT(C->geometries, cl_geometry, i);
        g.id = shift(g.id, sb);
        g.name = shift(g.name, sb);
        for (uint32_t k = 0; k < g.groups_count; k++)
            g.groups[k].material = shift(g.groups[k].material, sb);
        g.scope = scope_of(b, g.scope);
        CL_AT(L->geometries, cl_geometry, b->gb + i) = g;
    }
    C->geometries.count = 0; /* their arrays are L's now */
    for (size_t i = 0; i < C->scopes.count; i++) {
        cl_scope x = CL_AT(C->scopes, cl_scope, i);
        x.parent = scope_of(b, x.parent);
        CL_AT(L->scopes, cl_scope, b->scb + i) = x;
    }
    for (size_t i = 0; i < C->materials.count; i++) {
        cl_material m = CL_AT(C->materials, cl_material, i);
        m.id = shift(m.id, sb);
        m.name = shift(m.name, sb);
        CL_AT(L->materials, cl_material, b->mb + i) = m;
    }
    for (size_t i = 0; i < C->tables.count; i++) {
        cl_table t = CL_AT(C->tables, cl_table, i);
        t.name = shift(t.name, sb);
        t.first += b->db;
        CL_AT(L->tables, cl_table, b->tb + i) = t;
    }
    if (C->table_data.count)
        memcpy((float *)L->table_data.data + b->db, C->table_data.data,
               C->table_data.count * sizeof(float));
    for (size_t i = 0; i < C->props.count; i++) {
        cl_prop p = CL_AT(C->props, cl_prop, i);
        p.name = shift(p.name, sb);
        p.ref = shift(p.ref, sb);
        if (p.owner != CL_NONE)
            p.owner += p.optical ? b->ob : b->mb;
        CL_AT(L->props, cl_prop, b->pb + i) = p;
    }
    for (size_t i = 0; i < C->opticals.count; i++) {
        cl_optical o = CL_AT(C->opticals, cl_optical, i);
        o.name = shift(o.name, sb);
        CL_AT(L->opticals, cl_optical, b->ob + i) = o;
    }
    for (size_t i = 0; i < C->surfrefs.count; i++) {
        cl_surfref r = CL_AT(C->surfrefs, cl_surfref, i);
        r.name = shift(r.name, sb);
        r.optical = shift(r.optical, sb);
        r.ref[0] = shift(r.ref[0], sb);
        r.ref[1] = shift(r.ref[1], sb);
        CL_AT(L->surfrefs, cl_surfref, b->fb + i) = r;
    }
}

/* In order again: the stand-ins' items follow the real nodes' own, a
 * transform after a child node multiplies in; the rest of the state. */
static void link_chunk(prism__cl *L, const prism__cl *C, const cl_base *b, size_t px)
{
    for (size_t i = 0; i < px; i++) {
        const cl_node *n = &CL_AT(C->nodes, cl_node, i);
        cl_node *r = &CL_AT(L->nodes, cl_node, b->open[i]);
        if (n->first_item != CL_NONE) {
            if (r->last_item == CL_NONE)
                r->first_item = n->first_item + b->ib;
            else
                CL_AT(L->items, cl_item, r->last_item).next = n->first_item + b->ib;
            r->last_item = n->last_item + b->ib;
        }
        if (!is_identity(n->m))
            prism__cl_mat_mul(r->m, n->m, r->m);
        if (n->scope != CL_NONE && !(n->scope & CL_SCOPE_OUTER)) /* its <asset> came here */
            r->scope = scope_of(b, n->scope);
    }
    if (C->scene_url) {
        L->scene_url = shift(C->scene_url, b->sb);
        L->scene_pos = C->scene_pos;
    }
    if (C->has_unit)
        L->unit = C->unit, L->has_unit = true;
    if (C->has_up)
        L->up = C->up, L->has_up = true;
    L->g4dae = L->g4dae || C->g4dae;
    L->g4_meta = L->g4_meta || C->g4_meta;
    L->quirks.float_array_counts += C->quirks.float_array_counts;
    L->quirks.flat_positions += C->quirks.flat_positions;
    L->lookat_quirks += C->lookat_quirks;

    L->skipped.lines += C->skipped.lines;
    L->skipped.degenerate_polygons += C->skipped.degenerate_polygons;
    L->skipped.nonfinite_vertices += C->skipped.nonfinite_vertices;
    L->skipped.unknown_elements += C->skipped.unknown_elements;
    L->stats.geometries += C->stats.geometries;
    L->stats.nodes += C->stats.nodes;
    L->stats.unique_triangles += C->stats.unique_triangles;
    L->stats.unique_vertices += C->stats.unique_vertices;
}

/* The chunks' states into L, in document order. The copying, most of the
 * work (serial, a visible part of a large load), runs on all cores between
 * two short passes in order. */
bool prism__cl_merge_all(prism__cl *L, cl_chunk *ch, size_t n)
{
    cl_base *base = calloc(n, sizeof *base);
    bool ok = base && plan_merge(L, ch, n, base);
    prism__cl_trace(L, "merge: plan");
    if (ok) {
        size_t last = 0;
#define X(v, elem)                                                                                 \
    last = L->v.count;                                                                             \
    for (size_t i = 1; i < n; i++)                                                                 \
        last += ch[i].L->v.count - (&L->v == &L->nodes ? ch[i].proxies : 0);                       \
    L->v.count = last;
        CL_VECS(X)
#undef X
        long long count = (long long)n;
#pragma omp parallel for schedule(dynamic, 1)
        for (long long i = 1; i < count; i++)
            copy_chunk(L, ch[i].L, &base[i], ch[i].proxies);
        prism__cl_trace(L, "merge: copy");
        for (size_t i = 1; i < n; i++)
            link_chunk(L, ch[i].L, &base[i], ch[i].proxies);
    }
    for (size_t i = 0; base && i < n; i++)
        free(base[i].open), free(base[i].outer);
    free(base);
    return ok;
}
