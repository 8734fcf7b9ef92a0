/* The COLLADA loader's <asset>s. The root's <unit> and <up_axis> are the
 * document's: unit.c decides the unit from it (or from the caller, or the
 * marks of a Geant4 exporter), and the scene reports the up axis. An
 * <asset> nested in a library, a <geometry>, a <visual_scene> or a <node>
 * applies to what that element holds: the COLLADA conformance suite
 * expects a 50-inch Y-up cone from assets nested this way. Each such <asset>
 * opens a scope (cl_scope); geometries and nodes take the scope of the
 * nearest one around them. Once the root's unit is decided, each scope
 * gets the matrix that scales its lengths into the root's unit and turns
 * its axes into the root's: a geometry's positions go through it where the
 * scene is flattened (in the placement's transform: no pass of its own
 * over the vertices), a node's transforms are taken through it (C M C^-1).
 *
 * A nested <unit> is relative to the root's <unit> (metres when there is
 * none), so that the rule that decides the root's unit (the caller's, the
 * Geant4 one) scales them alike: a file of root unit 1 m with a geometry
 * in inches (0.0254), read with --unit mm, has that geometry in units of
 * 0.0254 mm. */
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "geometry/fast_float.h"

enum { CL_ASSET_NONE, CL_ASSET_ROOT, CL_ASSET_NESTED };

/* Whose <asset> holds the element just opened (or about to close): the
 * root's, one that opens a scope, or one whose contents are not scoped
 * (in a <source>, a <material>, ...: left alone as before). */
static int asset_holder(const prism__cl *L)
{
    if (prism__cl_up(L, 1) != CL_T_ASSET)
        return CL_ASSET_NONE;
    switch (prism__cl_up(L, 2)) {
    case CL_T_COLLADA: return CL_ASSET_ROOT;
    case CL_T_LIBRARY_GEOMETRIES:
    case CL_T_LIBRARY_NODES:
    case CL_T_LIBRARY_VISUAL_SCENES:
        return prism__cl_up(L, 3) == CL_T_COLLADA ? CL_ASSET_NESTED : CL_ASSET_NONE;
    case CL_T_GEOMETRY:
    case CL_T_NODE:
    case CL_T_VISUAL_SCENE: /* only where a stage took the element up */
        return L->stack[L->depth - 3].active ? CL_ASSET_NESTED : CL_ASSET_NONE;
    default: return CL_ASSET_NONE;
    }
}

/* The scope of the <asset> around the element on top: made with the first
 * <unit> or <up_axis> in it, and from then on the scope of its parent (and
 * of all the parent holds from there on). A second <asset> in the same
 * element opens a scope inside the first's. NULL when out of memory. */
static cl_scope *nested_scope(prism__cl *L)
{
    cl_frame *asset = &L->stack[L->depth - 2], *holder = &L->stack[L->depth - 3];
    if (!asset->own_scope) {
        cl_scope *s = prism__vec_push(&L->scopes, sizeof *s);
        if (!s || L->scopes.count >= CL_SCOPE_OUTER) {
            prism__cl_oom(L);
            return NULL;
        }
        memset(s, 0, sizeof *s);
        s->parent = holder->scope;
        uint32_t at = (uint32_t)(L->scopes.count - 1);
        asset->own_scope = true;
        asset->scope = holder->scope = at;
        if (holder->tag == CL_T_GEOMETRY && L->cur_geometry != CL_NONE)
            CL_AT(L->geometries, cl_geometry, L->cur_geometry).scope = at;
        else if ((holder->tag == CL_T_NODE || holder->tag == CL_T_VISUAL_SCENE) &&
                 L->node_stack.count)
            CL_AT(L->nodes, cl_node, CL_AT(L->node_stack, uint32_t, L->node_stack.count - 1))
                .scope = at;
    }
    return &CL_AT(L->scopes, cl_scope, asset->scope);
}

/* <unit meter>: a positive number; some exporters write a decimal comma
 * ("0,01"). False, with the error set, otherwise. */
static bool meter(prism__cl *L, const char *m, double *out)
{
    char buf[64];
    size_t n = strlen(m);
    if (n >= sizeof buf)
        n = sizeof buf - 1;
    for (size_t i = 0; i < n; i++)
        buf[i] = m[i] == ',' ? '.' : m[i];
    buf[n] = 0;
    const char *p = buf, *end = buf + n;
    while (p < end && prism__ff_is_space(*p))
        p++;
    double v = 0;
    const char *q = prism__ff_parse_double(p, end, &v);
    while (q && q < end && prism__ff_is_space(*q))
        q++;
    if (!q || q != end || !(v > 0) || v > 1e30) {
        prism__cl_fail(L, PRISM_ERROR_PARSE, prism__cl_here(L), "unit",
                       "meter=\"%s\" is not a positive number", m);
        return false;
    }
    *out = v;
    return true;
}

