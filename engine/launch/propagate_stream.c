/* prism_propagate_stream: a run of any size as a pipeline. A thread per
 * context takes the next batch, propagates it with its hits and summary
 * made on its device, and leaves the batch's host outputs in one of its two
 * slots, the hits still being copied there on the slot's own stream while
 * the context starts its next batch; the calling thread waits for each
 * batch's copy, hands the batches to the sink in photon order and frees
 * their slots. A context waits only when both its slots are still queued
 * for the sink. Each batch's hit count is told (stream->counted) on its
 * context's thread as soon as it is known, ahead of the sink. */
#define _DEFAULT_SOURCE /* madvise */
#include <omp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "engine/context_internal.h"
#include "engine/memory/internal.h"
#include "engine/upload/geometry_internal.h"
#include "gensteps_source.h"
#include "propagate_internal.h"
#include "summary.h"
#include "target.h"

#define STREAM_MAX_CONTEXTS 64
#define STREAM_SLOTS 2
/* Automatic batches: at most PRISM_PROPAGATE_STREAM_MAX_BATCH photons (on
 * the host backend PRISM_PROPAGATE_STREAM_MAX_BATCH_HOST: its photons live
 * in host memory, touched, and it has no tails to pay), and no fewer than
 * a quarter of each context's fair share so that the contexts finish
 * together. */
#define STREAM_MAX_BATCH PRISM_PROPAGATE_STREAM_MAX_BATCH
#define STREAM_MIN_BATCH ((size_t)1 << 16)

typedef struct stream_run stream_run;

typedef struct stream_slot {
    prism_photon *hits, *photons, *input;
    prism_buffer *hits_pinned; /* CUDA: the start of `hits` page-locked (pinned_bytes) */
    size_t pinned_bytes;
    prism_step_record *records;
    prism__hits_copy copy; /* the batch's hits still crossing to `hits` */
    prism_propagate_batch batch;
    uint64_t seq;
    bool busy;  /* taken by its worker, or queued for the sink */
    bool ready; /* queued for the sink */
} stream_slot;

typedef struct stream_worker {
    stream_run *run;
    size_t index;
    prism_context *ctx;
    const prism_geometry *geometry;
    stream_slot slots[STREAM_SLOTS];
    prism_propagate_summary summary; /* its own, folded in at the end */
    prism_propagate_share share;
    prism_propagate_stats stats;
    prism_result result;
    double first_start, last_end; /* its first call's start, its last call's end */
    double hit_fraction;          /* the most hits a photon its batches have had */
    /* the first bytes of both slots' hits page-locked on a thread of their
     * own while the first batch propagates (pin_first) */
    struct {
        pthread_t thread;
        bool running;
        size_t bytes;
        prism__allocation *locked[STREAM_SLOTS];
        double seconds;
    } pin;
    pthread_t thread;
    bool started;
    bool late; /* joins on its thread (stream->join) */
} stream_worker;

struct stream_run {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    uint64_t next_first;          /* the cursor, relative to the run's start */
    uint64_t next_seq, delivered; /* batches taken; batches the sink has had */
    uint64_t delivered_photons;
    uint64_t total;
    uint64_t mine;    /* photons of this call's batches (total, unless strided) */
    uint64_t advance; /* batch photons times the stride: the cursor's step when strided */
    size_t batch, n, running;
    bool failed;
    bool claimed_all;           /* stream->claim said the run has no batch left */
    prism_result caller_result; /* the first failure of a caller's callback */
    stream_worker *workers;
    const prism_photon_source *source;
    const prism_propagate_desc *desc;
    const prism_propagate_stream_desc *s;
};

uint64_t prism_propagate_stream_cut(uint64_t left, uint64_t batch, uint64_t contexts)
{
    uint64_t count = batch;
    if (contexts > 1) {
        const uint64_t half_share = left / (2 * contexts), floor = batch / 4;
        if (half_share < count) /* each call costs its own launches: not below a quarter */
            count = half_share > floor ? half_share : floor;
        if (count < STREAM_MIN_BATCH)
            count = STREAM_MIN_BATCH;
        if (count > batch)
            count = batch;
    }
    return left < count ? left : count;
}

