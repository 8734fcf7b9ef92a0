/* `prism-bench propagate FILE`: photons per second and photon steps per
 * second of prism_propagate, for 1M and 10M photons (--counts) from an
 * isotropic point at the detector's centre (350..550 nm), for each
 * placement policy (device, mapped, chroma) on the CUDA backend, and on the
 * host backend (--host-count photons, default 1M) for the GPU/CPU ratio;
 * --device-budget adds rows on the auto policy with the geometry's device
 * bytes capped (a split tree: its top levels on the device, the rest mapped).
 * CUDA writes final photons to device memory (no copy back in the timing;
 * they are read afterwards to count steps). Each figure is the median of
 * --repeat runs after one warm-up. The kernel's registers and occupancy are
 * reported with a CUDA device. --math chooses the CUDA kernels'
 * arithmetic (prism_propagate_math); --scheme the CUDA step scheme
 * (engine/launch/propagate_scheme.h: the megakernel, the wavefront), each
 * row of each, with a hash of the final photons so rows that must agree
 * bit for bit (exact math) can be seen to. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_kernels.h"
#include "bench_util.h"
#include "cli.h"
#include "engine/launch/propagate_scheme.h"
#include "npy.h"
#include "prism/device/genstep.h"
#include "prism/kernels.h"
#include "prism/memory.h"
#include "prism/propagate.h"

int bench_propagate_multi(const char *list, const bench_scene *s, const size_t *counts,
                          int counts_n, int repeat, unsigned max_steps, prism_propagate_math math,
                          bool host, bool json);

#define MAX_RESULTS 160
#define MAX_COUNTS 4
#define MAX_SCHEMES 3
#define MAX_BUDGETS 8

typedef struct prop_result {
    const char *backend;
    char policy[24]; /* "device", ..., or "budget:64M" (auto with a device budget) */
    size_t device_budget;
    size_t photons;
    double seconds, photons_per_second, steps_per_second;
    unsigned long long steps;
    unsigned launches;
    size_t detected;
    size_t device_bytes, mapped_bytes;           /* where the geometry went */
    size_t node_device_bytes, node_mapped_bytes; /* where the BVH nodes went */
    const char *tree;                            /* "wide" or "binary": the tree walked */
    unsigned steps_per_launch;                   /* desc.steps_per_launch; 0 = the engine's */
    const char *scheme;                          /* the CUDA step scheme; "-" on the host */
    unsigned long long hash;                     /* FNV-1a of the final photons' words */
} prop_result;

