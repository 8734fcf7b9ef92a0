/* <math.h> for runtime compilation only (see stdint.h here): NVRTC has the
 * CUDA math functions built in (sqrtf, fminf, logf, isfinite, ...); the
 * constants are what is left. */
#ifndef PRISM_NVRTC_MATH_H
#define PRISM_NVRTC_MATH_H

#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif
#ifndef NAN
#define NAN __int_as_float(0x7fffffff)
#endif

#endif
