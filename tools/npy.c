/* NumPy .npy reading and writing (npy.h). Written here rather than taken
 * from a library: the tools need one dtype, C order and a header that can
 * be patched after the last batch, about 300 lines, where the C libraries
 * for the format (libnpy, cnpy) are C++ or read whole arrays into memory. */
#define _GNU_SOURCE /* sync_file_range */
#define _FILE_OFFSET_BITS 64
#include "npy.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_BYTES 6

static int fail(char *error, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(error, NPY_ERROR_SIZE, fmt, ap);
    va_end(ap);
    return -1;
}

/* "(N, 4, 4)" for the caller's trailing dims (N standing for any count),
 * or the file's "(10, 4)" when `rows` is given. */
static void shape_text(char *out, size_t size, const char *first, const uint64_t *dims, int ndims)
{
    int n = snprintf(out, size, "(%s", first);
    for (int i = 0; i < ndims && n > 0 && (size_t)n < size; i++)
        n += snprintf(out + n, size - (size_t)n, ", %llu", (unsigned long long)dims[i]);
    if (n > 0 && (size_t)n < size)
        snprintf(out + n, size - (size_t)n, ndims == 0 ? ",)" : ")");
}

/* ---- the header: a Python dict literal --------------------------------- */

typedef struct npy_header {
    char descr[32];
    bool structured; /* descr is a list of fields */
    bool fortran;
    int ndim;
    uint64_t shape[NPY_MAX_DIMS];
    unsigned seen; /* 1 descr, 2 fortran_order, 4 shape */
} npy_header;

typedef struct cursor {
    const char *p, *begin, *end;
} cursor;

static void skip_space(cursor *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

static bool take(cursor *c, char ch)
{
    skip_space(c);
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return true;
    }
    return false;
}

/* 'text' or "text" (no escapes: none of the keys or dtypes has one; no
 * line break either, which Python refuses inside quotes and which would
 * split the message that quotes the dtype). */
static bool quoted(cursor *c, char *out, size_t size)
{
    skip_space(c);
    if (c->p >= c->end || (*c->p != '\'' && *c->p != '"'))
        return false;
    const char q = *c->p++;
    size_t n = 0;
    while (c->p < c->end && *c->p != q) {
        if (*c->p == '\\' || *c->p == '\n' || *c->p == '\r' || n + 1 >= size)
            return false;
        out[n++] = *c->p++;
    }
    out[n] = 0;
    return c->p++ < c->end;
}

static bool word(cursor *c, const char *w)
{
    skip_space(c);
    size_t n = strlen(w);
    if ((size_t)(c->end - c->p) < n || strncmp(c->p, w, n) != 0)
        return false;
    c->p += n;
    return true;
}

/* A structured dtype's field list: skipped, brackets and quotes balanced. */
static bool skip_list(cursor *c)
{
    int depth = 0;
    char quote = 0;
    for (; c->p < c->end; c->p++) {
        const char ch = *c->p;
        if (quote)
            quote = ch == quote ? 0 : quote;
        else if (ch == '\'' || ch == '"')
            quote = ch;
        else if (ch == '[' || ch == '(')
            depth++;
        else if ((ch == ']' || ch == ')') && --depth == 0) {
            c->p++;
            return true;
        }
    }
    return false;
}

static bool shape_tuple(cursor *c, npy_header *h)
{
    if (!take(c, '('))
        return false;
    h->ndim = 0;
    while (!take(c, ')')) {
        skip_space(c);
        if (h->ndim == NPY_MAX_DIMS || c->p >= c->end || *c->p < '0' || *c->p > '9')
            return false;
        uint64_t v = 0;
        for (; c->p < c->end && *c->p >= '0' && *c->p <= '9'; c->p++) {
            if (v > (UINT64_MAX - 9) / 10)
                return false;
            v = v * 10 + (uint64_t)(*c->p - '0');
        }
        if (c->p < c->end && *c->p == 'L') /* Python 2's long */
            c->p++;
        h->shape[h->ndim++] = v;
        if (!take(c, ',')) {
            if (!take(c, ')'))
                return false;
            break;
        }
    }
    return true;
}

static bool entry(cursor *c, npy_header *h)
{
    char key[32];
    if (!quoted(c, key, sizeof key) || !take(c, ':'))
        return false;
    skip_space(c);
    if (strcmp(key, "descr") == 0) {
        h->seen |= 1;
        if (c->p < c->end && *c->p == '[') {
            h->structured = true;
            return skip_list(c);
        }
        return quoted(c, h->descr, sizeof h->descr);
    }
    if (strcmp(key, "fortran_order") == 0) {
        h->seen |= 2;
        h->fortran = word(c, "True");
        return h->fortran || word(c, "False");
    }
    if (strcmp(key, "shape") == 0) {
        h->seen |= 4;
        return shape_tuple(c, h);
    }
    return false; /* NumPy refuses other keys too */
}

