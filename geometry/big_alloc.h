/* Big arrays for the geometry library (world arrays, BVH arrays): on 2 MB
 * pages where the system gives them on request. */
#ifndef PRISM_BIG_ALLOC_H
#define PRISM_BIG_ALLOC_H

#include <stddef.h>

/* `bytes` (0 taken as 1), 64-byte aligned; from 4 MB on 2 MB pages
 * (Linux's transparent huge pages, on request). Freed with free(). */
void *prism__big_alloc(size_t bytes);

#endif