typedef struct prop_bench {
    const char *file;
    size_t counts[MAX_COUNTS];
    int counts_n;
    unsigned spl[MAX_COUNTS]; /* --steps-per-launch: device rows once each */
    int spl_n;
    size_t host_count;
    unsigned max_steps;
    int repeat;
    bool json, no_host, no_cuda;
    unsigned bvh_order;
    prism_length_unit unit;    /* --unit */
    bool device_bvh;           /* --bvh cuda: CUDA rows on the device-built tree */
    const char *devices;       /* --devices LIST: the multi-context table */
    const char *gensteps;      /* --gensteps FILE.npy: generated against read photons */
    prism_propagate_math math; /* --math exact|fast */
    int schemes[MAX_SCHEMES];  /* --scheme mega,wave,wave-generic; 0: the engine's */
    int schemes_n;
    const char *policies;        /* --policy device,mapped,chroma: the CUDA placements run */
    size_t budgets[MAX_BUDGETS]; /* --device-budget: auto rows with these device caps */
    int budgets_n;
    prop_result results[MAX_RESULTS];
    int count;
    char skipped[6][300];
    int skipped_count;
    /* registers and occupancy of each kernel the rows ran */
    struct {
        const char *kernel;
        int registers;
        prism_occupancy occupancy;
    } kernels[4];
    int kernels_n;
} prop_bench;

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: prism-bench propagate FILE.dae [--counts N,M] [--host-count N]\n"
        "                             [--max-steps S] [--repeat R] [--no-host] [--no-cuda] [--json]\n"
        "                             [--bvh-order bfs|dfs] [--bvh cuda|host] [--unit U]\n"
        "                             [--math exact|fast] [--steps-per-launch S,T]\n"
        "                             [--scheme mega,wave,wave-generic]\n"
        "                             [--policy device,mapped,chroma] [--device-budget B,B..]\n"
        "Photons/s and steps/s for N photons (default 1000000,10000000) from the detector's\n"
        "centre, per placement policy (device, mapped, chroma) on CUDA, and for --host-count\n"
        "photons (default 1000000; 0 = none) on the host backend. Median of R runs (default 3).\n"
        "--bvh: CUDA runs trace the tree the device builds at upload (cuda, the default) or\n"
        "the host's (host); host runs trace the host's. --bvh-order: the host tree's node\n"
        "order (default bfs; dfs implies --bvh host). --math: the CUDA kernels' arithmetic\n"
        "(exact, the default: the host's bits; fast: the GPU's approximate functions).\n"
        "--steps-per-launch: the device rows again for each value of the step loop's steps\n"
        "a photon takes in one launch before survivors are compacted (0: the engine's;\n"
        "the megakernel and the host read it, the wavefront does not).\n"
        "--scheme: the CUDA rows once for each step scheme: mega (one kernel, a few steps a\n"
        "launch), wave (a trace kernel on the GPU walk, then a physics kernel, a step a\n"
        "pair), wave-generic (wave, the trace on the shared walk); default: the engine's.\n"
        "The hash column is of the final photons: equal where the photons are.\n"
        "--policy: the CUDA placements to run (default all three; none: only the budget rows).\n"
        "--device-budget: rows on the auto policy with at most B bytes of the geometry in\n"
        "device memory each (k, M, G: 2^10, 2^20, 2^30 bytes): hottest arrays first, the BVH\n"
        "nodes split at a node, so the top of the tree is on the device and the rest mapped.\n"
        "On CUDA (whatever --policy says), and on the host backend next to its auto row\n"
        "(both memories are host memory there). The policy column says budget:B; node dev\n"
        "and node map say where the nodes went; tree says which tree the rows walk (wide\n"
        "where the upload made it: on the host, and on CUDA where no node is on the device).\n"
        "--gensteps: on CUDA (device placement), the file's gensteps made into photons where\n"
        "they are propagated, against the same photons (prism_photons_generate) read from\n"
        "host memory: photons/s of each and the bytes each sends over PCIe.\n"
        "--devices all|0,1: prism_propagate_multi on 1, then all, contexts of the list (a\n"
        "device may repeat), photons/s, efficiency rate(n)/(n rate(1)), upload time per\n"
        "context, instead of the table above (--no-cuda: host contexts).\n" PRISM_BENCH_UNIT_HELP);
}

static void skip(prop_bench *b, const char *why)
{
    if (b->skipped_count < 6)
        snprintf(b->skipped[b->skipped_count++], sizeof b->skipped[0], "%.299s", why);
}

static prism_photon_source source_of(const prism_scene *s, size_t count)
{
    prism_photon_source src = {.kind = PRISM_SOURCE_POINT,
                               .count = count,
                               .wavelength_nm = 350.0f,
                               .wavelength_max_nm = 550.0f};
    for (int i = 0; i < 3; i++)
        src.position[i] = 0.5f * (s->bbox_min[i] + s->bbox_max[i]);
    return src;
}

/* Median seconds of `repeat` runs after a warm-up; the last run's stats. */
static double time_runs(prism_context *ctx, prism_geometry *g, const prism_photon_source *src,
                        const prism_propagate_desc *d, const prism_propagate_outputs *out,
                        int repeat, prism_propagate_stats *st)
{
    double times[64];
    if (prism_propagate(ctx, g, src, d, out, st) != PRISM_SUCCESS)
        return -1;
    for (int i = 0; i < repeat; i++) {
        double t0 = prism_bench_now();
        if (prism_propagate(ctx, g, src, d, out, st) != PRISM_SUCCESS)
            return -1;
        times[i] = prism_bench_now() - t0;
    }
    return prism_bench_median(times, (size_t)repeat);
}

