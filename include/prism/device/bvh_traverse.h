/* Stack-based BVH traversal, closest hit and any hit, over the arrays a
 * prism_geometry_view points at. Shared by the CPU reference queries
 * (geometry/bvh/query.c) and the CUDA kernels: plain C, PRISM_HD, no libc.
 *
 * Both walk the tree near child first and keep the far child on a stack of
 * PRISM_BVH_STACK entries together with its entry distance, so a popped node
 * that lies beyond the closest hit found since is skipped unread. The stack
 * cannot overflow: the builder keeps leaves at depth <= PRISM_BVH_MAX_DEPTH
 * and at most one entry is pushed per inner node on the path.
 *
 * Box tests are robust: the far distance of each box (and tmax) is widened
 * by 1 + 2*gamma(3) (Ize, "Robust BVH Ray Traversal", JCGT 2013), so rounding
 * in the slab test cannot cull a box that a triangle test would hit (a ray
 * grazing a box face or edge, a flat box holding one axis-aligned triangle).
 * Zero direction components give infinite reciprocals; where a ray runs
 * exactly in a slab's plane the product is 0 * inf = NaN, which the min/max
 * in prism_ray_box ignore, so the ray counts as inside that slab, as it is.
 * Nothing loops on NaN.
 *
 * Results are leaf-order triangle indices: map them to scene triangles with
 * view->triangle_info[i].id (or prism_bvh.triangle_ids[i] on the CPU). */
#ifndef PRISM_BVH_TRAVERSE_H
#define PRISM_BVH_TRAVERSE_H

#include <stdint.h>

#include "geometry_view.h"
#include "prism_hd.h"
#include "ray_triangle.h"

#define PRISM_BVH_STACK PRISM_BVH_MAX_DEPTH

/* The inner loop is forced inline on the host compilers (GCC and Clang
 * otherwise keep prism__trav_next out of line, a call per node). */
#if !defined(__CUDACC__) && defined(__GNUC__)
#define PRISM__TRAV_INLINE static inline __attribute__((always_inline))
#else
#define PRISM__TRAV_INLINE PRISM_HD
#endif

/* On x86 hosts the two children's boxes are tested together with SSE; the
 * result is the same as prism_ray_box's, bit for bit (the same operations,
 * and minps/maxps treat NaN as its compare-selects do). The CUDA build and
 * PRISM_TRAVERSE_SCALAR (tests) use the plain C. */
#if !defined(__CUDACC__) && defined(__SSE2__) && !defined(PRISM_TRAVERSE_SCALAR)
#include <xmmintrin.h>
#define PRISM__TRAV_SSE 1
#endif

#define PRISM_BVH_BOX_WIDEN PRISM_RAY_BOX_WIDEN

#if defined(__CUDA_ARCH__)
__device__ __forceinline__ prism_bvh_node prism__node_ldg(const prism_bvh_node *n)
{
    const float4 a = __ldg((const float4 *)n), b = __ldg((const float4 *)n + 1);
    prism_bvh_node r;
    r.lo[0] = a.x;
    r.lo[1] = a.y;
    r.lo[2] = a.z;
    r.first = __float_as_uint(a.w);
    r.hi[0] = b.x;
    r.hi[1] = b.y;
    r.hi[2] = b.z;
    r.count = __float_as_uint(b.w);
    return r;
}
#endif

/* Node i, wherever its part of the array lives. */
PRISM_HD const prism_bvh_node *prism_view_node_ptr(const prism_geometry_view *g, uint32_t i)
{
    return i < g->nodes_split ? &g->nodes_head[i] : &g->nodes_tail[i - g->nodes_split];
}

PRISM_HD prism_bvh_node prism_view_node(const prism_geometry_view *g, uint32_t i)
{
    return *prism_view_node_ptr(g, i);
}

/* The root of an empty BVH: count 0 (not a leaf) but first 0, which no real
 * inner node has (its children come after it). */
PRISM_HD int prism_bvh_empty_root(const prism_bvh_node *root)
{
    return root->count == 0 && root->first == 0;
}

