/* prism_propagate: checks the source, generates the photons, then runs the
 * step loop in short launches (a slice of the queue, a few steps each),
 * compacting survivors into the next queue between them as Chroma did, so
 * no launch runs long enough for a display watchdog to kill it. */
#include "propagate_internal.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "engine/upload/geometry_internal.h"
#include "engine/backend.h"
#include "kernel_state.h"
#include "engine/upload/optics_tables.h"
#include "gensteps_source.h"
#include "prism/device/photon.h"
#include "prism/memory.h"
#include "propagate_scheme.h"
#include "summary.h"
#include "target.h"

static prism_result check_source(prism_context *ctx, const prism_photon_source *s,
                                 prism_source_params *p)
{
    if (s->count == 0 || s->count > UINT32_MAX)
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                            "propagate: photon count %zu is not in 1..2^32-1", s->count);
    if (s->kind != PRISM_SOURCE_POINT && s->kind != PRISM_SOURCE_BEAM &&
        s->kind != PRISM_SOURCE_PHOTONS && s->kind != PRISM_SOURCE_GENSTEPS)
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT, "propagate: unknown source kind %d",
                            (int)s->kind);
    if (s->kind == PRISM_SOURCE_PHOTONS && s->photons == NULL)
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                            "propagate: a PHOTONS source without photons");
    pv3 dir = pv3_load(s->direction);
    if (s->kind == PRISM_SOURCE_BEAM && !(pv3_length(dir) > 0.0f && pv3_finite(dir)))
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                            "propagate: beam direction is zero or not finite");
    if (s->kind == PRISM_SOURCE_BEAM &&
        !(s->radius >= 0.0f && s->divergence >= 0.0f && s->divergence <= 3.14159266f))
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                            "propagate: beam radius %g or divergence %g out of range",
                            (double)s->radius, (double)s->divergence);
    p->kind = (uint32_t)s->kind;
    p->position = pv3_load(s->position);
    p->direction = pv3_normalize(dir);
    p->radius = s->radius;
    p->cos_divergence = cosf(s->divergence);
    p->wavelength_min = s->wavelength_nm == 0.0f ? 420.0f : s->wavelength_nm;
    p->wavelength_max = s->wavelength_max_nm;
    p->time = s->time;
    return PRISM_SUCCESS;
}

PRISM_STATIC_ASSERT(PRISM_PROPAGATE_MAX_PHOTON_INDEX == PRISM_RNG_MAX_PHOTONS,
                    "every photon index has its own random stream");

static prism_result check_desc(prism_context *ctx, const prism_propagate_desc *d, size_t count,
                               prism_propagate_params *q, uint32_t *budget)
{
    if (d->record_steps > PRISM_PROPAGATE_MAX_RECORDS)
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                            "propagate: record_steps %u is above %u", d->record_steps,
                            PRISM_PROPAGATE_MAX_RECORDS);
    if ((unsigned)d->math > PRISM_PROPAGATE_MATH_FAST)
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT, "propagate: unknown math %d",
                            (int)d->math);
    if (d->first_photon > PRISM_PROPAGATE_MAX_PHOTON_INDEX - count)
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                            "propagate: photons %llu + %zu go beyond index 2^56",
                            (unsigned long long)d->first_photon, count);
    q->seed = d->seed;
    q->first_photon = d->first_photon;
    q->max_steps = d->max_steps == 0 ? 100u : d->max_steps;
    q->record_steps = d->record_steps;
    *budget = d->steps_per_launch != 0 ? d->steps_per_launch
              : ctx != NULL && ctx->backend == PRISM_BACKEND_CUDA
                  ? PRISM_PROPAGATE_STEPS_PER_LAUNCH_CUDA
                  : PRISM_PROPAGATE_STEPS_PER_LAUNCH;
    return PRISM_SUCCESS;
}

void prism__propagate_tally(const prism_photon *photons, size_t count, prism_propagate_stats *st)
{
    uint64_t steps = 0;
    uint32_t any = 0;
    size_t detected = 0, limited = 0;
    float latest = -INFINITY;
    for (size_t i = 0; i < count; i++) {
        if (isfinite(photons[i].time) && photons[i].time > latest)
            latest = photons[i].time;
        steps += photons[i].steps;
        any |= photons[i].history;
        detected += (photons[i].history & PRISM_SURFACE_DETECT) != 0;
        limited += (photons[i].history & PRISM_STEP_LIMIT) != 0;
    }
    st->steps = steps;
    st->history_or = any;
    st->detected = detected;
    st->step_limited = limited;
    st->time_max = latest == -INFINITY ? 0.0f : latest;
}