/* Photons in the next batch (prism_propagate_stream_cut), cut near the
 * end only where the stream chose the batch and has several contexts. */
static size_t next_count(const stream_run *run)
{
    return (size_t)prism_propagate_stream_cut(run->total - run->next_first, run->batch,
                                              run->s->batch ? 1 : run->n);
}

/* Batches left to take (under the lock). */
static bool batches_left(const stream_run *run)
{
    return run->s->claim != NULL ? !run->claimed_all : run->next_first < run->total;
}

/* A caller's callback (fill, claim, counted) failed with r: the run stops
 * with the first such failure. Under the lock. */
static void caller_failed(stream_run *run, prism_result r)
{
    run->failed = true;
    if (run->caller_result == PRISM_SUCCESS)
        run->caller_result = r;
}

/* The next batch from the callers' shared cursor (stream->claim) into
 * slot->batch; false when there is none (claimed_all) or the claim failed
 * (failed). Under the lock. */
static bool claim_next(stream_run *run, stream_slot *slot, size_t context)
{
    uint64_t first = 0, count = 0;
    const prism_result r = run->s->claim(run->s->user, run->batch, &first, &count);
    if (r != PRISM_SUCCESS || count > run->batch || first + count > run->total) {
        caller_failed(run, r != PRISM_SUCCESS ? r : PRISM_ERROR_INVALID_ARGUMENT);
        return false;
    }
    if (count == 0) {
        run->claimed_all = true;
        return false;
    }
    slot->batch = (prism_propagate_batch){.first = run->desc->first_photon + first,
                                          .count = (size_t)count,
                                          .context = context};
    return true;
}

/* A free slot of w's, waiting while both are queued; NULL when the run
 * stops. Takes the next batch with it, and reads its input in order. */
static stream_slot *take(stream_worker *w)
{
    stream_run *run = w->run;
    pthread_mutex_lock(&run->lock);
    stream_slot *slot = NULL;
    const double t0 = omp_get_wtime();
    while (!run->failed && batches_left(run)) {
        for (int i = 0; i < STREAM_SLOTS && slot == NULL; i++)
            if (!w->slots[i].busy)
                slot = &w->slots[i];
        if (slot != NULL)
            break;
        pthread_cond_wait(&run->changed, &run->lock);
    }
    w->share.wait_seconds += omp_get_wtime() - t0;
    if (run->failed || !batches_left(run))
        slot = NULL;
    if (slot != NULL && run->s->claim != NULL) {
        if (!claim_next(run, slot, w->index)) {
            slot = NULL;
            pthread_cond_broadcast(&run->changed);
        }
    } else if (slot != NULL) {
        slot->batch = (prism_propagate_batch){.first = run->desc->first_photon + run->next_first,
                                              .count = next_count(run),
                                              .context = w->index};
        run->next_first += run->advance != 0 ? run->advance : slot->batch.count;
    }
    if (slot != NULL) {
        slot->seq = run->next_seq++;
        slot->busy = true;
        slot->ready = false;
        /* The input is read under the lock: fill is called in order. */
        if (run->source->kind == PRISM_SOURCE_PHOTONS && run->s->fill != NULL) {
            prism_result r = run->s->fill(run->s->user, slot->batch.first, slot->batch.count,
                                          slot->input);
            if (r != PRISM_SUCCESS) {
                caller_failed(run, r);
                slot->busy = false;
                slot = NULL;
                pthread_cond_broadcast(&run->changed);
            }
        }
    }
    pthread_mutex_unlock(&run->lock);
    return slot;
}

/* On CUDA, the first bytes of a slot's hits page-locked before its batch,
 * for as many hits as the context's batches have had at most (with half
 * again to spare; before the first, STREAM_FIRST_HITS of the photons), so
 * that the hits cross PCIe by DMA, their copy overlapping the next batch,
 * instead of through the driver's pageable staging, which costs a second
 * copy on the host between calls (the README's scaling table has the
 * figures). Locking the whole slot (its worst case: every photon a hit)
 * would cost seconds up front. A failure only leaves the slot pageable,
 * and a batch with more hits than its slot's locked bytes copies them at
 * once. */
