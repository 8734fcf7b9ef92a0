/* Shared pieces of prism-bench render and propagate (bench_kernels.h). */
#include "bench_kernels.h"

#include <stdio.h>
#include <string.h>

#include "bench_util.h"
#include "cli.h"

bool bench_scene_load(const char *file, prism_length_unit unit, unsigned bvh_order,
                      bench_scene *out, char *why, size_t why_size)
{
    memset(out, 0, sizeof *out);
    char err[512] = "";
    prism_load_desc ld = {0};
    ld.error = err;
    ld.error_size = sizeof err;
    ld.length_unit = unit;
    tool_env_load(&ld);
    double t0 = prism_bench_now();
    prism_result r = prism_scene_load(file, &ld, &out->scene);
    out->load_seconds = prism_bench_now() - t0;
    if (r != PRISM_SUCCESS) {
        snprintf(why, why_size, "%s: %s", prism_result_string(r), err);
        return false;
    }
    t0 = prism_bench_now();
    prism_bvh_desc bd = {0};
    bd.order = bvh_order;
    r = prism_bvh_build(out->scene->positions, out->scene->vertices_count, out->scene->indices,
                        out->scene->triangles_count, &bd, &out->bvh);
    out->bvh_seconds = prism_bench_now() - t0;
    if (r != PRISM_SUCCESS) {
        snprintf(why, why_size, "BVH build: %s", prism_result_string(r));
        bench_scene_free(out);
        return false;
    }
    return true;
}

bool bench_bvh_option(int argc, char **argv, unsigned bvh_order, bool *device_bvh)
{
    const char *v = prism_bench_option(argc, argv, "--bvh", "cuda");
    *device_bvh = strcmp(v, "cuda") == 0 && bvh_order == PRISM_BVH_ORDER_BFS;
    return strcmp(v, "cuda") == 0 || strcmp(v, "host") == 0;
}

void bench_scene_free(bench_scene *s)
{
    prism_bvh_free(s->bvh);
    prism_scene_free(s->scene);
    memset(s, 0, sizeof *s);
}

prism_context *bench_context(prism_backend backend, char *why, size_t why_size)
{
    prism_context_desc d = {0};
    d.backend = backend;
    tool_env_context(&d);
    prism_context *ctx = NULL;
    prism_result r = prism_context_create(&d, &ctx);
    if (r != PRISM_SUCCESS)
        snprintf(why, why_size, "%s backend: %s", prism_backend_name(backend),
                 prism_result_string(r));
    return ctx;
}

prism_geometry *bench_upload(prism_context *ctx, const bench_scene *s,
                             prism_placement_policy policy, size_t device_budget, char *why,
                             size_t why_size)
{
    prism_geometry_desc d = {0};
    d.policy = policy;
    d.device_budget = device_budget;
    tool_env_geometry(&d);
    const bool device = s->device_bvh && prism_context_backend(ctx) == PRISM_BACKEND_CUDA;
    if (device)
        d.builder = PRISM_BVH_BUILDER_CUDA;
    prism_geometry *g = NULL;
    if (prism_geometry_upload(ctx, s->scene, device ? NULL : s->bvh, &d, &g) != PRISM_SUCCESS) {
        char label[32] = "";
        if (device_budget != 0)
            prism_bench_budget_label(device_budget, label, sizeof label);
        snprintf(why, why_size, "upload (%s%s%s): %s", bench_policy_name(policy),
                 device_budget != 0 ? ", " : "", label, prism_context_last_error(ctx));
        return NULL;
    }
    return g;
}

prism_geometry *bench_upload_budget(prism_context *ctx, const bench_scene *s, size_t budget,
                                    char label[24], char *why, size_t why_size)
{
    prism_bench_budget_label(budget, label, 24);
    return bench_upload(ctx, s, PRISM_PLACEMENT_AUTO, budget, why, why_size);
}

const char *bench_policy_name(prism_placement_policy policy)
{
    switch (policy) {
    case PRISM_PLACEMENT_DEVICE: return "device";
    case PRISM_PLACEMENT_MAPPED: return "mapped";
    case PRISM_PLACEMENT_CHROMA: return "chroma";
    default: return "auto";
    }
}
