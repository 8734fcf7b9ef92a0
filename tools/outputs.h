/* The files a program is about to write, checked before it does any work
 * (loads a detector, starts a device), so that a run which could not keep
 * its result fails at once, naming the path, instead of at its end. */
#ifndef PRISM_TOOLS_OUTPUTS_H
#define PRISM_TOOLS_OUTPUTS_H

#include <stddef.h>
#include <stdint.h>

typedef struct tool_output {
    const char *path;
    uint64_t bytes; /* the file's size when known in advance, else 0 */
} tool_output;

/* Each output's directory exists and takes new files (write and search
 * permission, not a read-only file system); no output is an existing
 * directory or other non-regular file (the programs write a temporary and
 * rename it onto the path); and each file system has room for the known
 * sizes of all the outputs it will hold (statvfs: the blocks free to an
 * unprivileged user). Nothing is created. Returns 0, or -1 with one line
 * in `err` that begins with the path. */
int tool_outputs_check(const tool_output *outputs, size_t n, char *err, size_t err_size);

/* a * b and a + b, held at UINT64_MAX instead of wrapping. */
uint64_t tool_mul_sat(uint64_t a, uint64_t b);
uint64_t tool_add_sat(uint64_t a, uint64_t b);

#endif