/* Which geometry a row ran on: its policy column and device budget. */
typedef struct placement_row {
    const char *label; /* "device", ..., "budget:64M" */
    size_t budget;     /* 0: none */
} placement_row;

static void add(prop_bench *b, prism_context *ctx, const prism_geometry *g, placement_row pr,
                size_t n, double sec, const prism_propagate_stats *st, unsigned spl,
                const char *scheme, unsigned long long hash)
{
    if (b->count >= MAX_RESULTS)
        return;
    prop_result *r = &b->results[b->count++];
    const prism_upload_report *rep = prism_geometry_report(g);
    r->backend = prism_backend_name(prism_context_backend(ctx));
    snprintf(r->policy, sizeof r->policy, "%s", pr.label);
    r->device_budget = pr.budget;
    r->photons = n;
    r->seconds = sec;
    r->photons_per_second = (double)n / sec;
    r->steps = st->steps;
    r->steps_per_second = (double)st->steps / sec;
    r->launches = st->launches;
    r->detected = st->detected;
    r->device_bytes = rep->device_bytes;
    r->mapped_bytes = rep->mapped_bytes;
    prism_bench_node_bytes(rep, &r->node_device_bytes, &r->node_mapped_bytes);
    /* The wavefront's trace takes the tuned binary walk on geometry all in
     * device memory without a wide tree, the shared walk (the wide tree
     * where there is one) otherwise. */
    r->tree = strcmp(scheme, "wave") == 0 && rep->mapped_bytes == 0 && rep->wide_nodes == 0
                  ? "binary"
                  : prism_bench_tree(rep);
    r->steps_per_launch = spl;
    r->scheme = scheme;
    r->hash = hash;
}

/* FNV-1a over the photons' 64-bit words (a word at a time: 1e8 photons
 * are 6.4 GB). */
static unsigned long long photons_hash(const prism_photon *p, size_t n)
{
    unsigned long long h = 14695981039346656037ull;
    const unsigned char *c = (const unsigned char *)p;
    for (size_t i = 0; i < n * sizeof *p; i += 8) {
        unsigned long long w;
        memcpy(&w, c + i, 8);
        h = (h ^ w) * 1099511628211ull;
    }
    return h;
}

/* One CUDA run set: photons into device memory, read back after timing. */
static void measure_cuda_count(prop_bench *b, prism_context *ctx, prism_geometry *g,
                               const bench_scene *s, placement_row pr, size_t n, unsigned spl)
{
    char why[600];
    prism_buffer *buf = NULL;
    prism_photon *host = malloc(n * sizeof *host);
    if (host == NULL || prism_buffer_create_device(ctx, n * sizeof(prism_photon), "bench.photons",
                                                   &buf) != PRISM_SUCCESS) {
        snprintf(why, sizeof why, "cuda %s %zu photons: no memory", pr.label, n);
        skip(b, why);
        free(host);
        return;
    }
    prism_photon_source src = source_of(s->scene, n);
    prism_propagate_desc d = {
        .seed = 1, .max_steps = b->max_steps, .math = b->math, .steps_per_launch = spl};
    prism_propagate_outputs out = {.photons = {.kind = PRISM_TARGET_BUFFER, .buffer = buf}};
    prism_propagate_stats st;
    double sec = time_runs(ctx, g, &src, &d, &out, b->repeat, &st);
    if (sec > 0 && prism_buffer_read(buf, 0, host, n * sizeof *host) == PRISM_SUCCESS) {
        prism_propagate_stats tally = st;
        tally.steps = 0;
        tally.detected = 0;
        for (size_t i = 0; i < n; i++) {
            tally.steps += host[i].steps;
            tally.detected += (host[i].history & PRISM_SURFACE_DETECT) != 0;
        }
        add(b, ctx, g, pr, n, sec, &tally, spl,
            prism__propagate_scheme_name(prism__propagate_scheme_get(ctx)), photons_hash(host, n));
    } else {
        snprintf(why, sizeof why, "cuda %s: %s", pr.label, prism_context_last_error(ctx));
        skip(b, why);
    }
    prism_buffer_release(buf);
    free(host);
}

/* The rows of one geometry: each scheme, `spl_n` steps-per-launch values,
 * each count. */
