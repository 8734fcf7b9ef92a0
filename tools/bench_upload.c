/* `prism-bench upload FILE`: how fast geometry reaches the GPU. Side by
 * side on the same bytes (the file's whole GPU layout): pageable cudaMemcpy
 * (Chroma's ga.to_gpu), one pinned copy (the host-to-device peak), the
 * pinned chunked staged copy the upload uses (a ring of pinned buffers),
 * and streaming writes into mapped write-combined memory; then the total upload time under
 * each placement policy, and a kernel's read bandwidth from device and from
 * mapped memory. On the host backend every path is heap memory: the table
 * is printed all the same and says that the GPU rows need a device. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "bench_util.h"
#include "cli.h"
#include "engine/memory/internal.h"
#include "prism/bvh.h"
#include "prism/geometry.h"
#include "prism/memory.h"
#include "prism/scene.h"

typedef struct path_rate {
    const char *name;
    double gbps;
} path_rate;

typedef struct policy_time {
    prism_placement_policy policy;
    double seconds;
    size_t device_bytes, mapped_bytes;
    prism_result result;
    char error[256]; /* why it failed */
    prism_upload_report report;
} policy_time;

typedef struct upload_bench {
    const char *file;
    int repeat;
    size_t budget, chunk;
    unsigned buffers; /* staging ring; 0 = the library's default */
    unsigned threads; /* fill threads; 0 = OpenMP's default */
    bool no_ramp;     /* staging variants, for comparison */
    prism__stores stores;
    bool json;
    prism_context *ctx;
    size_t bytes; /* the geometry's GPU layout, all arrays */
    size_t triangles;
#define PATHS 5
    path_rate paths[PATHS];
    policy_time policies[PRISM_PLACEMENT_POLICY_COUNT_];
    double read_device, read_mapped;
    /* The device build's inputs from a scene loaded into malloc'd arrays
     * (staged) and from one born pinned (prism_pinned_allocator): medians
     * of the inputs' GB/s, and of the whole upload's seconds. */
    bool born_measured;
    char born_error[256];
    double inputs_staged, inputs_pinned, upload_staged, upload_pinned;
    size_t inputs_bytes;
} upload_bench;

static const char *const store_names[PRISM__STORES_COUNT_] = {"default", "stream",
                                                              "plain",   "plain+demote",
                                                              "hybrid",  "hybrid+demote"};

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: prism-bench upload FILE.dae [--repeat N] [--budget BYTES] [--chunk BYTES]\n"
        "                          [--buffers N] [--threads N] [--no-ramp] [--stores WAY]\n"
        "                          [--unit m|cm|mm|auto] [--json]\n"
        "GB/s of pageable cudaMemcpy, a pinned copy, the pinned chunked staged copy of the\n"
        "upload and streaming writes into mapped write-combined memory; total upload time\n"
        "per placement policy (auto, device, mapped, chroma); a kernel's read bandwidth from\n"
        "device and mapped memory; on CUDA, the device build's inputs sent from a scene\n"
        "in malloc'd memory (staged) against one loaded into pinned memory (one DMA per\n"
        "array). Medians of N runs (default 5). --budget pretends the\n"
        "device has only BYTES free, so placement splits and maps. --chunk is the staging\n"
        "buffers' size (default 8 MiB; an upload left to choose takes a 32nd of its\n"
        "largest array, within 1-8 MiB), --buffers their count (default 4), --threads the\n"
        "threads that fill them; --no-ramp starts with full chunks instead of 256 KiB\n"
        "doubling; --stores is how staging is written: stream (the default), plain (the\n"
        "old way), plain+demote, hybrid, hybrid+demote (engine/memory/fill_store.c). The per-array\n"
        "report is the median upload's of each policy.\n" PRISM_BENCH_UNIT_HELP);
}

/* ---- the transfer paths, each on `bytes` bytes of `src` */

static double median_of(double *t, int n)
{
    return prism_bench_median(t, (size_t)n);
}

static double rate(size_t bytes, double seconds)
{
    return seconds > 0 ? (double)bytes / seconds / 1e9 : 0;
}