/* Slab test of `n`'s box against the ray over [tmin, tmax]. Returns whether
 * it is hit, and the entry distance in *t_near.
 *
 * The min/max are written as compare-selects whose NaN behaviour is chosen
 * (a comparison with NaN is false, so the second operand wins, as in SSE's
 * minps/maxps): with inv = +inf (prism_ray_prepare never makes -inf), a ray
 * lying in the plane of a box face gives 0 * inf = NaN for that face's slab
 * bound and the bound is ignored, so a ray grazing a face, or running along
 * a flat box, still enters it. */
PRISM_HD int prism_ray_box(const prism_ray_pre *p, const prism_bvh_node *n, float tmin, float tmax,
                           float *t_near)
{
    float tn = tmin, tf = tmax * PRISM_BVH_BOX_WIDEN;
    for (int a = 0; a < 3; a++) {
        /* inv_lo/inv_hi carry the widening on the far side: each far
         * distance comes out widened, at no cost per node */
        const float tlo = (n->lo[a] - p->org[a]) * p->inv_lo[a];
        const float thi = (n->hi[a] - p->org[a]) * p->inv_hi[a];
        const float near = thi < tlo ? thi : tlo; /* NaN: tlo */
        const float far = tlo > thi ? tlo : thi;  /* NaN: thi */
        tn = near > tn ? near : tn;               /* NaN: keep tn */
        tf = far < tf ? far : tf;                 /* NaN: keep tf */
    }
    *t_near = tn;
    return tn <= tf;
}

/* The ray as the box tests want it. */
#ifdef PRISM__TRAV_SSE
typedef struct prism__box_ray {
    /* 4th lanes NaN: the nodes' first/count lanes drop out */
    __m128 org, inv_lo, inv_hi;
} prism__box_ray;

PRISM__TRAV_INLINE void prism__box_ray_init(prism__box_ray *b, const prism_ray_pre *p)
{
    const float nan = __builtin_nanf("");
    b->org = _mm_setr_ps(p->org[0], p->org[1], p->org[2], 0.0f);
    b->inv_lo = _mm_setr_ps(p->inv_lo[0], p->inv_lo[1], p->inv_lo[2], nan);
    b->inv_hi = _mm_setr_ps(p->inv_hi[0], p->inv_hi[1], p->inv_hi[2], nan);
}

/* Both children: bit 0 / bit 1 set where c0 / c1 is hit, entry distances in
 * *t0, *t1. */
PRISM__TRAV_INLINE int prism__box2(const prism__box_ray *b, const prism_ray_pre *p,
                                   const prism_bvh_node *c0, const prism_bvh_node *c1, float tmin,
                                   float tmax, float *t0, float *t1)
{
    (void)p;
    const __m128 tlo0 = _mm_mul_ps(_mm_sub_ps(_mm_loadu_ps(c0->lo), b->org), b->inv_lo);
    const __m128 thi0 = _mm_mul_ps(_mm_sub_ps(_mm_loadu_ps(c0->hi), b->org), b->inv_hi);
    const __m128 tlo1 = _mm_mul_ps(_mm_sub_ps(_mm_loadu_ps(c1->lo), b->org), b->inv_lo);
    const __m128 thi1 = _mm_mul_ps(_mm_sub_ps(_mm_loadu_ps(c1->hi), b->org), b->inv_hi);
    const __m128 lo4 = _mm_set1_ps(tmin), hi4 = _mm_set1_ps(tmax * PRISM_BVH_BOX_WIDEN);
    /* minps/maxps return the second operand where either is NaN */
    const __m128 n0 = _mm_max_ps(_mm_min_ps(thi0, tlo0), lo4);
    const __m128 n1 = _mm_max_ps(_mm_min_ps(thi1, tlo1), lo4);
    const __m128 f0 = _mm_min_ps(_mm_max_ps(tlo0, thi0), hi4);
    const __m128 f1 = _mm_min_ps(_mm_max_ps(tlo1, thi1), hi4);
    __m128 n = _mm_max_ps(_mm_unpacklo_ps(n0, n1), _mm_unpackhi_ps(n0, n1));
    __m128 f = _mm_min_ps(_mm_unpacklo_ps(f0, f1), _mm_unpackhi_ps(f0, f1));
    n = _mm_max_ps(n, _mm_movehl_ps(n, n)); /* lanes 0, 1: c0, c1 */
    f = _mm_min_ps(f, _mm_movehl_ps(f, f));
    *t0 = _mm_cvtss_f32(n);
    *t1 = _mm_cvtss_f32(_mm_shuffle_ps(n, n, 1));
    return _mm_movemask_ps(_mm_cmple_ps(n, f)) & 3;
}
#else
typedef struct prism__box_ray {
    int unused;
} prism__box_ray;