/* Parse; on failure `where` says at which byte of the header it stopped. */
static bool parse_header(const char *text, size_t n, npy_header *h, size_t *where)
{
    memset(h, 0, sizeof *h);
    cursor c = {text, text, text + n};
    bool ok = take(&c, '{');
    while (ok && !take(&c, '}')) {
        ok = entry(&c, h);
        if (ok && !take(&c, ',')) {
            ok = take(&c, '}');
            break;
        }
    }
    skip_space(&c);
    *where = (size_t)(c.p - c.begin);
    return ok && c.p == c.end && h->seen == 7;
}

/* "little-endian float64" for '<f8'. */
static void dtype_words(const char *d, char *out, size_t size)
{
    const char *order = d[0] == '<' ? "little-endian " : d[0] == '>' ? "big-endian " : "";
    const char *kinds = "fiubcUSOVMm";
    const char *names[] = {"float", "int",    "uint", "bool",     "complex",  "unicode",
                           "bytes", "object", "void", "datetime", "timedelta"};
    const char *k = d[0] && strchr("<>|=", d[0]) ? d + 1 : d;
    const char *kind = k[0] ? strchr(kinds, k[0]) : NULL;
    /* strtol, not atoi: a size past int's range is no undefined behaviour;
     * past NumPy's largest (c32, complex256) it is not turned into bits */
    const long bytes = strtol(k + (k[0] ? 1 : 0), NULL, 10);
    if (kind == NULL)
        snprintf(out, size, "unknown");
    else if (strchr("fiuc", k[0]) && bytes > 0 && bytes <= 32)
        snprintf(out, size, "%s%s%ld", order, names[kind - kinds], 8 * bytes);
    else
        snprintf(out, size, "%s%s", order, names[kind - kinds]);
}

/* ---- reading --------------------------------------------------------- */

static int read_preamble(npy_reader *r, uint32_t *header_len)
{
    unsigned char pre[12];
    size_t got = fread(pre, 1, 10, r->file);
    if (got < 10 || memcmp(pre, NPY_MAGIC, NPY_MAGIC_BYTES) != 0)
        return fail(r->error, "%s: not a .npy file (no \\x93NUMPY magic at its start)", r->path);
    r->version = pre[6];
    if ((pre[6] < 1 || pre[6] > 3) || pre[7] != 0)
        return fail(r->error, "%s: .npy format version %u.%u; expected 1.0, 2.0 or 3.0", r->path,
                    pre[6], pre[7]);
    *header_len = (uint32_t)pre[8] | (uint32_t)pre[9] << 8;
    if (r->version >= 2) {
        if (fread(pre + 10, 1, 2, r->file) != 2)
            return fail(r->error, "%s: truncated in its header", r->path);
        *header_len |= (uint32_t)pre[10] << 16 | (uint32_t)pre[11] << 24;
    }
    if (*header_len > NPY_MAX_HEADER)
        return fail(r->error, "%s: header of %u bytes is over 64 KiB (%d bytes)", r->path,
                    *header_len, NPY_MAX_HEADER);
    return 0;
}

/* The header's meaning against what the caller expects. */
static int check_header(npy_reader *r, const npy_header *h, const uint64_t *dims, int ndims)
{
    char want[160], found[160], words[64];
    shape_text(want, sizeof want, "N", dims, ndims);
    if (h->structured)
        return fail(r->error,
                    "%s: dtype is a structured type; expected '<f4' (little-endian "
                    "float32)",
                    r->path);
    if (strcmp(h->descr, "<f4") != 0) {
        dtype_words(h->descr, words, sizeof words);
        return fail(r->error, "%s: dtype '%s' (%s); expected '<f4' (little-endian float32)",
                    r->path, h->descr, words);
    }
    if (h->fortran)
        return fail(r->error,
                    "%s: Fortran order; expected C order (save "
                    "numpy.ascontiguousarray(a))",
                    r->path);
    bool same = h->ndim == ndims + 1;
    for (int i = 0; same && i < ndims; i++)
        same = h->shape[i + 1] == dims[i];
    if (!same) {
        char n[24] = "";
        if (h->ndim > 0)
            snprintf(n, sizeof n, "%llu", (unsigned long long)h->shape[0]);
        shape_text(found, sizeof found, n, h->ndim > 0 ? h->shape + 1 : h->shape,
                   h->ndim > 0 ? h->ndim - 1 : 0);
        return fail(r->error, "%s: shape %s; expected %s", r->path, h->ndim > 0 ? found : "()",
                    want);
    }
    r->rows = h->shape[0];
    return 0;
}