static prism_result copy_rate(upload_bench *b, const void *src, prism_buffer *dst, double *gbps)
{
    double t[64];
    int n = b->repeat < 64 ? b->repeat : 64;
    for (int i = 0; i < n; i++) {
        double t0 = prism_bench_now();
        prism_result r = prism_buffer_write(dst, 0, src, b->bytes);
        t[i] = prism_bench_now() - t0;
        if (r != PRISM_SUCCESS)
            return r;
    }
    *gbps = rate(b->bytes, median_of(t, n));
    return PRISM_SUCCESS;
}

/* The upload's own transfer engine (engine/memory/staged_copy.c): threads fill
 * pinned chunk i (here with a plain copy, the layout being final) while
 * earlier chunks cross the bus, storing as the upload does. */
static void fill_copy(void *user, size_t first, size_t n, void *dst, bool plain)
{
    prism__fill_store(dst, (const char *)user + first, n, plain);
}

static prism_result chunked_rate(upload_bench *b, const char *src, prism_buffer *dst, double *gbps)
{
    prism__staging st;
    prism_result r = prism__staging_open(b->ctx, b->chunk, &st);
    double t[64];
    int n = b->repeat < 64 ? b->repeat : 64;
    for (int i = 0; i < n && r == PRISM_SUCCESS; i++) {
        double t0 = prism_bench_now();
        r = prism__staged_copy(&st, dst, b->bytes, fill_copy, (void *)src, 96);
        t[i] = prism_bench_now() - t0;
    }
    if (r == PRISM_SUCCESS)
        *gbps = rate(b->bytes, median_of(t, n));
    prism__staging_close(&st);
    return r;
}

/* Streaming stores into mapped write-combined memory, as the upload writes
 * mapped parts (threads on separate sequential ranges). */
static prism_result mapped_write_rate(upload_bench *b, const char *src, prism_buffer *mapped,
                                      double *gbps)
{
    double t[64];
    int n = b->repeat < 64 ? b->repeat : 64;
    unsigned char *dst = prism_buffer_host_pointer(mapped);
    for (int i = 0; i < n; i++) {
        double t0 = prism_bench_now();
        prism__parallel_fill(fill_copy, (void *)src, 0, b->bytes, 96, dst);
        t[i] = prism_bench_now() - t0;
    }
    *gbps = rate(b->bytes, median_of(t, n));
    return PRISM_SUCCESS;
}

/* The pinned copy into device memory allocated just before, as an upload
 * does (the peak row reuses one buffer): what a first touch costs. */
static prism_result fresh_rate(upload_bench *b, const void *src, double *gbps)
{
    double t[64];
    int n = b->repeat < 64 ? b->repeat : 64;
    for (int i = 0; i < n; i++) {
        prism_buffer *dev = NULL;
        prism_result r = prism_buffer_create_device(b->ctx, b->bytes, "bench.fresh", &dev);
        double t0 = prism_bench_now();
        if (r == PRISM_SUCCESS)
            r = prism_buffer_write(dev, 0, src, b->bytes);
        t[i] = prism_bench_now() - t0;
        prism_buffer_release(dev);
        if (r != PRISM_SUCCESS)
            return r;
    }
    *gbps = rate(b->bytes, median_of(t, n));
    return PRISM_SUCCESS;
}

