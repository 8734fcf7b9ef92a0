/* PRISM_HD marks per-ray and per-photon functions that both backends run:
 * compiled by nvcc for the device and by the C compiler for the host
 * backend and the CPU reference queries. Code under it calls no libc. */
#ifndef PRISM_HD_H
#define PRISM_HD_H

#if defined(__CUDACC__)
#define PRISM_HD __host__ __device__ __forceinline__
#else
#define PRISM_HD static inline
#endif

#endif
