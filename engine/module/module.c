/* prism_module: runtime compilation (prism/module.h). The checks, the
 * context's memo, the disk cache around the compiler (engine/module/cache.c) and
 * the modules' lifetimes; NVRTC and the driver are engine/cuda/module.c's,
 * the driver's part reached through the context's backend table (a
 * backend without library_load has no runtime compilation). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/backend.h"
#include "engine/devices.h"
#include "engine/launch/kernel_state.h"
#include "engine/memory/internal.h"
#include "cache.h"
#include "headers.h"
#include "internal.h"

#ifndef PRISM_VERSION_STRING
#define PRISM_VERSION_STRING "0.0.0"
#endif

struct prism_function {
    prism_function *next;
    prism_module *module;
    void *kernel; /* cudaKernel_t */
    char name[];
};

struct prism_module {
    prism_context *ctx;
    prism_module *prev, *next; /* the context's modules */
    unsigned refs;             /* the caller's */
    bool memo;                 /* the context's memo holds it too */
    prism__kc_key key;
    char name[64];
    void *library; /* cudaLibrary_t */
    prism_function *functions;
};

struct prism_module_state {
    prism_module *modules;
    prism_module_stats stats;
    prism__nvrtc *nvrtc;
    bool disk_warned; /* the disk cache's trouble is said once per context */
};

static const char *module_name(const prism_module_options *o)
{
    return o->name != NULL && o->name[0] != 0 ? o->name : "module.cu";
}

static prism_result check_options(prism_context *ctx, const prism_module_options *o)
{
    const char *name = module_name(o);
    if ((unsigned)o->cache > PRISM_MODULE_CACHE_NONE)
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT, "module \"%s\": cache mode %d", name,
                            (int)o->cache);
    if (o->compiler_option_count > 0 && o->compiler_options == NULL)
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                            "module \"%s\": %zu compiler options but no array", name,
                            o->compiler_option_count);
    for (size_t i = 0; i < o->compiler_option_count; i++) {
        const char *s = o->compiler_options[i];
        if (s == NULL)
            return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                                "module \"%s\": compiler option %zu is NULL", name, i);
        if (strncmp(s, "-arch", 5) == 0 || strncmp(s, "--gpu-architecture", 18) == 0)
            return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                                "module \"%s\": option \"%s\": Prism chooses the architecture "
                                "(the context's device)",
                                name, s);
    }
    return PRISM_SUCCESS;
}

static void unload(prism_module *m)
{
    struct prism_module_state *s = m->ctx->modules;
    if (m->prev != NULL)
        m->prev->next = m->next;
    else
        s->modules = m->next;
    if (m->next != NULL)
        m->next->prev = m->prev;
    if (m->library != NULL)
        m->ctx->be->library_unload(m->ctx, m->library);
    while (m->functions != NULL) {
        prism_function *f = m->functions;
        m->functions = f->next;
        free(f);
    }
    prism__kc_key_free(&m->key);
    free(m);
}

void prism_module_release(prism_module *module)
{
    if (module == NULL)
        return;
    if (module->refs > 0)
        module->refs--;
    if (module->refs == 0 && !module->memo)
        unload(module);
}

void prism_module_cache_clear(prism_context *ctx)
{
    if (ctx == NULL || ctx->modules == NULL)
        return;
    prism_module *m = ctx->modules->modules;
    while (m != NULL) {
        prism_module *next = m->next;
        m->memo = false;
        if (m->refs == 0)
            unload(m);
        m = next;
    }
}