/* The default: the wavefront, measured faster than the megakernel in
 * device memory (where its trace kernel walks the wide tree, or the tuned
 * binary one where there is no wide tree) and in mapped memory (on the
 * shared walk); prism-bench propagate --scheme compares them, and the
 * README has the figures. */
#define PRISM_PROPAGATE_SCHEME_DEFAULT PRISM__SCHEME_WAVE

static const char *const scheme_names[PRISM__SCHEMES] = {"auto", "mega", "wave", "wave-generic"};

int prism__propagate_scheme_parse(const char *name)
{
    for (int i = 0; name != NULL && i < PRISM__SCHEMES; i++)
        if (strcmp(name, scheme_names[i]) == 0)
            return i;
    return -1;
}

static const char *const sort_names[PRISM__SORTS] = {"none", "pos", "dirpos"};

int prism__propagate_sort_from_env(void)
{
    const char *e = getenv("PRISM_PROPAGATE_SORT");
    for (int i = 0; e != NULL && i < PRISM__SORTS; i++)
        if (strcmp(e, sort_names[i]) == 0)
            return i;
    return PRISM__SORT_DIRPOS;
}

/* A count from the environment, or `otherwise` where it is unset. */
static uint32_t env_count(const char *name, uint32_t otherwise)
{
    const char *e = getenv(name);
    return e != NULL ? (uint32_t)strtoul(e, NULL, 10) : otherwise;
}

void prism__propagate_settings_init(struct prism_kernel_state *k)
{
    const int scheme = prism__propagate_scheme_parse(getenv("PRISM_PROPAGATE_SCHEME"));
    k->scheme_default = scheme > PRISM__SCHEME_AUTO ? scheme : PRISM_PROPAGATE_SCHEME_DEFAULT;
    k->sort_choice = prism__propagate_sort_from_env();
    k->tail_steps = env_count("PRISM_PROPAGATE_TAIL_STEPS", PRISM_PROPAGATE_TAIL_STEPS);
    k->tail_photons = env_count("PRISM_PROPAGATE_TAIL_PHOTONS", PRISM_PROPAGATE_TAIL_PHOTONS);
}

int prism__propagate_tail(prism_context *ctx, int steps)
{
    if (ctx == NULL || ctx->kernels == NULL)
        return 0;
    ctx->kernels->tail_steps = steps >= 0 ? (uint32_t)steps : PRISM_PROPAGATE_TAIL_STEPS;
    return 1;
}

const char *prism__propagate_sort_name(int sort)
{
    return sort >= 0 && sort < PRISM__SORTS ? sort_names[sort] : "?";
}

const char *prism__propagate_scheme_name(int scheme)
{
    return scheme >= 0 && scheme < PRISM__SCHEMES ? scheme_names[scheme] : "?";
}

int prism__propagate_scheme(prism_context *ctx, int scheme)
{
    if (ctx == NULL || ctx->kernels == NULL || scheme < 0 || scheme >= PRISM__SCHEMES)
        return 0;
    ctx->kernels->propagate_scheme = scheme;
    return 1;
}

int prism__propagate_scheme_get(const prism_context *ctx)
{
    if (ctx == NULL || ctx->be->propagate_wave == NULL)
        return PRISM__SCHEME_MEGA; /* the only one the backend has */
    const struct prism_kernel_state *k = ctx->kernels;
    if (k == NULL)
        return PRISM_PROPAGATE_SCHEME_DEFAULT;
    return k->propagate_scheme != PRISM__SCHEME_AUTO ? k->propagate_scheme : k->scheme_default;
}

typedef struct run_state {
    prism__scratch given, queue[2], counter;
    prism__scratch gensteps, offsets; /* GENSTEPS: the call's range of them */
    prism_propagate_math math;
    int scheme;          /* PRISM__SCHEME_MEGA or a wavefront */
    prism__scratch hits; /* the wavefront's hit records, hits_capacity of them */
    prism__scratch sort; /* the wavefront's queue sort (kernel_state.h), when on */
    uint32_t hits_capacity;
    uint32_t tail_steps; /* the megakernel's steps a launch in the wavefront's tail */
} run_state;

static void run_release(prism_context *ctx, run_state *w)
{
    if (ctx->kernels != NULL) {
        ctx->kernels->sort_scratch = NULL;
        ctx->kernels->sort_bytes = 0;
        ctx->kernels->sort_mode = 0;
    }
    prism__scratch_release(&w->sort);
    prism__scratch_release(&w->hits);
    prism__scratch_release(&w->given);
    prism__scratch_release(&w->gensteps);
    prism__scratch_release(&w->offsets);
    prism__scratch_release(&w->queue[0]);
    prism__scratch_release(&w->queue[1]);
    prism__scratch_release(&w->counter);
}

