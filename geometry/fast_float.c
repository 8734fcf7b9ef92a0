/* Tables and the rare slow paths of the number parser (fast_float.h). */
#include "fast_float.h"

#include <math.h>

const unsigned char prism__ff_space[256] = {[' '] = 1, ['\t'] = 1, ['\n'] = 1, ['\r'] = 1};

const double prism__ff_pow10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                    1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                    1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* Mantissas beyond 2^53 or exponents beyond +-22: one long double multiply
 * (64-bit mantissa on x86) rounds once more than an exact parser would,
 * which no float coordinate can see. */
double prism__ff_slow(uint64_t mantissa, int exp10)
{
    if (exp10 > 400)
        return INFINITY;
    if (exp10 < -400)
        return 0.0;
    long double v = (long double)mantissa * powl(10.0L, (long double)exp10);
    if (v > (long double)DBL_MAX)
        return INFINITY;
    return (double)v;
}

static bool word_is(const char *p, const char *end, const char *word, size_t n)
{
    if ((size_t)(end - p) < n)
        return false;
    for (size_t i = 0; i < n; i++)
        if ((p[i] | 0x20) != word[i])
            return false;
    return true;
}

/* "nan", "inf" and "infinity" in any case: exporters write them, and the
 * loader must see them to drop the triangles that use them. */
const char *prism__ff_special(const char *p, const char *end, double *out)
{
    if (word_is(p, end, "nan", 3)) {
        *out = NAN;
        return p + 3;
    }
    if (word_is(p, end, "infinity", 8)) {
        *out = INFINITY;
        return p + 8;
    }
    if (word_is(p, end, "inf", 3)) {
        *out = INFINITY;
        return p + 3;
    }
    return NULL;
}
