/* Output files checked before the work (outputs.h). */
#define _POSIX_C_SOURCE 200809L
#include "outputs.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "cli.h"
#include "progress.h"

#define MAX_FILE_SYSTEMS 16

uint64_t tool_mul_sat(uint64_t a, uint64_t b)
{
    return b != 0 && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

uint64_t tool_add_sat(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* The directory `path` would be created in: "." for a bare name. */
static void directory_of(const char *path, char *dir, size_t size)
{
    const char *slash = strrchr(path, '/');
    if (slash == NULL)
        snprintf(dir, size, ".");
    else if (slash == path)
        snprintf(dir, size, "/");
    else
        snprintf(dir, size, "%.*s", (int)(slash - path), path);
}

/* One path on its own; its directory and that directory's device. */
static int check_path(const char *path, char *dir, size_t dir_size, dev_t *device, char *err,
                      size_t size)
{
    struct stat st;
    if (path[0] == 0)
        return tool_fail(err, size, "an output's path is empty");
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return tool_fail(err, size, "%s: is a directory", path);
    if (path[strlen(path) - 1] == '/')
        return tool_fail(err, size, "%s: names a directory, not a file", path);
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return tool_fail(err, size,
                         "%s: exists and is not a regular file (the output would "
                         "replace it)",
                         path);
    directory_of(path, dir, dir_size);
    if (stat(dir, &st) != 0 && errno == ENOENT)
        return tool_fail(err, size, "%s: directory '%s' does not exist", path, dir);
    if (stat(dir, &st) != 0)
        return tool_fail(err, size, "%s: directory '%s': %s", path, dir, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return tool_fail(err, size, "%s: '%s' is not a directory", path, dir);
    if (access(dir, W_OK | X_OK) != 0)
        return tool_fail(err, size, "%s: cannot create a file in '%s': %s", path, dir,
                         strerror(errno));
    *device = st.st_dev;
    return 0;
}

typedef struct file_system {
    dev_t device;
    uint64_t need, available;
} file_system;

/* Add `bytes` to what the file system of `dir` must take; -1 when it has
 * no room for all it takes so far. */
static int add_need(file_system *fs, size_t *n, dev_t device, const char *path, const char *dir,
                    uint64_t bytes, char *err, size_t size)
{
    size_t i = 0;
    while (i < *n && fs[i].device != device)
        i++;
    struct statvfs v;
    if (i == *n) {
        if (*n == MAX_FILE_SYSTEMS || statvfs(dir, &v) != 0)
            return 0; /* no figure to check against */
        fs[i] = (file_system){device, 0, tool_mul_sat((uint64_t)v.f_bavail, v.f_frsize)};
        (*n)++;
    }
    fs[i].need = tool_add_sat(fs[i].need, bytes);
    if (fs[i].need <= fs[i].available)
        return 0;
    char need[32], all[32], available[32];
    tool_bytes_text(need, sizeof need, bytes);
    tool_bytes_text(all, sizeof all, fs[i].need);
    tool_bytes_text(available, sizeof available, fs[i].available);
    if (fs[i].need == bytes)
        return tool_fail(err, size, "%s: needs %s, but the file system of '%s' has %s free", path,
                         need, dir, available);
    return tool_fail(err, size,
                     "%s: needs %s, %s with the other outputs there, but the file "
                     "system of '%s' has %s free",
                     path, need, all, dir, available);
}

int tool_outputs_check(const tool_output *outputs, size_t n, char *err, size_t err_size)
{
    file_system fs[MAX_FILE_SYSTEMS];
    size_t fs_n = 0;
    for (size_t i = 0; i < n; i++) {
        char dir[4096];
        dev_t device = 0;
        if (check_path(outputs[i].path, dir, sizeof dir, &device, err, err_size))
            return -1;
        if (outputs[i].bytes != 0 &&
            add_need(fs, &fs_n, device, outputs[i].path, dir, outputs[i].bytes, err, err_size))
            return -1;
    }
    return 0;
}
