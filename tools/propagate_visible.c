/* The devices prism-propagate lets CUDA see (propagate_visible.h). */
#include "propagate_visible.h"

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VISIBLE_MAX 64

/* "3", " cuda:3 " -> 3; else -1. */
static int entry(const char *text, size_t n)
{
    while (n > 0 && isspace((unsigned char)*text)) {
        text++;
        n--;
    }
    while (n > 0 && isspace((unsigned char)text[n - 1]))
        n--;
    if (n > 5 && strncmp(text, "cuda:", 5) == 0) {
        text += 5;
        n -= 5;
    }
    if (n == 0 || n > 6)
        return -1;
    int v = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isdigit((unsigned char)text[i]))
            return -1;
        v = 10 * v + (text[i] - '0');
    }
    return v;
}

static bool all(const char *list)
{
    while (isspace((unsigned char)*list))
        list++;
    return strncmp(list, "all", 3) == 0;
}

/* `n` numbers joined by commas into out; false when they do not fit. */
static bool joined(const int *v, int n, char *out, size_t size)
{
    size_t at = 0;
    out[0] = 0;
    for (int i = 0; i < n; i++) {
        const int w = snprintf(out + at, size - at, "%s%d", i ? "," : "", v[i]);
        if (w < 0 || (size_t)w >= size - at)
            return false;
        at += (size_t)w;
    }
    return true;
}

bool propagate_visible_plan(const char *list, int local_rank, int gpus, char *visible,
                            size_t visible_size, char *renumbered, size_t renumbered_size)
{
    if (gpus <= 0 || visible_size == 0 || renumbered_size == 0)
        return false;
    int devices[VISIBLE_MAX], n = 0;
    if (list == NULL || all(list)) {
        if (local_rank < 0) /* every device: nothing to leave out */
            return false;
        for (n = 0; n < gpus && n < VISIBLE_MAX; n++)
            devices[n] = n;
    } else {
        for (const char *at = list;; n++) {
            const char *comma = strchr(at, ',');
            const size_t len = comma != NULL ? (size_t)(comma - at) : strlen(at);
            if (n == VISIBLE_MAX)
                return false;
            devices[n] = entry(at, len);
            if (devices[n] < 0 || devices[n] >= gpus)
                return false; /* the engine says what is wrong with it */
            if (comma == NULL) {
                n++;
                break;
            }
            at = comma + 1;
        }
    }
    if (local_rank >= 0) { /* a rank: one entry of the list */
        devices[0] = devices[local_rank % n];
        n = 1;
    }
    int used[VISIBLE_MAX], u = 0, renum[VISIBLE_MAX];
    for (int i = 0; i < n; i++) {
        int k = 0;
        while (k < u && used[k] != devices[i])
            k++;
        if (k == u)
            used[u++] = devices[i];
        renum[i] = k;
    }
    bool natural = u == gpus;
    for (int k = 0; k < u && natural; k++)
        natural = used[k] == k;
    if (natural) /* all of them, in CUDA's own order */
        return false;
    return joined(used, u, visible, visible_size) && joined(renum, n, renumbered, renumbered_size);
}

int propagate_driver_gpus(const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return -1;
    int n = 0;
    for (const struct dirent *e; (e = readdir(d)) != NULL;)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}
