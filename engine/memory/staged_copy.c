/* The staged copy of promoted arrays: all threads fill chunk i of the data
 * into pinned staging buffer i%N (N = 4 by default, each with its own
 * stream) while earlier chunks cross the bus, so conversion and transfer
 * overlap. Used by the geometry upload and measured as such by prism-bench
 * upload. Also the parallel streaming fill of mapped memory.
 *
 * Why a plain double-buffered copy gets slower with bigger chunks, and
 * never near the PCIe peak (measured with prism-bench upload and
 * tools/probe_staging.c; the README has the figures):
 * - Small chunks: filled with ordinary stores, a chunk's lines were still
 *   modified in the cores' L2 when the DMA engine read them, and every line
 *   had to be snooped out: the copy ran at half speed, so the pipeline was
 *   no faster than fill and copy one after the other. The fills now use
 *   streaming stores (fill_store.c).
 * - Big chunks: with two buffers the first fill and the last copy do not
 *   overlap anything; with chunks near the array's size that is most of
 *   the upload. Chunks
 *   now start at 256 KiB and double up to the staging size, and a ring of
 *   buffers lets the fill run ahead of the copies.
 * - One parallel region per copy (two barriers a chunk), not one per
 *   chunk. */
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "internal.h"

/* The first chunk of a staged copy; later ones double up to the staging
 * size. Small enough that the unoverlapped first fill is a few µs. */
#define PRISM__RAMP_START ((size_t)256 << 10)

/* Run fill over [first, first+n) in `granule`-aligned pieces on all
 * threads; small ranges stay on this thread. */
void prism__parallel_fill(prism__fill_fn fill, void *user, size_t first, size_t n, size_t granule,
                          unsigned char *dst)
{
    size_t units = n / granule, piece_min = ((size_t)1 << 20) / granule + 1;
    /* mapped memory: streaming stores */
    if (units < 2 * piece_min) {
        fill(user, first, n, dst, false);
        prism__store_fence();
        return;
    }
#pragma omp parallel
    {
        /* static split: each thread writes one contiguous, sequential range */
#pragma omp for schedule(static)
        for (long long t = 0; t < 64; t++) {
            size_t a = units * (size_t)t / 64, b = units * (size_t)(t + 1) / 64;
            size_t end = t == 63 ? n : b * granule;
            if (end > a * granule)
                fill(user, first + a * granule, end - a * granule, dst + a * granule, false);
        }
        prism__store_fence();
    }
}

prism_result prism__staging_open(prism_context *ctx, size_t chunk, prism__staging *st)
{
    memset(st, 0, sizeof *st);
    st->chunk = chunk;
    struct prism_memory_state *m = ctx->memory;
    unsigned nbuf = m->staging_buffers ? m->staging_buffers : PRISM__STAGING_BUFFERS;
    st->count = nbuf < 2 ? 2 : nbuf > PRISM__STAGING_MAX ? PRISM__STAGING_MAX : nbuf;
    st->ramp = !m->staging_no_ramp;
    st->threads = m->staging_threads;
    st->stores = m->staging_stores ? m->staging_stores : PRISM__STAGING_STORES;
    prism_result r = PRISM_SUCCESS;
    /* Pinned memory is slow to allocate: the chunks come from a pool the
     * context keeps, so repeated uploads pay for them once (the memory
     * report shows them as "upload.staging.held" between uploads). */
    if (!m->staging_pool) {
        prism_pool_desc pd = {PRISM_POOL_PINNED, 0, "upload.staging"};
        r = prism_pool_create(ctx, &pd, &m->staging_pool);
    }
    for (unsigned k = 0; k < st->count && r == PRISM_SUCCESS; k++) {
        r = prism_pool_allocate(m->staging_pool, chunk, "upload.staging", &st->buf[k]);
        if (r == PRISM_SUCCESS)
            r = prism_stream_create(ctx, &st->stream[k]);
    }
    if (r != PRISM_SUCCESS)
        prism__staging_close(st);
    return r;
}

void prism__staging_close(prism__staging *st)
{
    for (unsigned k = 0; k < PRISM__STAGING_MAX; k++) {
        if (st->stream[k])
            prism_stream_synchronize(st->stream[k]);
        prism_stream_destroy(st->stream[k]);
        prism_buffer_release(st->buf[k]);
        st->stream[k] = NULL;
        st->buf[k] = NULL;
    }
}

/* How chunk i is stored (fill_store.c says why): hybrid streams the small
 * ramp chunks, which the DMA engine reads at once, and stores the full ones
 * plainly, which it reads after a few more have been filled. */
typedef struct chunk_stores {
    bool plain, demote;
} chunk_stores;