static prism_result run_alloc(prism_context *ctx, const prism_photon_source *s, run_state *w)
{
    size_t qbytes = s->count * sizeof(uint32_t);
    prism_result r = prism__scratch_alloc(ctx, &w->queue[0], qbytes, "propagate.queue");
    if (r == PRISM_SUCCESS)
        r = prism__scratch_alloc(ctx, &w->queue[1], qbytes, "propagate.queue");
    if (r == PRISM_SUCCESS)
        r = prism__scratch_alloc(ctx, &w->counter, sizeof(uint32_t), "propagate.counter");
    if (r == PRISM_SUCCESS && s->kind == PRISM_SOURCE_PHOTONS)
        r = prism__scratch_upload(ctx, &w->given, s->photons, s->count * sizeof(prism_photon),
                                  "propagate.photons_in");
    if (r == PRISM_SUCCESS && w->scheme != PRISM__SCHEME_MEGA) {
        /* one record a photon of a launch: no launch takes more than the
         * largest slice (launch_steps cuts any that would) */
        w->hits_capacity = s->count < PRISM_PROPAGATE_MAX_SLICE ? (uint32_t)s->count
                                                                : PRISM_PROPAGATE_MAX_SLICE;
        r = prism__scratch_alloc(ctx, &w->hits, (size_t)w->hits_capacity * sizeof(prism_trace_hit),
                                 "propagate.hits");
        /* the queue's order (propagate_scheme.h): keys, sorted keys and
         * sorted queue a photon, and cub's temporaries; none for a call
         * too small to sort (a viewer's each frame) */
        const int mode = s->count >= PRISM__SORT_MIN_PHOTONS && ctx->kernels != NULL
                             ? ctx->kernels->sort_choice
                             : PRISM__SORT_NONE;
        const size_t bytes = (size_t)3 * w->hits_capacity * sizeof(uint32_t) + ((size_t)32 << 20);
        if (r == PRISM_SUCCESS && mode != PRISM__SORT_NONE && ctx->kernels != NULL &&
            prism__scratch_alloc(ctx, &w->sort, bytes, "propagate.sort") == PRISM_SUCCESS) {
            ctx->kernels->sort_mode = mode;
            ctx->kernels->sort_scratch = w->sort.pointer;
            ctx->kernels->sort_bytes = bytes;
        }
    }
    return r;
}

/* The gensteps [g0, g1] the call's photons come from, and their offsets,
 * where the kernels read them: a few bytes a genstep, not a photon's 64. */
static prism_result upload_gensteps(prism_context *ctx, const prism__genstep_run *gr, size_t g0,
                                    size_t g1, run_state *w, prism_source_params *sp)
{
    const size_t n = g1 - g0 + 1;
    prism_result r = prism__scratch_upload(ctx, &w->gensteps, gr->all + g0,
                                           n * sizeof(prism_genstep), "propagate.gensteps");
    if (r == PRISM_SUCCESS)
        r = prism__scratch_upload(ctx, &w->offsets, gr->offsets + g0, (n + 1) * sizeof(uint64_t),
                                  "propagate.genstep_offsets");
    sp->gensteps = w->gensteps.pointer;
    sp->genstep_offsets = w->offsets.pointer;
    sp->genstep_count = (uint32_t)n;
    return r;
}

static prism_result launch_generate(prism_context *ctx, const prism_source_params *sp,
                                    const prism_optics_view *o, const prism_propagate_params *q,
                                    run_state *w, prism_photon *photons, prism_step_record *records,
                                    uint32_t count)
{
    const prism_photon *given = w->given.pointer;
    return ctx->be->generate(ctx, w->math, sp, o, q, given, photons, records, w->queue[0].pointer,
                             count);
}