static void measure_cuda_geometry(prop_bench *b, prism_context *ctx, prism_geometry *g,
                                  const bench_scene *s, placement_row pr, int spl_n)
{
    for (int m = 0; m < b->schemes_n; m++) {
        prism__propagate_scheme(ctx, b->schemes[m]);
        for (int k = 0; k < spl_n; k++)
            for (int c = 0; c < b->counts_n; c++)
                measure_cuda_count(b, ctx, g, s, pr, b->counts[c], b->spl[k]);
    }
}

static void measure_cuda(prop_bench *b, const bench_scene *s)
{
    char why[600];
    prism_context *ctx = bench_context(PRISM_BACKEND_CUDA, why, sizeof why);
    if (ctx == NULL) {
        skip(b, why);
        return;
    }
    const prism_placement_policy p[3] = {PRISM_PLACEMENT_DEVICE, PRISM_PLACEMENT_MAPPED,
                                         PRISM_PLACEMENT_CHROMA};
    for (int i = 0; i < 3; i++) {
        if (strstr(b->policies, bench_policy_name(p[i])) == NULL)
            continue;
        prism_geometry *g = bench_upload(ctx, s, p[i], 0, why, sizeof why);
        if (g == NULL) {
            skip(b, why);
            continue;
        }
        const placement_row pr = {bench_policy_name(p[i]), 0};
        measure_cuda_geometry(b, ctx, g, s, pr, p[i] == PRISM_PLACEMENT_DEVICE ? b->spl_n : 1);
        prism_geometry_destroy(g);
    }
    for (int j = 0; j < b->budgets_n; j++) {
        char label[24];
        prism_geometry *g = bench_upload_budget(ctx, s, b->budgets[j], label, why, sizeof why);
        if (g == NULL) {
            skip(b, why);
            continue;
        }
        measure_cuda_geometry(b, ctx, g, s, (placement_row){label, b->budgets[j]}, 1);
        prism_geometry_destroy(g);
    }
    /* the kernels of the schemes the rows ran */
    bool mega = false, wave = false, generic = false;
    for (int m = 0; m < b->schemes_n; m++) {
        prism__propagate_scheme(ctx, b->schemes[m]);
        const int sc = prism__propagate_scheme_get(ctx);
        mega |= sc == PRISM__SCHEME_MEGA;
        wave |= sc == PRISM__SCHEME_WAVE || sc == PRISM__SCHEME_WAVE_GENERIC;
        generic |= sc == PRISM__SCHEME_WAVE_GENERIC;
    }
    const bool fast = b->math == PRISM_PROPAGATE_MATH_FAST;
    const char *names[4] = {
        mega ? (fast ? "propagate_fast" : "propagate_exact") : NULL,
        wave ? (fast ? "propagate_trace_fast" : "propagate_trace_exact") : NULL,
        generic ? (fast ? "propagate_trace_generic_fast" : "propagate_trace_generic_exact") : NULL,
        wave ? (fast ? "propagate_physics_fast" : "propagate_physics_exact") : NULL};
    for (int i = 0; i < 4; i++) {
        if (names[i] == NULL)
            continue;
        int regs = 0;
        prism_occupancy occ;
        if (prism_kernel_resources(ctx, names[i], &regs, NULL) == PRISM_SUCCESS &&
            prism_kernel_occupancy(ctx, names[i], 128, &occ) == PRISM_SUCCESS) {
            b->kernels[b->kernels_n].kernel = names[i];
            b->kernels[b->kernels_n].registers = regs;
            b->kernels[b->kernels_n++].occupancy = occ;
        }
    }
    prism_context_destroy(ctx);
}

/* One host row: a single timed run into host memory. */
static void measure_host_geometry(prop_bench *b, prism_context *ctx, const prism_geometry *g,
                                  const bench_scene *s, placement_row pr, prism_photon *ph)
{
    prism_photon_source src = source_of(s->scene, b->host_count);
    prism_propagate_desc d = {.seed = 1, .max_steps = b->max_steps};
    prism_propagate_outputs out = {.photons = {.kind = PRISM_TARGET_HOST, .host = ph}};
    prism_propagate_stats st;
    double t0 = prism_bench_now();
    if (prism_propagate(ctx, g, &src, &d, &out, &st) == PRISM_SUCCESS)
        add(b, ctx, g, pr, b->host_count, prism_bench_now() - t0, &st, 0, "-",
            photons_hash(ph, b->host_count));
    else
        skip(b, prism_context_last_error(ctx));
}

