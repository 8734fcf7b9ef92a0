/* Runtime compilation on a GPU: compile and launch, the context's memo
 * (no second compile), the disk cache from a fresh context and from other
 * processes (a second process's compile call against the first's), a
 * damaged entry recovered from, processes compiling into one directory at
 * once, NVRTC's log on a syntax error, the device view of every placement
 * traced by a renderer's kernel (runtime-compiled and nvcc-built) against
 * Prism's own trace on 1M rays, and that kernel's picture against
 * prism_render. Skipped (77) without a CUDA device.
 *
 * The kernels are tests/module_kernels.cuh, read at run time for
 * prism_module_compile and built by nvcc into this program. Children are
 * this program again (--child DIR), so each process starts cold. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <math.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "exec_util.h"
#include "prism/device/traverse.h"
#include "kernels_test_scene.h"
#include "prism/device_view.h"
#include "prism/memory.h"
#include "prism/module.h"
#include "prism/render.h"
#include "engine/launch/render_internal.h"

extern char **environ;

#define KERNELS_FILE PRISM_TEST_DATA "/../module_kernels.cuh"
enum { RAYS = 1 << 20, W = 640, H = 480 };

/* module_kernels.cuh's module_trace_result */
typedef struct trace_result {
    float t, u, v;
    uint32_t index, triangle, solid, material, any;
} trace_result;

int module_test_trace_nvcc(const prism_device_view *view, const float lo[3], const float hi[3],
                           uint64_t seed, unsigned n, float *rays, void *results);

static char *kernels_source;
static char cache_root[64];
static prism_context *cuda;

/* ---- helpers */

static char log_text[16384];
static int log_warnings;

static void capture(void *user, prism_log_level level, const char *message)
{
    (void)user;
    if (level == PRISM_LOG_DEBUG && strncmp(message, "module", 6) == 0)
        printf("%s\n", message);
    if (level >= PRISM_LOG_WARNING) {
        log_warnings++;
        strncat(log_text, message, sizeof log_text - strlen(log_text) - 2);
        strcat(log_text, "\n");
    }
}

static prism_context *logged_context(void)
{
    prism_context_desc d = {.backend = PRISM_BACKEND_CUDA,
                            .log = capture,
                            .log_level = PRISM_LOG_DEBUG};
    prism_context *ctx = NULL;
    if (prism_context_create(&d, &ctx) != PRISM_SUCCESS)
        return NULL;
    log_text[0] = 0;
    log_warnings = 0;
    return ctx;
}

static void cache_dir(const char *name, char *out, size_t size)
{
    snprintf(out, size, "%s/%s", cache_root, name);
}

/* The one entry of `dir`. */
static void entry_path(const char *dir, char *out, size_t size)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    out[0] = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (e->d_name[0] != '.')
            snprintf(out, size, "%s/%s", dir, e->d_name);
    closedir(d);
    assert_true(out[0] != 0);
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static prism_module *compile(prism_context *ctx, const char *source, const char *dir,
                             prism_module_cache mode)
{
    prism_module_options o = {.name = "module_kernels.cuh", .cache = mode, .cache_dir = dir};
    prism_module *m = NULL;
    prism_result r = prism_module_compile(ctx, source, &o, &m);
    if (r != PRISM_SUCCESS)
        fail_msg("compile: %s: %s", prism_result_string(r), prism_context_last_error(ctx));
    return m;
}

static prism_module_stats stats(prism_context *ctx)
{
    prism_module_stats s;
    assert_int_equal(prism_module_cache_stats(ctx, &s), PRISM_SUCCESS);
    return s;
}

/* ---- a small source */

static const char small_source[] =
    "extern \"C\" __global__ void fill(float *out, unsigned n, float v)\n"
    "{\n"
    "    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) out[i] = v + (float)i;\n"
    "}\n"
    "extern \"C\" __global__ void nothing() {}\n";