/* The data must be exactly rows * row_bytes long. */
static int check_size(npy_reader *r, uint64_t data_bytes)
{
    const bool fits = r->row_bytes == 0 || r->rows <= UINT64_MAX / r->row_bytes;
    const uint64_t need = fits ? r->rows * r->row_bytes : UINT64_MAX;
    if (data_bytes < need)
        return fail(r->error,
                    "%s: truncated: %llu rows need %llu bytes of data, the file holds "
                    "%llu",
                    r->path, (unsigned long long)r->rows, (unsigned long long)need,
                    (unsigned long long)data_bytes);
    if (data_bytes > need)
        return fail(r->error, "%s: %llu bytes of data, %llu more than its %llu rows need", r->path,
                    (unsigned long long)data_bytes, (unsigned long long)(data_bytes - need),
                    (unsigned long long)r->rows);
    return 0;
}

int npy_reader_open(npy_reader *r, const char *path, const uint64_t *dims, int ndims)
{
    memset(r, 0, sizeof *r);
    r->path = path;
    r->row_bytes = 4;
    for (int i = 0; i < ndims; i++)
        r->row_bytes *= (size_t)dims[i];
    r->file = fopen(path, "rb");
    if (r->file == NULL)
        return fail(r->error, "%s: %s", path, strerror(errno));
    struct stat st;
    uint32_t len = 0;
    if (fstat(fileno(r->file), &st) != 0 || !S_ISREG(st.st_mode))
        return fail(r->error, "%s: not a regular file", path);
    if (read_preamble(r, &len))
        return -1;
    char *text = malloc(len + 1u);
    if (text == NULL)
        return fail(r->error, "%s: out of memory for its header", path);
    npy_header h;
    size_t where = 0;
    int rc = 0;
    if (fread(text, 1, len, r->file) != len)
        rc = fail(r->error, "%s: truncated in its header (%u bytes announced)", path, len);
    else if (!parse_header(text, len, &h, &where))
        rc = fail(r->error,
                  "%s: malformed header at byte %zu of %u: expected {'descr': ..., "
                  "'fortran_order': ..., 'shape': (...)}",
                  path, where, len);
    free(text);
    if (rc == 0)
        rc = check_header(r, &h, dims, ndims);
    const uint64_t at = (uint64_t)(r->version == 1 ? 10 : 12) + len;
    if (rc == 0)
        rc = check_size(r, (uint64_t)st.st_size > at ? (uint64_t)st.st_size - at : 0);
    return rc;
}

int npy_reader_read(npy_reader *r, void *rows, size_t count)
{
    if (count > r->rows - r->next)
        return fail(r->error, "%s: %zu rows asked for, %llu left", r->path, count,
                    (unsigned long long)(r->rows - r->next));
    if (fread(rows, r->row_bytes, count, r->file) != count)
        return fail(r->error, "%s: truncated at row %llu (%s)", r->path,
                    (unsigned long long)r->next, ferror(r->file) ? strerror(errno) : "end of file");
    r->next += count;
    return 0;
}

int npy_reader_skip(npy_reader *r, uint64_t count)
{
    if (count > r->rows - r->next)
        return fail(r->error, "%s: %llu rows skipped, %llu left", r->path,
                    (unsigned long long)count, (unsigned long long)(r->rows - r->next));
    if (fseeko(r->file, (off_t)(count * r->row_bytes), SEEK_CUR) != 0)
        return fail(r->error, "%s: seek to row %llu: %s", r->path,
                    (unsigned long long)(r->next + count), strerror(errno));
    r->next += count;
    return 0;
}

void npy_reader_close(npy_reader *r)
{
    if (r->file != NULL)
        fclose(r->file);
    r->file = NULL;
}

/* ---- writing --------------------------------------------------------- */

/* Temporaries of open writers, removed by the signal handler. */
#define NPY_MAX_OPEN 16
static char *volatile open_temps[NPY_MAX_OPEN];

static void remember(char *temp, bool on)
{
    for (int i = 0; i < NPY_MAX_OPEN; i++)
        if (open_temps[i] == (on ? NULL : temp)) {
            open_temps[i] = on ? temp : NULL;
            return;
        }
}

/* What the handler says: "<program>: " (empty: nothing), its length, and
 * how many files were committed, so that it does not claim none were. */
