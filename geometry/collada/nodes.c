/* The COLLADA loader's scene-graph stage, while parsing: <visual_scene>,
 * <node> (nested, or in <library_nodes>), the transforms in document order,
 * <instance_geometry> with its material bindings, <instance_node>, and
 * <scene>. A <visual_scene> is kept as a node of its own (identity
 * transform) whose children are its root nodes, so flattening has one case.
 * References are only resolved when flattening: ids may be used before they
 * are defined. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

#define CL_PI 3.14159265358979323846

static const double identity[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};

static cl_node *node_at(prism__cl *L, uint32_t i)
{
    return &CL_AT(L->nodes, cl_node, i);
}

static uint32_t top_node(const prism__cl *L)
{
    return L->node_stack.count ? CL_AT(L->node_stack, uint32_t, L->node_stack.count - 1) : CL_NONE;
}

static cl_item *add_item(prism__cl *L, uint32_t node, cl_item_kind kind)
{
    cl_item *it = prism__vec_push(&L->items, sizeof *it);
    if (!it) {
        prism__cl_oom(L);
        return NULL;
    }
    memset(it, 0, sizeof *it);
    it->kind = kind;
    it->pos = prism__cl_top_pos(L);
    it->next = CL_NONE;
    it->target = CL_NONE;
    uint32_t at = (uint32_t)(L->items.count - 1);
    cl_node *n = node_at(L, node);
    if (n->last_item == CL_NONE)
        n->first_item = at;
    else
        CL_AT(L->items, cl_item, n->last_item).next = at;
    n->last_item = at;
    return it;
}

static void node_start(prism__cl *L, unsigned tag, const XML_Char **atts, unsigned parent)
{
    if (tag == CL_T_NODE && ++L->node_depth > L->max_depth) {
        prism__cl_fail(L, PRISM_ERROR_LIMIT, prism__cl_top_pos(L), "node",
                       "nodes nested deeper than %u", L->max_depth);
        return;
    }
    cl_node *n = prism__vec_push(&L->nodes, sizeof *n);
    uint32_t *slot = n ? prism__vec_push(&L->node_stack, sizeof *slot) : NULL;
    if (!slot) {
        prism__cl_oom(L);
        return;
    }
    uint32_t at = (uint32_t)(L->nodes.count - 1);
    memset(n, 0, sizeof *n);
    memcpy(n->m, identity, sizeof identity);
    n->pos = prism__cl_top_pos(L);
    n->first_item = n->last_item = CL_NONE;
    n->is_scene = tag == CL_T_VISUAL_SCENE;
    n->scope = L->stack[L->depth - 1].scope;
    const char *id = prism__cl_attr(atts, "id"), *name = prism__cl_attr(atts, "name");
    n->id = id ? prism__cl_str(L, id, strlen(id)) : 0;
    n->name = name ? prism__cl_str(L, name, strlen(name)) : 0;
    uint32_t up = L->node_stack.count > 1 ? CL_AT(L->node_stack, uint32_t, L->node_stack.count - 2)
                                          : CL_NONE;
    *slot = at;
    prism__cl_activate(L);
    if (n->is_scene) {
        uint32_t *s = prism__vec_push(&L->scenes, sizeof *s);
        if (!s)
            prism__cl_oom(L);
        else
            *s = at;
        return;
    }
    L->stats.nodes++;
    if (parent != CL_T_LIBRARY_NODES && up != CL_NONE) {
        cl_item *it = add_item(L, up, CL_ITEM_CHILD);
        if (it)
            it->target = at;
    }
}

static void instance_start(prism__cl *L, unsigned tag, const XML_Char **atts)
{
    cl_item *it = add_item(L, top_node(L),
                           tag == CL_T_INSTANCE_GEOMETRY ? CL_ITEM_GEOMETRY : CL_ITEM_NODE);
    if (!it)
        return;
    it->url = prism__cl_url(L, prism__cl_attr(atts, "url"), it->pos, prism__cl_tag_name(tag));
    it->bind_first = (uint32_t)L->bindings.count;
    if (tag == CL_T_INSTANCE_GEOMETRY) {
        L->cur_item = (uint32_t)(L->items.count - 1);
        prism__cl_activate(L);
    }
}

static void binding_start(prism__cl *L, const XML_Char **atts)
{
    cl_binding *b = prism__vec_push(&L->bindings, sizeof *b);
    if (!b) {
        prism__cl_oom(L);
        return;
    }
    b->pos = prism__cl_top_pos(L);
    const char *sym = prism__cl_attr(atts, "symbol");
    b->symbol = sym ? prism__cl_str(L, sym, strlen(sym)) : 0;
    b->target = prism__cl_url(L, prism__cl_attr(atts, "target"), b->pos, "instance_material");
    CL_AT(L->items, cl_item, L->cur_item).bind_count++;
}

void prism__cl_node_start(prism__cl *L, unsigned tag, const XML_Char **atts)
{
    unsigned parent = prism__cl_up(L, 1);
    switch (tag) {
    case CL_T_VISUAL_SCENE:
        if (parent == CL_T_LIBRARY_VISUAL_SCENES && prism__cl_up(L, 2) == CL_T_COLLADA)
            node_start(L, tag, atts, parent);
        return;
    case CL_T_NODE:
        if (((parent == CL_T_NODE || parent == CL_T_VISUAL_SCENE) && prism__cl_parent_active(L)) ||
            (parent == CL_T_LIBRARY_NODES && prism__cl_up(L, 2) == CL_T_COLLADA))
            node_start(L, tag, atts, parent);
        return;
    case CL_T_MATRIX:
    case CL_T_TRANSLATE:
    case CL_T_ROTATE:
    case CL_T_SCALE:
    case CL_T_LOOKAT:
    case CL_T_SKEW:
        if (parent == CL_T_NODE && prism__cl_parent_active(L)) {
            prism__cl_text_doubles(L);
            prism__cl_activate(L);
        }
        return;
    case CL_T_INSTANCE_GEOMETRY:
    case CL_T_INSTANCE_NODE:
        if (parent == CL_T_NODE && prism__cl_parent_active(L))
            instance_start(L, tag, atts);
        return;
    case CL_T_INSTANCE_MATERIAL:
        if (L->cur_item != CL_NONE && prism__cl_up(L, 2) == CL_T_BIND_MATERIAL &&
            prism__cl_up(L, 3) == CL_T_INSTANCE_GEOMETRY)
            binding_start(L, atts);
        return;
    case CL_T_INSTANCE_VISUAL_SCENE:
        if (parent == CL_T_SCENE) {
            L->scene_pos = prism__cl_top_pos(L);
            L->scene_url = prism__cl_url(L, prism__cl_attr(atts, "url"), L->scene_pos,
                                         "instance_visual_scene");
        }
        return;
    default: return;
    }
}

static void mat_mul(const double a[16], const double b[16], double out[16])
{
    double r[16];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            r[4 * i + j] = a[4 * i] * b[j] + a[4 * i + 1] * b[4 + j] + a[4 * i + 2] * b[8 + j] +
                           a[4 * i + 3] * b[12 + j];
    memcpy(out, r, sizeof r);
}

/* Scales v to length 1 and returns its length (0: left as it was). */
static double normalize(double v[3])
{
    double n = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    if (n > 0)
        v[0] /= n, v[1] /= n, v[2] /= n;
    return n;
}

