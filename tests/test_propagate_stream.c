/* prism_propagate_stream and prism_propagate's hits and summary outputs on
 * the host backend (contexts stand in for devices): the sink gets the
 * batches in photon order, each with the hits and final photons one
 * prism_propagate call gives for those photons, whatever the batch size
 * and number of contexts; the summary is the photons' own tally; a sink or
 * fill that fails stops the run with its error; bad arguments are refused. */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kernels_test_scene.h"
#include "prism/memory.h"
#include "prism/propagate.h"

enum { MAX_CTX = 3, N = 20000, K = 3 };

typedef struct fixture {
    kt_scene s;
    prism_context *ctx[MAX_CTX];
    prism_geometry *g[MAX_CTX];
    prism_photon *ref; /* one call's final photons */
    prism_step_record *ref_rec;
    prism_propagate_stats ref_st;
} fixture;

static const prism_photon_source source = {.kind = PRISM_SOURCE_POINT,
                                           .count = N,
                                           .position = {0.1f, 0, 0},
                                           .wavelength_nm = 380,
                                           .wavelength_max_nm = 480};
static const prism_propagate_desc desc = {.seed = 11, .record_steps = K, .first_photon = 500};

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    for (int i = 0; i < MAX_CTX; i++)
        if ((f->ctx[i] = kt_host_context()) == NULL)
            return -1;
    kt_rich_scene(&f->s, 24);
    if (kt_build(&f->s, f->ctx[0]) != 0)
        return -1;
    for (int i = 0; i < MAX_CTX; i++) {
        prism_geometry_desc d = {.policy = PRISM_PLACEMENT_DEVICE};
        if (prism_geometry_upload(f->ctx[i], &f->s.scene, f->s.bvh, &d, &f->g[i]) != PRISM_SUCCESS)
            return -1;
    }
    f->ref = calloc(N, sizeof *f->ref);
    f->ref_rec = calloc((size_t)N * K, sizeof *f->ref_rec);
    prism_propagate_outputs out = {.photons = {.kind = PRISM_TARGET_HOST, .host = f->ref},
                                   .records = {.kind = PRISM_TARGET_HOST, .host = f->ref_rec}};
    if (prism_propagate(f->ctx[0], f->g[0], &source, &desc, &out, &f->ref_st) != PRISM_SUCCESS)
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    int rc = 0;
    for (int i = 0; i < MAX_CTX; i++)
        prism_geometry_destroy(f->g[i]);
    kt_free(&f->s, f->ctx[0]);
    for (int i = 0; i < MAX_CTX; i++)
        rc |= prism_context_destroy(f->ctx[i]) != PRISM_SUCCESS;
    free(f->ref);
    free(f->ref_rec);
    free(f);
    return rc ? -1 : 0;
}

/* The reference's photons with any bit of `mask`, in order. */
static size_t ref_hits(const fixture *f, uint32_t mask, prism_photon *out)
{
    size_t n = 0;
    for (size_t i = 0; i < N; i++)
        if (f->ref[i].history & mask)
            out[n++] = f->ref[i];
    return n;
}

/* The summary counted here from the reference's photons. */
static void ref_summary(const fixture *f, prism_propagate_summary *s)
{
    for (size_t i = 0; i < N; i++) {
        const prism_photon *p = &f->ref[i];
        s->photons++;
        s->steps += p->steps;
        for (int b = 0; b < 32; b++)
            s->flagged[b] += (p->history >> b) & 1u;
        const int e = prism_photon_end_bit(p->history);
        if (e >= 0)
            s->ended[e]++;
        if (isfinite(p->time)) {
            if (s->timed == 0 || p->time < s->time_min)
                s->time_min = p->time;
            if (s->timed == 0 || p->time > s->time_max)
                s->time_max = p->time;
            s->timed++;
        }
        if ((p->history & PRISM_SURFACE_DETECT) && s->detected_by_solid != NULL)
            s->detected_by_solid[p->solid < s->solids ? p->solid : s->solids]++;
    }
}

static void assert_summaries_equal(const prism_propagate_summary *a,
                                   const prism_propagate_summary *b)
{
    assert_int_equal(a->photons, b->photons);
    assert_int_equal(a->steps, b->steps);
    assert_memory_equal(a->flagged, b->flagged, sizeof a->flagged);
    assert_memory_equal(a->ended, b->ended, sizeof a->ended);
    assert_int_equal(a->timed, b->timed);
    assert_true(a->time_min == b->time_min);
    assert_true(a->time_max == b->time_max);
    assert_int_equal(a->solids, b->solids);
    if (a->detected_by_solid != NULL)
        assert_memory_equal(a->detected_by_solid, b->detected_by_solid,
                            (a->solids + 1) * sizeof(uint64_t));
}

/* prism_propagate's hits and summary outputs: the hits are the final
 * photons with the mask's bits, in order; a summary adds up. */
