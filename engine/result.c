/* Names of results and backends, and the version. */
#include "engine/backend.h"
#include "prism/context.h"
#include "prism/result.h"

#ifndef PRISM_VERSION_STRING
#define PRISM_VERSION_STRING "0.0.0"
#endif

const char *prism_result_string(prism_result result)
{
    static const char *const names[PRISM_RESULT_COUNT_] = {
        [PRISM_SUCCESS] = "PRISM_SUCCESS",
        [PRISM_ERROR_INVALID_ARGUMENT] = "PRISM_ERROR_INVALID_ARGUMENT",
        [PRISM_ERROR_OUT_OF_MEMORY] = "PRISM_ERROR_OUT_OF_MEMORY",
        [PRISM_ERROR_OUT_OF_DEVICE_MEMORY] = "PRISM_ERROR_OUT_OF_DEVICE_MEMORY",
        [PRISM_ERROR_IO] = "PRISM_ERROR_IO",
        [PRISM_ERROR_PARSE] = "PRISM_ERROR_PARSE",
        [PRISM_ERROR_LIMIT] = "PRISM_ERROR_LIMIT",
        [PRISM_ERROR_UNSUPPORTED] = "PRISM_ERROR_UNSUPPORTED",
        [PRISM_ERROR_NO_DRIVER] = "PRISM_ERROR_NO_DRIVER",
        [PRISM_ERROR_NO_DEVICE] = "PRISM_ERROR_NO_DEVICE",
        [PRISM_ERROR_INVALID_DEVICE] = "PRISM_ERROR_INVALID_DEVICE",
        [PRISM_ERROR_DEVICE_UNAVAILABLE] = "PRISM_ERROR_DEVICE_UNAVAILABLE",
        [PRISM_ERROR_NO_GL_CONTEXT] = "PRISM_ERROR_NO_GL_CONTEXT",
        [PRISM_ERROR_GL_NOT_ON_CUDA_DEVICE] = "PRISM_ERROR_GL_NOT_ON_CUDA_DEVICE",
        [PRISM_ERROR_INTEROP_UNAVAILABLE] = "PRISM_ERROR_INTEROP_UNAVAILABLE",
        [PRISM_ERROR_MAPPED_NOT_ALLOWED] = "PRISM_ERROR_MAPPED_NOT_ALLOWED",
        [PRISM_ERROR_OUT_OF_RANGE] = "PRISM_ERROR_OUT_OF_RANGE",
        [PRISM_ERROR_LIVE_ALLOCATIONS] = "PRISM_ERROR_LIVE_ALLOCATIONS",
        [PRISM_ERROR_CUDA] = "PRISM_ERROR_CUDA",
        [PRISM_ERROR_GL] = "PRISM_ERROR_GL",
        [PRISM_ERROR_PLACEMENT] = "PRISM_ERROR_PLACEMENT",
        [PRISM_ERROR_COMPILE] = "PRISM_ERROR_COMPILE",
    };
    if ((unsigned)result >= PRISM_RESULT_COUNT_ || !names[result])
        return "PRISM_ERROR_UNKNOWN";
    return names[result];
}

const char *prism_backend_name(prism_backend backend)
{
    switch (backend) {
    case PRISM_BACKEND_AUTO: return "auto";
    case PRISM_BACKEND_CUDA: return "cuda";
    case PRISM_BACKEND_HOST: return "host";
    }
    return "unknown";
}

const char *prism_version(void)
{
    return PRISM_VERSION_STRING;
}

bool prism_backend_built(prism_backend backend)
{
    switch (backend) {
    case PRISM_BACKEND_AUTO:
    case PRISM_BACKEND_HOST: return true;
    case PRISM_BACKEND_CUDA: return prism__cuda_backend() != NULL;
    default: return false;
    }
}