static double dot(const double a[3], const double b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static void cross(const double a[3], const double b[3], double out[3])
{
    double r[3] = {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
    memcpy(out, r, sizeof r);
}

static void rotation(const double *d, double m[16])
{
    double a[3] = {d[0], d[1], d[2]}, t = d[3] * (CL_PI / 180.0);
    normalize(a);
    double c = cos(t), s = sin(t), k = 1 - c;
    double r[16] = {c + a[0] * a[0] * k,
                    a[0] * a[1] * k - a[2] * s,
                    a[0] * a[2] * k + a[1] * s,
                    0,
                    a[1] * a[0] * k + a[2] * s,
                    c + a[1] * a[1] * k,
                    a[1] * a[2] * k - a[0] * s,
                    0,
                    a[2] * a[0] * k - a[1] * s,
                    a[2] * a[1] * k + a[0] * s,
                    c + a[2] * a[2] * k,
                    0,
                    0,
                    0,
                    0,
                    1};
    memcpy(m, r, sizeof r);
}

/* What a <lookat> lacked, for the warning (0: nothing). */
enum { CL_LOOKAT_NO_VIEW = 1, CL_LOOKAT_NO_SIDE = 2, CL_LOOKAT_SIDE_Z = 4 };

/* <lookat> eye, interest, up: the camera-to-world frame (looking down -z),
 * its sideways axis x = up x z. An up vector along the view (or zero)
 * gives none: FCollada then takes X, or Z when the up vector is X; here X,
 * or Z when the view is along X, less its part along the view, so that the
 * frame stays a rotation where FCollada's would not (a view along neither
 * axis). Without that the cross product was zero and the model collapsed.
 * An eye on the interest point gives no view: COLLADA's camera default
 * (down -Z) is taken. Returns the CL_LOOKAT_* bits of what was made up. */
static unsigned lookat(const double *d, double m[16])
{
    double z[3] = {d[0] - d[3], d[1] - d[4], d[2] - d[5]}, up[3] = {d[6], d[7], d[8]}, x[3], y[3];
    unsigned made_up = 0;
    if (!(normalize(z) > 0)) {
        z[0] = z[1] = 0, z[2] = 1;
        made_up |= CL_LOOKAT_NO_VIEW;
    }
    cross(up, z, x);
    double across = sqrt(dot(x, x)), up_len = sqrt(dot(up, up));
    if (!(across > 1e-9 * up_len)) { /* up_len 0 too */
        bool along_x = fabs(z[0]) > 0.9;
        double side[3] = {along_x ? 0 : 1, 0, along_x ? 1 : 0}, k = dot(side, z);
        for (int i = 0; i < 3; i++)
            x[i] = side[i] - k * z[i];
        made_up |= CL_LOOKAT_NO_SIDE | (along_x ? CL_LOOKAT_SIDE_Z : 0u);
    }
    normalize(x);
    cross(z, x, y);
    double r[16] = {x[0], y[0], z[0], d[0], x[1], y[1], z[1], d[1],
                    x[2], y[2], z[2], d[2], 0,    0,    0,    1};
    memcpy(m, r, sizeof r);
    return made_up;
}

/* <skew> angle, rotation axis r, translation axis t, as the COLLADA 1.4.1
 * spec reads and FCollada computes it: a shear along t by tan(angle) times
 * the distance along r, both axes normalised: M = I + tan(angle) t r^T.
 * Prism took RenderMan's skew before, which shears by distance along the
 * part of r across t, by as much as turns r itself `angle` towards t. The
 * two agree when r and t are perpendicular (the usual case) and differ
 * otherwise: RenderMan's has no answer once r would turn 90 degrees or
 * more from its part across t, nor when r lies along t, and there it was
 * the identity, silently; the spec's is a shear that also stretches
 * (determinant 1 + tan(angle) r.t), defined for every angle but 90.
 * Returns NULL, or why the values make no transform: an axis of length 0,
 * an angle of 90 degrees (mod 180: an endless shear), a determinant of 0. */
static const char *skew(const double *d, double m[16])
{
    double r[3] = {d[1], d[2], d[3]}, t[3] = {d[4], d[5], d[6]};
    if (!(normalize(r) > 0))
        return "the rotation axis has length 0";
    if (!(normalize(t) > 0))
        return "the translation axis has length 0";
    double a = d[0] * (CL_PI / 180.0), c = cos(a);
    if (fabs(c) < 1e-9)
        return "an angle of 90 degrees (mod 180) makes the shear, tan(angle), infinite";
    double k = sin(a) / c;
    if (fabs(1 + k * dot(r, t)) < 1e-9)
        return "the shear flattens space (its axes are not perpendicular)";
    memcpy(m, identity, sizeof identity);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            m[4 * i + j] += k * t[i] * r[j];
    return NULL;
}

/* One warning for a <lookat> that lacked something, saying what was made up. */
static void lookat_warn(prism__cl *L, unsigned made_up, const double *d)
{
    if (!made_up)
        return;
    char view[128] = "", side[128] = "";
    if (made_up & CL_LOOKAT_NO_VIEW)
        snprintf(view, sizeof view,
                 "the eye (%g %g %g) is the interest point: the view is "
                 "taken down -Z%s",
                 d[0], d[1], d[2], made_up & CL_LOOKAT_NO_SIDE ? "; " : "");
    if (made_up & CL_LOOKAT_NO_SIDE)
        snprintf(side, sizeof side,
                 "the up vector (%g %g %g) is %s: %s is taken as the "
                 "sideways axis",
                 d[6], d[7], d[8], d[6] || d[7] || d[8] ? "along the view" : "zero",
                 made_up & CL_LOOKAT_SIDE_Z ? "Z" : "X");
    prism__cl_quirk(L, CL_QUIRK_LOOKAT, prism__cl_top_pos(L), "lookat", "%s%s", view, side);
}

static void transform_end(prism__cl *L, unsigned tag)
{
    static const unsigned want[] = {[CL_T_MATRIX] = 16, [CL_T_TRANSLATE] = 3, [CL_T_ROTATE] = 4,
                                    [CL_T_SCALE] = 3,   [CL_T_LOOKAT] = 9,    [CL_T_SKEW] = 7};
    const double *d = L->dbl;
    const char *why;
    if (L->dbl_count != want[tag]) {
        prism__cl_fail(L, PRISM_ERROR_PARSE, prism__cl_top_pos(L), prism__cl_tag_name(tag),
                       "%u values where %u are needed", L->dbl_count, want[tag]);
        return;
    }
    double m[16];
    memcpy(m, identity, sizeof identity);
    if (tag == CL_T_MATRIX)
        memcpy(m, d, sizeof m);
    else if (tag == CL_T_TRANSLATE)
        m[3] = d[0], m[7] = d[1], m[11] = d[2];
    else if (tag == CL_T_SCALE)
        m[0] = d[0], m[5] = d[1], m[10] = d[2];
    else if (tag == CL_T_ROTATE)
        rotation(d, m);
    else if (tag == CL_T_LOOKAT)
        lookat_warn(L, lookat(d, m), d);
    else if ((why = skew(d, m)) != NULL) {
        prism__cl_fail(L, PRISM_ERROR_PARSE, prism__cl_top_pos(L), "skew",
                       "%g %g %g %g %g %g %g: %s", d[0], d[1], d[2], d[3], d[4], d[5], d[6], why);
        return;
    }
    cl_node *n = node_at(L, top_node(L));
    mat_mul(n->m, m, n->m);
}

void prism__cl_node_end(prism__cl *L, unsigned tag)
{
    switch (tag) {
    case CL_T_NODE:
    case CL_T_VISUAL_SCENE:
        L->node_stack.count--;
        if (tag == CL_T_NODE)
            L->node_depth--;
        return;
    case CL_T_MATRIX:
    case CL_T_TRANSLATE:
    case CL_T_ROTATE:
    case CL_T_SCALE:
    case CL_T_LOOKAT:
    case CL_T_SKEW:
        if (prism__cl_up(L, 1) == CL_T_NODE) /* G4DAE tables are <matrix> too */
            transform_end(L, tag);
        return;
    case CL_T_INSTANCE_GEOMETRY: L->cur_item = CL_NONE; return;
    default: return;
    }
}

void prism__cl_mat_mul(const double a[16], const double b[16], double out[16])
{
    mat_mul(a, b, out);
}