static void check_fill(prism_context *ctx, prism_module *m, unsigned n, float v)
{
    prism_function *f = NULL;
    assert_int_equal(prism_module_function(m, "fill", &f), PRISM_SUCCESS);
    prism_buffer *b = NULL;
    assert_int_equal(prism_buffer_create_device(ctx, n * sizeof(float), "test.fill", &b),
                     PRISM_SUCCESS);
    void *p = prism_buffer_device_pointer(b);
    void *args[3] = {&p, &n, &v};
    prism_launch l = {.grid = {(n + 127) / 128}, .block = {128}};
    assert_int_equal(prism_function_launch(f, &l, args), PRISM_SUCCESS);
    float *host = malloc(n * sizeof(float));
    assert_int_equal(prism_buffer_read(b, 0, host, n * sizeof(float)), PRISM_SUCCESS);
    for (unsigned i = 0; i < n; i++)
        assert_float_equal(host[i], v + (float)i, 0);
    free(host);
    prism_buffer_release(b);
}

static void test_compile_and_launch(void **state)
{
    (void)state;
    prism_module *m = compile(cuda, small_source, NULL, PRISM_MODULE_CACHE_NONE);
    check_fill(cuda, m, 1000, 0.5f);
    prism_function *f1 = NULL, *f2 = NULL;
    assert_int_equal(prism_module_function(m, "nothing", &f1), PRISM_SUCCESS);
    assert_int_equal(prism_module_function(m, "nothing", &f2), PRISM_SUCCESS);
    assert_ptr_equal(f1, f2);
    assert_int_equal(prism_function_launch(f1, NULL, NULL), PRISM_SUCCESS);
    /* async, on a stream of the caller's */
    prism_stream *s = NULL;
    assert_int_equal(prism_stream_create(cuda, &s), PRISM_SUCCESS);
    prism_launch l = {.grid = {4}, .block = {64}, .stream = s, .async = true};
    assert_int_equal(prism_function_launch(f1, &l, NULL), PRISM_SUCCESS);
    assert_int_equal(prism_stream_synchronize(s), PRISM_SUCCESS);
    prism_stream_destroy(s);
    /* a stream of another context */
    prism_context *host = kt_host_context();
    assert_int_equal(prism_stream_create(host, &s), PRISM_SUCCESS);
    l.stream = s;
    assert_int_equal(prism_function_launch(f1, &l, NULL), PRISM_ERROR_INVALID_ARGUMENT);
    prism_stream_destroy(s);
    prism_context_destroy(host);
    /* a block too big: refused before CUDA sees it */
    prism_launch big = {.block = {64, 32}};
    assert_int_equal(prism_function_launch(f1, &big, NULL), PRISM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(prism_context_last_error(cuda), "2048 threads"));
    /* more shared memory than a block has: CUDA's words, the kernel named */
    prism_launch shared = {.shared_bytes = (size_t)1 << 30};
    assert_int_equal(prism_function_launch(f1, &shared, NULL), PRISM_ERROR_CUDA);
    assert_non_null(strstr(prism_context_last_error(cuda), "\"nothing\""));
    printf("# %s\n", prism_context_last_error(cuda));
    /* no such kernel */
    prism_function *none = (prism_function *)&none;
    assert_int_equal(prism_module_function(m, "fil", &none), PRISM_ERROR_INVALID_ARGUMENT);
    assert_null(none);
    assert_non_null(strstr(prism_context_last_error(cuda), "extern \"C\""));
    assert_non_null(strstr(prism_context_last_error(cuda), "fill"));
    assert_non_null(strstr(prism_context_last_error(cuda), "nothing"));
    /* the context still works */
    check_fill(cuda, m, 300, 2.0f);
    prism_module_release(m);
}

/* The memo: the same inputs give the same module without compiling; other
 * options or names compile; after a clear, the disk cache answers. */
