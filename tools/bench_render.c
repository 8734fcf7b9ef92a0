/* `prism-bench render FILE`: primary rays per second of prism_render at
 * 1920x1080 (by default), from outside the detector and from its centre,
 * shaded (first hit) and x-ray (4 layers: the detector's inside shows),
 * for each placement policy (device, mapped, chroma) on the CUDA backend
 * and on the host backend, so the GPU/CPU ratio and what promotion to
 * device memory is worth come out of one run. CUDA renders into device
 * memory (the image stays on the GPU, as with a PBO); the host backend into
 * host memory. Each figure is the median of --repeat renders after one
 * warm-up. With a CUDA device the kernel's registers and occupancy are
 * reported too. --device-budget adds rows on the auto policy with the
 * geometry's device bytes capped (a split tree: its top levels on the
 * device, the rest mapped). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_kernels.h"
#include "bench_util.h"
#include "cli.h"
#include "prism/kernels.h"
#include "prism/memory.h"
#include "prism/render.h"
#include "engine/launch/render_tuning.h"

#define MAX_RESULTS 160
#define MAX_TUNINGS 24
#define MAX_BUDGETS 8

typedef struct render_result {
    const char *backend, *view;
    char policy[24];  /* "device", ..., or "budget:64M" (auto with a device budget) */
    char variant[16]; /* CUDA render variant and block ("v3/256"), or "" */
    double seconds, rays_per_second;
    size_t device_budget;                        /* 0: none */
    size_t device_bytes, mapped_bytes;           /* where the geometry went */
    size_t node_device_bytes, node_mapped_bytes; /* where the BVH nodes went */
    const char *tree; /* "wide" or "binary" (the default variant's walk); "-" with a variant */
} render_result;

/* Which geometry a row ran on: its policy column and device budget. */
typedef struct placement_row {
    const char *label; /* "device", ..., "budget:64M" */
    size_t budget;     /* 0: none */
} placement_row;

typedef struct render_bench {
    const char *file;
    unsigned width, height;
    int repeat, host_repeat;
    bool json, no_host, no_cuda, device_only;
    unsigned bvh_order;
    prism_length_unit unit;                   /* --unit */
    bool device_bvh;                          /* --bvh cuda: CUDA rows on the device-built tree */
    int variants[MAX_TUNINGS], variant_count; /* --variants: CUDA kernels to compare */
    size_t budgets[MAX_BUDGETS]; /* --device-budget: auto rows with these device caps */
    int budgets_n;
    unsigned blocks[MAX_TUNINGS];
    int block_count;
    int tuned_registers[MAX_TUNINGS * MAX_TUNINGS];
    double tuned_occupancy[MAX_TUNINGS * MAX_TUNINGS];
    render_result results[MAX_RESULTS];
    int count;
    char skipped[4][300];
    int skipped_count;
    int registers;
    unsigned block; /* the render kernel's block size */
    prism_occupancy occupancy;
    bool have_occupancy;
} render_bench;

static void usage(FILE *f)
{
    fprintf(f, "usage: prism-bench render FILE.dae [--width W] [--height H] [--repeat N]\n"
               "                          [--host-repeat N] [--no-host] [--no-cuda] [--json]\n"
               "                          [--device-only] [--bvh-order bfs|dfs] [--bvh cuda|host]\n"
               "                          [--variants V,V..] [--blocks B,B..] [--unit U]\n"
               "                          [--device-budget B,B..]\n"
               "Primary rays per second at WxH (default 1920x1080), outside and inside the\n"
               "detector, for placement policies device, mapped and chroma on CUDA and on the\n"
               "host backend. Median of N renders (default 5; host 1) after a warm-up.\n"
               "--device-only: CUDA on the device policy only. --variants: CUDA render\n"
               "kernel variants to compare (device and mapped policies; engine/cuda/kernels.cu\n"
               "lists them), each with every --blocks size (default 256). --bvh: the CUDA rows\n"
               "trace the tree the device builds at upload (cuda, the default) or the host's\n"
               "(host); host rows always trace the host's. --bvh-order: the host tree's node\n"
               "order (default bfs; dfs implies --bvh host).\n"
               "--device-budget: rows on the auto policy with at most B bytes of the geometry in\n"
               "device memory each (k, M, G: 2^10, 2^20, 2^30 bytes): hottest arrays first, the\n"
               "BVH nodes split at a node, so the top of the tree is on the device and the rest\n"
               "mapped. On CUDA (also with --device-only; the default variant) and on the host\n"
               "backend next to its auto row (both memories are host memory there). The policy\n"
               "column says budget:B; node dev and node map say where the nodes went; tree says\n"
               "which tree the default variant walks (wide where the upload made it, except on\n"
               "CUDA with the geometry all on the device: binary).\n" PRISM_BENCH_UNIT_HELP);
}

