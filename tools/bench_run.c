/* `prism-bench run FILE`: prism-propagate timed as a user runs it, whole,
 * in the layouts a run can take (one process, a process a device, the
 * devices in one process, mpirun's ranks), for the README's scaling table.
 * Each run is a child process; its time is from the spawn to the hits file
 * in place (prism-propagate renames it there once it is written, synced and
 * closed) and to the child's exit. The file is watched with stat() every
 * 0.5 ms rather than with inotify: a rename into a watched directory is
 * seen by both, and stat needs nothing but the path. */
#define _GNU_SOURCE /* environ */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "cli.h"

extern char **environ;

enum { RUN_MAX_COUNTS = 8, RUN_MAX_FORMS = 5, RUN_MAX_ROUNDS = 20, RUN_MAX_EXTRA = 64 };

typedef enum { FORM_ONE, FORM_EACH, FORM_INPROC, FORM_MPIRUN, FORM_MPIRUN_PROBES_OFF } run_form;

static const char *const FORM_NAMES[] = {"one", "each", "inproc", "mpirun", "mpirun-probes-off",
                                         NULL};

/* hwloc's components that start CUDA or NVML inside mpirun (the README's
 * "hwloc's GPU probes"). */
#define PROBES_OFF "HWLOC_COMPONENTS=-cuda,-nvml,-opencl,-rsmi,-levelzero"

typedef struct run_row {
    int form;
    uint64_t count;
    int round;
    double whole, command, in_calls; /* seconds, seconds, photons/s (0: not said) */
    bool same;                       /* hits identical to the count's first run */
} run_row;

typedef struct run_bench {
    const char *file, *devices, *dir;
    char propagate[PATH_MAX], mpirun[PATH_MAX];
    uint64_t counts[RUN_MAX_COUNTS];
    int counts_n, rounds, ranks;
    int forms[RUN_MAX_FORMS], forms_n;
    bool forms_given, json;
    double gap;
    const char *extra[RUN_MAX_EXTRA];
    int extra_n;
    char hits[PATH_MAX], first[PATH_MAX], out[PATH_MAX], err[PATH_MAX];
    run_row *rows;
    size_t rows_n;
} run_bench;

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: prism-bench run FILE.dae [--counts N,M] [--repeat R] [--devices LIST] [--ranks N]\n"
        "                       [--forms one,each,inproc,mpirun,mpirun-probes-off]\n"
        "                       [--propagate PATH] [--mpirun PATH] [--dir DIR] [--gap S]\n"
        "                       [--json] [-- PRISM-PROPAGATE OPTIONS]\n"
        "prism-propagate timed whole, as a user runs it: for each count N (default 100000000),\n"
        "R rounds (default 3) of every form, each run started S seconds (default 2) after the\n"
        "last one's end and a sync (a CUDA start is quicker within about a second of another).\n"
        "Forms (N ranks: the entries of --devices, else --ranks, default 2):\n"
        "  one                one process (on the first device of --devices)\n"
        "  each               a process each: --devices LIST (without it, --processes N)\n"
        "  inproc             the devices in one process: --devices LIST --processes 1\n"
        "  mpirun             mpirun -np N prism-propagate [--devices LIST]\n"
        "  mpirun-probes-off  the same with " PROBES_OFF "\n"
        "Default: one and each, inproc with --devices, and mpirun-probes-off where mpirun is\n"
        "found. Each run is\n"
        "  prism-propagate FILE --count N --seed 1 --hits DIR/prism-bench-run.npy --json OPTIONS\n"
        "(DIR: default the current directory; the hits of 10^9 photons take a few GB there).\n"
        "whole: from the command's start to the hits file in place (written, synced, closed\n"
        "and renamed; watched every 0.5 ms); command: to the command's end; in calls: the\n"
        "photons/s inside prism_propagate that the run's --json gives (rank 0's); x one: the\n"
        "median of the form one at that count divided by the run's time; same: the hits file\n"
        "byte for byte the count's first run's. A table of the runs, then each form's medians.\n"
        "--propagate: the program (default: the prism-propagate beside prism-bench, else\n"
        "$PATH's); --mpirun: the launcher (default $PATH's mpirun). As root, the mpirun forms\n"
        "get OMPI_ALLOW_RUN_AS_ROOT=1 and OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 unless they are set.\n"
        "A run that fails stops the bench (exit 1) with the last line it said on stderr, and\n"
        "leaves all it said in DIR/prism-bench-run.err.\n");
}