static prism_result measure_paths(upload_bench *b)
{
    char *src = malloc(b->bytes);
    if (!src)
        return PRISM_ERROR_OUT_OF_MEMORY;
    for (size_t i = 0; i < b->bytes; i++)
        src[i] = (char)(i * 2654435761u >> 24);
    prism_buffer *dev = NULL, *pinned = NULL, *mapped = NULL;
    prism_result r = prism_buffer_create_device(b->ctx, b->bytes, "bench.device", &dev);
    if (r == PRISM_SUCCESS)
        r = prism_buffer_create_pinned(b->ctx, b->bytes, 0, "bench.pinned", &pinned);
    if (r == PRISM_SUCCESS)
        r = prism_buffer_create_pinned(b->ctx, b->bytes,
                                       PRISM_HOST_MAPPED | PRISM_HOST_WRITE_COMBINED,
                                       "bench.mapped", &mapped);
    b->paths[0].name = "pageable cudaMemcpy (ga.to_gpu)";
    b->paths[1].name = "pinned cudaMemcpy (peak)";
    b->paths[2].name = "pinned chunked, staged (upload's)";
    b->paths[3].name = "streaming writes, mapped WC";
    b->paths[4].name = "pinned into fresh device memory";
    if (r == PRISM_SUCCESS)
        r = copy_rate(b, src, dev, &b->paths[0].gbps);
    if (r == PRISM_SUCCESS) {
        memcpy(prism_buffer_host_pointer(pinned), src, b->bytes);
        r = copy_rate(b, prism_buffer_host_pointer(pinned), dev, &b->paths[1].gbps);
    }
    if (r == PRISM_SUCCESS)
        r = fresh_rate(b, prism_buffer_host_pointer(pinned), &b->paths[4].gbps);
    if (r == PRISM_SUCCESS)
        r = chunked_rate(b, src, dev, &b->paths[2].gbps);
    if (r == PRISM_SUCCESS)
        r = mapped_write_rate(b, src, mapped, &b->paths[3].gbps);
    int reads = b->repeat * 4;
    if (r == PRISM_SUCCESS)
        r = prism__memory_read_bandwidth(b->ctx, dev, reads, &b->read_device);
    if (r == PRISM_SUCCESS)
        r = prism__memory_read_bandwidth(b->ctx, mapped, b->repeat, &b->read_mapped);
    prism_buffer_release(dev);
    prism_buffer_release(pinned);
    prism_buffer_release(mapped);
    free(src);
    return r;
}

/* ---- uploads per policy */

/* Upload n times under policy p; keep the median upload's report. */
static void measure_policy(upload_bench *b, const prism_scene *scene, const prism_bvh *bvh,
                           policy_time *pt, int n)
{
    prism_geometry_desc d = {
        .policy = pt->policy, .budget = b->budget, .chunk_bytes = b->chunk, .skip_optics = true};
    tool_env_geometry(&d);
    double t[64] = {0}, sorted[64];
    prism_upload_report reports[64];
    for (int i = 0; i < n; i++) {
        prism_geometry *g = NULL;
        double t0 = prism_bench_now();
        pt->result = prism_geometry_upload(b->ctx, scene, bvh, &d, &g);
        t[i] = prism_bench_now() - t0;
        if (pt->result != PRISM_SUCCESS) {
            snprintf(pt->error, sizeof pt->error, "%s", prism_context_last_error(b->ctx));
            return;
        }
        reports[i] = *prism_geometry_report(g);
        prism_geometry_destroy(g);
    }
    memcpy(sorted, t, sizeof t[0] * (size_t)n);
    pt->seconds = median_of(sorted, n);
    int median = 0; /* the run closest to the median time */
    for (int i = 1; i < n; i++)
        if (fabs(t[i] - pt->seconds) < fabs(t[median] - pt->seconds))
            median = i;
    pt->report = reports[median];
    pt->device_bytes = pt->report.device_bytes;
    pt->mapped_bytes = pt->report.mapped_bytes;
}

static void measure_policies(upload_bench *b, const prism_scene *scene, const prism_bvh *bvh)
{
    for (int p = 0; p < PRISM_PLACEMENT_POLICY_COUNT_; p++) {
        policy_time *pt = &b->policies[p];
        pt->policy = (prism_placement_policy)p;
        measure_policy(b, scene, bvh, pt, b->repeat < 64 ? b->repeat : 64);
    }
}

/* ---- the arrays born where they are copied from */

