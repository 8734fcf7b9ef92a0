/* The kernel cache's key, directory and entries (engine/module/cache.h). Plain
 * POSIX file calls: the atomicity the cache relies on is rename()'s. */
#define _POSIX_C_SOURCE 200809L
#include "cache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FORMAT_VERSION 1u
#define KNOWN_FLAGS PRISM__KC_CUBIN
/* No module's binary comes near this: a bigger file is not an entry. */
#define MAX_ENTRY_BYTES ((size_t)1 << 30)

static const char magic[8] = {'P', 'R', 'I', 'S', 'M', 'K', 'C', 0};

typedef struct header {
    char magic[8];
    uint32_t version;
    uint32_t flags;
    uint64_t key_size;
    uint64_t payload_size;
    uint64_t checksum; /* of the key text and the payload */
} header;

PRISM_STATIC_ASSERT(sizeof(header) == 40, "the entry header is 40 bytes, no padding");

/* ---- key */

/* FNV-1a: a few lines, fast enough for kilobytes of source and binary,
 * and nothing rides on its strength: keys are compared whole. */
uint64_t prism__kc_hash(const void *data, size_t size, uint64_t seed)
{
    const unsigned char *p = data;
    uint64_t h = seed;
    for (size_t i = 0; i < size; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

typedef struct text {
    char *p;
    size_t size, capacity;
    bool failed;
} text;

static void put(text *t, const void *data, size_t n)
{
    if (t->failed)
        return;
    if (t->size + n + 1 > t->capacity) {
        size_t cap = t->capacity ? t->capacity : 256;
        while (cap < t->size + n + 1)
            cap *= 2;
        char *p = realloc(t->p, cap);
        if (p == NULL) {
            t->failed = true;
            return;
        }
        t->p = p;
        t->capacity = cap;
    }
    memcpy(t->p + t->size, data, n);
    t->size += n;
    t->p[t->size] = 0;
}

/* "label <length>\n<bytes>\n": no value can pass for another field. */
static void field(text *t, const char *label, const char *value)
{
    const size_t n = value != NULL ? strlen(value) : 0;
    char head[96];
    int h = snprintf(head, sizeof head, "%s %zu\n", label, n);
    put(t, head, (size_t)h);
    if (n)
        put(t, value, n);
    put(t, "\n", 1);
}

prism_result prism__kc_key_make(const prism__kc_inputs *in, prism__kc_key *out)
{
    memset(out, 0, sizeof *out);
    text t = {0};
    char number[64];
    put(&t, "prism kernel cache 1\n", 21);
    field(&t, "prism", in->prism_version);
    field(&t, "headers", in->headers_digest);
    field(&t, "nvrtc", in->nvrtc);
    snprintf(number, sizeof number, "%d", in->driver_version);
    field(&t, "driver", number);
    field(&t, "arch", in->arch);
    field(&t, "name", in->name);
    snprintf(number, sizeof number, "%zu", in->option_count);
    field(&t, "options", number);
    for (size_t i = 0; i < in->option_count; i++)
        field(&t, "option", in->options[i]);
    field(&t, "source", in->source);
    if (t.failed) {
        free(t.p);
        return PRISM_ERROR_OUT_OF_MEMORY;
    }
    out->text = t.p;
    out->size = t.size;
    out->hash = prism__kc_hash(t.p, t.size, PRISM__KC_HASH_SEED);
    return PRISM_SUCCESS;
}

void prism__kc_key_free(prism__kc_key *key)
{
    if (key == NULL)
        return;
    free(key->text);
    memset(key, 0, sizeof *key);
}

/* ---- where */

static bool set(const char *s)
{
    return s != NULL && s[0] != 0;
}

bool prism__kc_directory(const char *given, const char *prism_cache_dir, const char *xdg_cache_home,
                         const char *home, char *out, size_t size)
{
    int n;
    if (set(given))
        n = snprintf(out, size, "%s", given);
    else if (set(prism_cache_dir))
        n = snprintf(out, size, "%s", prism_cache_dir);
    else if (set(xdg_cache_home) && xdg_cache_home[0] == '/')
        n = snprintf(out, size, "%s/prism/kernels", xdg_cache_home);
    else if (set(home))
        n = snprintf(out, size, "%s/.cache/prism/kernels", home);
    else
        return false;
    return n > 0 && (size_t)n < size;
}

bool prism__kc_path(const char *dir, uint64_t hash, char *out, size_t size)
{
    int n = snprintf(out, size, "%s/%016llx.prismkc", dir, (unsigned long long)hash);
    return n > 0 && (size_t)n < size;
}

/* ---- entries */

static uint64_t checksum(const void *key, size_t key_size, const void *payload, size_t size)
{
    return prism__kc_hash(payload, size, prism__kc_hash(key, key_size, PRISM__KC_HASH_SEED));
}

prism_result prism__kc_encode(const prism__kc_key *key, const void *payload, size_t size,
                              uint32_t flags, void **out, size_t *out_size)
{
    *out = NULL;
    *out_size = 0;
    const size_t total = sizeof(header) + key->size + size;
    unsigned char *e = malloc(total);
    if (e == NULL)
        return PRISM_ERROR_OUT_OF_MEMORY;
    header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, magic, sizeof magic);
    h.version = FORMAT_VERSION;
    h.flags = flags;
    h.key_size = key->size;
    h.payload_size = size;
    h.checksum = checksum(key->text, key->size, payload, size);
    memcpy(e, &h, sizeof h);
    memcpy(e + sizeof h, key->text, key->size);
    memcpy(e + sizeof h + key->size, payload, size);
    *out = e;
    *out_size = total;
    return PRISM_SUCCESS;
}

static prism__kc_check fault(prism__kc_check c, char *why, size_t why_size, const char *fmt, ...)
    PRISM_PRINTF(4, 5);

static prism__kc_check fault(prism__kc_check c, char *why, size_t why_size, const char *fmt, ...)
{
    if (why != NULL && why_size > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, why_size, fmt, ap);
        va_end(ap);
    }
    return c;
}

