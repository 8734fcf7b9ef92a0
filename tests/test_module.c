/* Runtime compilation and the device view where CI runs them, without a
 * GPU: the host backend's clear refusal, argument checks, the device view
 * of a host geometry, the headers embedded for NVRTC (complete, the files
 * themselves), and, where the CUDA build finds NVRTC, compiling against
 * prism/device.cuh with no device at all (NVRTC needs none). */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "exec_util.h"
#include "engine/upload/geometry_internal.h"
#include "prism/device/traverse.h"
#include "kernels_test_scene.h"
#include "engine/module/headers.h"
#include "engine/module/internal.h"
#include "engine/upload/optics_tables.h"
#include "prism/device_view.h"
#include "prism/module.h"

static void test_host_backend_unsupported(void **state)
{
    (void)state;
    prism_context *ctx = kt_host_context();
    prism_module *m = (prism_module *)&m;
    assert_int_equal(prism_module_compile(ctx, "extern \"C\" __global__ void k() {}", NULL, &m),
                     PRISM_ERROR_UNSUPPORTED);
    assert_null(m);
    assert_non_null(strstr(prism_context_last_error(ctx), "CUDA backend"));
    assert_non_null(strstr(prism_context_last_error(ctx), "host"));
    prism_module_stats st;
    assert_int_equal(prism_module_cache_stats(ctx, &st), PRISM_SUCCESS);
    assert_int_equal(st.compiles + st.memo_hits + st.disk_hits, 0);
    prism_module_cache_clear(ctx);
    prism_module_cache_clear(NULL);
    prism_module_release(NULL);
    assert_int_equal(prism_context_destroy(ctx), PRISM_SUCCESS);
}

