/* Helpers shared by the COLLADA loader suites. */
#ifndef TEST_COLLADA_UTIL_H
#define TEST_COLLADA_UTIL_H

#include <stdio.h>
#include <string.h>

#include "prism/scene.h"

#define DATA(name) PRISM_TEST_DATA "/collada/" name

typedef struct load_out {
    prism_result r;
    char error[1024];
    int logged_errors;
    int logged_warnings;
    int logged_infos;
    char warning[4][512]; /* the first warnings, in order */
    char info[512];       /* the last info line */
} load_out;

static void count_log(void *user, prism_log_level level, const char *msg)
{
    load_out *o = user;
    if (level == PRISM_LOG_ERROR)
        o->logged_errors++;
    if (level == PRISM_LOG_WARNING && o->logged_warnings < 4)
        snprintf(o->warning[o->logged_warnings], sizeof o->warning[0], "%s", msg);
    if (level == PRISM_LOG_WARNING)
        o->logged_warnings++;
    if (level == PRISM_LOG_INFO) {
        snprintf(o->info, sizeof o->info, "%s", msg);
        o->logged_infos++;
    }
}

static inline prism_scene *load_file(const char *path, unsigned max_depth, load_out *o)
{
    memset(o, 0, sizeof *o);
    prism_load_desc d = {0};
    d.error = o->error;
    d.error_size = sizeof o->error;
    d.max_depth = max_depth;
    d.log = count_log;
    d.log_user = o;
    prism_scene *s = (prism_scene *)1;
    o->r = prism_scene_load(path, &d, &s);
    return s;
}

#endif
