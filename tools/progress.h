/* Progress on stderr for the slow stages of the programs: loading a big
 * file, building its BVH (prism-view), propagating photons in batches
 * (prism-propagate, with the count done, the rate and the time left).
 * On a terminal, a bar redrawn in place; elsewhere (a log, a pipe, a batch
 * job), one plain line every few seconds of a long stage, so a log shows
 * the run is alive without filling with frames. Nothing when not asked
 * (--quiet). The plain lines' interval is 5 s, or $PRISM_PROGRESS_INTERVAL
 * seconds (read by the programs only, not the library: tests set it to 0). */
#ifndef PRISM_TOOLS_PROGRESS_H
#define PRISM_TOOLS_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TOOL_PROGRESS_INTERVAL 5.0 /* seconds between plain lines */

typedef struct tool_progress {
    const char *program; /* "prism-propagate": begins the plain lines */
    const char *label;   /* "propagating" */
    const char *unit;    /* "photons": counts, rate and time left are shown; NULL: percent only */
    bool enabled;        /* asked for (not --quiet) */
    bool terminal;       /* stderr is a terminal: the bar; else plain lines */
    bool printed;        /* a plain line was printed: end says the stage is over */
    int last_permille;
    double start, last_draw, interval;
} tool_progress;

/* Seconds on a monotonic clock. */
double tool_now(void);

/* Start a stage's progress (shown when `want`). */
void tool_progress_begin(tool_progress *p, const char *program, const char *label, const char *unit,
                         bool want);
/* Usable as a prism_progress_fn (prism_load_desc, prism_bvh_desc): `user`
 * is the tool_progress. Not thread-safe: both call it on the calling
 * thread only. Never cancels. */
bool tool_progress_update(void *user, size_t done, size_t total);
/* A line of its own ("program: text"), above the bar on a terminal; only
 * when the progress is shown. */
void tool_progress_note(tool_progress *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Finish the stage with a note ("12.3 MB in 0.45 s", "failed"): the bar's
 * line ends; in plain lines, a last one when any was printed. */
void tool_progress_end(tool_progress *p, const char *note);

/* "0:41", "12:03", "1:02:03" */
void tool_duration_text(char *out, size_t size, double seconds);
/* "950 bytes", "12.3 MB", "64.0 PB" (powers of 1000) */
void tool_bytes_text(char *out, size_t size, uint64_t bytes);

#endif