prism_result prism__modules_shutdown(prism_context *ctx)
{
    struct prism_module_state *s = ctx->modules;
    if (s == NULL)
        return PRISM_SUCCESS;
    size_t live = 0;
    for (prism_module *m = s->modules; m != NULL; m = m->next)
        if (m->refs > 0) {
            prism__log(ctx, PRISM_LOG_ERROR, "live module \"%s\" (%u reference%s)", m->name,
                       m->refs, m->refs == 1 ? "" : "s");
            live++;
        }
    while (s->modules != NULL)
        unload(s->modules);
    prism__nvrtc_unload(s->nvrtc);
    free(s);
    ctx->modules = NULL;
    if (live == 0)
        return PRISM_SUCCESS;
    return prism__error(ctx, PRISM_ERROR_LIVE_ALLOCATIONS,
                        "context destroyed with %zu module%s still held: release them first", live,
                        live == 1 ? "" : "s");
}

prism_result prism_module_cache_stats(const prism_context *ctx, prism_module_stats *out)
{
    if (ctx == NULL || out == NULL)
        return PRISM_ERROR_INVALID_ARGUMENT;
    if (ctx->modules != NULL)
        *out = ctx->modules->stats;
    else
        memset(out, 0, sizeof *out);
    return PRISM_SUCCESS;
}

prism_result prism_module_function(prism_module *module, const char *name, prism_function **out)
{
    if (out != NULL)
        *out = NULL;
    if (module == NULL || name == NULL || out == NULL)
        return prism__error(module != NULL ? module->ctx : NULL, PRISM_ERROR_INVALID_ARGUMENT,
                            "module_function: NULL module, name or out");
    for (prism_function *f = module->functions; f != NULL; f = f->next)
        if (strcmp(f->name, name) == 0) {
            *out = f;
            return PRISM_SUCCESS;
        }
    /* a module exists only where compilation did: a backend with libraries */
    const prism__backend *be = module->ctx->be;
    if (be->library_kernel == NULL)
        return prism__error(module->ctx, PRISM_ERROR_UNSUPPORTED,
                            "module \"%s\": runtime compilation needs the CUDA backend",
                            module->name);
    void *kernel = NULL;
    char names[512];
    prism_result r = be->library_kernel(module->ctx, module->library, name, &kernel, names,
                                        sizeof names);
    if (r == PRISM_ERROR_INVALID_ARGUMENT)
        return prism__error(module->ctx, r,
                            "module \"%s\": no kernel \"%s\" (it has: %s; kernels are found by "
                            "their extern \"C\" names)",
                            module->name, name, names[0] ? names : "none");
    if (r != PRISM_SUCCESS)
        return r;
    const size_t n = strlen(name) + 1;
    prism_function *f = malloc(sizeof *f + n);
    if (f == NULL)
        return prism__error(module->ctx, PRISM_ERROR_OUT_OF_MEMORY, "module_function: no memory");
    f->module = module;
    f->kernel = kernel;
    memcpy(f->name, name, n);
    f->next = module->functions;
    module->functions = f;
    *out = f;
    return PRISM_SUCCESS;
}

prism_result prism_function_launch(prism_function *function, const prism_launch *launch,
                                   void **args)
{
    if (function == NULL)
        return PRISM_ERROR_INVALID_ARGUMENT;
    prism_context *ctx = function->module->ctx;
    const prism_launch l = launch != NULL ? *launch : (prism_launch){0};
    if (l.stream != NULL && l.stream->ctx != ctx)
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                            "launch \"%s\": the stream belongs to another context", function->name);
    uint64_t threads = 1;
    for (int i = 0; i < 3; i++)
        threads *= l.block[i] != 0 ? l.block[i] : 1u;
    if (threads > (uint64_t)ctx->device.max_threads_per_block || l.grid[1] > 65535u ||
        l.grid[2] > 65535u || l.grid[0] > 0x7FFFFFFFu)
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                            "launch \"%s\": blocks of %llu threads (at most %d) or a grid of "
                            "%u x %u x %u blocks (y and z at most 65535)",
                            function->name, (unsigned long long)threads,
                            ctx->device.max_threads_per_block, l.grid[0], l.grid[1], l.grid[2]);
    if (ctx->be->kernel_launch == NULL)
        return prism__error(ctx, PRISM_ERROR_UNSUPPORTED,
                            "launch \"%s\": runtime compilation needs the CUDA backend",
                            function->name);
    void *stream = l.stream != NULL ? prism__stream_handle(l.stream) : ctx->kernels->stream;
    char what[128];
    snprintf(what, sizeof what, "kernel \"%s\" of module \"%s\"", function->name,
             function->module->name);
    return ctx->be->kernel_launch(ctx, function->kernel, &l, stream, args, what);
}

