/* The COLLADA loader's length unit. In order: the caller's choice, the
 * file's <unit meter>, then for a file without one the marks a Geant4
 * exporter leaves (G4DAE and its kin write Geant4's millimetres and no
 * <unit>), else COLLADA's default, metres. The rule that decided is kept in
 * words for the scene and logged once.
 *
 * The marks, from what G4DAE writes: material and optical-surface extras
 * (property tables); <meta> in a node's <extra> (copy numbers); ids that
 * end in the object's address, as Geant4's GDML writer names things
 * ("pmt-bulb0xc0fed90"); "__dd__" paths (the detector description's "/dd/"
 * with the slashes made safe for ids). Files that Chroma users shared
 * (MicroBooNE, LBNE) carry the last three and no extras. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

static const struct {
    const char *name;
    prism_length_unit unit;
    double meter;
} units[] = {
    {"auto", PRISM_UNIT_AUTO, 0.0},
    {"m", PRISM_UNIT_M, 1.0},
    {"cm", PRISM_UNIT_CM, 0.01},
    {"mm", PRISM_UNIT_MM, 0.001},
};
#define UNITS (sizeof units / sizeof units[0])

prism_result prism_length_unit_parse(const char *text, prism_length_unit *out)
{
    if (!text || !out)
        return PRISM_ERROR_INVALID_ARGUMENT;
    for (size_t i = 0; i < UNITS; i++) {
        size_t n = strlen(units[i].name), k = 0;
        while (k < n && text[k] && tolower((unsigned char)text[k]) == units[i].name[k])
            k++;
        if (k == n && !text[n]) {
            *out = units[i].unit;
            return PRISM_SUCCESS;
        }
    }
    return PRISM_ERROR_INVALID_ARGUMENT;
}

const char *prism_length_unit_name(prism_length_unit unit)
{
    for (size_t i = 0; i < UNITS; i++)
        if (units[i].unit == unit)
            return units[i].name;
    return "?";
}

double prism_length_unit_meter(prism_length_unit unit)
{
    for (size_t i = 0; i < UNITS; i++)
        if (units[i].unit == unit)
            return units[i].meter;
    return 0.0;
}

/* "Name0x2601920": an address of at least 6 hex digits (a small heap of a
 * 64-bit program without PIE starts at 0x6xxxxx) after a name. */
static bool pointer_suffixed(const char *s)
{
    size_t n = strlen(s), k = 0;
    while (k < n && isxdigit((unsigned char)s[n - 1 - k]))
        k++;
    return k >= 6 && k <= 16 && n >= k + 3 && s[n - 1 - k] == 'x' && s[n - 2 - k] == '0';
}

typedef struct id_counts {
    size_t ids, pointers, dd;
} id_counts;

static void count_id(const prism__cl *L, cl_str id, id_counts *c)
{
    if (!id)
        return;
    const char *s = prism__cl_s(L, id);
    c->ids++;
    c->pointers += pointer_suffixed(s);
    c->dd += strstr(s, "__dd__") != NULL;
}

static uint32_t geant4_marks(const prism__cl *L)
{
    id_counts c = {0, 0, 0};
    for (size_t i = 0; i < L->geometries.count; i++)
        count_id(L, CL_AT(L->geometries, cl_geometry, i).id, &c);
    for (size_t i = 0; i < L->nodes.count; i++)
        if (!CL_AT(L->nodes, cl_node, i).is_scene)
            count_id(L, CL_AT(L->nodes, cl_node, i).id, &c);
    for (size_t i = 0; i < L->materials.count; i++)
        count_id(L, CL_AT(L->materials, cl_material, i).id, &c);
    uint32_t marks = 0;
    if (L->g4dae)
        marks |= PRISM_GEANT4_EXTRAS;
    if (L->g4_meta)
        marks |= PRISM_GEANT4_META;
    /* Half of them at least: one odd id in a file from elsewhere is not an exporter's habit. */
    if (c.pointers && 2 * c.pointers >= c.ids)
        marks |= PRISM_GEANT4_POINTER_IDS;
    if (c.dd)
        marks |= PRISM_GEANT4_DD_PATHS;
    return marks;
}

/* "G4DAE material or surface extras, <meta> extras" */
static void describe_marks(uint32_t marks, char *out, size_t size)
{
    static const struct {
        uint32_t bit;
        const char *what;
    } names[] = {
        {PRISM_GEANT4_EXTRAS, "G4DAE material or surface extras"},
        {PRISM_GEANT4_META, "<meta> extras"},
        {PRISM_GEANT4_POINTER_IDS, "pointer-suffixed ids"},
        {PRISM_GEANT4_DD_PATHS, "__dd__ paths"},
    };
    size_t at = 0;
    out[0] = 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (!(marks & names[i].bit) || at >= size)
            continue;
        int n = snprintf(out + at, size - at, "%s%s", at ? ", " : "", names[i].what);
        at += n > 0 ? (size_t)n : 0;
    }
}

void prism__cl_decide_unit(prism__cl *L)
{
    const prism_load_desc *d = L->desc;
    char marks[128];
    L->geant4_marks = geant4_marks(L);
    L->file_unit = L->has_unit ? L->unit : 1.0; /* nested <unit>s are relative to it */
    if (d && d->length_unit != PRISM_UNIT_AUTO) {
        L->unit = prism_length_unit_meter(d->length_unit);
        L->unit_source = PRISM_UNIT_FROM_USER;
        snprintf(L->unit_rule, sizeof L->unit_rule, "%s (user's choice)",
                 prism_length_unit_name(d->length_unit));
    } else if (d && d->unit_meter > 0) {
        L->unit = d->unit_meter;
        L->unit_source = PRISM_UNIT_FROM_USER;
        snprintf(L->unit_rule, sizeof L->unit_rule, "unit_meter=%.9g (user's choice)", L->unit);
    } else if (L->has_unit) {
        L->unit_source = PRISM_UNIT_FROM_FILE;
        snprintf(L->unit_rule, sizeof L->unit_rule, "<unit meter=\"%.9g\"> in the file", L->unit);
    } else if (L->geant4_marks) {
        L->unit = 0.001;
        L->unit_source = PRISM_UNIT_FROM_GEANT4;
        describe_marks(L->geant4_marks, marks, sizeof marks);
        snprintf(L->unit_rule, sizeof L->unit_rule, "Geant4 export (%s): millimetres", marks);
    } else {
        L->unit = 1.0;
        L->unit_source = PRISM_UNIT_FROM_DEFAULT;
        snprintf(L->unit_rule, sizeof L->unit_rule, "no <unit>: metres (COLLADA default)");
    }
    prism__cl_log(L, PRISM_LOG_INFO, "%s: lengths in units of %.9g m: %s", L->file, L->unit,
                  L->unit_rule);
}
