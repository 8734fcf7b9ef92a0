/* Command-line pieces the programs share (cli.h). */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tool_fail(char *err, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, size, fmt, ap);
    va_end(ap);
    return -1;
}

/* One option: "--opt=value", "--opt value" (valued ones), or a flag. */
static int one_option(const tool_args *args, int argc, char **argv, int *i, char *err, size_t size)
{
    const char *a = argv[*i], *eq = strchr(a, '='), *value = NULL;
    char name[48];
    if (eq != NULL && (size_t)(eq - a) < sizeof name) {
        memcpy(name, a, (size_t)(eq - a));
        name[eq - a] = 0;
        value = eq + 1;
    } else {
        snprintf(name, sizeof name, "%s", a);
        if (tool_parse_choice(a, args->valued) >= 0) {
            if (*i + 1 >= argc)
                return tool_fail(err, size, "%s needs a value (see --help)", a);
            value = argv[++*i];
        }
    }
    if (value == NULL && args->flag(args->user, name))
        return 0;
    const int r = value != NULL ? args->option(args->user, name, value, err, size) : 1;
    return r == 1 ? tool_fail(err, size, "unknown option '%s' (see --help)", a) : r;
}

int tool_args_parse(int argc, char **argv, const tool_args *args, char *err, size_t err_size)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] == '-' && a[1] != 0) {
            if (one_option(args, argc, argv, &i, err, err_size))
                return -1;
        } else if (*args->positional != NULL) {
            return tool_fail(err, err_size, "one %s only: '%s' and '%s' (see --help)",
                             args->positional_noun, *args->positional, a);
        } else {
            *args->positional = a;
        }
    }
    return 0;
}

int tool_parse_floats(const char *s, float *out, int min_n, int max_n)
{
    int n = 0;
    while (*s) {
        if (n == max_n)
            return -1;
        char *end;
        errno = 0;
        double v = strtod(s, &end);
        if (end == s || errno || !isfinite(v))
            return -1;
        out[n++] = (float)v;
        if (*end == ',')
            end++;
        else if (*end)
            return -1;
        s = end;
    }
    return n >= min_n ? n : -1;
}

int tool_parse_long(const char *s, long min, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end || errno || v < min)
        return -1;
    *out = v;
    return 0;
}