static void skip(render_bench *b, const char *why)
{
    if (b->skipped_count < 4)
        snprintf(b->skipped[b->skipped_count++], sizeof b->skipped[0], "%.299s", why);
}

/* Outside: from 90% of the way to a corner of the bounding box (x and y),
 * a third of the way up, looking at the centre: inside the world volume
 * but outside the tank of a G4DAE detector, whose world box is its
 * bounding box (a camera beyond it would see the world box's 12 faces).
 * Inside: from the centre, looking along +x. */
void bench_cameras(const prism_scene *s, prism_camera cam[2])
{
    float c[3], h[3];
    for (int i = 0; i < 3; i++) {
        c[i] = 0.5f * (s->bbox_min[i] + s->bbox_max[i]);
        h[i] = 0.5f * (s->bbox_max[i] - s->bbox_min[i]);
    }
    int up = s->up_axis == PRISM_UP_Z ? 2 : 1;
    const float reach[3] = {0.9f, 0.9f, 0.9f};
    memset(cam, 0, 2 * sizeof *cam);
    for (int i = 0; i < 3; i++) {
        cam[0].eye[i] = c[i] + (i == up ? 0.33f : reach[i]) * h[i];
        cam[0].look_at[i] = c[i];
        cam[1].eye[i] = c[i];
        cam[1].look_at[i] = c[i] + (i == 0 ? 1.0f : 0.0f);
    }
    cam[0].up[up] = cam[1].up[up] = 1.0f;
    cam[0].vfov_degrees = 60.0f;
    cam[1].vfov_degrees = 90.0f;
}

static double time_view(prism_context *ctx, prism_geometry *g, const prism_camera *cam,
                        const prism_render_desc *d, const prism_target *t, int repeat)
{
    double times[64];
    if (prism_render(ctx, g, cam, d, t, NULL) != PRISM_SUCCESS)
        return -1;
    for (int i = 0; i < repeat; i++) {
        double t0 = prism_bench_now();
        if (prism_render(ctx, g, cam, d, t, NULL) != PRISM_SUCCESS)
            return -1;
        times[i] = prism_bench_now() - t0;
    }
    return prism_bench_median(times, (size_t)repeat);
}

/* The four views of `g`, one result each, labelled with `variant`. */
static void measure_views(render_bench *b, prism_context *ctx, const bench_scene *s,
                          prism_geometry *g, placement_row pr, const prism_target *t, int repeat,
                          const char *variant)
{
    const prism_upload_report *rep = prism_geometry_report(g);
    char why[600];
    prism_camera cam[2];
    bench_cameras(s->scene, cam);
    static const char *views[4] = {"outside", "inside", "outside-xray", "inside-xray"};
    for (int v = 0; v < 4 && b->count < MAX_RESULTS; v++) {
        prism_render_desc d = {.width = b->width,
                               .height = b->height,
                               .mode = v < 2 ? PRISM_RENDER_SHADED : PRISM_RENDER_XRAY};
        double sec = time_view(ctx, g, &cam[v % 2], &d, t, repeat);
        if (sec < 0) {
            snprintf(why, sizeof why, "render: %s", prism_context_last_error(ctx));
            skip(b, why);
            break;
        }
        render_result *r = &b->results[b->count++];
        r->backend = prism_backend_name(prism_context_backend(ctx));
        snprintf(r->policy, sizeof r->policy, "%s", pr.label);
        r->device_budget = pr.budget;
        r->view = views[v];
        snprintf(r->variant, sizeof r->variant, "%s", variant);
        r->seconds = sec;
        r->rays_per_second = (double)b->width * b->height / sec;
        r->device_bytes = rep->device_bytes;
        r->mapped_bytes = rep->mapped_bytes;
        prism_bench_node_bytes(rep, &r->node_device_bytes, &r->node_mapped_bytes);
        /* CUDA's default walk: the wide tree where part of the geometry is
         * mapped, the tuned binary one where it is all on the device */
        const bool cuda = prism_context_backend(ctx) == PRISM_BACKEND_CUDA;
        r->tree = variant[0]                       ? "-"
                  : cuda && rep->mapped_bytes == 0 ? "binary"
                                                   : prism_bench_tree(rep);
    }
}

