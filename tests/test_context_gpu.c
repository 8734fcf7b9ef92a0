#define _POSIX_C_SOURCE 200809L
/* Contexts on a real CUDA device (label gpu; skipped without one, built
 * only with CUDA): device 0 with mapped memory, device info against
 * cudaGetDeviceProperties, flags. The CUDA runtime's own answers come from
 * context_gpu_cuda.cu. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "context_gpu_cuda.h"
#include "prism/context.h"
#include "prism/memory.h"

static void test_device0_mapped(void **state)
{
    (void)state;
    prism_context_desc desc = {.backend = PRISM_BACKEND_CUDA,
                               .device = "0",
                               .cache = PRISM_CACHE_PREFER_L1,
                               .schedule = PRISM_SCHEDULE_BLOCKING_SYNC};
    prism_context *ctx = NULL;
    assert_int_equal(prism_context_create(&desc, &ctx), PRISM_SUCCESS);
    assert_int_equal(prism_context_backend(ctx), PRISM_BACKEND_CUDA);
    assert_int_equal(prism_context_device(ctx)->index, 0);
    unsigned flags = 0;
    bool map_host = false, device_pointer = false;
    assert_int_equal(ctx_test_device_flags(&flags, &map_host), 0);
    assert_true(map_host);
    /* Mapped memory really works: a mapped allocation has a device pointer. */
    assert_int_equal(ctx_test_mapped_alloc(&device_pointer), 0);
    assert_true(device_pointer);
    printf("context on cuda:0 \"%s\", flags 0x%x\n", prism_context_device(ctx)->name, flags);
    assert_int_equal(prism_context_destroy(ctx), PRISM_SUCCESS);
}

static void test_info_matches_properties(void **state)
{
    (void)state;
    int n = prism_cuda_device_count();
    for (int i = 0; i < n; i++) {
        prism_device_info info;
        ctx_test_properties p;
        assert_int_equal(prism_device_query(i, &info), PRISM_SUCCESS);
        assert_int_equal(ctx_test_properties_of(i, &p), 0);
        assert_string_equal(info.name, p.name);
        assert_int_equal(info.cc_major, p.major);
        assert_int_equal(info.cc_minor, p.minor);
        assert_true(info.total_memory == p.total_global_mem);
        assert_int_equal(info.multiprocessors, p.multiprocessor_count);
        assert_int_equal(info.max_threads_per_block, p.max_threads_per_block);
        assert_int_equal(info.max_threads_per_multiprocessor, p.max_threads_per_multiprocessor);
        assert_int_equal(info.warp_size, p.warp_size);
        assert_int_equal(info.max_blocks_per_multiprocessor, p.max_blocks_per_multiprocessor);
        assert_int_equal(info.registers_per_block, p.regs_per_block);
        assert_int_equal(info.registers_per_multiprocessor, p.regs_per_multiprocessor);
        assert_true(info.shared_memory_per_multiprocessor == p.shared_mem_per_multiprocessor);
        assert_true(info.reserved_shared_memory_per_block == p.reserved_shared_mem_per_block);
        assert_int_equal(info.can_map_host_memory, p.can_map_host_memory);
        assert_int_equal(info.unified_addressing, p.unified_addressing);
        assert_int_equal(info.integrated, p.integrated);
        printf("cuda:%d %s sm_%d%d %d SMs, %.1f GiB, mempool %d\n", i, info.name, info.cc_major,
               info.cc_minor, info.multiprocessors, info.total_memory / 1073741824.0,
               info.memory_pools_supported);
    }
}

/* The occupancy of a real device matches the CUDA runtime's own answer for
 * a kernel-less resource mix, as computed by cudaOccupancy... is not
 * available without a kernel: check the arithmetic's invariants instead. */
static void test_occupancy_on_device(void **state)
{
    (void)state;
    prism_device_info info;
    assert_int_equal(prism_device_query(0, &info), PRISM_SUCCESS);
    prism_occupancy o;
    assert_int_equal(prism_occupancy_compute(&info, 256, 32, 0, &o), PRISM_SUCCESS);
    assert_true(o.occupancy > 0.0 && o.occupancy <= 1.0);
    printf("256 threads, 32 regs: %d blocks/SM, occupancy %.2f (%s)\n", o.blocks_per_multiprocessor,
           o.occupancy, prism_occupancy_limit_name(o.limited_by));
}

