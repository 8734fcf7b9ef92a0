#define _POSIX_C_SOURCE 200809L
/* Context creation on the host backend: defaults, bad descriptors, the
 * report, two contexts at once, destroy(NULL). Runs everywhere. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "prism/context.h"

typedef struct log_capture {
    char text[4096];
    int lines;
} log_capture;

static void capture(void *user, prism_log_level level, const char *message)
{
    log_capture *c = user;
    (void)level;
    size_t n = strlen(c->text);
    snprintf(c->text + n, sizeof c->text - n, "%s\n", message);
    c->lines++;
}

static void test_destroy_null(void **state)
{
    (void)state;
    assert_int_equal(prism_context_destroy(NULL), PRISM_SUCCESS);
}

static void test_null_out(void **state)
{
    (void)state;
    assert_int_equal(prism_context_create(NULL, NULL), PRISM_ERROR_INVALID_ARGUMENT);
}

static void test_host_backend(void **state)
{
    (void)state;
    prism_context *ctx = NULL;
    prism_context_desc desc = {.backend = PRISM_BACKEND_HOST, .host_threads = 3};
    assert_int_equal(prism_context_create(&desc, &ctx), PRISM_SUCCESS);
    assert_non_null(ctx);
    assert_int_equal(prism_context_backend(ctx), PRISM_BACKEND_HOST);
    const prism_device_info *d = prism_context_device(ctx);
    assert_int_equal(d->backend, PRISM_BACKEND_HOST);
    assert_int_equal(d->index, -1);
    assert_int_equal(d->host_threads, 3);
    assert_true(strlen(d->name) > 0);
    assert_true(d->total_memory > 0);
    assert_false(prism_context_gl_shared(ctx));
    assert_string_equal(prism_context_last_error(ctx), "");
    assert_int_equal(prism_context_destroy(ctx), PRISM_SUCCESS);
}

/* All-zero (and NULL) descriptors mean AUTO: CUDA where a device is usable,
 * otherwise the host with one line saying why. */
static void test_defaults(void **state)
{
    (void)state;
    log_capture log = {{0}, 0};
    prism_context_desc desc = {.log = capture, .log_user = &log};
    prism_context *ctx = NULL;
    assert_int_equal(prism_context_create(&desc, &ctx), PRISM_SUCCESS);
    if (prism_cuda_device_count() == 0) {
        assert_int_equal(prism_context_backend(ctx), PRISM_BACKEND_HOST);
        assert_int_equal(log.lines, 1);
        assert_non_null(strstr(log.text, "using the host backend: "));
    } else {
        assert_int_equal(prism_context_backend(ctx), PRISM_BACKEND_CUDA);
    }
    prism_context_destroy(ctx);

    ctx = NULL;
    assert_int_equal(prism_context_create(NULL, &ctx), PRISM_SUCCESS);
    assert_non_null(ctx);
    prism_context_destroy(ctx);
}

static void test_cuda_without_device(void **state)
{
    (void)state;
    if (prism_cuda_device_count() > 0)
        skip();
    log_capture log = {{0}, 0};
    prism_context_desc desc = {.backend = PRISM_BACKEND_CUDA, .log = capture, .log_user = &log};
    prism_context *ctx = (prism_context *)&log; /* must be reset to NULL */
    prism_result r = prism_context_create(&desc, &ctx);
    assert_true(r == PRISM_ERROR_NO_DRIVER || r == PRISM_ERROR_NO_DEVICE ||
                r == PRISM_ERROR_UNSUPPORTED);
    assert_null(ctx);
    assert_non_null(strstr(log.text, "backend cuda: "));
}

static void test_invalid_enums(void **state)
{
    (void)state;
    log_capture log = {{0}, 0};
    prism_context_desc desc = {.backend = (prism_backend)9, .log = capture, .log_user = &log};
    prism_context *ctx = NULL;
    assert_int_equal(prism_context_create(&desc, &ctx), PRISM_ERROR_INVALID_ARGUMENT);
    assert_null(ctx);
    assert_non_null(strstr(log.text, "outside its enum"));
    desc = (prism_context_desc){.backend = PRISM_BACKEND_HOST, .host_threads = -1};
    assert_int_equal(prism_context_create(&desc, &ctx), PRISM_ERROR_INVALID_ARGUMENT);
}

static void test_two_contexts(void **state)
{
    (void)state;
    prism_context_desc desc = {.backend = PRISM_BACKEND_HOST, .host_threads = 1};
    prism_context *a = NULL, *b = NULL;
    assert_int_equal(prism_context_create(&desc, &a), PRISM_SUCCESS);
    desc.host_threads = 2;
    assert_int_equal(prism_context_create(&desc, &b), PRISM_SUCCESS);
    assert_ptr_not_equal(a, b);
    assert_int_equal(prism_context_device(a)->host_threads, 1);
    assert_int_equal(prism_context_device(b)->host_threads, 2);
    assert_int_equal(prism_context_destroy(a), PRISM_SUCCESS);
    assert_int_equal(prism_context_device(b)->host_threads, 2);
    assert_int_equal(prism_context_destroy(b), PRISM_SUCCESS);
}

/* AUTO with a device choice that names no device: the host backend, and a
 * warning naming the source of the bad value. */
