/* `prism-bench bvh-gpu FILE`: the CUDA BVH build against the host build on
 * the same triangles, side by side in one run: build time (the GPU's by
 * phase), Mtri/s, SAH of both trees (the same formula), peak device memory
 * against the node array, and what each tree is worth to the kernels:
 * primary rays/s inside and outside at WxH, photons/s. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "bench_kernels.h"
#include "bench_util.h"
#include "cli.h"
#include "prism/memory.h"
#include "prism/propagate.h"
#include "prism/render.h"

static const char *const phase_names[PRISM_BVH_PHASES] = {"codes", "sort", "hierarchy",
                                                          "optimisation", "layout"};

typedef struct tree_figures {
    double build_s; /* best of the repeats */
    double phases[PRISM_BVH_PHASES];
    double sah;
    size_t nodes, node_bytes, peak;
    unsigned depth, passes;
    const char *clustering; /* the CUDA build's: "passes", "H-PLOC" or "balanced" */
    double rays[2];         /* rays/s outside, inside */
    double photons[2];      /* photons/s at the two counts */
} tree_figures;

typedef struct options {
    const char *file;
    bool json, no_host;
    int repeat, width, height;
    size_t photons[2];
    unsigned leaf;
    prism_length_unit unit;
} options;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: prism-bench bvh-gpu FILE.dae [--json] [--no-host] [--repeat N] [--size WxH]\n"
            "       [--leaf N] [--photons N,M] [--unit m|cm|mm|auto]\n"
            "Builds the BVH on the CUDA device (best of --repeat, default 5, after a warm-up)\n"
            "and on the host (all OpenMP threads, best of 3), prints both builds (the GPU's\n"
            "phases), the SAH of both trees and the render rate (default 1920x1080, outside\n"
            "and inside) and propagation rate (default 1000000,10000000 photons) on each.\n"
            "--no-host: the device build and its tree's rates only (the host column stays 0),\n"
            "for scenes where the host builds would take most of the run.\n" PRISM_BENCH_UNIT_HELP);
}

static bool parse(int argc, char **argv, options *o)
{
    static const char *const flags[] = {"--json", "--no-host", NULL};
    o->file = prism_bench_positional(argc, argv, flags);
    o->json = prism_bench_has_flag(argc, argv, "--json");
    o->no_host = prism_bench_has_flag(argc, argv, "--no-host");
    o->repeat = atoi(prism_bench_option(argc, argv, "--repeat", "5"));
    o->leaf = (unsigned)atoi(prism_bench_option(argc, argv, "--leaf", "4"));
    const char *size = prism_bench_option(argc, argv, "--size", "1920x1080");
    const char *ph = prism_bench_option(argc, argv, "--photons", "1000000,10000000");
    unsigned long a = 0, b = 0;
    if (sscanf(size, "%dx%d", &o->width, &o->height) != 2 || sscanf(ph, "%lu,%lu", &a, &b) != 2)
        return false;
    if (!prism_bench_unit(argc, argv, "bvh-gpu", &o->unit))
        return false;
    o->photons[0] = a;
    o->photons[1] = b;
    return o->file && o->repeat > 0 && o->repeat <= 64 && o->width > 0 && o->height > 0 &&
           o->leaf >= 1 && o->leaf <= 64;
}

static double time_render(prism_context *ctx, prism_geometry *g, const prism_camera *cam,
                          const options *o, prism_buffer *image)
{
    prism_render_desc d = {.width = (uint32_t)o->width, .height = (uint32_t)o->height};
    prism_target t = {.kind = PRISM_TARGET_BUFFER, .buffer = image};
    double times[9];
    if (prism_render(ctx, g, cam, &d, &t, NULL) != PRISM_SUCCESS)
        return -1;
    for (int i = 0; i < 9; i++) {
        double t0 = prism_bench_now();
        if (prism_render(ctx, g, cam, &d, &t, NULL) != PRISM_SUCCESS)
            return -1;
        times[i] = prism_bench_now() - t0;
    }
    return (double)o->width * o->height / prism_bench_median(times, 9);
}

