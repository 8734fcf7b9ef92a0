/* prism-propagate's pieces: the command line (propagate_options.c), the
 * batch loop that reads or generates photons, propagates them and appends
 * the outputs (propagate_batches.c), the summary (propagate_summary.c)
 * and the CUDA-against-host validation (propagate_validate.c). */
#ifndef PRISM_TOOLS_PROPAGATE_TOOL_H
#define PRISM_TOOLS_PROPAGATE_TOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "prism/context.h"
#include "prism/gensteps.h"
#include "prism/geometry.h"
#include "prism/propagate.h"
#include "prism/scene.h"

#include "cli.h"
#include "npy.h"

/* Exit statuses. */
enum {
    PROPAGATE_OK = 0,
    PROPAGATE_FAILED = 1,   /* a file, the engine, an output */
    PROPAGATE_USAGE = 2,    /* a bad command line */
    PROPAGATE_DISAGREE = 3, /* --validate: the backends agree less than asked */
    PROPAGATE_NO_CUDA = 4   /* --validate: no CUDA device to compare with */
};

#define PROPAGATE_DEFAULT_COUNT 1000000u
#define PROPAGATE_VALIDATE_COUNT 100000u
#define PROPAGATE_DEFAULT_RECORD_STEPS 16u
#define PROPAGATE_MAX_CONTEXTS 64
#define PROPAGATE_MAX_RANKS 64 /* --processes */

typedef struct propagate_options {
    const char *file;
    const char *photons;       /* --photons in.npy */
    const char *gensteps;      /* --gensteps in.npy: (N,6,4) float32 */
    const char *save_gensteps; /* --save-gensteps out.npy */
    bool muon;                 /* --source muon:...: gensteps of a muon (muon_desc) */
    prism_muon_desc muon_desc;
    tool_engine_options engine; /* --source (else the scene's centre), --backend,
                                     --placement, --bvh */
    uint64_t count;             /* 0 = default (the file's rows, 1M, or 100k to validate) */
    const char *hits, *out, *records;
    uint32_t record_steps; /* K; 0 = PROPAGATE_DEFAULT_RECORD_STEPS */
    uint64_t seed;
    uint32_t max_steps; /* 0 = the engine's 100 */
    prism_propagate_math math;
    uint64_t batch;         /* 0 = automatic */
    int local_rank;         /* a rank's place on its node, -1 in a lone process */
    int processes;          /* --processes: 0 = one a device of a CUDA list, else 1 */
    bool processes_auto;    /* the processes are the run's own choice, not --processes */
    const char *devices;    /* --devices all|0,1: several contexts (NULL: one, or
                                     $PRISM_DEVICE's list) */
    uint32_t lanes;         /* --lanes: contexts a CUDA device; 0 = 1 */
    const char *visible;    /* CUDA_VISIBLE_DEVICES as the run set it (NULL: untouched) */
    bool wavelength;        /* --wavelength given */
    float wavelength_nm[2]; /* its value, or MIN and MAX (MAX 0: one wavelength) */
    bool json, quiet, validate, help;
    /* CUDA_DEVICE_MAX_CONNECTIONS as the run set it (NULL: untouched) */
    const char *connections;
} propagate_options;

/* Fill `o` from argv: 0, or -1 with one line in `err`. */
int propagate_options_parse(int argc, char **argv, propagate_options *o, char *err,
                            size_t err_size);
void propagate_options_usage(FILE *out);

/* What a run did: counts per history bit, how photons ended, detections
 * per solid, rates. */
typedef struct propagate_summary {
    uint64_t photons, steps;
    uint64_t flagged[32];        /* photons with history bit b */
    uint64_t ended[32];          /* photons whose walk ended with terminal bit b */
    uint64_t *detected_by_solid; /* [solids + 1]: the last counts unknown solids */
    size_t solids;
    uint64_t batch; /* photons a batch */
    unsigned batches;
    double propagate_seconds; /* inside prism_propagate (the busiest context's) */
    double seconds;           /* the batch loop, reading and writing included */
    double write_seconds;     /* appending to the files (the sink) */
    double wait_seconds;      /* contexts waiting for the writer to free a buffer */
    /* the stream's own time outside the calls (prism_propagate_share):
     * the longest start and finish of a context, the sums of page-locking
     * and of the writer's waits for hits still crossing */
    double stream_start_seconds, stream_finish_seconds, pin_seconds, hits_wait_seconds;
    double commit_seconds; /* the files' headers, fsync and renames after the run */
    /* inside the prism_propagate calls, summed over the contexts: the
     * photons' generation, the steps' tail, the tally, the hits' selection
     * and copy (prism_propagate_stats) */
    prism_propagate_stats inside;
    size_t device_batch_bytes; /* device memory of one batch (photons, queues, records) */
    size_t host_batch_bytes;   /* host memory of one batch */
    size_t engine_peak_bytes;  /* the context's ledger at its peak (device, pinned, mapped) */
    size_t host_peak_bytes;    /* the process's peak resident memory (getrusage) */
    uint64_t hits, out_rows, record_rows;
    /* one rank of several, on rank 0: each rank's bytes read and written
     * of the outputs, its photons and the CPUs it may run on (rank_io[4 r]
     * to [4 r + 3]), its seconds before its run (rank_setup[4 r]), in
     * making the group (MPI_Init or the fork: 4 r + 1), finishing the
     * files after its run (4 r + 2) and its launcher's before it started
     * (4 r + 3, -1 unknown) */
    size_t ranks;
    uint64_t *rank_io;
    double *rank_setup;
} propagate_summary;