static void test_hits_and_summary_of_one_call(void **state)
{
    fixture *f = *state;
    const size_t solids = f->s.scene.solids_count;
    prism_photon *hits = calloc(N, sizeof *hits), *want = calloc(N, sizeof *want);
    uint64_t by_solid[2][64] = {{0}};
    assert_true(solids + 1 <= 64);
    prism_propagate_summary got = {.detected_by_solid = by_solid[0], .solids = solids};
    prism_propagate_summary ref = {.detected_by_solid = by_solid[1], .solids = solids};
    prism_propagate_outputs out = {.hits = {.kind = PRISM_TARGET_HOST, .host = hits},
                                   .summary = &got};
    prism_propagate_stats st;
    assert_int_equal(prism_propagate(f->ctx[1], f->g[1], &source, &desc, &out, &st), PRISM_SUCCESS);
    const size_t n = ref_hits(f, PRISM_SURFACE_DETECT, want);
    assert_true(n > 100 && n < N);
    assert_int_equal(st.hits, n);
    assert_int_equal(st.detected, f->ref_st.detected);
    assert_memory_equal(hits, want, n * sizeof *hits);
    ref_summary(f, &ref);
    assert_summaries_equal(&got, &ref);
    assert_int_equal(got.ended[2], st.detected);
    /* a second call adds to the summary */
    assert_int_equal(prism_propagate(f->ctx[1], f->g[1], &source, &desc, &out, &st), PRISM_SUCCESS);
    assert_int_equal(got.photons, 2 * N);
    assert_int_equal(got.flagged[2], 2 * ref.flagged[2]);
    /* another mask; a capacity too small is refused with the count */
    const uint32_t mask = PRISM_NO_HIT | PRISM_BULK_ABSORB;
    out = (prism_propagate_outputs){.hits = {.kind = PRISM_TARGET_HOST, .host = hits},
                                    .hit_mask = mask};
    assert_int_equal(prism_propagate(f->ctx[1], f->g[1], &source, &desc, &out, &st), PRISM_SUCCESS);
    const size_t m = ref_hits(f, mask, want);
    assert_int_equal(st.hits, m);
    assert_memory_equal(hits, want, m * sizeof *hits);
    out.hits_capacity = m - 1;
    assert_int_equal(prism_propagate(f->ctx[1], f->g[1], &source, &desc, &out, &st),
                     PRISM_ERROR_OUT_OF_RANGE);
    assert_non_null(strstr(prism_context_last_error(f->ctx[1]), "hits"));
    free(hits);
    free(want);
}

typedef struct collected {
    const fixture *f;
    prism_photon *hits, *photons;
    prism_step_record *records;
    size_t hits_n;
    uint64_t next; /* the next photon the sink expects */
    unsigned batches;
    size_t contexts_seen[MAX_CTX];
    int fail_at; /* batch at which the sink fails, -1 never */
    int fill_fail_at;
    unsigned fills;
    unsigned dones;           /* stream->done's calls */
    uint64_t next_at_done;    /* c->next when done was called */
    size_t held_at_done;      /* ctx[0]'s engine memory then */
    prism_result done_result; /* what done returns */
} collected;

static prism_result sink(void *user, const prism_propagate_batch *b)
{
    collected *c = user;
    if (c->fail_at >= 0 && (int)c->batches == c->fail_at)
        return PRISM_ERROR_IO;
    assert_int_equal(b->first, c->next); /* in photon order, none missed */
    assert_true(b->count > 0);
    const size_t at = (size_t)(b->first - desc.first_photon);
    memcpy(c->hits + c->hits_n, b->hits, b->hits_count * sizeof *b->hits);
    c->hits_n += b->hits_count;
    if (b->photons != NULL)
        memcpy(c->photons + at, b->photons, b->count * sizeof *b->photons);
    if (b->records != NULL)
        memcpy(c->records + at * K, b->records, b->count * K * sizeof *b->records);
    c->next += b->count;
    c->batches++;
    assert_true(b->context < MAX_CTX);
    c->contexts_seen[b->context]++;
    return PRISM_SUCCESS;
}

static prism_result fill(void *user, uint64_t first, size_t count, prism_photon *dst)
{
    collected *c = user;
    if (c->fill_fail_at >= 0 && (int)c->fills == c->fill_fail_at)
        return PRISM_ERROR_IO;
    c->fills++;
    /* the reference's photons, shifted, as a file would give them */
    for (size_t i = 0; i < count; i++) {
        dst[i] = c->f->ref[(first - desc.first_photon + i) % N];
        dst[i].pos[0] *= 0.5f;
    }
    return PRISM_SUCCESS;
}

static void collected_init(collected *c, const fixture *f)
{
    memset(c, 0, sizeof *c);
    c->f = f;
    c->hits = calloc(N, sizeof *c->hits);
    c->photons = calloc(N, sizeof *c->photons);
    c->records = calloc((size_t)N * K, sizeof *c->records);
    c->next = desc.first_photon;
    c->fail_at = c->fill_fail_at = -1;
}

static void collected_free(collected *c)
{
    free(c->hits);
    free(c->photons);
    free(c->records);
}

/* 1, 2 and 3 contexts, batches from 1 photon's worth of room up: the
 * sink's hits, photons and records are the single call's, in order; the
 * summary is theirs too. */
