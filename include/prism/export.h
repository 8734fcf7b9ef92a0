/* Symbol visibility for libprism: everything not marked PRISM_API stays
 * hidden in the shared library. */
#ifndef PRISM_EXPORT_H
#define PRISM_EXPORT_H

#if defined(__CUDACC_RTC__)
/* NVRTC compiles device code only and refuses host functions, even
 * declared: in a runtime-compiled module (prism/module.h) the C API reads
 * as device declarations, never defined, so a call fails to link. */
#define PRISM_API __device__
#elif defined(PRISM_STATIC_DEFINE)
#define PRISM_API
#elif defined(PRISM_BUILDING)
#define PRISM_API __attribute__((visibility("default")))
#else
#define PRISM_API
#endif

/* Layout checks that hold in C and in C++ embedders alike. */
#ifdef __cplusplus
#define PRISM_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#else
#define PRISM_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif

#endif
