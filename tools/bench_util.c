/* Helpers shared by prism-bench's subcommands. */
#define _POSIX_C_SOURCE 200809L
#include "bench_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