static double time_propagate(prism_context *ctx, prism_geometry *g, size_t count)
{
    prism_photon_source src = {.kind = PRISM_SOURCE_POINT, .count = count};
    prism_propagate_desc d = {.seed = 1, .max_steps = 100};
    prism_buffer *out = NULL;
    if (prism_buffer_create_device(ctx, count * sizeof(prism_photon), "bench.photons", &out) !=
        PRISM_SUCCESS)
        return -1;
    prism_propagate_outputs po = {.photons = {.kind = PRISM_TARGET_BUFFER, .buffer = out}};
    prism_propagate_stats st;
    double best = -1;
    for (int i = 0; i < 3; i++)
        if (prism_propagate(ctx, g, &src, &d, &po, &st) == PRISM_SUCCESS &&
            (best < 0 || st.seconds < best))
            best = st.seconds;
    prism_buffer_release(out);
    return best > 0 ? (double)count / best : -1;
}

static void kernels_on(prism_context *ctx, prism_geometry *g, const prism_scene *s,
                       const options *o, prism_buffer *image, tree_figures *f)
{
    prism_camera cam[2];
    bench_cameras(s, cam);
    for (int v = 0; v < 2; v++)
        f->rays[v] = time_render(ctx, g, &cam[v], o, image);
    for (int k = 0; k < 2; k++)
        f->photons[k] = o->photons[k] ? time_propagate(ctx, g, o->photons[k]) : 0;
}

/* Repeated device builds (uploads with no BVH; the vertices and triangles
 * go up each time); the last geometry is kept for the kernels. */
static prism_geometry *gpu_builds(prism_context *ctx, prism_scene *s, const options *o,
                                  tree_figures *f, char *why, size_t why_size)
{
    prism_bvh_desc bd = {.max_leaf_size = o->leaf};
    prism_geometry_desc d = {.policy = PRISM_PLACEMENT_DEVICE,
                             .builder = PRISM_BVH_BUILDER_CUDA,
                             .bvh = &bd};
    tool_env_geometry(&d);
    prism_geometry *g = NULL;
    f->build_s = -1;
    for (int i = 0; i <= o->repeat; i++) { /* the first is a warm-up */
        prism_geometry_destroy(g);
        g = NULL;
        if (prism_geometry_upload(ctx, s, NULL, &d, &g) != PRISM_SUCCESS) {
            snprintf(why, why_size, "%s", prism_context_last_error(ctx));
            return NULL;
        }
        const prism_bvh_build_report *b = &prism_geometry_report(g)->bvh;
        double gpu = 0;
        for (int k = 0; k < PRISM_BVH_PHASES; k++)
            gpu += b->phase_seconds[k];
        if (i > 0 && (f->build_s < 0 || gpu < f->build_s)) {
            f->build_s = gpu;
            memcpy(f->phases, b->phase_seconds, sizeof f->phases);
        }
        f->sah = b->stats.sah_cost;
        f->nodes = b->stats.nodes;
        f->node_bytes = b->stats.node_bytes;
        f->depth = b->stats.max_depth;
        f->passes = b->iterations;
        f->clustering = b->balanced ? "balanced" : b->hploc ? "H-PLOC" : "passes";
        f->peak = b->peak_device_bytes;
    }
    return g;
}

static prism_bvh *host_builds(prism_scene *s, const options *o, tree_figures *f)
{
    prism_bvh_desc bd = {.max_leaf_size = o->leaf, .threads = omp_get_max_threads()};
    prism_bvh *best = NULL;
    f->build_s = -1;
    for (int i = 0; i < 3; i++) {
        prism_bvh *b = NULL;
        if (prism_bvh_build(s->positions, s->vertices_count, s->indices, s->triangles_count, &bd,
                            &b) != PRISM_SUCCESS)
            break;
        if (f->build_s < 0 || b->stats.build_seconds < f->build_s)
            f->build_s = b->stats.build_seconds;
        prism_bvh_free(best);
        best = b;
    }
    if (best) {
        f->sah = best->stats.sah_cost;
        f->nodes = best->stats.nodes;
        f->node_bytes = best->stats.node_bytes;
        f->depth = best->stats.max_depth;
    }
    return best;
}