static void measure_policy(render_bench *b, prism_context *ctx, const bench_scene *s,
                           prism_placement_policy policy, const prism_target *t, int repeat)
{
    char why[600];
    prism_geometry *g = bench_upload(ctx, s, policy, 0, why, sizeof why);
    if (g == NULL) {
        skip(b, why);
        return;
    }
    measure_views(b, ctx, s, g, (placement_row){bench_policy_name(policy), 0}, t, repeat, "");
    prism_geometry_destroy(g);
}

/* The --device-budget rows: auto with each cap, the default variant. */
static void measure_budgets(render_bench *b, prism_context *ctx, const bench_scene *s,
                            const prism_target *t, int repeat)
{
    char why[600], label[24];
    for (int j = 0; j < b->budgets_n; j++) {
        prism_geometry *g = bench_upload_budget(ctx, s, b->budgets[j], label, why, sizeof why);
        if (g == NULL) {
            skip(b, why);
            continue;
        }
        measure_views(b, ctx, s, g, (placement_row){label, b->budgets[j]}, t, repeat, "");
        prism_geometry_destroy(g);
    }
}

/* --variants x --blocks on one policy, one upload; the kernel choice is
 * put back as it was. */
static void measure_variants(render_bench *b, prism_context *ctx, const bench_scene *s,
                             prism_placement_policy policy, const prism_target *t)
{
    if (prism__cuda_render_variants() == 0) {
        skip(b, "--variants: this build has no CUDA");
        return;
    }
    char why[600];
    prism_geometry *g = bench_upload(ctx, s, policy, 0, why, sizeof why);
    if (g == NULL) {
        skip(b, why);
        return;
    }
    int v0;
    unsigned b0;
    prism__cuda_render_tuning_get(ctx, &v0, &b0);
    for (int i = 0; i < b->variant_count; i++)
        for (int j = 0; j < b->block_count; j++) {
            char label[16];
            snprintf(label, sizeof label, "v%d/%u", b->variants[i], b->blocks[j]);
            if (!prism__cuda_render_tuning(ctx, b->variants[i], b->blocks[j])) {
                snprintf(why, sizeof why, "variant %s: no such variant or block", label);
                skip(b, why);
                continue;
            }
            prism_occupancy o;
            int k = i * MAX_TUNINGS + j;
            b->tuned_registers[k] = 0;
            b->tuned_occupancy[k] = 0;
            if (prism_kernel_resources(ctx, "render", &b->tuned_registers[k], NULL) ==
                    PRISM_SUCCESS &&
                prism_kernel_occupancy(ctx, "render", (int)b->blocks[j], &o) == PRISM_SUCCESS)
                b->tuned_occupancy[k] = o.occupancy;
            measure_views(b, ctx, s, g, (placement_row){bench_policy_name(policy), 0}, t, b->repeat,
                          label);
        }
    prism__cuda_render_tuning(ctx, v0, b0);
    prism_geometry_destroy(g);
}

static void measure_cuda(render_bench *b, const bench_scene *s)
{
    char why[300];
    prism_context *ctx = bench_context(PRISM_BACKEND_CUDA, why, sizeof why);
    if (ctx == NULL) {
        skip(b, why);
        return;
    }
    prism_buffer *image = NULL;
    if (prism_buffer_create_device(ctx, (size_t)b->width * b->height * 4, "bench.image", &image) ==
        PRISM_SUCCESS) {
        prism_target t = {.kind = PRISM_TARGET_BUFFER, .buffer = image};
        const prism_placement_policy p[3] = {PRISM_PLACEMENT_DEVICE, PRISM_PLACEMENT_MAPPED,
                                             PRISM_PLACEMENT_CHROMA};
        for (int i = 0; i < (b->device_only ? 1 : 3); i++)
            measure_policy(b, ctx, s, p[i], &t, b->repeat);
        /* before the variants: choosing one ends the default choice */
        measure_budgets(b, ctx, s, &t, b->repeat);
        b->block = 256;
        int v;
        prism__cuda_render_tuning_get(ctx, &v, &b->block);
        b->have_occupancy =
            prism_kernel_resources(ctx, "render", &b->registers, NULL) == PRISM_SUCCESS &&
            prism_kernel_occupancy(ctx, "render", (int)b->block, &b->occupancy) == PRISM_SUCCESS;
        if (b->variant_count > 0)
            for (int i = 0; i < (b->device_only ? 1 : 2); i++)
                measure_variants(b, ctx, s, p[i], &t);
    } else {
        skip(b, "cuda: no device memory for the image");
    }
    prism_buffer_release(image);
    prism_context_destroy(ctx);
}

