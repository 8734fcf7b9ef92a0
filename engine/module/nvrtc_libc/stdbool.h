/* <stdbool.h> for runtime compilation only (see stdint.h here): NVRTC
 * compiles C++, where bool, true and false are keywords. */
#ifndef PRISM_NVRTC_STDBOOL_H
#define PRISM_NVRTC_STDBOOL_H

#define __bool_true_false_are_defined 1

#endif
