/* Command-line pieces the programs share (prism-propagate, prism-view):
 * the walk over argv ("--opt value", "--opt=value", flags, positional
 * arguments), numbers, names of choices, the engine's options (photon
 * source, backend, placement policy, BVH builder, length unit), the
 * engine's settings the environment gives, and JSON strings.
 * Parsers return 0 (or a count) on success and -1 on a mistake; the
 * caller words the message, naming its option. Plain C over the public
 * API, so the viewer links it too. */
#ifndef PRISM_TOOLS_CLI_H
#define PRISM_TOOLS_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "prism/context.h"
#include "prism/geometry.h"
#include "prism/propagate.h"
#include "prism/scene.h"

/* How a program reads its argv: the options that take a value
 * ("--seed 5" or "--seed=5"), a function for flags (true when it knows
 * the flag) and one for valued options (0, 1 when it does not know the
 * option, -1 with `err` set), and where the one positional argument goes. */
typedef struct tool_args {
    const char *const *valued; /* NULL-terminated */
    bool (*flag)(void *user, const char *name);
    int (*option)(void *user, const char *name, const char *value, char *err, size_t err_size);
    void *user;
    const char **positional;
    const char *positional_noun; /* "file": "one file only: 'a' and 'b'" */
} tool_args;

/* Walk argv[1..argc). Returns 0, or -1 with one line in `err`: an unknown
 * option, a valued option without its value, a second positional
 * argument, or what `option` said. */
int tool_args_parse(int argc, char **argv, const tool_args *args, char *err, size_t err_size);

/* Write the message (vsnprintf) and return -1. */
int tool_fail(char *err, size_t err_size, const char *fmt, ...);

/* Between min_n and max_n comma-separated finite numbers; their count. */
int tool_parse_floats(const char *s, float *out, int min_n, int max_n);
/* A decimal integer >= min. */
int tool_parse_long(const char *s, long min, long *out);
/* A count in [min, max]: digits, or a whole number written 1e9 or 2.5e6. */
int tool_parse_count(const char *s, uint64_t min, uint64_t max, uint64_t *out);
/* The index of `arg` in `names` (NULL-terminated), or -1. */
int tool_parse_choice(const char *arg, const char *const *names);

/* point:x,y,z (an isotropic point, metres) or
 * beam:x,y,z,dx,dy,dz[,radius[,divergence]] (a disc of radius metres
 * shining along dx,dy,dz, divergence in degrees): kind, position,
 * direction, radius and divergence (radians) of `src`; the rest is left. */
int tool_parse_source(const char *s, prism_photon_source *src);

/* What both programs ask of the engine: --source, --backend auto|cuda|host,
 * --placement auto|device|mapped|chroma, --bvh auto|host|cuda, --unit
 * m|cm|mm|auto. All-zero: a point (at the scene's centre: source_given
 * false), every choice auto. */
typedef struct tool_engine_options {
    prism_photon_source source; /* kind, position, direction, radius, divergence */
    bool source_given;
    prism_backend backend;
    prism_placement_policy placement;
    prism_bvh_builder bvh;
    prism_length_unit unit; /* prism_load_desc.length_unit */
} tool_engine_options;

/* One of those options: 0, 1 when `opt` is another one, -1 with the
 * message in `err` ("--backend: expected auto, cuda or host, got 'x'"). */
int tool_parse_engine_option(tool_engine_options *e, const char *opt, const char *value, char *err,
                             size_t err_size);

/* The engine's settings from the environment. The library reads no
 * environment (its settings are descriptor fields); programs read these
 * variables, which the library itself once read, so every use of them
 * goes on working:
 *   PRISM_LOAD_TRACE (set)            prism_load_desc.trace
 *   PRISM_TRAVERSAL=wide|binary       prism_geometry_desc.traversal
 *   PRISM_WIDE_COLLAPSE=host          .wide_collapse_on_host
 *   PRISM_BVH_VALIDATE (set, not 0)   .validate_bvh
 *   PRISM_BVH_RADIUS=8                .cuda_bvh_radius (else the default)
 *   PRISM_BVH_TAIL=N, 2..4096         .cuda_bvh_tail (else the default)
 *   PRISM_UPLOAD_TRACE (set)          .trace |= PRISM_GEOMETRY_TRACE_UPLOAD
 *   PRISM_BVH_TRACE (set)             .trace |= PRISM_GEOMETRY_TRACE_BVH
 * The traces are log lines at PRISM_LOG_DEBUG: where the desc has no log,
 * tool_trace_log becomes its log; a program with its own log prints the
 * DEBUG lines it gets. */
void tool_env_load(prism_load_desc *d);
void tool_env_geometry(prism_geometry_desc *d);
/* Whether PRISM_UPLOAD_TRACE or PRISM_BVH_TRACE asks for a trace. */
bool tool_env_traces(void);
/* For a context whose uploads may trace: with a trace asked for, its
 * log_level becomes PRISM_LOG_DEBUG and, where it has no log,
 * tool_trace_log is its log. Nothing otherwise. */
void tool_env_context(prism_context_desc *d);
/* A prism_log_fn printing PRISM_LOG_DEBUG lines (the traces) on stderr,
 * as they are, and nothing else. */
void tool_trace_log(void *user, prism_log_level level, const char *message);

/* Print `s` as a JSON string: quotes, backslashes and control characters
 * escaped. */
void tool_json_string(const char *s);

/* The engine's log for a program: prism_context_desc.log (log_user a
 * tool_log of that context's own: a context logs from its threads) or
 * prism_load_desc.log (log_user NULL). Warnings go to stderr as
 * "prism: ..."; an error is kept in `error` instead of printed, since the
 * call that failed returns it (the context's last error, the load's
 * message) and the program prints it once, in its own words; only a
 * failed prism_context_create, which leaves no context to ask, needs the
 * kept one. While `print_errors` is set errors are printed too: around
 * prism_context_destroy, whose status alone would not say what was still
 * alive. */
typedef struct tool_log {
    char error[1024];
    bool print_errors;
} tool_log;

void tool_log_engine(void *user, prism_log_level level, const char *message);

#endif