void prism__cl_asset_start(prism__cl *L, unsigned tag, const XML_Char **atts)
{
    int holder = asset_holder(L);
    if (holder == CL_ASSET_NONE)
        return;
    if (tag == CL_T_UP_AXIS) {
        prism__cl_text_small(L);
        return;
    }
    const char *m = prism__cl_attr(atts, "meter");
    double v;
    if (!m || !meter(L, m, &v))
        return;
    if (holder == CL_ASSET_ROOT) {
        L->unit = v;
        L->has_unit = true;
        return;
    }
    cl_scope *s = nested_scope(L);
    if (s)
        s->unit = v;
}

void prism__cl_up_axis_end(prism__cl *L)
{
    const char *s = L->small;
    while (prism__ff_is_space(*s))
        s++;
    size_t n = strlen(s);
    while (n && prism__ff_is_space(s[n - 1]))
        n--;
    prism_up_axis up;
    if (n == 4 && memcmp(s, "X_UP", 4) == 0)
        up = PRISM_UP_X;
    else if (n == 4 && memcmp(s, "Y_UP", 4) == 0)
        up = PRISM_UP_Y;
    else if (n == 4 && memcmp(s, "Z_UP", 4) == 0)
        up = PRISM_UP_Z;
    else {
        prism__cl_fail(L, PRISM_ERROR_PARSE, L->stack[L->depth - 1].pos, "up_axis",
                       "\"%.*s\" is not X_UP, Y_UP or Z_UP", (int)n, s);
        return;
    }
    if (asset_holder(L) == CL_ASSET_ROOT) {
        L->up = up;
        L->has_up = true; /* the merge of chunks takes the last one set */
        return;
    }
    cl_scope *sc = nested_scope(L);
    if (sc)
        sc->up = (uint8_t)(1 + up);
}

/* The axes of each up axis as COLLADA 1.4.1 defines them (right, up, in):
 * X_UP (-Y, +X, +Z), Y_UP (+X, +Y, +Z), Z_UP (+X, +Z, -Y); column k is
 * the k-th of them, so a point's (right, up, in) parts are A^T p. */
static const double axes[3][9] = {
    [PRISM_UP_Y] = {1, 0, 0, 0, 1, 0, 0, 0, 1},
    [PRISM_UP_X] = {0, 1, 0, -1, 0, 0, 0, 0, 1},
    [PRISM_UP_Z] = {1, 0, 0, 0, 0, -1, 0, 1, 0},
};

/* c = k * A_to A_from^T: lengths scaled by k, axes turned from `from` to `to`. */
static void scope_matrix(double k, prism_up_axis from, prism_up_axis to, double c[9])
{
    const double *a = axes[to], *b = axes[from];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            c[3 * i + j] = k * (a[3 * i] * b[3 * j] + a[3 * i + 1] * b[3 * j + 1] +
                                a[3 * i + 2] * b[3 * j + 2]);
}

/* A node's transform M, written in its scope's unit and axes, in the
 * root's: C M C^-1, C = k R (so C^-1 = R^T / k): the rotation part turned,
 * the translation scaled and turned. */
static void conjugate(double m[16], const double c[9])
{
    double k2 = c[0] * c[0] + c[3] * c[3] + c[6] * c[6]; /* a column's length, squared */
    double s[16] = {c[0], c[1], c[2], 0, c[3], c[4], c[5], 0, c[6], c[7], c[8], 0, 0, 0, 0, 1};
    double inv[16] = {c[0] / k2, c[3] / k2, c[6] / k2, 0, c[1] / k2, c[4] / k2, c[7] / k2, 0,
                      c[2] / k2, c[5] / k2, c[8] / k2, 0, 0,         0,         0,         1};
    prism__cl_mat_mul(s, m, m);
    prism__cl_mat_mul(m, inv, m);
}

void prism__cl_apply_scopes(prism__cl *L)
{
    size_t n = L->scopes.count;
    if (!n)
        return;
    cl_scope *sc = L->scopes.data;
    /* a scope's parent comes before it (made earlier, or in an earlier chunk) */
    for (size_t i = 0; i < n; i++) {
        cl_scope *s = &sc[i];
        const cl_scope *p = s->parent < i ? &sc[s->parent] : NULL;
        if (!(s->unit > 0))
            s->unit = p ? p->unit : L->file_unit;
        if (!s->up)
            s->up = p ? p->up : (uint8_t)(1 + L->up);
        prism_up_axis from = (prism_up_axis)(s->up - 1);
        s->identity = s->unit == L->file_unit && from == L->up;
        scope_matrix(s->unit / L->file_unit, from, L->up, s->c);
    }
    for (size_t i = 0; i < L->nodes.count; i++) {
        cl_node *nd = &CL_AT(L->nodes, cl_node, i);
        if (nd->scope < n && !sc[nd->scope].identity && !nd->is_scene)
            conjugate(nd->m, sc[nd->scope].c);
    }
}
