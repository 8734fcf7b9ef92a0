/* The kernel cache's key and its disk side, apart from CUDA so that the
 * tests run them anywhere: what a compiled module is keyed by, where the
 * cache lives, the entry format, and reading and writing entries so that
 * processes sharing a directory never see half of one. engine/module/module.c
 * uses them around NVRTC. */
#ifndef PRISM_MODULE_CACHE_H
#define PRISM_MODULE_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/context_internal.h"

/* What a compiled binary depends on. */
typedef struct prism__kc_inputs {
    const char *source;
    const char *name;
    const char *const *options;
    size_t option_count;
    const char *arch;   /* the device's: "sm_90" */
    const char *nvrtc;  /* NVRTC's identity (prism__nvrtc_identify) */
    int driver_version; /* cudaDriverGetVersion's */
    const char *prism_version;
    const char *headers_digest; /* prism__device_headers_digest */
} prism__kc_inputs;

/* The inputs written out unambiguously (each field with its length), and
 * its hash, which names the entry's file. The text itself is stored in
 * the entry and compared on load, so two inputs whose hashes collide
 * never share a binary. */
typedef struct prism__kc_key {
    char *text;
    size_t size;
    uint64_t hash;
} prism__kc_key;

/* PRISM_ERROR_OUT_OF_MEMORY or success; free with prism__kc_key_free. */
prism_result prism__kc_key_make(const prism__kc_inputs *in, prism__kc_key *out);
void prism__kc_key_free(prism__kc_key *key);

/* FNV-1a, 64 bits. */
uint64_t prism__kc_hash(const void *data, size_t size, uint64_t seed);
#define PRISM__KC_HASH_SEED 0xcbf29ce484222325ull

/* The cache directory: `given` (prism_module_options.cache_dir), else
 * $PRISM_CACHE_DIR, else $XDG_CACHE_HOME/prism/kernels (an absolute
 * XDG_CACHE_HOME only, as the XDG spec asks), else $HOME/.cache/prism/kernels.
 * The environment's values are arguments, so the rule is testable. Empty
 * strings count as unset. Returns false when none applies or the path does
 * not fit `size` (the disk cache is then off). */
bool prism__kc_directory(const char *given, const char *prism_cache_dir, const char *xdg_cache_home,
                         const char *home, char *out, size_t size);
/* dir/<16 hex digits of the hash>.prismkc; false when it does not fit. */
bool prism__kc_path(const char *dir, uint64_t hash, char *out, size_t size);

/* Entry flags. */
#define PRISM__KC_CUBIN 1u /* the payload is a cubin (else NUL-terminated PTX) */

/* An entry: a 40-byte header (magic "PRISMKC\0", format version, flags,
 * key size, payload size, checksum of key and payload), the key text,
 * the payload. Native byte order: an entry from another byte order reads
 * as one of another format. */
prism_result prism__kc_encode(const prism__kc_key *key, const void *payload, size_t size,
                              uint32_t flags, void **out, size_t *out_size);

typedef enum prism__kc_check {
    PRISM__KC_VALID = 0,
    PRISM__KC_CORRUPT, /* not a whole entry: magic, sizes or checksum wrong */
    PRISM__KC_FOREIGN  /* a whole entry, of another format version or other inputs */
} prism__kc_check;

/* Check `entry` (size bytes) against `key`; when valid, *payload points
 * into it. `why` (may be NULL) says what is wrong otherwise. */
prism__kc_check prism__kc_decode(const void *entry, size_t size, const prism__kc_key *key,
                                 const void **payload, size_t *payload_size, uint32_t *flags,
                                 char *why, size_t why_size);

typedef enum prism__kc_lookup {
    PRISM__KC_MISS = 0, /* no entry (or none readable: the log says why) */
    PRISM__KC_HIT,
    PRISM__KC_REJECTED /* an entry was corrupt or foreign: removed, with a warning */
} prism__kc_lookup;

/* Read key's entry from `dir`. On a hit *payload is malloc'd (the caller
 * frees it). A corrupt or foreign entry is removed and a warning naming the
 * file and the fault goes to ctx's log. */
prism__kc_lookup prism__kc_load(prism_context *ctx, const char *dir, const prism__kc_key *key,
                                void **payload, size_t *size, uint32_t *flags);

/* Write key's entry into `dir` (created, with its parents, mode 0700):
 * whole into a temporary file of that directory, then renamed over the
 * entry's name, so a reader sees the old entry, none, or the new one, never
 * part of one. On failure nothing is left behind, PRISM_ERROR_IO is
 * returned and `why` says what failed (nothing is logged: the caller
 * decides how loud a cache that cannot be written is). */
prism_result prism__kc_store(const char *dir, const prism__kc_key *key, const void *payload,
                             size_t size, uint32_t flags, char *why, size_t why_size);

/* Remove key's entry (a binary the driver refused), with a warning. */
void prism__kc_remove(prism_context *ctx, const char *dir, const prism__kc_key *key,
                      const char *why);

#endif