static double ratio(double a, double b)
{
    return b > 0 ? a / b : 0;
}

static void print_table(const options *o, const prism_scene *s, const tree_figures *g,
                        const tree_figures *h)
{
    const double n = (double)s->triangles_count;
    printf("prism-bench bvh-gpu: %s, %zu triangles, leaf size %u\n", o->file, s->triangles_count,
           o->leaf);
    printf("%-32s %14s %14s %10s\n", "", "cuda", "host", "cuda/host");
    printf("%-32s %14.3f %14.3f %10.4f\n", "build ms", g->build_s * 1e3, h->build_s * 1e3,
           ratio(g->build_s, h->build_s));
    printf("%-32s %14.1f %14.1f %10.1f\n", "build Mtri/s", ratio(n, g->build_s) / 1e6,
           ratio(n, h->build_s) / 1e6, ratio(h->build_s, g->build_s));
    for (int k = 0; k < PRISM_BVH_PHASES; k++) {
        char label[48];
        snprintf(label, sizeof label, "  %s ms", phase_names[k]);
        printf("%-32s %14.3f\n", label, g->phases[k] * 1e3);
    }
    printf("%-32s %14s\n", "  clustering", g->clustering ? g->clustering : "-");
    printf("%-32s %14u\n", "  clustering passes", g->passes);
    printf("%-32s %14.2f %14.2f %10.4f\n", "SAH", g->sah, h->sah, ratio(g->sah, h->sah));
    printf("%-32s %14zu %14zu\n", "nodes", g->nodes, h->nodes);
    printf("%-32s %14u %14u\n", "depth", g->depth, h->depth);
    printf("%-32s %14.1f %14s %10s\n", "peak device MB (build)", g->peak / 1e6, "-", "");
    printf("%-32s %14.2f\n", "  peak / node array", ratio((double)g->peak, (double)g->node_bytes));
    static const char *const views[2] = {"outside", "inside"};
    for (int v = 0; v < 2; v++) {
        char label[64];
        snprintf(label, sizeof label, "Mrays/s %s %dx%d", views[v], o->width, o->height);
        printf("%-32s %14.1f %14.1f %10.4f\n", label, g->rays[v] / 1e6, h->rays[v] / 1e6,
               ratio(g->rays[v], h->rays[v]));
    }
    for (int k = 0; k < 2; k++) {
        if (!o->photons[k])
            continue;
        char label[64];
        snprintf(label, sizeof label, "Mphotons/s, %zu photons", o->photons[k]);
        printf("%-32s %14.1f %14.1f %10.4f\n", label, g->photons[k] / 1e6, h->photons[k] / 1e6,
               ratio(g->photons[k], h->photons[k]));
    }
}

static void json_tree(const char *name, const tree_figures *f, double n, bool phases)
{
    printf("\"%s\":{\"build_ms\":%.4f,\"mtri_per_s\":%.2f,\"sah\":%.4f,\"nodes\":%zu,\"depth\":%u,"
           "\"node_bytes\":%zu,\"rays_per_s\":{\"outside\":%.0f,\"inside\":%.0f},"
           "\"photons_per_s\":[%.0f,%.0f]",
           name, f->build_s * 1e3, ratio(n, f->build_s) / 1e6, f->sah, f->nodes, f->depth,
           f->node_bytes, f->rays[0], f->rays[1], f->photons[0], f->photons[1]);
    if (phases) {
        printf(",\"clustering\":\"%s\",\"passes\":%u,\"peak_device_bytes\":%zu,\"phases_ms\":{",
               f->clustering ? f->clustering : "", f->passes, f->peak);
        for (int k = 0; k < PRISM_BVH_PHASES; k++)
            printf("%s\"%s\":%.4f", k ? "," : "", phase_names[k], f->phases[k] * 1e3);
        printf("}");
    }
    printf("}");
}

