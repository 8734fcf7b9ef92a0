/* prism_result: what every fallible Prism call returns. */
#ifndef PRISM_RESULT_H
#define PRISM_RESULT_H

#include "export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum prism_result {
    PRISM_SUCCESS = 0,
    PRISM_ERROR_INVALID_ARGUMENT, /* NULL where an object is needed, a bad size */
    PRISM_ERROR_OUT_OF_MEMORY,    /* host heap */
    PRISM_ERROR_OUT_OF_DEVICE_MEMORY,
    PRISM_ERROR_IO,                 /* a file could not be opened or read */
    PRISM_ERROR_PARSE,              /* malformed input: the message names file, line, element */
    PRISM_ERROR_LIMIT,              /* input beyond a documented limit (nesting, counts) */
    PRISM_ERROR_UNSUPPORTED,        /* asked for something this build or device lacks */
    PRISM_ERROR_NO_DRIVER,          /* no CUDA driver (or too old) */
    PRISM_ERROR_NO_DEVICE,          /* a driver, but no CUDA device */
    PRISM_ERROR_INVALID_DEVICE,     /* a device choice that names no device */
    PRISM_ERROR_DEVICE_UNAVAILABLE, /* the device exists but gives no context (busy, prohibited) */
    PRISM_ERROR_NO_GL_CONTEXT,      /* GL sharing asked for, no GL context current */
    PRISM_ERROR_GL_NOT_ON_CUDA_DEVICE, /* the current GL context is not on a CUDA device */
    PRISM_ERROR_INTEROP_UNAVAILABLE,   /* a GL buffer could not be registered with CUDA */
    PRISM_ERROR_MAPPED_NOT_ALLOWED,    /* mapped host memory on a context created without it */
    PRISM_ERROR_OUT_OF_RANGE,          /* an offset or size outside an object */
    PRISM_ERROR_LIVE_ALLOCATIONS,      /* destroying a context that still owns memory */
    PRISM_ERROR_CUDA,                  /* any other CUDA failure; the message has CUDA's words */
    PRISM_ERROR_GL,                    /* an OpenGL failure */
    PRISM_ERROR_PLACEMENT,             /* a placement policy that cannot be met */
    PRISM_ERROR_COMPILE, /* runtime compilation failed; the message has the compiler's log */
    PRISM_RESULT_COUNT_
} prism_result;

/** How loud a log message is. Zero means "default" where a level is a setting. */
typedef enum prism_log_level {
    PRISM_LOG_DEFAULT = 0, /* as a setting: PRISM_LOG_INFO */
    PRISM_LOG_DEBUG,
    PRISM_LOG_INFO,
    PRISM_LOG_WARNING,
    PRISM_LOG_ERROR
} prism_log_level;

/** A log callback. `message` is one line without a trailing newline and
 * lives only for the call. */
typedef void (*prism_log_fn)(void *user, prism_log_level level, const char *message);

/** The name of a result, for example "PRISM_ERROR_PARSE". Never NULL.
 * @errors None ("PRISM_ERROR_UNKNOWN" for a value outside the enum).
 * @thread_safety Any thread. */
PRISM_API const char *prism_result_string(prism_result result);

#ifdef __cplusplus
}
#endif

#endif