static struct prism_module_state *state_of(prism_context *ctx)
{
    if (ctx->modules == NULL)
        ctx->modules = calloc(1, sizeof *ctx->modules);
    return ctx->modules;
}

static prism_module *memo_find(struct prism_module_state *s, const prism__kc_key *key)
{
    for (prism_module *m = s->modules; m != NULL; m = m->next)
        if (m->memo && m->key.hash == key->hash && m->key.size == key->size &&
            memcmp(m->key.text, key->text, key->size) == 0)
            return m;
    return NULL;
}

/* The disk cache's trouble, once per context: it costs compiles, not
 * results. */
static void disk_warning(prism_context *ctx, const char *fmt, const char *what)
{
    if (ctx->modules->disk_warned)
        return;
    ctx->modules->disk_warned = true;
    prism__log(ctx, PRISM_LOG_WARNING, fmt, what);
}

/* NVRTC's log as the context's error: a line naming the module, then the
 * log as NVRTC wrote it; each line also to the log callback (which takes
 * one line at a time). */
static prism_result compile_error(prism_context *ctx, const char *name, const char *log)
{
    snprintf(ctx->last_error, sizeof ctx->last_error, "module \"%s\": compilation failed:\n%s",
             name, log);
    prism__log(ctx, PRISM_LOG_ERROR, "module \"%s\": compilation failed:", name);
    for (const char *line = log; *line != 0;) {
        const char *end = strchr(line, '\n');
        const size_t n = end != NULL ? (size_t)(end - line) : strlen(line);
        if (n > 0)
            prism__log(ctx, PRISM_LOG_ERROR, "%.*s", (int)n, line);
        line += n + (end != NULL);
    }
    return PRISM_ERROR_COMPILE;
}