/* `name` on $PATH into `path`. */
static bool on_path(const char *name, char *path, size_t size)
{
    const char *dirs = getenv("PATH");
    while (dirs != NULL && *dirs) {
        const char *colon = strchr(dirs, ':');
        const int len = colon != NULL ? (int)(colon - dirs) : (int)strlen(dirs);
        if (snprintf(path, size, "%.*s/%s", len, dirs, name) < (int)size && access(path, X_OK) == 0)
            return true;
        dirs = colon != NULL ? colon + 1 : NULL;
    }
    return false;
}

/* prism-propagate beside this program, else on $PATH. */
static bool find_propagate(char *path, size_t size)
{
    char self[PATH_MAX];
    const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = 0;
        char *slash = strrchr(self, '/');
        if (slash != NULL) {
            *slash = 0;
            if (snprintf(path, size, "%s/prism-propagate", self) < (int)size &&
                access(path, X_OK) == 0)
                return true;
        }
    }
    return on_path("prism-propagate", path, size);
}

static int list_entries(const char *list)
{
    int n = 1;
    for (const char *c = list; *c; c++)
        n += *c == ',';
    return n;
}

/* Each comma-separated item of `text` given to `item`; the first failure's
 * -1, else 0. */
static int each_item(run_bench *b, const char *text, char *err, size_t size,
                     int (*item)(run_bench *, const char *, char *, size_t))
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", text);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok != NULL;
         tok = strtok_r(NULL, ",", &save))
        if (item(b, tok, err, size) != 0)
            return -1;
    return 0;
}

static int add_count(run_bench *b, const char *tok, char *err, size_t size)
{
    if (b->counts_n == RUN_MAX_COUNTS)
        return tool_fail(err, size, "--counts: at most %d counts", RUN_MAX_COUNTS);
    if (tool_parse_count(tok, 1, UINT64_MAX / 2, &b->counts[b->counts_n++]) != 0)
        return tool_fail(err, size, "--counts: '%s' is not a photon count (1e9, 100000)", tok);
    return 0;
}

static int add_form(run_bench *b, const char *tok, char *err, size_t size)
{
    const int f = tool_parse_choice(tok, FORM_NAMES);
    if (f < 0)
        return tool_fail(err, size,
                         "--forms: '%s' is not one of one, each, inproc, mpirun, "
                         "mpirun-probes-off",
                         tok);
    for (int i = 0; i < b->forms_n; i++)
        if (b->forms[i] == f)
            return tool_fail(err, size, "--forms: '%s' twice", tok);
    b->forms[b->forms_n++] = f;
    return 0;
}

static int parse_counts(run_bench *b, const char *text, char *err, size_t size)
{
    b->counts_n = 0;
    if (each_item(b, text, err, size, add_count) != 0)
        return -1;
    return b->counts_n > 0 ? 0 : tool_fail(err, size, "--counts: no count in '%s'", text);
}

static int parse_forms(run_bench *b, const char *text, char *err, size_t size)
{
    b->forms_n = 0;
    b->forms_given = true;
    if (each_item(b, text, err, size, add_form) != 0)
        return -1;
    return b->forms_n > 0 ? 0 : tool_fail(err, size, "--forms: no form in '%s'", text);
}

static int option(void *user, const char *name, const char *value, char *err, size_t size)
{
    run_bench *b = user;
    long v = 0;
    if (strcmp(name, "--counts") == 0)
        return parse_counts(b, value, err, size);
    if (strcmp(name, "--forms") == 0)
        return parse_forms(b, value, err, size);
    if (strcmp(name, "--repeat") == 0) {
        if (tool_parse_long(value, 1, &v) != 0 || v > RUN_MAX_ROUNDS)
            return tool_fail(err, size, "--repeat: expected 1 to %d, got '%s'", RUN_MAX_ROUNDS,
                             value);
        b->rounds = (int)v;
        return 0;
    }
    if (strcmp(name, "--ranks") == 0) {
        if (tool_parse_long(value, 2, &v) != 0 || v > 64)
            return tool_fail(err, size, "--ranks: expected 2 to 64, got '%s'", value);
        b->ranks = (int)v;
        return 0;
    }
    if (strcmp(name, "--gap") == 0) {
        char *end = NULL;
        b->gap = strtod(value, &end);
        if (end == value || *end || !(b->gap >= 0.0 && b->gap <= 600.0))
            return tool_fail(err, size, "--gap: expected seconds from 0 to 600, got '%s'", value);
        return 0;
    }
    if (strcmp(name, "--devices") == 0) {
        if (!*value)
            return tool_fail(err, size, "--devices: an empty list");
        b->devices = value;
        return 0;
    }
    if (strcmp(name, "--dir") == 0) {
        b->dir = value;
        return 0;
    }
    if (strcmp(name, "--propagate") == 0 || strcmp(name, "--mpirun") == 0) {
        char *to = strcmp(name, "--propagate") == 0 ? b->propagate : b->mpirun;
        if (access(value, X_OK) != 0)
            return tool_fail(err, size, "%s: %s: not an executable file", name, value);
        snprintf(to, PATH_MAX, "%s", value);
        return 0;
    }
    return 1;
}

