/* The headers a runtime-compiled module may #include, compiled into the
 * library (cmake/device_headers.cmake writes the table): prism/device.cuh,
 * prism/device_view.h, the kernel headers under prism/device/, the public C
 * headers, and the small libc headers NVRTC lacks (engine/module/nvrtc_libc/).
 * Headers that include a sibling by its bare name find it because every
 * kernel and public header is also listed under that name. */
#ifndef PRISM_MODULE_HEADERS_H
#define PRISM_MODULE_HEADERS_H

#include <stddef.h>

typedef struct prism__embedded_header {
    const char *name; /* as an #include names it: "prism/device.cuh", "traverse.h" */
    const char *text; /* NUL-terminated */
    size_t size;      /* bytes, without the NUL */
} prism__embedded_header;

extern const prism__embedded_header prism__device_headers[];
extern const size_t prism__device_header_count;
/* SHA-256 (hex) of every name and text: part of the kernel cache's key. */
extern const char prism__device_headers_digest[];

#endif