static void measure_host(render_bench *b, const bench_scene *s)
{
    char why[300];
    prism_context *ctx = bench_context(PRISM_BACKEND_HOST, why, sizeof why);
    if (ctx == NULL) {
        skip(b, why);
        return;
    }
    uint32_t *pixels = malloc((size_t)b->width * b->height * 4);
    prism_target t = {.kind = PRISM_TARGET_HOST, .host = pixels};
    if (pixels != NULL) {
        measure_policy(b, ctx, s, PRISM_PLACEMENT_AUTO, &t, b->host_repeat);
        measure_budgets(b, ctx, s, &t, b->host_repeat);
    }
    free(pixels);
    prism_context_destroy(ctx);
}

static void print_table(const render_bench *b, const bench_scene *s)
{
    printf("prism-bench render %s: %zu triangles, %ux%u, load %.2f s, BVH %.2f s\n", b->file,
           s->scene->triangles_count, b->width, b->height, s->load_seconds, s->bvh_seconds);
    printf("BVH: CUDA rows on the %s tree; host tree (order %s): %zu nodes, SAH cost %.1f\n",
           s->device_bvh ? "device-built (built at each upload)" : "host-built",
           b->bvh_order == PRISM_BVH_ORDER_DFS ? "dfs" : "bfs", s->bvh->stats.nodes,
           s->bvh->stats.sah_cost);
    printf("%-8s %-12s %-8s %-13s %12s %14s %10s %10s %12s %12s %s\n", "backend", "policy",
           "variant", "view", "ms/frame", "Mrays/s", "device MB", "mapped MB", "node dev MB",
           "node map MB", "tree");
    for (int i = 0; i < b->count; i++) {
        const render_result *r = &b->results[i];
        printf("%-8s %-12s %-8s %-13s %12.3f %14.1f %10.1f %10.1f %12.2f %12.2f %s\n", r->backend,
               r->policy, r->variant[0] ? r->variant : "-", r->view, r->seconds * 1e3,
               r->rays_per_second / 1e6, r->device_bytes / 1e6, r->mapped_bytes / 1e6,
               r->node_device_bytes / 1e6, r->node_mapped_bytes / 1e6, r->tree);
    }
    for (int i = 0; i < b->variant_count; i++)
        for (int j = 0; j < b->block_count; j++)
            printf("variant v%d/%u: %d registers/thread, occupancy %.2f\n", b->variants[i],
                   b->blocks[j], b->tuned_registers[i * MAX_TUNINGS + j],
                   b->tuned_occupancy[i * MAX_TUNINGS + j]);
    if (b->have_occupancy)
        printf("render kernel: %d registers/thread, occupancy %.2f at %u threads (limited by %s)\n",
               b->registers, b->occupancy.occupancy, b->block,
               prism_occupancy_limit_name(b->occupancy.limited_by));
    for (int i = 0; i < b->skipped_count; i++)
        printf("not measured: %s\n", b->skipped[i]);
}

static void print_json(const render_bench *b, const bench_scene *s)
{
    printf("{\"bench\":\"render\",\"file\":");
    tool_json_string(b->file);
    printf(",\"cuda_bvh\":\"%s\"", s->device_bvh ? "device" : "host");
    printf(",\"triangles\":%zu,\"width\":%u,\"height\":%u,\"results\":[", s->scene->triangles_count,
           b->width, b->height);
    for (int i = 0; i < b->count; i++) {
        const render_result *r = &b->results[i];
        printf("%s{\"backend\":\"%s\",\"policy\":\"%s\",\"variant\":\"%s\","
               "\"view\":\"%s\",\"seconds\":%.6g,"
               "\"rays_per_second\":%.6g,\"device_bytes\":%zu,\"mapped_bytes\":%zu,"
               "\"device_budget\":%zu,\"node_device_bytes\":%zu,\"node_mapped_bytes\":%zu,"
               "\"tree\":\"%s\"}",
               i ? "," : "", r->backend, r->policy, r->variant, r->view, r->seconds,
               r->rays_per_second, r->device_bytes, r->mapped_bytes, r->device_budget,
               r->node_device_bytes, r->node_mapped_bytes, r->tree);
    }
    printf("]");
    if (b->have_occupancy)
        printf(",\"render_kernel\":{\"registers\":%d,\"occupancy\":%.3f,\"limited_by\":\"%s\"}",
               b->registers, b->occupancy.occupancy,
               prism_occupancy_limit_name(b->occupancy.limited_by));
    printf(",\"not_measured\":[");
    for (int i = 0; i < b->skipped_count; i++) {
        printf(i ? "," : "");
        tool_json_string(b->skipped[i]);
    }
    printf("]}\n");
}