PRISM__TRAV_INLINE void prism__box_ray_init(prism__box_ray *b, const prism_ray_pre *p)
{
    (void)p;
    b->unused = 0;
}

PRISM__TRAV_INLINE int prism__box2(const prism__box_ray *b, const prism_ray_pre *p,
                                   const prism_bvh_node *c0, const prism_bvh_node *c1, float tmin,
                                   float tmax, float *t0, float *t1)
{
    (void)b;
    return prism_ray_box(p, c0, tmin, tmax, t0) | prism_ray_box(p, c1, tmin, tmax, t1) << 1;
}
#endif

/* The triangle at leaf-order index i. */
PRISM_HD int prism_view_triangle(const prism_geometry_view *g, const prism_ray_pre *p, uint32_t i,
                                 float tmin, float tmax, float *t, float *u, float *v)
{
    const uint32_t *tri = g->triangles + 3u * (uint64_t)i;
    const float *a = g->vertices + 3u * (uint64_t)tri[0];
    const float *b = g->vertices + 3u * (uint64_t)tri[1];
    const float *c = g->vertices + 3u * (uint64_t)tri[2];
    return prism_ray_triangle(p, a, b, c, tmin, tmax, t, u, v);
}

/* A deferred far child: its own (first, count), so popping it reads no
 * node, and its entry distance, so it is skipped once a closer hit is found. */
typedef struct prism__trav_entry {
    uint32_t first, count;
    float t;
} prism__trav_entry;

/* Having reached node (first, count), pick the next one: for an inner node
 * the nearer child hit (pushing the other if both are), else a popped entry
 * nearer than tmax. Returns 0 when the traversal is over. */
PRISM__TRAV_INLINE int prism__trav_next(const prism_geometry_view *g, const prism_ray_pre *p,
                                        const prism__box_ray *br, uint32_t *first, uint32_t *count,
                                        float tmax, prism__trav_entry *stack, int *sp)
{
    if (*count == 0) {
        const uint32_t i0 = *first;
        const prism_bvh_node *c0 = prism_view_node_ptr(g, i0);
        /* the second child is the next node, unless the split falls between */
        const prism_bvh_node *c1 = i0 + 1 == g->nodes_split ? g->nodes_tail : c0 + 1;
#if defined(__CUDA_ARCH__)
        /* On the device each node is two 16-byte loads through the
         * read-only cache (every node array is 16-byte aligned, in any kind
         * of memory, and a split lands on a whole node). */
        const prism_bvh_node n0 = prism__node_ldg(c0), n1 = prism__node_ldg(c1);
        c0 = &n0;
        c1 = &n1;
#endif
#ifdef PRISM__TRAV_SSE
        /* Start fetching the grandchildren while the boxes are tested, with
         * no branch: for a leaf child (or a tail node) the line is a wasted
         * fetch, never a fault (the address is formed as an integer). */
        _mm_prefetch((const char *)((uintptr_t)g->nodes_head + (uintptr_t)c0->first * 32u),
                     _MM_HINT_T0);
        _mm_prefetch((const char *)((uintptr_t)g->nodes_head + (uintptr_t)c1->first * 32u),
                     _MM_HINT_T0);
#endif
        float t0, t1;
        const int h = prism__box2(br, p, c0, c1, p->tmin, tmax, &t0, &t1);
        if (h) {
            /* Branch-free from here: the far entry is always written and
             * kept only when both children are hit (sp <= depth < 64). */
            const int swap = (h == 2) | ((h == 3) & (t1 < t0));
            const prism_bvh_node *nr = swap ? c1 : c0, *fr = swap ? c0 : c1;
            prism__trav_entry *e = &stack[*sp];
            e->first = fr->first;
            e->count = fr->count;
            e->t = swap ? t0 : t1;
            *sp += h == 3;
            *first = nr->first;
            *count = nr->count;
            return 1;
        }
    }
    while (*sp > 0) {
        const prism__trav_entry *e = &stack[--(*sp)];
        /* widened as the box test's far side: a box's entry distance can
         * round above the t of a triangle inside it (a ray through a
         * vertex on the box's face) */
        if (e->t <= tmax * PRISM_BVH_BOX_WIDEN) {
            *first = e->first;
            *count = e->count;
            return 1;
        }
    }
    return 0;
}

