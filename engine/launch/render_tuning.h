/* Choosing among the CUDA render kernel's variants (engine/cuda/kernels.cu)
 * so that prism-bench render can compare them in one process. Internal:
 * a context renders with the variant chosen for it, by default the
 * fastest measured (the wide walk where the upload made a wide tree, else
 * the tuned binary walk). The choice lives in the context's kernel state,
 * so contexts on other threads are not affected; like the context, it is
 * used by one thread at a time. A build without CUDA has no variants
 * (engine/cuda/no_cuda.c), and the host backend ignores the choice. */
#ifndef PRISM_KERNELS_RENDER_TUNING_H
#define PRISM_KERNELS_RENDER_TUNING_H

#include "prism/context.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Use render variant `variant` (0 .. prism__cuda_render_variants()-1) in
 * blocks of `block` threads (a multiple of 32, 32..256) for ctx's renders.
 * Returns 0 (and changes nothing) when either is out of range or ctx is
 * NULL. */
int prism__cuda_render_tuning(prism_context *ctx, int variant, unsigned block);
/* How many variants there are (the same for every context). */
int prism__cuda_render_variants(void);
/* The variant and block ctx's renders use (before any choice: the binary
 * walk's variant and the default block). */
void prism__cuda_render_tuning_get(const prism_context *ctx, int *variant, unsigned *block);

#ifdef __cplusplus
}
#endif

#endif