/* "3,5,7" into out[]; the count, or -1 for a malformed list. */
static int parse_list(const char *text, int out[MAX_TUNINGS])
{
    int n = 0;
    while (*text != '\0') {
        char *end;
        long v = strtol(text, &end, 10);
        if (end == text || n == MAX_TUNINGS || v < 0 || v > 4096)
            return -1;
        out[n++] = (int)v;
        text = *end == ',' ? end + 1 : end;
        if (*end != ',' && *end != '\0')
            return -1;
    }
    return n;
}

static bool parse(int argc, char **argv, render_bench *b)
{
    memset(b, 0, sizeof *b);
    b->width = (unsigned)atoi(prism_bench_option(argc, argv, "--width", "1920"));
    b->height = (unsigned)atoi(prism_bench_option(argc, argv, "--height", "1080"));
    b->repeat = atoi(prism_bench_option(argc, argv, "--repeat", "5"));
    b->host_repeat = atoi(prism_bench_option(argc, argv, "--host-repeat", "1"));
    b->json = prism_bench_has_flag(argc, argv, "--json");
    b->no_host = prism_bench_has_flag(argc, argv, "--no-host");
    b->no_cuda = prism_bench_has_flag(argc, argv, "--no-cuda");
    b->device_only = prism_bench_has_flag(argc, argv, "--device-only");
    const char *order = prism_bench_option(argc, argv, "--bvh-order", "bfs");
    b->bvh_order = strcmp(order, "dfs") == 0 ? PRISM_BVH_ORDER_DFS : PRISM_BVH_ORDER_BFS;
    const bool bvh_ok = bench_bvh_option(argc, argv, b->bvh_order, &b->device_bvh);
    b->variant_count = parse_list(prism_bench_option(argc, argv, "--variants", ""), b->variants);
    int blocks[MAX_TUNINGS];
    b->block_count = parse_list(prism_bench_option(argc, argv, "--blocks", "256"), blocks);
    for (int i = 0; i < b->block_count; i++)
        b->blocks[i] = blocks[i] > 0 ? (unsigned)blocks[i] : 0u;
    if (!prism_bench_budgets(argc, argv, "render", b->budgets, MAX_BUDGETS, &b->budgets_n))
        return false;
    static const char *const flags[] = {"--json", "--no-host", "--no-cuda", "--device-only", NULL};
    b->file = prism_bench_positional(argc, argv, flags);
    if (!prism_bench_unit(argc, argv, "render", &b->unit))
        return false;
    return b->file != NULL && b->width >= 1 && b->width <= 16384 && b->height >= 1 &&
           b->height <= 16384 && b->repeat >= 1 && b->repeat <= 64 && b->host_repeat >= 1 &&
           b->host_repeat <= 64 && b->variant_count >= 0 && b->block_count >= 1 &&
           (strcmp(order, "bfs") == 0 || strcmp(order, "dfs") == 0) && bvh_ok;
}

int prism_bench_render(int argc, char **argv)
{
    if (prism_bench_wants_help(argc, argv)) {
        usage(stdout);
        return 0;
    }
    render_bench *b = malloc(sizeof *b);
    if (b == NULL || !parse(argc, argv, b)) {
        usage(stderr);
        free(b);
        return 2;
    }
    bench_scene s;
    char why[600];
    if (!bench_scene_load(b->file, b->unit, b->bvh_order, &s, why, sizeof why)) {
        fprintf(stderr, "prism-bench render: %s: %s\n", b->file, why);
        free(b);
        return 1;
    }
    s.device_bvh = b->device_bvh;
    if (!b->no_cuda)
        measure_cuda(b, &s);
    if (!b->no_host)
        measure_host(b, &s);
    if (b->json)
        print_json(b, &s);
    else
        print_table(b, &s);
    bench_scene_free(&s);
    int rc = b->count > 0 ? 0 : 1;
    free(b);
    return rc;
}