int propagate_summary_init(propagate_summary *s, const prism_scene *scene);
void propagate_summary_free(propagate_summary *s);

/* The run's setting, for the summary's header and JSON. */
typedef struct propagate_run_info {
    const propagate_options *opt;
    npy_reader *photons; /* --photons, opened (propagate_open_photons) */
    const prism_scene *scene;
    prism_context *ctx;             /* contexts[0] */
    const prism_geometry *geometry; /* geometries[0] */
    /* --devices: the contexts the batches are spread over (one without) */
    prism_context *contexts[PROPAGATE_MAX_CONTEXTS];
    const prism_geometry *geometries[PROPAGATE_MAX_CONTEXTS];
    size_t contexts_n;
    tool_log logs[PROPAGATE_MAX_CONTEXTS]; /* each context's engine log */
    double upload_each[PROPAGATE_MAX_CONTEXTS];
    const prism_photon_source *source;
    /* a GENSTEPS source: the gensteps and what they hold (photons: all of
     * theirs; cerenkov/scintillation: the muon's, else 0) */
    size_t genstep_count;
    uint64_t genstep_photons, cerenkov_photons, scintillation_photons;
    bool no_rindex;
    double load_seconds, upload_seconds; /* upload: the slowest context's */
    double context_seconds;              /* making the first context (CUDA's start) */
    /* contexts[i > 0] join the run on its threads (prism_propagate_stream_desc.join) */
    prism_result (*join)(void *user, size_t i, prism_context **ctx,
                         const prism_geometry **geometry);
    void *join_user;
    double started;       /* tool_now() when the program started */
    double setup_seconds; /* from then to the run's start */
    uint64_t count;       /* the run's photons (under MPI, every rank's together) */
    int rank, ranks;
    const char *launcher; /* what made the ranks: "mpirun", "fork" (ranks > 1) */
    /* one rank of several (mpirun's, or --processes): the ranks share the
     * run's batches and write their rows in place (propagate_ranks.h);
     * NULL in a lone process */
    struct propagate_ranks *ranked;
} propagate_run_info;

void propagate_summary_print(const propagate_summary *s, const propagate_run_info *run);
void propagate_summary_json(const propagate_summary *s, const propagate_run_info *run);

/* The source as the options give it, for `count` photons (scene: its
 * centre by default). */
prism_photon_source propagate_source(const propagate_options *o, const prism_scene *scene,
                                     uint64_t count);
/* Open --photons, checking its shape and dtype against --count; its
 * photon count in in->rows. */
int propagate_open_photons(const propagate_options *o, npy_reader *in, char *err, size_t err_size);
/* --gensteps read whole: its (N, 6, 4) float32 rows into *data (the
 * caller's to free), N into *count, the sum of their photon counts into
 * *photons. */
int propagate_read_gensteps(const char *path, float **data, size_t *count, uint64_t *photons,
                            char *err, size_t err_size);
/* Write `count` gensteps to `path` as (N, 6, 4) float32, atomically. */
int propagate_write_gensteps(const char *path, const float *data, size_t count, char *err,
                             size_t err_size);
/* The next n photons of --photons into `photons`, their positions checked
 * (first = their index in the file, for the message). */
int propagate_read_photons(npy_reader *in, prism_photon *photons, size_t n, uint64_t first,
                           char *err, size_t err_size);

/* Where --processes is not given: the processes the run is spread over
 * (propagate_processes_plan: one a device of a list of distinct CUDA
 * devices, else 1), from the driver's GPU count (or CUDA_VISIBLE_DEVICES'
 * entries), without starting CUDA: a process forked after CUDA started
 * could not use it. 1 on the host backend and with --validate. */
int propagate_auto_processes(const propagate_options *o);
/* Before CUDA starts: CUDA_VISIBLE_DEVICES set to the devices the run uses
 * (propagate_visible.h) and o->devices renumbered to match, unless the
 * user set CUDA_VISIBLE_DEVICES, the run is on the host or validates, or
 * the driver's GPUs cannot be counted. */
void propagate_visible_devices(propagate_options *o);
/* Before CUDA starts: CUDA_DEVICE_MAX_CONNECTIONS set by
 * propagate_connections_plan (propagate_visible.h), and o->connections to
 * what was set, unless the user set it or the run is on the host. */
void propagate_cuda_connections(propagate_options *o);
/* The contexts `--devices` (else $PRISM_DEVICE's list, else one) asks
 * for: their number into *n with the desc each is created with. Returns an
 * exit status. */
int propagate_device_descs(const propagate_options *o, prism_context_desc *descs, char names[][32],
                           size_t *n);

/* Before any work: each output asked for (`paths`: hits, out, records,
 * NULL when not asked) can be created where it is named, and its file
 * system has room for the files whose size is known (--out: 64 bytes a
 * photon, --records: 32 K; the hits are not known in advance). 0, or -1
 * with the message. */
int propagate_check_outputs(const propagate_options *o, const char *const paths[3], char *err,
                            size_t err_size);

/* The whole run, batch by batch; outputs committed only when all went
 * well. Returns an exit status (message on stderr). */
int propagate_run(const propagate_run_info *run, propagate_summary *sum);

/* --validate: the sample on the host backend and on CUDA, compared photon
 * by photon. Returns an exit status. */
int propagate_validate(const propagate_options *o, const prism_scene *scene);

#endif