static void test_memo(void **state)
{
    (void)state;
    prism_context *ctx = logged_context();
    char dir[128];
    cache_dir("memo", dir, sizeof dir);
    prism_module *a = compile(ctx, small_source, dir, PRISM_MODULE_CACHE_DEFAULT);
    prism_module_stats s = stats(ctx);
    assert_int_equal(s.compiles, 1);
    assert_int_equal(s.disk_writes, 1);
    assert_int_equal(exec_count_entries(dir, false), 1);
    prism_module *again = compile(ctx, small_source, dir, PRISM_MODULE_CACHE_DEFAULT);
    assert_ptr_equal(again, a);
    s = stats(ctx);
    assert_int_equal(s.compiles, 1);
    assert_int_equal(s.memo_hits, 1);
    const char *opt[1] = {"-DUNUSED=1"};
    prism_module_options o = {.name = "module_kernels.cuh",
                              .compiler_options = opt,
                              .compiler_option_count = 1,
                              .cache_dir = dir};
    prism_module *b = NULL;
    assert_int_equal(prism_module_compile(ctx, small_source, &o, &b), PRISM_SUCCESS);
    assert_ptr_not_equal(b, a);
    assert_int_equal(stats(ctx).compiles, 2);
    /* released by the caller: the memo keeps it */
    prism_module_release(a);
    prism_module_release(again);
    prism_module *c = compile(ctx, small_source, dir, PRISM_MODULE_CACHE_DEFAULT);
    assert_ptr_equal(c, a);
    check_fill(ctx, c, 100, 1.0f);
    prism_module_release(c);
    prism_module_cache_clear(ctx);
    /* cleared: the disk answers, no compile */
    c = compile(ctx, small_source, dir, PRISM_MODULE_CACHE_DEFAULT);
    s = stats(ctx);
    assert_int_equal(s.compiles, 2);
    assert_int_equal(s.disk_hits, 1);
    assert_int_equal(s.memo_hits, 2);
    check_fill(ctx, c, 100, 3.0f);
    /* no cache: a compile each time, modules of their own */
    prism_module *n1 = compile(ctx, small_source, dir, PRISM_MODULE_CACHE_NONE);
    prism_module *n2 = compile(ctx, small_source, dir, PRISM_MODULE_CACHE_NONE);
    assert_ptr_not_equal(n1, n2);
    assert_ptr_not_equal(n1, c);
    assert_int_equal(stats(ctx).compiles, 4);
    prism_module_release(n1);
    prism_module_release(n2);
    prism_module_release(c);
    prism_module_release(b);
    printf("# memo: %.3f s in NVRTC for %llu compiles\n", stats(ctx).compile_seconds,
           (unsigned long long)stats(ctx).compiles);
    assert_int_equal(log_warnings, 0);
    assert_int_equal(prism_context_destroy(ctx), PRISM_SUCCESS);
}

static void test_fresh_context_hits_disk(void **state)
{
    (void)state;
    char dir[128];
    cache_dir("memo", dir, sizeof dir);
    prism_context *ctx = logged_context();
    const double t0 = now();
    prism_module *m = compile(ctx, small_source, dir, PRISM_MODULE_CACHE_DEFAULT);
    const double t1 = now();
    prism_module_stats s = stats(ctx);
    assert_int_equal(s.compiles, 0);
    assert_int_equal(s.disk_hits, 1);
    printf("# fresh context: the module from disk in %.4f s\n", t1 - t0);
    check_fill(ctx, m, 500, -1.0f);
    prism_module_release(m);
    assert_int_equal(prism_context_destroy(ctx), PRISM_SUCCESS);
}

/* ---- other processes */

typedef struct child_result {
    int status;
    double seconds;
    unsigned long long compiles, disk_hits, rejected;
    int warnings;
    unsigned hits, rays;
} child_result;

static void run_children(int count, const char *dir, child_result *out)
{
    pid_t pids[8];
    int fds[8];
    for (int i = 0; i < count; i++) {
        int p[2];
        assert_int_equal(pipe(p), 0);
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, p[1], 1);
        posix_spawn_file_actions_addclose(&fa, p[0]);
        char *argv[] = {"test_module_gpu", "--child", (char *)dir, NULL};
        assert_int_equal(posix_spawn(&pids[i], "/proc/self/exe", &fa, NULL, argv, environ), 0);
        posix_spawn_file_actions_destroy(&fa);
        close(p[1]);
        fds[i] = p[0];
    }
    for (int i = 0; i < count; i++) {
        char text[2048];
        size_t got = 0;
        for (ssize_t n;
             got < sizeof text - 1 && (n = read(fds[i], text + got, sizeof text - 1 - got)) > 0;)
            got += (size_t)n;
        text[got] = 0;
        close(fds[i]);
        int status = 0;
        assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
        child_result *r = &out[i];
        memset(r, 0, sizeof *r);
        r->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
        const char *line = strstr(text, "child:");
        if (line == NULL || sscanf(line,
                                   "child: %lf s, compiles %llu, disk hits %llu, rejected "
                                   "%llu, warnings %d, hits %u/%u",
                                   &r->seconds, &r->compiles, &r->disk_hits, &r->rejected,
                                   &r->warnings, &r->hits, &r->rays) != 7)
            fail_msg("child %d said:\n%s", i, text);
        for (const char *l = text; *l != 0;) {
            const char *end = strchr(l, '\n');
            const int n = end != NULL ? (int)(end - l) : (int)strlen(l);
            printf("# %.*s\n", n, l);
            l += n + (end != NULL);
        }
    }
}

