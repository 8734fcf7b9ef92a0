/* prism-info: what a COLLADA file holds, and what devices Prism sees. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prism/context.h"
#include "prism/scene.h"

#ifdef PRISM_INFO_SCENE
int prism_info_scene(const char *path, bool json, prism_length_unit unit);
#endif

static void usage(FILE *out)
{
    fprintf(out, "usage: prism-info [--json] [--unit U] FILE.dae   summary of a COLLADA file\n"
                 "       prism-info --devices                      the devices Prism can use\n"
                 "options:\n"
                 "  --json      print the file summary as one JSON object\n"
                 "  --unit U    m, cm, mm or auto: the unit of the file's lengths (default auto:\n"
                 "              its <unit>; without one, mm for a Geant4 export, else m); the\n"
                 "              summary says which rule decided\n"
                 "  --devices   print the device report (host backend and every CUDA device)\n"
                 "  --help      this text\n");
}

static int devices(void)
{
    size_t n = prism_device_report(NULL, 0);
    char *text = malloc(n + 1);
    if (!text) {
        fprintf(stderr, "prism-info: out of memory\n");
        return 1;
    }
    prism_device_report(text, n + 1);
    fputs(text, stdout);
    free(text);
    return 0;
}

int main(int argc, char **argv)
{
    bool json = false, want_devices = false;
    const char *path = NULL;
    prism_length_unit unit = PRISM_UNIT_AUTO;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(argv[i], "--json") == 0) {
            json = true;
        } else if (strcmp(argv[i], "--devices") == 0) {
            want_devices = true;
        } else if (strcmp(argv[i], "--unit") == 0 || strncmp(argv[i], "--unit=", 7) == 0) {
            const char *v = argv[i][6] == '=' ? argv[i] + 7 : i + 1 < argc ? argv[++i] : NULL;
            if (prism_length_unit_parse(v, &unit) != PRISM_SUCCESS) {
                fprintf(stderr, "prism-info: --unit: expected m, cm, mm or auto, got '%s'\n",
                        v ? v : "nothing");
                return 2;
            }
        } else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "prism-info: unknown option %s\n", argv[i]);
            usage(stderr);
            return 2;
        } else if (path) {
            fprintf(stderr, "prism-info: one file at a time (%s and %s)\n", path, argv[i]);
            return 2;
        } else {
            path = argv[i];
        }
    }
    if (want_devices) {
        int rc = devices();
        if (rc || !path)
            return rc;
    }
    if (!path) {
        usage(stderr);
        return 2;
    }
#ifdef PRISM_INFO_SCENE
    return prism_info_scene(path, json, unit);
#else
    (void)json;
    (void)unit;
    fprintf(stderr, "prism-info: this build has no COLLADA loader\n");
    return 1;
#endif
}