static chunk_stores stores_for(const prism__staging *st, bool ramp_chunk)
{
    switch (st->stores) {
    case PRISM__STORES_PLAIN: return (chunk_stores){true, false};
    case PRISM__STORES_PLAIN_DEMOTE: return (chunk_stores){true, true};
    case PRISM__STORES_HYBRID: return (chunk_stores){!ramp_chunk, false};
    case PRISM__STORES_HYBRID_DEMOTE: return (chunk_stores){!ramp_chunk, !ramp_chunk};
    default: return (chunk_stores){false, false};
    }
}

/* Thread t of nt fills its slice of the chunk [off, off+len): whole
 * granules, slice starts on a cache line where the granule allows. */
static void fill_slice(prism__fill_fn fill, void *user, size_t off, size_t len, size_t unit, int t,
                       int nt, unsigned char *host, chunk_stores how)
{
    size_t units = len / unit;
    size_t a = units * (size_t)t / (size_t)nt * unit;
    size_t b = t == nt - 1 ? len : units * (size_t)(t + 1) / (size_t)nt * unit;
    if (b > a)
        fill(user, off + a, b - a, host + a, how.plain);
    if (how.demote && b > a)
        prism__demote_lines(host + a, b - a);
    prism__store_fence();
}

/* The slice unit: whole granules and, where a granule allows, whole
 * 64-byte lines (lcm), so threads never share a line. */
static size_t slice_unit(size_t granule)
{
    size_t a = granule, b = 64;
    while (b) {
        size_t t = a % b;
        a = b;
        b = t;
    }
    return granule / a * 64;
}

/* Length of chunk i starting at off: PRISM__RAMP_START doubling up to the
 * staging size, whole granules. *ramp_chunk: shorter than the staging. */
static size_t chunk_len(const prism__staging *st, size_t i, size_t off, size_t n, size_t granule,
                        bool *ramp_chunk)
{
    size_t len = st->chunk;
    *ramp_chunk = false;
    if (st->ramp && i < 30) {
        size_t ramp = (PRISM__RAMP_START << i) / granule * granule;
        if (ramp >= granule && ramp < len) {
            len = ramp;
            *ramp_chunk = true;
        }
    }
    return n - off < len ? n - off : len;
}

/* Threads for a copy of n bytes: the caller's (st->threads), else one per
 * MiB up to OpenMP's count, so that a small copy does not wake (and wait
 * at barriers for) threads it has no work for; never more than a chunk has
 * slice units. */
static int fill_threads(const prism__staging *st, size_t n, size_t unit)
{
    size_t threads = st->threads;
    if (!threads) {
        threads = n >> 20;
        if (threads > (size_t)omp_get_max_threads())
            threads = (size_t)omp_get_max_threads();
    }
    if (threads > st->chunk / unit)
        threads = st->chunk / unit;
    return threads ? (int)threads : 1;
}

prism_result prism__staged_copy(prism__staging *st, prism_buffer *dst, size_t n,
                                prism__fill_fn fill, void *user, size_t granule)
{
    prism_result r = PRISM_SUCCESS;
    size_t unit = slice_unit(granule);
    int threads = fill_threads(st, n, unit);
    /* One region for the whole copy: thread 0 waits for a buffer's last
     * copy and issues the next; a chunk's fill is all threads' (two
     * barriers a chunk, no fork and join). r is written by thread 0 only,
     * between the barriers where no other thread reads it. */
#pragma omp parallel num_threads(threads) if (threads > 1)
    {
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
        size_t off = 0;
        for (size_t i = 0; off < n; i++) {
            unsigned k = (unsigned)(i % st->count);
            bool ramp_chunk;
            size_t len = chunk_len(st, i, off, n, granule, &ramp_chunk);
            unsigned char *host = prism_buffer_host_pointer(st->buf[k]);
            if (t == 0 && r == PRISM_SUCCESS) /* the buffer's last copy is done */
                r = prism_stream_synchronize(st->stream[k]);
#pragma omp barrier
            if (r != PRISM_SUCCESS)
                break;
            fill_slice(fill, user, off, len, unit, t, nt, host, stores_for(st, ramp_chunk));
#pragma omp barrier
            if (t == 0)
                r = prism_buffer_write_async(dst, off, host, len, st->stream[k]);
            off += len;
        }
    }
    for (unsigned k = 0; k < st->count; k++) {
        prism_result rs = prism_stream_synchronize(st->stream[k]);
        if (r == PRISM_SUCCESS)
            r = rs;
    }
    return r;
}

void prism_memory_trim(prism_context *ctx)
{
    if (ctx && ctx->memory)
        prism_pool_free_held(ctx->memory->staging_pool);
}