/* A child: compile module_kernels.cuh with the cache in `dir`, time the
 * call, and trace rays from inside a box with it (each must hit). */
static int child_main(const char *dir)
{
    char *source = exec_read_file(KERNELS_FILE, NULL);
    prism_context *ctx = logged_context();
    if (source == NULL || ctx == NULL)
        return 2;
    prism_module_options o = {.name = "module_kernels.cuh", .cache_dir = dir};
    prism_module *m = NULL;
    const double t0 = now();
    prism_result r = prism_module_compile(ctx, source, &o, &m);
    const double seconds = now() - t0;
    if (r != PRISM_SUCCESS) {
        printf("compile: %s\n", prism_context_last_error(ctx));
        return 3;
    }
    prism_context *host = kt_host_context();
    kt_scene s = {0};
    const float lo[3] = {-1, -1, -1}, hi[3] = {1, 1, 1}, in_lo[3] = {-0.5f, -0.5f, -0.5f},
                in_hi[3] = {0.5f, 0.5f, 0.5f};
    kt_box(&s, lo, hi, 0, 0, PRISM_NONE, PRISM_NONE);
    unsigned hits = 0;
    enum { N = 4096 };
    if (kt_build(&s, host) == 0) {
        prism_geometry *g = kt_upload(&s, ctx, PRISM_PLACEMENT_DEVICE, false);
        prism_device_view v;
        prism_buffer *rays = NULL, *res = NULL;
        prism_function *f = NULL;
        if (g != NULL && prism_geometry_device_view(g, &v) == PRISM_SUCCESS &&
            prism_buffer_create_device(ctx, N * 24, "rays", &rays) == PRISM_SUCCESS &&
            prism_buffer_create_device(ctx, N * sizeof(trace_result), "hits", &res) ==
                PRISM_SUCCESS &&
            prism_module_function(m, "trace_rays", &f) == PRISM_SUCCESS) {
            void *rp = prism_buffer_device_pointer(rays), *hp = prism_buffer_device_pointer(res);
            uint64_t seed = 11;
            unsigned n = N;
            void *args[7] = {&v, (void *)in_lo, (void *)in_hi, &seed, &n, &rp, &hp};
            prism_launch l = {.grid = {N / 128}, .block = {128}};
            trace_result *t = malloc(N * sizeof *t);
            if (prism_function_launch(f, &l, args) == PRISM_SUCCESS &&
                prism_buffer_read(res, 0, t, N * sizeof *t) == PRISM_SUCCESS)
                for (unsigned i = 0; i < N; i++)
                    hits += t[i].index != PRISM_TRACE_NONE && t[i].any;
            free(t);
        }
        prism_buffer_release(rays);
        prism_buffer_release(res);
        prism_geometry_destroy(g);
    }
    kt_free(&s, host);
    prism_context_destroy(host);
    prism_module_stats st;
    prism_module_cache_stats(ctx, &st);
    printf("child: %.6f s, compiles %llu, disk hits %llu, rejected %llu, warnings %d, hits %u/%u\n",
           seconds, (unsigned long long)st.compiles, (unsigned long long)st.disk_hits,
           (unsigned long long)st.disk_rejected, log_warnings, hits, (unsigned)N);
    if (log_warnings > 0)
        printf("%s", log_text);
    prism_module_release(m);
    r = prism_context_destroy(ctx);
    free(source);
    return r == PRISM_SUCCESS && hits == N ? 0 : 1;
}

/* A second process loads what the first compiled, and its compile call is
 * at least 20 times faster. */
