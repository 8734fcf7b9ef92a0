/* For the standalone probes (probe_*.c, probe_*.cu; not built by CMake):
 * a CUDA runtime call that fails ends the probe with its file, line, call
 * and CUDA's message. */
#ifndef PRISM_PROBE_CHECK_H
#define PRISM_PROBE_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define CK(x)                                                                                      \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));     \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

#endif