static void log_warnings(prism_context *ctx, const char *name, const char *log)
{
    for (const char *line = log; *line != 0;) {
        const char *end = strchr(line, '\n');
        const size_t n = end != NULL ? (size_t)(end - line) : strlen(line);
        if (n > 0)
            prism__log(ctx, PRISM_LOG_WARNING, "module \"%s\": %.*s", name, (int)n, line);
        line += n + (end != NULL);
    }
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The key of this compilation: everything the binary depends on. */
static prism_result make_key(prism_context *ctx, const prism_module_options *o, const char *source,
                             const char *nvrtc, prism__kc_key *key)
{
    int runtime = 0, driver = 0;
    prism__cuda_versions(&runtime, &driver);
    char arch[32];
    snprintf(arch, sizeof arch, "sm_%d%d", ctx->device.cc_major, ctx->device.cc_minor);
    const prism__kc_inputs in = {
        .source = source,
        .name = module_name(o),
        .options = o->compiler_options,
        .option_count = o->compiler_option_count,
        .arch = arch,
        .nvrtc = nvrtc,
        .driver_version = driver,
        .prism_version = PRISM_VERSION_STRING,
        .headers_digest = prism__device_headers_digest,
    };
    if (prism__kc_key_make(&in, key) != PRISM_SUCCESS)
        return prism__error(ctx, PRISM_ERROR_OUT_OF_MEMORY, "module: no memory for the cache key");
    return PRISM_SUCCESS;
}

/* A loaded module, kept in the context's list (and memo). Takes the key. */
static prism_result add_module(prism_context *ctx, const prism_module_options *o,
                               prism__kc_key *key, void *library, prism_module **out)
{
    prism_module *m = calloc(1, sizeof *m);
    if (m == NULL) {
        ctx->be->library_unload(ctx, library);
        prism__kc_key_free(key);
        return prism__error(ctx, PRISM_ERROR_OUT_OF_MEMORY, "module: no memory");
    }
    struct prism_module_state *s = ctx->modules;
    m->ctx = ctx;
    m->refs = 1;
    m->memo = o->cache != PRISM_MODULE_CACHE_NONE;
    m->key = *key;
    memset(key, 0, sizeof *key);
    snprintf(m->name, sizeof m->name, "%s", module_name(o));
    m->library = library;
    m->next = s->modules;
    if (s->modules != NULL)
        s->modules->prev = m;
    s->modules = m;
    *out = m;
    return PRISM_SUCCESS;
}

/* The disk cache's binary for `key`, loaded; NULL library on a miss (a
 * binary the driver refuses is removed like a corrupt entry). */
static void from_disk(prism_context *ctx, const char *dir, const prism__kc_key *key, void **library)
{
    *library = NULL;
    void *payload = NULL;
    size_t size = 0;
    uint32_t flags = 0;
    struct prism_module_state *s = ctx->modules;
    const double t_read = now();
    prism__kc_lookup l = prism__kc_load(ctx, dir, key, &payload, &size, &flags);
    if (l == PRISM__KC_REJECTED)
        s->stats.disk_rejected++;
    if (l != PRISM__KC_HIT)
        return;
    const double t0 = now();
    if (ctx->be->library_load(ctx, payload, library) == PRISM_SUCCESS) {
        s->stats.disk_hits++;
        prism__log(ctx, PRISM_LOG_DEBUG,
                   "module: %zu bytes from the disk cache: read in %.2f ms, loaded in %.2f ms",
                   size, 1e3 * (t0 - t_read), 1e3 * (now() - t0));
    } else {
        ctx->last_error[0] = 0;
        s->stats.disk_rejected++;
        prism__kc_remove(ctx, dir, key, "the driver refused its binary");
    }
    free(payload);
}

static prism_result compile_and_load(prism_context *ctx, const prism_module_options *o,
                                     const char *source, const char *dir, const prism__kc_key *key,
                                     void **library)
{
    struct prism_module_state *s = ctx->modules;
    const char *name = module_name(o);
    char arch[64];
    bool cubin = false;
    prism_result r = prism__nvrtc_target(ctx, s->nvrtc, ctx->device.cc_major, ctx->device.cc_minor,
                                         arch, sizeof arch, &cubin);
    if (r != PRISM_SUCCESS)
        return r;
    void *binary = NULL;
    size_t size = 0;
    char *log = NULL;
    const double t0 = now();
    r = prism__nvrtc_compile(ctx, s->nvrtc, source, name, arch, cubin, o->compiler_options,
                             o->compiler_option_count, &binary, &size, &log);
    const double seconds = now() - t0;
    s->stats.compiles++;
    s->stats.compile_seconds += seconds;
    if (r == PRISM_ERROR_COMPILE)
        r = compile_error(ctx, name, log != NULL ? log : "");
    else if (r == PRISM_SUCCESS && log != NULL)
        log_warnings(ctx, name, log);
    free(log);
    if (r != PRISM_SUCCESS)
        return r;
    prism__log(ctx, PRISM_LOG_INFO, "module \"%s\": compiled (%s) in %.3f s", name,
               arch + sizeof "--gpu-architecture=" - 1, seconds);
    if (dir != NULL) {
        char why[512];
        if (prism__kc_store(dir, key, binary, size, cubin ? PRISM__KC_CUBIN : 0u, why,
                            sizeof why) == PRISM_SUCCESS)
            s->stats.disk_writes++;
        else
            disk_warning(ctx,
                         "kernel cache: not written (%s); compiling each new context's "
                         "modules",
                         why);
    }
    r = ctx->be->library_load(ctx, binary, library);
    free(binary);
    return r;
}

/* NVRTC's identity for the key: from its file where it is found by path,
 * so that a cache hit never loads it; else loaded, and from the file the
 * loader chose. */
static prism_result nvrtc_identity(prism_context *ctx, char *identity, size_t size)
{
    struct prism_module_state *s = ctx->modules;
    if (s->nvrtc == NULL && prism__nvrtc_identify(identity, size))
        return PRISM_SUCCESS;
    prism_result r = s->nvrtc != NULL ? PRISM_SUCCESS : prism__nvrtc_load(ctx, &s->nvrtc);
    if (r == PRISM_SUCCESS)
        snprintf(identity, size, "%s", prism__nvrtc_identity(s->nvrtc));
    return r;
}

static prism_result compile_cuda(prism_context *ctx, const prism_module_options *o,
                                 const char *source, prism_module **out)
{
    struct prism_module_state *s = state_of(ctx);
    if (s == NULL)
        return prism__error(ctx, PRISM_ERROR_OUT_OF_MEMORY, "module: no memory");
    char identity[4096 + 128];
    prism__kc_key key = {0};
    prism_result r = ctx->be->bind(ctx);
    if (r == PRISM_SUCCESS)
        r = nvrtc_identity(ctx, identity, sizeof identity);
    if (r == PRISM_SUCCESS)
        r = make_key(ctx, o, source, identity, &key);
    if (r != PRISM_SUCCESS)
        return r;
    prism_module *m = o->cache != PRISM_MODULE_CACHE_NONE ? memo_find(s, &key) : NULL;
    if (m != NULL) {
        prism__kc_key_free(&key);
        m->refs++;
        s->stats.memo_hits++;
        *out = m;
        return PRISM_SUCCESS;
    }
    char dir_buf[4096];
    const char *dir = NULL;
    if (o->cache == PRISM_MODULE_CACHE_DEFAULT) {
        if (prism__kc_directory(o->cache_dir, getenv("PRISM_CACHE_DIR"), getenv("XDG_CACHE_HOME"),
                                getenv("HOME"), dir_buf, sizeof dir_buf))
            dir = dir_buf;
        else
            disk_warning(ctx, "kernel cache: %s: no directory (set PRISM_CACHE_DIR)",
                         "no PRISM_CACHE_DIR, XDG_CACHE_HOME or HOME");
    }
    void *library = NULL;
    if (dir != NULL)
        from_disk(ctx, dir, &key, &library);
    if (library == NULL && s->nvrtc == NULL) {
        r = prism__nvrtc_load(ctx, &s->nvrtc);
        /* the file may have changed since it was looked at: key what compiles */
        if (r == PRISM_SUCCESS && strcmp(identity, prism__nvrtc_identity(s->nvrtc)) != 0) {
            prism__kc_key_free(&key);
            r = make_key(ctx, o, source, prism__nvrtc_identity(s->nvrtc), &key);
        }
    }
    if (r == PRISM_SUCCESS && library == NULL)
        r = compile_and_load(ctx, o, source, dir, &key, &library);
    if (r != PRISM_SUCCESS) {
        prism__kc_key_free(&key);
        return r;
    }
    return add_module(ctx, o, &key, library, out);
}

prism_result prism_module_compile(prism_context *ctx, const char *source,
                                  const prism_module_options *options, prism_module **out)
{
    if (out != NULL)
        *out = NULL;
    if (ctx == NULL || source == NULL || out == NULL)
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                            "module_compile: NULL context, source or out");
    const prism_module_options o = options != NULL ? *options : (prism_module_options){0};
    prism_result r = check_options(ctx, &o);
    if (r != PRISM_SUCCESS)
        return r;
    /* the library calls and bind come together: CUDA's table has all */
    if (ctx->be->library_load == NULL)
        return prism__error(ctx, PRISM_ERROR_UNSUPPORTED,
                            "module \"%s\": runtime compilation needs the CUDA backend (this "
                            "context is on the %s backend)",
                            module_name(&o), prism_backend_name(ctx->backend));
    return compile_cuda(ctx, &o, source, out);
}