static void measure_host(prop_bench *b, const bench_scene *s)
{
    char why[600];
    prism_context *ctx = bench_context(PRISM_BACKEND_HOST, why, sizeof why);
    if (ctx == NULL) {
        skip(b, why);
        return;
    }
    prism_photon *ph = malloc(b->host_count * sizeof *ph);
    if (ph == NULL) {
        skip(b, "host: out of memory");
        prism_context_destroy(ctx);
        return;
    }
    prism_geometry *g = bench_upload(ctx, s, PRISM_PLACEMENT_AUTO, 0, why, sizeof why);
    if (g != NULL)
        measure_host_geometry(b, ctx, g, s, (placement_row){"auto", 0}, ph);
    else
        skip(b, why);
    prism_geometry_destroy(g);
    for (int j = 0; j < b->budgets_n; j++) {
        char label[24];
        g = bench_upload_budget(ctx, s, b->budgets[j], label, why, sizeof why);
        if (g != NULL)
            measure_host_geometry(b, ctx, g, s, (placement_row){label, b->budgets[j]}, ph);
        else
            skip(b, why);
        prism_geometry_destroy(g);
    }
    free(ph);
    prism_context_destroy(ctx);
}

static void print_table(const prop_bench *b, const bench_scene *s)
{
    printf("prism-bench propagate %s: %zu triangles, max %u steps, %s math, load %.2f s, BVH "
           "%.2f s\n",
           b->file, s->scene->triangles_count, b->max_steps,
           b->math == PRISM_PROPAGATE_MATH_FAST ? "fast" : "exact", s->load_seconds,
           s->bvh_seconds);
    printf("BVH: CUDA runs on the %s tree, host runs on the host-built one\n",
           s->device_bvh ? "device-built (built at each upload)" : "host-built");
    printf("wavefront queue order: %s (PRISM_PROPAGATE_SORT=none|pos|dirpos)\n",
           prism__propagate_sort_name(prism__propagate_sort_from_env()));
    printf("%-6s %-12s %-12s %10s %10s %12s %12s %11s %9s %9s %10s %10s %12s %12s %-6s %6s "
           "%16s\n",
           "backend", "policy", "scheme", "photons", "seconds", "Mphotons/s", "Msteps/s", "steps",
           "launches", "detected", "device MB", "mapped MB", "node dev MB", "node map MB", "tree",
           "s/l", "hash");
    for (int i = 0; i < b->count; i++) {
        const prop_result *r = &b->results[i];
        char spl[16];
        snprintf(spl, sizeof spl, r->steps_per_launch ? "%u" : "auto", r->steps_per_launch);
        printf("%-6s %-12s %-12s %10zu %10.4f %12.2f %12.2f %11llu %9u %9zu %10.1f %10.1f %12.2f "
               "%12.2f %-6s %6s %016llx\n",
               r->backend, r->policy, r->scheme, r->photons, r->seconds,
               r->photons_per_second / 1e6, r->steps_per_second / 1e6, r->steps, r->launches,
               r->detected, r->device_bytes / 1e6, r->mapped_bytes / 1e6,
               r->node_device_bytes / 1e6, r->node_mapped_bytes / 1e6, r->tree, spl, r->hash);
    }
    for (int i = 0; i < b->kernels_n; i++)
        printf("%s kernel: %d registers/thread, occupancy %.2f at 128 threads (limited by %s)\n",
               b->kernels[i].kernel, b->kernels[i].registers, b->kernels[i].occupancy.occupancy,
               prism_occupancy_limit_name(b->kernels[i].occupancy.limited_by));
    for (int i = 0; i < b->skipped_count; i++)
        printf("not measured: %s\n", b->skipped[i]);
}