#define STREAM_PIN_STEP ((size_t)64 << 20)
#define STREAM_FIRST_HITS (1.0 / 16)

/* Cold pages faulted in on every core before they are locked: the
 * driver's locking faults them in one by one on the calling thread,
 * zeroing each, which made locking a slot's first bytes cost 0.12-0.16 s
 * against 0.06 s for pages already touched. */
static void touch_pages(unsigned char *p, size_t bytes)
{
    const long pages = (long)((bytes + 4095) / 4096);
#pragma omp parallel for schedule(static)
    for (long i = 0; i < pages; i++)
        p[(size_t)i * 4096] = 0;
}

/* The bytes of a slot's hits to lock for a batch of `count` photons. */
static size_t pin_bytes(const stream_worker *w, size_t count)
{
    const size_t capacity = w->run->batch * sizeof(prism_photon);
    const double fraction = w->hit_fraction > 0 ? w->hit_fraction : STREAM_FIRST_HITS;
    size_t want = (size_t)(fraction * (double)count) * sizeof(prism_photon);
    want += want / 2;
    want = (want + STREAM_PIN_STEP - 1) / STREAM_PIN_STEP * STREAM_PIN_STEP;
    return want > capacity ? capacity : want;
}

/* The first `bytes` of a slot's hits faulted in (those from `from` on: the
 * rest already were) and page-locked, not yet recorded in the ledger
 * (prism__register_begin): on any thread. NULL where locking failed. */
static prism__allocation *lock_hits(prism_context *ctx, stream_slot *slot, size_t from,
                                    size_t bytes)
{
    touch_pages((unsigned char *)slot->hits + from, bytes - from);
    prism__allocation *a = NULL; /* left NULL where locking fails */
    prism__register_begin(ctx, slot->hits, bytes, "propagate_stream.hits", &a);
    return a;
}

/* lock_hits' memory recorded as the slot's page-locked bytes, on the
 * context's thread. */
static void hits_locked(stream_worker *w, stream_slot *slot, prism__allocation *a, size_t bytes)
{
    if (a != NULL && prism__register_end(w->ctx, a, &slot->hits_pinned) == PRISM_SUCCESS)
        slot->pinned_bytes = bytes;
}

static void pin_hits(stream_worker *w, stream_slot *slot, size_t count)
{
    const size_t want = pin_bytes(w, count);
    if (prism_context_backend(w->ctx) != PRISM_BACKEND_CUDA || want == 0 ||
        want <= slot->pinned_bytes)
        return;
    /* no copy is in flight into it: the slot is free, and the writer waited
     * for its last copy before freeing it */
    const double t0 = omp_get_wtime();
    const size_t touched = slot->pinned_bytes;
    prism_buffer_release(slot->hits_pinned); /* a range locked twice is refused */
    slot->hits_pinned = NULL;
    slot->pinned_bytes = 0;
    hits_locked(w, slot, lock_hits(w->ctx, slot, touched, want), want);
    w->share.pin_seconds += omp_get_wtime() - t0;
}

/* The first page-locking of both slots, off the context's thread. Done on
 * it, the device sat idle for it before the first batch and again before
 * the second (0.010-0.013 s each for the 256 MiB of a 2^25-photon batch).
 * The first batch's hits wait for it (copy_ready); a failure leaves a slot
 * pageable, as pin_hits' does. */
static void *pin_first(void *arg)
{
    stream_worker *w = arg;
    const double t0 = omp_get_wtime();
    for (int k = 0; k < STREAM_SLOTS; k++)
        w->pin.locked[k] = lock_hits(w->ctx, &w->slots[k], 0, w->pin.bytes);
    w->pin.seconds = omp_get_wtime() - t0;
    return NULL;
}

/* pin_first started for a first batch of `count` photons (on CUDA, where
 * a thread could be made), else false. */
static bool pin_first_start(stream_worker *w, size_t count)
{
    const size_t bytes = pin_bytes(w, count);
    if (prism_context_backend(w->ctx) != PRISM_BACKEND_CUDA || bytes == 0)
        return false;
    w->pin.bytes = bytes;
    w->pin.running = pthread_create(&w->pin.thread, NULL, pin_first, w) == 0;
    return w->pin.running;
}