int tool_parse_count(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
    char *end;
    errno = 0;
    uint64_t v;
    if (strpbrk(s, "eE.") != NULL) {
        double d = strtod(s, &end);
        /* 2^63 and above do not convert; no count here comes near */
        if (end == s || *end || errno || !(d >= 0 && d < 9.2e18) || d != floor(d))
            return -1;
        v = (uint64_t)d;
    } else {
        /* digits only: strtoull would skip spaces and negate after them
         * (" -7" read as 2^64 - 7) */
        if (s[0] < '0' || s[0] > '9')
            return -1;
        unsigned long long u = strtoull(s, &end, 10);
        if (end == s || *end || errno)
            return -1;
        v = (uint64_t)u;
    }
    if (v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

int tool_parse_choice(const char *arg, const char *const *names)
{
    for (int i = 0; names != NULL && names[i]; i++)
        if (strcmp(arg, names[i]) == 0)
            return i;
    return -1;
}

int tool_parse_source(const char *s, prism_photon_source *src)
{
    float v[8];
    if (strncmp(s, "point:", 6) == 0) {
        if (tool_parse_floats(s + 6, v, 3, 3) != 3)
            return -1;
        src->kind = PRISM_SOURCE_POINT;
        memcpy(src->position, v, sizeof src->position);
        return 0;
    }
    if (strncmp(s, "beam:", 5) == 0) {
        int n = tool_parse_floats(s + 5, v, 6, 8);
        if (n < 0 || (v[3] == 0 && v[4] == 0 && v[5] == 0))
            return -1;
        float radius = n > 6 ? v[6] : 0.0f, divergence = n > 7 ? v[7] * 0.017453293f : 0.0f;
        if (radius < 0 || divergence < 0 || divergence > 3.14159266f)
            return -1;
        src->kind = PRISM_SOURCE_BEAM;
        memcpy(src->position, v, sizeof src->position);
        memcpy(src->direction, v + 3, sizeof src->direction);
        src->radius = radius;
        src->divergence = divergence;
        return 0;
    }
    return -1;
}

static int parse_backend(const char *s, prism_backend *out)
{
    const prism_backend all[3] = {PRISM_BACKEND_AUTO, PRISM_BACKEND_CUDA, PRISM_BACKEND_HOST};
    for (int i = 0; i < 3; i++)
        if (strcmp(s, prism_backend_name(all[i])) == 0) {
            *out = all[i];
            return 0;
        }
    return -1;
}

static int parse_bvh(const char *s, prism_bvh_builder *out)
{
    const prism_bvh_builder all[3] = {PRISM_BVH_BUILDER_AUTO, PRISM_BVH_BUILDER_HOST,
                                      PRISM_BVH_BUILDER_CUDA};
    for (int i = 0; i < 3; i++)
        if (strcmp(s, prism_bvh_builder_name(all[i])) == 0) {
            *out = all[i];
            return 0;
        }
    return -1;
}

int tool_parse_engine_option(tool_engine_options *e, const char *opt, const char *val, char *err,
                             size_t size)
{
    if (!strcmp(opt, "--source")) {
        if (tool_parse_source(val, &e->source))
            return tool_fail(err, size,
                             "--source: expected point:x,y,z or "
                             "beam:x,y,z,dx,dy,dz[,radius[,divergence]], got '%s'",
                             val);
        e->source_given = true;
    } else if (!strcmp(opt, "--backend")) {
        if (parse_backend(val, &e->backend))
            return tool_fail(err, size, "--backend: expected auto, cuda or host, got '%s'", val);
    } else if (!strcmp(opt, "--placement")) {
        if (!prism_placement_policy_parse(val, &e->placement))
            return tool_fail(err, size,
                             "--placement: expected auto, device, mapped or chroma, "
                             "got '%s'",
                             val);
    } else if (!strcmp(opt, "--bvh")) {
        if (parse_bvh(val, &e->bvh))
            return tool_fail(err, size, "--bvh: expected auto, host or cuda, got '%s'", val);
    } else if (!strcmp(opt, "--unit")) {
        if (prism_length_unit_parse(val, &e->unit) != PRISM_SUCCESS)
            return tool_fail(err, size, "--unit: expected m, cm, mm or auto, got '%s'", val);
    } else {
        return 1;
    }
    return 0;
}

void tool_log_engine(void *user, prism_log_level level, const char *message)
{
    tool_log *log = user;
    if (level == PRISM_LOG_ERROR && log != NULL && !log->print_errors)
        snprintf(log->error, sizeof log->error, "%s", message);
    else if (level == PRISM_LOG_WARNING || (level == PRISM_LOG_ERROR && log != NULL) ||
             level == PRISM_LOG_DEBUG) /* debug: only when a trace was asked (tool_env_*) */
        fprintf(stderr, "prism: %s\n", message);
}

void tool_json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            printf("\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            printf("\\u%04x", (unsigned char)*s);
        else
            putchar(*s);
    }
    putchar('"');
}

/* ---- the engine's settings from the environment */

static bool env_set(const char *name)
{
    return getenv(name) != NULL;
}

static bool env_is(const char *name, const char *value)
{
    const char *v = getenv(name);
    return v != NULL && strcmp(v, value) == 0;
}

void tool_trace_log(void *user, prism_log_level level, const char *message)
{
    (void)user;
    if (level == PRISM_LOG_DEBUG)
        fprintf(stderr, "%s\n", message);
}

void tool_env_load(prism_load_desc *d)
{
    if (!env_set("PRISM_LOAD_TRACE"))
        return;
    d->trace = true;
    if (d->log == NULL) {
        d->log = tool_trace_log;
        d->log_user = NULL;
    }
}

void tool_env_geometry(prism_geometry_desc *d)
{
    if (env_is("PRISM_TRAVERSAL", "wide"))
        d->traversal = PRISM_TRAVERSAL_WIDE;
    else if (env_is("PRISM_TRAVERSAL", "binary"))
        d->traversal = PRISM_TRAVERSAL_BINARY;
    if (env_is("PRISM_WIDE_COLLAPSE", "host"))
        d->wide_collapse_on_host = true;
    const char *validate = getenv("PRISM_BVH_VALIDATE");
    if (validate != NULL && validate[0] && strcmp(validate, "0") != 0)
        d->validate_bvh = true;
    const char *radius = getenv("PRISM_BVH_RADIUS");
    if (radius != NULL && atoi(radius) == PRISM_BVH_CUDA_RADIUS_SMALL)
        d->cuda_bvh_radius = PRISM_BVH_CUDA_RADIUS_SMALL;
    const char *tail = getenv("PRISM_BVH_TAIL");
    if (tail != NULL && atoi(tail) > 1 && atoi(tail) <= PRISM_BVH_CUDA_TAIL_MAX)
        d->cuda_bvh_tail = (unsigned)atoi(tail);
    if (env_set("PRISM_BVH_HPLOC"))
        d->cuda_bvh_hploc = true;
    if (env_set("PRISM_UPLOAD_TRACE"))
        d->trace |= PRISM_GEOMETRY_TRACE_UPLOAD;
    if (env_set("PRISM_BVH_TRACE"))
        d->trace |= PRISM_GEOMETRY_TRACE_BVH;
}

bool tool_env_traces(void)
{
    return env_set("PRISM_UPLOAD_TRACE") || env_set("PRISM_BVH_TRACE");
}

void tool_env_context(prism_context_desc *d)
{
    if (!tool_env_traces())
        return;
    d->log_level = PRISM_LOG_DEBUG;
    if (d->log == NULL) {
        d->log = tool_trace_log;
        d->log_user = NULL;
    }
}
