/* prism-propagate --validate: the same sample on the host backend (the
 * reference) and on CUDA, compared photon by photon: bit-identical
 * photons, photons that end alike (history, solid and steps), the largest
 * position difference, and the detected fraction on each. It fails below
 * 99.9% alike or with detected fractions more than 5 standard deviations
 * apart. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "propagate_tool.h"

#define VALIDATE_MAX ((uint64_t)1 << 24)
#define VALIDATE_ALIKE 0.999
#define VALIDATE_SIGMA 5.0

typedef struct agreement {
    uint64_t photons, identical, alike, detected[2];
    double max_distance, max_distance_alike, seconds[2];
} agreement;

static double distance(const prism_photon *a, const prism_photon *b)
{
    const double dx = a->pos[0] - b->pos[0], dy = a->pos[1] - b->pos[1], dz = a->pos[2] - b->pos[2];
    return sqrt(dx * dx + dy * dy + dz * dz);
}

static void compare(const prism_photon *host, const prism_photon *cuda, uint64_t n, agreement *a)
{
    for (uint64_t i = 0; i < n; i++) {
        const prism_photon *h = &host[i], *c = &cuda[i];
        const bool alike = h->history == c->history && h->solid == c->solid && h->steps == c->steps;
        const double d = distance(h, c);
        a->identical += memcmp(h, c, sizeof *h) == 0;
        a->alike += alike;
        a->detected[0] += (h->history & PRISM_SURFACE_DETECT) != 0;
        a->detected[1] += (c->history & PRISM_SURFACE_DETECT) != 0;
        /* NaN (a photon aborted on one side only) counts as infinitely far */
        if (!(d <= a->max_distance))
            a->max_distance = isnan(d) ? INFINITY : d;
        if (alike && d > a->max_distance_alike)
            a->max_distance_alike = d;
    }
    a->photons = n;
}

/* Two-sample difference of the detected counts, in standard deviations. */
static double detected_sigma(const agreement *a)
{
    const double k0 = (double)a->detected[0], k1 = (double)a->detected[1];
    return k0 + k1 > 0 ? fabs(k0 - k1) / sqrt(k0 + k1) : 0.0;
}

static bool passes(const agreement *a)
{
    return (double)a->alike >= VALIDATE_ALIKE * (double)a->photons &&
           detected_sigma(a) <= VALIDATE_SIGMA;
}

static void report(const propagate_options *o, const agreement *a, const char *device)
{
    const double n = (double)a->photons;
    const char *math = o->math == PRISM_PROPAGATE_MATH_FAST ? "fast" : "exact";
    if (o->json) {
        printf("{\"validate\":{\"file\":");
        tool_json_string(o->file);
        printf(",\"device\":");
        tool_json_string(device);
        printf(",\"math\":\"%s\",\"photons\":%llu,\"seed\":%llu,\"identical\":%llu,"
               "\"alike\":%llu,\"max_position_difference\":%.9g,"
               "\"max_position_difference_alike\":%.9g,\"detected_host\":%.9g,"
               "\"detected_cuda\":%.9g,\"detected_sigma\":%.4g,\"seconds_host\":%.6g,"
               "\"seconds_cuda\":%.6g,\"pass\":%s}}\n",
               math, (unsigned long long)a->photons, (unsigned long long)o->seed,
               (unsigned long long)a->identical, (unsigned long long)a->alike, a->max_distance,
               a->max_distance_alike, a->detected[0] / n, a->detected[1] / n, detected_sigma(a),
               a->seconds[0], a->seconds[1], passes(a) ? "true" : "false");
        return;
    }
    printf("prism-propagate --validate %s: %llu photons, seed %llu, CUDA (%s, %s math) against "
           "the host backend\n",
           o->file, (unsigned long long)a->photons, (unsigned long long)o->seed, device, math);
    printf("  bit-identical photons              %12llu (%.4f%%)\n",
           (unsigned long long)a->identical, 100.0 * a->identical / n);
    printf("  same history, solid and steps      %12llu (%.4f%%)\n", (unsigned long long)a->alike,
           100.0 * a->alike / n);
    printf("  largest position difference        %12.3g m (%.3g m where they end alike)\n",
           a->max_distance, a->max_distance_alike);
    printf("  detected fraction: host %.6f, CUDA %.6f (%.2f sigma apart)\n", a->detected[0] / n,
           a->detected[1] / n, detected_sigma(a));
    printf("  seconds: host %.3f, CUDA %.3f\n", a->seconds[0], a->seconds[1]);
    printf("  %s: needs %.1f%% ending alike and detected fractions within %.0f sigma\n",
           passes(a) ? "agree" : "DISAGREE", 100.0 * VALIDATE_ALIKE, VALIDATE_SIGMA);
}

/* Upload and propagate the sample on `backend` into `out`; NULL, or what
 * went wrong. */
