/* Outputs of the kernels: a prism_target resolved to a pointer the backend
 * can write, and scratch memory the kernels work in. On CUDA a host target
 * is staged in device memory and copied back at the end; a GL buffer is
 * mapped (interop: written in place; otherwise the memory module's copy
 * path); a buffer kernels cannot reach is staged and copied in. */
#ifndef PRISM_TARGET_H
#define PRISM_TARGET_H

#include <stdbool.h>
#include <stddef.h>

#include "engine/context_internal.h"
#include "prism/memory.h"
#include "prism/render.h"

/* Memory the kernels use for the length of one call: heap on the host
 * backend, a device prism_buffer (in the ledger) on CUDA. */
typedef struct prism__scratch {
    void *pointer;
    prism_buffer *buffer;
    bool heap;
    struct prism__kept *kept; /* held by the context (prism__scratch_keep) */
} prism__scratch;

/* Scratch the context holds between calls while a run of many calls keeps
 * it (prism__scratch_keep): a request takes a free held block of its tag
 * that is large enough, so the calls of a run do not allocate and free
 * their largest arrays (hundreds of megabytes, and cudaFree waits for the
 * device) each time. */
typedef struct prism__kept {
    char tag[48];
    prism__scratch scratch;
    size_t size;
    bool busy;
} prism__kept;
#define PRISM__KEPT_BLOCKS 16

/* Hold released scratch on ctx (on: counted, so runs may nest) or, when the
 * last holder says off, free what is held. */
void prism__scratch_keep(prism_context *ctx, bool on);

prism_result prism__scratch_alloc(prism_context *ctx, prism__scratch *s, size_t size,
                                  const char *tag);
prism_result prism__scratch_upload(prism_context *ctx, prism__scratch *s, const void *host,
                                   size_t size, const char *tag);
/* Read `size` bytes at `offset` back to the host. */
prism_result prism__scratch_read(prism_context *ctx, const prism__scratch *s, size_t offset,
                                 void *host, size_t size);
void prism__scratch_release(prism__scratch *s);

typedef struct prism__target_map {
    void *pointer;    /* what the kernels write */
    size_t row_bytes; /* distance between rows at `pointer` */
    bool interop;     /* a GL buffer written in place */
    /* private */
    prism_target target;
    size_t width_bytes, rows;
    prism__scratch staging;
    bool staged, gl_mapped, discard;
} prism__target_map;

/* Resolve `t` for `rows` rows of `width_bytes` bytes. A HOST target with
 * host NULL is "not wanted": the kernels get scratch, nothing is copied. */
prism_result prism__target_begin(prism_context *ctx, const prism_target *t, size_t width_bytes,
                                 size_t rows, const char *what, prism__target_map *map);
/* Copy staged results to the target (when `ok`), unmap, release staging. */
prism_result prism__target_end(prism_context *ctx, prism__target_map *map, bool ok);

#endif
