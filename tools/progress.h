/* A progress bar on stderr for the slow stages of start-up (loading a big
 * file, building its BVH). Drawn only when stderr is a terminal, so logs
 * and tests stay clean. */
#ifndef VIEWER_PROGRESS_H
#define VIEWER_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>

typedef struct viewer_progress {
    const char *label;
    bool enabled;
    int last_permille;
} viewer_progress;

void viewer_progress_begin(viewer_progress *p, const char *label);
/* Usable as a prism_progress_fn (prism_load_desc, prism_bvh_desc): `user`
 * is the viewer_progress. Not thread-safe: both call it on the calling
 * thread only. Never cancels. */
bool viewer_progress_update(void *user, size_t done, size_t total);
/* Finish the line with a note ("12.3 MB in 0.45 s"). */
void viewer_progress_end(viewer_progress *p, const char *note);

#endif
