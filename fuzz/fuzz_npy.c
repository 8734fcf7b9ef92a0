/* libFuzzer harness for the .npy reader (tools/npy.c): any bytes must
 * either open as (N,4,4) '<f4' whose rows can all be read, or fail with a
 * message naming the file (ASan/UBSan watch for the rest). The reader
 * reads files, so each input is written to one temporary file first, in
 * /dev/shm where there is one: on an ext4 /tmp each rewrite took 2.3 ms
 * (a file truncated to nothing is written back at its close, ext4's
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
        /* the header's rows are all in the file: read them, a few at a time */
        float rows[4 * 64];
        for (uint64_t left = r.rows; left > 0;) {
            const size_t n = left < 4 ? (size_t)left : 4;
            if (npy_reader_read(&r, rows, n) != 0)
                abort();
            left -= n;
        }
        if ((uint64_t)size < r.rows * 64)
            abort();
    } else if (strstr(r.error, path) == NULL) {
        abort();
    }
    npy_reader_close(&r);
    return 0;
}