static bool flag(void *user, const char *name)
{
    run_bench *b = user;
    if (strcmp(name, "--json") == 0)
        return b->json = true;
    return false;
}

/* The forms the user did not name: one and each, inproc with a device
 * list, mpirun with its probes off where mpirun is found. */
static void default_forms(run_bench *b)
{
    b->forms[b->forms_n++] = FORM_ONE;
    b->forms[b->forms_n++] = FORM_EACH;
    if (b->devices != NULL)
        b->forms[b->forms_n++] = FORM_INPROC;
    if (b->mpirun[0])
        b->forms[b->forms_n++] = FORM_MPIRUN_PROBES_OFF;
}

static int parse(int argc, char **argv, run_bench *b, char *err, size_t size)
{
    memset(b, 0, sizeof *b);
    b->rounds = 3;
    b->ranks = 2;
    b->gap = 2.0;
    b->dir = ".";
    b->counts[0] = 100000000;
    b->counts_n = 1;
    int mine = argc; /* the options before "--" are the bench's */
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--") == 0) {
            mine = i;
            break;
        }
    for (int i = mine + 1; i < argc; i++) {
        if (b->extra_n == RUN_MAX_EXTRA)
            return tool_fail(err, size, "at most %d options after --", RUN_MAX_EXTRA);
        b->extra[b->extra_n++] = argv[i];
    }
    static const char *const valued[] = {"--counts", "--repeat", "--devices", "--ranks",
                                         "--forms",  "--gap",    "--dir",     "--propagate",
                                         "--mpirun", NULL};
    tool_args args = {.valued = valued,
                      .flag = flag,
                      .option = option,
                      .user = b,
                      .positional = &b->file,
                      .positional_noun = "detector file"};
    if (tool_args_parse(mine, argv, &args, err, size) != 0)
        return -1;
    if (b->file == NULL)
        return tool_fail(err, size, "no detector file");
    if (!b->propagate[0] && !find_propagate(b->propagate, sizeof b->propagate))
        return tool_fail(err, size,
                         "no prism-propagate beside prism-bench or on $PATH (--propagate)");
    if (!b->mpirun[0] && !on_path("mpirun", b->mpirun, sizeof b->mpirun))
        b->mpirun[0] = 0;
    if (b->devices != NULL)
        b->ranks = list_entries(b->devices);
    if (!b->forms_given)
        default_forms(b);
    for (int i = 0; i < b->forms_n; i++) {
        if (b->forms[i] == FORM_INPROC && b->devices == NULL)
            return tool_fail(err, size, "--forms inproc: it needs --devices");
        if (b->forms[i] >= FORM_MPIRUN && !b->mpirun[0])
            return tool_fail(err, size, "--forms %s: no mpirun on $PATH (--mpirun)",
                             FORM_NAMES[b->forms[i]]);
    }
    const char *names[4] = {"prism-bench-run.npy", "prism-bench-run-first.npy",
                            "prism-bench-run.json", "prism-bench-run.err"};
    char *paths[4] = {b->hits, b->first, b->out, b->err};
    for (int i = 0; i < 4; i++)
        if (snprintf(paths[i], PATH_MAX, "%s/%s", b->dir, names[i]) >= PATH_MAX)
            return tool_fail(err, size, "--dir: %s: too long", b->dir);
    struct stat st;
    if (stat(b->dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return tool_fail(err, size, "--dir: %s: not a directory", b->dir);
    if (access(b->file, R_OK) != 0)
        return tool_fail(err, size, "%s: %s", b->file, strerror(errno));
    return 0;
}

/* The child's environment: this one's, with `extra` (NULL-terminated
 * NAME=value strings) in place of any of the same names. */
static char **child_env(const char *const *extra)
{
    size_t n = 0, k = 0;
    while (environ[n] != NULL)
        n++;
    size_t e = 0;
    while (extra[e] != NULL)
        e++;
    char **env = calloc(n + e + 1, sizeof *env);
    if (env == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        bool replaced = false;
        for (size_t j = 0; j < e && !replaced; j++) {
            const size_t len = (size_t)(strchr(extra[j], '=') - extra[j]) + 1;
            replaced = strncmp(environ[i], extra[j], len) == 0;
        }
        if (!replaced)
            env[k++] = environ[i];
    }
    for (size_t j = 0; j < e; j++)
        env[k++] = (char *)extra[j];
    return env;
}

/* The command line of `form` at `count`, into argv (NULL-terminated), its
 * environment's additions into env; text holds the count, the ranks and
 * the list's first device. */
static void command(const run_bench *b, int form, uint64_t count, const char **argv,
                    const char **env, char text[3][64])
{
    int n = 0, e = 0;
    snprintf(text[0], 64, "%llu", (unsigned long long)count);
    snprintf(text[1], 64, "%d", b->ranks);
    snprintf(text[2], 64, "%.*s", b->devices != NULL ? (int)strcspn(b->devices, ",") : 0,
             b->devices != NULL ? b->devices : "");
    if (form >= FORM_MPIRUN) {
        argv[n++] = b->mpirun;
        argv[n++] = "-np";
        argv[n++] = text[1];
        if (form == FORM_MPIRUN_PROBES_OFF && getenv("HWLOC_COMPONENTS") == NULL)
            env[e++] = PROBES_OFF;
        if (geteuid() == 0 && getenv("OMPI_ALLOW_RUN_AS_ROOT") == NULL) {
            env[e++] = "OMPI_ALLOW_RUN_AS_ROOT=1";
            env[e++] = "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1";
        }
    }
    const char *base[] = {b->propagate, b->file,  "--count", text[0], "--seed",
                          "1",          "--hits", b->hits,   "--json"};
    for (size_t i = 0; i < sizeof base / sizeof *base; i++)
        argv[n++] = base[i];
    if (form == FORM_ONE && b->devices != NULL) {
        argv[n++] = "--devices";
        argv[n++] = text[2];
    } else if (form != FORM_ONE && b->devices != NULL) {
        argv[n++] = "--devices";
        argv[n++] = b->devices;
    } else if (form == FORM_EACH) {
        argv[n++] = "--processes";
        argv[n++] = text[1];
    }
    if (form == FORM_INPROC) {
        argv[n++] = "--processes";
        argv[n++] = "1";
    }
    for (int i = 0; i < b->extra_n; i++)
        argv[n++] = b->extra[i];
    argv[n] = NULL;
    env[e] = NULL;
}

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Whether two files hold the same bytes. */
static bool same_files(const char *a, const char *b)
{
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    enum { CHUNK = 8 << 20 };
    char *x = malloc(CHUNK), *y = malloc(CHUNK);
    bool same = fa != NULL && fb != NULL && x != NULL && y != NULL;
    while (same) {
        const size_t n = fread(x, 1, CHUNK, fa), m = fread(y, 1, CHUNK, fb);
        same = n == m && memcmp(x, y, n) == 0;
        if (n < CHUNK)
            break;
    }
    free(x);
    free(y);
    if (fa != NULL)
        fclose(fa);
    if (fb != NULL)
        fclose(fb);
    return same;
}

/* Whether a line holds only rules and blanks (Open MPI frames its
 * messages with lines of dashes). */
static bool rule_only(const char *line)
{
    for (; *line; line++)
        if (*line != '-' && *line != '=' && *line != ' ' && *line != '\t' && *line != '\n')
            return false;
    return true;
}

/* The run's stderr's last line that says something, for a failure's
 * message. */
static void last_line(const char *path, char *line, size_t size)
{
    line[0] = 0;
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return;
    char buf[1024];
    while (fgets(buf, sizeof buf, f) != NULL)
        if (!rule_only(buf))
            snprintf(line, size, "%.*s", (int)size - 1, buf);
    fclose(f);
    line[strcspn(line, "\n")] = 0;
}

/* "seconds":{..."propagate":X: the seconds inside prism_propagate. */
static double propagate_seconds(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return 0.0;
    char *text = malloc(1 << 20);
    size_t n = text != NULL ? fread(text, 1, (1 << 20) - 1, f) : 0;
    fclose(f);
    if (text == NULL)
        return 0.0;
    text[n] = 0;
    double v = 0.0;
    const char *s = strstr(text, "\"seconds\":{");
    const char *p = s != NULL ? strstr(s, "\"propagate\":") : NULL;
    if (p != NULL)
        v = strtod(p + strlen("\"propagate\":"), NULL);
    free(text);
    return v;
}

static void pause_for(double seconds)
{
    struct timespec ts = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* One run: 0, or -1 with the reason in err. */
static int one_run(run_bench *b, int form, uint64_t count, int round, char *err, size_t size)
{
    const char *argv[32 + RUN_MAX_EXTRA], *add[4];
    char text[3][64];
    command(b, form, count, argv, add, text);
    char **env = child_env(add);
    if (env == NULL)
        return tool_fail(err, size, "no memory");
    unlink(b->hits);
    sync(); /* the last run's data on the disk, not in this one's way */
    pause_for(b->gap);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, b->out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, b->err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid;
    const double t0 = prism_bench_now();
    const int spawned = posix_spawn(&pid, argv[0], &fa, NULL, (char *const *)argv, env);
    posix_spawn_file_actions_destroy(&fa);
    free(env);
    if (spawned != 0)
        return tool_fail(err, size, "%s: cannot start: %s", argv[0], strerror(spawned));
    double placed = 0.0;
    int status = 0;
    for (;;) { /* 0.5 ms a look; the child's exit ends it */
        if (placed == 0.0 && exists(b->hits))
            placed = prism_bench_now() - t0;
        const pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid || (w < 0 && errno != EINTR))
            break;
        pause_for(0.0005);
    }
    const double ended = prism_bench_now() - t0;
    if (placed == 0.0 && exists(b->hits))
        placed = ended;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || placed == 0.0) {
        char line[400];
        last_line(b->err, line, sizeof line);
        return tool_fail(err, size, "%s at %llu photons, round %d: %s%s%s (all it said: %s)",
                         FORM_NAMES[form], (unsigned long long)count, round,
                         WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "exit 0 but no hits file"
                                                                       : "failed",
                         line[0] ? ": " : "", line, b->err);
    }
    run_row *row = &b->rows[b->rows_n++];
    *row =
        (run_row){.form = form, .count = count, .round = round, .whole = placed, .command = ended};
    const double calls = propagate_seconds(b->out);
    row->in_calls = calls > 0.0 ? (double)count / calls : 0.0;
    if (!exists(b->first)) {
        row->same = rename(b->hits, b->first) == 0;
    } else {
        row->same = same_files(b->hits, b->first);
        unlink(b->hits);
    }
    fprintf(stderr, "prism-bench run: %s, %llu photons, round %d: whole %.3f s, command %.3f s%s\n",
            FORM_NAMES[form], (unsigned long long)count, round, placed, ended,
            row->same ? "" : ", hits DIFFER from the first run's");
    return 0;
}