/* pin_first's memory recorded as the slots' (on the context's thread). */
static void pin_first_join(stream_worker *w)
{
    if (!w->pin.running)
        return;
    pthread_join(w->pin.thread, NULL);
    w->pin.running = false;
    w->share.pin_seconds += w->pin.seconds;
    for (int k = 0; k < STREAM_SLOTS; k++) {
        hits_locked(w, &w->slots[k], w->pin.locked[k], w->pin.bytes);
        w->pin.locked[k] = NULL;
    }
}

/* The copy's `before`: the first batch's hits wait for pin_first. */
static void copy_ready(prism__hits_copy *copy, void *user)
{
    stream_worker *w = user;
    pin_first_join(w);
    for (int k = 0; k < STREAM_SLOTS; k++)
        if (&w->slots[k].copy == copy)
            copy->async_bytes = w->slots[k].pinned_bytes;
}

static prism_result one_batch(stream_worker *w, stream_slot *slot)
{
    const stream_run *run = w->run;
    const prism_propagate_stream_desc *s = run->s;
    prism_photon_source src = *run->source;
    src.count = slot->batch.count;
    if (src.kind == PRISM_SOURCE_PHOTONS)
        src.photons = s->fill != NULL
                          ? slot->input
                          : run->source->photons + (slot->batch.first - run->desc->first_photon);
    prism_propagate_desc d = *run->desc;
    d.first_photon = slot->batch.first;
    prism_propagate_outputs out = {.hits = {.kind = PRISM_TARGET_HOST, .host = slot->hits},
                                   .hit_mask = s->hit_mask,
                                   .hits_capacity = run->batch,
                                   .summary = s->summary != NULL ? &w->summary : NULL};
    if (s->photons)
        out.photons = (prism_target){.kind = PRISM_TARGET_HOST, .host = slot->photons};
    if (d.record_steps > 0)
        out.records = (prism_target){.kind = PRISM_TARGET_HOST, .host = slot->records};
    /* the hits' copy may overlap the next batch where it lands in
     * page-locked memory (the host backend's copies are made at once) */
    if (w->share.batches > 0)
        pin_first_join(w); /* the first batch had no hits to wait for it */
    if (!(w->share.batches == 0 && pin_first_start(w, slot->batch.count)))
        pin_hits(w, slot, slot->batch.count);
    slot->copy.async_bytes =
        prism_context_backend(w->ctx) == PRISM_BACKEND_CUDA ? slot->pinned_bytes : SIZE_MAX;
    slot->copy.before = w->pin.running ? copy_ready : NULL;
    slot->copy.before_user = w;
    prism_propagate_stats st;
    const double t0 = omp_get_wtime();
    if (w->share.batches == 0)
        w->first_start = t0;
    prism_result r = prism__propagate_copying(w->ctx, w->geometry, &src, &d, &out, &st,
                                              &slot->copy);
    w->last_end = omp_get_wtime();
    if (r != PRISM_SUCCESS)
        return r;
    prism__stats_add(&w->stats, &st);
    w->share.photons += slot->batch.count;
    w->share.batches++;
    w->share.seconds += st.seconds;
    slot->batch.hits = slot->hits;
    slot->batch.hits_count = st.hits;
    const double fraction = (double)st.hits / (double)slot->batch.count;
    if (fraction > w->hit_fraction)
        w->hit_fraction = fraction;
    slot->batch.photons = s->photons ? slot->photons : NULL;
    slot->batch.records = d.record_steps > 0 ? slot->records : NULL;
    slot->batch.seconds = st.seconds;
    return PRISM_SUCCESS;
}

/* A context that joins late: made by the caller's join on this thread, then
 * held to the run's batch. */
