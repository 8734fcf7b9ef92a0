/* The device side of the backends: what the CUDA runtime reports (or, in a
 * build without CUDA, that there is none) and what the host offers. */
#ifndef PRISM_DEVICES_H
#define PRISM_DEVICES_H

#include <stddef.h>

#include "context_internal.h"

/* Device count; 0 with *why set (PRISM_ERROR_NO_DRIVER / NO_DEVICE /
 * UNSUPPORTED for a build without CUDA) and `reason` in words. */
int prism__cuda_count(prism_result *why, char *reason, size_t reason_size);
prism_result prism__cuda_query(int index, prism_device_info *info);
/* Runtime and driver versions as CUDA encodes them (13000 = 13.0); 0 if none. */
void prism__cuda_versions(int *runtime, int *driver);
/* Make device `index` ctx's device: flags, context creation, cache config.
 * On failure ctx->last_error says why. */
prism_result prism__cuda_open(prism_context *ctx, int index, const prism_context_desc *desc);
void prism__cuda_close(prism_context *ctx);
/* The driver and device `index`'s primary context started with the flags
 * prism__cuda_open would set (no prism_context needed). */
prism_result prism__cuda_warm(int index, const prism_context_desc *desc);
/* The CUDA device of the GL context current on this thread. */
prism_result prism__cuda_gl_device(int *device, char *message, size_t message_size);

void prism__host_query(prism_device_info *info, int threads);

#endif
