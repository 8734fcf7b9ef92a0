/* Closest hit and any hit over the wide tree of a prism_geometry_view
 * (prism/device/bvh_wide.h): plain C, PRISM_HD, no libc, run by the CPU reference
 * queries, the host backend and the CUDA kernels.
 *
 * A node visit tests the 8 child boxes (the decoded planes, with the binary
 * walk's robust slab test: far distances widened, NaN products ignored),
 * tests the triangles of the leaf children hit at once, and pushes one
 * entry for the inner children hit: their base index and a bit mask in the
 * ray's octant order (bit s ^ o for slot s), so taking the lowest bit gives
 * the child most likely nearest. The stack holds one entry per level of the
 * current path (PRISM_WIDE_STACK, never overflows: the collapse bounds the
 * depth). An entry's children were tested against the hit distance of its
 * visit; a child's own children are tested against the current one.
 *
 * Ties: among triangles hit at exactly the same distance the one of the
 * smallest leaf-order index wins, as in the binary walk, so the two trees
 * report the same hit whatever order they visit the triangles in.
 *
 * Tried and dropped (measured on one GPU against this test, side by
 * side): the GPU box test as one multiply-add a plane (t = q A + B per
 * node and axis, near and far planes chosen by the ray's octant, B moved
 * out by a slack of 8u |inv| (|p| + |o| + 255 s) that bounds the rounding
 * of the decode and of B, so that it refuses no box this test accepts).
 * The walks agreed on every ray, but the photons were 2-5% slower (2.56M
 * triangles: 138.2 against 131.3 M photons/s at 10^8; 25.6M: 214 against
 * 211), as were most mapped renders: the per-axis terms kept live across
 * the eight slots cost the registers the fewer instructions saved. */
#ifndef PRISM_BVH_WIDE_TRAVERSE_H
#define PRISM_BVH_WIDE_TRAVERSE_H

#include <stdint.h>

#include "bvh_wide.h"
#include "geometry_view.h"
#include "prism_hd.h"
#include "ray_triangle.h"

PRISM_HD uint32_t prism__ctz(uint32_t x)
{
#if defined(__CUDA_ARCH__)
    return (uint32_t)(__ffs((int)x) - 1);
#else
    return (uint32_t)__builtin_ctz(x);
#endif
}

PRISM_HD uint32_t prism__popc(uint32_t x)
{
#if defined(__CUDA_ARCH__)
    return (uint32_t)__popc(x);
#else
    return (uint32_t)__builtin_popcount(x);
#endif
}

/* Wide triangle w against the ray: prism_ray_triangle on its copied
 * vertices. (Read through pointers on the device too: loading the three
 * 16-byte rows and picking components by select measured slower.) */
PRISM_HD int prism__wide_triangle(const prism_wide_triangle *w, const prism_ray_pre *p, float tmin,
                                  float tmax, uint32_t *index, float *t, float *u, float *v)
{
    *index = w->index;
    return prism_ray_triangle(p, w->a, w->b, w->c, tmin, tmax, t, u, v);
}

/* Bit s of m moved to bit s ^ o (o < 8). */
PRISM_HD uint32_t prism__wide_permute(uint32_t m, uint32_t o)
{
    if (o & 1u)
        m = (m & 0x55u) << 1 | (m & 0xAAu) >> 1;
    if (o & 2u)
        m = (m & 0x33u) << 2 | (m & 0xCCu) >> 2;
    if (o & 4u)
        m = (m & 0x0Fu) << 4 | (m & 0xF0u) >> 4;
    return m;
}

/* The ray's octant: bit k set where it runs towards -k (a zero component
 * has inv = +inf, so it counts as +). */
PRISM_HD uint32_t prism__wide_octant(const prism_ray_pre *p)
{
    return (uint32_t)(p->inv[0] < 0.0f) | (uint32_t)(p->inv[1] < 0.0f) << 1 |
           (uint32_t)(p->inv[2] < 0.0f) << 2;
}

PRISM_HD const prism_wide_node *prism_view_wide_ptr(const prism_geometry_view *g, uint32_t i)
{
    return i < g->wide_split ? &g->wide_head[i] : &g->wide_tail[i - g->wide_split];
}

/* Node i in registers (on the device five 16-byte loads through the
 * read-only cache). */
PRISM_HD prism_wide_node prism_view_wide(const prism_geometry_view *g, uint32_t i)
{
    const prism_wide_node *n = prism_view_wide_ptr(g, i);
#if defined(__CUDA_ARCH__)
    union {
        uint4 v[5];
        prism_wide_node n;
    } u;
    for (int k = 0; k < 5; k++)
        u.v[k] = __ldg((const uint4 *)n + k);
    return u.n;
#else
    return *n;
#endif
}

#if !defined(__CUDACC__) && defined(__SSE2__) && !defined(PRISM_TRAVERSE_SCALAR)
#include <emmintrin.h>
#define PRISM__WIDE_SSE 1

