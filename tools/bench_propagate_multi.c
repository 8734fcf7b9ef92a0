/* `prism-bench propagate FILE --devices LIST`: prism_propagate_multi over
 * the first 1, then all, contexts of LIST (a context per entry; an entry
 * may repeat a device), for each --counts N: photons/s, the efficiency
 * rate(n) / (n x rate(1)), and the geometry's upload time per context.
 * Final photons go to pinned host memory (the multi-device call writes
 * host memory). --no-cuda: host contexts, one per entry (a check of the
 * code path, not a figure). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_kernels.h"
#include "bench_util.h"
#include "cli.h"
#include "prism/memory.h"
#include "prism/propagate.h"

#define MULTI_MAX 16

typedef struct multi_set {
    prism_context *ctx[MULTI_MAX];
    prism_geometry *g[MULTI_MAX];
    double upload[MULTI_MAX];
    size_t n;
} multi_set;

static void close_set(multi_set *m)
{
    for (size_t i = 0; i < m->n; i++) {
        prism_geometry_destroy(m->g[i]);
        prism_context_destroy(m->ctx[i]);
    }
    m->n = 0;
}

static bool open_set(multi_set *m, const int *idx, size_t n, bool host, const bench_scene *s,
                     char *why, size_t size)
{
    memset(m, 0, sizeof *m);
    for (size_t i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "cuda:%d", idx[i]);
        prism_context_desc d = {.backend = host ? PRISM_BACKEND_HOST : PRISM_BACKEND_CUDA,
                                .device = host ? NULL : name};
        tool_env_context(&d);
        if (prism_context_create(&d, &m->ctx[i]) != PRISM_SUCCESS) {
            snprintf(why, size, "context %zu (%s): cannot be created", i, host ? "host" : name);
            close_set(m);
            return false;
        }
        m->n = i + 1;
        const double t0 = prism_bench_now();
        m->g[i] = bench_upload(m->ctx[i], s, PRISM_PLACEMENT_AUTO, 0, why, size);
        m->upload[i] = prism_bench_now() - t0;
        if (m->g[i] == NULL) {
            close_set(m);
            return false;
        }
    }
    return true;
}

/* Median seconds of `repeat` calls after a warm-up; -1 on failure. */
static double time_multi(multi_set *m, size_t count, int repeat, unsigned max_steps,
                         prism_propagate_math math, prism_propagate_share *shares)
{
    prism_buffer *buf = NULL;
    if (prism_buffer_create_pinned(m->ctx[0], count * sizeof(prism_photon), 0, "bench.multi",
                                   &buf) != PRISM_SUCCESS)
        return -1;
    prism_photon_source src = {.kind = PRISM_SOURCE_POINT,
                               .count = count,
                               .wavelength_nm = 350.0f,
                               .wavelength_max_nm = 550.0f};
    prism_propagate_desc d = {.seed = 1, .max_steps = max_steps, .math = math};
    prism_propagate_outputs out = {
        .photons = {.kind = PRISM_TARGET_HOST, .host = prism_buffer_host_pointer(buf)}};
    double times[64], sec = -1;
    int ok = 1;
    for (int i = -1; i < repeat && ok; i++) {
        const double t0 = prism_bench_now();
        ok = prism_propagate_multi(m->ctx, (const prism_geometry *const *)m->g, m->n, &src, &d,
                                   &out, NULL, shares) == PRISM_SUCCESS;
        if (i >= 0)
            times[i] = prism_bench_now() - t0;
    }
    if (ok)
        sec = prism_bench_median(times, (size_t)repeat);
    else
        fprintf(stderr, "prism-bench propagate: %s\n", prism_context_last_error(m->ctx[0]));
    prism_buffer_release(buf);
    return sec;
}

int bench_propagate_multi(const char *list, const bench_scene *s, const size_t *counts,
                          int counts_n, int repeat, unsigned max_steps, prism_propagate_math math,
                          bool host, bool json)
{
    int idx[MULTI_MAX], n = 0;
    char why[600];
    if (host) {
        n = 1;
        for (const char *c = list; *c; c++)
            n += *c == ',';
        n = n > MULTI_MAX ? MULTI_MAX : n;
    } else if (prism_device_list(list, idx, MULTI_MAX, &n, why, sizeof why) != PRISM_SUCCESS) {
        fprintf(stderr, "prism-bench propagate: --devices: %s\n", why);
        return 1;
    }
    const size_t sizes[2] = {1, (size_t)n};
    double rate1[8] = {0};
    if (json)
        printf("{\"bench\":\"propagate_devices\",\"triangles\":%zu,\"results\":[",
               s->scene->triangles_count);
    else
        printf("prism-bench propagate --devices %s: %zu triangles, %s math\n%-9s %12s %10s "
               "%12s %10s  %s\n",
               list, s->scene->triangles_count,
               math == PRISM_PROPAGATE_MATH_FAST ? "fast" : "exact", "contexts", "photons",
               "seconds", "Mphotons/s", "efficiency", "upload s per context / photons each");
    int rows = 0, rc = 0;
    for (int k = 0; k < (n > 1 ? 2 : 1); k++) {
        multi_set m;
        if (!open_set(&m, idx, sizes[k], host, s, why, sizeof why)) {
            fprintf(stderr, "prism-bench propagate: %s\n", why);
            rc = 1;
            break;
        }
        for (int c = 0; c < counts_n && c < 8; c++) {
            prism_propagate_share shares[MULTI_MAX];
            const double sec = time_multi(&m, counts[c], repeat, max_steps, math, shares);
            if (sec <= 0) {
                rc = 1;
                continue;
            }
            const double rate = (double)counts[c] / sec;
            if (k == 0)
                rate1[c] = rate;
            const double eff = rate1[c] > 0 ? rate / ((double)m.n * rate1[c]) : 0;
            if (json) {
                printf("%s{\"contexts\":%zu,\"photons\":%zu,\"seconds\":%.6g,"
                       "\"photons_per_second\":%.6g,\"efficiency\":%.4f,\"upload_seconds\":[",
                       rows++ ? "," : "", m.n, counts[c], sec, rate, eff);
                for (size_t i = 0; i < m.n; i++)
                    printf("%s%.4f", i ? "," : "", m.upload[i]);
                printf("],\"photons_each\":[");
                for (size_t i = 0; i < m.n; i++)
                    printf("%s%zu", i ? "," : "", shares[i].photons);
                printf("]}");
            } else {
                printf("%-9zu %12zu %10.4f %12.2f %10.3f ", m.n, counts[c], sec, rate / 1e6, eff);
                for (size_t i = 0; i < m.n; i++)
                    printf(" %.3f", m.upload[i]);
                printf(" /");
                for (size_t i = 0; i < m.n; i++)
                    printf(" %zu", shares[i].photons);
                printf("\n");
            }
        }
        close_set(&m);
    }
    if (json)
        printf("]}\n");
    return rc;
}