static void test_second_process_from_disk(void **state)
{
    (void)state;
    char dir[128];
    cache_dir("processes", dir, sizeof dir);
    child_result first, second;
    run_children(1, dir, &first);
    run_children(1, dir, &second);
    assert_int_equal(first.status, 0);
    assert_int_equal(second.status, 0);
    assert_int_equal(first.compiles, 1);
    assert_int_equal(second.compiles, 0);
    assert_int_equal(second.disk_hits, 1);
    printf("# compile call: first process %.4f s (NVRTC), second %.4f s (disk): %.0fx\n",
           first.seconds, second.seconds, first.seconds / second.seconds);
    /* under compute-sanitizer (which slows the driver, not NVRTC) the
     * ratio means nothing: PRISM_TEST_UNTIMED=1 */
    if (getenv("PRISM_TEST_UNTIMED") == NULL)
        assert_true(first.seconds >= 20.0 * second.seconds);
}

/* An entry damaged on disk: a warning naming it, compiled again, written
 * again (a third context loads it). */
static void test_corrupt_entry_recovered(void **state)
{
    (void)state;
    char dir[128], path[512];
    cache_dir("corrupt", dir, sizeof dir);
    prism_context *ctx = logged_context();
    prism_module_release(compile(ctx, kernels_source, dir, PRISM_MODULE_CACHE_DEFAULT));
    assert_int_equal(prism_context_destroy(ctx), PRISM_SUCCESS);
    entry_path(dir, path, sizeof path);
    const char *faults[2] = {"flip", "cut"};
    for (int k = 0; k < 2; k++) {
        FILE *f = fopen(path, "r+b");
        assert_non_null(f);
        fseek(f, 0, SEEK_END);
        const long size = ftell(f);
        if (k == 0) {
            fseek(f, size / 2, SEEK_SET);
            const int c = fgetc(f);
            fseek(f, size / 2, SEEK_SET);
            fputc(c ^ 0x55, f);
            fclose(f);
        } else {
            fclose(f);
            assert_int_equal(truncate(path, size - 100), 0);
        }
        ctx = logged_context();
        prism_module *m = compile(ctx, kernels_source, dir, PRISM_MODULE_CACHE_DEFAULT);
        prism_module_stats s = stats(ctx);
        printf("# %s: %s", faults[k], log_text);
        assert_int_equal(s.disk_rejected, 1);
        assert_int_equal(s.compiles, 1);
        assert_int_equal(s.disk_writes, 1);
        assert_int_equal(log_warnings, 1);
        assert_non_null(strstr(log_text, path));
        assert_non_null(strstr(log_text, "removed, compiling again"));
        prism_function *f2 = NULL;
        assert_int_equal(prism_module_function(m, "trace_rays", &f2), PRISM_SUCCESS);
        prism_module_release(m);
        assert_int_equal(prism_context_destroy(ctx), PRISM_SUCCESS);
        ctx = logged_context();
        prism_module_release(compile(ctx, kernels_source, dir, PRISM_MODULE_CACHE_DEFAULT));
        assert_int_equal(stats(ctx).disk_hits, 1);
        assert_int_equal(stats(ctx).compiles, 0);
        assert_int_equal(prism_context_destroy(ctx), PRISM_SUCCESS);
    }
}

/* Processes compiling into one empty directory at once: every one gets a
 * working module, none reads a damaged entry. */
static void test_concurrent_processes(void **state)
{
    (void)state;
    char dir[128];
    cache_dir("concurrent", dir, sizeof dir);
    enum { N = 4 };
    child_result r[N];
    run_children(N, dir, r);
    unsigned long long compiles = 0;
    for (int i = 0; i < N; i++) {
        assert_int_equal(r[i].status, 0);
        assert_int_equal(r[i].rejected, 0);
        assert_int_equal(r[i].warnings, 0);
        assert_int_equal(r[i].hits, r[i].rays);
        compiles += r[i].compiles;
    }
    assert_true(compiles >= 1);
    assert_int_equal(exec_count_entries(dir, false), 1);
    assert_int_equal(exec_count_entries(dir, true), 0);
}