static void test_auto_bad_env(void **state)
{
    (void)state;
    setenv("PRISM_DEVICE", "seven", 1);
    log_capture log = {{0}, 0};
    prism_context_desc desc = {.log = capture, .log_user = &log};
    prism_context *ctx = NULL;
    assert_int_equal(prism_context_create(&desc, &ctx), PRISM_SUCCESS);
    assert_int_equal(prism_context_backend(ctx), PRISM_BACKEND_HOST);
    if (prism_cuda_device_count() > 0)
        assert_non_null(strstr(log.text, "PRISM_DEVICE=seven: not a device index"));
    prism_context_destroy(ctx);
    if (prism_cuda_device_count() > 0) {
        desc.backend = PRISM_BACKEND_CUDA;
        assert_int_equal(prism_context_create(&desc, &ctx), PRISM_ERROR_INVALID_DEVICE);
        assert_null(ctx);
    }
    unsetenv("PRISM_DEVICE");
}

static void test_report(void **state)
{
    (void)state;
    size_t n = prism_device_report(NULL, 0);
    assert_true(n > 0);
    char *text = malloc(n + 1);
    assert_int_equal(prism_device_report(text, n + 1), n);
    assert_int_equal(strlen(text), n);
    char head[64];
    snprintf(head, sizeof head, "Prism %s initialized: ", prism_version());
    assert_memory_equal(text, head, strlen(head));
    assert_non_null(strstr(text, "\n  \"cpu\"   : host backend, "));
    assert_non_null(strstr(text, " threads ("));
    int cuda = prism_cuda_device_count();
    for (int i = 0; i < cuda; i++) {
        char id[32];
        snprintf(id, sizeof id, "\"cuda:%d\": \"", i);
        assert_non_null(strstr(text, id));
    }
    if (cuda == 0)
        assert_non_null(strstr(text, "built without CUDA") ? text
                                                           : strstr(text, "(no CUDA devices: "));
    /* Truncation: NUL-terminated, same length reported. */
    char small[16];
    assert_int_equal(prism_device_report(small, sizeof small), n);
    assert_int_equal(strlen(small), sizeof small - 1);
    free(text);
}

static void test_result_strings(void **state)
{
    (void)state;
    assert_string_equal(prism_result_string(PRISM_SUCCESS), "PRISM_SUCCESS");
    assert_string_equal(prism_result_string(PRISM_ERROR_GL_NOT_ON_CUDA_DEVICE),
                        "PRISM_ERROR_GL_NOT_ON_CUDA_DEVICE");
    for (int r = 0; r < PRISM_RESULT_COUNT_; r++)
        assert_memory_equal(prism_result_string((prism_result)r), "PRISM_", 6);
    assert_string_equal(prism_result_string((prism_result)999), "PRISM_ERROR_UNKNOWN");
    assert_string_equal(prism_backend_name(PRISM_BACKEND_HOST), "host");
    /* the backends this build has: CUDA exactly when the device list is not
     * the no-CUDA build's UNSUPPORTED */
    assert_true(prism_backend_built(PRISM_BACKEND_HOST));
    assert_true(prism_backend_built(PRISM_BACKEND_AUTO));
    assert_false(prism_backend_built((prism_backend)99));
    int idx = 0, n = 0;
    const bool cuda = prism_device_list(NULL, &idx, 1, &n, NULL, 0) != PRISM_ERROR_UNSUPPORTED;
    assert_int_equal(prism_backend_built(PRISM_BACKEND_CUDA), cuda);
}

/* The warm-up never fails a program: host descriptors, NULL and a machine
 * without CUDA all return success, and contexts are made as before. */
static void test_prewarm_is_harmless(void **state)
{
    (void)state;
    prism_context_desc host = {.backend = PRISM_BACKEND_HOST};
    assert_int_equal(prism_context_prewarm(&host), PRISM_SUCCESS);
    prism_context_desc bad = {.device = "not-a-device"};
    assert_int_equal(prism_context_prewarm(&bad), PRISM_SUCCESS); /* the context says why */
    if (prism_cuda_device_count() == 0)
        assert_int_equal(prism_context_prewarm(NULL), PRISM_SUCCESS);
    prism_context *ctx = NULL;
    assert_int_equal(prism_context_create(&host, &ctx), PRISM_SUCCESS);
    assert_int_equal(prism_context_destroy(ctx), PRISM_SUCCESS);
}

static void test_host_query(void **state)
{
    (void)state;
    prism_device_info info;
    assert_int_equal(prism_device_query(-1, &info), PRISM_SUCCESS);
    assert_int_equal(info.backend, PRISM_BACKEND_HOST);
    assert_true(info.host_threads >= 1);
    assert_int_equal(prism_device_query(prism_cuda_device_count(), &info),
                     PRISM_ERROR_INVALID_DEVICE);
    assert_int_equal(prism_device_query(0, NULL), PRISM_ERROR_INVALID_ARGUMENT);
}

int main(void)
{
    unsetenv("PRISM_DEVICE");
    unsetenv("CUDA_DEVICE");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_destroy_null),
        cmocka_unit_test(test_null_out),
        cmocka_unit_test(test_host_backend),
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_cuda_without_device),
        cmocka_unit_test(test_invalid_enums),
        cmocka_unit_test(test_two_contexts),
        cmocka_unit_test(test_auto_bad_env),
        cmocka_unit_test(test_report),
        cmocka_unit_test(test_result_strings),
        cmocka_unit_test(test_host_query),
        cmocka_unit_test(test_prewarm_is_harmless),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