static void test_env_choice_on_device(void **state)
{
    (void)state;
    char bad[16];
    snprintf(bad, sizeof bad, "%d", prism_cuda_device_count());
    setenv("CUDA_DEVICE", bad, 1);
    prism_context_desc desc = {.backend = PRISM_BACKEND_CUDA};
    prism_context *ctx = NULL;
    assert_int_equal(prism_context_create(&desc, &ctx), PRISM_ERROR_INVALID_DEVICE);
    assert_null(ctx);
    setenv("CUDA_DEVICE", "0", 1);
    assert_int_equal(prism_context_create(&desc, &ctx), PRISM_SUCCESS);
    assert_int_equal(prism_context_device(ctx)->index, 0);
    prism_context_destroy(ctx);
    unsetenv("CUDA_DEVICE");
}

static void test_report_lists_devices(void **state)
{
    (void)state;
    char text[8192];
    prism_device_report(text, sizeof text);
    printf("%s", text);
    assert_non_null(strstr(text, "CUDA Toolkit "));
    assert_non_null(strstr(text, "\"cuda:0\": \""));
}

typedef struct warm_run {
    prism_context_desc desc;
    prism_result result;
} warm_run;

static void *warm_main(void *p)
{
    warm_run *w = p;
    w->result = prism_context_prewarm(&w->desc);
    return NULL;
}

/* --prewarm, in a fresh process: CUDA started on another thread (with the
 * flags a context would set) while this one creates a context at the same
 * time, then again once it is warm; both contexts work and mapped memory is
 * on. A host descriptor warms nothing and succeeds. */
static void test_prewarm_on_thread(void **state)
{
    (void)state;
    prism_context_desc host = {.backend = PRISM_BACKEND_HOST};
    assert_int_equal(prism_context_prewarm(&host), PRISM_SUCCESS);
    warm_run w = {
        .desc = {.backend = PRISM_BACKEND_CUDA, .schedule = PRISM_SCHEDULE_BLOCKING_SYNC}};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, warm_main, &w), 0);
    prism_context *ctx = NULL, *second = NULL;
    assert_int_equal(prism_context_create(&w.desc, &ctx), PRISM_SUCCESS); /* racing the warm-up */
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(w.result, PRISM_SUCCESS);
    assert_int_equal(prism_context_prewarm(NULL), PRISM_SUCCESS); /* warm already: cheap */
    assert_int_equal(prism_context_create(&w.desc, &second), PRISM_SUCCESS);
    unsigned flags = 0;
    bool map_host = false;
    assert_int_equal(ctx_test_device_flags(&flags, &map_host), 0);
    assert_true(map_host);
    prism_buffer *b = NULL;
    assert_int_equal(prism_buffer_create_pinned(second, 4096, PRISM_HOST_MAPPED, "warm", &b),
                     PRISM_SUCCESS);
    assert_non_null(prism_buffer_device_pointer(b));
    prism_buffer_release(b);
    assert_int_equal(prism_context_destroy(second), PRISM_SUCCESS);
    assert_int_equal(prism_context_destroy(ctx), PRISM_SUCCESS);
}

int main(int argc, char **argv)
{
    if (prism_cuda_device_count() == 0) {
        printf("no CUDA device: skipped\n");
        return 77;
    }
    if (argc > 1 && strcmp(argv[1], "--prewarm") == 0) {
        const struct CMUnitTest warm[] = {cmocka_unit_test(test_prewarm_on_thread)};
        return cmocka_run_group_tests(warm, NULL, NULL);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_device0_mapped),       cmocka_unit_test(test_info_matches_properties),
        cmocka_unit_test(test_occupancy_on_device),  cmocka_unit_test(test_env_choice_on_device),
        cmocka_unit_test(test_report_lists_devices),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
