/* Uses only the installed public API: a host context and the report. */
#include <stdio.h>
#include <string.h>

#include <prism/prism.h>

int main(void)
{
    prism_context_desc desc = {.backend = PRISM_BACKEND_HOST};
    prism_context *ctx = NULL;
    prism_result r = prism_context_create(&desc, &ctx);
    if (r != PRISM_SUCCESS) {
        fprintf(stderr, "consumer: %s\n", prism_result_string(r));
        return 1;
    }
    char report[4096];
    prism_device_report(report, sizeof report);
    int ok = strncmp(report, "Prism ", 6) == 0 && prism_context_backend(ctx) == PRISM_BACKEND_HOST;
    printf("consumer: Prism %s, %s backend, %d threads\n", prism_version(),
           prism_backend_name(prism_context_backend(ctx)), prism_context_device(ctx)->host_threads);
    prism_context_destroy(ctx);
    return ok ? 0 : 1;
}
