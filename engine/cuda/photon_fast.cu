/* The photon kernels with --use_fast_math and the hardware's approximate
 * log, sine and cosine (prism/device/kmath.h). See engine/cuda/photon_kernels.cuh. */
#define PRISM_KERNEL_FAST_MATH 1
#define PRISM_PHOTON_KERNELS prism__cuda_photon_fast
#include "photon_kernels.cuh"
