/* NumPy .npy files of little-endian float32 in C order, the form Opticks
 * and its successors trade photons and hits in: a reader that checks a
 * file's header against the shape a caller expects and reads its rows a
 * batch at a time, and a writer that appends rows batch by batch and
 * commits atomically (a temporary file in the target's directory, fsync,
 * rename), so a failed run leaves neither a half file nor a temporary.
 *
 * Format (numpy.lib.format, versions 1.0, 2.0 and 3.0): the magic
 * "\x93NUMPY", two version bytes, the header's length (2 bytes in 1.0, 4
 * in 2.0 and 3.0, little-endian), then the header, a Python dict literal
 * {'descr': '<f4', 'fortran_order': False, 'shape': (N, 4, 4), } padded
 * with spaces and a newline, then the data.
 *
 * Arrays are (N, d1, ..., dk): N rows of the trailing dims the caller
 * names. Every call returns 0, or -1 with a one-line message that names
 * the file, what was found and what was expected in the object's
 * `error`. */
#ifndef PRISM_TOOLS_NPY_H
#define PRISM_TOOLS_NPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define NPY_MAX_DIMS 8
/* Headers above this many bytes are refused (NumPy itself stops at 10000
 * by default; a sane .npy header is under 200). */
#define NPY_MAX_HEADER 65536
#define NPY_ERROR_SIZE 512

typedef struct npy_reader {
    FILE *file;
    const char *path;
    uint64_t rows;    /* N of the file's shape */
    size_t row_bytes; /* 4 * d1 * ... * dk */
    uint64_t next;    /* rows read so far */
    int version;      /* 1, 2 or 3 */
    char error[NPY_ERROR_SIZE];
} npy_reader;

/* Open `path` and check that it holds '<f4' in C order of shape
 * (N, dims[0], ..., dims[ndims-1]), whole (neither truncated nor longer). */
int npy_reader_open(npy_reader *r, const char *path, const uint64_t *dims, int ndims);
/* The next `count` rows (count <= rows - next) into `rows`. */
int npy_reader_read(npy_reader *r, void *rows, size_t count);
/* Pass over the next `count` rows (count <= rows - next). */
int npy_reader_skip(npy_reader *r, uint64_t count);
/* Accepts a reader that failed to open. */
void npy_reader_close(npy_reader *r);

typedef struct npy_writer {
    FILE *file;
    const char *path;
    char temp[4096]; /* the temporary it writes, renamed onto path at commit */
    uint64_t dims[NPY_MAX_DIMS];
    int ndims;
    uint64_t rows;
    size_t row_bytes;
    bool finished;
    bool reserved;         /* npy_writer_reserve: rows are written elsewhere */
    bool durable;          /* on the disk at finish (fsync; the default); false for a
                             scratch file that another step reads back */
    uint64_t written_back; /* bytes the disk was told to write so far */
    char error[NPY_ERROR_SIZE];
} npy_writer;

/* Start writing '<f4' rows of trailing shape dims[0..ndims) to `path`:
 * nothing appears at `path` until npy_writer_commit. */
int npy_writer_open(npy_writer *w, const char *path, const uint64_t *dims, int ndims);
int npy_writer_append(npy_writer *w, const void *rows, size_t count);
/* The bytes before the first row in the files npy_writer writes: fixed for
 * the trailing dims, whatever the row count, so a row's offset is known
 * before the file is written. */
size_t npy_writer_header_size(const npy_writer *w);
/* Make the file `rows` rows long (holes for rows written elsewhere, at
 * npy_writer_header_size + i * row_bytes, e.g. by other processes), with
 * that count in its header at finish. Nothing can be appended after. */
int npy_writer_reserve(npy_writer *w, uint64_t rows);
/* Write the final shape into the header and flush the temporary to disk
 * (fsync); nothing more can be appended. On failure it is removed. */
int npy_writer_finish(npy_writer *w);
/* Finish (when not yet done) and rename the temporary onto `path`. On
 * failure the temporary is removed. */
int npy_writer_commit(npy_writer *w);
/* Remove the temporary; `path` is left as it was. Accepts a writer that
 * failed to open or was committed. */
void npy_writer_abort(npy_writer *w);

/* Remove open writers' temporaries when SIGINT, SIGTERM or SIGHUP ends
 * the process (the signal then does what it would have done), and, when
 * `program` is not NULL, say so on stderr: "<program>: interrupted: no
 * output written" (terminated, hung up; or what was already committed). */
void npy_remove_temporaries_on_signals(const char *program);

#endif
