/* Running the programs from the tests: posix_spawn with stdout and stderr
 * caught in files, and a temporary directory removed when the test exits. */
#ifndef TEST_EXEC_UTIL_H
#define TEST_EXEC_UTIL_H

#include <stdbool.h>
#include <stddef.h>

typedef struct exec_run {
    int exit_code;     /* -1 when killed by a signal */
    int signal;        /* the signal, or 0 */
    char out[65536];   /* stdout (and stderr too, when merged) */
    char err[16384];   /* stderr, when not merged */
} exec_run;

/* A fresh directory /tmp/prism-test-XXXXXX for this process's files,
 * removed at exit unless PRISM_TEST_KEEP is set. */
const char *exec_tmpdir(void);
/* `name` in that directory (one of 16 buffers, reused in turn). */
const char *exec_path(const char *name);
/* Run argv[0] (a path) with argv (NULL-terminated); print the command
 * and what it said on stderr, for the test's log. */
void exec_program(exec_run *run, const char *const *argv, bool merge);
/* Whether `name` is an executable in $PATH; its path in `path` (when given). */
bool exec_on_path(const char *name, char *path, size_t size);

/* Whether the files at a and b hold the same bytes (false if either is
 * missing). */
bool exec_same_files(const char *a, const char *b);

#endif
