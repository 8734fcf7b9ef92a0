/* The staged copy of promoted arrays: a producer fills chunk i of the data
 * into pinned staging buffer i%2 (CPU threads in parallel, each on its own
 * whole-element range) while chunk i-1 is copied to the device on stream
 * (i-1)%2, so conversion and transfer overlap. Used by the geometry upload
 * and measured as such by prism-bench upload. Also the parallel streaming
 * fill of mapped memory. */
#include <stdlib.h>
#include <string.h>

#include "memory_internal.h"

/* Run fill over [first, first+n) in `granule`-aligned pieces on all
 * threads; small ranges stay on this thread. */
void prism__parallel_fill(prism__fill_fn fill, void *user, size_t first, size_t n, size_t granule,
                          unsigned char *dst)
{
    size_t units = n / granule, piece_min = ((size_t)1 << 20) / granule + 1;
    if (units < 2 * piece_min) {
        fill(user, first, n, dst);
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
                fill(user, first + a * granule, end - a * granule, dst + a * granule);
        }
    }
}

prism_result prism__staging_open(prism_context *ctx, size_t chunk, prism__staging *st)
{
    memset(st, 0, sizeof *st);
    st->chunk = chunk;
    prism_result r = PRISM_SUCCESS;
    /* Pinned memory is slow to allocate: the chunks come from a pool the
     * context keeps, so repeated uploads pay for them once (the memory
     * report shows them as "upload.staging.held" between uploads). */
    struct prism_memory_state *m = ctx->memory;
    if (!m->staging_pool) {
        prism_pool_desc pd = {PRISM_POOL_PINNED, 0, "upload.staging"};
        r = prism_pool_create(ctx, &pd, &m->staging_pool);
    }
    for (int k = 0; k < 2 && r == PRISM_SUCCESS; k++) {
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
    for (int k = 0; k < 2; k++) {
        if (st->stream[k])
            prism_stream_synchronize(st->stream[k]);
        prism_stream_destroy(st->stream[k]);
        prism_buffer_release(st->buf[k]);
        st->stream[k] = NULL;
        st->buf[k] = NULL;
    }
}

prism_result prism__staged_copy(prism__staging *st, prism_buffer *dst, size_t n,
                                prism__fill_fn fill, void *user, size_t granule)
{
    prism_result r = PRISM_SUCCESS;
    for (size_t off = 0, i = 0; off < n && r == PRISM_SUCCESS; off += st->chunk, i++) {
        int k = (int)(i & 1);
        size_t len = n - off < st->chunk ? n - off : st->chunk;
        r = prism_stream_synchronize(st->stream[k]); /* its last copy is done */
        if (r != PRISM_SUCCESS)
            break;
        unsigned char *host = prism_buffer_host_pointer(st->buf[k]);
        prism__parallel_fill(fill, user, off, len, granule, host);
        r = prism_buffer_write_async(dst, off, host, len, st->stream[k]);
    }
    for (int k = 0; k < 2; k++) {
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