/* The median of `form`'s whole (or command) times at `count` (as the
 * other stages report medians: one disturbed run of three moves a mean by
 * several percent); 0 when there is none. */
static double median_of(const run_bench *b, int form, uint64_t count, bool command)
{
    double t[RUN_MAX_ROUNDS];
    size_t n = 0;
    for (size_t i = 0; i < b->rows_n && n < RUN_MAX_ROUNDS; i++)
        if (b->rows[i].form == form && b->rows[i].count == count)
            t[n++] = command ? b->rows[i].command : b->rows[i].whole;
    return prism_bench_median(t, n);
}

static void ratio_text(double one, double t, char *buf, size_t size)
{
    if (one > 0.0 && t > 0.0)
        snprintf(buf, size, "%.3fx", one / t);
    else
        snprintf(buf, size, "-");
}

static void print_table(const run_bench *b)
{
    printf("%-18s %12s %5s %9s %11s %11s %7s %9s %7s %4s\n", "form", "photons", "round", "whole s",
           "photons/s", "in calls/s", "x one", "command s", "x one", "same");
    for (size_t i = 0; i < b->rows_n; i++) {
        const run_row *r = &b->rows[i];
        char x[2][16];
        ratio_text(median_of(b, FORM_ONE, r->count, false), r->whole, x[0], sizeof x[0]);
        ratio_text(median_of(b, FORM_ONE, r->count, true), r->command, x[1], sizeof x[1]);
        printf("%-18s %12llu %5d %9.3f %9.1f M %9.1f M %7s %9.3f %7s %4s\n", FORM_NAMES[r->form],
               (unsigned long long)r->count, r->round, r->whole, (double)r->count / r->whole / 1e6,
               r->in_calls / 1e6, r->form == FORM_ONE ? "" : x[0], r->command,
               r->form == FORM_ONE ? "" : x[1], r->same ? "yes" : "NO");
    }
    printf("\nmedians:\n%-18s %12s %9s %7s %9s %7s\n", "form", "photons", "whole s", "x one",
           "command s", "x one");
    for (int c = 0; c < b->counts_n; c++)
        for (int f = 0; f < b->forms_n; f++) {
            const int form = b->forms[f];
            const double w = median_of(b, form, b->counts[c], false),
                         m = median_of(b, form, b->counts[c], true);
            char x[2][16];
            ratio_text(median_of(b, FORM_ONE, b->counts[c], false), w, x[0], sizeof x[0]);
            ratio_text(median_of(b, FORM_ONE, b->counts[c], true), m, x[1], sizeof x[1]);
            printf("%-18s %12llu %9.3f %7s %9.3f %7s\n", FORM_NAMES[form],
                   (unsigned long long)b->counts[c], w, form == FORM_ONE ? "" : x[0], m,
                   form == FORM_ONE ? "" : x[1]);
        }
}

