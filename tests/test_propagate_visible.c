/* propagate_visible_plan: the devices a prism-propagate run lets CUDA
 * start (CUDA_VISIBLE_DEVICES) and its device list renumbered within them;
 * nothing to do where the run uses every device in CUDA's order, or where
 * the list is not one the engine would accept (the engine's message then
 * stands); the processes a run makes by itself (propagate_processes_plan);
 * the environment's sources as the engine ranks them; and
 * propagate_driver_gpus on a made-up procfs folder. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "propagate_visible.h"

/* Sources that name `list` as the run's argument, `gpus` devices. */
static prism_device_sources named(const char *list, int gpus)
{
    return (prism_device_sources){.argument = list, .device_count = gpus};
}

/* The plan for (list, rank, gpus): "visible|renumbered", or "-" for none. */
static const char *plan(const char *list, int rank, int gpus)
{
    static char out[600];
    char visible[256], renumbered[256];
    const prism_device_sources s = named(list, gpus);
    if (!propagate_visible_plan(&s, rank, visible, sizeof visible, renumbered, sizeof renumbered))
        return "-";
    snprintf(out, sizeof out, "%s|%s", visible, renumbered);
    return out;
}

static void test_one_process(void **state)
{
    (void)state;
    assert_string_equal(plan("0", -1, 2), "0|0");
    assert_string_equal(plan("1", -1, 2), "1|0");
    assert_string_equal(plan("cuda:3", -1, 8), "3|0");
    assert_string_equal(plan(" 2 , 5 ", -1, 8), "2,5|0,1");
    assert_string_equal(plan("1,0", -1, 2), "1,0|0,1");         /* a new order: renumbered */
    assert_string_equal(plan("1,1,0,1", -1, 4), "1,0|0,0,1,0"); /* lanes: once each */
    /* every device in CUDA's order, or none named: nothing to leave out */
    assert_string_equal(plan("0,1", -1, 2), "-");
    assert_string_equal(plan("0,0,1", -1, 2), "-");
    assert_string_equal(plan(NULL, -1, 2), "-");
    assert_string_equal(plan("all", -1, 4), "-");
    assert_string_equal(plan("0", -1, 1), "-");
}

/* The processes a run of --devices `arg` and $PRISM_DEVICE `env` makes by
 * itself, the driver showing `gpus`. */
static int processes(const char *arg, const char *env, int gpus)
{
    const prism_device_sources s = {.argument = arg, .prism_device = env, .device_count = gpus};
    return propagate_processes_plan(&s);
}

/* The processes a run makes by itself: one a device of a list of two
 * or more distinct devices, whether --devices or $PRISM_DEVICE names it. */
static void test_processes(void **state)
{
    (void)state;
    assert_int_equal(processes("0,1", NULL, 2), 2);
    assert_int_equal(processes("all", NULL, 4), 4);
    assert_int_equal(processes(" 3 , 1 ", NULL, 4), 2);
    assert_int_equal(processes(NULL, "0,1", 2), 2);
    assert_int_equal(processes(NULL, "all", 3), 3);
    /* one process: one device, a device twice (contexts side by side), no
     * list of the run's own, a refused list, too few GPUs or none shown */
    assert_int_equal(processes("1", NULL, 2), 1);
    assert_int_equal(processes("0,0", NULL, 2), 1);
    assert_int_equal(processes("0,1,0", NULL, 2), 1);
    assert_int_equal(processes(NULL, "1", 2), 1);
    assert_int_equal(processes(NULL, NULL, 2), 1);
    assert_int_equal(processes("0,7", NULL, 2), 1);
    assert_int_equal(processes("0;1", NULL, 2), 1);
    assert_int_equal(processes("all", NULL, 1), 1);
    assert_int_equal(processes("0,1", NULL, -1), 1);
    /* $CUDA_DEVICE names one device, never a list of the run's */
    const prism_device_sources cuda = {.cuda_device = "0,1", .device_count = 2};
    assert_int_equal(propagate_processes_plan(&cuda), 1);
}