static prism_result build_upload(upload_bench *b, const prism_scene *scene, double *inputs_gbps,
                                 double *seconds)
{
    prism_geometry_desc d = {.policy = PRISM_PLACEMENT_DEVICE,
                             .builder = PRISM_BVH_BUILDER_CUDA,
                             .chunk_bytes = b->chunk,
                             .skip_optics = true};
    tool_env_geometry(&d);
    int n = b->repeat < 64 ? b->repeat : 64;
    double g[64], t[64];
    for (int i = 0; i < n; i++) {
        prism_geometry *geo = NULL;
        /* Back to back, the inputs of an upload crossed at 32-33 GB/s on an
         * H200 host, right after the previous upload freed its device
         * memory; after a 100 ms pause (or as the first upload of a
         * process) at 53.6-54.2, the link's pace. A user's upload follows
         * no such teardown: each repetition starts settled. */
        prism_bench_settle();
        double t0 = prism_bench_now();
        prism_result r = prism_geometry_upload(b->ctx, scene, NULL, &d, &geo);
        t[i] = prism_bench_now() - t0;
        if (r != PRISM_SUCCESS)
            return r;
        const prism_upload_report *rep = prism_geometry_report(geo);
        g[i] = rep->inputs_gbps;
        b->inputs_bytes = rep->inputs_bytes;
        prism_geometry_destroy(geo);
    }
    *inputs_gbps = median_of(g, n);
    *seconds = median_of(t, n);
    return PRISM_SUCCESS;
}

/* The default upload builds the tree on the device from the scene's
 * arrays: sent through the staging ring from malloc'd arrays, or in one
 * DMA each when the loader wrote them into pinned memory. CUDA only. */
static void measure_born_pinned(upload_bench *b, const prism_scene *scene)
{
    if (prism_context_backend(b->ctx) != PRISM_BACKEND_CUDA)
        return;
    prism_allocator pinned;
    prism_scene *born = NULL;
    char error[512] = "";
    prism_load_desc ld = {.arrays = &pinned, .error = error, .error_size = sizeof error};
    tool_env_load(&ld);
    prism_result r = prism_pinned_allocator(b->ctx, &pinned);
    if (r == PRISM_SUCCESS)
        r = prism_scene_load(b->file, &ld, &born);
    if (r == PRISM_SUCCESS)
        r = build_upload(b, scene, &b->inputs_staged, &b->upload_staged);
    if (r == PRISM_SUCCESS)
        r = build_upload(b, born, &b->inputs_pinned, &b->upload_pinned);
    b->born_measured = r == PRISM_SUCCESS;
    if (r != PRISM_SUCCESS)
        snprintf(b->born_error, sizeof b->born_error, "%s",
                 error[0] ? error : prism_context_last_error(b->ctx));
    prism_scene_free(born);
}

/* ---- output */