static void print_json(const run_bench *b)
{
    printf("{\"runs\":[");
    for (size_t i = 0; i < b->rows_n; i++) {
        const run_row *r = &b->rows[i];
        printf("%s{\"form\":\"%s\",\"photons\":%llu,\"round\":%d,\"whole_seconds\":%.6f,"
               "\"command_seconds\":%.6f,\"in_calls_photons_per_second\":%.6g,\"same\":%s}",
               i ? "," : "", FORM_NAMES[r->form], (unsigned long long)r->count, r->round, r->whole,
               r->command, r->in_calls, r->same ? "true" : "false");
    }
    printf("],\"medians\":[");
    bool first = true;
    for (int c = 0; c < b->counts_n; c++)
        for (int f = 0; f < b->forms_n; f++) {
            const int form = b->forms[f];
            const double one = median_of(b, FORM_ONE, b->counts[c], false),
                         onec = median_of(b, FORM_ONE, b->counts[c], true),
                         w = median_of(b, form, b->counts[c], false),
                         m = median_of(b, form, b->counts[c], true);
            printf("%s{\"form\":\"%s\",\"photons\":%llu,\"whole_seconds\":%.6f,"
                   "\"command_seconds\":%.6f,\"x_one_whole\":%.6g,\"x_one_command\":%.6g}",
                   first ? "" : ",", FORM_NAMES[form], (unsigned long long)b->counts[c], w, m,
                   one > 0 && w > 0 ? one / w : 0.0, onec > 0 && m > 0 ? onec / m : 0.0);
            first = false;
        }
    printf("]}\n");
}