/* Four plane bytes as floats. */
static inline __m128 prism__wide_q4(const uint8_t *q)
{
    uint32_t w;
    __builtin_memcpy(&w, q, 4);
    __m128i v = _mm_unpacklo_epi8(_mm_cvtsi32_si128((int)w), _mm_setzero_si128());
    return _mm_cvtepi32_ps(_mm_unpacklo_epi16(v, _mm_setzero_si128()));
}

/* Slots h*4 .. h*4+3 of the scalar test below, four at a time: the same
 * operations in the same order (the multiply by a power of two is exact),
 * and minps/maxps pick the operand the compare-selects pick when one is
 * NaN, so the bits are the same. */
static inline uint32_t prism__wide_boxes4(const prism_ray_pre *p, const prism_wide_node *n, int h,
                                          __m128 tn, __m128 tf)
{
    for (int a = 0; a < 3; a++) {
        const __m128 sc = _mm_set1_ps(prism__wide_scale(n->e[a])), pa = _mm_set1_ps(n->p[a]);
        const __m128 o = _mm_set1_ps(p->org[a]);
        const __m128 lo = _mm_add_ps(_mm_mul_ps(prism__wide_q4(&n->qlo[a][4 * h]), sc), pa);
        const __m128 hi = _mm_add_ps(_mm_mul_ps(prism__wide_q4(&n->qhi[a][4 * h]), sc), pa);
        const __m128 tlo = _mm_mul_ps(_mm_sub_ps(lo, o), _mm_set1_ps(p->inv_lo[a]));
        const __m128 thi = _mm_mul_ps(_mm_sub_ps(hi, o), _mm_set1_ps(p->inv_hi[a]));
        tn = _mm_max_ps(_mm_min_ps(thi, tlo), tn);
        tf = _mm_min_ps(_mm_max_ps(tlo, thi), tf);
    }
    return (uint32_t)_mm_movemask_ps(_mm_cmple_ps(tn, tf));
}
#endif

/* Bit s set for each non-empty slot whose decoded box the ray enters in
 * [tmin, tmax] (prism_ray_box's test on the decoded planes). */
PRISM_HD uint32_t prism__wide_boxes(const prism_ray_pre *p, const prism_wide_node *n, float tmin,
                                    float tmax)
{
#ifdef PRISM__WIDE_SSE
    {
        const __m128 tn = _mm_set1_ps(tmin), tf = _mm_set1_ps(tmax * PRISM_RAY_BOX_WIDEN);
        const __m128i m = _mm_cmpeq_epi8(_mm_loadl_epi64((const __m128i *)n->meta),
                                         _mm_setzero_si128());
        const uint32_t used = ~(uint32_t)_mm_movemask_epi8(m) & 0xFFu;
        return (prism__wide_boxes4(p, n, 0, tn, tf) | prism__wide_boxes4(p, n, 1, tn, tf) << 4) &
               used;
    }
#endif

    const float tfar = tmax * PRISM_RAY_BOX_WIDEN;
    const float s0 = prism__wide_scale(n->e[0]), s1 = prism__wide_scale(n->e[1]),
                s2 = prism__wide_scale(n->e[2]);
    uint32_t hits = 0;
    for (int s = 0; s < 8; s++) {
        const float lo[3] = {(float)(n->qlo[0][s]) * s0 + n->p[0],
                             (float)(n->qlo[1][s]) * s1 + n->p[1],
                             (float)(n->qlo[2][s]) * s2 + n->p[2]};
        const float hi[3] = {(float)(n->qhi[0][s]) * s0 + n->p[0],
                             (float)(n->qhi[1][s]) * s1 + n->p[1],
                             (float)(n->qhi[2][s]) * s2 + n->p[2]};
        float tn = tmin, tf = tfar;
        for (int a = 0; a < 3; a++) {
            const float tlo = (lo[a] - p->org[a]) * p->inv_lo[a];
            const float thi = (hi[a] - p->org[a]) * p->inv_hi[a];
            const float near = thi < tlo ? thi : tlo; /* NaN: tlo */
            const float far = tlo > thi ? tlo : thi;  /* NaN: thi */
            tn = near > tn ? near : tn;
            tf = far < tf ? far : tf;
        }
        hits |= (uint32_t)(n->meta[s] != 0 && tn <= tf) << s;
    }
    return hits;
}

/* The wide triangles of the leaf slots in `leaves`: bit j is tri_base + j. */
PRISM_HD uint32_t prism__wide_triangles(const prism_wide_node *n, uint32_t leaves)
{
    uint32_t mask = 0;
    for (int s = 0; s < 8; s++) {
        const uint32_t m = n->meta[s];
        const uint32_t run = (1u << (m >> 5)) - 1u;
        mask |= (leaves >> s & 1u) ? run << (m & 31u) : 0u;
    }
    return mask;
}

