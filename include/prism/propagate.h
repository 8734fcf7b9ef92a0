/* prism_propagate: optical photons through an uploaded geometry, in the
 * manner of Chroma's propagate.cu: boundaries from the BVH, bulk absorption,
 * Rayleigh scattering, Fresnel reflection and refraction (total internal
 * reflection included), and optical surfaces that detect, absorb or reflect.
 * The same per-photon code runs on the CUDA and the host backend
 * (include/prism/device/); random numbers are Philox4x32-10 keyed by the seed and
 * the photon's index in the run, so a photon draws the same numbers on
 * both, and in whichever call of a run split into batches it is.
 *
 * Functions: prism_propagate, prism_photons_generate, prism_propagate_multi,
 *            prism_propagate_stream, prism_propagate_stream_photons,
 *            prism_propagate_batch_limit, prism_photons_select,
 *            prism_photon_end_bit, prism_history_flag_name. */
#ifndef PRISM_PROPAGATE_H
#define PRISM_PROPAGATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "context.h"
#include "render.h" /* prism_target, prism_geometry, prism_buffer */
#include "result.h"

#ifdef __cplusplus
extern "C" {
#endif

/* History bits. The first ten keep Chroma's values (chroma/cuda/photon.h),
 * so histograms read alike. Fresnel reflection at a bare boundary sets
 * REFLECT_SPECULAR, as in Chroma; REFRACT and TOTAL_INTERNAL are Prism's. */
enum {
    PRISM_NO_HIT = 1u << 0, /* left the geometry */
    PRISM_BULK_ABSORB = 1u << 1,
    PRISM_SURFACE_DETECT = 1u << 2,
    PRISM_SURFACE_ABSORB = 1u << 3,
    PRISM_RAYLEIGH_SCATTER = 1u << 4,
    PRISM_REFLECT_DIFFUSE = 1u << 5,
    PRISM_REFLECT_SPECULAR = 1u << 6,
    PRISM_SURFACE_REEMIT = 1u << 7,   /* reserved (Chroma's value); not modelled */
    PRISM_SURFACE_TRANSMIT = 1u << 8, /* crossed a surface that neither absorbed nor reflected */
    PRISM_BULK_REEMIT = 1u << 9,      /* absorbed in the bulk and reemitted (REEMISSIONPROB) */
    PRISM_REFRACT = 1u << 10,         /* crossed a bare boundary (Fresnel transmission) */
    PRISM_TOTAL_INTERNAL = 1u << 11,  /* total internal reflection (with REFLECT_SPECULAR) */
    PRISM_STEP_LIMIT = 1u << 30,      /* stopped at max_steps while still alive */
    PRISM_NAN_ABORT = 1u << 31        /* a non-finite position or direction: stopped */
};

/* A photon finished when one of these is set. */
#define PRISM_TERMINAL_FLAGS                                                                       \
    (PRISM_NO_HIT | PRISM_BULK_ABSORB | PRISM_SURFACE_DETECT | PRISM_SURFACE_ABSORB |              \
     PRISM_STEP_LIMIT | PRISM_NAN_ABORT)

/* A photon: 64 bytes, four 16-byte loads. As input (PRISM_SOURCE_PHOTONS)
 * only pos, time, dir, wavelength and pol are read; dir is normalised and
 * pol made perpendicular to dir (a random one when zero or parallel). As
 * output it is the final state. Units: metres, nanoseconds, nanometres. */
typedef struct prism_photon {
    float pos[3];
    float time;
    float dir[3];
    float wavelength;
    float pol[3];
    uint32_t history;  /* PRISM_* bits of everything that happened */
    uint32_t solid;    /* solid of the last boundary hit (for SURFACE_DETECT:
                           the detecting solid); PRISM_NONE if none */
    uint32_t triangle; /* scene triangle of the last boundary hit, or PRISM_NONE */
    uint32_t steps;    /* interactions taken (boundaries, scatterings) */
    uint32_t reserved; /* used during propagation; 0xFFFFFFFF when it ends */
} prism_photon;

#ifndef __cplusplus
PRISM_STATIC_ASSERT(sizeof(prism_photon) == 64, "prism_photon is four 16-byte loads");
#endif

/* One step record: where a photon was, and when. 32 bytes, ready to draw.
 *
 * Vertex layout for OpenGL (stride 32 bytes):
 *   attribute   offset  type                       call
 *   position    0       4 x GL_FLOAT (x, y, z, t)  glVertexAttribPointer(i, 4, GL_FLOAT, GL_FALSE, 32, 0)
 *   history     16      1 x GL_UNSIGNED_INT        glVertexAttribIPointer(i, 1, GL_UNSIGNED_INT, 32, 16)
 *   wavelength  20      1 x GL_FLOAT               glVertexAttribPointer(i, 1, GL_FLOAT, GL_FALSE, 32, 20)
 *   photon      24      1 x GL_UNSIGNED_INT        glVertexAttribIPointer(i, 1, GL_UNSIGNED_INT, 32, 24)
 *   step        28      1 x GL_UNSIGNED_INT        glVertexAttribIPointer(i, 1, GL_UNSIGNED_INT, 32, 28)
 *
 * Photon p owns records [p*K, p*K + K) (K = record_steps). Record 0 is the
 * start; record j the j-th interaction; the last slot always ends holding
 * the final position (when a photon takes more than K-1 steps, the middle
 * ones are overwritten in that slot). Slots after the photon's last record
 * repeat it, so drawing each photon as a K-vertex GL_LINE_STRIP (or
 * glMultiDrawArrays with first p*K, count K) is right with no counts. */
typedef struct prism_step_record {
    float pos[3];
    float time;
    uint32_t history; /* history bits up to and including this step */
    float wavelength;
    uint32_t photon; /* photon's index in the run (desc.first_photon + its
                           place in the call), its low 32 bits */
    uint32_t step;   /* step number of this record */
} prism_step_record;

#ifndef __cplusplus
PRISM_STATIC_ASSERT(sizeof(prism_step_record) == 32, "prism_step_record has a 32-byte stride");
#endif

typedef enum prism_source_kind {
    /* `count` photons from `position`, directions uniform on the sphere. */
    PRISM_SOURCE_POINT = 0,
    /* A torch: `count` photons from points uniform on a disc of `radius`
     * around `position`, perpendicular to `direction`, each direction
     * uniform within the cone of half-angle `divergence` (radians) around
     * `direction`. Radius 0 and divergence 0 give a pencil beam. */
    PRISM_SOURCE_BEAM,
    /* `count` photons given in `photons`. */
    PRISM_SOURCE_PHOTONS,
    /* Cerenkov and scintillation photons made where they are propagated
     * from `genstep_count` gensteps (prism/device/genstep.h: Opticks's
     * (N, 6, 4) float32 layout, in metres and ns). The gensteps' photon
     * counts, in order, number the run's photons: run photon i (the call's
     * desc.first_photon plus its place in the call) is made by the genstep
     * whose photons hold i, from its own random stream, so a run split
     * into calls, contexts or ranks makes the same photons. */
    PRISM_SOURCE_GENSTEPS
} prism_source_kind;

/* Defaults (all-zero): a point source at the origin; wavelength 420 nm
 * (when wavelength_max_nm > wavelength_nm, uniform in between); time 0;
 * polarisation random perpendicular to each direction. count must be > 0,
 * but for GENSTEPS, where 0 means the gensteps' photons from
 * desc.first_photon on (the run index is the index among the gensteps'
 * photons) and any other count must fit in them. */
typedef struct prism_photon_source {
    prism_source_kind kind;
    size_t count;
    float position[3];
    float direction[3];      /* BEAM: need not be normalised; must not be zero */
    float radius;            /* BEAM: disc radius, metres */
    float divergence;        /* BEAM: cone half-angle, radians, in [0, pi] */
    float wavelength_nm;     /* 0 = 420 */
    float wavelength_max_nm; /* > wavelength_nm: uniform spectrum */
    float time;              /* ns */
    /* PHOTONS: `count` of them, host memory; on the CUDA backend also memory of
     * the context's device (copied with cudaMemcpyDefault: the Python package
     * passes CuPy / PyTorch arrays this way) */
    const prism_photon *photons;
    /* GENSTEPS: genstep_count x 6 x 4 floats (prism_genstep), host memory;
     * on the CUDA backend also memory of the context's device, as photons.
     * Each call reads the ones its photons come from; a stream or multi
     * run checks them all before it starts. */
    const float *gensteps;
    size_t genstep_count;
} prism_photon_source;

/* The arithmetic of the CUDA kernels. EXACT: IEEE float operations in the
 * host's order (no fused multiply-adds, correctly rounded division and
 * square root, denormals kept) and Prism's own log, sine and cosine, so a
 * photon ends bit for bit where the host backend puts it. FAST: nvcc's
 * --use_fast_math and the hardware's approximate functions; photons then
 * agree with the host backend statistically, not one by one. The host
 * backend always computes EXACT. */
typedef enum prism_propagate_math {
    PRISM_PROPAGATE_MATH_DEFAULT = 0, /* EXACT */
    PRISM_PROPAGATE_MATH_EXACT,
    PRISM_PROPAGATE_MATH_FAST
} prism_propagate_math;

/* Photon indices of a run go up to 2^56 (first_photon + count). */
#define PRISM_PROPAGATE_MAX_PHOTON_INDEX ((uint64_t)1 << 56)

/* Defaults (all-zero): seed 0; at most 100 steps per photon; no step
 * records; steps per launch chosen so launches stay short (~50 ms); the
 * call's photons are the run's first; exact arithmetic. */
typedef struct prism_propagate_desc {
    uint64_t seed;
    uint32_t max_steps;    /* 0 = 100; a photon still alive after them gets STEP_LIMIT */
    uint32_t record_steps; /* K records per photon; 0 = none; at most 1024 */
    /* Steps each photon may take in one kernel launch before the survivors
     * are compacted into a queue for the next launch, as Chroma did.
     * 0 = automatic. Results do not depend on it. Read by the host backend
     * and CUDA's megakernel; CUDA's default, the wavefront, takes one step
     * a launch pair (and its tail a fixed few) and ignores it. */
    uint32_t steps_per_launch;
    prism_propagate_math math;
    /* Index in the whole run of this call's first photon. Photon i of the
     * call draws the random numbers of photon first_photon + i and its
     * records carry that index, so a run made of calls of any size (count
     * photons each, first_photon advancing by count) gives exactly the
     * photons of one call. */
    uint64_t first_photon;
} prism_propagate_desc;

/* Where the results go. Each output may be left out (kind HOST with host
 * NULL): photons only, records only, or both.
 *   photons: `count` prism_photon (final states);
 *   records: `count * record_steps` prism_step_record (row_bytes unused):
 *            a GL vertex buffer registered with CUDA is written in place
 *            ("VBO mode"); any other target is filled from device memory
 *            ("non-VBO mode"). */
typedef struct prism_propagate_summary prism_propagate_summary;

/* Where the results go. Each output may be left out (kind HOST with host
 * NULL): photons only, records only, hits only, or any mix.
 *   photons: `count` prism_photon (final states);
 *   records: `count * record_steps` prism_step_record (row_bytes unused):
 *            a GL vertex buffer registered with CUDA is written in place
 *            ("VBO mode"); any other target is filled from device memory
 *            ("non-VBO mode");
 *   hits:    the final photons whose history has any bit of `hit_mask`
 *            (0 = PRISM_SURFACE_DETECT), in photon order, at most
 *            `hits_capacity` of them (0 = count; row_bytes unused); their
 *            number in stats->hits. They are selected where the photons
 *            are: on CUDA only the hits cross PCIe, so a host target may
 *            be pageable memory sized for the worst case (pages never
 *            written are never touched).
 *   summary: tallied where the photons are and added to (not reset), so
 *            one summary can sum a run of many calls; NULL for none. */
typedef struct prism_propagate_outputs {
    prism_target photons;
    prism_target records;
    prism_target hits;
    uint32_t hit_mask;
    size_t hits_capacity;
    prism_propagate_summary *summary;
} prism_propagate_outputs;

/* What happened to the photons, counted on the device that propagated
 * them (only the counts cross PCIe). Zero it before the first call. */
struct prism_propagate_summary {
    uint64_t photons;
    uint64_t steps;
    uint64_t flagged[32]; /* photons with history bit b */
    uint64_t ended[32];   /* photons whose walk ended with bit b
                                    (prism_photon_end_bit) */
    /* photons with SURFACE_DETECT per detecting solid: the caller's array
     * of `solids` + 1 counters (the last for a solid outside [0, solids)),
     * or NULL */
    uint64_t *detected_by_solid;
    size_t solids;
    uint64_t timed;           /* photons with a finite final time */
    float time_min, time_max; /* their range, ns (when timed > 0) */
};

typedef struct prism_propagate_stats {
    double seconds;      /* the photons' generation, step loop and tally (or summary);
                            the copies to the outputs and the hits are not counted */
    uint64_t steps;      /* interactions taken by all photons */
    unsigned launches;   /* kernel launches of the step loop */
    uint32_t history_or; /* OR of every photon's history */
    size_t detected;     /* photons with SURFACE_DETECT */
    size_t step_limited; /* photons with STEP_LIMIT */
    float time_max;      /* the latest final time of any photon, ns (non-finite
                                 times left out; 0 when none): an animation's end */
    size_t hits;         /* photons written to outputs->hits */
    /* Where the time went (host clock around the device's synchronous
     * steps; summed over calls where stats are added up): */
    double generate_seconds; /* making the photons (a part of seconds) */
    double tail_seconds;     /* step launches while under 1/16 of the photons
                                still lived (a part of seconds) */
    unsigned tail_launches;  /* those launches (a part of launches) */
    double tally_seconds;    /* the summary or tally (a part of seconds) */
    double hits_seconds;     /* selecting the hits and copying them out (after seconds) */
} prism_propagate_stats;

/** Generate the photons of `source` and propagate them through `geometry`
 * (whose optics tables came from its scene's materials and surfaces,
 * interpolated in wavelength; missing tables mean vacuum: index 1, no
 * absorption, no scattering).
 *
 * @errors PRISM_ERROR_INVALID_ARGUMENT (NULL ctx/geometry/source/outputs, a
 *   geometry uploaded with another context, a count of 0 or above 2^32-1,
 *   an unknown source kind, a PHOTONS source without photons, a zero beam
 *   direction, a beam radius or divergence out of range, record_steps >
 *   1024 or records asked for with record_steps 0, an unknown math,
 *   first_photon + count beyond PRISM_PROPAGATE_MAX_PHOTON_INDEX, a buffer
 *   target without `buffer` or at an offset not a multiple of 4; a GENSTEPS
 *   source without gensteps or with none, first_photon + count beyond the
 *   gensteps' photons, or a genstep (named by its index) of an unknown
 *   gentype, a material index not below the optics tables' material
 *   count, a non-finite value, a zero direction, a velocity not above 0, a
 *   Cerenkov genstep with BetaInverse not above 0, maxSin2 outside (0, 1]
 *   or wavelengths not 0 < Wmin < Wmax, a negative ScintillationTime),
 *   PRISM_ERROR_OUT_OF_RANGE (an output buffer too small),
 *   PRISM_ERROR_OUT_OF_MEMORY, PRISM_ERROR_OUT_OF_DEVICE_MEMORY,
 *   PRISM_ERROR_CUDA, PRISM_ERROR_GL.
 * @thread_safety As the context: one thread at a time; a GL target on the
 *   copy path needs the GL context current on it.
 * @pointer_lifetime source->photons and host outputs: during the call only. */
PRISM_API prism_result prism_propagate(prism_context *ctx, const prism_geometry *geometry,
                                       const prism_photon_source *source,
                                       const prism_propagate_desc *desc,
                                       const prism_propagate_outputs *outputs,
                                       prism_propagate_stats *stats);

/** The photons `source` starts, as prism_propagate would start them
 * (photon i draws the numbers of run index desc->first_photon + i; only
 * desc's seed and first_photon matter), written to `photons` (a target as
 * prism_propagate's photons output) and not propagated: to keep, inspect,
 * or hand back as a PHOTONS source. History, steps and the rest are
 * cleared as a new photon's.
 * @errors As prism_propagate's for the source, the desc and the photons
 *   target; PRISM_ERROR_INVALID_ARGUMENT for NULL photons.
 * @thread_safety As the context: one thread at a time.
 * @pointer_lifetime source's arrays and a host target: during the call only. */
PRISM_API prism_result prism_photons_generate(prism_context *ctx, const prism_geometry *geometry,
                                              const prism_photon_source *source,
                                              const prism_propagate_desc *desc,
                                              const prism_target *photons);

/* One context's part of a prism_propagate_multi call. */
typedef struct prism_propagate_share {
    size_t photons;      /* photons it propagated */
    unsigned batches;    /* prism_propagate calls it made */
    double seconds;      /* time inside them */
    double wait_seconds; /* prism_propagate_stream: time it waited for the sink to free a
                            buffer (the sink, not the device, was the bound) */
    /* prism_propagate_stream, where the rest of the run's time went: */
    double start_seconds;     /* the run's start to its first call's */
    double finish_seconds;    /* its last call's end to the run's return (the last batch
                                 handed to the sink, the buffers freed) */
    double pin_seconds;       /* page-locking host memory for its hits, between calls */
    double hits_wait_seconds; /* the sink's wait for its batches' hits to reach the host
                                 (their copy overlaps its next call) */
} prism_propagate_share;

/** prism_propagate across several contexts at once (one per GPU, or
 * several on one device), each with `geometries[i]`, the same scene
 * uploaded with `contexts[i]`. The photons are cut into batches that the
 * contexts take as they finish their last one (each from its own thread),
 * a batch sized by the context's measured photons per second against the
 * others' and shrinking as the run ends, so the devices finish together;
 * every batch at most what prism_propagate_batch_limit allows (shared
 * between contexts of one device). Batch b's photons carry their index in
 * the run (desc->first_photon + their place), so the outputs are, byte for
 * byte, those of one prism_propagate call, whatever n and however the
 * batches fell. `count` may exceed 2^32-1 here.
 * Outputs: host memory only (kind HOST; host NULL leaves one out); a
 * PHOTONS or GENSTEPS source: host memory. stats: the sums of the calls' (steps,
 * launches, detected, ...), seconds the wall time; shares (n of them, or
 * NULL): what each context did. Errors are reported on contexts[0]; the
 * message names the context that failed and why, and the others stop
 * taking batches.
 * @errors PRISM_ERROR_INVALID_ARGUMENT (NULL arrays, n 0 or above 64, a
 *   context listed twice, a geometry of another context, an output that
 *   is not host memory, a zero count, first_photon + count beyond
 *   PRISM_PROPAGATE_MAX_PHOTON_INDEX, gensteps as prism_propagate refuses
 *   them), then whatever prism_propagate or prism_propagate_batch_limit
 *   returned on the failing context.
 * @thread_safety The contexts are used from threads of the call's own;
 *   none of them may be in use elsewhere meanwhile. */
PRISM_API prism_result prism_propagate_multi(prism_context *const *contexts,
                                             const prism_geometry *const *geometries, size_t n,
                                             const prism_photon_source *source,
                                             const prism_propagate_desc *desc,
                                             const prism_propagate_outputs *outputs,
                                             prism_propagate_stats *stats,
                                             prism_propagate_share *shares);

/* One batch of a prism_propagate_stream run, as the sink gets it. The
 * pointers are host memory the stream owns, valid during the call only. */
typedef struct prism_propagate_batch {
    uint64_t first;           /* run index of its first photon */
    size_t count;             /* photons in it */
    const prism_photon *hits; /* its hits, in photon order */
    size_t hits_count;
    const prism_photon *photons;      /* every final photon (stream->photons), else NULL */
    const prism_step_record *records; /* count * record_steps (desc->record_steps), else NULL */
    size_t context;                   /* the index of the context that ran it */
    double seconds;                   /* its time inside prism_propagate */
} prism_propagate_batch;

/* The sink: called once a batch, in photon order, from one thread at a
 * time (the stream's own). Anything but PRISM_SUCCESS stops the run, and
 * prism_propagate_stream returns it. */
typedef prism_result (*prism_propagate_sink_fn)(void *user, const prism_propagate_batch *batch);
/* A PHOTONS source read a batch at a time: photons [first, first + count)
 * of the run into `dst` (host memory). Called in photon order, one call at
 * a time. */
typedef prism_result (*prism_propagate_fill_fn)(void *user, uint64_t first, size_t count,
                                                prism_photon *dst);
/* Claims the next batch of a run shared with other callers: its first
 * photon (the run's index, from 0) into *first and its photons into
 * *count (at most `batch`, the stream's batch size); *count 0 when the
 * run has none left. Called from one thread at a time, in the order the
 * sink later receives the batches. */
typedef prism_result (*prism_propagate_claim_fn)(void *user, size_t batch, uint64_t *first,
                                                 uint64_t *count);
/* A batch's hits counted: batch->first, ->count, ->context and
 * ->hits_count told as soon as its context has propagated it, on that
 * context's thread, before the sink has the batch (whose hits are still
 * on their way: batch->hits is NULL here). Called once a batch, in any
 * order across contexts. Anything but PRISM_SUCCESS stops the run. */
typedef prism_result (*prism_propagate_counted_fn)(void *user, const prism_propagate_batch *batch);

/* The most photons an automatic batch holds (batch 0) on a CUDA context:
 * fewer, larger batches pay fewer of the tails of long-lived photons that
 * end each one. Host memory for a batch's hits is reserved for its worst
 * case but only touched as hits arrive. A host-backend context's batch
 * holds its photons in host memory, so its batches stay smaller. */
#define PRISM_PROPAGATE_STREAM_MAX_BATCH ((size_t)1 << 25)
#define PRISM_PROPAGATE_STREAM_MAX_BATCH_HOST ((size_t)1 << 20)

/* Defaults (all-zero): batches of what fits each device, at most
 * PRISM_PROPAGATE_STREAM_MAX_BATCH (_HOST); the hits are the SURFACE_DETECT
 * photons; no final photons handed over; no summary. */
typedef struct prism_propagate_stream_desc {
    size_t batch;                     /* photons a batch; 0 = automatic */
    uint32_t hit_mask;                /* 0 = PRISM_SURFACE_DETECT */
    bool photons;                     /* hand every final photon to the sink too */
    prism_propagate_sink_fn sink;     /* required */
    prism_propagate_fill_fn fill;     /* PHOTONS sources: NULL reads source->photons */
    void *user;                       /* for sink and fill */
    prism_propagate_summary *summary; /* added to, or NULL */
    /* Contexts that start on the stream's threads: where contexts[i] (i >
     * 0) is NULL, thread i first calls join(user, i, &context, &geometry),
     * to make that context and upload the geometry, say, so that a device's
     * start overlaps the others' work, and takes batches once it returns
     * PRISM_SUCCESS. What it makes is the caller's. With such contexts,
     * automatic batches are sized by the contexts given. */
    prism_result (*join)(void *user, size_t index, prism_context **context,
                         const prism_geometry **geometry);
    /* One share of a run cut among several callers (MPI ranks, say): with
     * stride > 1 the run's `source->count` photons are cut into batches of
     * `batch` photons (required), and this call propagates batches phase,
     * phase + stride, phase + 2 stride, ... of them (each carrying its
     * photons' run indices), so `stride` callers with phases 0..stride-1
     * cover the run, batch k on caller k mod stride. 0 or 1: the whole run. */
    uint32_t stride, phase;
    /* The other way to share a run among callers: where claim is set, each
     * batch is claimed from a cursor the callers share (in their memory, a
     * file, a window of another process's), so that a caller that starts
     * early or runs fast takes more of the run. `batch` is required (each
     * claim holds at most that many photons); stride must be 0 or 1; the
     * source's count is the whole run's. */
    prism_propagate_claim_fn claim;
    /* Optional, with claim or without: told each batch's hit count before
     * the sink has it. Callers that claim from a shared cursor and write
     * one file learn where each batch's hits go from the counts of the
     * batches claimed before it; told here, a caller's count does not wait
     * behind its own sink, which may be waiting for another caller's. */
    prism_propagate_counted_fn counted;
    /* Optional: called on the calling thread once every batch has reached
     * the sink and every context's thread has ended, before the call
     * releases its memory (the slots' page-locked host memory, the
     * devices' scratch): a caller that completes its outputs here need not
     * wait for that release. Anything but PRISM_SUCCESS fails the call. */
    prism_result (*done)(void *user);
} prism_propagate_stream_desc;

/** The photons a strided prism_propagate_stream call propagates: those of
 * batches phase, phase + stride, ... of a run of `count` photons cut into
 * batches of `batch` (the last one short), as stream->stride and ->phase
 * describe. stride 0 or 1: the whole run, `count`; otherwise 0 when batch
 * is 0 or phase >= stride. For a caller's progress and its share of the output before the
 * run (under MPI, a rank's).
 * @thread_safety Any thread. */
PRISM_API uint64_t prism_propagate_stream_photons(uint64_t count, size_t batch, uint32_t stride,
                                                  uint32_t phase);

/** The photons of the next batch when `left` photons of a run remain to be
 * taken by `contexts` contexts in batches of at most `batch`: the batch,
 * but near the end no more than half a context's share of what is left,
 * so that the contexts finish together rather than one working through a
 * whole last batch alone; never below a quarter of the batch nor 2^16
 * (each batch costs its own launches), never above the batch, never above
 * `left`. One context: the batch (or `left`). prism_propagate_stream cuts
 * its own batches so; a claim callback shared by several callers cuts
 * the batches it hands out so, counting every caller's contexts.
 * @thread_safety Any thread. */
PRISM_API uint64_t prism_propagate_stream_cut(uint64_t left, uint64_t batch, uint64_t contexts);

/** A run of any size on one or more contexts, as a pipeline: each context
 * has its own thread that takes the next batch, propagates it, tallies the
 * summary and selects the hits on its device, and copies back only the
 * hits (and the final photons or records when asked) into one of two
 * buffers of its own, while the sink consumes the batches before it in
 * photon order on the stream's thread. So a device never waits for the
 * host unless the sink is slower than the devices (shares[i].wait_seconds
 * says), and host memory is two batches' outputs a context. Photon i draws
 * the numbers of photon desc->first_photon + i, so what the sink gets is,
 * byte for byte, what one prism_propagate call would give, whatever the
 * batch size and the number of contexts. `count` may exceed 2^32-1.
 * stats: the sums of the calls', seconds the wall time; shares (n, or
 * NULL): what each context did.
 * A GENSTEPS source needs no fill: each batch makes its photons
 * [first, first + count) from the whole genstep array.
 * @errors PRISM_ERROR_INVALID_ARGUMENT (NULL arrays or sink, n 0 or above
 *   64, a context listed twice, a geometry of another context, a zero
 *   count, records asked with record_steps 0, a NULL context without
 *   join, a stride without a batch size or with phase >= stride, gensteps
 *   as prism_propagate refuses them), PRISM_ERROR_OUT_OF_MEMORY (the host
 *   buffers), then whatever
 *   prism_propagate, the sink, fill, join or done returned; errors are reported
 *   on contexts[0], naming the context.
 * @thread_safety The contexts are used from threads of the call's own;
 *   none of them may be in use elsewhere meanwhile. */
PRISM_API prism_result prism_propagate_stream(prism_context *const *contexts,
                                              const prism_geometry *const *geometries, size_t n,
                                              const prism_photon_source *source,
                                              const prism_propagate_desc *desc,
                                              const prism_propagate_stream_desc *stream,
                                              prism_propagate_stats *stats,
                                              prism_propagate_share *shares);

/** The memory a photon of one prism_propagate call on ctx takes where its
 * kernels run: its state, staged for a host output (64 bytes), two queue
 * slots and the hits' selection index (12), the wavefront's hit record
 * (16; none under the megakernel scheme), its input for a PHOTONS source
 * (64; a GENSTEPS source needs none a photon: its gensteps are a few
 * bytes each, left out) and its records (32 x desc->record_steps).
 * @errors none (0 for a NULL ctx).
 * @thread_safety As the context: one thread at a time. */
PRISM_API size_t prism_propagate_photon_bytes(const prism_context *ctx, prism_source_kind kind,
                                              const prism_propagate_desc *desc);

/** How many photons one prism_propagate call on `geometry` can take: the
 * device memory free now (prism_device_memory_info), less the reserve the
 * geometry's placement kept (prism_upload_report.reserve), divided by what
 * a photon needs there (prism_propagate_photon_bytes). At most 2^32-1. A
 * larger run is split into calls of at most this many photons, with
 * desc.first_photon advancing.
 * @errors PRISM_ERROR_INVALID_ARGUMENT (NULL ctx/geometry/count, a
 *   geometry of another context), PRISM_ERROR_OUT_OF_DEVICE_MEMORY (not
 *   one photon fits; the message gives the figures), PRISM_ERROR_CUDA.
 * @thread_safety As the context: one thread at a time. */
PRISM_API prism_result prism_propagate_batch_limit(prism_context *ctx,
                                                   const prism_geometry *geometry,
                                                   prism_source_kind kind,
                                                   const prism_propagate_desc *desc, size_t *count);

/** Select photons where they are: of the `count` prism_photon at the start
 * of `photons` (a buffer of ctx the kernels reach: device, mapped, managed
 * memory or a view, e.g. prism_propagate's photons target), those whose
 * history has any bit of `any_of` (PRISM_SURFACE_DETECT: the hits) are
 * copied, in photon order, to the start of `out`; *selected gets how many.
 * `out` NULL: count only. Results left in device memory are filtered there,
 * without crossing PCIe.
 * @errors PRISM_ERROR_INVALID_ARGUMENT (NULL ctx/photons/selected, a buffer
 *   of another context or one the kernels cannot reach),
 *   PRISM_ERROR_OUT_OF_RANGE (count beyond the photons buffer; more photons
 *   selected than `out` holds: nothing is written, *selected is set),
 *   PRISM_ERROR_OUT_OF_DEVICE_MEMORY, PRISM_ERROR_CUDA.
 * @thread_safety As the context: one thread at a time. */
PRISM_API prism_result prism_photons_select(prism_context *ctx, const prism_buffer *photons,
                                            size_t count, uint32_t any_of, prism_buffer *out,
                                            size_t *selected);

/** The bit a photon's walk ended with, by its history: NAN_ABORT, then
 * STEP_LIMIT, SURFACE_DETECT, SURFACE_ABSORB, BULK_ABSORB, NO_HIT (the
 * first set, should a photon carry two); -1 for none (still alive).
 * @errors None.
 * @thread_safety Any thread. */
PRISM_API int prism_photon_end_bit(uint32_t history);

/** The name of one history bit ("SURFACE_DETECT"), or "?" .
 * @errors None.
 * @thread_safety Any thread. */
PRISM_API const char *prism_history_flag_name(uint32_t bit);

#ifdef __cplusplus
}
#endif

#endif