static prism_result join(stream_worker *w)
{
    stream_run *run = w->run;
    prism_context *ctx = NULL;
    const prism_geometry *g = NULL;
    prism_result r = run->s->join(run->s->user, w->index, &ctx, &g);
    if (r != PRISM_SUCCESS)
        return r;
    if (ctx == NULL || g == NULL || prism__geometry_context(g) != ctx)
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                            "propagate_stream: join gave no context, or a geometry of another");
    w->ctx = ctx;
    w->geometry = g;
    size_t limit = 0;
    r = prism_propagate_batch_limit(ctx, g, run->source->kind, run->desc, &limit);
    if (r == PRISM_SUCCESS && limit < run->batch)
        r = prism__error(ctx, PRISM_ERROR_OUT_OF_DEVICE_MEMORY,
                         "propagate_stream: batches of %zu photons, this context holds %zu",
                         run->batch, limit);
    if (r == PRISM_SUCCESS)
        prism__scratch_keep(ctx, true);
    return r;
}

static void *work(void *arg)
{
    stream_worker *w = arg;
    stream_run *run = w->run;
    stream_slot *slot;
    const bool late = w->late;
    if (late && (w->result = join(w)) != PRISM_SUCCESS) {
        pthread_mutex_lock(&run->lock);
        run->failed = true;
        run->running--;
        pthread_cond_broadcast(&run->changed);
        pthread_mutex_unlock(&run->lock);
        return NULL;
    }
    while ((slot = take(w)) != NULL) {
        w->result = one_batch(w, slot);
        prism_result told = PRISM_SUCCESS; /* the caller's, told the count */
        if (w->result == PRISM_SUCCESS && run->s->counted != NULL) {
            prism_propagate_batch b = slot->batch;
            b.hits = NULL; /* still crossing */
            told = run->s->counted(run->s->user, &b);
        }
        pthread_mutex_lock(&run->lock);
        if (w->result != PRISM_SUCCESS || told != PRISM_SUCCESS) {
            run->failed = true;
            if (told != PRISM_SUCCESS)
                caller_failed(run, told);
            slot->busy = false;
        } else {
            slot->ready = true;
        }
        pthread_cond_broadcast(&run->changed);
        pthread_mutex_unlock(&run->lock);
        if (w->result != PRISM_SUCCESS || told != PRISM_SUCCESS)
            break;
    }
    if (late)
        prism__scratch_keep(w->ctx, false);
    pthread_mutex_lock(&run->lock);
    run->running--;
    pthread_cond_broadcast(&run->changed);
    pthread_mutex_unlock(&run->lock);
    return NULL;
}

/* The slot that holds batch `seq` when it is ready, else NULL. */
static stream_slot *ready_slot(stream_run *run, uint64_t seq)
{
    for (size_t i = 0; i < run->n; i++)
        for (int k = 0; k < STREAM_SLOTS; k++) {
            stream_slot *slot = &run->workers[i].slots[k];
            if (slot->busy && slot->ready && slot->seq == seq)
                return slot;
        }
    return NULL;
}

/* The calling thread: the batches to the sink in order, until all are
 * delivered or the run fails. */
static prism_result deliver(stream_run *run)
{
    prism_result r = PRISM_SUCCESS;
    pthread_mutex_lock(&run->lock);
    for (;;) {
        stream_slot *slot = ready_slot(run, run->delivered);
        if (slot == NULL) {
            if (run->failed || (run->running == 0 && run->delivered == run->next_seq))
                break;
            pthread_cond_wait(&run->changed, &run->lock);
            continue;
        }
        pthread_mutex_unlock(&run->lock);
        const double t0 = omp_get_wtime();
        r = prism__hits_copy_wait(&slot->copy);
        run->workers[slot->batch.context].share.hits_wait_seconds += omp_get_wtime() - t0;
        if (r == PRISM_SUCCESS)
            r = run->s->sink(run->s->user, &slot->batch);
        pthread_mutex_lock(&run->lock);
        slot->busy = slot->ready = false;
        run->delivered++;
        run->delivered_photons += slot->batch.count;
        if (r != PRISM_SUCCESS)
            run->failed = true;
        pthread_cond_broadcast(&run->changed);
        if (r != PRISM_SUCCESS)
            break;
    }
    pthread_mutex_unlock(&run->lock);
    return r;
}