static void print_json(const prop_bench *b, const bench_scene *s)
{
    printf("{\"bench\":\"propagate\",\"file\":");
    tool_json_string(b->file);
    printf(",\"cuda_bvh\":\"%s\",\"math\":\"%s\"", s->device_bvh ? "device" : "host",
           b->math == PRISM_PROPAGATE_MATH_FAST ? "fast" : "exact");
    printf(",\"triangles\":%zu,\"max_steps\":%u,\"results\":[", s->scene->triangles_count,
           b->max_steps);
    for (int i = 0; i < b->count; i++) {
        const prop_result *r = &b->results[i];
        printf("%s{\"backend\":\"%s\",\"policy\":\"%s\",\"scheme\":\"%s\",\"photons\":%zu,"
               "\"seconds\":%.6g,"
               "\"photons_per_second\":%.6g,\"steps\":%llu,\"steps_per_second\":%.6g,"
               "\"launches\":%u,\"detected\":%zu,\"device_bytes\":%zu,\"mapped_bytes\":%zu,"
               "\"device_budget\":%zu,\"node_device_bytes\":%zu,\"node_mapped_bytes\":%zu,"
               "\"tree\":\"%s\",\"steps_per_launch\":%u,\"hash\":\"%016llx\"}",
               i ? "," : "", r->backend, r->policy, r->scheme, r->photons, r->seconds,
               r->photons_per_second, r->steps, r->steps_per_second, r->launches, r->detected,
               r->device_bytes, r->mapped_bytes, r->device_budget, r->node_device_bytes,
               r->node_mapped_bytes, r->tree, r->steps_per_launch, r->hash);
    }
    printf("]");
    /* the megakernel's under its old key too, for readers of earlier output */
    if (b->kernels_n > 0 && strncmp(b->kernels[0].kernel, "propagate_trace", 15) != 0)
        printf(",\"propagate_kernel\":{\"registers\":%d,\"occupancy\":%.3f,\"limited_by\":\"%s\"}",
               b->kernels[0].registers, b->kernels[0].occupancy.occupancy,
               prism_occupancy_limit_name(b->kernels[0].occupancy.limited_by));
    printf(",\"kernels\":[");
    for (int i = 0; i < b->kernels_n; i++)
        printf("%s{\"kernel\":\"%s\",\"registers\":%d,\"occupancy\":%.3f,\"limited_by\":\"%s\"}",
               i ? "," : "", b->kernels[i].kernel, b->kernels[i].registers,
               b->kernels[i].occupancy.occupancy,
               prism_occupancy_limit_name(b->kernels[i].occupancy.limited_by));
    printf("]");
    printf(",\"not_measured\":[");
    for (int i = 0; i < b->skipped_count; i++) {
        printf(i ? "," : "");
        tool_json_string(b->skipped[i]);
    }
    printf("]}\n");
}

static bool parse_counts(const char *text, prop_bench *b)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", text);
    for (char *tok = strtok(buf, ","); tok != NULL; tok = strtok(NULL, ",")) {
        long long v = atoll(tok);
        if (v <= 0 || v > 4000000000LL || b->counts_n == MAX_COUNTS)
            return false;
        b->counts[b->counts_n++] = (size_t)v;
    }
    return b->counts_n > 0;
}

static bool parse_spl(const char *text, prop_bench *b)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", text);
    for (char *tok = strtok(buf, ","); tok != NULL; tok = strtok(NULL, ",")) {
        long v = atol(tok);
        if (v < 0 || v > 1000 || b->spl_n == MAX_COUNTS)
            return false;
        b->spl[b->spl_n++] = (unsigned)v;
    }
    return b->spl_n > 0;
}

static bool parse_schemes(const char *text, prop_bench *b)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", text);
    for (char *tok = strtok(buf, ","); tok != NULL; tok = strtok(NULL, ",")) {
        int v = prism__propagate_scheme_parse(tok);
        if (v < 0 || b->schemes_n == MAX_SCHEMES)
            return false;
        b->schemes[b->schemes_n++] = v;
    }
    return b->schemes_n > 0;
}

