/* prism-info FILE.dae: what a COLLADA file holds, as a human summary or as
 * one JSON object (--json). Big files show a progress bar on stderr, only
 * when stderr is a terminal, so pipes and logs stay clean. */
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "engine/upload/optics_tables.h"
#include "prism/scene.h"

#define PROGRESS_MIN_BYTES (32u << 20)

int prism_info_scene(const char *path, bool json, prism_length_unit unit);

typedef struct bar {
    int shown; /* last percentage drawn, -1 for none */
} bar;

static bool draw_bar(void *user, size_t done, size_t total)
{
    bar *b = user;
    int pct = total ? (int)(100.0 * (double)done / (double)total) : 0;
    if (pct > 100)
        pct = 100;
    if (pct != b->shown) {
        char cells[41];
        int fill = pct * 40 / 100;
        memset(cells, '#', (size_t)fill);
        memset(cells + fill, '.', (size_t)(40 - fill));
        cells[40] = 0;
        fprintf(stderr, "\rloading [%s] %3d%%", cells, pct);
        fflush(stderr);
        b->shown = pct;
    }
    return true;
}

static void json_string(const char *s)
{
    putchar('"');
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

static const char *up_name(prism_up_axis up)
{
    return up == PRISM_UP_X ? "X_UP" : up == PRISM_UP_Z ? "Z_UP" : "Y_UP";
}

static const char *source_name(prism_unit_source s)
{
    return s == PRISM_UNIT_FROM_USER     ? "user"
           : s == PRISM_UNIT_FROM_FILE   ? "file"
           : s == PRISM_UNIT_FROM_GEANT4 ? "geant4"
                                         : "default";
}

static const struct {
    uint32_t bit;
    const char *name;
} marks[] = {{PRISM_GEANT4_EXTRAS, "g4dae_extras"},
             {PRISM_GEANT4_META, "meta_extras"},
             {PRISM_GEANT4_POINTER_IDS, "pointer_ids"},
             {PRISM_GEANT4_DD_PATHS, "dd_paths"}};

/* ---- what the optics tables take from the file ---- */

/* A property name the optics tables do not read, and how many materials
 * and surfaces carry it. */
typedef struct ignored {
    const char *name;
    size_t materials, surfaces;
} ignored;

typedef struct ignored_list {
    ignored *at;
    size_t count;
    bool oom;
} ignored_list;

/* Count `name` once for its owner (a table may repeat a name). */
static void ignore(ignored_list *l, const prism_property *props, size_t i, bool surface)
{
    const char *name = props[i].name != NULL ? props[i].name : "";
    for (size_t j = 0; j < i; j++)
        if (props[j].name != NULL && strcmp(props[j].name, name) == 0)
            return;
    size_t k = 0;
    while (k < l->count && strcmp(l->at[k].name, name) != 0)
        k++;
    if (k == l->count) {
        ignored *grown = realloc(l->at, (l->count + 1) * sizeof *grown);
        if (grown == NULL) {
            l->oom = true;
            return;
        }
        l->at = grown;
        l->at[l->count++] = (ignored){name, 0, 0};
    }
    if (surface)
        l->at[k].surfaces++;
    else
        l->at[k].materials++;
}

static ignored_list ignored_properties(const prism_scene *s)
{
    ignored_list l = {0};
    for (size_t m = 0; m < s->materials_count; m++) {
        const prism_material *mat = &s->materials[m];
        for (size_t i = 0; i < mat->properties_count; i++)
            if (mat->properties[i].name == NULL ||
                !prism__optics_material_uses(mat, mat->properties[i].name))
                ignore(&l, mat->properties, i, false);
    }
    for (size_t f = 0; f < s->surfaces_count; f++) {
        const prism_surface *sf = &s->surfaces[f];
        for (size_t i = 0; i < sf->properties_count; i++)
            if (sf->properties[i].name == NULL ||
                !prism__optics_surface_uses(sf, sf->properties[i].name))
                ignore(&l, sf->properties, i, true);
    }
    return l;
}

/* How the optics tables take surface f: "geant4" (glisur or unified, as the
 * file says), "chroma" (its own probabilities), "bare" (it changes nothing:
 * a polished dielectric_dielectric that never absorbs) or "unsupported" (a
 * model, type or finish Prism lacks: a bare boundary, with a warning at
 * upload). */
static const char *surface_take(const prism_surface *f)
{
    prism_optics_surface_support support = prism__optics_surface_support(f);
    if (support == PRISM_OPTICS_SURFACE_CHROMA)
        return "chroma";
    if (support == PRISM_OPTICS_SURFACE_UNSUPPORTED)
        return "unsupported";
    float table[PRISM_SURF_COUNT_ * PRISM_OPTICS_WAVELENGTH_COUNT];
    prism_surface_params params;
    prism__optics_resample_surface(NULL, f, table, &params);
    return table[0] < 0.0f ? "bare" : "geant4";
}

static void json_props(const prism_property *p, size_t n)
{
    printf("[");
    for (size_t i = 0; i < n; i++) {
        printf(i ? ", " : "");
        json_string(p[i].name);
    }
    printf("]");
}

static void print_json(const char *path, const prism_scene *s)
{
    const prism_load_stats *st = &s->stats;
    printf("{\"file\": ");
    json_string(path);
    printf(", \"bytes\": %zu, \"geometries\": %zu, \"nodes\": %zu, \"instances\": %zu,\n",
           st->bytes, st->geometries, st->nodes, st->instances);
    printf(" \"triangles\": %zu, \"vertices\": %zu, \"unique_triangles\": %zu, "
           "\"unique_vertices\": %zu, \"solids\": %zu,\n",
           s->triangles_count, s->vertices_count, st->unique_triangles, st->unique_vertices,
           s->solids_count);
    printf(" \"bbox\": [[%.7g, %.7g, %.7g], [%.7g, %.7g, %.7g]], \"up_axis\": \"%s\", "
           "\"unit_meter\": %.9g, \"g4dae\": %s,\n",
           s->bbox_min[0], s->bbox_min[1], s->bbox_min[2], s->bbox_max[0], s->bbox_max[1],
           s->bbox_max[2], up_name(s->up_axis), s->unit_meter, s->g4dae ? "true" : "false");
    printf(" \"unit_source\": \"%s\", \"unit_rule\": ", source_name(s->unit_source));
    json_string(s->unit_rule);
    printf(", \"geant4_marks\": [");
    for (size_t i = 0, n = 0; i < sizeof marks / sizeof *marks; i++)
        if (s->geant4_marks & marks[i].bit)
            printf("%s\"%s\"", n++ ? ", " : "", marks[i].name);
    printf("], \"has_optics\": %s,\n", prism_scene_has_optics(s) ? "true" : "false");
    printf(" \"materials\": [");
    for (size_t i = 0; i < s->materials_count; i++) {
        printf(i ? ", {\"name\": " : "{\"name\": ");
        json_string(s->materials[i].name);
        printf(", \"properties\": ");
        json_props(s->materials[i].properties, s->materials[i].properties_count);
        printf("}");
    }
    printf("],\n \"surfaces\": [");
    for (size_t i = 0; i < s->surfaces_count; i++) {
        const prism_surface *f = &s->surfaces[i];
        printf(i ? ", {\"name\": " : "{\"name\": ");
        json_string(f->name);
        printf(", \"kind\": \"%s\", \"properties\": ",
               f->kind == PRISM_SURFACE_SKIN ? "skin" : "border");
        json_props(f->properties, f->properties_count);
        const char *take = surface_take(f);
        printf(", \"model\": \"%s\", \"type\": \"%s\", \"finish\": \"%s\", \"value\": %.9g, "
               "\"optics\": \"%s\", \"modelled\": %s}",
               prism__optics_model_name(f->model), prism__optics_type_name(f->type),
               prism__optics_finish_name(f->finish), f->value, take,
               strcmp(take, "unsupported") != 0 ? "true" : "false");
    }
    printf("],\n \"ignored_properties\": {\"materials\": {");
    ignored_list l = ignored_properties(s);
    for (size_t i = 0, n = 0; i < l.count; i++)
        if (l.at[i].materials) {
            printf(n++ ? ", " : "");
            json_string(l.at[i].name);
            printf(": %zu", l.at[i].materials);
        }
    printf("}, \"surfaces\": {");
    for (size_t i = 0, n = 0; i < l.count; i++)
        if (l.at[i].surfaces) {
            printf(n++ ? ", " : "");
            json_string(l.at[i].name);
            printf(": %zu", l.at[i].surfaces);
        }
    printf("}},\n \"skipped\": {\"lines\": %zu, \"degenerate_polygons\": %zu, "
           "\"nonfinite_vertices\": %zu, \"unknown_elements\": %zu},\n",
           s->skipped.lines, s->skipped.degenerate_polygons, s->skipped.nonfinite_vertices,
           s->skipped.unknown_elements);
    printf(" \"quirks\": {\"float_array_counts\": %zu, \"flat_positions\": %zu},\n",
           s->quirks.float_array_counts, s->quirks.flat_positions);
    printf(" \"load_seconds\": %.6f, \"mb_per_second\": %.3f, \"triangles_per_second\": %.1f}\n",
           st->seconds, st->seconds > 0 ? (double)st->bytes / 1e6 / st->seconds : 0.0,
           st->triangles_per_second);
    free(l.at);
}

static void human_props(const prism_property *p, size_t n)
{
    printf(" [");
    for (size_t i = 0; i < n; i++)
        printf("%s%s", i ? " " : "", p[i].name);
    printf("]");
}

/* "1.234 s", or milliseconds below a second, where "0.000 s" would hide a
 * small file's load ("0.41 ms", "28.3 ms"). */
static void seconds_text(char *out, size_t size, double seconds)
{
    if (seconds >= 1.0)
        snprintf(out, size, "%.3f s", seconds);
    else if (seconds >= 1e-3)
        snprintf(out, size, "%.1f ms", seconds * 1e3);
    else
        snprintf(out, size, "%.2f ms", seconds * 1e3);
}

static void print_human(const char *path, const prism_scene *s)
{
    const prism_load_stats *st = &s->stats;
    printf("%s: %.2f MB%s\n", path, (double)st->bytes / 1e6, s->g4dae ? ", G4DAE extras" : "");
    printf("  geometries %zu, nodes %zu, instances %zu, solids %zu\n", st->geometries, st->nodes,
           st->instances, s->solids_count);
    printf("  triangles  %zu unique, %zu in the world\n", st->unique_triangles, s->triangles_count);
    printf("  vertices   %zu unique, %zu in the world\n", st->unique_vertices, s->vertices_count);
    if (s->triangles_count)
        printf("  bbox (m)   [%g %g %g] .. [%g %g %g]\n", s->bbox_min[0], s->bbox_min[1],
               s->bbox_min[2], s->bbox_max[0], s->bbox_max[1], s->bbox_max[2]);
    printf("  unit       %g m, up axis %s\n", s->unit_meter, up_name(s->up_axis));
    printf("  unit rule  %s\n", s->unit_rule);
    printf("  materials  %zu%s\n", s->materials_count,
           prism_scene_has_optics(s) ? "" : " (no RINDEX anywhere: every material is vacuum)");
    for (size_t i = 0; i < s->materials_count; i++) {
        printf("    %s", s->materials[i].name);
        human_props(s->materials[i].properties, s->materials[i].properties_count);
        printf("\n");
    }
    printf("  surfaces   %zu\n", s->surfaces_count);
    for (size_t i = 0; i < s->surfaces_count; i++) {
        const prism_surface *f = &s->surfaces[i];
        printf("    %s (%s)", f->name, f->kind == PRISM_SURFACE_SKIN ? "skin" : "border");
        human_props(f->properties, f->properties_count);
        const char *take = surface_take(f);
        if (strcmp(take, "chroma") == 0) {
            printf("; Chroma's probabilities: modelled\n");
            continue;
        }
        printf("; %s %s %s, %s %g: %s\n", prism__optics_model_name(f->model),
               prism__optics_type_name(f->type), prism__optics_finish_name(f->finish),
               f->model == PRISM_SURFACE_MODEL_GLISUR ? "polish" : "sigma_alpha", f->value,
               strcmp(take, "geant4") == 0 ? "modelled"
               : strcmp(take, "bare") == 0
                   ? "modelled (changes nothing: a bare boundary)"
                   : "NOT modelled (model, type or finish Prism lacks): a bare boundary");
    }
    ignored_list l = ignored_properties(s);
    if (s->materials_count || s->surfaces_count) {
        printf("  ignored    ");
        for (size_t i = 0; i < l.count; i++) {
            printf("%s%s (", i ? ", " : "", l.at[i].name);
            if (l.at[i].materials)
                printf("%zu material%s", l.at[i].materials, l.at[i].materials == 1 ? "" : "s");
            if (l.at[i].surfaces)
                printf("%s%zu surface%s", l.at[i].materials ? ", " : "", l.at[i].surfaces,
                       l.at[i].surfaces == 1 ? "" : "s");
            printf(")");
        }
        printf("%s\n", l.count ? "" : "nothing: the optics tables read every property given");
    }
    free(l.at);
    printf("  skipped    %zu lines, %zu degenerate polygons, %zu non-finite vertices, "
           "%zu unknown elements\n",
           s->skipped.lines, s->skipped.degenerate_polygons, s->skipped.nonfinite_vertices,
           s->skipped.unknown_elements);
    if (s->quirks.float_array_counts || s->quirks.flat_positions)
        printf("  forgiven   %zu float_array counts disagreeing with their text, %zu "
               "two-component position sources (z = 0)\n",
               s->quirks.float_array_counts, s->quirks.flat_positions);
    char took[32];
    seconds_text(took, sizeof took, st->seconds);
    printf("  load       %s, %.1f MB/s, %.2f M triangles/s\n", took,
           st->seconds > 0 ? (double)st->bytes / 1e6 / st->seconds : 0.0,
           st->triangles_per_second / 1e6);
}

static void log_info(void *user, prism_log_level level, const char *msg)
{
    (void)user;
    if (level == PRISM_LOG_WARNING) /* errors are printed once, below */
        fprintf(stderr, "prism-info: %s\n", msg);
    else if (level == PRISM_LOG_DEBUG) /* PRISM_LOAD_TRACE's lines, as they are */
        fprintf(stderr, "%s\n", msg);
}

int prism_info_scene(const char *path, bool json, prism_length_unit unit)
{
    char err[1024] = "";
    bar b = {-1};
    prism_load_desc d = {
        .error = err, .error_size = sizeof err, .log = log_info, .length_unit = unit};
    tool_env_load(&d);
    struct stat st;
    bool show = isatty(fileno(stderr)) && stat(path, &st) == 0 &&
                (size_t)st.st_size >= PROGRESS_MIN_BYTES;
    if (show) {
        d.progress = draw_bar;
        d.progress_user = &b;
    }
    prism_scene *s = NULL;
    prism_result r = prism_scene_load(path, &d, &s);
    if (show)
        fprintf(stderr, "\r%60s\r", "");
    if (r != PRISM_SUCCESS) {
        fprintf(stderr, "prism-info: %s (%s)\n", err, prism_result_string(r));
        return 1;
    }
    if (json)
        print_json(path, s);
    else
        print_human(path, s);
    prism_scene_free(s);
    return 0;
}
