/* G4DAE optical surfaces onto world triangles, after flattening. A skin
 * surface names a logical volume: the node holding the instance_geometry
 * (G4DAE's LV node), so it covers every placement of it. A border surface
 * names two placed volumes (the nodes that instance the LV nodes): it goes
 * on the triangles of whichever of the two is the daughter of the other,
 * since those triangles are the boundary between them. Border surfaces
 * between siblings are not assigned (their shared boundary is not a set of
 * whole triangles): the loader warns about each one that covers nothing.
 * A border surface wins over a skin surface on the same triangles. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static char *dup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    return d ? memcpy(d, s, n) : NULL;
}

/* A volume reference: a node id, else a node name. */
static uint32_t find_node(prism__cl *L, cl_str ref)
{
    if (!ref)
        return CL_NONE;
    const char *s = prism__cl_s(L, ref);
    uint32_t n = prism__cl_map_get(L, &L->node_ids, s);
    for (size_t i = 0; n == CL_NONE && i < L->nodes.count; i++) {
        const cl_node *c = &CL_AT(L->nodes, cl_node, i);
        if (c->name && strcmp(prism__cl_s(L, c->name), s) == 0)
            n = (uint32_t)i;
    }
    return n;
}

static bool copy_properties(const prism_surface *from, prism_surface *o)
{
    size_t n = from->properties_count;
    o->properties = n ? calloc(n, sizeof *o->properties) : NULL;
    if (n && !o->properties)
        return false;
    o->properties_count = n;
    for (size_t i = 0; i < n; i++) {
        const prism_property *a = &from->properties[i];
        prism_property *b = &o->properties[i];
        b->name = dup(a->name);
        b->wavelength_nm = malloc(a->count * sizeof(float) + 1);
        b->value = malloc(a->count * sizeof(float) + 1);
        b->count = a->count;
        if (!b->name || !b->wavelength_nm || !b->value)
            return false;
        memcpy(b->wavelength_nm, a->wavelength_nm, a->count * sizeof(float));
        memcpy(b->value, a->value, a->count * sizeof(float));
    }
    return true;
}

/* The optical surface a surface reference names, or CL_NONE (a fail). */
static uint32_t find_optical(prism__cl *L, const cl_surfref *r)
{
    const char *want = r->optical ? prism__cl_s(L, r->optical) : "";
    for (size_t k = 0; k < L->opticals.count; k++) {
        const cl_optical *op = &CL_AT(L->opticals, cl_optical, k);
        if (op->name && strcmp(prism__cl_s(L, op->name), want) == 0)
            return (uint32_t)k;
    }
    prism__cl_fail(L, PRISM_ERROR_PARSE, r->pos,
                   r->kind == PRISM_SURFACE_SKIN ? "skinsurface" : "bordersurface",
                   "no <opticalsurface name=\"%s\">", want);
    return CL_NONE;
}

static void copy_model(const cl_optical *op, prism_surface *o)
{
    o->model = op->model, o->finish = op->finish, o->type = op->type, o->value = op->value;
}

static uint32_t border_of(prism__cl *L, const uint32_t *ends, uint32_t pv_s, uint32_t pv_p)
{
    for (size_t i = 0; i < L->surfrefs.count; i++) {
        const uint32_t *e = ends + 2 * i;
        if (e[0] == CL_NONE || CL_AT(L->surfrefs, cl_surfref, i).kind != PRISM_SURFACE_BORDER)
            continue;
        if ((e[0] == pv_p && e[1] == pv_s) || (e[0] == pv_s && e[1] == pv_p))
            return (uint32_t)i;
    }
    return CL_NONE;
}

/* The surface of each solid, which the placement then writes on its
 * triangles (one pass over them, not two). */
static void assign(prism__cl *L, prism_scene *S, const uint32_t *holder, const uint32_t *pv,
                   const uint32_t *ends, const uint32_t *skin, uint32_t *surface_of)
{
    size_t borders = 0;
    for (size_t i = 0; i < L->surfrefs.count; i++)
        borders += CL_AT(L->surfrefs, cl_surfref, i).kind == PRISM_SURFACE_BORDER;
    bool *used = borders ? calloc(L->surfrefs.count, sizeof *used) : NULL;
    for (size_t s = 0; s < S->solids_count; s++) {
        const prism_solid *so = &S->solids[s];
        uint32_t surf = skin[holder[s]];
        if (borders && so->parent != PRISM_NONE) {
            uint32_t b = border_of(L, ends, pv[s], pv[so->parent]);
            if (b != CL_NONE)
                surf = b;
            if (b != CL_NONE && used)
                used[b] = true;
        }
        surface_of[s] = surf;
    }
    for (size_t i = 0; used && i < L->surfrefs.count; i++) {
        const cl_surfref *r = &CL_AT(L->surfrefs, cl_surfref, i);
        if (r->kind == PRISM_SURFACE_BORDER && !used[i] && ends[2 * i] != CL_NONE)
            prism__cl_log(L, PRISM_LOG_WARNING,
                          "%s:%u:%u: <bordersurface name=\"%s\">: its volumes are not mother "
                          "and daughter anywhere in the scene; it covers no triangle",
                          L->file, r->pos.line, r->pos.col, S->surfaces[i].name);
    }
    free(used);
}

