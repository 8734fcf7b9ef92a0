/* The photon kernels in IEEE arithmetic, bit for bit the host backend's:
 * built with --fmad=false --ftz=false --prec-div=true --prec-sqrt=true
 * (engine/CMakeLists.txt). See engine/cuda/photon_kernels.cuh. */
#define PRISM_PHOTON_KERNELS prism__cuda_photon_exact
#include "photon_kernels.cuh"
