/* libFuzzer harness for prism-propagate's command line
 * (tools/propagate_options.c over tools/cli.c): the input is split into
 * argv words at NUL and newline bytes, each word in an allocation of its
 * own (ASan sees a read past its end). Any words must either parse into
 * options that hold together, every string pointing into argv, or fail
 * with one line that fits the buffer it was given. The parse runs again
 * into a 16-byte message buffer: the same answer, the message cut short.
 * Each word is also read as a count the way --seed reads its value
 * (tool_parse_count, 0 to 2^64-1): a count is never negative. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "propagate_tool.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_WORDS 64

/* Does p point into one of the words (its terminating NUL included)? */
static bool in_argv(const char *p, char **argv, int argc)
{
    for (int i = 0; i < argc; i++)
        if (p >= argv[i] && p <= argv[i] + strlen(argv[i]))
            return true;
    return false;
}

static void check_options(const propagate_options *o, char **argv, int argc)
{
    const char *strings[] = {o->file, o->photons, o->hits, o->out, o->records, o->devices};
    for (size_t i = 0; i < sizeof strings / sizeof *strings; i++)
        if (strings[i] && !in_argv(strings[i], argv, argc))
            abort();
    if (o->help)
        return;
    if (!o->file || (o->photons && o->engine.source_given) || (o->record_steps && !o->records))
        abort();
    if (o->count > PRISM_PROPAGATE_MAX_PHOTON_INDEX || o->batch > UINT32_MAX ||
        o->record_steps > 1024 || o->local_rank != -1)
        abort();
    if ((unsigned)o->engine.backend > PRISM_BACKEND_HOST ||
        (unsigned)o->engine.placement >= PRISM_PLACEMENT_POLICY_COUNT_ ||
        (unsigned)o->engine.bvh > PRISM_BVH_BUILDER_CUDA ||
        (unsigned)o->engine.unit > PRISM_UNIT_MM || (unsigned)o->math > PRISM_PROPAGATE_MATH_FAST)
        abort();
    if (o->validate &&
        (o->hits || o->out || o->records || o->devices || o->engine.backend == PRISM_BACKEND_HOST))
        abort();
    const char *paths[3] = {o->hits, o->out, o->records};
    for (int i = 0; i < 3; i++)
        for (int j = i + 1; j < 3; j++)
            if (paths[i] && paths[j] && strcmp(paths[i], paths[j]) == 0)
                abort();
}

static void check_count(const char *word)
{
    uint64_t v = 0;
    if (tool_parse_count(word, 0, UINT64_MAX, &v) != 0 || v == 0)
        return;
    const char *s = word + strspn(word, " \t\n\v\f\r");
    if (*s == '-')
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    static char prog[] = "prism-propagate";
    char *argv[MAX_WORDS + 2] = {prog};
    int argc = 1;
    for (size_t at = 0; at < size && argc <= MAX_WORDS;) {
        size_t n = 0;
        while (at + n < size && data[at + n] != 0 && data[at + n] != '\n')
            n++;
        argv[argc] = malloc(n + 1);
        if (argv[argc] == NULL)
            abort();
        memcpy(argv[argc], data + at, n);
        argv[argc++][n] = 0;
        at += n + 1; /* a trailing separator ends the last word, adds none */
    }
    argv[argc] = NULL;

    char err[512];
    char *small = malloc(16); /* its own allocation: ASan sees a write past it */
    if (small == NULL)
        abort();
    propagate_options o, o2;
    memset(err, 0x55, sizeof err);
    const int r = propagate_options_parse(argc, argv, &o, err, sizeof err);
    const int r2 = propagate_options_parse(argc, argv, &o2, small, 16);
    if (r != r2 || (r != 0 && r != -1))
        abort();
    if (r == 0) {
        check_options(&o, argv, argc);
        if (o.file != o2.file || o.count != o2.count || o.seed != o2.seed || o.help != o2.help)
            abort();
    } else {
        /* one line, terminated inside the buffer; the short one its start */
        const char *end = memchr(err, 0, sizeof err);
        if (end == NULL || end == err || memchr(err, '\n', (size_t)(end - err)) != NULL)
            abort();
        if (strlen(small) != (strlen(err) < 15 ? strlen(err) : 15) || strncmp(small, err, 15) != 0)
            abort();
    }
    for (int i = 1; i < argc; i++) {
        check_count(argv[i]);
        free(argv[i]);
    }
    free(small);
    return 0;
}
