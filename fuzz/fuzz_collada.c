/* libFuzzer harness for the COLLADA loader: any bytes must either load into
 * a consistent scene or fail cleanly (ASan/UBSan watch for the rest). The
 * triangle limit keeps instancing bombs from allocating beyond the
 * fuzzer's memory limit; the loader refuses them before allocating. Every
 * input is also loaded cut into small chunks (the parallel path, which big
 * files take): it must give the same result, message and scene (the unit
 * and the rule that decided it, the quirks forgiven, included). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "geometry/collada/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const prism_scene *s)
{
    for (size_t i = 0; i < 3 * s->triangles_count; i++)
        if (s->indices[i] >= s->vertices_count)
            abort();
    for (size_t t = 0; t < s->triangles_count; t++) {
        if (s->triangle_solid[t] >= s->solids_count)
            abort();
        uint32_t m = s->triangle_material_inner[t], f = s->triangle_surface[t];
        if ((m != PRISM_NONE && m >= s->materials_count) ||
            (f != PRISM_NONE && f >= s->surfaces_count))
            abort();
    }
    for (size_t i = 0; i < s->solids_count; i++)
        if (!s->solids[i].name || !s->solids[i].path)
            abort();
}

/* A scene with nothing placed has no arrays at all (NULL). */
static bool eq(const void *a, const void *b, size_t n)
{
    return n == 0 || memcmp(a, b, n) == 0;
}

static bool same(const prism_scene *a, const prism_scene *b)
{
    size_t t = a->triangles_count;
    return t == b->triangles_count && a->vertices_count == b->vertices_count &&
           a->solids_count == b->solids_count && a->surfaces_count == b->surfaces_count &&
           eq(a->positions, b->positions, 12 * a->vertices_count) &&
           eq(a->indices, b->indices, 12 * t) && eq(a->triangle_solid, b->triangle_solid, 4 * t) &&
           eq(a->triangle_material_inner, b->triangle_material_inner, 4 * t) &&
           eq(a->triangle_surface, b->triangle_surface, 4 * t) &&
           memcmp(&a->skipped, &b->skipped, sizeof a->skipped) == 0 &&
           memcmp(&a->quirks, &b->quirks, sizeof a->quirks) == 0 &&
           a->unit_meter == b->unit_meter && a->geant4_marks == b->geant4_marks &&
           a->unit_source == b->unit_source && strcmp(a->unit_rule, b->unit_rule) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[256] = "", err2[256] = "";
    prism_load_desc d = {
        .max_triangles = 1u << 20, .max_depth = 128, .error = err, .error_size = sizeof err};
    prism_scene *s = NULL, *c = NULL;
    prism_result r = prism_scene_load_memory(data, size, "fuzz", &d, &s);
    if (r == PRISM_SUCCESS)
        check(s);
    if (size) {
        d.error = err2;
        prism_result rc = prism__scene_load_memory_chunked(data, size, "fuzz", &d, 1 + size % 61,
                                                           &c);
        if (rc != r || strcmp(err, err2) != 0 || (r == PRISM_SUCCESS && !same(s, c)))
            abort();
    }
    prism_scene_free(s);
    prism_scene_free(c);
    return 0;
}
