/* The COLLADA loader's G4DAE stage: materials, their <extra> property tables
 * (<matrix coldim="2"> of photon energy in MeV and value, named by
 * <property name ref>), and the optical surfaces that G4DAE writes in a
 * trailing <extra> of <library_nodes>: <opticalsurface>, <skinsurface>
 * (every triangle of one logical volume) and <bordersurface> (between two
 * placed volumes). Tables become (wavelength nm, value) sorted by
 * wavelength, constants one point at wavelength 0; Geant4 lengths (mm)
 * become metres. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define HC_MEV_NM 1239.84198e-6 /* lambda[nm] = hc / E[MeV] */

static bool under_material_extra(const prism__cl *L)
{
    return prism__cl_up(L, 1) == CL_T_EXTRA && prism__cl_up(L, 2) == CL_T_MATERIAL &&
           L->cur_material != CL_NONE;
}

static bool under_nodes_extra(const prism__cl *L)
{
    return prism__cl_up(L, 1) == CL_T_EXTRA && prism__cl_up(L, 2) == CL_T_LIBRARY_NODES;
}

static cl_str attr_str(prism__cl *L, const XML_Char **atts, const char *name)
{
    const char *v = prism__cl_attr(atts, name);
    return v ? prism__cl_str(L, v, strlen(v)) : 0;
}

static int attr_int(const XML_Char **atts, const char *name)
{
    const char *v = prism__cl_attr(atts, name);
    return v ? atoi(v) : 0;
}

static void *push(prism__cl *L, prism__vec *v, size_t elem, uint32_t *index)
{
    void *p = prism__vec_push(v, elem);
    if (!p) {
        prism__cl_oom(L);
        return NULL;
    }
    memset(p, 0, elem);
    *index = (uint32_t)(v->count - 1);
    prism__cl_activate(L);
    return p;
}

static void table_start(prism__cl *L, const XML_Char **atts)
{
    const char *coldim = prism__cl_attr(atts, "coldim");
    if (coldim && strcmp(coldim, "2") != 0) {
        prism__cl_fail(L, PRISM_ERROR_PARSE, prism__cl_top_pos(L), "matrix",
                       "coldim=\"%s\": property tables have 2 columns", coldim);
        return;
    }
    cl_table *t = push(L, &L->tables, sizeof *t, &L->cur_table);
    if (!t)
        return;
    t->name = attr_str(L, atts, "name");
    t->pos = prism__cl_top_pos(L);
    t->first = L->table_data.count;
    L->g4dae = true;
    prism__cl_text_floats(L, &L->table_data);
}

static void prop_start(prism__cl *L, const XML_Char **atts, bool optical)
{
    uint32_t at;
    cl_prop *p = push(L, &L->props, sizeof *p, &at);
    if (!p)
        return;
    p->optical = optical;
    p->owner = optical ? L->cur_optical : L->cur_material;
    p->name = attr_str(L, atts, "name");
    p->ref = attr_str(L, atts, "ref");
    p->pos = prism__cl_top_pos(L);
    L->g4dae = true;
}

static void surface_start(prism__cl *L, unsigned tag, const XML_Char **atts)
{
    L->g4dae = true;
    if (tag == CL_T_OPTICALSURFACE) {
        cl_optical *o = push(L, &L->opticals, sizeof *o, &L->cur_optical);
        if (!o)
            return;
        o->name = attr_str(L, atts, "name");
        o->pos = prism__cl_top_pos(L);
        o->model = attr_int(atts, "model");
        o->finish = attr_int(atts, "finish");
        o->type = attr_int(atts, "type");
        const char *v = prism__cl_attr(atts, "value");
        o->value = v ? atof(v) : 0.0;
        return;
    }
    cl_surfref *s = push(L, &L->surfrefs, sizeof *s, &L->cur_surfref);
    if (!s)
        return;
    s->name = attr_str(L, atts, "name");
    s->optical = attr_str(L, atts, "surfaceproperty");
    s->pos = prism__cl_top_pos(L);
    s->kind = tag == CL_T_SKINSURFACE ? PRISM_SURFACE_SKIN : PRISM_SURFACE_BORDER;
}

static void ref_start(prism__cl *L, unsigned tag, const XML_Char **atts)
{
    cl_surfref *s = &CL_AT(L->surfrefs, cl_surfref, L->cur_surfref);
    unsigned max = s->kind == PRISM_SURFACE_SKIN ? 1 : 2;
    if (s->refs == max) {
        prism__cl_fail(L, PRISM_ERROR_PARSE, prism__cl_top_pos(L), prism__cl_tag_name(tag),
                       "more than %u in one <%s>", max,
                       s->kind == PRISM_SURFACE_SKIN ? "skinsurface" : "bordersurface");
        return;
    }
    s->ref_pos[s->refs] = prism__cl_top_pos(L);
    s->ref[s->refs++] = attr_str(L, atts, "ref");
}

