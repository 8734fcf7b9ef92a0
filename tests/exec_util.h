/* Running the programs from the tests: posix_spawn with stdout and stderr
 * caught in files, and a temporary directory removed when the test exits;
 * and the file helpers the suites share. */
#ifndef TEST_EXEC_UTIL_H
#define TEST_EXEC_UTIL_H

#include <stdbool.h>
#include <stddef.h>

typedef struct exec_run {
    int exit_code;   /* -1 when killed by a signal */
    int signal;      /* the signal, or 0 */
    char out[65536]; /* stdout (and stderr too, when merged) */
    char err[16384]; /* stderr, when not merged */
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

/* Whether anything is at `path`. */
bool exec_exists(const char *path);
/* Whether the files at a and b hold the same bytes (false if either is
 * missing). */
bool exec_same_files(const char *a, const char *b);
/* The whole file, NUL-terminated (size, when given, without the NUL);
 * NULL when it cannot be read. The caller frees it. */
char *exec_read_file(const char *path, size_t *size);
/* The entries of directory `dir` whose names start with a dot (hidden) or
 * do not, "." and ".." aside; 0 when it cannot be opened. */
size_t exec_count_entries(const char *dir, bool hidden);
/* The number after "key": that follows `anchor` in a JSON text (a
 * program's --json); fails the test when there is none. */
double exec_json_number(const char *json, const char *anchor, const char *key);

#endif