prism__kc_check prism__kc_decode(const void *entry, size_t size, const prism__kc_key *key,
                                 const void **payload, size_t *payload_size, uint32_t *flags,
                                 char *why, size_t why_size)
{
    *payload = NULL;
    *payload_size = 0;
    *flags = 0;
    if (why != NULL && why_size > 0)
        why[0] = 0;
    header h;
    if (size < sizeof h)
        return fault(PRISM__KC_CORRUPT, why, why_size, "%zu bytes, shorter than an entry's header",
                     size);
    memcpy(&h, entry, sizeof h);
    if (memcmp(h.magic, magic, sizeof magic) != 0)
        return fault(PRISM__KC_CORRUPT, why, why_size, "not a Prism kernel cache entry");
    if (h.version != FORMAT_VERSION)
        return fault(PRISM__KC_FOREIGN, why, why_size, "entry format %u (this Prism writes %u)",
                     h.version, FORMAT_VERSION);
    const size_t body = size - sizeof h;
    if (h.key_size > body || h.payload_size != body - h.key_size || h.payload_size == 0)
        return fault(PRISM__KC_CORRUPT, why, why_size,
                     "%zu bytes where the header promises %llu (cut short or grown)", size,
                     (unsigned long long)(sizeof h + h.key_size + h.payload_size));
    const unsigned char *k = (const unsigned char *)entry + sizeof h;
    const unsigned char *p = k + h.key_size;
    if (checksum(k, (size_t)h.key_size, p, (size_t)h.payload_size) != h.checksum)
        return fault(PRISM__KC_CORRUPT, why, why_size, "checksum mismatch (damaged)");
    if ((h.flags & ~KNOWN_FLAGS) != 0)
        return fault(PRISM__KC_FOREIGN, why, why_size, "unknown flags 0x%x", h.flags);
    if (h.key_size != key->size || memcmp(k, key->text, key->size) != 0)
        return fault(PRISM__KC_FOREIGN, why, why_size,
                     "written for other inputs (another source, options, device or version)");
    *payload = p;
    *payload_size = (size_t)h.payload_size;
    *flags = h.flags;
    return PRISM__KC_VALID;
}

/* ---- files */