static prism_result launch_steps(prism_context *ctx, const prism_geometry_view *g,
                                 const prism_optics_view *o, const prism_propagate_params *q,
                                 prism_photon *photons, prism_step_record *records,
                                 const uint32_t *in, uint32_t n, uint32_t *out, uint32_t *n_out,
                                 uint32_t budget, run_state *w, bool tail)
{
    /* The wavefront's tail: where too few photons live to fill the device,
     * each step's launch pair, counter reset and read-back may cost more
     * than the step, so the megakernel may take several steps a launch
     * there (the same photons: a photon's numbers depend on its index and
     * step only). w->tail_steps: those steps; 0 keeps the wavefront. It
     * halves the launches of a call and gains a little (the README has the
     * figures): a long-lived photon's steps are serial either way. */
    const uint32_t tail_steps = tail && w->scheme != PRISM__SCHEME_MEGA ? w->tail_steps : 0;
    if (w->scheme == PRISM__SCHEME_MEGA || tail_steps > 0)
        return ctx->be->propagate(ctx, w->math, g, o, q, photons, records, in, n, out, n_out,
                                  tail_steps > 0 ? tail_steps : budget, w->counter.pointer);
    /* The wavefront: one step a trace and physics launch pair, whatever the
     * budget (each step ends with a compaction). The trace walks the wide
     * tree where the upload made one (faster for photons in either memory);
     * else the tuned binary walk, built for geometry all in device memory. */
    const int tuned = w->scheme == PRISM__SCHEME_WAVE && g->device_resident && g->node_count > 0 &&
                      g->wide_count == 0;
    prism_result r = PRISM_SUCCESS;
    uint32_t total = 0;
    for (uint32_t done = 0; done < n && r == PRISM_SUCCESS;) {
        const uint32_t take = n - done < w->hits_capacity ? n - done : w->hits_capacity;
        uint32_t alive = 0;
        r = ctx->be->propagate_wave(ctx, w->math, g, o, q, photons, records, in + done, take,
                                    out + total, &alive, w->counter.pointer, w->hits.pointer,
                                    tuned);
        total += alive;
        done += take;
    }
    *n_out = total;
    return r;
}

/* Photons in the next launch: on CUDA, scaled so a launch takes about
 * PRISM_PROPAGATE_LAUNCH_SECONDS by the last one's photons per second (a
 * geometry in mapped memory, or a long-lived photon mix, is slower); the
 * host backend has no watchdog, so it takes a fixed large slice. */
static uint32_t next_slice(const prism_context *ctx, uint32_t slice, uint32_t done, double seconds)
{
    if (ctx->backend != PRISM_BACKEND_CUDA)
        return PRISM_PROPAGATE_PHOTONS_PER_LAUNCH;
    if (done == 0 || !(seconds > 0.0))
        return slice;
    double rate = (double)done / seconds, want = rate * PRISM_PROPAGATE_LAUNCH_SECONDS;
    if (want > 2.0 * slice) /* grow gently: the next slice may be slower */
        want = 2.0 * slice;
    if (want < PRISM_PROPAGATE_MIN_SLICE)
        want = PRISM_PROPAGATE_MIN_SLICE;
    return want > PRISM_PROPAGATE_MAX_SLICE ? PRISM_PROPAGATE_MAX_SLICE : (uint32_t)want;
}

/* The step loop: slices of the queue, `budget` steps each, survivors
 * appended to the other queue; until none is left. Slicing changes no
 * result (a photon's numbers depend on its index and step only). */
static prism_result step_loop(prism_context *ctx, const prism_geometry_view *g,
                              const prism_optics_view *o, const prism_propagate_params *q,
                              prism_photon *photons, prism_step_record *records, uint32_t count,
                              uint32_t budget, run_state *w, prism_propagate_stats *st)
{
    unsigned *launches = &st->launches;
    const uint32_t tail = count / 16; /* below this many live photons: the tail */
    /* The megakernel's part in the wavefront's tail (launch_steps):
     * tail_steps steps a launch once fewer than tail_photons live (the
     * context's settings; a photon's result does not depend on them). */
    struct prism_kernel_state *k = ctx->kernels;
    w->tail_steps = k->tail_steps;
    const uint32_t few = k->tail_photons;
    const bool known = k->slice_geometry == g->nodes_head && k->slice > 0;
    uint32_t n = count,
             slice = next_slice(ctx, known ? k->slice : PRISM_PROPAGATE_FIRST_SLICE, 0, 0.0);
    uint32_t grown = 0; /* the largest slice a full launch measured */
    int cur = 0;
    prism_result r = PRISM_SUCCESS;
    while (n > 0 && r == PRISM_SUCCESS) {
        const uint32_t *in = w->queue[cur].pointer;
        uint32_t *out = w->queue[1 - cur].pointer, survivors = 0;
        for (uint32_t off = 0; off < n && r == PRISM_SUCCESS;) {
            uint32_t take = n - off < slice ? n - off : slice, alive = 0;
            double t0 = omp_get_wtime();
            k->urgent = n < few; /* each launch ends synchronised: the streams stay in order */
            r = launch_steps(ctx, g, o, q, photons, records, in + off, take, out + survivors,
                             &alive, budget, w, n < few);
            k->urgent = false;
            if (take == slice && slice > grown)
                grown = slice;
            const double took = omp_get_wtime() - t0;
            slice = next_slice(ctx, slice, take, took);
            if (n < tail) {
                st->tail_seconds += took;
                st->tail_launches++;
            }
            survivors += alive;
            off += take;
            (*launches)++;
        }
        n = survivors;
        cur = 1 - cur;
    }
    if (r == PRISM_SUCCESS && grown > 0) {
        k->slice_geometry = g->nodes_head;
        k->slice = grown;
    }
    return r;
}