typedef struct prism__wide_entry {
    uint32_t base; /* the node's inner children start here */
    uint32_t bits; /* 0..7: children still to visit, octant order; 8..15: imask */
} prism__wide_entry;

/* The next node from the stack: the lowest bit of the top entry. Returns 0
 * when the stack is empty. */
PRISM_HD int prism__wide_pop(prism__wide_entry *stack, int *sp, uint32_t octant, uint32_t *node)
{
    if (*sp == 0)
        return 0;
    prism__wide_entry *e = &stack[*sp - 1];
    const uint32_t b = prism__ctz(e->bits & 0xFFu);
    const uint32_t bits = e->bits & ~(1u << b);
    e->bits = bits;
    *sp -= (bits & 0xFFu) == 0;
    const uint32_t s = b ^ octant;
    *node = e->base + prism__popc((bits >> 8) & ((1u << s) - 1u));
    return 1;
}

/* A visited node's inner children hit, pushed; returns its leaf triangles hit. */
PRISM_HD uint32_t prism__wide_visit(const prism_geometry_view *g, const prism_ray_pre *p,
                                    uint32_t node, float tmax, uint32_t octant,
                                    prism__wide_entry *stack, int *sp, uint32_t *tri_base)
{
    const prism_wide_node n = prism_view_wide(g, node);
    const uint32_t hits = prism__wide_boxes(p, &n, p->tmin, tmax);
    const uint32_t inner = hits & n.imask;
    if (inner) {
        stack[*sp].base = n.child_base;
        stack[*sp].bits = prism__wide_permute(inner, octant) | (uint32_t)n.imask << 8;
        (*sp)++;
    }
    *tri_base = n.tri_base;
    return prism__wide_triangles(&n, hits & ~(uint32_t)n.imask);
}

/* prism_wide_closest_skip on a prepared ray over [p->tmin, p->tmax] (the kernels prepare
 * a pixel's ray once for all its layers). */
PRISM_HD int prism_wide_closest_pre(const prism_geometry_view *g, const prism_ray_pre *pp,
                                    uint32_t skip, prism_hit *hit)
{
    const prism_ray_pre p = *pp;
    hit->t = p.tmax;
    hit->triangle = PRISM_BVH_MISS;
    hit->u = hit->v = 0.0f;
    if (g->triangle_count == 0 || g->wide_count == 0)
        return 0;
    const uint32_t octant = prism__wide_octant(&p);
    prism__wide_entry stack[PRISM_WIDE_STACK];
    int sp = 0;
    uint32_t node = 0;
    do {
        uint32_t base;
        uint32_t tris = prism__wide_visit(g, &p, node, hit->t, octant, stack, &sp, &base);
        while (tris) {
            const uint32_t j = prism__ctz(tris);
            tris &= tris - 1u;
            float t, u, v;
            uint32_t index;
            if (prism__wide_triangle(&g->wide_triangles[base + j], &p, p.tmin, hit->t, &index, &t,
                                     &u, &v) &&
                index != skip && (t < hit->t || index < hit->triangle)) {
                hit->t = t;
                hit->triangle = index;
                hit->u = u;
                hit->v = v;
            }
        }
    } while (prism__wide_pop(stack, &sp, octant, &node));
    return hit->triangle != PRISM_BVH_MISS;
}

/* Closest hit in [ray->tmin, ray->tmax] on any triangle but leaf-order
 * index `skip`, over the wide tree: as prism_bvh_closest_skip (the same
 * hit->triangle, t, u, v). */
PRISM_HD int prism_wide_closest_skip(const prism_geometry_view *g, const prism_ray *ray,
                                     uint32_t skip, prism_hit *hit)
{
    prism_ray_pre p;
    prism_ray_prepare(ray, &p);
    return prism_wide_closest_pre(g, &p, skip, hit);
}

/* Any hit in [ray->tmin, ray->tmax] over the wide tree: the leaf-order index
 * of some hit triangle, or PRISM_BVH_MISS. */
PRISM_HD uint32_t prism_wide_any(const prism_geometry_view *g, const prism_ray *ray)
{
    prism_ray_pre p;
    prism_ray_prepare(ray, &p);
    if (g->triangle_count == 0 || g->wide_count == 0)
        return PRISM_BVH_MISS;
    const uint32_t octant = prism__wide_octant(&p);
    prism__wide_entry stack[PRISM_WIDE_STACK];
    int sp = 0;
    uint32_t node = 0;
    do {
        uint32_t base;
        uint32_t tris = prism__wide_visit(g, &p, node, p.tmax, octant, stack, &sp, &base);
        while (tris) {
            const uint32_t j = prism__ctz(tris);
            tris &= tris - 1u;
            float t, u, v;
            uint32_t index;
            if (prism__wide_triangle(&g->wide_triangles[base + j], &p, p.tmin, p.tmax, &index, &t,
                                     &u, &v))
                return index;
        }
    } while (prism__wide_pop(stack, &sp, octant, &node));
    return PRISM_BVH_MISS;
}

#endif