static void test_arguments_checked(void **state)
{
    (void)state;
    prism_context *ctx = kt_host_context();
    prism_module *m = NULL;
    assert_int_equal(prism_module_compile(NULL, "x", NULL, &m), PRISM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(prism_module_compile(ctx, NULL, NULL, &m), PRISM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(prism_module_compile(ctx, "x", NULL, NULL), PRISM_ERROR_INVALID_ARGUMENT);
    /* options are checked before the backend, so bad ones fail everywhere */
    const char *arch[1] = {"-arch=sm_80"};
    prism_module_options o = {.name = "bad.cu",
                              .compiler_options = arch,
                              .compiler_option_count = 1};
    assert_int_equal(prism_module_compile(ctx, "x", &o, &m), PRISM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(prism_context_last_error(ctx), "architecture"));
    assert_non_null(strstr(prism_context_last_error(ctx), "bad.cu"));
    const char *gpu_arch[1] = {"--gpu-architecture=compute_80"};
    o.compiler_options = gpu_arch;
    assert_int_equal(prism_module_compile(ctx, "x", &o, &m), PRISM_ERROR_INVALID_ARGUMENT);
    const char *null_option[2] = {"-DX", NULL};
    o.compiler_options = null_option;
    o.compiler_option_count = 2;
    assert_int_equal(prism_module_compile(ctx, "x", &o, &m), PRISM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(prism_context_last_error(ctx), "option 1 is NULL"));
    o.compiler_options = NULL;
    assert_int_equal(prism_module_compile(ctx, "x", &o, &m), PRISM_ERROR_INVALID_ARGUMENT);
    o.compiler_option_count = 0;
    o.cache = (prism_module_cache)7;
    assert_int_equal(prism_module_compile(ctx, "x", &o, &m), PRISM_ERROR_INVALID_ARGUMENT);
    prism_function *f = (prism_function *)&f;
    assert_int_equal(prism_module_function(NULL, "k", &f), PRISM_ERROR_INVALID_ARGUMENT);
    assert_null(f);
    assert_int_equal(prism_function_launch(NULL, NULL, NULL), PRISM_ERROR_INVALID_ARGUMENT);
    prism_module_stats st;
    assert_int_equal(prism_module_cache_stats(NULL, &st), PRISM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(prism_module_cache_stats(ctx, NULL), PRISM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(prism_context_destroy(ctx), PRISM_SUCCESS);
}

/* On the host backend the view is the host kernels' own, optics included;
 * without optics it reads as vacuum. */
static void test_device_view_host(void **state)
{
    (void)state;
    prism_context *ctx = kt_host_context();
    kt_scene s = {0};
    uint32_t water = kt_material(&s, "water", 1.33f, 10, 20);
    const float lo[3] = {-1, -1, -1}, hi[3] = {1, 1, 1};
    kt_box(&s, lo, hi, 0, water, PRISM_NONE, PRISM_NONE);
    assert_int_equal(kt_build(&s, ctx), 0);
    prism_geometry *g = kt_upload(&s, ctx, PRISM_PLACEMENT_AUTO, false);
    assert_non_null(g);
    prism_device_view v;
    memset(&v, 0xAB, sizeof v);
    assert_int_equal(prism_geometry_device_view(g, &v), PRISM_SUCCESS);
    assert_memory_equal(&v.geometry, prism__geometry_view(g), sizeof v.geometry);
    assert_memory_equal(&v.optics, prism__optics_view(prism__geometry_optics(g)), sizeof v.optics);
    assert_int_equal(v.geometry.triangle_count, 12);
    assert_int_equal(v.optics.material_count, 1);
    /* the view traces: a ray down the x axis meets the box's face at 1 */
    prism_trace_hit hit;
    assert_true(prism_trace_closest(&v.geometry, pv3_make(-3, 0.1f, 0.2f), pv3_make(1, 0, 0), 0,
                                    100, PRISM_TRACE_NONE, &hit));
    assert_float_equal(hit.t, 2.0f, 1e-6f);
    assert_int_equal(v.geometry.triangle_info[hit.index].materials & 0xFFFF, water);

    prism_geometry_desc d = {.skip_optics = true};
    prism_geometry *bare = NULL;
    assert_int_equal(prism_geometry_upload(ctx, &s.scene, s.bvh, &d, &bare), PRISM_SUCCESS);
    assert_int_equal(prism_geometry_device_view(bare, &v), PRISM_SUCCESS);
    const prism_optics_view zero = {0};
    assert_memory_equal(&v.optics, &zero, sizeof zero);
    assert_float_equal(prism_optics_material(&v.optics, 0, 400).rindex, 1.0f, 0);

    assert_int_equal(prism_geometry_device_view(NULL, &v), PRISM_ERROR_INVALID_ARGUMENT);
    assert_memory_equal(&v, &(prism_device_view){0}, sizeof v);
    assert_int_equal(prism_geometry_device_view(g, NULL), PRISM_ERROR_INVALID_ARGUMENT);
    prism_geometry_destroy(bare);
    prism_geometry_destroy(g);
    kt_free(&s, ctx);
    assert_int_equal(prism_context_destroy(ctx), PRISM_SUCCESS);
}

static const prism__embedded_header *embedded(const char *name)
{
    for (size_t i = 0; i < prism__device_header_count; i++)
        if (strcmp(prism__device_headers[i].name, name) == 0)
            return &prism__device_headers[i];
    return NULL;
}

/* Every #include of every embedded header names an embedded header (the
 * host-only SSE headers aside), so NVRTC finds them all; the public ones
 * are the files of the source tree, byte for byte. */
static void test_embedded_headers_complete(void **state)
{
    (void)state;
    assert_true(prism__device_header_count > 20);
    assert_int_equal(strlen(prism__device_headers_digest), 64);
    const char *needed[] = {"prism/device.cuh",
                            "prism/device_view.h",
                            "prism/device/traverse.h",
                            "prism/device/bvh_traverse.h",
                            "prism/device/philox.h",
                            "prism/device/optics_view.h",
                            "prism/module.h",
                            "stdint.h",
                            "math.h",
                            "traverse.h",
                            "bvh.h"};
    for (size_t i = 0; i < sizeof needed / sizeof needed[0]; i++)
        assert_non_null(embedded(needed[i]));
    assert_null(embedded("prism/device/render_tuning.h"));
    size_t includes = 0;
    for (size_t i = 0; i < prism__device_header_count; i++) {
        const prism__embedded_header *h = &prism__device_headers[i];
        assert_int_equal(strlen(h->text), h->size);
        for (const char *p = strstr(h->text, "#include"); p != NULL;
             p = strstr(p + 1, "#include")) {
            const char *q = p + 8;
            while (*q == ' ')
                q++;
            char close = *q == '"' ? '"' : '>';
            const char *end = strchr(q + 1, close);
            assert_non_null(end);
            char name[128];
            snprintf(name, sizeof name, "%.*s", (int)(end - q - 1), q + 1);
            if (strcmp(name, "xmmintrin.h") == 0 || strcmp(name, "emmintrin.h") == 0)
                continue;
            if (embedded(name) == NULL)
                fail_msg("%s includes \"%s\", which is not embedded", h->name, name);
            includes++;
        }
    }
    assert_true(includes > 30);
    const char *files[][2] = {{"prism/device.cuh", "/../include/prism/device.cuh"},
                              {"prism/device_view.h", "/../include/prism/device_view.h"},
                              {"prism/device/traverse.h", "/../include/prism/device/traverse.h"},
                              {"prism/device/geometry_view.h",
                               "/../include/prism/device/geometry_view.h"}};
    for (int i = 0; i < 4; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s%s", PRISM_ASSETS, files[i][1]);
        size_t n = 0;
        char *t = exec_read_file(path, &n);
        assert_non_null(t);
        assert_int_equal(embedded(files[i][0])->size, n);
        assert_memory_equal(embedded(files[i][0])->text, t, n);
        free(t);
    }
}

static const char good_source[] =
    "#include <prism/device.cuh>\n"
    "extern \"C\" __global__ void depth(prism_device_view view, float *out, unsigned n)\n"
    "{\n"
    "    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i >= n) return;\n"
    "    prism_device_hit hit;\n"
    "    prism_rng r = prism_rng_make(7, i, 0, PRISM_RNG_USER);\n"
    "    float3 d = make_float3(prism_rng_uniform(&r) - 0.5f, 1.0f, 0.0f);\n"
    "    bool any = prism_trace_any(&view, make_float3(0, 0, 0), d, 0.0f, 1e30f);\n"
    "    out[i] = prism_trace_closest(&view, make_float3(0, 0, 0), d, 0.0f, 1e30f,\n"
    "                                 PRISM_TRACE_NONE, &hit) && any ? hit.distance : -1.0f;\n"
    "    float3 nrm = prism_device_normal(&view, hit.index);\n"
    "    out[i] += 0.0f * nrm.x + prism_optics_material(&view.optics, hit.material_inner, 400.0f).rindex;\n"
    "}\n";

/* NVRTC compiles against the embedded headers with no device: PTX for
 * compute_75, a syntax error's log naming the line, a bad option. Skipped
 * where no NVRTC loads (a build without CUDA has none). */
static void test_nvrtc_without_device(void **state)
{
    (void)state;
    prism_context *ctx = kt_host_context();
    prism__nvrtc *n = NULL;
    if (prism__nvrtc_load(ctx, &n) != PRISM_SUCCESS) {
        printf("# no NVRTC here: %s\n", prism_context_last_error(ctx));
        prism_context_destroy(ctx);
        skip();
    }
    int major = 0, minor = 0;
    prism__nvrtc_version(n, &major, &minor);
    printf("# NVRTC %d.%d: %s\n", major, minor, prism__nvrtc_identity(n));
    assert_true(major >= 12);
    /* the identity the cache keys on, with and without loading NVRTC */
    char id[8192];
    if (prism__nvrtc_identify(id, sizeof id))
        assert_string_equal(id, prism__nvrtc_identity(n));
    char *real = strdup(prism__nvrtc_identity(n));
    *strchr(real, ' ') = 0;
    setenv("PRISM_NVRTC_LIBRARY", real, 1);
    assert_true(prism__nvrtc_identify(id, sizeof id));
    assert_string_equal(id, prism__nvrtc_identity(n));
    setenv("PRISM_NVRTC_LIBRARY", "/nonexistent/libnvrtc.so", 1);
    assert_false(prism__nvrtc_identify(id, sizeof id));
    prism__nvrtc *none = (prism__nvrtc *)&none;
    assert_int_equal(prism__nvrtc_load(ctx, &none), PRISM_ERROR_UNSUPPORTED);
    assert_null(none);
    assert_non_null(strstr(prism_context_last_error(ctx), "/nonexistent/libnvrtc.so"));
    unsetenv("PRISM_NVRTC_LIBRARY");
    free(real);
    char arch[64];
    bool cubin = false;
    assert_int_equal(prism__nvrtc_target(ctx, n, 9, 0, arch, sizeof arch, &cubin), PRISM_SUCCESS);
    assert_string_equal(arch, "--gpu-architecture=sm_90");
    assert_true(cubin);
    assert_int_equal(prism__nvrtc_target(ctx, n, 99, 9, arch, sizeof arch, &cubin), PRISM_SUCCESS);
    assert_memory_equal(arch, "--gpu-architecture=compute_", 27);
    assert_false(cubin);
    assert_int_equal(prism__nvrtc_target(ctx, n, 1, 0, arch, sizeof arch, &cubin),
                     PRISM_ERROR_UNSUPPORTED);

    void *ptx = NULL;
    size_t size = 0;
    char *log = NULL;
    const char *fast[1] = {"--use_fast_math"};
    prism_result r = prism__nvrtc_compile(ctx, n, good_source, "depth.cu",
                                          "--gpu-architecture=compute_75", false, fast, 1, &ptx,
                                          &size, &log);
    if (r != PRISM_SUCCESS)
        fail_msg("%s\n%s", prism_context_last_error(ctx), log != NULL ? log : "");
    assert_int_equal(strlen(ptx) + 1, size);
    assert_non_null(strstr(ptx, ".entry depth"));
    free(ptx);
    free(log);

    const char broken[] = "#include <prism/device.cuh>\n"
                          "extern \"C\" __global__ void k(float *o)\n"
                          "{\n"
                          "    o[0] = 1.0f\n"
                          "}\n";
    r = prism__nvrtc_compile(ctx, n, broken, "broken.cu", "--gpu-architecture=compute_75", false,
                             NULL, 0, &ptx, &size, &log);
    assert_int_equal(r, PRISM_ERROR_COMPILE);
    assert_null(ptx);
    printf("# the log:\n%s", log);
    assert_non_null(strstr(log, "broken.cu(5)"));
    assert_non_null(strstr(log, "error"));
    free(log);

    /* the GPU suite's kernels: a cubin, without a word from NVRTC */
    size_t text_size = 0;
    char *kernels = exec_read_file(PRISM_TEST_DATA "/../module_kernels.cuh", &text_size);
    assert_non_null(kernels);
    r = prism__nvrtc_compile(ctx, n, kernels, "module_kernels.cuh", "--gpu-architecture=sm_90",
                             true, NULL, 0, &ptx, &size, &log);
    if (r != PRISM_SUCCESS)
        fail_msg("%s\n%s", prism_context_last_error(ctx), log != NULL ? log : "");
    assert_string_equal(log, "");
    assert_memory_equal(ptx,
                        "\x7f"
                        "ELF",
                        4);
    free(ptx);
    free(log);
    free(kernels);
    /* and the example's */
    kernels = exec_read_file(PRISM_ASSETS "/../examples/custom_kernel/ao_kernel.cuh", &text_size);
    assert_non_null(kernels);
    r = prism__nvrtc_compile(ctx, n, kernels, "ao_kernel.cuh", "--gpu-architecture=sm_90", true,
                             NULL, 0, &ptx, &size, &log);
    if (r != PRISM_SUCCESS)
        fail_msg("%s\n%s", prism_context_last_error(ctx), log != NULL ? log : "");
    assert_string_equal(log, "");
    free(ptx);
    free(log);
    free(kernels);

    const char *bad[1] = {"--no-such-option"};
    r = prism__nvrtc_compile(ctx, n, good_source, "depth.cu", "--gpu-architecture=compute_75",
                             false, bad, 1, &ptx, &size, &log);
    assert_int_equal(r, PRISM_ERROR_COMPILE);
    assert_true(strlen(log) > 0);
    free(log);
    prism__nvrtc_unload(n);
    assert_int_equal(prism_context_destroy(ctx), PRISM_SUCCESS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_host_backend_unsupported),
        cmocka_unit_test(test_arguments_checked),
        cmocka_unit_test(test_device_view_host),
        cmocka_unit_test(test_embedded_headers_complete),
        cmocka_unit_test(test_nvrtc_without_device),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