/* The call's summary, added to `into`, and the stats' photon figures taken
 * from it: one pass over the photons where the tally would be a second. */
static prism_result summarise(prism_context *ctx, const prism_photon *photons, uint32_t count,
                              prism_propagate_summary *into, prism_propagate_stats *st)
{
    /* this call's counts alone; detections per solid go straight to the
     * caller's array */
    prism_propagate_summary call = {.detected_by_solid = into->detected_by_solid,
                                    .solids = into->solids};
    prism_result r = ctx->be->summary(ctx, photons, count, &call);
    if (r != PRISM_SUCCESS)
        return r;
    st->steps = call.steps;
    st->detected = (size_t)call.flagged[2];      /* SURFACE_DETECT */
    st->step_limited = (size_t)call.flagged[30]; /* STEP_LIMIT */
    st->history_or = 0;
    for (int b = 0; b < 32; b++)
        st->history_or |= call.flagged[b] != 0 ? 1u << b : 0u;
    st->time_max = call.timed > 0 ? call.time_max : 0.0f;
    call.detected_by_solid = NULL; /* already added */
    prism__summary_merge(into, &call);
    return PRISM_SUCCESS;
}

/* The photons generated, then (steps) propagated. */
static prism_result view_run(prism_context *ctx, const prism_geometry_view *g,
                             const prism_optics_view *o, const prism_photon_source *source,
                             const prism_propagate_desc *desc, prism_photon *photons,
                             prism_step_record *records, prism_propagate_summary *summary,
                             prism_propagate_stats *stats, bool steps)
{
    double t0 = omp_get_wtime();
    static const prism_propagate_desc zero_desc;
    if (ctx == NULL || g == NULL || source == NULL || photons == NULL)
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                            "propagate: NULL context, geometry, source or photons");
    prism_source_params sp;
    memset(&sp, 0, sizeof sp);
    prism_propagate_params q;
    uint32_t budget = 0;
    if (desc == NULL)
        desc = &zero_desc;
    /* GENSTEPS: read and numbered first, so that a count of 0 is known */
    prism_photon_source src = *source;
    prism__genstep_run gr;
    memset(&gr, 0, sizeof gr);
    const bool gensteps = source->kind == PRISM_SOURCE_GENSTEPS;
    prism_result r = PRISM_SUCCESS;
    if (gensteps) {
        r = prism__gensteps_open(ctx, source, "propagate", &gr);
        if (r == PRISM_SUCCESS)
            r = prism__gensteps_resolve(ctx, &gr, desc->first_photon, &src.count, "propagate");
    }
    if (r == PRISM_SUCCESS)
        r = check_source(ctx, &src, &sp);
    if (r == PRISM_SUCCESS)
        r = check_desc(ctx, desc, src.count, &q, &budget);
    size_t g0 = 0, g1 = 0;
    if (r == PRISM_SUCCESS && gensteps) {
        prism__gensteps_range(&gr, desc->first_photon, src.count, &g0, &g1);
        r = prism__gensteps_check(ctx, &gr, g0, g1, o != NULL ? o->material_count : 0, "propagate");
    }
    if (r != PRISM_SUCCESS) {
        prism__gensteps_close(&gr);
        return r;
    }
    sp.seed = q.seed;
    if (records == NULL)
        q.record_steps = 0;
    prism_propagate_stats st = {0};
    run_state w;
    memset(&w, 0, sizeof w);
    w.math = desc->math;
    w.scheme = steps ? prism__propagate_scheme_get(ctx) : PRISM__SCHEME_MEGA;
    r = run_alloc(ctx, &src, &w);
    if (r == PRISM_SUCCESS && gensteps)
        r = upload_gensteps(ctx, &gr, g0, g1, &w, &sp);
    prism__gensteps_close(&gr);
    uint32_t count = (uint32_t)src.count;
    const double t_generate = omp_get_wtime();
    if (r == PRISM_SUCCESS)
        r = launch_generate(ctx, &sp, o, &q, &w, photons, records, count);
    st.generate_seconds = omp_get_wtime() - t_generate;
    if (r == PRISM_SUCCESS && steps)
        r = step_loop(ctx, g, o, &q, photons, records, count, budget, &w, &st);
    run_release(ctx, &w);
    if (!steps) {
        st.seconds = omp_get_wtime() - t0;
        if (stats != NULL)
            *stats = st;
        return r;
    }
    const double t_tally = omp_get_wtime();
    if (r == PRISM_SUCCESS && summary != NULL)
        r = summarise(ctx, photons, count, summary, &st);
    else if (r == PRISM_SUCCESS)
        r = ctx->be->tally(ctx, photons, count, &st); /* photons where the kernels are */
    st.tally_seconds = omp_get_wtime() - t_tally;
    st.seconds = omp_get_wtime() - t0;
    if (stats != NULL)
        *stats = st;
    return r;
}