/* A slot's hits: room for every photon a hit, in transparent huge pages
 * where Linux gives them for the asking (its "madvise" mode), so that
 * touching and page-locking the part the hits reach faults and locks 2 MiB
 * pages rather than 4 KiB ones. Two 192 MiB slots a context took
 * 0.016-0.019 s to lock against 0.041-0.056 s in small pages, and a
 * stream's start to its first batch 0.009 s against 0.022-0.033 s.
 * Still only touched as far as the hits reach (free() returns it). */
#define STREAM_HUGE_PAGE ((size_t)2 << 20)

static void *hits_alloc(size_t bytes)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    const size_t rounded = (bytes + STREAM_HUGE_PAGE - 1) / STREAM_HUGE_PAGE * STREAM_HUGE_PAGE;
    void *p = rounded >= bytes ? aligned_alloc(STREAM_HUGE_PAGE, rounded) : NULL;
    if (p != NULL)
        madvise(p, rounded, MADV_HUGEPAGE); /* a refusal leaves small pages */
    return p != NULL ? p : malloc(bytes);   /* no aligned room: small pages */
#else
    return malloc(bytes);
#endif
}

static void free_slots(stream_worker *w)
{
    pin_first_join(w); /* a first batch that failed left it running */
    for (int k = 0; k < STREAM_SLOTS; k++) {
        prism__hits_copy_release(&w->slots[k].copy);   /* before the memory it writes */
        prism_buffer_release(w->slots[k].hits_pinned); /* before the memory it locks */
        w->slots[k].hits_pinned = NULL;
        free(w->slots[k].hits);
        free(w->slots[k].photons);
        free(w->slots[k].input);
        free(w->slots[k].records);
    }
    free(w->summary.detected_by_solid);
}

/* Host memory of w's two slots. Heap memory (the hits' in huge pages,
 * hits_alloc): on CUDA only the hits cross PCIe, and pages a batch's hits
 * never reach are never touched. */
static prism_result alloc_slots(stream_run *run, stream_worker *w)
{
    const size_t b = run->batch, k = run->desc->record_steps;
    for (int i = 0; i < STREAM_SLOTS; i++) {
        stream_slot *slot = &w->slots[i];
        slot->hits = hits_alloc(b * sizeof(prism_photon));
        if (slot->hits == NULL)
            return PRISM_ERROR_OUT_OF_MEMORY;
        if (run->s->photons && (slot->photons = malloc(b * sizeof(prism_photon))) == NULL)
            return PRISM_ERROR_OUT_OF_MEMORY;
        if (run->source->kind == PRISM_SOURCE_PHOTONS && run->s->fill != NULL &&
            (slot->input = malloc(b * sizeof(prism_photon))) == NULL)
            return PRISM_ERROR_OUT_OF_MEMORY;
        if (k > 0 && (slot->records = malloc(b * k * sizeof(prism_step_record))) == NULL)
            return PRISM_ERROR_OUT_OF_MEMORY;
    }
    if (run->s->summary != NULL && run->s->summary->detected_by_solid != NULL) {
        w->summary.solids = run->s->summary->solids;
        w->summary.detected_by_solid = calloc(w->summary.solids + 1, sizeof(uint64_t));
        if (w->summary.detected_by_solid == NULL)
            return PRISM_ERROR_OUT_OF_MEMORY;
    }
    return PRISM_SUCCESS;
}

/* Photons a batch: the caller's, else the least of the contexts' limits,
 * their backends' largest batch and a quarter of a context's share (not below
 * STREAM_MIN_BATCH). */