static void test_compile_error_log(void **state)
{
    (void)state;
    char dir[128];
    cache_dir("broken", dir, sizeof dir);
    prism_context *ctx = logged_context();
    log_text[0] = 0;
    const char broken[] = "#include <prism/device.cuh>\n"
                          "extern \"C\" __global__ void k(float *o)\n"
                          "{\n"
                          "    o[0] = prism_no_such_function(1.0f);\n"
                          "}\n";
    prism_module_options o = {.name = "broken.cu", .cache_dir = dir};
    prism_module *m = (prism_module *)&m;
    assert_int_equal(prism_module_compile(ctx, broken, &o, &m), PRISM_ERROR_COMPILE);
    assert_null(m);
    const char *e = prism_context_last_error(ctx);
    printf("# %s\n", e);
    assert_non_null(strstr(e, "module \"broken.cu\": compilation failed:\n"));
    assert_non_null(strstr(e, "broken.cu(4)"));
    assert_non_null(strstr(e, "prism_no_such_function"));
    assert_int_equal(stats(ctx).compiles, 1);
    assert_int_equal(exec_count_entries(dir, false), 0);
    assert_int_equal(prism_context_destroy(ctx), PRISM_SUCCESS);
}

/* Modules still held at the context's end are named and released. */
static void test_live_module_reported(void **state)
{
    (void)state;
    prism_context *ctx = logged_context();
    compile(ctx, small_source, NULL, PRISM_MODULE_CACHE_NONE);
    prism_module_release(compile(ctx, small_source, NULL, PRISM_MODULE_CACHE_MEMORY));
    assert_int_equal(prism_context_destroy(ctx), PRISM_ERROR_LIVE_ALLOCATIONS);
    assert_non_null(strstr(log_text, "live module \"module_kernels.cuh\" (1 reference)"));
    assert_int_equal(log_warnings, 2); /* the module, then the summary */
}

/* ---- the device view against Prism's own trace and render */

static kt_scene scene;
static prism_context *host;

/* The rays of one launch traced by Prism's own walk on the host (the
 * reference the CUDA backend is checked against); the agreement printed. */
static void compare_with_host(const float *rays, const trace_result *gpu, const char *what)
{
    trace_result *ref = malloc(RAYS * sizeof *ref);
    size_t same = 0, found = 0, worst_at = 0;
    double worst = 0;
#pragma omp parallel for schedule(dynamic, 4096) reduction(+ : same, found)
    for (size_t i = 0; i < RAYS; i++) {
        prism_ray ray = {{rays[6 * i], rays[6 * i + 1], rays[6 * i + 2]},
                         0.0f,
                         {rays[6 * i + 3], rays[6 * i + 4], rays[6 * i + 5]},
                         INFINITY};
        prism_hit h;
        const int hit = prism_bvh_closest_skip(&scene.view, &ray, PRISM_BVH_MISS, &h);
        ref[i].index = h.triangle;
        ref[i].t = h.t;
        same += gpu[i].index == ref[i].index;
        found += hit != 0;
    }
    for (size_t i = 0; i < RAYS; i++) {
        assert_int_equal(gpu[i].any, gpu[i].index != PRISM_TRACE_NONE);
        if (gpu[i].index != ref[i].index || gpu[i].index == PRISM_TRACE_NONE)
            continue;
        const prism_triangle_info info = scene.info[gpu[i].index];
        assert_int_equal(gpu[i].triangle, info.id);
        assert_int_equal(gpu[i].solid, info.solid);
        assert_int_equal(gpu[i].material, info.materials & 0xFFFF);
        const double d = fabs((double)gpu[i].t - ref[i].t) / (1.0 + ref[i].t);
        if (d > worst) {
            worst = d;
            worst_at = i;
        }
    }
    printf("# %s: %zu of %d rays hit the same triangle as Prism's host trace (%.5f%%), "
           "%zu hit anything; worst relative t difference %.2e (ray %zu)\n",
           what, same, RAYS, 100.0 * (double)same / RAYS, found, worst, worst_at);
    assert_int_equal(found, RAYS); /* from inside the closed hall, every ray hits */
    assert_true((double)same >= 0.9999 * RAYS);
    assert_true(worst < 1e-5);
    free(ref);
}