prism_result prism__propagate_view(prism_context *ctx, const prism_geometry_view *g,
                                   const prism_optics_view *o, const prism_photon_source *source,
                                   const prism_propagate_desc *desc, prism_photon *photons,
                                   prism_step_record *records, prism_propagate_summary *summary,
                                   prism_propagate_stats *stats)
{
    return view_run(ctx, g, o, source, desc, photons, records, summary, stats, true);
}

static bool wanted(const prism_target *t)
{
    return t->kind != PRISM_TARGET_HOST || t->host != NULL;
}

/* The photons of photons[0, count) with any bit of `mask`, in order. */
static prism_result select_hits(prism_context *ctx, const prism_photon *photons, size_t count,
                                uint32_t mask, prism_photon *out, size_t capacity, size_t *n)
{
    return ctx->be->select(ctx, photons, count, mask, out, capacity, n);
}

/* The staging of `copy` at least `bytes` long, grown with half again to
 * spare (rounded to whole MB) so that the batches after it do not each
 * reallocate; it holds no copy in flight (the holder waited). */
static prism_result staging_for(prism_context *ctx, prism__hits_copy *copy, size_t bytes)
{
    if (copy->staging != NULL && copy->staging_bytes >= bytes)
        return PRISM_SUCCESS;
    prism_buffer_release(copy->staging);
    copy->staging = NULL;
    copy->staging_bytes = 0;
    const size_t mb = (size_t)1 << 20;
    const size_t want = (bytes + bytes / 2 + mb - 1) / mb * mb;
    prism_result r = prism_buffer_create_device(ctx, want, "propagate.hits_copy", &copy->staging);
    if (r == PRISM_SUCCESS)
        copy->staging_bytes = want;
    return r;
}

/* n hits of photons[0, count) into the host target `host` through `copy`:
 * selected into its staging, then copied on its stream (made at first use)
 * and left in flight, or copied at once when larger than its async_bytes. */
static prism_result hits_by_copy(prism_context *ctx, const prism_photon *photons, size_t count,
                                 uint32_t mask, size_t n, prism_photon *host,
                                 prism__hits_copy *copy)
{
    const size_t bytes = n * sizeof(prism_photon);
    prism_result r = staging_for(ctx, copy, bytes);
    size_t again = 0;
    if (r == PRISM_SUCCESS)
        r = select_hits(ctx, photons, count, mask, prism_buffer_device_pointer(copy->staging), n,
                        &again);
    if (r != PRISM_SUCCESS)
        return r;
    if (copy->before != NULL)
        copy->before(copy, copy->before_user);
    if (bytes > copy->async_bytes)
        return prism_buffer_read(copy->staging, 0, host, bytes);
    if (copy->stream == NULL && (r = prism_stream_create(ctx, &copy->stream)) != PRISM_SUCCESS)
        return r;
    r = prism_buffer_read_async(copy->staging, 0, host, bytes, copy->stream);
    copy->pending = r == PRISM_SUCCESS;
    return r;
}

prism_result prism__hits_copy_wait(prism__hits_copy *copy)
{
    if (copy == NULL || !copy->pending)
        return PRISM_SUCCESS;
    copy->pending = false;
    return prism_stream_synchronize(copy->stream);
}

void prism__hits_copy_release(prism__hits_copy *copy)
{
    if (copy == NULL)
        return;
    prism__hits_copy_wait(copy);
    prism_stream_destroy(copy->stream);
    prism_buffer_release(copy->staging);
    *copy = (prism__hits_copy){0};
}

/* outputs->hits from the final photons where they are: counted, then only
 * the hits written to the target (on CUDA: selected on the device, and
 * only they copied back; through `copy` when one is given and the target
 * is host memory). */
