/* Choosing among the CUDA render kernel's variants (engine/cuda/kernels.cu)
 * so that prism-bench render can compare them in one process. Internal:
 * the library's renders use whatever was chosen last (by default the
 * fastest measured on the H100). Not thread-safe; set it before rendering.
 * Process-wide, so no context is needed: a build without CUDA has no
 * variants (engine/cuda/no_cuda.c). */
#ifndef PRISM_KERNELS_RENDER_TUNING_H
#define PRISM_KERNELS_RENDER_TUNING_H

#ifdef __cplusplus
extern "C" {
#endif

/* Use render variant `variant` (0 .. prism__cuda_render_variants()-1) in
 * blocks of `block` threads (a multiple of 32, 32..256). Returns 0 (and
 * changes nothing) when either is out of range. */
int prism__cuda_render_tuning(int variant, unsigned block);
/* How many variants there are. */
int prism__cuda_render_variants(void);
/* The variant and block in use. */
void prism__cuda_render_tuning_get(int *variant, unsigned *block);

#ifdef __cplusplus
}
#endif

#endif
