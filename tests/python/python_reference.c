/* The C API side of the Python package's comparison tests
 * (test_compare.py): load, upload and propagate on the host backend with
 * the public calls only, and write the final photons (and step records)
 * as raw bytes, which the test compares with what prism's Python API
 * returns for the same file, source and seed.
 *
 *   python_reference FILE.dae SEED MAX_STEPS RECORD_STEPS SOURCE OUT [RECORDS]
 *   SOURCE: point:X,Y,Z,N   or   photons:IN (N raw prism_photon) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prism/prism.h"

static int fail(const char *what, prism_result r, const char *message)
{
    fprintf(stderr, "python_reference: %s: %s: %s\n", what, prism_result_string(r), message);
    return 1;
}

static void *read_all(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    void *data = NULL;
    if (fseek(f, 0, SEEK_END) == 0) {
        long n = ftell(f);
        rewind(f);
        data = n > 0 ? malloc((size_t)n) : NULL;
        if (data != NULL && fread(data, 1, (size_t)n, f) != (size_t)n) {
            free(data);
            data = NULL;
        }
        *size = n > 0 ? (size_t)n : 0;
    }
    fclose(f);
    return data;
}

static int write_all(const char *path, const void *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    int ok = f != NULL && fwrite(data, 1, size, f) == size;
    if (f != NULL)
        ok = fclose(f) == 0 && ok;
    return ok ? 0 : 1;
}

static int parse_source(const char *arg, prism_photon_source *src, void **given)
{
    memset(src, 0, sizeof *src);
    unsigned long n = 0;
    if (sscanf(arg, "point:%f,%f,%f,%lu", &src->position[0], &src->position[1], &src->position[2],
               &n) == 4) {
        src->kind = PRISM_SOURCE_POINT;
        src->count = n;
        src->wavelength_nm = 420.0f;
        return 0;
    }
    if (strncmp(arg, "photons:", 8) == 0) {
        size_t bytes = 0;
        *given = read_all(arg + 8, &bytes);
        if (*given == NULL || bytes % sizeof(prism_photon) != 0)
            return 1;
        src->kind = PRISM_SOURCE_PHOTONS;
        src->count = bytes / sizeof(prism_photon);
        src->photons = *given;
        return 0;
    }
    return 1;
}

int main(int argc, char **argv)
{
    if (argc < 7) {
        fprintf(stderr, "usage: python_reference FILE.dae SEED MAX_STEPS RECORD_STEPS SOURCE OUT "
                        "[RECORDS]\n");
        return 2;
    }
    prism_photon_source src;
    void *given = NULL;
    if (parse_source(argv[5], &src, &given) != 0) {
        fprintf(stderr, "python_reference: bad source %s\n", argv[5]);
        return 2;
    }
    prism_propagate_desc desc = {.seed = strtoull(argv[2], NULL, 10),
                                 .max_steps = (uint32_t)strtoul(argv[3], NULL, 10),
                                 .record_steps = (uint32_t)strtoul(argv[4], NULL, 10)};
    char error[1024] = "";
    prism_load_desc ld = {.error = error, .error_size = sizeof error};
    prism_scene *scene = NULL;
    prism_result r = prism_scene_load(argv[1], &ld, &scene);
    if (r != PRISM_SUCCESS)
        return fail("load", r, error);
    prism_context *ctx = NULL;
    prism_context_desc cd = {.backend = PRISM_BACKEND_HOST};
    r = prism_context_create(&cd, &ctx);
    if (r != PRISM_SUCCESS)
        return fail("context", r, "");
    prism_geometry *g = NULL;
    prism_geometry_desc gd = {0};
    r = prism_geometry_upload(ctx, scene, NULL, &gd, &g);
    if (r != PRISM_SUCCESS)
        return fail("upload", r, prism_context_last_error(ctx));
    size_t k = desc.record_steps;
    prism_photon *photons = calloc(src.count ? src.count : 1, sizeof *photons);
    prism_step_record *records = k ? calloc(src.count * k, sizeof *records) : NULL;
    prism_propagate_outputs out = {.photons = {.host = photons}, .records = {.host = records}};
    prism_propagate_stats stats;
    r = prism_propagate(ctx, g, &src, &desc, &out, &stats);
    int status = r != PRISM_SUCCESS ? fail("propagate", r, prism_context_last_error(ctx)) : 0;
    if (status == 0)
        status = write_all(argv[6], photons, src.count * sizeof *photons);
    if (status == 0 && k && argc > 7)
        status = write_all(argv[7], records, src.count * k * sizeof *records);
    free(photons);
    free(records);
    free(given);
    prism_geometry_destroy(g);
    prism_context_destroy(ctx);
    prism_scene_free(scene);
    return status;
}
