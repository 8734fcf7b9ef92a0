/* Device choice rules as a pure function of the sources and the device
 * count, and the same rules through the environment and ~/.cuda-device. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "engine/device_choice.h"

static prism_result choose(const prism_device_sources *s, int *index, char *msg)
{
    prism_device_choice c;
    prism_result r = prism__choose_device(s, &c, msg, 512);
    *index = c.index;
    return r;
}

static void test_nothing_set_tries_each(void **state)
{
    (void)state;
    prism_device_sources s = {.device_count = 4};
    int index;
    char msg[512];
    assert_int_equal(choose(&s, &index, msg), PRISM_SUCCESS);
    assert_int_equal(index, -1);
}

static void test_order_of_sources(void **state)
{
    (void)state;
    char msg[512];
    int index;
    prism_device_sources s = {.argument = NULL,
                              .prism_device = "2",
                              .cuda_device = "1",
                              .file_path = "/h/.cuda-device",
                              .file_text = "0\n",
                              .device_count = 4};
    assert_int_equal(choose(&s, &index, msg), PRISM_SUCCESS);
    assert_int_equal(index, 2);
    s.prism_device = ""; /* an empty variable counts as unset */
    assert_int_equal(choose(&s, &index, msg), PRISM_SUCCESS);
    assert_int_equal(index, 1);
    s.cuda_device = NULL;
    assert_int_equal(choose(&s, &index, msg), PRISM_SUCCESS);
    assert_int_equal(index, 0);
    s.argument = "cuda:3"; /* the caller's argument beats them all */
    s.prism_device = "2";
    assert_int_equal(choose(&s, &index, msg), PRISM_SUCCESS);
    assert_int_equal(index, 3);
}

static void test_invalid_values_name_their_source(void **state)
{
    (void)state;
    char msg[512];
    int index;
    prism_device_sources s = {.cuda_device = "7", .device_count = 2};
    assert_int_equal(choose(&s, &index, msg), PRISM_ERROR_INVALID_DEVICE);
    assert_string_equal(msg, "CUDA_DEVICE=7: out of range (2 CUDA devices)");

    s = (prism_device_sources){.prism_device = "gpu0", .cuda_device = "0", .device_count = 2};
    assert_int_equal(choose(&s, &index, msg), PRISM_ERROR_INVALID_DEVICE);
    assert_string_equal(msg, "PRISM_DEVICE=gpu0: not a device index (expected 0, 1, ... or cuda:N; "
                             "for several devices a list such as 0,1, or all)");
    assert_int_equal(index, -1); /* no fallback to CUDA_DEVICE */

    s = (prism_device_sources){.prism_device = "-1", .device_count = 2};
    assert_int_equal(choose(&s, &index, msg), PRISM_ERROR_INVALID_DEVICE);
    s = (prism_device_sources){.prism_device = "1x", .device_count = 2};
    assert_int_equal(choose(&s, &index, msg), PRISM_ERROR_INVALID_DEVICE);

    s = (prism_device_sources){.file_path = "/home/u/.cuda-device",
                               .file_text = "banana\n",
                               .device_count = 1};
    assert_int_equal(choose(&s, &index, msg), PRISM_ERROR_INVALID_DEVICE);
    assert_string_equal(msg, "/home/u/.cuda-device contains \"banana\": not a device index "
                             "(expected 0, 1, ... or cuda:N; for several devices a list such as "
                             "0,1, or all)");

    s = (prism_device_sources){.argument = "1", .device_count = 1};
    assert_int_equal(choose(&s, &index, msg), PRISM_ERROR_INVALID_DEVICE);
    assert_string_equal(msg, "device argument \"1\": out of range (1 CUDA device)");

    s = (prism_device_sources){.argument = "0", .device_count = 0};
    assert_int_equal(choose(&s, &index, msg), PRISM_ERROR_INVALID_DEVICE);
}

static void test_whitespace_and_prefix(void **state)
{
    (void)state;
    char msg[512];
    int index;
    prism_device_sources s = {.file_text = "  1 \n", .device_count = 2};
    assert_int_equal(choose(&s, &index, msg), PRISM_SUCCESS);
    assert_int_equal(index, 1);
    s = (prism_device_sources){.cuda_device = "cuda:0", .device_count = 1};
    assert_int_equal(choose(&s, &index, msg), PRISM_SUCCESS);
    assert_int_equal(index, 0);
}

static prism_result choose_list(const prism_device_sources *s, int *indices, int *count, char *msg)
{
    return prism__choose_devices(s, indices, 4, count, msg, 512);
}

/* Lists for multi-device runs: "0,1", "all", repeats, the first entry for
 * one context, and the same refusals as a single index. */
