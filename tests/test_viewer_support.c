/* Running prism-view from the tests: posix_spawn with stdout and stderr
 * in a file, PNG reading with libpng's simplified API. */
#define _XOPEN_SOURCE 700
#include "test_viewer_support.h"

#include <fcntl.h>
#include <ftw.h>
#include <png.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

const uint8_t VIEWER_BACKGROUND[4] = {26, 31, 41, 255};

const char *viewer_path(void)
{
    return getenv("PRISM_VIEW");
}

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

const char *viewer_tmpdir(void)
{
    if (!tmpdir[0]) {
        snprintf(tmpdir, sizeof tmpdir, "/tmp/prism-viewer-test-XXXXXX");
        if (mkdtemp(tmpdir))
            atexit(remove_tmpdir);
        else
            snprintf(tmpdir, sizeof tmpdir, "/tmp");
    }
    return tmpdir;
}

void viewer_exec(viewer_run *run, const char *const *args)
{
    memset(run, 0, sizeof *run);
    char log[128];
    snprintf(log, sizeof log, "%s/run.log", viewer_tmpdir());
    const char *argv[64] = {viewer_path()};
    int n = 1;
    for (; args[n - 1] && n < 63; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
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
    FILE *f = fopen(log, "rb");
    if (f) {
        size_t got = fread(run->output, 1, sizeof run->output - 1, f);
        run->output[got] = 0;
        fclose(f);
    }
    fprintf(stderr, "--- prism-view");
    for (int i = 1; argv[i]; i++)
        fprintf(stderr, " %s", argv[i]);
    fprintf(stderr, " -> exit %d signal %d\n%s", run->exit_code, run->signal, run->output);
}

bool viewer_image_read(const char *path, viewer_image *img)
{
    png_image png;
    memset(&png, 0, sizeof png);
    png.version = PNG_IMAGE_VERSION;
    memset(img, 0, sizeof *img);
    if (!png_image_begin_read_from_file(&png, path))
        return false;
    png.format = PNG_FORMAT_RGBA;
    img->rgba = malloc(PNG_IMAGE_SIZE(png));
    if (!img->rgba || !png_image_finish_read(&png, NULL, img->rgba, 0, NULL)) {
        png_image_free(&png);
        free(img->rgba);
        img->rgba = NULL;
        return false;
    }
    img->width = (int)png.width;
    img->height = (int)png.height;
    return true;
}

void viewer_image_free(viewer_image *img)
{
    free(img->rgba);
    img->rgba = NULL;
}

const uint8_t *viewer_pixel(const viewer_image *img, int x, int y)
{
    return img->rgba + ((size_t)y * (size_t)img->width + (size_t)x) * 4;
}

bool viewer_pixel_near(const uint8_t *a, const uint8_t *b, int tol)
{
    for (int c = 0; c < 3; c++)
        if (abs((int)a[c] - (int)b[c]) > tol)
            return false;
    return true;
}

double viewer_image_difference(const viewer_image *a, const viewer_image *b, int tol)
{
    if (a->width != b->width || a->height != b->height)
        return 1.0;
    size_t diff = 0, n = (size_t)a->width * (size_t)a->height;
    for (size_t i = 0; i < n; i++)
        if (!viewer_pixel_near(a->rgba + i * 4, b->rgba + i * 4, tol))
            diff++;
    return (double)diff / (double)n;
}

static bool on_path(const char *name)
{
    const char *path = getenv("PATH");
    char buf[1024];
    while (path && *path) {
        const char *colon = strchr(path, ':');
        size_t len = colon ? (size_t)(colon - path) : strlen(path);
        snprintf(buf, sizeof buf, "%.*s/%s", (int)len, path, name);
        if (access(buf, X_OK) == 0)
            return true;
        path = colon ? colon + 1 : NULL;
    }
    return false;
}

void viewer_require_display(int argc, char **argv)
{
    const char *d = getenv("DISPLAY");
    if (d && d[0])
        return;
    if (getenv("PRISM_TEST_UNDER_XVFB") || !on_path("xvfb-run")) {
        fprintf(stderr, "no display and no xvfb-run: skipped\n");
        exit(77);
    }
    setenv("PRISM_TEST_UNDER_XVFB", "1", 1);
    char *args[16] = {"xvfb-run", "-a", "-s", "-screen 0 1280x1024x24"};
    int n = 4;
    for (int i = 0; i < argc && n < 15; i++)
        args[n++] = argv[i];
    args[n] = NULL;
    execvp("xvfb-run", args);
    fprintf(stderr, "xvfb-run could not be started: skipped\n");
    exit(77);
}