static prism_result batch_size(stream_run *run, prism_context *const *ctxs,
                               const prism_geometry *const *gs, size_t *failed)
{
    size_t b = run->s->batch;
    if (b == 0) {
        b = STREAM_MAX_BATCH;
        for (size_t i = 0; i < run->n; i++) {
            if (ctxs[i] == NULL) /* joins later */
                continue;
            size_t limit = 0;
            prism_result r = prism__multi_limit(ctxs, gs, run->n, i, run->source->kind, run->desc,
                                                &limit);
            if (r != PRISM_SUCCESS) {
                *failed = i;
                return r;
            }
            b = limit < b ? limit : b;
            if (prism_context_backend(ctxs[i]) != PRISM_BACKEND_CUDA &&
                b > PRISM_PROPAGATE_STREAM_MAX_BATCH_HOST)
                b = PRISM_PROPAGATE_STREAM_MAX_BATCH_HOST;
        }
        const uint64_t share = run->total / (4 * run->n);
        if (share < b)
            b = share > STREAM_MIN_BATCH ? (size_t)share
                : STREAM_MIN_BATCH < b   ? STREAM_MIN_BATCH
                                         : b;
    }
    run->batch = (uint64_t)b < run->total ? b : (size_t)run->total;
    run->mine = prism_propagate_stream_photons(run->total, b, run->s->stride, run->s->phase);
    const uint32_t stride = run->s->stride > 1 ? run->s->stride : 1;
    if (stride > 1) { /* batches phase, phase + stride, ... of the run's */
        run->next_first = (uint64_t)run->s->phase * b;
        run->advance = (uint64_t)stride * b;
    }
    return PRISM_SUCCESS;
}

uint64_t prism_propagate_stream_photons(uint64_t count, size_t batch, uint32_t stride,
                                        uint32_t phase)
{
    if (stride <= 1)
        return count;
    if (batch == 0 || phase >= stride)
        return 0;
    const uint64_t batches = (count + batch - 1) / batch;
    if (phase >= batches)
        return 0;
    const uint64_t last = batches - 1, own = (last - phase) / stride + 1;
    uint64_t mine = own * (uint64_t)batch;
    if ((last - phase) % stride == 0) /* the short last batch is ours */
        mine -= (uint64_t)batch * batches - count;
    return mine;
}

static prism_result start(stream_run *run, size_t *failed)
{
    run->running = run->n;
    for (size_t i = 0; i < run->n; i++) {
        stream_worker *w = &run->workers[i];
        w->started = pthread_create(&w->thread, NULL, work, w) == 0;
        if (!w->started) {
            pthread_mutex_lock(&run->lock);
            run->running--;
            pthread_mutex_unlock(&run->lock);
        }
    }
    prism_result r = deliver(run);
    for (size_t i = 0; i < run->n; i++)
        if (run->workers[i].started)
            pthread_join(run->workers[i].thread, NULL);
    for (size_t i = 0; i < run->n; i++)
        if (run->workers[i].result != PRISM_SUCCESS) {
            *failed = i;
            return run->workers[i].result;
        }
    if (r == PRISM_SUCCESS && run->caller_result != PRISM_SUCCESS)
        r = run->caller_result;
    /* every batch taken and delivered, else no thread could start */
    const bool whole = run->s->claim != NULL ? run->claimed_all
                                             : run->delivered_photons >= run->mine;
    if (r == PRISM_SUCCESS && !whole)
        r = PRISM_ERROR_OUT_OF_MEMORY;
    return r;
}