/* The files of the runs removed; a failed run's stderr kept, which the
 * message names. */
static void clean(const run_bench *b, bool failed)
{
    unlink(b->hits);
    unlink(b->first);
    unlink(b->out);
    if (!failed)
        unlink(b->err);
}

int prism_bench_run(int argc, char **argv)
{
    if (prism_bench_wants_help(argc, argv)) {
        usage(stdout);
        return 0;
    }
    run_bench *b = malloc(sizeof *b);
    char err[1024];
    if (b == NULL) {
        fprintf(stderr, "prism-bench run: no memory\n");
        return 1;
    }
    if (parse(argc, argv, b, err, sizeof err) != 0) {
        fprintf(stderr, "prism-bench run: %s\n", err);
        usage(stderr);
        free(b);
        return 2;
    }
    b->rows = calloc((size_t)b->counts_n * (size_t)b->forms_n * (size_t)b->rounds, sizeof *b->rows);
    int rc = b->rows != NULL ? 0 : -1;
    if (rc != 0)
        snprintf(err, sizeof err, "no memory");
    for (int c = 0; c < b->counts_n && rc == 0; c++) {
        unlink(b->first); /* each count's runs against its own first */
        for (int round = 1; round <= b->rounds && rc == 0; round++)
            for (int f = 0; f < b->forms_n && rc == 0; f++)
                rc = one_run(b, b->forms[f], b->counts[c], round, err, sizeof err);
    }
    if (rc == 0 && b->json)
        print_json(b);
    else if (rc == 0)
        print_table(b);
    else
        fprintf(stderr, "prism-bench run: %s\n", err);
    clean(b, rc != 0);
    free(b->rows);
    free(b);
    return rc == 0 ? 0 : 1;
}