static void print_table(const upload_bench *b)
{
    bool host = prism_context_backend(b->ctx) == PRISM_BACKEND_HOST;
    printf("prism-bench upload %s: %zu triangles, %.1f MB of GPU layout, %s backend (%s)\n",
           b->file, b->triangles, b->bytes / 1e6, prism_backend_name(prism_context_backend(b->ctx)),
           prism_context_device(b->ctx)->name);
    if (host)
        printf("  host backend: device and mapped memory are heap memory here; the GPU rows\n"
               "  (cudaMemcpy, pinned, mapped WC, kernel reads) need a CUDA device.\n");
    printf("\n  %-34s %10s\n", "path", "GB/s");
    for (int i = 0; i < PATHS; i++)
        printf("  %-34s %10.2f\n", b->paths[i].name, b->paths[i].gbps);
    if (b->paths[1].gbps > 0)
        printf("  chunked / pinned peak: %.0f%% (goal >= 90%%)\n",
               100.0 * b->paths[2].gbps / b->paths[1].gbps);
    unsigned nbuf = b->buffers ? b->buffers : PRISM__STAGING_BUFFERS;
    prism__stores way = b->stores ? b->stores : PRISM__STAGING_STORES;
    printf("  staging: %u pinned buffers of %zu bytes, %s, %s stores, %d threads\n", nbuf, b->chunk,
           b->no_ramp ? "full chunks" : "chunks from 256 KiB doubling", store_names[way],
           b->threads ? (int)b->threads : omp_get_max_threads());
    printf("\n  %-8s %10s %12s %12s  %s\n", "policy", "seconds", "device MB", "mapped MB",
           "nodes placement");
    for (int p = 0; p < PRISM_PLACEMENT_POLICY_COUNT_; p++) {
        const policy_time *pt = &b->policies[p];
        if (pt->result != PRISM_SUCCESS) {
            printf("  %-8s %10s  %s: %s\n", prism_placement_policy_name(pt->policy), "failed",
                   prism_result_string(pt->result), pt->error);
            continue;
        }
        printf("  %-8s %10.4f %12.1f %12.1f  %s\n", prism_placement_policy_name(pt->policy),
               pt->seconds, pt->device_bytes / 1e6, pt->mapped_bytes / 1e6,
               pt->report.arrays[0].reason);
    }
    printf("\n  kernel read bandwidth: device %.1f GB/s, mapped %.1f GB/s\n", b->read_device,
           b->read_mapped);
    if (b->born_measured) {
        printf("\n  device build's inputs (%.1f MB: scene vertices, triangles, codes), medians:\n",
               b->inputs_bytes / 1e6);
        printf("  %-34s %10.2f GB/s  (%3.0f%% of the pinned peak), upload %.4f s\n",
               "malloc'd scene, staged", b->inputs_staged,
               b->paths[1].gbps > 0 ? 100 * b->inputs_staged / b->paths[1].gbps : 0,
               b->upload_staged);
        printf("  %-34s %10.2f GB/s  (%3.0f%% of the pinned peak, goal >= 90%%), upload %.4f s\n",
               "scene born pinned, pinned DMA", b->inputs_pinned,
               b->paths[1].gbps > 0 ? 100 * b->inputs_pinned / b->paths[1].gbps : 0,
               b->upload_pinned);
    } else if (b->born_error[0]) {
        printf("\n  device build's inputs: not measured: %s\n", b->born_error);
    }
    for (int p = 0; p < PRISM_PLACEMENT_POLICY_COUNT_; p++) {
        if (b->policies[p].result != PRISM_SUCCESS)
            continue;
        char text[4096];
        prism_geometry_report_format(&b->policies[p].report, text, sizeof text);
        printf("\n%s", text); /* per array: where, bytes, seconds, GB/s, why */
    }
}

static void print_json(const upload_bench *b)
{
    printf("{\"file\":\"%s\",\"backend\":\"%s\",\"device\":\"%s\",\"triangles\":%zu,\"bytes\":%zu,"
           "\"paths\":{",
           b->file, prism_backend_name(prism_context_backend(b->ctx)),
           prism_context_device(b->ctx)->name, b->triangles, b->bytes);
    static const char *const keys[PATHS] = {"pageable", "pinned", "pinned_chunked",
                                            "mapped_wc_write", "pinned_fresh_device"};
    for (int i = 0; i < PATHS; i++)
        printf("%s\"%s\":%.3f", i ? "," : "", keys[i], b->paths[i].gbps);
    printf("},\"policies\":{");
    for (int p = 0; p < PRISM_PLACEMENT_POLICY_COUNT_; p++) {
        const policy_time *pt = &b->policies[p];
        printf("%s\"%s\":{\"ok\":%s,\"seconds\":%.6f,\"device_bytes\":%zu,\"mapped_bytes\":%zu}",
               p ? "," : "", prism_placement_policy_name(pt->policy),
               pt->result == PRISM_SUCCESS ? "true" : "false", pt->seconds, pt->device_bytes,
               pt->mapped_bytes);
    }
    printf("},\"kernel_read\":{\"device\":%.3f,\"mapped\":%.3f}", b->read_device, b->read_mapped);
    if (b->born_measured)
        printf(",\"build_inputs\":{\"bytes\":%zu,\"staged_gbps\":%.3f,\"pinned_dma_gbps\":%.3f,"
               "\"upload_staged_s\":%.6f,\"upload_pinned_s\":%.6f}",
               b->inputs_bytes, b->inputs_staged, b->inputs_pinned, b->upload_staged,
               b->upload_pinned);
    printf("}\n");
}

