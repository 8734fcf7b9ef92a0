/* How the upload's fills store into staging and mapped memory: memory that
 * the CPU writes once and a device then reads (a DMA copy, or a kernel
 * through the bus). Where the lines sit when the device reads them decides
 * the speed (tools/probe_staging.c measures each way; the README has the
 * figures):
 * - ordinary stores into chunks that the DMA engine reads at once (lines
 *   still modified in the cores' L2, each snooped out): the copy runs far
 *   below the link's speed, no faster than fill and copy one after the
 *   other;
 * - streaming (non-temporal) stores: near the link's speed at any chunk
 *   size (the DMA reads compete with their DRAM writes, but never snoop a
 *   core);
 * - ordinary stores into big chunks, read after a few more have been
 *   filled: at times a little faster than streaming, but half as fast for
 *   small chunks, and less steady from run to run;
 * - ordinary stores then cldemote: slower than streaming.
 * Streaming is the default; the others stay selectable (prism-bench upload
 * --stores) for other machines. Fill functions store through
 * prism__fill_store, with the choice the copy running them passes in. */
#include <string.h>

#include "internal.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

void prism__stream_store(void *dst, const void *src, size_t n)
{
#if defined(__SSE2__)
    unsigned char *d = dst;
    const unsigned char *s = src;
    size_t head = (16 - ((uintptr_t)d & 15)) & 15;
    if (head > n)
        head = n;
    memcpy(d, s, head);
    d += head, s += head, n -= head;
    for (; n >= 64; n -= 64, d += 64, s += 64) { /* one cache line a step */
        __m128i a = _mm_loadu_si128((const __m128i *)s);
        __m128i b = _mm_loadu_si128((const __m128i *)(s + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(s + 32));
        __m128i e = _mm_loadu_si128((const __m128i *)(s + 48));
        _mm_stream_si128((__m128i *)d, a);
        _mm_stream_si128((__m128i *)(d + 16), b);
        _mm_stream_si128((__m128i *)(d + 32), c);
        _mm_stream_si128((__m128i *)(d + 48), e);
    }
    memcpy(d, s, n);
#else
    memcpy(dst, src, n);
#endif
}

void prism__fill_store(void *dst, const void *src, size_t n, bool plain)
{
    if (plain)
        memcpy(dst, src, n);
    else
        prism__stream_store(dst, src, n);
}

void prism__store_fence(void)
{
#if defined(__SSE2__)
    _mm_sfence();
#endif
}

/* cldemote (0F 1C /0) is a hint in the NOP space: a CPU without it (or a
 * VM that hides it) does nothing, so no CPUID check is needed. */
void prism__demote_lines(const void *p, size_t n)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i += 64)
        __asm__ volatile(".byte 0x0f, 0x1c, 0x07" : : "D"(c + i) : "memory"); /* cldemote (%rdi) */
#else
    (void)p, (void)n;
#endif
}