static char said_program[128];
static size_t said_program_len;
static volatile sig_atomic_t committed;

/* Only write(2) and constant strings here: async-signal-safe. */
static void say(const char *text, size_t len)
{
    while (len > 0) {
        const ssize_t n = write(STDERR_FILENO, text, len);
        if (n <= 0)
            return;
        text += n;
        len -= (size_t)n;
    }
}

#define SAY(literal) say(literal, sizeof literal - 1)

static void on_signal(int sig)
{
    bool removed = false;
    for (int i = 0; i < NPY_MAX_OPEN; i++)
        if (open_temps[i] != NULL) {
            unlink(open_temps[i]); /* async-signal-safe */
            removed = true;
        }
    if (said_program_len > 0) {
        say(said_program, said_program_len);
        if (sig == SIGINT)
            SAY("interrupted");
        else if (sig == SIGHUP)
            SAY("hung up");
        else
            SAY("terminated");
        if (committed == 0)
            SAY(": no output written\n");
        else if (removed)
            SAY(": the outputs not yet in place were removed\n");
        else
            SAY(" after its outputs were written\n");
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

void npy_remove_temporaries_on_signals(const char *program)
{
    said_program_len = 0;
    if (program != NULL) {
        snprintf(said_program, sizeof said_program, "%s: ", program);
        said_program_len = strlen(said_program);
    }
    const int sigs[3] = {SIGINT, SIGTERM, SIGHUP};
    for (int i = 0; i < 3; i++) {
        struct sigaction sa, old;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        /* leave an ignored signal ignored (nohup) */
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
            sigaction(sigs[i], &sa, NULL);
    }
}

/* The header for `rows` rows, padded to `total` bytes with the preamble. */
static void header_bytes(const npy_writer *w, uint64_t rows, char *out, size_t total)
{
    char n[24], shape[200], dict[256];
    snprintf(n, sizeof n, "%llu", (unsigned long long)rows);
    shape_text(shape, sizeof shape, n, w->dims, w->ndims);
    int len = snprintf(dict, sizeof dict, "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }",
                       shape);
    memcpy(out, NPY_MAGIC, NPY_MAGIC_BYTES);
    out[6] = 1;
    out[7] = 0;
    const size_t header_len = total - 10;
    out[8] = (char)(header_len & 0xFF);
    out[9] = (char)(header_len >> 8);
    memset(out + 10, ' ', header_len);
    memcpy(out + 10, dict, (size_t)len);
    out[total - 1] = '\n';
}

/* Room for the largest row count: the preamble, the dict with N =
 * 2^64 - 1, a newline, to a multiple of 64 bytes as NumPy aligns. */
static size_t header_total(const npy_writer *w)
{
    char n[24], shape[200];
    snprintf(n, sizeof n, "%llu", (unsigned long long)UINT64_MAX);
    shape_text(shape, sizeof shape, n, w->dims, w->ndims);
    size_t need = 10 + strlen("{'descr': '<f4', 'fortran_order': False, 'shape': , }") +
                  strlen(shape) + 1;
    return (need + 63) / 64 * 64;
}

int npy_writer_open(npy_writer *w, const char *path, const uint64_t *dims, int ndims)
{
    memset(w, 0, sizeof *w);
    w->path = path;
    w->durable = true;
    if (ndims < 0 || ndims >= NPY_MAX_DIMS)
        return fail(w->error, "%s: %d trailing dimensions; at most %d", path, ndims,
                    NPY_MAX_DIMS - 1);
    w->ndims = ndims;
    w->row_bytes = 4;
    for (int i = 0; i < ndims; i++) {
        w->dims[i] = dims[i];
        w->row_bytes *= (size_t)dims[i];
    }
    /* the temporary in the target's directory, so rename is atomic */
    const char *slash = strrchr(path, '/');
    const int dir_len = slash != NULL ? (int)(slash - path) + 1 : 0;
    if (snprintf(w->temp, sizeof w->temp, "%.*s.%s.tmp-XXXXXX", dir_len, path,
                 slash != NULL ? slash + 1 : path) >= (int)sizeof w->temp)
        return fail(w->error, "%s: path too long", path);
    const int fd = mkstemp(w->temp);
    if (fd < 0) {
        w->temp[0] = 0;
        return fail(w->error, "%s: cannot create a file in its directory: %s", path,
                    strerror(errno));
    }
    remember(w->temp, true);
    const mode_t mask = umask(0); /* mkstemp makes 0600; give what creat would */
    umask(mask);
    fchmod(fd, 0666 & ~mask);
    w->file = fdopen(fd, "wb");
    if (w->file == NULL) {
        close(fd);
        fail(w->error, "%s: %s", path, strerror(errno));
        npy_writer_abort(w);
        return -1;
    }
    char header[4096];
    const size_t total = header_total(w);
    header_bytes(w, 0, header, total);
    if (fwrite(header, 1, total, w->file) != total) {
        fail(w->error, "%s: write failed: %s", path, strerror(errno));
        npy_writer_abort(w);
        return -1;
    }
    return 0;
}

size_t npy_writer_header_size(const npy_writer *w)
{
    return header_total(w);
}

int npy_writer_reserve(npy_writer *w, uint64_t rows)
{
    if (w->file == NULL || w->finished || w->rows != 0)
        return fail(w->error, "%s: not a new file open for writing", w->path);
    const uint64_t bytes = header_total(w) + rows * w->row_bytes;
    if (fflush(w->file) != 0 || ftruncate(fileno(w->file), (off_t)bytes) != 0) {
        fail(w->error, "%s: cannot make it %llu bytes: %s", w->path, (unsigned long long)bytes,
             strerror(errno));
        npy_writer_abort(w);
        return -1;
    }
    w->rows = rows;
    w->reserved = true;
    return 0;
}

/* Start the disk writing the rows appended so far, without waiting for it
 * (Linux's sync_file_range), a few megabytes at a time: the fsync at
 * finish then waits for the last few only, not for a whole file that the
 * run could have been writing back all along. */
static void write_back(npy_writer *w)
{
#if defined(__linux__) && defined(SYNC_FILE_RANGE_WRITE)
    enum { STEP = 8 << 20 };
    const uint64_t end = header_total(w) + w->rows * w->row_bytes;
    if (!w->durable || end - w->written_back < STEP || fflush(w->file) != 0)
        return;
    if (sync_file_range(fileno(w->file), (off64_t)w->written_back, (off64_t)(end - w->written_back),
                        SYNC_FILE_RANGE_WRITE) == 0)
        w->written_back = end;
#else
    (void)w;
#endif
}

int npy_writer_append(npy_writer *w, const void *rows, size_t count)
{
    if (w->file == NULL || w->finished || w->reserved)
        return fail(w->error, "%s: not open for writing", w->path);
    if (count > 0 && fwrite(rows, w->row_bytes, count, w->file) != count) {
        fail(w->error, "%s: write failed after %llu rows: %s", w->path, (unsigned long long)w->rows,
             strerror(errno));
        npy_writer_abort(w);
        return -1;
    }
    w->rows += count;
    write_back(w);
    return 0;
}

/* fsync the directory, so the rename survives a crash (ext4 and XFS need
 * it); a failure here changes nothing the caller can act on. */
static void sync_directory(const char *path)
{
    char dir[4096];
    const char *slash = strrchr(path, '/');
    snprintf(dir, sizeof dir, "%.*s", slash != NULL ? (int)(slash - path) + 1 : 1,
             slash != NULL ? path : ".");
    const int fd = open(dir, O_RDONLY);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
}

int npy_writer_finish(npy_writer *w)
{
    if (w->file == NULL)
        return fail(w->error, "%s: not open for writing", w->path);
    char header[4096];
    const size_t total = header_total(w);
    header_bytes(w, w->rows, header, total);
    int rc = fflush(w->file) != 0 || fseeko(w->file, 0, SEEK_SET) != 0 ||
             fwrite(header, 1, total, w->file) != total || fflush(w->file) != 0 ||
             (w->durable && fsync(fileno(w->file)) != 0);
    const int err = errno;
    rc |= fclose(w->file) != 0;
    w->file = NULL;
    if (rc != 0) {
        fail(w->error, "%s: write failed: %s", w->path, strerror(err));
        npy_writer_abort(w);
        return -1;
    }
    w->finished = true;
    return 0;
}

int npy_writer_commit(npy_writer *w)
{
    if (!w->finished && npy_writer_finish(w))
        return -1;
    if (w->temp[0] == 0)
        return fail(w->error, "%s: nothing to commit", w->path);
    if (rename(w->temp, w->path) != 0) {
        fail(w->error, "%s: rename failed: %s", w->path, strerror(errno));
        npy_writer_abort(w);
        return -1;
    }
    committed = committed + 1;
    remember(w->temp, false);
    w->temp[0] = 0;
    sync_directory(w->path);
    return 0;
}

void npy_writer_abort(npy_writer *w)
{
    if (w->file != NULL)
        fclose(w->file);
    w->file = NULL;
    if (w->temp[0] != 0) {
        unlink(w->temp);
        remember(w->temp, false);
        w->temp[0] = 0;
    }
}
