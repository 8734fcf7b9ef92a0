/* Progress bar: one carriage-returned line, redrawn when its permille
 * changes, at most ten times a second. */
#define _POSIX_C_SOURCE 200809L
#include "progress.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

#define BAR 30

double tool_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void tool_progress_begin(tool_progress *p, const char *label, const char *unit, bool want)
{
    p->label = label;
    p->unit = unit;
    p->enabled = want && isatty(STDERR_FILENO);
    p->last_permille = -1;
    p->start = tool_now();
    p->last_draw = 0;
    if (p->enabled)
        tool_progress_update(p, 0, 1);
}

/* "  12.5M/100M photons  41.3 M/s  ETA 0:02" */
static void counts(const tool_progress *p, size_t done, size_t total, double t)
{
    const double rate = t > 0 ? (double)done / t : 0;
    const double left = rate > 0 ? (double)(total - done) / rate : 0;
    fprintf(stderr, "  %.4g/%.4g M %s  %.3g M/s", done / 1e6, total / 1e6, p->unit, rate / 1e6);
    if (done > 0 && done < total)
        fprintf(stderr, "  ETA %d:%02d  ", (int)(left / 60), (int)left % 60);
    else
        fprintf(stderr, "            ");
}

bool tool_progress_update(void *user, size_t done, size_t total)
{
    tool_progress *p = user;
    if (!p->enabled || total == 0)
        return true;
    int permille = (int)(done >= total ? 1000 : (double)done / (double)total * 1000.0);
    const double t = tool_now();
    if (permille == p->last_permille || (permille < 1000 && t - p->last_draw < 0.1))
        return true;
    p->last_permille = permille;
    p->last_draw = t;
    char bar[BAR + 1];
    int filled = permille * BAR / 1000;
    for (int i = 0; i < BAR; i++)
        bar[i] = i < filled ? '#' : '.';
    bar[BAR] = 0;
    fprintf(stderr, "\r%-14s [%s] %5.1f%%", p->label, bar, permille / 10.0);
    if (p->unit != NULL)
        counts(p, done < total ? done : total, total, t - p->start);
    fflush(stderr);
    return true;
}

void tool_progress_end(tool_progress *p, const char *note)
{
    if (!p->enabled)
        return;
    if (p->unit == NULL) /* the caller's counts stay as last drawn */
        tool_progress_update(p, 1, 1);
    fprintf(stderr, "  %s\n", note ? note : "");
}