void prism__cl_g4dae_start(prism__cl *L, unsigned tag, const XML_Char **atts)
{
    unsigned parent = prism__cl_up(L, 1);
    if (tag == CL_T_MATERIAL && parent == CL_T_LIBRARY_MATERIALS &&
        prism__cl_up(L, 2) == CL_T_COLLADA) {
        cl_material *m = push(L, &L->materials, sizeof *m, &L->cur_material);
        if (!m)
            return;
        m->id = attr_str(L, atts, "id");
        m->name = attr_str(L, atts, "name");
        m->pos = prism__cl_top_pos(L);
    } else if (tag == CL_T_MATRIX && (under_material_extra(L) || parent == CL_T_OPTICALSURFACE)) {
        table_start(L, atts);
    } else if (tag == CL_T_PROPERTY && under_material_extra(L)) {
        prop_start(L, atts, false);
    } else if (tag == CL_T_PROPERTY && parent == CL_T_OPTICALSURFACE && L->cur_optical != CL_NONE) {
        prop_start(L, atts, true);
    } else if ((tag == CL_T_OPTICALSURFACE || tag == CL_T_SKINSURFACE ||
                tag == CL_T_BORDERSURFACE) &&
               under_nodes_extra(L)) {
        surface_start(L, tag, atts);
    } else if (((tag == CL_T_VOLUMEREF && parent == CL_T_SKINSURFACE) ||
                (tag == CL_T_PHYSVOLREF && parent == CL_T_BORDERSURFACE)) &&
               L->cur_surfref != CL_NONE) {
        ref_start(L, tag, atts);
    }
}

void prism__cl_g4dae_end(prism__cl *L, unsigned tag)
{
    if (tag == CL_T_MATERIAL) {
        L->cur_material = CL_NONE;
    } else if (tag == CL_T_OPTICALSURFACE) {
        L->cur_optical = CL_NONE;
    } else if (tag == CL_T_SKINSURFACE || tag == CL_T_BORDERSURFACE) {
        cl_surfref *s = &CL_AT(L->surfrefs, cl_surfref, L->cur_surfref);
        unsigned need = tag == CL_T_SKINSURFACE ? 1 : 2;
        if (s->refs != need)
            prism__cl_fail(L, PRISM_ERROR_PARSE, s->pos, prism__cl_tag_name(tag),
                           "%u volume references where %u are needed", s->refs, need);
        L->cur_surfref = CL_NONE;
    } else if (tag == CL_T_MATRIX && L->cur_table != CL_NONE) {
        cl_table *t = &CL_AT(L->tables, cl_table, L->cur_table);
        t->count = L->table_data.count - t->first;
        if (t->count % 2)
            prism__cl_fail(L, PRISM_ERROR_PARSE, t->pos, "matrix",
                           "%zu values: a coldim=\"2\" table needs pairs", t->count);
        L->cur_table = CL_NONE;
    }
}

static bool is_length(const char *name)
{
    return strstr(name, "LENGTH") || strcmp(name, "RAYLEIGH") == 0 || strcmp(name, "MIEHG") == 0;
}

static char *dup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    return d ? memcpy(d, s, n) : NULL;
}

/* Insertion sort by wavelength: tables come sorted by energy, i.e.
 * reversed, so reverse first and the sort has (almost) nothing to do. */
static void sort_table(float *w, float *v, size_t n)
{
    if (n > 1 && w[0] > w[n - 1])
        for (size_t i = 0, j = n - 1; i < j; i++, j--) {
            float t = w[i];
            w[i] = w[j], w[j] = t;
            t = v[i];
            v[i] = v[j], v[j] = t;
        }
    for (size_t i = 1; i < n; i++) {
        float wi = w[i], vi = v[i];
        size_t j = i;
        for (; j > 0 && w[j - 1] > wi; j--)
            w[j] = w[j - 1], v[j] = v[j - 1];
        w[j] = wi, v[j] = vi;
    }
}

/* Geant4's constant properties (SCINTILLATIONYIELD, YIELDRATIO, the time
 * constants) have no energy axis; G4DAE writes each as a table over the
 * made-up energies -1 and 1 MeV holding the value twice ("-1 11522 1
 * 11522"). A table with a non-positive energy and one value throughout is
 * such a constant; any other non-positive energy is an error. */
