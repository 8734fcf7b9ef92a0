/* The CUDA side of runtime compilation (engine/cuda_module.c), called by
 * engine/module.c: NVRTC, loaded with dlopen, and the runtime API's
 * libraries (cudaLibraryLoadData) for the compiled code. Built with CUDA
 * only; module.c answers PRISM_ERROR_UNSUPPORTED without it. */
#ifndef PRISM_MODULE_INTERNAL_H
#define PRISM_MODULE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "context_internal.h"
#include "prism/module.h"

#ifdef PRISM_HAVE_CUDA

typedef struct prism__nvrtc prism__nvrtc;

/* Load NVRTC: $PRISM_NVRTC_LIBRARY, else libnvrtc.so.<the toolkit's
 * major version>, libnvrtc.so, then the toolkit's library directory this
 * Prism was built with. PRISM_ERROR_UNSUPPORTED (message in ctx) when none
 * loads. ctx may be a host context (the tests compile without a device). */
prism_result prism__nvrtc_load(prism_context *ctx, prism__nvrtc **out);
void prism__nvrtc_unload(prism__nvrtc *n);
void prism__nvrtc_version(const prism__nvrtc *n, int *major, int *minor);

/* The architecture option for compute capability major.minor: sm_XY
 * (cubin) where this NVRTC knows it, else PTX of the newest virtual
 * architecture below it, which the driver compiles. PRISM_ERROR_UNSUPPORTED
 * for a device older than NVRTC's oldest. */
prism_result prism__nvrtc_target(prism_context *ctx, const prism__nvrtc *n, int major, int minor,
                                 char *arch, size_t arch_size, bool *cubin);

/* Compile `source` with the embedded device headers. On success *binary
 * (malloc'd; PTX is NUL-terminated and counted with its NUL) and *log
 * (malloc'd, "" when NVRTC said nothing). On PRISM_ERROR_COMPILE *log holds
 * NVRTC's log and nothing is recorded in ctx: the caller words the error. */
prism_result prism__nvrtc_compile(prism_context *ctx, const prism__nvrtc *n, const char *source,
                                  const char *name, const char *arch, bool cubin,
                                  const char *const *options, size_t option_count, void **binary,
                                  size_t *size, char **log);

/* Compiled code into the context's device (cudaLibrary_t in *library). */
prism_result prism__cuda_library_load(prism_context *ctx, const void *image, void **library);
void prism__cuda_library_unload(prism_context *ctx, void *library);
/* The kernel named `name` (cudaKernel_t); PRISM_ERROR_INVALID_ARGUMENT with
 * no message when there is none. */
prism_result prism__cuda_library_kernel(prism_context *ctx, void *library, const char *name,
                                        void **kernel);
prism_result prism__cuda_kernel_launch(prism_context *ctx, void *kernel, const prism_launch *launch,
                                       void *stream, void **args, const char *what);

#endif

#endif