static prism_result read_file(int fd, size_t size, void **out)
{
    unsigned char *b = malloc(size > 0 ? size : 1);
    if (b == NULL)
        return PRISM_ERROR_OUT_OF_MEMORY;
    size_t got = 0;
    while (got < size) {
        ssize_t n = read(fd, b + got, size - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    if (got != size) {
        free(b);
        return PRISM_ERROR_IO;
    }
    *out = b;
    return PRISM_SUCCESS;
}

static void reject(prism_context *ctx, const char *path, const char *why)
{
    int gone = unlink(path) == 0 || errno == ENOENT;
    prism__log(ctx, PRISM_LOG_WARNING, "kernel cache: %s: %s: %s, compiling again", path, why,
               gone ? "removed" : "could not be removed");
}

prism__kc_lookup prism__kc_load(prism_context *ctx, const char *dir, const prism__kc_key *key,
                                void **payload, size_t *size, uint32_t *flags)
{
    *payload = NULL;
    *size = 0;
    *flags = 0;
    char path[4096];
    if (!prism__kc_path(dir, key->hash, path, sizeof path))
        return PRISM__KC_MISS;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno != ENOENT)
            prism__log(ctx, PRISM_LOG_WARNING, "kernel cache: %s: %s", path, strerror(errno));
        return PRISM__KC_MISS;
    }
    struct stat st;
    void *entry = NULL;
    prism_result r = PRISM_ERROR_IO;
    char why[256] = "cannot be read";
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        if ((uint64_t)st.st_size > MAX_ENTRY_BYTES)
            snprintf(why, sizeof why, "%lld bytes, too big for an entry", (long long)st.st_size);
        else
            r = read_file(fd, (size_t)st.st_size, &entry);
    }
    close(fd);
    if (r == PRISM_ERROR_OUT_OF_MEMORY)
        return PRISM__KC_MISS;
    if (r != PRISM_SUCCESS) {
        reject(ctx, path, why);
        return PRISM__KC_REJECTED;
    }
    const void *p;
    size_t n;
    uint32_t f;
    if (prism__kc_decode(entry, (size_t)st.st_size, key, &p, &n, &f, why, sizeof why) !=
        PRISM__KC_VALID) {
        free(entry);
        reject(ctx, path, why);
        return PRISM__KC_REJECTED;
    }
    /* the payload to the front of its own block */
    memmove(entry, p, n);
    *payload = entry;
    *size = n;
    *flags = f;
    return PRISM__KC_HIT;
}

/* mkdir -p, mode 0700 (the XDG spec's for cache directories). */
static bool make_dirs(const char *dir, char *why, size_t why_size)
{
    char path[4096];
    int len = snprintf(path, sizeof path, "%s", dir);
    if (len <= 0 || (size_t)len >= sizeof path) {
        snprintf(why, why_size, "directory name too long");
        return false;
    }
    for (char *s = path + 1;; s++) {
        if (*s != '/' && *s != 0)
            continue;
        const char c = *s;
        *s = 0;
        if (mkdir(path, 0700) != 0 && errno != EEXIST) {
            snprintf(why, why_size, "cannot create %s: %s", path, strerror(errno));
            return false;
        }
        *s = c;
        if (c == 0)
            break;
    }
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(why, why_size, "%s is not a directory", dir);
        return false;
    }
    return true;
}

static bool write_all(int fd, const unsigned char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        p += w;
        n -= (size_t)w;
    }
    return true;
}

prism_result prism__kc_store(const char *dir, const prism__kc_key *key, const void *payload,
                             size_t size, uint32_t flags, char *why, size_t why_size)
{
    char path[4096], temp[4096];
    if (!prism__kc_path(dir, key->hash, path, sizeof path) ||
        snprintf(temp, sizeof temp, "%s/.%016llx.XXXXXX", dir, (unsigned long long)key->hash) >=
            (int)sizeof temp) {
        snprintf(why, why_size, "directory name too long");
        return PRISM_ERROR_IO;
    }
    if (!make_dirs(dir, why, why_size))
        return PRISM_ERROR_IO;
    void *entry;
    size_t entry_size;
    if (prism__kc_encode(key, payload, size, flags, &entry, &entry_size) != PRISM_SUCCESS) {
        snprintf(why, why_size, "out of memory");
        return PRISM_ERROR_IO;
    }
    /* No fsync before the rename: an entry a crash leaves damaged fails its
     * checksum and is compiled again, which costs less than syncing every
     * write. */
    int fd = mkstemp(temp);
    bool ok = fd >= 0;
    if (!ok)
        snprintf(why, why_size, "cannot create a file in %s: %s", dir, strerror(errno));
    if (ok && !write_all(fd, entry, entry_size)) {
        snprintf(why, why_size, "cannot write %s: %s", temp, strerror(errno));
        ok = false;
    }
    if (fd >= 0 && close(fd) != 0 && ok) {
        snprintf(why, why_size, "cannot write %s: %s", temp, strerror(errno));
        ok = false;
    }
    if (ok && rename(temp, path) != 0) {
        snprintf(why, why_size, "cannot rename %s to %s: %s", temp, path, strerror(errno));
        ok = false;
    }
    if (!ok && fd >= 0)
        unlink(temp);
    free(entry);
    return ok ? PRISM_SUCCESS : PRISM_ERROR_IO;
}

void prism__kc_remove(prism_context *ctx, const char *dir, const prism__kc_key *key,
                      const char *why)
{
    char path[4096];
    if (prism__kc_path(dir, key->hash, path, sizeof path))
        reject(ctx, path, why);
}
