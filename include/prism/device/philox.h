/* Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
 * 3", SC11): a counter-based generator. A photon's numbers are a function of
 * (seed, photon index, step, draw), so nothing per thread is stored, chunked
 * launches change nothing, and both backends draw the same numbers. */
#ifndef PRISM_KERNELS_PHILOX_H
#define PRISM_KERNELS_PHILOX_H

#include <stdint.h>

#include "prism_hd.h"

typedef struct prism_philox4 {
    uint32_t v[4];
} prism_philox4;

PRISM_HD uint32_t prism_mulhilo(uint32_t a, uint32_t b, uint32_t *hi)
{
    uint64_t p = (uint64_t)a * (uint64_t)b;
    *hi = (uint32_t)(p >> 32);
    return (uint32_t)p;
}

/* The bijection of counter `c` under key (k0, k1): ten rounds. */
PRISM_HD prism_philox4 prism_philox4x32_10(prism_philox4 c, uint32_t k0, uint32_t k1)
{
    for (int round = 0; round < 10; round++) {
        uint32_t hi0, hi1;
        uint32_t lo0 = prism_mulhilo(0xD2511F53u, c.v[0], &hi0);
        uint32_t lo1 = prism_mulhilo(0xCD9E8D57u, c.v[2], &hi1);
        prism_philox4 n;
        n.v[0] = hi1 ^ c.v[1] ^ k0;
        n.v[1] = lo1;
        n.v[2] = hi0 ^ c.v[3] ^ k1;
        n.v[3] = lo0;
        c = n;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    return c;
}

/* A stream of uniforms for one (photon, step): counter words are
 * (photon, step, block, purpose); each block gives four numbers. Photon
 * indices beyond 32 bits carry their high bits above the purpose (bits 8
 * and up of the last word), so indices up to 2^56 draw distinct streams
 * and those below 2^32 draw what they always drew. */
typedef struct prism_rng {
    uint32_t k0, k1;
    uint32_t photon, step, block, purpose;
    prism_philox4 out;
    int used;
} prism_rng;

enum { PRISM_RNG_GENERATE = 1, PRISM_RNG_PROPAGATE = 2 };

#define PRISM_RNG_MAX_PHOTONS ((uint64_t)1 << 56)

PRISM_HD prism_rng prism_rng_make(uint64_t seed, uint64_t photon, uint32_t step, uint32_t purpose)
{
    prism_rng r;
    r.k0 = (uint32_t)seed;
    r.k1 = (uint32_t)(seed >> 32);
    r.photon = (uint32_t)photon;
    r.step = step;
    r.block = 0;
    r.purpose = purpose | (uint32_t)(photon >> 32) << 8;
    r.used = 4;
    r.out.v[0] = r.out.v[1] = r.out.v[2] = r.out.v[3] = 0;
    return r;
}

PRISM_HD uint32_t prism_rng_u32(prism_rng *r)
{
    if (r->used == 4) {
        prism_philox4 c;
        c.v[0] = r->photon;
        c.v[1] = r->step;
        c.v[2] = r->block++;
        c.v[3] = r->purpose;
        r->out = prism_philox4x32_10(c, r->k0, r->k1);
        r->used = 0;
    }
    return r->out.v[r->used++];
}

/* Uniform in the open interval (0, 1): the centres of 2^23 equal bins,
 * from 2^-24 to 1 - 2^-24, all exact in float. Never 0 or 1, so -log(u)
 * is finite and positive (an infinite length times it stays infinite), a
 * probability 1 always passes u < p and a probability 0 never does. */
PRISM_HD float prism_rng_uniform(prism_rng *r)
{
    return ((float)(prism_rng_u32(r) >> 9) + 0.5f) * (1.0f / 8388608.0f);
}

#endif