/* ---- the subcommand */

static size_t layout_bytes(const prism_bvh *bvh)
{
    size_t n = bvh->node_count * sizeof(prism_bvh_node) + bvh->triangle_count * (12 + 16) +
               bvh->vertex_count * 12;
    return (n + 15) / 16 * 16;
}

static int run(upload_bench *b, const prism_scene *scene, const prism_bvh *bvh)
{
    b->bytes = layout_bytes(bvh);
    b->triangles = bvh->triangle_count;
    prism_context_desc cd = {0};
    tool_env_context(&cd);
    prism_result r = prism_context_create(&cd, &b->ctx);
    if (r != PRISM_SUCCESS) {
        fprintf(stderr, "prism-bench upload: no context: %s\n", prism_result_string(r));
        return 1;
    }
    b->ctx->memory->staging_buffers = b->buffers;
    b->ctx->memory->staging_threads = b->threads;
    b->ctx->memory->staging_no_ramp = b->no_ramp;
    b->ctx->memory->staging_stores = b->stores;
    r = measure_paths(b);
    if (r != PRISM_SUCCESS) {
        fprintf(stderr, "prism-bench upload: %s\n", prism_context_last_error(b->ctx));
        prism_context_destroy(b->ctx);
        return 1;
    }
    measure_policies(b, scene, bvh);
    measure_born_pinned(b, scene);
    if (b->json)
        print_json(b);
    else
        print_table(b);
    return prism_context_destroy(b->ctx) == PRISM_SUCCESS ? 0 : 1;
}

int prism_bench_upload(int argc, char **argv)
{
    if (argc < 2 || prism_bench_wants_help(argc, argv)) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    upload_bench b = {.file = argv[1], .json = prism_bench_has_flag(argc, argv, "--json")};
    b.repeat = atoi(prism_bench_option(argc, argv, "--repeat", "5"));
    b.budget = (size_t)strtoull(prism_bench_option(argc, argv, "--budget", "0"), NULL, 10);
    b.chunk = (size_t)strtoull(prism_bench_option(argc, argv, "--chunk", "8388608"), NULL, 10);
    b.chunk = b.chunk / 96 * 96; /* whole elements of every array */
    b.buffers = (unsigned)atoi(prism_bench_option(argc, argv, "--buffers", "0"));
    b.threads = (unsigned)atoi(prism_bench_option(argc, argv, "--threads", "0"));
    b.no_ramp = prism_bench_has_flag(argc, argv, "--no-ramp");
    const char *way = prism_bench_option(argc, argv, "--stores", "");
    for (int i = 1; i < PRISM__STORES_COUNT_; i++)
        if (strcmp(way, store_names[i]) == 0)
            b.stores = (prism__stores)i;
    prism_length_unit unit = PRISM_UNIT_AUTO;
    if (b.repeat < 1 || b.chunk < 4096 || b.buffers == 1 || b.buffers > PRISM__STAGING_MAX ||
        (*way && !b.stores) || !prism_bench_unit(argc, argv, "upload", &unit)) {
        usage(stderr);
        return 2;
    }
    prism_scene *scene = NULL;
    prism_load_desc ld = {0};
    char error[512] = "";
    ld.error = error;
    ld.error_size = sizeof error;
    ld.length_unit = unit;
    tool_env_load(&ld);
    if (prism_scene_load(b.file, &ld, &scene) != PRISM_SUCCESS) {
        fprintf(stderr, "prism-bench upload: %s\n", error);
        return 1;
    }
    prism_bvh *bvh = NULL;
    int rc = 1;
    if (prism_bvh_build(scene->positions, scene->vertices_count, scene->indices,
                        scene->triangles_count, NULL, &bvh) == PRISM_SUCCESS)
        rc = run(&b, scene, bvh);
    else
        fprintf(stderr, "prism-bench upload: BVH build failed\n");
    prism_bvh_free(bvh);
    prism_scene_free(scene);
    return rc;
}
