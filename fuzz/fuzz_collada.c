/* libFuzzer harness for the COLLADA loader: any bytes must either load into
 * a consistent scene or fail cleanly (ASan/UBSan watch for the rest). The
 * triangle limit keeps instancing bombs from allocating beyond the
 * fuzzer's memory limit; the loader refuses them before allocating. */
#include <stdint.h>
#include <stdlib.h>

#include "prism/scene.h"

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[256];
    prism_load_desc d = {.max_triangles = 1u << 20, .max_depth = 128, .error = err,
                         .error_size = sizeof err};
    prism_scene *s = NULL;
    if (prism_scene_load_memory(data, size, "fuzz", &d, &s) == PRISM_SUCCESS)
        check(s);
    prism_scene_free(s);
    return 0;
}