static void test_ranks(void **state)
{
    (void)state;
    /* no list: rank r takes device r mod the driver's count */
    assert_string_equal(plan(NULL, 0, 2), "0|0");
    assert_string_equal(plan(NULL, 1, 2), "1|0");
    assert_string_equal(plan(NULL, 5, 4), "1|0");
    assert_string_equal(plan(" all", 3, 2), "1|0");
    /* a list: rank r takes its entry r mod its length */
    assert_string_equal(plan("2,3", 0, 4), "2|0");
    assert_string_equal(plan("2,3", 3, 4), "3|0");
    assert_string_equal(plan("0", 0, 1), "-"); /* the only device */
}

/* What the engine must report stays the engine's: no plan. */
static void test_refused(void **state)
{
    (void)state;
    const char *bad[] = {"2", "0,2", "-1", "x", "0,,1", "", "1a", "cuda:", "1234567", "0,"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_string_equal(plan(bad[i], -1, 2), "-");
    assert_string_equal(plan("0", -1, 0), "-");  /* no GPU */
    assert_string_equal(plan("0", -1, -1), "-"); /* the driver's count unknown */
    assert_string_equal(plan(NULL, 0, -1), "-");
    char small[2], big[64];
    const prism_device_sources ten = named("10", 16), one = named("1", 2);
    assert_false(propagate_visible_plan(&ten, -1, small, sizeof small, big, sizeof big));
    assert_false(propagate_visible_plan(&one, -1, big, 0, big, sizeof big));
    char many[400] = "";
    for (int i = 0; i < 70; i++) /* more entries than a plan holds */
        strcat(many, i ? ",1" : "1");
    assert_string_equal(plan(many, -1, 2), "-");
}

/* Where --devices is not given, the environment names them as the engine
 * reads it: $PRISM_DEVICE, then $CUDA_DEVICE, then ~/.cuda-device. */
static void test_sources(void **state)
{
    (void)state;
    char visible[64], renumbered[64];
    prism_device_sources s = {.cuda_device = "1", .file_text = "0", .device_count = 2};
    assert_true(
        propagate_visible_plan(&s, -1, visible, sizeof visible, renumbered, sizeof renumbered));
    assert_string_equal(visible, "1");
    s.prism_device = "0";
    assert_true(
        propagate_visible_plan(&s, -1, visible, sizeof visible, renumbered, sizeof renumbered));
    assert_string_equal(visible, "0");
    s = (prism_device_sources){.file_text = "1\n", .device_count = 4};
    assert_true(
        propagate_visible_plan(&s, -1, visible, sizeof visible, renumbered, sizeof renumbered));
    assert_string_equal(visible, "1");
    assert_string_equal(renumbered, "0");
    s.prism_device = ""; /* set but empty: not a source */
    s.file_text = NULL;
    assert_false(
        propagate_visible_plan(&s, -1, visible, sizeof visible, renumbered, sizeof renumbered));
}

static void test_driver_gpus(void **state)
{
    (void)state;
    char dir[] = "/tmp/prism_gpusXXXXXX";
    assert_non_null(mkdtemp(dir));
    assert_int_equal(propagate_driver_gpus(dir), 0);
    const char *entries[] = {"0000:1b:00.0", "0000:43:00.0"};
    char path[256];
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, entries[i]);
        assert_int_equal(mkdir(path, 0700), 0);
    }
    assert_int_equal(propagate_driver_gpus(dir), 2);
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, entries[i]);
        rmdir(path);
    }
    rmdir(dir);
    assert_int_equal(propagate_driver_gpus(dir), -1); /* gone */
}

/* CUDA_DEVICE_MAX_CONNECTIONS: the run's 4 where the user set nothing,
 * and whatever the user set (even empty) kept. */
static void test_connections(void **state)
{
    (void)state;
    assert_string_equal(propagate_connections_plan(NULL), "4");
    assert_null(propagate_connections_plan("8"));
    assert_null(propagate_connections_plan("1"));
    assert_null(propagate_connections_plan(""));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_process), cmocka_unit_test(test_processes),
        cmocka_unit_test(test_ranks),       cmocka_unit_test(test_refused),
        cmocka_unit_test(test_sources),     cmocka_unit_test(test_driver_gpus),
        cmocka_unit_test(test_connections),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
