/* Running the programs from the tests (exec_util.h). */
#define _XOPEN_SOURCE 700
#include "exec_util.h"

#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <fcntl.h>
#include <ftw.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

extern char **environ;

static char tmpdir[64];

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    return remove(path);
}

/* Removes the directory (with what the tests wrote) when the test exits. */
static void remove_tmpdir(void)
{
    if (tmpdir[0] && strcmp(tmpdir, "/tmp") != 0 && !getenv("PRISM_TEST_KEEP"))
        nftw(tmpdir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}

const char *exec_tmpdir(void)
{
    if (!tmpdir[0]) {
        snprintf(tmpdir, sizeof tmpdir, "/tmp/prism-test-XXXXXX");
        if (mkdtemp(tmpdir))
            atexit(remove_tmpdir);
        else
            snprintf(tmpdir, sizeof tmpdir, "/tmp");
    }
    return tmpdir;
}

const char *exec_path(const char *name)
{
    static char buf[16][512];
    static int next;
    char *p = buf[next++ % 16];
    snprintf(p, sizeof buf[0], "%s/%s", exec_tmpdir(), name);
    return p;
}

static void slurp(const char *path, char *out, size_t size)
{
    out[0] = 0;
    FILE *f = fopen(path, "rb");
    if (f) {
        size_t got = fread(out, 1, size - 1, f);
        out[got] = 0;
        fclose(f);
    }
}

void exec_program(exec_run *run, const char *const *argv, bool merge)
{
    memset(run, 0, sizeof *run);
    char out[128], err[128];
    snprintf(out, sizeof out, "%s/run.out", exec_tmpdir());
    snprintf(err, sizeof err, "%s/run.err", exec_tmpdir());
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (merge)
        posix_spawn_file_actions_adddup2(&fa, 1, 2);
    else
        posix_spawn_file_actions_addopen(&fa, 2, err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid;
    int status = 0;
    run->exit_code = -1;
    if (posix_spawn(&pid, argv[0], &fa, NULL, (char *const *)argv, environ) == 0 &&
        waitpid(pid, &status, 0) == pid) {
        if (WIFEXITED(status))
            run->exit_code = WEXITSTATUS(status);
        else if (WIFSIGNALED(status))
            run->signal = WTERMSIG(status);
    }
    posix_spawn_file_actions_destroy(&fa);
    slurp(out, run->out, sizeof run->out);
    if (!merge)
        slurp(err, run->err, sizeof run->err);
    fprintf(stderr, "---");
    for (int i = 0; argv[i]; i++)
        fprintf(stderr, " %s", argv[i]);
    fprintf(stderr, " -> exit %d signal %d\n%s%s", run->exit_code, run->signal, run->out, run->err);
}

bool exec_on_path(const char *name, char *path, size_t size)
{
    const char *dirs = getenv("PATH");
    char buf[1024];
    while (dirs && *dirs) {
        const char *colon = strchr(dirs, ':');
        size_t len = colon ? (size_t)(colon - dirs) : strlen(dirs);
        snprintf(buf, sizeof buf, "%.*s/%s", (int)len, dirs, name);
        if (access(buf, X_OK) == 0) {
            if (path != NULL)
                snprintf(path, size, "%s", buf);
            return true;
        }
        dirs = colon ? colon + 1 : NULL;
    }
    return false;
}

bool exec_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

bool exec_same_files(const char *a, const char *b)
{
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    bool same = fa != NULL && fb != NULL;
    int ca = 0, cb = 0;
    while (same && ca == cb && ca != EOF) {
        ca = fgetc(fa);
        cb = fgetc(fb);
    }
    same = same && ca == cb;
    if (fa)
        fclose(fa);
    if (fb)
        fclose(fb);
    return same;
}

char *exec_read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    long n = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    char *t = n >= 0 && fseek(f, 0, SEEK_SET) == 0 ? malloc((size_t)n + 1) : NULL;
    if (t != NULL && fread(t, 1, (size_t)n, f) != (size_t)n) {
        free(t);
        t = NULL;
    }
    fclose(f);
    if (t != NULL) {
        t[n] = 0;
        if (size != NULL)
            *size = (size_t)n;
    }
    return t;
}

size_t exec_count_entries(const char *dir, bool hidden)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return 0;
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
            (e->d_name[0] == '.') == hidden)
            n++;
    closedir(d);
    return n;
}

double exec_json_number(const char *json, const char *anchor, const char *key)
{
    const char *at = strstr(json, anchor);
    char k[64];
    snprintf(k, sizeof k, "\"%s\":", key);
    at = at != NULL ? strstr(at, k) : NULL;
    if (at == NULL)
        fail_msg("no %s after %s in: %s", key, anchor, json);
    return strtod(at + strlen(k), NULL);
}
