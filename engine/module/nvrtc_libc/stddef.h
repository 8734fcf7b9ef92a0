/* <stddef.h> for runtime compilation only (see stdint.h here): NVRTC
 * declares size_t and ptrdiff_t itself; NULL and offsetof are what is left. */
#ifndef PRISM_NVRTC_STDDEF_H
#define PRISM_NVRTC_STDDEF_H

#ifndef NULL
#define NULL 0
#endif
#ifndef offsetof
#define offsetof(type, member) __builtin_offsetof(type, member)
#endif

#endif