static bool parse(int argc, char **argv, prop_bench *b)
{
    memset(b, 0, sizeof *b);
    if (!parse_spl(prism_bench_option(argc, argv, "--steps-per-launch", "0"), b))
        return false;
    if (!parse_counts(prism_bench_option(argc, argv, "--counts", "1000000,10000000"), b))
        return false;
    if (!parse_schemes(prism_bench_option(argc, argv, "--scheme", "auto"), b))
        return false;
    b->policies = prism_bench_option(argc, argv, "--policy", "device,mapped,chroma");
    if (!prism_bench_budgets(argc, argv, "propagate", b->budgets, MAX_BUDGETS, &b->budgets_n))
        return false;
    long long hc = atoll(prism_bench_option(argc, argv, "--host-count", "1000000"));
    b->host_count = hc > 0 ? (size_t)hc : 0;
    b->max_steps = (unsigned)atoi(prism_bench_option(argc, argv, "--max-steps", "100"));
    b->repeat = atoi(prism_bench_option(argc, argv, "--repeat", "3"));
    b->json = prism_bench_has_flag(argc, argv, "--json");
    b->no_host = prism_bench_has_flag(argc, argv, "--no-host") || b->host_count == 0;
    b->no_cuda = prism_bench_has_flag(argc, argv, "--no-cuda");
    const char *order = prism_bench_option(argc, argv, "--bvh-order", "bfs");
    b->bvh_order = strcmp(order, "dfs") == 0 ? PRISM_BVH_ORDER_DFS : PRISM_BVH_ORDER_BFS;
    const bool bvh_ok = bench_bvh_option(argc, argv, b->bvh_order, &b->device_bvh);
    const char *math = prism_bench_option(argc, argv, "--math", "exact");
    b->math = strcmp(math, "fast") == 0 ? PRISM_PROPAGATE_MATH_FAST : PRISM_PROPAGATE_MATH_EXACT;
    static const char *const flags[] = {"--json", "--no-host", "--no-cuda", NULL};
    b->devices = prism_bench_option(argc, argv, "--devices", NULL);
    b->gensteps = prism_bench_option(argc, argv, "--gensteps", NULL);
    b->file = prism_bench_positional(argc, argv, flags);
    if (!prism_bench_unit(argc, argv, "propagate", &b->unit))
        return false;
    return b->file != NULL && b->repeat >= 1 && b->repeat <= 64 && b->max_steps >= 1 &&
           (strcmp(order, "bfs") == 0 || strcmp(order, "dfs") == 0) && bvh_ok &&
           (strcmp(math, "exact") == 0 || strcmp(math, "fast") == 0);
}

/* --gensteps: the photons made from gensteps on the device and propagated,
 * against the same photons handed over from host memory (64 bytes each
 * crossing PCIe, where the gensteps cost 96 bytes a step). Both leave
 * their final photons in device memory. */
