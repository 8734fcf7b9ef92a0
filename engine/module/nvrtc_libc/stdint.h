/* <stdint.h> for runtime compilation only: NVRTC ships no C library
 * headers, and the device headers include this one. The widths are those
 * of the LP64 Linux ABI the host side is built for (glibc's choices, so a
 * uint64_t is the same type, unsigned long, on both sides). Never on a
 * host or nvcc include path. */
#ifndef PRISM_NVRTC_STDINT_H
#define PRISM_NVRTC_STDINT_H

typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long uint64_t;
typedef long intptr_t;
typedef unsigned long uintptr_t;

#define INT8_MAX 127
#define INT16_MAX 32767
#define INT32_MAX 2147483647
#define INT64_MAX 9223372036854775807L
#define INT8_MIN (-INT8_MAX - 1)
#define INT16_MIN (-INT16_MAX - 1)
#define INT32_MIN (-INT32_MAX - 1)
#define INT64_MIN (-INT64_MAX - 1L)
#define UINT8_MAX 255
#define UINT16_MAX 65535
#define UINT32_MAX 4294967295U
#define UINT64_MAX 18446744073709551615UL
#define SIZE_MAX UINT64_MAX

#endif