/* In order: each reference's optical surface (the first error is the
 * document's first), and the tables of each optical surface converted once,
 * by the first surface that takes it (a G4DAE file may give 20,000 skin
 * surfaces one optical surface: converting its tables each time was most
 * of the surfaces' time). Then on all cores the rest: names, copies of the
 * converted tables, the volumes' look-ups (a visible part of a large load
 * when done in order). Then in order again: warnings, and the first skin
 * surface of each volume. */
prism_result prism__cl_build_surfaces(prism__cl *L, prism_scene *S, const uint32_t *holder,
                                      const uint32_t *pv, uint32_t *surface_of)
{
    size_t n = L->surfrefs.count;
    if (!n)
        return PRISM_SUCCESS;
    S->surfaces = calloc(n, sizeof *S->surfaces);
    uint32_t *ends = malloc(2 * n * sizeof *ends);
    uint32_t *skin = malloc((L->nodes.count + 1) * sizeof *skin);
    uint32_t *first = malloc((L->opticals.count + 1) * sizeof *first);
    uint32_t *optical = malloc(n * sizeof *optical);
    if (!S->surfaces || !ends || !skin || !first || !optical) {
        prism__cl_oom(L);
        goto done;
    }
    S->surfaces_count = n; /* all zero: prism_scene_free may free any */
    for (size_t i = 0; i <= L->nodes.count; i++)
        skin[i] = CL_NONE;
    for (size_t i = 0; i <= L->opticals.count; i++)
        first[i] = CL_NONE;
    for (size_t i = 0; i < n && !L->result; i++) {
        const cl_surfref *r = &CL_AT(L->surfrefs, cl_surfref, i);
        uint32_t k = optical[i] = find_optical(L, r);
        if (k != CL_NONE && first[k] == CL_NONE) {
            first[k] = (uint32_t)i;
            prism__cl_gather_optical(L, k, &S->surfaces[i]);
        }
    }
    if (L->result)
        goto done;
    long long count = (long long)n;
    int failed = 0;
#pragma omp parallel for schedule(dynamic, 256) if (count > 2000)
    for (long long i = 0; i < count; i++) {
        const cl_surfref *r = &CL_AT(L->surfrefs, cl_surfref, i);
        prism_surface *o = &S->surfaces[i];
        uint32_t k = optical[i];
        o->kind = r->kind;
        copy_model(&CL_AT(L->opticals, cl_optical, k), o);
        o->name = dup(r->name ? prism__cl_s(L, r->name) : "");
        bool ok = o->name &&
                  (first[k] == (uint32_t)i || copy_properties(&S->surfaces[first[k]], o));
        if (!ok) {
#pragma omp atomic write
            failed = 1;
        }
        ends[2 * i] = find_node(L, r->ref[0]);
        ends[2 * i + 1] = r->kind == PRISM_SURFACE_BORDER ? find_node(L, r->ref[1]) : CL_NONE;
    }
    if (failed) {
        prism__cl_oom(L);
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        const cl_surfref *r = &CL_AT(L->surfrefs, cl_surfref, i);
        if (ends[2 * i] == CL_NONE ||
            (r->kind == PRISM_SURFACE_BORDER && ends[2 * i + 1] == CL_NONE)) {
            prism__cl_log(
                L, PRISM_LOG_WARNING,
                "%s:%u:%u: <%s name=\"%s\">: names a volume the file does not hold; not assigned",
                L->file, r->pos.line, r->pos.col,
                r->kind == PRISM_SURFACE_SKIN ? "skinsurface" : "bordersurface",
                S->surfaces[i].name);
            ends[2 * i] = CL_NONE;
        } else if (r->kind == PRISM_SURFACE_SKIN && skin[ends[2 * i]] == CL_NONE) {
            skin[ends[2 * i]] = (uint32_t)i;
        }
    }
    assign(L, S, holder, pv, ends, skin, surface_of);
done:
    free(ends);
    free(skin);
    free(first);
    free(optical);
    return L->result;
}