static void test_device_lists(void **state)
{
    (void)state;
    char msg[512];
    int idx[4], n, index;
    prism_device_sources s = {.prism_device = " 1, cuda:0 ,1\n", .device_count = 2};
    assert_int_equal(choose_list(&s, idx, &n, msg), PRISM_SUCCESS);
    assert_int_equal(n, 3);
    assert_int_equal(idx[0], 1);
    assert_int_equal(idx[1], 0);
    assert_int_equal(idx[2], 1);
    assert_int_equal(choose(&s, &index, msg), PRISM_SUCCESS);
    assert_int_equal(index, 1); /* one context: the list's first */

    s = (prism_device_sources){.argument = "all", .prism_device = "0", .device_count = 3};
    assert_int_equal(choose_list(&s, idx, &n, msg), PRISM_SUCCESS);
    assert_int_equal(n, 3);
    assert_int_equal(idx[2], 2);
    assert_int_equal(choose(&s, &index, msg), PRISM_SUCCESS);
    assert_int_equal(index, -1); /* all: the first usable */

    s = (prism_device_sources){.device_count = 2}; /* nothing set: every device */
    assert_int_equal(choose_list(&s, idx, &n, msg), PRISM_SUCCESS);
    assert_int_equal(n, 2);

    s = (prism_device_sources){.cuda_device = "0", .device_count = 2};
    assert_int_equal(choose_list(&s, idx, &n, msg), PRISM_SUCCESS);
    assert_int_equal(n, 1);
    assert_int_equal(idx[0], 0);

    s = (prism_device_sources){.prism_device = "0,2", .device_count = 2};
    assert_int_equal(choose_list(&s, idx, &n, msg), PRISM_ERROR_INVALID_DEVICE);
    assert_string_equal(msg, "PRISM_DEVICE=0,2: device 2 out of range (2 CUDA devices)");
    assert_int_equal(n, 0);
    assert_int_equal(choose(&s, &index, msg), PRISM_ERROR_INVALID_DEVICE);

    const char *bad[] = {"0,", ",1", "0,,1", "0;1", "al", "0,all"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        s = (prism_device_sources){.argument = bad[i], .device_count = 2};
        assert_int_equal(choose_list(&s, idx, &n, msg), PRISM_ERROR_INVALID_DEVICE);
        assert_non_null(strstr(msg, "not a device index"));
    }
    s = (prism_device_sources){.argument = "0,1,0,1,0", .device_count = 2};
    assert_int_equal(choose_list(&s, idx, &n, msg), PRISM_ERROR_INVALID_DEVICE);
    assert_non_null(strstr(msg, "more than 4 devices"));
    s = (prism_device_sources){.argument = "all", .device_count = 0};
    assert_int_equal(choose_list(&s, idx, &n, msg), PRISM_ERROR_NO_DEVICE);
    assert_string_equal(msg, "device argument \"all\": no CUDA device");
    /* a list longer than the rules read is refused, not cut short */
    char longer[400] = "";
    for (int i = 0; i < 100; i++)
        strcat(longer, i ? ",0" : "0");
    s = (prism_device_sources){.prism_device = longer, .device_count = 2};
    assert_int_equal(choose_list(&s, idx, &n, msg), PRISM_ERROR_INVALID_DEVICE);
    assert_non_null(strstr(msg, "longer than 127 characters"));
    assert_int_equal(choose(&s, &index, msg), PRISM_ERROR_INVALID_DEVICE);
    assert_non_null(strstr(msg, "PRISM_DEVICE="));
}

/* The process's own sources: environment variables and $HOME/.cuda-device. */
static void test_from_environment(void **state)
{
    (void)state;
    char home[] = "/tmp/prism-home-XXXXXX";
    assert_non_null(mkdtemp(home));
    setenv("HOME", home, 1);
    unsetenv("PRISM_DEVICE");
    unsetenv("CUDA_DEVICE");

    char path[512], text[64], file[600];
    prism_device_sources s;
    prism__device_sources_from_env(&s, NULL, path, sizeof path, text, sizeof text);
    assert_null(s.file_text);
    snprintf(file, sizeof file, "%s/.cuda-device", home);
    assert_string_equal(s.file_path, file);

    FILE *f = fopen(file, "w");
    assert_non_null(f);
    fputs("3\n", f);
    fclose(f);
    setenv("CUDA_DEVICE", "2", 1);
    prism__device_sources_from_env(&s, "1", path, sizeof path, text, sizeof text);
    assert_string_equal(s.file_text, "3\n");
    assert_string_equal(s.cuda_device, "2");
    assert_string_equal(s.argument, "1");

    s.device_count = 2;
    char msg[512];
    int index;
    s.argument = NULL;
    s.cuda_device = NULL;
    assert_int_equal(choose(&s, &index, msg), PRISM_ERROR_INVALID_DEVICE);
    assert_non_null(strstr(msg, "/.cuda-device contains \"3\": out of range (2 CUDA devices)"));

    unlink(file);
    rmdir(home);
    unsetenv("CUDA_DEVICE");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nothing_set_tries_each),
        cmocka_unit_test(test_order_of_sources),
        cmocka_unit_test(test_invalid_values_name_their_source),
        cmocka_unit_test(test_whitespace_and_prefix),
        cmocka_unit_test(test_device_lists),
        cmocka_unit_test(test_from_environment),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
