/* Symbol visibility for libprism: everything not marked PRISM_API stays
 * hidden in the shared library. */
#ifndef PRISM_EXPORT_H
#define PRISM_EXPORT_H

#if defined(PRISM_STATIC_DEFINE)
#define PRISM_API
#elif defined(PRISM_BUILDING)
#define PRISM_API __attribute__((visibility("default")))
#else
#define PRISM_API
#endif

#endif