static prism_result take_hits(prism_context *ctx, const prism_propagate_outputs *o,
                              const prism_photon *photons, size_t count,
                              const prism_propagate_stats *st, prism__hits_copy *copy, size_t *hits)
{
    const uint32_t mask = o->hit_mask != 0 ? o->hit_mask : PRISM_SURFACE_DETECT;
    const size_t capacity = o->hits_capacity != 0 ? o->hits_capacity : count;
    size_t n = st->detected; /* the tally counted the default mask's already */
    prism_result r = PRISM_SUCCESS;
    if (mask != PRISM_SURFACE_DETECT)
        r = select_hits(ctx, photons, count, mask, NULL, 0, &n);
    if (r != PRISM_SUCCESS)
        return r;
    *hits = n;
    if (n > capacity)
        return prism__error(ctx, PRISM_ERROR_OUT_OF_RANGE,
                            "propagate: %zu hits, the hits output holds %zu", n, capacity);
    if (n == 0)
        return PRISM_SUCCESS;
    if (copy != NULL && o->hits.kind == PRISM_TARGET_HOST)
        return hits_by_copy(ctx, photons, count, mask, n, o->hits.host, copy);
    prism_target t = o->hits;
    t.row_bytes = 0;
    prism__target_map map;
    r = prism__target_begin(ctx, &t, n * sizeof(prism_photon), 1, "propagate.hits", &map);
    if (r != PRISM_SUCCESS)
        return r;
    size_t again = 0;
    r = select_hits(ctx, photons, count, mask, map.pointer, n, &again);
    const prism_result e = prism__target_end(ctx, &map, r == PRISM_SUCCESS);
    return r != PRISM_SUCCESS ? r : e;
}

static prism_result check_outputs(prism_context *ctx, const prism_propagate_outputs *out,
                                  const prism_propagate_desc *desc)
{
    bool want_records = out->records.kind != PRISM_TARGET_HOST || out->records.host != NULL;
    if (want_records && (desc == NULL || desc->record_steps == 0))
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                            "propagate: a records output but record_steps is 0");
    return PRISM_SUCCESS;
}

static prism_result call(prism_context *ctx, const prism_geometry *geometry,
                         const prism_photon_source *source, const prism_propagate_desc *desc,
                         const prism_propagate_outputs *outputs, prism_propagate_stats *stats,
                         bool steps, prism__hits_copy *copy)
{
    if (ctx == NULL || geometry == NULL || source == NULL || outputs == NULL)
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                            "propagate: NULL context, geometry, source or outputs");
    if (prism__geometry_context(geometry) != ctx)
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                            "propagate: the geometry belongs to another context");
    prism_result r = check_outputs(ctx, outputs, desc);
    if (r != PRISM_SUCCESS)
        return r;
    /* A GENSTEPS source's count of 0: the gensteps' photons from first_photon on */
    prism_photon_source resolved = *source;
    if (source->kind == PRISM_SOURCE_GENSTEPS && source->count == 0) {
        prism__genstep_run gr;
        r = prism__gensteps_open(ctx, source, "propagate", &gr);
        if (r == PRISM_SUCCESS)
            r = prism__gensteps_resolve(ctx, &gr, desc != NULL ? desc->first_photon : 0,
                                        &resolved.count, "propagate");
        prism__gensteps_close(&gr);
        if (r != PRISM_SUCCESS)
            return r;
    }
    source = &resolved;
    prism__target_map ph, rec;
    memset(&rec, 0, sizeof rec);
    size_t k = desc != NULL ? desc->record_steps : 0;
    prism_target pt = outputs->photons, rt = outputs->records;
    pt.row_bytes = rt.row_bytes = 0;
    r = prism__target_begin(ctx, &pt, source->count * sizeof(prism_photon), 1, "propagate.photons",
                            &ph);
    bool want_records = rt.kind != PRISM_TARGET_HOST || rt.host != NULL;
    if (r == PRISM_SUCCESS && want_records)
        r = prism__target_begin(ctx, &rt, source->count * k * sizeof(prism_step_record), 1,
                                "propagate.records", &rec);
    if (r == PRISM_SUCCESS) {
        prism_geometry_view view;
        r = prism__geometry_map(geometry, &view);
        if (r == PRISM_SUCCESS) {
            prism_propagate_stats st = {0};
            r = view_run(ctx, &view, prism__optics_view(prism__geometry_optics(geometry)), source,
                         desc, ph.pointer, want_records ? rec.pointer : NULL, outputs->summary, &st,
                         steps);
            if (r == PRISM_SUCCESS && wanted(&outputs->hits)) {
                const double t_hits = omp_get_wtime();
                r = take_hits(ctx, outputs, ph.pointer, source->count, &st, copy, &st.hits);
                st.hits_seconds = omp_get_wtime() - t_hits;
            }
            if (stats != NULL)
                *stats = st;
            prism_result u = prism__geometry_unmap(geometry);
            if (r == PRISM_SUCCESS)
                r = u;
        }
    }
    prism_result e1 = want_records ? prism__target_end(ctx, &rec, r == PRISM_SUCCESS)
                                   : PRISM_SUCCESS;
    prism_result e0 = prism__target_end(ctx, &ph, r == PRISM_SUCCESS);
    return r != PRISM_SUCCESS ? r : (e1 != PRISM_SUCCESS ? e1 : e0);
}