/* Closest hit in [ray->tmin, ray->tmax] on any triangle but leaf-order index
 * `skip` (the surface a photon starts on; PRISM_BVH_MISS skips nothing).
 * Returns 1 on a hit, with hit->triangle the leaf-order index; on a miss
 * returns 0, hit->triangle = PRISM_BVH_MISS and hit->t = ray->tmax. */
PRISM_HD int prism_bvh_closest_skip(const prism_geometry_view *g, const prism_ray *ray,
                                    uint32_t skip, prism_hit *hit)
{
    prism_ray_pre p;
    prism_ray_prepare(ray, &p);
    hit->t = ray->tmax;
    hit->triangle = PRISM_BVH_MISS;
    hit->u = hit->v = 0.0f;
    if (g->triangle_count == 0 || g->node_count == 0)
        return 0;
    /* No test of the root's own box: its children's boxes lie inside it and
     * are tested first thing (most rays start inside the scene anyway). */
    const prism_bvh_node root = prism_view_node(g, 0);
    if (prism_bvh_empty_root(&root))
        return 0;
    prism__trav_entry stack[PRISM_BVH_STACK];
    int sp = 0;
    prism__box_ray br;
    prism__box_ray_init(&br, &p);
    uint32_t first = root.first, count = root.count;
    do {
        for (uint32_t i = first; i < first + count; i++) {
            float t, u, v;
            /* ties at exactly hit->t: the smaller index, whatever the order */
            if (i != skip && prism_view_triangle(g, &p, i, p.tmin, hit->t, &t, &u, &v) &&
                (t < hit->t || i < hit->triangle)) {
                hit->t = t;
                hit->triangle = i;
                hit->u = u;
                hit->v = v;
            }
        }
    } while (prism__trav_next(g, &p, &br, &first, &count, hit->t, stack, &sp));
    return hit->triangle != PRISM_BVH_MISS;
}

/* Closest hit in [ray->tmin, ray->tmax]; as prism_bvh_closest_skip. */
PRISM_HD int prism_bvh_closest(const prism_geometry_view *g, const prism_ray *ray, prism_hit *hit)
{
    return prism_bvh_closest_skip(g, ray, PRISM_BVH_MISS, hit);
}

/* Any hit in [ray->tmin, ray->tmax]: returns the leaf-order index of some hit
 * triangle, or PRISM_BVH_MISS. */
PRISM_HD uint32_t prism_bvh_any(const prism_geometry_view *g, const prism_ray *ray)
{
    prism_ray_pre p;
    prism_ray_prepare(ray, &p);
    if (g->triangle_count == 0 || g->node_count == 0)
        return PRISM_BVH_MISS;
    const prism_bvh_node root = prism_view_node(g, 0);
    if (prism_bvh_empty_root(&root)) /* no root box test: as in closest */
        return PRISM_BVH_MISS;
    prism__trav_entry stack[PRISM_BVH_STACK];
    int sp = 0;
    prism__box_ray br;
    prism__box_ray_init(&br, &p);
    uint32_t first = root.first, count = root.count;
    do {
        for (uint32_t i = first; i < first + count; i++) {
            float t, u, v;
            if (prism_view_triangle(g, &p, i, p.tmin, p.tmax, &t, &u, &v))
                return i;
        }
    } while (prism__trav_next(g, &p, &br, &first, &count, p.tmax, stack, &sp));
    return PRISM_BVH_MISS;
}

#endif