static void test_stream_same_bytes(void **state)
{
    fixture *f = *state;
    prism_photon *want = calloc(N, sizeof *want);
    const size_t want_n = ref_hits(f, PRISM_SURFACE_DETECT, want);
    uint64_t by_solid[2][64];
    const size_t solids = f->s.scene.solids_count;
    const size_t batches[] = {0, 997, 5000, N};
    for (size_t n = 1; n <= MAX_CTX; n++)
        for (size_t k = 0; k < sizeof batches / sizeof batches[0]; k++) {
            collected c;
            collected_init(&c, f);
            memset(by_solid, 0, sizeof by_solid);
            prism_propagate_summary sum = {.detected_by_solid = by_solid[0], .solids = solids};
            prism_propagate_summary ref = {.detected_by_solid = by_solid[1], .solids = solids};
            prism_propagate_stream_desc s = {
                .batch = batches[k], .photons = true, .sink = sink, .user = &c, .summary = &sum};
            prism_propagate_stats st;
            prism_propagate_share shares[MAX_CTX];
            assert_int_equal(prism_propagate_stream(f->ctx, (const prism_geometry *const *)f->g, n,
                                                    &source, &desc, &s, &st, shares),
                             PRISM_SUCCESS);
            assert_int_equal(c.next, desc.first_photon + N);
            assert_int_equal(c.hits_n, want_n);
            assert_memory_equal(c.hits, want, want_n * sizeof *want);
            assert_memory_equal(c.photons, f->ref, N * sizeof *f->ref);
            assert_memory_equal(c.records, f->ref_rec, (size_t)N * K * sizeof *f->ref_rec);
            assert_int_equal(st.hits, want_n);
            assert_int_equal(st.steps, f->ref_st.steps);
            ref_summary(f, &ref);
            assert_summaries_equal(&sum, &ref);
            size_t total = 0;
            unsigned nb = 0;
            for (size_t i = 0; i < n; i++) {
                total += shares[i].photons;
                nb += shares[i].batches;
                assert_int_equal(shares[i].batches, c.contexts_seen[i]);
                /* the stream's own time: within the run, and what a
                 * context that ran no batch has none of */
                const double parts[] = {shares[i].start_seconds, shares[i].finish_seconds,
                                        shares[i].pin_seconds, shares[i].hits_wait_seconds};
                for (int p = 0; p < 4; p++) {
                    assert_true(parts[p] >= 0.0 && parts[p] <= st.seconds);
                    if (shares[i].batches == 0)
                        assert_true(parts[p] == 0.0);
                }
                assert_true(shares[i].start_seconds + shares[i].seconds +
                                shares[i].finish_seconds <=
                            st.seconds + 1e-6);
            }
            assert_int_equal(total, N);
            assert_int_equal(nb, c.batches);
            if (batches[k] == 997)
                assert_int_equal(c.batches, (N + 996) / 997);
            collected_free(&c);
        }
    free(want);
}

/* Strided shares of one run, as MPI ranks take them: R callers (2, 3, 4),
 * each on its own contexts, with phases 0..R-1; batch k is caller k mod
 * R's, each caller's batches reach its sink in order, and put together in
 * photon order they are the single call's hits and photons, and the
 * summaries add up to its summary. */
typedef struct strided {
    prism_photon *hits_of[64]; /* per batch of the run */
    size_t hits_n[64];
    prism_photon *photons;
    uint64_t last_first;
    unsigned batches;
    uint32_t stride, phase;
    size_t batch;
} strided;

static prism_result strided_sink(void *user, const prism_propagate_batch *b)
{
    strided *c = user;
    const uint64_t at = b->first - desc.first_photon, k = at / c->batch;
    assert_int_equal(at % c->batch, 0);
    assert_int_equal(k % c->stride, c->phase);                /* its own batches only */
    assert_true(c->batches == 0 || b->first > c->last_first); /* in order */
    assert_true(k < 64);
    c->last_first = b->first;
    c->hits_of[k] = malloc((b->hits_count > 0 ? b->hits_count : 1) * sizeof *b->hits);
    memcpy(c->hits_of[k], b->hits, b->hits_count * sizeof *b->hits);
    c->hits_n[k] = b->hits_count;
    memcpy(c->photons + at, b->photons, b->count * sizeof *b->photons);
    c->batches++;
    return PRISM_SUCCESS;
}