static void print_json(const options *o, const prism_scene *s, const tree_figures *g,
                       const tree_figures *h)
{
    const double n = (double)s->triangles_count;
    printf("{\"file\":");
    tool_json_string(o->file);
    printf(",\"triangles\":%zu,\"leaf\":%u,\"width\":%d,\"height\":%d,\"photons\":[%zu,%zu],",
           s->triangles_count, o->leaf, o->width, o->height, o->photons[0], o->photons[1]);
    json_tree("cuda", g, n, true);
    printf(",");
    json_tree("host", h, n, false);
    printf(",\"ratios\":{\"build\":%.4f,\"sah\":%.4f,\"rays_outside\":%.4f,\"rays_inside\":%.4f,"
           "\"photons\":[%.4f,%.4f],\"peak_over_nodes\":%.3f}}\n",
           ratio(g->build_s, h->build_s), ratio(g->sah, h->sah), ratio(g->rays[0], h->rays[0]),
           ratio(g->rays[1], h->rays[1]), ratio(g->photons[0], h->photons[0]),
           ratio(g->photons[1], h->photons[1]), ratio((double)g->peak, (double)g->node_bytes));
}

int prism_bench_bvh_gpu(int argc, char **argv)
{
    options o = {0};
    if (prism_bench_wants_help(argc, argv)) {
        usage(stdout);
        return 0;
    }
    if (!parse(argc, argv, &o)) {
        usage(stderr);
        return 2;
    }
    char why[1024] = "";
    prism_context *ctx = bench_context(PRISM_BACKEND_CUDA, why, sizeof why);
    if (!ctx) {
        fprintf(stderr, "prism-bench bvh-gpu: no CUDA context: %s\n", why);
        return 1;
    }
    prism_scene *s = NULL;
    prism_load_desc ld = {.error = why, .error_size = sizeof why, .length_unit = o.unit};
    tool_env_load(&ld);
    if (prism_scene_load(o.file, &ld, &s) != PRISM_SUCCESS) {
        fprintf(stderr, "prism-bench bvh-gpu: %s\n", why);
        prism_context_destroy(ctx);
        return 1;
    }
    tree_figures g = {0}, h = {0};
    int status = 1;
    prism_buffer *image = NULL;
    prism_geometry *gg = gpu_builds(ctx, s, &o, &g, why, sizeof why), *hg = NULL;
    prism_bvh *hb = gg && !o.no_host ? host_builds(s, &o, &h) : NULL;
    prism_geometry_desc d = {.policy = PRISM_PLACEMENT_DEVICE};
    tool_env_geometry(&d);
    if (!gg)
        fprintf(stderr, "prism-bench bvh-gpu: device build: %s\n", why);
    else if (!o.no_host && (!hb || prism_geometry_upload(ctx, s, hb, &d, &hg) != PRISM_SUCCESS))
        fprintf(stderr, "prism-bench bvh-gpu: host build or upload failed: %s\n",
                prism_context_last_error(ctx));
    else if (prism_buffer_create_device(ctx, (size_t)o.width * o.height * 4, "bench.image",
                                        &image) != PRISM_SUCCESS)
        fprintf(stderr, "prism-bench bvh-gpu: %s\n", prism_context_last_error(ctx));
    else {
        kernels_on(ctx, gg, s, &o, image, &g);
        if (hg)
            kernels_on(ctx, hg, s, &o, image, &h);
        (o.json ? print_json : print_table)(&o, s, &g, &h);
        status = 0;
    }
    prism_buffer_release(image);
    prism_geometry_destroy(gg);
    prism_geometry_destroy(hg);
    prism_bvh_free(hb);
    prism_scene_free(s);
    prism_context_destroy(ctx);
    return status;
}
