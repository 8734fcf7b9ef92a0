/* Big arrays on huge pages: they are written all over right after their
 * allocation (world arrays, BVH build) or walked at random (BVH nodes), and
 * with 4 KB pages the first touch faults once a page and a walk of tens of
 * MB pays a TLB miss on most node visits (2 MB pages gave measurably more
 * random rays a second and faster builds). */
#if defined(__linux__) && !defined(_DEFAULT_SOURCE)
#define _DEFAULT_SOURCE /* madvise */
#endif
#include "big_alloc.h"

#include <stdlib.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

void *prism__big_alloc(size_t bytes)
{
    const size_t huge = (size_t)2 << 20;
    if (bytes < 2 * huge)
        return aligned_alloc(64, bytes ? (bytes + 63) / 64 * 64 : 64);
    const size_t whole = (bytes + huge - 1) / huge * huge;
    void *p = aligned_alloc(huge, whole);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (p)
        madvise(p, whole, MADV_HUGEPAGE); /* a hint: failure is fine */
#endif
    return p;
}