static void trace_policy(prism_function *f, prism_placement_policy policy, bool split, float *rays,
                         trace_result *out)
{
    prism_geometry *g = kt_upload(&scene, cuda, policy, split);
    assert_non_null(g);
    prism_device_view v;
    assert_int_equal(prism_geometry_device_view(g, &v), PRISM_SUCCESS);
    if (split)
        assert_true(v.geometry.nodes_split > 0 && v.geometry.nodes_split < v.geometry.node_count);
    else
        assert_int_equal(v.geometry.nodes_split, v.geometry.node_count);
    assert_true(v.optics.material_count == 3 && v.optics.materials != NULL);
    prism_buffer *rb = NULL, *hb = NULL;
    assert_int_equal(prism_buffer_create_device(cuda, (size_t)RAYS * 24, "rays", &rb),
                     PRISM_SUCCESS);
    assert_int_equal(prism_buffer_create_device(cuda, (size_t)RAYS * sizeof(trace_result), "hits",
                                                &hb),
                     PRISM_SUCCESS);
    void *rp = prism_buffer_device_pointer(rb), *hp = prism_buffer_device_pointer(hb);
    const float lo[3] = {-9.9f, -9.9f, -9.9f}, hi[3] = {9.9f, 9.9f, 9.9f};
    uint64_t seed = 2024;
    unsigned n = RAYS;
    if (f != NULL) {
        void *args[7] = {&v, (void *)lo, (void *)hi, &seed, &n, &rp, &hp};
        prism_launch l = {.grid = {RAYS / 128}, .block = {128}};
        assert_int_equal(prism_function_launch(f, &l, args), PRISM_SUCCESS);
    } else {
        assert_int_equal(module_test_trace_nvcc(&v, lo, hi, seed, n, rp, hp), 0);
    }
    assert_int_equal(prism_buffer_read(rb, 0, rays, (size_t)RAYS * 24), PRISM_SUCCESS);
    assert_int_equal(prism_buffer_read(hb, 0, out, (size_t)RAYS * sizeof *out), PRISM_SUCCESS);
    prism_buffer_release(rb);
    prism_buffer_release(hb);
    prism_geometry_destroy(g);
}

/* One kernel, three placements (device memory, mapped memory, nodes
 * split): the same hits, bit for bit; against Prism's host trace on 1M
 * rays; and the nvcc build of the same kernel. */
static void test_device_view_every_placement(void **state)
{
    (void)state;
    prism_module *m = compile(cuda, kernels_source, NULL, PRISM_MODULE_CACHE_MEMORY);
    prism_function *f = NULL;
    assert_int_equal(prism_module_function(m, "trace_rays", &f), PRISM_SUCCESS);
    float *rays = malloc((size_t)RAYS * 24), *rays2 = malloc((size_t)RAYS * 24);
    trace_result *a = malloc(RAYS * sizeof *a), *b = malloc(RAYS * sizeof *b);
    trace_policy(f, PRISM_PLACEMENT_DEVICE, false, rays, a);
    compare_with_host(rays, a, "runtime-compiled, device memory");
    const struct {
        prism_placement_policy policy;
        bool split;
        const char *name;
    } others[2] = {{PRISM_PLACEMENT_MAPPED, false, "mapped"},
                   {PRISM_PLACEMENT_CHROMA, true, "split"}};
    for (int i = 0; i < 2; i++) {
        trace_policy(f, others[i].policy, others[i].split, rays2, b);
        assert_memory_equal(rays2, rays, (size_t)RAYS * 24);
        assert_memory_equal(b, a, RAYS * sizeof *a);
        printf("# runtime-compiled, %s: identical to device memory\n", others[i].name);
    }
    trace_policy(NULL, PRISM_PLACEMENT_DEVICE, false, rays2, b);
    size_t same_rays = 0, same_hits = 0;
    for (size_t i = 0; i < RAYS; i++) {
        same_rays += memcmp(rays2 + 6 * i, rays + 6 * i, 24) == 0;
        same_hits += b[i].index == a[i].index;
    }
    printf(
        "# nvcc-built kernel: %zu of %d rays identical, %zu same triangles as runtime-compiled\n",
        same_rays, RAYS, same_hits);
    compare_with_host(rays2, b, "nvcc-built, device memory");
    free(rays);
    free(rays2);
    free(a);
    free(b);
    prism_module_release(m);
}

