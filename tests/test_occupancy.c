/* Occupancy arithmetic against cases computed by hand for an H100-like
 * device (sm_90: 64K registers, 64 warps, 32 blocks, 228 KiB shared). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "prism/context.h"

static prism_device_info h100(void)
{
    prism_device_info d = {0};
    d.backend = PRISM_BACKEND_CUDA;
    d.warp_size = 32;
    d.max_threads_per_block = 1024;
    d.max_threads_per_multiprocessor = 2048;
    d.max_warps_per_multiprocessor = 64;
    d.max_blocks_per_multiprocessor = 32;
    d.registers_per_block = 65536;
    d.registers_per_multiprocessor = 65536;
    d.register_allocation_unit = 256;
    d.warp_allocation_granularity = 4;
    d.max_registers_per_thread = 255;
    d.shared_memory_per_block = 232448;
    d.shared_memory_per_multiprocessor = 233472;
    d.shared_memory_allocation_unit = 128;
    d.reserved_shared_memory_per_block = 1024;
    return d;
}

static void check(int threads, int regs, size_t smem, int blocks, int warps, double occ,
                  prism_occupancy_limit by)
{
    prism_device_info d = h100();
    prism_occupancy o;
    assert_int_equal(prism_occupancy_compute(&d, threads, regs, smem, &o), PRISM_SUCCESS);
    assert_int_equal(o.blocks_per_multiprocessor, blocks);
    assert_int_equal(o.warps_per_multiprocessor, warps);
    assert_true(o.occupancy > occ - 1e-12 && o.occupancy < occ + 1e-12);
    assert_int_equal(o.limited_by, by);
}

/* 256 threads = 8 warps; 64 warps / 8 = 8 blocks; 32 regs x 32 lanes = 1024
 * per warp, 64 warps' worth: 8 blocks too. The first limit met wins ties. */
static void test_full(void **s)
{
    (void)s;
    check(256, 32, 0, 8, 64, 1.0, PRISM_LIMIT_WARPS);
}

/* 64 regs: 2048 per warp, 32 warps fit, 4 blocks of 8 warps. */
static void test_registers(void **s)
{
    (void)s;
    check(256, 64, 0, 4, 32, 0.5, PRISM_LIMIT_REGISTERS);
}

/* 48 KiB + 1 KiB reserve per block: 233472 / 50176 = 4 blocks of 4 warps. */
static void test_shared(void **s)
{
    (void)s;
    check(128, 0, 49152, 4, 16, 0.25, PRISM_LIMIT_SHARED_MEMORY);
}

/* One-warp blocks stop at the device's 32 blocks. */
static void test_device(void **s)
{
    (void)s;
    check(32, 16, 0, 32, 32, 0.5, PRISM_LIMIT_DEVICE);
}

/* 3 warps, 40 regs: 1280 per warp, 51 warps rounded down to 48 (groups of
 * 4), 16 blocks; warps alone would allow 21. */
static void test_granularity(void **s)
{
    (void)s;
    check(96, 40, 0, 16, 48, 0.75, PRISM_LIMIT_REGISTERS);
}

/* 1024 threads x 72 regs = 73728 > 65536 per block: cannot launch. */
static void test_cannot_launch(void **s)
{
    (void)s;
    check(1024, 72, 0, 0, 0, 0.0, PRISM_LIMIT_REGISTERS);
}

/* Shared memory rounds up to 128 bytes: 45670 costs 45696 + 1024 = 46720,
 * and 233472 / 46720 = 4.997: 4 blocks, where unrounded it would be 5. */
static void test_shared_rounding(void **s)
{
    (void)s;
    check(32, 0, 45670, 4, 4, 0.0625, PRISM_LIMIT_SHARED_MEMORY);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    prism_device_info d = h100();
    prism_occupancy o;
    assert_int_equal(prism_occupancy_compute(&d, 0, 32, 0, &o), PRISM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(prism_occupancy_compute(&d, 1025, 32, 0, &o), PRISM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(prism_occupancy_compute(&d, 256, 256, 0, &o), PRISM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(prism_occupancy_compute(&d, 256, -1, 0, &o), PRISM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(prism_occupancy_compute(&d, 256, 32, 232449, &o),
                     PRISM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(prism_occupancy_compute(NULL, 256, 32, 0, &o), PRISM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(prism_occupancy_compute(&d, 256, 32, 0, NULL), PRISM_ERROR_INVALID_ARGUMENT);
    assert_string_equal(prism_occupancy_limit_name(PRISM_LIMIT_SHARED_MEMORY), "shared memory");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_full),
        cmocka_unit_test(test_registers),
        cmocka_unit_test(test_shared),
        cmocka_unit_test(test_device),
        cmocka_unit_test(test_granularity),
        cmocka_unit_test(test_cannot_launch),
        cmocka_unit_test(test_shared_rounding),
        cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