static bool is_constant(const float *d, size_t n)
{
    bool nonpositive = false;
    for (size_t i = 0; i < n; i++) {
        nonpositive = nonpositive || !(d[2 * i] > 0);
        if (d[2 * i + 1] != d[1])
            return false;
    }
    return n >= 2 && nonpositive;
}

static bool convert(prism__cl *L, const cl_prop *p, const cl_table *t, prism_property *out)
{
    const float *d = CL_PTR(L->table_data, float, t->first);
    size_t n = t->count / 2;
    const char *name = p->name ? prism__cl_s(L, p->name) : "";
    double scale = is_length(name) ? 1e-3 : 1.0;
    out->name = dup(name);
    out->wavelength_nm = malloc(n * sizeof(float) + 1);
    out->value = malloc(n * sizeof(float) + 1);
    out->count = n;
    if (!out->name || !out->wavelength_nm || !out->value) {
        prism__cl_oom(L);
        return false;
    }
    if (is_constant(d, n)) {
        out->count = 1;
        out->wavelength_nm[0] = 0.0f;
        out->value[0] = (float)(d[1] * scale);
        return true;
    }
    for (size_t i = 0; i < n; i++) {
        if (!(d[2 * i] > 0)) {
            prism__cl_fail(L, PRISM_ERROR_PARSE, t->pos, "matrix",
                           "photon energy %g MeV is not positive", (double)d[2 * i]);
            return false;
        }
        out->wavelength_nm[i] = (float)(HC_MEV_NM / d[2 * i]);
        out->value[i] = (float)(d[2 * i + 1] * scale);
    }
    sort_table(out->wavelength_nm, out->value, n);
    return true;
}

/* The properties of one owner (a material or an optical surface). */
static bool gather(prism__cl *L, const cl_map *tables, bool optical, uint32_t owner,
                   prism_property **out, size_t *count)
{
    size_t n = 0;
    for (size_t i = 0; i < L->props.count; i++) {
        const cl_prop *p = &CL_AT(L->props, cl_prop, i);
        n += p->optical == optical && p->owner == owner;
    }
    *count = 0;
    *out = n ? calloc(n, sizeof **out) : NULL;
    if (n && !*out) {
        prism__cl_oom(L);
        return false;
    }
    for (size_t i = 0; i < L->props.count; i++) {
        const cl_prop *p = &CL_AT(L->props, cl_prop, i);
        if (p->optical != optical || p->owner != owner)
            continue;
        uint32_t t = p->ref ? prism__cl_map_get(L, tables, prism__cl_s(L, p->ref)) : CL_NONE;
        if (t == CL_NONE) {
            prism__cl_fail(L, PRISM_ERROR_PARSE, p->pos, "property", "no <matrix name=\"%s\">",
                           p->ref ? prism__cl_s(L, p->ref) : "");
            return false;
        }
        if (!convert(L, p, &CL_AT(L->tables, cl_table, t), &(*out)[(*count)++]))
            return false;
    }
    return true;
}

static bool map_tables(prism__cl *L, cl_map *m)
{
    for (size_t i = 0; i < L->tables.count; i++)
        if (!prism__cl_map_put(L, m, CL_AT(L->tables, cl_table, i).name, (uint32_t)i))
            return false;
    return true;
}

prism_result prism__cl_build_materials(prism__cl *L, prism_scene *S)
{
    cl_map tables = {0};
    size_t n = L->materials.count;
    S->materials = calloc(n + 1, sizeof *S->materials);
    if (!S->materials || !map_tables(L, &tables)) {
        prism__cl_oom(L);
        prism__cl_map_free(&tables);
        return L->result;
    }
    for (size_t i = 0; i < n && !L->result; i++) {
        const cl_material *m = &CL_AT(L->materials, cl_material, i);
        prism_material *o = &S->materials[S->materials_count++];
        o->name = dup(m->name ? prism__cl_s(L, m->name) : m->id ? prism__cl_s(L, m->id) : "");
        if (!o->name)
            prism__cl_oom(L);
        else
            gather(L, &tables, false, (uint32_t)i, &o->properties, &o->properties_count);
    }
    if (!L->result) {
        /* Surfaces are built after flattening; keep the table map until then. */
        L->table_map = tables;
        return PRISM_SUCCESS;
    }
    prism__cl_map_free(&tables);
    return L->result;
}

void prism__cl_free_properties(prism_property *p, size_t n)
{
    for (size_t i = 0; p && i < n; i++) {
        free(p[i].name);
        free(p[i].wavelength_nm);
        free(p[i].value);
    }
    free(p);
}

prism_result prism__cl_gather_optical(prism__cl *L, uint32_t owner, prism_surface *s)
{
    gather(L, &L->table_map, true, owner, &s->properties, &s->properties_count);
    return L->result;
}
