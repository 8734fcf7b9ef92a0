/* A progress bar on stderr for the slow stages of the programs: loading a
 * big file, building its BVH (prism-view), propagating photons in batches
 * (prism-propagate, with the count done, the rate and the time left).
 * Drawn only when asked and stderr is a terminal, so logs and tests stay
 * clean. */
#ifndef PRISM_TOOLS_PROGRESS_H
#define PRISM_TOOLS_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>

typedef struct tool_progress {
    const char *label;
    const char *unit;     /* "photons": counts, rate and ETA are shown; NULL: percent only */
    bool enabled;
    int last_permille;
    double start, last_draw;
} tool_progress;

/* Seconds on a monotonic clock. */
double tool_now(void);

/* Start a bar (drawn when `want` and stderr is a terminal). */
void tool_progress_begin(tool_progress *p, const char *label, const char *unit, bool want);
/* Usable as a prism_progress_fn (prism_load_desc, prism_bvh_desc): `user`
 * is the tool_progress. Not thread-safe: both call it on the calling
 * thread only. Never cancels. */
bool tool_progress_update(void *user, size_t done, size_t total);
/* Finish the line with a note ("12.3 MB in 0.45 s"). */
void tool_progress_end(tool_progress *p, const char *note);

#endif