/* The renderer's headlight kernel against prism_render's shaded mode. */
static void test_render_matches_prism(void **state)
{
    (void)state;
    prism_geometry *g = kt_upload(&scene, cuda, PRISM_PLACEMENT_DEVICE, false);
    assert_non_null(g);
    const prism_camera cams[2] = {
        {.eye = {7, 5, 9}, .look_at = {0, 0, 0}, .vfov_degrees = 50},
        {.eye = {0.5f, 0.3f, 3.5f}, .look_at = {0, 0, 0}, .vfov_degrees = 70}};
    prism_module *m = compile(cuda, kernels_source, NULL, PRISM_MODULE_CACHE_MEMORY);
    prism_function *f = NULL;
    assert_int_equal(prism_module_function(m, "headlight", &f), PRISM_SUCCESS);
    prism_device_view v;
    assert_int_equal(prism_geometry_device_view(g, &v), PRISM_SUCCESS);
    prism_buffer *img = NULL;
    assert_int_equal(prism_buffer_create_device(cuda, W * H * 4, "image", &img), PRISM_SUCCESS);
    uint32_t *mine = malloc(W * H * 4), *prisms = malloc(W * H * 4);
    for (int c = 0; c < 2; c++) {
        prism_render_desc d = {.width = W, .height = H, .background = {20, 20, 40, 255}};
        prism_target t = {.kind = PRISM_TARGET_HOST, .host = prisms};
        assert_int_equal(prism_render(cuda, g, &cams[c], &d, &t, NULL), PRISM_SUCCESS);
        prism_camera_basis basis;
        assert_int_equal(prism__camera_basis(cuda, &cams[c], W, H, &basis), PRISM_SUCCESS);
        unsigned w = W, h = H, background = 20u | 20u << 8 | 40u << 16 | 255u << 24;
        float ambient = 0.2f;
        void *p = prism_buffer_device_pointer(img);
        void *args[7] = {&v, &basis, &w, &h, &ambient, &background, &p};
        prism_launch l = {.grid = {W / 16, H / 16}, .block = {16, 16}};
        assert_int_equal(prism_function_launch(f, &l, args), PRISM_SUCCESS);
        assert_int_equal(prism_buffer_read(img, 0, mine, W * H * 4), PRISM_SUCCESS);
        size_t off = 0, max = 0;
        for (size_t i = 0; i < (size_t)W * H; i++) {
            size_t worst = 0;
            for (int k = 0; k < 4; k++) {
                const int dd =
                    abs((int)((mine[i] >> (8 * k)) & 0xFF) - (int)((prisms[i] >> (8 * k)) & 0xFF));
                worst = (size_t)dd > worst ? (size_t)dd : worst;
            }
            off += worst > 1;
            max = worst > max ? worst : max;
        }
        printf("# headlight kernel vs prism_render, camera %d: %zu of %d pixels differ by more "
               "than one level (max %zu)\n",
               c, off, W * H, max);
        assert_true(off * 1000 <= (size_t)W * H);
    }
    free(mine);
    free(prisms);
    prism_buffer_release(img);
    prism_module_release(m);
    prism_geometry_destroy(g);
}

static int setup(void **state)
{
    (void)state;
    host = kt_host_context();
    kt_detector_scene(&scene);
    return host != NULL && kt_build(&scene, host) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    kt_free(&scene, host);
    prism_context_destroy(host);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", cache_root);
    if (system(cmd) != 0)
        return -1;
    free(kernels_source);
    return prism_context_destroy(cuda) == PRISM_SUCCESS ? 0 : -1;
}

int main(int argc, char **argv)
{
    if (prism_cuda_device_count() == 0) {
        printf("no CUDA device: skipped\n");
        return 77;
    }
    if (argc == 3 && strcmp(argv[1], "--child") == 0)
        return child_main(argv[2]);
    cuda = kt_cuda_context();
    kernels_source = exec_read_file(KERNELS_FILE, NULL);
    snprintf(cache_root, sizeof cache_root, "/tmp/prism-module-gpu-XXXXXX");
    if (cuda == NULL || kernels_source == NULL || mkdtemp(cache_root) == NULL) {
        printf("no CUDA context, kernels or temporary directory\n");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compile_and_launch),
        cmocka_unit_test(test_memo),
        cmocka_unit_test(test_fresh_context_hits_disk),
        cmocka_unit_test(test_second_process_from_disk),
        cmocka_unit_test(test_corrupt_entry_recovered),
        cmocka_unit_test(test_concurrent_processes),
        cmocka_unit_test(test_compile_error_log),
        cmocka_unit_test(test_live_module_reported),
        cmocka_unit_test(test_device_view_every_placement),
        cmocka_unit_test(test_render_matches_prism),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