prism_result prism_propagate_stream(prism_context *const *contexts,
                                    const prism_geometry *const *geometries, size_t n,
                                    const prism_photon_source *source,
                                    const prism_propagate_desc *desc,
                                    const prism_propagate_stream_desc *stream,
                                    prism_propagate_stats *stats, prism_propagate_share *shares)
{
    static const prism_propagate_desc zero_desc;
    const double t0 = omp_get_wtime();
    if (desc == NULL)
        desc = &zero_desc;
    prism_context *c0 = contexts != NULL ? contexts[0] : NULL;
    if (stream == NULL || stream->sink == NULL)
        return prism__error(c0, PRISM_ERROR_INVALID_ARGUMENT, "propagate_stream: no sink");
    /* gensteps: the count resolved and each checked once, not per batch */
    prism_photon_source resolved;
    prism_result r = prism__gensteps_run_sources(contexts, geometries, n, source,
                                                 desc->first_photon, &resolved, "propagate_stream");
    if (r != PRISM_SUCCESS)
        return r;
    if (source != NULL)
        source = &resolved;
    r = prism__multi_check("propagate_stream", contexts, geometries, n, source, desc,
                           stream->join != NULL);
    if (r != PRISM_SUCCESS)
        return r;
    if (stream->stride > 1 && (stream->batch == 0 || stream->phase >= stream->stride))
        return prism__error(c0, PRISM_ERROR_INVALID_ARGUMENT,
                            "propagate_stream: stride %u needs a batch size (got %zu) and a phase "
                            "below it (got %u)",
                            stream->stride, stream->batch, stream->phase);
    if (stream->claim != NULL && (stream->batch == 0 || stream->stride > 1))
        return prism__error(c0, PRISM_ERROR_INVALID_ARGUMENT,
                            "propagate_stream: claim needs a batch size (got %zu) and no stride "
                            "(got %u)",
                            stream->batch, stream->stride);
    if (source->kind == PRISM_SOURCE_PHOTONS && stream->fill == NULL && source->photons == NULL)
        return prism__error(c0, PRISM_ERROR_INVALID_ARGUMENT,
                            "propagate_stream: a PHOTONS source without photons or fill");
    stream_worker *workers = calloc(n, sizeof *workers);
    if (workers == NULL)
        return prism__error(c0, PRISM_ERROR_OUT_OF_MEMORY, "propagate_stream: no memory");
    stream_run run = {.total = source->count,
                      .n = n,
                      .workers = workers,
                      .source = source,
                      .desc = desc,
                      .s = stream};
    for (size_t i = 0; i < n; i++)
        workers[i] = (stream_worker){.run = &run,
                                     .index = i,
                                     .ctx = contexts[i],
                                     .geometry = geometries[i],
                                     .late = contexts[i] == NULL};
    size_t failed = 0;
    r = batch_size(&run, contexts, geometries, &failed);
    if (r != PRISM_SUCCESS) {
        free(workers);
        return prism__multi_failed("propagate_stream", contexts, failed, r);
    }
    for (size_t i = 0; i < n && r == PRISM_SUCCESS; i++)
        r = alloc_slots(&run, &workers[i]);
    if (r != PRISM_SUCCESS) {
        for (size_t i = 0; i < n; i++)
            free_slots(&workers[i]);
        free(workers);
        return prism__error(c0, r,
                            "propagate_stream: no host memory for two batches of %zu "
                            "photons a context",
                            run.batch);
    }
    pthread_mutex_init(&run.lock, NULL);
    pthread_cond_init(&run.changed, NULL);
    for (size_t i = 0; i < n; i++)
        prism__scratch_keep(contexts[i], true); /* a late one's: on its thread */
    r = start(&run, &failed);
    if (r == PRISM_SUCCESS && stream->done != NULL) /* before the memory's release */
        r = stream->done(stream->user);
    for (size_t i = 0; i < n; i++)
        if (!workers[i].late)
            prism__scratch_keep(workers[i].ctx, false);
    pthread_cond_destroy(&run.changed);
    pthread_mutex_destroy(&run.lock);
    prism_propagate_stats sum = {0};
    const double t_end = omp_get_wtime();
    for (size_t i = 0; i < n; i++) {
        prism__stats_add(&sum, &workers[i].stats);
        if (workers[i].share.batches > 0) {
            workers[i].share.start_seconds = workers[i].first_start - t0;
            workers[i].share.finish_seconds = t_end - workers[i].last_end;
        }
        if (shares != NULL)
            shares[i] = workers[i].share;
        if (r == PRISM_SUCCESS && stream->summary != NULL)
            prism__summary_merge(stream->summary, &workers[i].summary);
        free_slots(&workers[i]);
    }
    const bool worker_failed = failed < n && workers[failed].result != PRISM_SUCCESS;
    prism_context *made[STREAM_MAX_CONTEXTS];
    for (size_t i = 0; i < n; i++)
        made[i] = workers[i].ctx;
    free(workers);
    if (r != PRISM_SUCCESS && worker_failed && made[failed] != NULL)
        return prism__multi_failed("propagate_stream", made, failed, r);
    if (r != PRISM_SUCCESS && worker_failed)
        return prism__error(contexts[0], r, "propagate_stream: context %zu did not join: %s",
                            failed, prism_result_string(r));
    if (r != PRISM_SUCCESS)
        return r;
    sum.seconds = omp_get_wtime() - t0;
    if (stats != NULL)
        *stats = sum;
    return PRISM_SUCCESS;
}
