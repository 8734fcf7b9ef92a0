/* The CUDA side of runtime compilation (engine/cuda/module.c), called by
 * engine/module/module.c: NVRTC, loaded with dlopen, and the runtime API's
 * libraries (cudaLibraryLoadData) for the compiled code. NVRTC needs no
 * device, so its functions are link-time ones that a host context may call
 * too (engine/cuda/no_cuda.c answers PRISM_ERROR_UNSUPPORTED without
 * CUDA); the library functions are the CUDA backend's table entries
 * (library_load, library_unload, library_kernel, kernel_launch), which
 * module.c reaches through ctx->be. */
#ifndef PRISM_MODULE_INTERNAL_H
#define PRISM_MODULE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "engine/context_internal.h"
#include "prism/module.h"

typedef struct prism__nvrtc prism__nvrtc;

/* Where NVRTC is loaded from, in this order: $PRISM_NVRTC_LIBRARY (a path,
 * or a name for the loader to search), libnvrtc.so.<major> (the toolkit
 * this Prism was built with) in each $LD_LIBRARY_PATH directory, then in
 * that toolkit's library directory, then libnvrtc.so.<major> and
 * libnvrtc.so by the loader's own search.
 *
 * The disk cache keys modules on NVRTC's identity: its library file's real
 * path, size, modification time and inode, which change with every NVRTC
 * release and patch. prism__nvrtc_identify gives it without loading NVRTC
 * where the file is found by path (every place above but the loader's
 * search): loading it costs milliseconds (200,000 relocations), more than
 * the whole load of a cached module, so a cache hit never loads it. */
bool prism__nvrtc_identify(char *identity, size_t size);

/* Load NVRTC (as above). PRISM_ERROR_UNSUPPORTED (message in ctx) when
 * none loads. ctx may be a host context (the tests compile without a
 * device). */
prism_result prism__nvrtc_load(prism_context *ctx, prism__nvrtc **out);
void prism__nvrtc_unload(prism__nvrtc *n);
void prism__nvrtc_version(const prism__nvrtc *n, int *major, int *minor);
/* The identity of the file loaded (prism__nvrtc_identify's form). */
const char *prism__nvrtc_identity(const prism__nvrtc *n);

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
 * no message when there is none, and the names there are in `names`. */
prism_result prism__cuda_library_kernel(prism_context *ctx, void *library, const char *name,
                                        void **kernel, char *names, size_t names_size);
prism_result prism__cuda_kernel_launch(prism_context *ctx, void *kernel, const prism_launch *launch,
                                       void *stream, void **args, const char *what);

#endif