static const char *run_on(const propagate_options *o, const prism_scene *scene, prism_context *ctx,
                          const prism_photon_source *src, prism_photon *out, double *seconds)
{
    const bool host = prism_context_backend(ctx) == PRISM_BACKEND_HOST;
    prism_geometry_desc gd = {.policy = o->engine.placement,
                              .builder = host ? PRISM_BVH_BUILDER_HOST : o->engine.bvh};
    tool_env_geometry(&gd);
    prism_propagate_desc d = {.seed = o->seed, .max_steps = o->max_steps, .math = o->math};
    prism_propagate_outputs outs = {.photons = {.kind = PRISM_TARGET_HOST, .host = out}};
    prism_propagate_stats st;
    prism_geometry *g = NULL;
    const char *why = NULL;
    if (prism_geometry_upload(ctx, scene, NULL, &gd, &g) != PRISM_SUCCESS ||
        prism_propagate(ctx, g, src, &d, &outs, &st) != PRISM_SUCCESS)
        why = prism_context_last_error(ctx);
    else
        *seconds = st.seconds;
    prism_geometry_destroy(g);
    return why;
}

/* Both backends' photons into host[] and cuda[]; the device's name. */
static int run_both(const propagate_options *o, const prism_scene *scene,
                    const prism_photon_source *src, prism_photon *host, prism_photon *cuda,
                    agreement *a, char *device, size_t device_size)
{
    const prism_backend backends[2] = {PRISM_BACKEND_HOST, PRISM_BACKEND_CUDA};
    prism_photon *outs[2] = {host, cuda};
    for (int i = 0; i < 2; i++) {
        prism_context_desc cd = {.backend = backends[i]};
        prism_context *ctx = NULL;
        prism_result r = prism_context_create(&cd, &ctx);
        const char *why = r != PRISM_SUCCESS ? prism_result_string(r)
                                             : run_on(o, scene, ctx, src, outs[i], &a->seconds[i]);
        if (why == NULL && i == 1)
            snprintf(device, device_size, "%s", prism_context_device(ctx)->name);
        if (why != NULL)
            fprintf(stderr, "prism-propagate --validate: %s backend: %s\n",
                    prism_backend_name(backends[i]), why);
        prism_context_destroy(ctx);
        if (why != NULL)
            return -1;
    }
    return 0;
}

/* The sample: --count photons (default 100000, or the file's when fewer). */
static prism_photon *sample(const propagate_options *o, const prism_scene *scene,
                            prism_photon_source *src)
{
    npy_reader in;
    memset(&in, 0, sizeof in);
    char err[1024];
    uint64_t n = o->count ? o->count : PROPAGATE_VALIDATE_COUNT;
    prism_photon *given = NULL;
    int rc = o->photons ? propagate_open_photons(o, &in, err, sizeof err) : 0;
    if (rc == 0 && o->photons && n > in.rows)
        n = in.rows;
    if (rc == 0 && n > VALIDATE_MAX)
        rc = tool_fail(err, sizeof err, "--validate compares at most %llu photons",
                       (unsigned long long)VALIDATE_MAX);
    if (rc == 0 && o->photons) {
        given = malloc((size_t)n * sizeof *given);
        rc = given != NULL ? propagate_read_photons(&in, given, (size_t)n, 0, err, sizeof err)
                           : tool_fail(err, sizeof err, "out of memory");
    }
    npy_reader_close(&in);
    *src = propagate_source(o, scene, n);
    src->photons = given;
    if (rc != 0) {
        fprintf(stderr, "prism-propagate: %s\n", err);
        free(given);
        src->count = 0;
    }
    return given;
}

int propagate_validate(const propagate_options *o, const prism_scene *scene)
{
    if (prism_cuda_device_count() == 0) {
        if (prism_backend_built(PRISM_BACKEND_CUDA))
            fprintf(stderr, "prism-propagate --validate: no CUDA device: nothing to compare the "
                            "host backend with\n");
        else
            fprintf(stderr, "prism-propagate --validate: this build has no CUDA backend: "
                            "nothing to compare the host backend with\n");
        return PROPAGATE_NO_CUDA;
    }
    prism_photon_source src;
    prism_photon *given = sample(o, scene, &src);
    if (src.count == 0)
        return PROPAGATE_FAILED;
    agreement a;
    memset(&a, 0, sizeof a);
    char device[256] = "";
    prism_photon *host = malloc(src.count * sizeof *host), *cuda = malloc(src.count * sizeof *cuda);
    int rc = PROPAGATE_FAILED;
    if (host == NULL || cuda == NULL)
        fprintf(stderr, "prism-propagate --validate: out of memory\n");
    else if (run_both(o, scene, &src, host, cuda, &a, device, sizeof device) == 0) {
        compare(host, cuda, src.count, &a);
        report(o, &a, device);
        rc = passes(&a) ? PROPAGATE_OK : PROPAGATE_DISAGREE;
    }
    free(host);
    free(cuda);
    free(given);
    return rc;
}
