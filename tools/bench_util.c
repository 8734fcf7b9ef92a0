/* Helpers shared by prism-bench's subcommands. */
#define _POSIX_C_SOURCE 200809L
#include "bench_util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

void prism_bench_settle(void)
{
    struct timespec ts = {0, 100 * 1000 * 1000};
    nanosleep(&ts, NULL);
}

double prism_bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double prism_bench_median(double *values, size_t n)
{
    if (n == 0)
        return 0.0;
    qsort(values, n, sizeof *values, cmp_double);
    return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

bool prism_bench_has_flag(int argc, char **argv, const char *flag)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], flag) == 0)
            return true;
    return false;
}

bool prism_bench_wants_help(int argc, char **argv)
{
    return prism_bench_has_flag(argc, argv, "--help") || prism_bench_has_flag(argc, argv, "-h");
}

static bool is_flag(const char *arg, const char *const *flags)
{
    for (; *flags; flags++)
        if (strcmp(arg, *flags) == 0)
            return true;
    return false;
}

const char *prism_bench_positional(int argc, char **argv, const char *const *flags)
{
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] != '-')
            return argv[i];
        if (!is_flag(argv[i], flags))
            i++; /* skip the option's value */
    }
    return NULL;
}

const char *prism_bench_option(int argc, char **argv, const char *option, const char *fallback)
{
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], option) == 0)
            return argv[i + 1];
    return fallback;
}

bool prism_bench_unit(int argc, char **argv, const char *stage, prism_length_unit *unit)
{
    const char *v = prism_bench_option(argc, argv, "--unit", "auto");
    if (prism_length_unit_parse(v, unit) == PRISM_SUCCESS)
        return true;
    fprintf(stderr, "prism-bench %s: --unit: expected m, cm, mm or auto, got '%s'\n", stage, v);
    return false;
}

int prism_bench_bytes_list(const char *text, size_t *out, int max)
{
    int n = 0;
    const char *p = text;
    if (p == NULL || *p == '\0')
        return -1;
    for (;;) {
        if (*p < '0' || *p > '9' || n == max)
            return -1;
        size_t v = 0;
        for (; *p >= '0' && *p <= '9'; p++) {
            if (v > (SIZE_MAX - 9) / 10)
                return -1;
            v = v * 10 + (size_t)(*p - '0');
        }
        unsigned shift = 0;
        if (*p == 'k' || *p == 'K')
            shift = 10;
        else if (*p == 'm' || *p == 'M')
            shift = 20;
        else if (*p == 'g' || *p == 'G')
            shift = 30;
        p += shift != 0;
        if (v == 0 || v > (SIZE_MAX >> shift))
            return -1;
        out[n++] = v << shift;
        if (*p == '\0')
            return n;
        if (*p++ != ',')
            return -1;
    }
}

void prism_bench_budget_label(size_t bytes, char *buf, size_t size)
{
    static const struct {
        unsigned shift;
        char unit;
    } units[] = {{30, 'G'}, {20, 'M'}, {10, 'k'}};
    for (int i = 0; i < 3; i++) {
        if (bytes != 0 && bytes % ((size_t)1 << units[i].shift) == 0) {
            snprintf(buf, size, "budget:%zu%c", bytes >> units[i].shift, units[i].unit);
            return;
        }
    }
    snprintf(buf, size, "budget:%zu", bytes);
}

bool prism_bench_budgets(int argc, char **argv, const char *stage, size_t *out, int max, int *n)
{
    const char *text = prism_bench_option(argc, argv, "--device-budget", NULL);
    *n = text != NULL ? prism_bench_bytes_list(text, out, max) : 0;
    if (*n >= 0)
        return true;
    fprintf(stderr,
            "prism-bench %s: --device-budget: expected up to %d sizes such as 16M,64M,1G, got "
            "'%s'\n",
            stage, max, text);
    return false;
}

void prism_bench_node_bytes(const prism_upload_report *r, size_t *device, size_t *mapped)
{
    *device = *mapped = 0;
    for (size_t i = 0; i < r->array_count; i++) {
        if (strcmp(r->arrays[i].name, "bvh.nodes") == 0) {
            *device = r->arrays[i].device_bytes;
            *mapped = r->arrays[i].mapped_bytes;
        }
    }
}

const char *prism_bench_tree(const prism_upload_report *r)
{
    return r->wide_nodes ? "wide" : "binary";
}