static void test_stream_strided_shares(void **state)
{
    fixture *f = *state;
    prism_photon *want = calloc(N, sizeof *want);
    const size_t want_n = ref_hits(f, PRISM_SURFACE_DETECT, want);
    const size_t batch = 1500, batches = (N + batch - 1) / batch;
    for (uint32_t ranks = 2; ranks <= 4; ranks++) {
        strided c = {.photons = calloc(N, sizeof(prism_photon)), .stride = ranks, .batch = batch};
        prism_propagate_summary sum = {0}, ref = {0};
        size_t photons = 0;
        for (uint32_t phase = 0; phase < ranks; phase++) {
            c.phase = phase;
            c.batches = 0;
            prism_propagate_stream_desc s = {.batch = batch,
                                             .photons = true,
                                             .sink = strided_sink,
                                             .user = &c,
                                             .summary = &sum,
                                             .stride = ranks,
                                             .phase = phase};
            prism_propagate_desc d = desc;
            d.record_steps = 0;
            prism_propagate_share shares[2];
            const size_t n = 1 + phase % 2; /* one or two contexts a caller */
            assert_int_equal(prism_propagate_stream(f->ctx, (const prism_geometry *const *)f->g, n,
                                                    &source, &d, &s, NULL, shares),
                             PRISM_SUCCESS);
            assert_int_equal(c.batches, (batches - phase + ranks - 1) / ranks);
            size_t caller = 0;
            for (size_t i = 0; i < n; i++)
                caller += shares[i].photons;
            /* what a caller is told beforehand is what it propagates */
            assert_int_equal(caller, prism_propagate_stream_photons(N, batch, ranks, phase));
            photons += caller;
        }
        assert_int_equal(photons, N);
        assert_memory_equal(c.photons, f->ref, N * sizeof *f->ref);
        size_t at = 0;
        for (size_t k = 0; k < batches; k++) {
            assert_non_null(c.hits_of[k]);
            assert_true(at + c.hits_n[k] <= want_n);
            assert_memory_equal(c.hits_of[k], want + at, c.hits_n[k] * sizeof *want);
            at += c.hits_n[k];
            free(c.hits_of[k]);
        }
        assert_int_equal(at, want_n);
        ref_summary(f, &ref);
        assert_summaries_equal(&sum, &ref);
        free(c.photons);
    }
    /* a stride needs a batch size and a phase below it */
    collected c;
    collected_init(&c, f);
    prism_propagate_stream_desc s = {.sink = sink, .user = &c, .stride = 2};
    assert_int_equal(prism_propagate_stream(f->ctx, (const prism_geometry *const *)f->g, 1, &source,
                                            &desc, &s, NULL, NULL),
                     PRISM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(prism_context_last_error(f->ctx[0]), "stride"));
    s.batch = 1000;
    s.phase = 2;
    assert_int_equal(prism_propagate_stream(f->ctx, (const prism_geometry *const *)f->g, 1, &source,
                                            &desc, &s, NULL, NULL),
                     PRISM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(c.batches, 0);
    collected_free(&c);
    free(want);
}

/* Claimed shares of one run, as processes take them from a cursor they
 * share: two callers on threads of their own (one context, then two),
 * claiming batches of varying sizes (never above the batch) from one
 * cursor. Each caller's batches reach its sink in the order it claimed
 * them, and all of them put together in photon order are the single
 * call's hits and photons, their summaries its summary. Each batch's hit
 * count is told (stream->counted) once, before its sink has it. */
typedef struct claim_cursor {
    pthread_mutex_t lock;
    uint64_t next, claims;
    struct {
        uint64_t first;
        size_t count, hits_n;
        prism_photon *hits;
    } got[64];
    size_t got_n;
    prism_photon *photons;
    bool fail; /* the next claim fails */
} claim_cursor;

typedef struct claimer {
    claim_cursor *cursor;
    prism_propagate_summary sum;
    uint64_t claimed_first[64], delivered;
    size_t claimed;
    prism_result result;
    size_t contexts;
    bool out_of_order;
    /* the counts told (stream->counted), under the cursor's lock */
    uint64_t told_first[64];
    size_t told_hits[64], told;
    bool told_wrong;  /* told twice, with hits readable, or the sink's count other */
    size_t fail_told; /* told this many, the next told fails (0: never) */
    fixture *f;
} claimer;

static prism_result told_count(void *user, const prism_propagate_batch *b)
{
    claimer *c = user;
    claim_cursor *k = c->cursor;
    pthread_mutex_lock(&k->lock);
    const bool fail = c->fail_told != 0 && c->told == c->fail_told;
    for (size_t i = 0; i < c->told; i++)
        c->told_wrong |= c->told_first[i] == b->first;
    c->told_wrong |= b->hits != NULL || c->told == 64;
    if (c->told < 64) {
        c->told_first[c->told] = b->first;
        c->told_hits[c->told++] = b->hits_count;
    }
    pthread_mutex_unlock(&k->lock);
    return fail ? PRISM_ERROR_IO : PRISM_SUCCESS;
}

static prism_result claim_batch(void *user, size_t batch, uint64_t *first, uint64_t *count)
{
    claimer *c = user;
    claim_cursor *k = c->cursor;
    pthread_mutex_lock(&k->lock);
    const uint64_t want = k->claims++ % 2 ? batch / 2 + 7 : batch, left = N - k->next;
    *first = k->next;
    *count = left < want ? left : want;
    k->next += *count;
    const bool fail = k->fail;
    pthread_mutex_unlock(&k->lock);
    if (fail)
        return PRISM_ERROR_IO;
    if (*count > 0 && c->claimed < 64)
        c->claimed_first[c->claimed++] = *first;
    return PRISM_SUCCESS;
}

static prism_result claimed_sink(void *user, const prism_propagate_batch *b)
{
    claimer *c = user;
    claim_cursor *k = c->cursor;
    const uint64_t at = b->first - desc.first_photon;
    /* checked here, asserted on the test's thread: in the order claimed */
    if (c->delivered >= c->claimed || at != c->claimed_first[c->delivered++])
        c->out_of_order = true;
    pthread_mutex_lock(&k->lock);
    bool told = false; /* its count told before, the same */
    for (size_t i = 0; i < c->told; i++)
        told |= c->told_first[i] == b->first && c->told_hits[i] == b->hits_count;
    c->told_wrong |= !told;
    if (k->got_n == 64) {
        pthread_mutex_unlock(&k->lock);
        return PRISM_ERROR_OUT_OF_MEMORY;
    }
    k->got[k->got_n].first = at;
    k->got[k->got_n].count = b->count;
    k->got[k->got_n].hits_n = b->hits_count;
    k->got[k->got_n].hits = malloc((b->hits_count > 0 ? b->hits_count : 1) * sizeof *b->hits);
    memcpy(k->got[k->got_n].hits, b->hits, b->hits_count * sizeof *b->hits);
    k->got_n++;
    memcpy(k->photons + at, b->photons, b->count * sizeof *b->photons);
    pthread_mutex_unlock(&k->lock);
    return PRISM_SUCCESS;
}

static void *claiming_caller(void *arg)
{
    claimer *c = arg;
    /* caller 0 on context 0, caller 1 on contexts 1 and 2 */
    const size_t from = c->contexts == 1 ? 0 : 1;
    prism_propagate_stream_desc s = {.batch = 1500,
                                     .photons = true,
                                     .sink = claimed_sink,
                                     .user = c,
                                     .summary = &c->sum,
                                     .claim = claim_batch,
                                     .counted = told_count};
    prism_propagate_desc d = desc;
    d.record_steps = 0;
    c->result = prism_propagate_stream(c->f->ctx + from,
                                       (const prism_geometry *const *)c->f->g + from, c->contexts,
                                       &source, &d, &s, NULL, NULL);
    return NULL;
}

/* One caller on context 0 alone, from the cursor's start: its claims
 * failing, or its `fail_told`-th count told failing (0: never). */
static void claim_alone(claimer *c, claim_cursor *k, fixture *f, bool claims_fail, size_t fail_told)
{
    memset(c, 0, sizeof *c);
    k->next = 0;
    k->got_n = 0;
    k->fail = claims_fail;
    c->cursor = k;
    c->contexts = 1;
    c->f = f;
    c->fail_told = fail_told;
    claiming_caller(c);
}

static int by_first(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void test_stream_claimed_shares(void **state)
{
    fixture *f = *state;
    prism_photon *want = calloc(N, sizeof *want);
    const size_t want_n = ref_hits(f, PRISM_SURFACE_DETECT, want);
    static claim_cursor k;
    memset(&k, 0, sizeof k);
    pthread_mutex_init(&k.lock, NULL);
    k.photons = calloc(N, sizeof(prism_photon));
    claimer c[2];
    pthread_t t[2];
    for (int i = 0; i < 2; i++) {
        memset(&c[i], 0, sizeof c[i]);
        c[i].cursor = &k;
        c[i].contexts = (size_t)i + 1;
        c[i].f = f;
        assert_int_equal(pthread_create(&t[i], NULL, claiming_caller, &c[i]), 0);
    }
    for (int i = 0; i < 2; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(c[i].result, PRISM_SUCCESS);
        assert_false(c[i].out_of_order);
        assert_int_equal(c[i].delivered, c[i].claimed);
        /* every batch's count told once, before its sink, the same */
        assert_false(c[i].told_wrong);
        assert_int_equal(c[i].told, c[i].claimed);
    }
    assert_true(c[0].claimed > 0 && c[1].claimed > 0); /* both took part */
    /* the batches side by side in photon order cover the run once */
    qsort(k.got, k.got_n, sizeof k.got[0], by_first);
    uint64_t next = 0;
    size_t at = 0;
    for (size_t i = 0; i < k.got_n; i++) {
        assert_int_equal(k.got[i].first, next);
        assert_true(k.got[i].count <= 1500);
        next += k.got[i].count;
        assert_true(at + k.got[i].hits_n <= want_n);
        assert_memory_equal(k.got[i].hits, want + at, k.got[i].hits_n * sizeof *want);
        at += k.got[i].hits_n;
        free(k.got[i].hits);
    }
    assert_int_equal(next, N);
    assert_int_equal(at, want_n);
    assert_memory_equal(k.photons, f->ref, N * sizeof *f->ref);
    prism_propagate_summary ref = {0};
    ref_summary(f, &ref);
    for (int b = 0; b < 32; b++)
        c[0].sum.flagged[b] += c[1].sum.flagged[b];
    c[0].sum.photons += c[1].sum.photons;
    c[0].sum.steps += c[1].sum.steps;
    assert_int_equal(c[0].sum.photons, ref.photons);
    assert_int_equal(c[0].sum.steps, ref.steps);
    assert_memory_equal(c[0].sum.flagged, ref.flagged, sizeof ref.flagged);
    /* a claim that fails stops the call with its status */
    claim_alone(&c[0], &k, f, true, 0);
    assert_int_equal(c[0].result, PRISM_ERROR_IO);
    assert_int_equal(k.got_n, 0);
    /* a count told that fails stops it too: the sink has no batch after */
    claim_alone(&c[0], &k, f, false, 2);
    assert_int_equal(c[0].result, PRISM_ERROR_IO);
    assert_int_equal(c[0].told, 3);
    assert_true(k.got_n <= 2);
    for (size_t i = 0; i < k.got_n; i++)
        free(k.got[i].hits);
    /* a claim needs a batch size and no stride */
    collected col;
    collected_init(&col, f);
    prism_propagate_stream_desc s = {.sink = sink, .user = &col, .claim = claim_batch};
    assert_int_equal(prism_propagate_stream(f->ctx, (const prism_geometry *const *)f->g, 1, &source,
                                            &desc, &s, NULL, NULL),
                     PRISM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(prism_context_last_error(f->ctx[0]), "claim"));
    s.batch = 1000;
    s.stride = 2;
    assert_int_equal(prism_propagate_stream(f->ctx, (const prism_geometry *const *)f->g, 1, &source,
                                            &desc, &s, NULL, NULL),
                     PRISM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(col.batches, 0);
    collected_free(&col);
    pthread_mutex_destroy(&k.lock);
    free(k.photons);
    free(want);
}

/* A PHOTONS source read through fill, in order, against one call on the
 * same photons. */
static void test_stream_fill(void **state)
{
    fixture *f = *state;
    prism_photon *input = calloc(N, sizeof *input), *ref = calloc(N, sizeof *ref);
    collected c;
    collected_init(&c, f);
    fill(&c, desc.first_photon, N, input);
    c.fills = 0;
    const prism_photon_source given = {.kind = PRISM_SOURCE_PHOTONS, .count = N, .photons = input};
    prism_propagate_outputs out = {.photons = {.kind = PRISM_TARGET_HOST, .host = ref}};
    prism_propagate_desc d = desc;
    d.record_steps = 0;
    assert_int_equal(prism_propagate(f->ctx[0], f->g[0], &given, &d, &out, NULL), PRISM_SUCCESS);
    const prism_photon_source streamed = {.kind = PRISM_SOURCE_PHOTONS, .count = N};
    prism_propagate_stream_desc s = {
        .batch = 3000, .photons = true, .sink = sink, .fill = fill, .user = &c};
    assert_int_equal(prism_propagate_stream(f->ctx, (const prism_geometry *const *)f->g, 2,
                                            &streamed, &d, &s, NULL, NULL),
                     PRISM_SUCCESS);
    assert_int_equal(c.fills, (N + 2999) / 3000);
    assert_memory_equal(c.photons, ref, N * sizeof *ref);
    collected_free(&c);
    free(input);
    free(ref);
}

static prism_result done(void *user)
{
    collected *c = user;
    c->dones++;
    c->next_at_done = c->next;
    prism_memory_report r;
    assert_int_equal(prism_memory_report_get(c->f->ctx[0], &r), PRISM_SUCCESS);
    c->held_at_done = r.total.bytes;
    return c->done_result;
}

/* stream->done: called once, after the sink had every batch and before
 * the call released its memory; its failure is the call's; not called
 * after a sink's failure. */
static void test_stream_done(void **state)
{
    fixture *f = *state;
    const prism_geometry *const *g = (const prism_geometry *const *)f->g;
    prism_memory_report before, after;
    assert_int_equal(prism_memory_report_get(f->ctx[0], &before), PRISM_SUCCESS);
    collected c;
    collected_init(&c, f);
    prism_propagate_stream_desc s = {.batch = 1000, .sink = sink, .user = &c, .done = done};
    assert_int_equal(prism_propagate_stream(f->ctx, g, 2, &source, &desc, &s, NULL, NULL),
                     PRISM_SUCCESS);
    assert_int_equal(c.dones, 1);
    assert_true(c.next_at_done == desc.first_photon + N);
    assert_int_equal(prism_memory_report_get(f->ctx[0], &after), PRISM_SUCCESS);
    assert_true(c.held_at_done > after.total.bytes); /* the scratch still held then */
    assert_int_equal(after.total.bytes, before.total.bytes);
    collected_free(&c);

    collected_init(&c, f);
    c.done_result = PRISM_ERROR_IO;
    assert_int_equal(prism_propagate_stream(f->ctx, g, 2, &source, &desc, &s, NULL, NULL),
                     PRISM_ERROR_IO);
    assert_int_equal(c.dones, 1);
    assert_true(c.next_at_done == desc.first_photon + N);
    collected_free(&c);

    collected_init(&c, f);
    c.fail_at = 2;
    assert_int_equal(prism_propagate_stream(f->ctx, g, 2, &source, &desc, &s, NULL, NULL),
                     PRISM_ERROR_IO);
    assert_int_equal(c.dones, 0);
    assert_int_equal(prism_memory_report_get(f->ctx[0], &after), PRISM_SUCCESS);
    assert_int_equal(after.total.bytes, before.total.bytes);
    collected_free(&c);
}

/* A sink or a fill that fails stops the run with its result; nothing is
 * delivered after a failure. */
static void test_stream_failures(void **state)
{
    fixture *f = *state;
    collected c;
    collected_init(&c, f);
    c.fail_at = 3;
    prism_propagate_stream_desc s = {.batch = 1000, .sink = sink, .user = &c};
    assert_int_equal(prism_propagate_stream(f->ctx, (const prism_geometry *const *)f->g, 3, &source,
                                            &desc, &s, NULL, NULL),
                     PRISM_ERROR_IO);
    assert_int_equal(c.batches, 3);
    collected_free(&c);

    collected_init(&c, f);
    c.fill_fail_at = 2;
    const prism_photon_source streamed = {.kind = PRISM_SOURCE_PHOTONS, .count = N};
    prism_propagate_desc d = desc;
    d.record_steps = 0;
    s = (prism_propagate_stream_desc){.batch = 1000, .sink = sink, .fill = fill, .user = &c};
    assert_int_equal(prism_propagate_stream(f->ctx, (const prism_geometry *const *)f->g, 2,
                                            &streamed, &d, &s, NULL, NULL),
                     PRISM_ERROR_IO);
    assert_true(c.batches <= 2);
    collected_free(&c);
}

static void test_stream_errors(void **state)
{
    fixture *f = *state;
    const prism_geometry *const *g = (const prism_geometry *const *)f->g;
    collected c;
    collected_init(&c, f);
    prism_propagate_stream_desc s = {.sink = sink, .user = &c};
    prism_propagate_stream_desc no_sink = {.user = &c};
    assert_int_equal(prism_propagate_stream(f->ctx, g, 1, &source, &desc, &no_sink, NULL, NULL),
                     PRISM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(prism_context_last_error(f->ctx[0]), "sink"));
    assert_int_equal(prism_propagate_stream(f->ctx, g, 0, &source, &desc, &s, NULL, NULL),
                     PRISM_ERROR_INVALID_ARGUMENT);
    prism_context *twice[2] = {f->ctx[0], f->ctx[0]};
    const prism_geometry *g2[2] = {f->g[0], f->g[0]};
    assert_int_equal(prism_propagate_stream(twice, g2, 2, &source, &desc, &s, NULL, NULL),
                     PRISM_ERROR_INVALID_ARGUMENT);
    prism_photon_source none = source;
    none.count = 0;
    assert_int_equal(prism_propagate_stream(f->ctx, g, 1, &none, &desc, &s, NULL, NULL),
                     PRISM_ERROR_INVALID_ARGUMENT);
    prism_photon_source given = {.kind = PRISM_SOURCE_PHOTONS, .count = 10};
    assert_int_equal(prism_propagate_stream(f->ctx, g, 1, &given, &desc, &s, NULL, NULL),
                     PRISM_ERROR_INVALID_ARGUMENT);
    /* multi leaves hits and summaries to the stream */
    prism_photon one[1];
    prism_propagate_outputs out = {.hits = {.kind = PRISM_TARGET_HOST, .host = one}};
    assert_int_equal(prism_propagate_multi(f->ctx, g, 2, &source, &desc, &out, NULL, NULL),
                     PRISM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(c.batches, 0);
    collected_free(&c);
}

typedef struct joining {
    collected c; /* first: the sink's user */
    fixture *f;
    unsigned joined;
    int fail_index;      /* join fails for this index, -1 never */
    bool wrong_geometry; /* join gives another context's geometry */
} joining;

static prism_result join_ctx(void *user, size_t i, prism_context **ctx, const prism_geometry **g)
{
    joining *j = user;
    __atomic_add_fetch(&j->joined, 1, __ATOMIC_SEQ_CST);
    if ((int)i == j->fail_index)
        return PRISM_ERROR_NO_DEVICE;
    *ctx = j->f->ctx[i];
    *g = j->f->g[j->wrong_geometry ? 0 : i];
    return PRISM_SUCCESS;
}

/* Contexts 1 and 2 join on the stream's threads: the same bytes; a join
 * that fails, or gives a geometry of another context, fails the run. */
static void test_stream_late_contexts(void **state)
{
    fixture *f = *state;
    prism_photon *want = calloc(N, sizeof *want);
    const size_t want_n = ref_hits(f, PRISM_SURFACE_DETECT, want);
    prism_context *ctxs[MAX_CTX] = {f->ctx[0], NULL, NULL};
    const prism_geometry *gs[MAX_CTX] = {f->g[0], NULL, NULL};
    joining j = {.f = f, .fail_index = -1};
    collected_init(&j.c, f);
    prism_propagate_stream_desc s = {
        .batch = 1500, .photons = true, .sink = sink, .user = &j, .join = join_ctx};
    prism_propagate_share shares[MAX_CTX];
    assert_int_equal(prism_propagate_stream(ctxs, gs, MAX_CTX, &source, &desc, &s, NULL, shares),
                     PRISM_SUCCESS);
    assert_int_equal(j.joined, 2);
    assert_int_equal(j.c.hits_n, want_n);
    assert_memory_equal(j.c.hits, want, want_n * sizeof *want);
    assert_memory_equal(j.c.photons, f->ref, N * sizeof *f->ref);
    assert_int_equal(shares[0].photons + shares[1].photons + shares[2].photons, N);
    collected_free(&j.c);
    /* without join, a NULL context is refused */
    s.join = NULL;
    assert_int_equal(prism_propagate_stream(ctxs, gs, MAX_CTX, &source, &desc, &s, NULL, NULL),
                     PRISM_ERROR_INVALID_ARGUMENT);
    /* a join that fails */
    j = (joining){.f = f, .fail_index = 2};
    collected_init(&j.c, f);
    s = (prism_propagate_stream_desc){.batch = 1500, .sink = sink, .user = &j, .join = join_ctx};
    assert_int_equal(prism_propagate_stream(ctxs, gs, MAX_CTX, &source, &desc, &s, NULL, NULL),
                     PRISM_ERROR_NO_DEVICE);
    assert_non_null(strstr(prism_context_last_error(f->ctx[0]), "context 2 did not join"));
    collected_free(&j.c);
    /* a geometry of another context */
    j = (joining){.f = f, .fail_index = -1, .wrong_geometry = true};
    collected_init(&j.c, f);
    assert_int_equal(prism_propagate_stream(ctxs, gs, MAX_CTX, &source, &desc, &s, NULL, NULL),
                     PRISM_ERROR_INVALID_ARGUMENT);
    collected_free(&j.c);
    free(want);
}

/* A strided caller's photons against a count of its batches one by one,
 * and every caller's together the run. */
static void test_stream_photons(void **state)
{
    (void)state;
    const uint64_t counts[] = {0, 1, 5, 999, 1000, 1001, 123457};
    const size_t batches[] = {1, 3, 7, 1000, 5000};
    for (size_t a = 0; a < sizeof counts / sizeof counts[0]; a++)
        for (size_t b = 0; b < sizeof batches / sizeof batches[0]; b++)
            for (uint32_t stride = 2; stride <= 5; stride++) {
                uint64_t all = 0;
                for (uint32_t phase = 0; phase < stride; phase++) {
                    uint64_t own = 0;
                    for (uint64_t first = (uint64_t)phase * batches[b]; first < counts[a];
                         first += (uint64_t)stride * batches[b])
                        own += counts[a] - first < batches[b] ? counts[a] - first : batches[b];
                    assert_int_equal(
                        prism_propagate_stream_photons(counts[a], batches[b], stride, phase), own);
                    all += own;
                }
                assert_int_equal(all, counts[a]);
            }
    assert_int_equal(prism_propagate_stream_photons(77, 10, 1, 0), 77); /* the whole run */
    assert_int_equal(prism_propagate_stream_photons(77, 0, 0, 0), 77);
    assert_int_equal(prism_propagate_stream_photons(77, 0, 2, 0), 0);  /* no batch size */
    assert_int_equal(prism_propagate_stream_photons(77, 10, 2, 2), 0); /* phase >= stride */
}

/* The batch cut near a run's end: half a context's share of what is
 * left, between a quarter batch (and 2^16) and the batch; whole batches
 * for one context; never more than is left. */
static void test_stream_cut(void **state)
{
    (void)state;
    const uint64_t B = 1u << 20;
    assert_int_equal(prism_propagate_stream_cut(100 * B, B, 2), B);   /* far from the end */
    assert_int_equal(prism_propagate_stream_cut(2 * B, B, 2), B / 2); /* half a share */
    assert_int_equal(prism_propagate_stream_cut(B / 2, B, 2), B / 4); /* not below a quarter */
    assert_int_equal(prism_propagate_stream_cut(B / 8, B, 2), B / 8); /* nor above what is left */
    assert_int_equal(prism_propagate_stream_cut(8 * B, B, 8), B / 2);
    assert_int_equal(prism_propagate_stream_cut(B / 2, B, 1), B / 2); /* one context: no cut */
    assert_int_equal(prism_propagate_stream_cut(3 * B, B, 1), B);
    /* a small batch: 2^16 at least, but never above the batch */
    assert_int_equal(prism_propagate_stream_cut(1u << 20, 1u << 18, 64), 1u << 16);
    assert_int_equal(prism_propagate_stream_cut(1u << 20, 5000, 64), 5000);
    assert_int_equal(prism_propagate_stream_cut(0, B, 2), 0);
}

static void test_end_bit(void **state)
{
    (void)state;
    assert_int_equal(prism_photon_end_bit(0), -1);
    assert_int_equal(prism_photon_end_bit(PRISM_RAYLEIGH_SCATTER), -1);
    assert_int_equal(prism_photon_end_bit(PRISM_NO_HIT), 0);
    assert_int_equal(prism_photon_end_bit(PRISM_SURFACE_DETECT | PRISM_REFRACT), 2);
    assert_int_equal(prism_photon_end_bit(PRISM_STEP_LIMIT | PRISM_SURFACE_DETECT), 30);
    assert_int_equal(prism_photon_end_bit(PRISM_NAN_ABORT | PRISM_STEP_LIMIT), 31);
    assert_int_equal(prism_photon_end_bit(PRISM_BULK_ABSORB | PRISM_NO_HIT), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_end_bit),
        cmocka_unit_test(test_stream_photons),
        cmocka_unit_test(test_stream_cut),
        cmocka_unit_test(test_hits_and_summary_of_one_call),
        cmocka_unit_test(test_stream_same_bytes),
        cmocka_unit_test(test_stream_strided_shares),
        cmocka_unit_test(test_stream_claimed_shares),
        cmocka_unit_test(test_stream_fill),
        cmocka_unit_test(test_stream_failures),
        cmocka_unit_test(test_stream_done),
        cmocka_unit_test(test_stream_errors),
        cmocka_unit_test(test_stream_late_contexts),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
