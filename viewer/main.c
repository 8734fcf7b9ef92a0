/* prism-view: options, then the viewer or its benchmark. Exit status 0 on
 * success, 1 when something failed (a missing or malformed file, no GL),
 * 2 for a mistake on the command line. */
#include <stdio.h>

#include "app.h"
#include "clock.h"
#include "options.h"
#include "outputs.h"

int main(int argc, char **argv)
{
    double start = viewer_clock();
    viewer_options opt;
    char err[512];
    int parsed = viewer_options_parse(argc, argv, &opt, err, sizeof err);
    opt.start_clock = start;
    if (parsed) {
        fprintf(stderr, "prism-view: %s\n", err);
        return 2;
    }
    if (opt.help) {
        viewer_options_usage(stdout);
        return 0;
    }
    /* a screenshot that cannot be written fails now, not after the run */
    const tool_output shot = {opt.screenshot, 0};
    char why[1024];
    if (opt.screenshot != NULL && tool_outputs_check(&shot, 1, why, sizeof why)) {
        fprintf(stderr, "prism-view: --screenshot %s\n", why);
        return 1;
    }
    viewer_app app;
    int status = 1;
    if (viewer_app_init(&app, &opt) == 0)
        status = opt.bench ? viewer_bench_run(&app) : viewer_app_run(&app);
    viewer_app_destroy(&app);
    return status;
}