static int measure_gensteps(prop_bench *b, const bench_scene *s)
{
    npy_reader in;
    const uint64_t dims[2] = {6, 4};
    if (npy_reader_open(&in, b->gensteps, dims, 2) != 0) {
        fprintf(stderr, "prism-bench propagate: %s\n", in.error);
        return 1;
    }
    const size_t n = (size_t)in.rows;
    prism_genstep *steps = malloc(n * sizeof *steps + 1);
    int rc = steps == NULL || npy_reader_read(&in, steps, n) != 0;
    npy_reader_close(&in);
    char why[600];
    prism_context *ctx = rc ? NULL : bench_context(PRISM_BACKEND_CUDA, why, sizeof why);
    prism_geometry *g = ctx ? bench_upload(ctx, s, PRISM_PLACEMENT_DEVICE, 0, why, sizeof why)
                            : NULL;
    if (g == NULL) {
        fprintf(stderr, "prism-bench propagate: --gensteps: %s\n",
                rc ? "cannot read the file" : why);
        free(steps);
        if (ctx)
            prism_context_destroy(ctx);
        return 1;
    }
    prism_photon_source gs = {.kind = PRISM_SOURCE_GENSTEPS,
                              .gensteps = (const float *)steps,
                              .genstep_count = n};
    prism_propagate_desc d = {.seed = 1, .max_steps = b->max_steps, .math = b->math};
    prism_photon *start = NULL;
    prism_buffer *buf = NULL;
    prism_target host = {.kind = PRISM_TARGET_HOST};
    size_t photons = 0;
    double t_gen = -1, t_read = -1;
    prism_propagate_stats st_gen = {0}, st_read = {0};
    uint64_t total = 0;
    for (size_t k = 0; k < n; k++)
        total += steps[k].photons;
    prism_result r = total > 0 ? PRISM_SUCCESS : PRISM_ERROR_INVALID_ARGUMENT;
    photons = (size_t)total;
    gs.count = photons;
    if (r == PRISM_SUCCESS && (start = malloc(photons * sizeof *start)) == NULL)
        r = PRISM_ERROR_OUT_OF_MEMORY;
    host.host = start;
    if (r == PRISM_SUCCESS)
        r = prism_photons_generate(ctx, g, &gs, &d, &host);
    if (r == PRISM_SUCCESS)
        r = prism_buffer_create_device(ctx, photons * sizeof(prism_photon), "bench.photons", &buf);
    prism_propagate_outputs out = {.photons = {.kind = PRISM_TARGET_BUFFER, .buffer = buf}};
    if (r == PRISM_SUCCESS)
        t_gen = time_runs(ctx, g, &gs, &d, &out, b->repeat, &st_gen);
    prism_photon_source given = {.kind = PRISM_SOURCE_PHOTONS, .count = photons, .photons = start};
    if (r == PRISM_SUCCESS && t_gen > 0)
        t_read = time_runs(ctx, g, &given, &d, &out, b->repeat, &st_read);
    if (t_gen > 0 && t_read > 0) {
        printf("prism-bench propagate --gensteps %s: %zu gensteps, %zu photons, %zu triangles, "
               "%s math, device placement\n",
               b->gensteps, n, photons, s->scene->triangles_count,
               b->math == PRISM_PROPAGATE_MATH_FAST ? "fast" : "exact");
        printf("%-22s %10s %12s %14s %10s\n", "source", "seconds", "Mphotons/s", "to device MB",
               "launches");
        printf("%-22s %10.4f %12.2f %14.2f %10u\n", "gensteps (generated)", t_gen,
               photons / t_gen / 1e6, n * 96.0 / 1e6, st_gen.launches);
        printf("%-22s %10.4f %12.2f %14.2f %10u\n", "photons (host memory)", t_read,
               photons / t_read / 1e6, photons * 64.0 / 1e6, st_read.launches);
        printf("gensteps against photons: %.2fx the rate, %.0fx fewer bytes to the device\n",
               t_read / t_gen, (photons * 64.0) / (n * 96.0));
    } else {
        fprintf(stderr, "prism-bench propagate --gensteps: %s\n", prism_context_last_error(ctx));
    }
    prism_buffer_release(buf);
    free(start);
    free(steps);
    prism_geometry_destroy(g);
    prism_context_destroy(ctx);
    return t_gen > 0 && t_read > 0 ? 0 : 1;
}

int prism_bench_propagate(int argc, char **argv)
{
    if (prism_bench_wants_help(argc, argv)) {
        usage(stdout);
        return 0;
    }
    prop_bench *b = malloc(sizeof *b);
    if (b == NULL || !parse(argc, argv, b)) {
        usage(stderr);
        free(b);
        return 2;
    }
    bench_scene s;
    char why[600];
    if (!bench_scene_load(b->file, b->unit, b->bvh_order, &s, why, sizeof why)) {
        fprintf(stderr, "prism-bench propagate: %s: %s\n", b->file, why);
        free(b);
        return 1;
    }
    s.device_bvh = b->device_bvh;
    if (b->gensteps != NULL) {
        int rc = measure_gensteps(b, &s);
        bench_scene_free(&s);
        free(b);
        return rc;
    }
    if (b->devices != NULL) {
        int rc = bench_propagate_multi(b->devices, &s, b->counts, b->counts_n, b->repeat,
                                       b->max_steps, b->math, b->no_cuda, b->json);
        bench_scene_free(&s);
        free(b);
        return rc;
    }
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
