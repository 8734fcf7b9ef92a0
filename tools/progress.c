/* Progress bar: one carriage-returned line, redrawn at most 1000 times. */
#include "progress.h"

#include <stdio.h>
#include <unistd.h>

#define BAR 30

void viewer_progress_begin(viewer_progress *p, const char *label)
{
    p->label = label;
    p->enabled = isatty(STDERR_FILENO);
    p->last_permille = -1;
    if (p->enabled)
        viewer_progress_update(p, 0, 1);
}

bool viewer_progress_update(void *user, size_t done, size_t total)
{
    viewer_progress *p = user;
    if (!p->enabled || total == 0)
        return true;
    int permille = (int)(done >= total ? 1000 : (double)done / (double)total * 1000.0);
    if (permille == p->last_permille)
        return true;
    p->last_permille = permille;
    char bar[BAR + 1];
    int filled = permille * BAR / 1000;
    for (int i = 0; i < BAR; i++)
        bar[i] = i < filled ? '#' : '.';
    bar[BAR] = 0;
    fprintf(stderr, "\r%-14s [%s] %5.1f%%", p->label, bar, permille / 10.0);
    fflush(stderr);
    return true;
}

void viewer_progress_end(viewer_progress *p, const char *note)
{
    if (!p->enabled)
        return;
    viewer_progress_update(p, 1, 1);
    fprintf(stderr, "  %s\n", note ? note : "");
}