prism_result prism_propagate(prism_context *ctx, const prism_geometry *geometry,
                             const prism_photon_source *source, const prism_propagate_desc *desc,
                             const prism_propagate_outputs *outputs, prism_propagate_stats *stats)
{
    return call(ctx, geometry, source, desc, outputs, stats, true, NULL);
}

prism_result prism__propagate_copying(prism_context *ctx, const prism_geometry *geometry,
                                      const prism_photon_source *source,
                                      const prism_propagate_desc *desc,
                                      const prism_propagate_outputs *outputs,
                                      prism_propagate_stats *stats, prism__hits_copy *copy)
{
    return call(ctx, geometry, source, desc, outputs, stats, true, copy);
}

prism_result prism_photons_generate(prism_context *ctx, const prism_geometry *geometry,
                                    const prism_photon_source *source,
                                    const prism_propagate_desc *desc, const prism_target *photons)
{
    if (photons == NULL)
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT, "photons_generate: NULL photons");
    prism_propagate_desc d = desc != NULL ? *desc : (prism_propagate_desc){0};
    d.record_steps = 0;
    const prism_propagate_outputs out = {.photons = *photons};
    return call(ctx, geometry, source, &d, &out, NULL, false, NULL);
}

size_t prism_propagate_photon_bytes(const prism_context *ctx, prism_source_kind kind,
                                    const prism_propagate_desc *desc)
{
    if (ctx == NULL)
        return 0;
    const size_t k = desc != NULL ? desc->record_steps : 0;
    /* the photons, the two queues and the hits' selection indices */
    return sizeof(prism_photon) + 3 * sizeof(uint32_t) +
           (kind == PRISM_SOURCE_PHOTONS ? sizeof(prism_photon) : 0) +
           k * sizeof(prism_step_record) +
           (prism__propagate_scheme_get(ctx) != PRISM__SCHEME_MEGA
                ? sizeof(prism_trace_hit) /* the wavefront's hit records */
                : 0);
}

prism_result prism_propagate_batch_limit(prism_context *ctx, const prism_geometry *geometry,
                                         prism_source_kind kind, const prism_propagate_desc *desc,
                                         size_t *count)
{
    if (ctx == NULL || geometry == NULL || count == NULL)
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                            "propagate_batch_limit: NULL context, geometry or count");
    if (prism__geometry_context(geometry) != ctx)
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                            "propagate_batch_limit: the geometry belongs to another context");
    *count = 0;
    size_t free_bytes = 0, total_bytes = 0;
    prism_result r = prism_device_memory_info(ctx, &free_bytes, &total_bytes);
    if (r != PRISM_SUCCESS)
        return r;
    const size_t reserve = prism_geometry_report(geometry)->reserve;
    const size_t per_photon = prism_propagate_photon_bytes(ctx, kind, desc);
    const size_t left = free_bytes > reserve ? free_bytes - reserve : 0;
    if (left < per_photon)
        return prism__error(ctx, PRISM_ERROR_OUT_OF_DEVICE_MEMORY,
                            "propagate_batch_limit: %.1f MB free, %.1f MB of it kept in reserve: "
                            "no room for a photon (%zu bytes)",
                            free_bytes / 1e6, reserve / 1e6, per_photon);
    *count = left / per_photon < UINT32_MAX ? left / per_photon : UINT32_MAX;
    return PRISM_SUCCESS;
}

int prism_photon_end_bit(uint32_t history)
{
    return prism_photon_ended(history);
}

const char *prism_history_flag_name(uint32_t bit)
{
    switch (bit) {
    case PRISM_NO_HIT: return "NO_HIT";
    case PRISM_BULK_ABSORB: return "BULK_ABSORB";
    case PRISM_SURFACE_DETECT: return "SURFACE_DETECT";
    case PRISM_SURFACE_ABSORB: return "SURFACE_ABSORB";
    case PRISM_RAYLEIGH_SCATTER: return "RAYLEIGH_SCATTER";
    case PRISM_REFLECT_DIFFUSE: return "REFLECT_DIFFUSE";
    case PRISM_REFLECT_SPECULAR: return "REFLECT_SPECULAR";
    case PRISM_SURFACE_REEMIT: return "SURFACE_REEMIT";
    case PRISM_SURFACE_TRANSMIT: return "SURFACE_TRANSMIT";
    case PRISM_BULK_REEMIT: return "BULK_REEMIT";
    case PRISM_REFRACT: return "REFRACT";
    case PRISM_TOTAL_INTERNAL: return "TOTAL_INTERNAL";
    case PRISM_STEP_LIMIT: return "STEP_LIMIT";
    case PRISM_NAN_ABORT: return "NAN_ABORT";
    default: return "?";
    }
}
