/* prism-info FILE.dae: what a COLLADA file holds, as a human summary or as
 * one JSON object (--json). Big files show a progress bar on stderr, only
 * when stderr is a terminal, so pipes and logs stay clean. */
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
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
        printf("}");
    }
    printf("],\n \"skipped\": {\"lines\": %zu, \"degenerate_polygons\": %zu, "
           "\"nonfinite_vertices\": %zu, \"unknown_elements\": %zu},\n",
           s->skipped.lines, s->skipped.degenerate_polygons, s->skipped.nonfinite_vertices,
           s->skipped.unknown_elements);
    printf(" \"quirks\": {\"float_array_counts\": %zu, \"flat_positions\": %zu},\n",
           s->quirks.float_array_counts, s->quirks.flat_positions);
    printf(" \"load_seconds\": %.6f, \"mb_per_second\": %.3f, \"triangles_per_second\": %.1f}\n",
           st->seconds, st->seconds > 0 ? (double)st->bytes / 1e6 / st->seconds : 0.0,
           st->triangles_per_second);
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
        printf("\n");
    }
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
