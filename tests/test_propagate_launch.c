/* A rank's launch time (tools/propagate_launch.c): a child forked 0.35 s
 * after this test started reads at least that from /proc, to the clock
 * tick, whatever its name holds (spaces, parentheses); a process against
 * itself reads 0; a process that does not exist reads -1. The note is
 * given for a slow launch only, and not when HWLOC_COMPONENTS is set. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "propagate_launch.h"

/* What a child forked now reads of its launch, after naming itself `name`
 * (NULL: as it is). */
static double child_reads(const char *name)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    const pid_t parent = getpid();
    const pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        if (name != NULL)
            prctl(PR_SET_NAME, name);
        const double v = propagate_launch_seconds(getpid(), parent);
        _exit(write(fds[1], &v, sizeof v) == (ssize_t)sizeof v ? 0 : 1);
    }
    close(fds[1]);
    double v = -2.0;
    const ssize_t got = read(fds[0], &v, sizeof v);
    close(fds[0]);
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_int_equal(got, (ssize_t)sizeof v);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    return v;
}

static void test_child_started_later(void **state)
{
    (void)state;
    nanosleep(&(struct timespec){.tv_nsec = 350000000}, NULL);
    const double plain = child_reads(NULL), named = child_reads("a) b (c d");
    assert_true(plain >= 0.34 && plain < 600.0);
    assert_true(named >= 0.34 && named < 600.0);
}

static void test_self_and_missing(void **state)
{
    (void)state;
    assert_true(propagate_launch_seconds(getpid(), getpid()) == 0.0);
    assert_true(propagate_launch_seconds(getpid(), (pid_t)2147483647) == -1.0);
    assert_true(propagate_launch_seconds((pid_t)2147483647, getpid()) == -1.0);
}

static void test_note(void **state)
{
    (void)state;
    char note[512];
    assert_true(propagate_launch_note(0.62, NULL, note, sizeof note));
    assert_non_null(strstr(note, "mpirun ran 0.62 s before it started this rank"));
    assert_non_null(strstr(note, "HWLOC_COMPONENTS=-cuda,-nvml,-opencl,-rsmi,-levelzero"));
    assert_false(propagate_launch_note(0.06, NULL, note, sizeof note));
    assert_false(propagate_launch_note(-1.0, NULL, note, sizeof note));
    assert_false(propagate_launch_note(0.62, "-cuda,-nvml", note, sizeof note));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_child_started_later),
        cmocka_unit_test(test_self_and_missing),
        cmocka_unit_test(test_note),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
