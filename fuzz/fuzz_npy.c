/* libFuzzer harness for the .npy reader (tools/npy.c): any bytes must
 * either open as (N,4,4) '<f4' whose rows can all be read (exactly the
 * rest of the file, no row more), or fail with a one-line message naming
 * the file (ASan/UBSan watch for the rest). The reader reads files, so
 * each input is written to one temporary file first, in /dev/shm where
 * there is one: on an ext4 /tmp each rewrite took 2.3 ms (a file
 * truncated to nothing is written back at its close, ext4's
 * auto_da_alloc), 300 inputs/s against 36000 in memory. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[64];

static void remove_file(void)
{
    unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!path[0]) {
        snprintf(path, sizeof path, "%s/prism-fuzz-npy-XXXXXX",
                 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
        int fd = mkstemp(path);
        if (fd < 0)
            abort();
        close(fd);
        atexit(remove_file);
    }
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(data, 1, size, f) != size || fclose(f) != 0)
        abort();
    const uint64_t dims[2] = {4, 4};
    npy_reader r;
    if (npy_reader_open(&r, path, dims, 2) == 0) {
        /* the header's rows are all in the file, and nothing after them:
         * read them, a few at a time; one more is refused */
        size_t at = 10u + (data[8] | (size_t)data[9] << 8); /* the data's start */
        if (r.version > 1)
            at += 2u + ((size_t)data[10] << 16 | (size_t)data[11] << 24);
        if (r.version < 1 || r.version > 3 || size < at || (size - at) / 64 != r.rows ||
            (size - at) % 64 != 0)
            abort();
        float rows[4 * 16];
        for (uint64_t left = r.rows; left > 0;) {
            const size_t n = left < 4 ? (size_t)left : 4;
            if (npy_reader_read(&r, rows, n) != 0)
                abort();
            left -= n;
        }
        if (npy_reader_read(&r, rows, 1) == 0)
            abort();
    }
    /* a failure: one line naming the file (npy.h) */
    if (r.error[0] && (strstr(r.error, path) == NULL || strchr(r.error, '\n') != NULL))
        abort();
    npy_reader_close(&r);
    return 0;
}
