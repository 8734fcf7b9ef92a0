/* Fast decimal number parsing for the COLLADA loader. The loader streams
 * float_array and <p> text through these parsers one number at a time, so
 * they take a [p, end) range, never need a terminating NUL, and never
 * allocate. Doubles with at most 19 significant digits and a decimal
 * exponent within +-22 are exact (Clinger's fast path); the rest go through
 * a long double multiply, which is far finer than the float output needs.
 * strtod is avoided: it is locale dependent and several times slower. */
#ifndef PRISM_FAST_FLOAT_H
#define PRISM_FAST_FLOAT_H

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* 1 for the XML white space characters (space, tab, CR, LF), else 0. */
extern const unsigned char prism__ff_space[256];
extern const double prism__ff_pow10[23];

double prism__ff_slow(uint64_t mantissa, int exp10);
const char *prism__ff_special(const char *p, const char *end, double *out);

static inline bool prism__ff_is_space(char c)
{
    return prism__ff_space[(unsigned char)c] != 0;
}

static inline bool prism__ff_is_digit(char c)
{
    return (unsigned)(c - '0') < 10u;
}

/* Parse a number at p (no leading space). Returns the first character not
 * consumed, or NULL when there is no number at p. Accepts
 * [+-]digits[.digits][(e|E)[+-]digits], ".5", "5.", and nan/inf/infinity in
 * any case. A decimal comma is read as a point (COLLADA lists are separated
 * by white space only, and some exporters write "0,5" in float_array). The caller checks that the number ends at white space. */
#if defined(__GNUC__)
#define PRISM_FF_INLINE static inline __attribute__((always_inline))
#else
#define PRISM_FF_INLINE static inline
#endif

PRISM_FF_INLINE const char *prism__ff_parse_double(const char *p, const char *end, double *out)
{
    bool neg = false;
    if (p < end && (*p == '-' || *p == '+')) {
        neg = *p == '-';
        p++;
    }
    uint64_t m = 0;
    int digits = 0, exp10 = 0;
    const char *start = p;
    for (; p < end && prism__ff_is_digit(*p); p++) {
        if (digits < 19) {
            m = m * 10 + (uint64_t)(*p - '0');
            digits += m != 0;
        } else {
            exp10++;
        }
    }
    bool any = p != start;
    if (p < end && (*p == '.' || *p == ',')) { /* some exporters write a decimal comma */
        const char *f = ++p;
        for (; p < end && prism__ff_is_digit(*p); p++) {
            if (digits < 19) {
                m = m * 10 + (uint64_t)(*p - '0');
                digits += m != 0;
                exp10--;
            }
        }
        any = any || p != f;
    }
    if (!any) {
        const char *q = prism__ff_special(p, end, out);
        if (q && neg)
            *out = -*out;
        return q;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        const char *q = p + 1;
        bool eneg = false;
        if (q < end && (*q == '-' || *q == '+'))
            eneg = *q++ == '-';
        if (q < end && prism__ff_is_digit(*q)) {
            int e = 0;
            for (; q < end && prism__ff_is_digit(*q); q++)
                if (e < 100000)
                    e = e * 10 + (*q - '0');
            exp10 += eneg ? -e : e;
            p = q;
        }
    }
    double v;
    if (m == 0)
        v = 0.0;
    else if (m <= (UINT64_C(1) << 53) && exp10 >= -22 && exp10 <= 22)
        v = exp10 < 0 ? (double)m / prism__ff_pow10[-exp10] : (double)m * prism__ff_pow10[exp10];
    else
        v = prism__ff_slow(m, exp10);
    *out = neg ? -v : v;
    return p;
}

/* The common shape only: [-+]digits[.digits], at most 19 digits, ending at
 * white space before `end`. Returns NULL for anything else (exponents,
 * nan, long mantissas, a token cut by `end`); the caller then takes the
 * general parser. No per-digit bookkeeping: the hot loop of float_array. */
PRISM_FF_INLINE const char *prism__ff_parse_simple(const char *p, const char *end, float *out)
{
    const char *s = p;
    bool neg = s < end && *s == '-';
    s += (s < end && (*s == '-' || *s == '+'));
    const char *d0 = s;
    uint64_t m = 0;
    while (s < end && prism__ff_is_digit(*s))
        m = m * 10 + (uint64_t)(*s++ - '0');
    size_t digits = (size_t)(s - d0), frac = 0;
    if (s < end && *s == '.') {
        const char *f0 = ++s;
        while (s < end && prism__ff_is_digit(*s))
            m = m * 10 + (uint64_t)(*s++ - '0');
        frac = (size_t)(s - f0);
        digits += frac;
    }
    if (digits == 0 || digits > 19 || s == end || !prism__ff_is_space(*s) ||
        m > (UINT64_C(1) << 53))
        return NULL;
    double v = (double)m / prism__ff_pow10[frac];
    *out = (float)(neg ? -v : v);
    return s;
}

/* As prism__ff_parse_double, rounded to float (out of range gives +-inf). */
PRISM_FF_INLINE const char *prism__ff_parse_float(const char *p, const char *end, float *out)
{
    double d;
    const char *q = prism__ff_parse_double(p, end, &d);
    if (q) {
        if (d > FLT_MAX)
            *out = (float)INFINITY;
        else if (d < -FLT_MAX)
            *out = -(float)INFINITY;
        else
            *out = (float)d;
    }
    return q;
}

/* Parse an unsigned 32-bit integer (digits only). NULL when there is no
 * digit at p or the value does not fit; *overflow tells which. */
static inline const char *prism__ff_parse_u32(const char *p, const char *end, uint32_t *out,
                                              bool *overflow)
{
    *overflow = false;
    if (p >= end || !prism__ff_is_digit(*p))
        return NULL;
    uint64_t v = 0;
    for (; p < end && prism__ff_is_digit(*p); p++) {
        v = v * 10 + (uint64_t)(*p - '0');
        if (v > UINT32_MAX) {
            *overflow = true;
            return NULL;
        }
    }
    *out = (uint32_t)v;
    return p;
}

#endif
