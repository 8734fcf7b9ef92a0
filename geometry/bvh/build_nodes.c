/* The binned SAH recursion of the BVH builder.
 *
 * Centroids are kept doubled (lo + hi) so binning needs no multiply by 0.5.
 * A node bins its references per axis (SSE where there is SSE), sweeps the
 * bins for the split of least SAH cost, and either becomes a leaf (when that
 * is cheaper and the leaf-size limit allows) or partitions its references in
 * place and recurses. Nodes of up to 4 references try every partition
 * instead; nodes of more than 2^17 bin a quarter sample. Nodes holding more
 * than a thread's share bin and partition with all threads; large subtrees
 * become OpenMP tasks. Each thread takes node pairs from its own block of
 * slots. A depth guard switches to median
 * splits where the SAH split could push a leaf below PRISM_BVH_MAX_DEPTH,
 * which bounds the traversal stack. Nothing depends on the order the
 * references are in (the parallel partition's order depends on the thread
 * count; the median split and the leaves order by triangle id where
 * centroids tie), so neither the tree nor the triangle order does.
 * Leaves write their triangles to the output and count them for the
 * progress callback (the calling thread reports), which never changes the
 * tree. */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "build_internal.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#define PRISM__BVH_SSE 1
#endif

typedef struct box3 {
    float lo[3], hi[3];
} box3;

/* A bin's box as 4-float rows (the 4th lane is don't-care), so SSE can
 * grow it with one min and one max. */
typedef struct bin {
    float lo[4], hi[4];
} bin;

typedef struct binning {
    bin b[3][PRISM__BVH_MAX_BINS];
    uint32_t count[3][PRISM__BVH_MAX_BINS];
} binning;

/* Centroid -> bin: bin = (c - base) * scale, where scale is 0 on an axis
 * whose centroids all coincide (that axis cannot split). */
typedef struct mapping {
    float base[3], scale[3];
    int bins;
} mapping;

typedef struct split {
    int axis, pos; /* left = bins [0, pos) of axis; axis SMALL_SPLIT: see mask */
    unsigned mask; /* SMALL_SPLIT: bit i set = reference begin+i goes left */
    int sampled;   /* binned from a sample: l and r are the partition's to fill */
    double cost;   /* sum of area * count over both sides */
    box3 l, r;
    size_t nl;
} split;

static inline void box_empty(box3 *b)
{
    for (int a = 0; a < 3; a++) {
        b->lo[a] = FLT_MAX;
        b->hi[a] = -FLT_MAX;
    }
}

static inline void box_grow(box3 *b, const float *lo, const float *hi)
{
    for (int a = 0; a < 3; a++) {
        b->lo[a] = lo[a] < b->lo[a] ? lo[a] : b->lo[a];
        b->hi[a] = hi[a] > b->hi[a] ? hi[a] : b->hi[a];
    }
}

static inline void box_grow_centroid(box3 *b, const prism__bvh_ref *r)
{
    float c[3] = {r->lo[0] + r->hi[0], r->lo[1] + r->hi[1], r->lo[2] + r->hi[2]};
    box_grow(b, c, c);
}

static void make_mapping(mapping *m, const box3 *cb, int bins)
{
    m->bins = bins;
    for (int a = 0; a < 3; a++) {
        float extent = cb->hi[a] - cb->lo[a];
        float scale = extent > 0.0f ? (float)bins * (1.0f - 1e-6f) / extent : 0.0f;
        m->base[a] = cb->lo[a];
        m->scale[a] = scale <= FLT_MAX ? scale : 0.0f; /* tiny extents: no split */
    }
}

static inline int bin_of(const mapping *m, const prism__bvh_ref *r, int a)
{
    float f = (r->lo[a] + r->hi[a] - m->base[a]) * m->scale[a];
    const float top = (float)(m->bins - 1);
    f = f > 0.0f ? f : 0.0f; /* NaN: 0 */
    f = f < top ? f : top;
    return (int)f;
}

/* ---- binning and the SAH sweep ---------------------------------------- */

static void bins_clear(binning *bn, int bins)
{
    for (int a = 0; a < 3; a++)
        for (int i = 0; i < bins; i++) {
            for (int k = 0; k < 4; k++) {
                bn->b[a][i].lo[k] = FLT_MAX;
                bn->b[a][i].hi[k] = -FLT_MAX;
            }
            bn->count[a][i] = 0;
        }
}

#ifdef PRISM__BVH_SSE
/* The same bins as bin_of (the same float operations in the same order, so
 * partition() puts each reference on the side its bin was counted on). */
static void bins_fill(binning *bn, const mapping *m, const prism__bvh_ref *refs, size_t n,
                      size_t step)
{
    const __m128 base = _mm_setr_ps(m->base[0], m->base[1], m->base[2], 0.0f);
    const __m128 scale = _mm_setr_ps(m->scale[0], m->scale[1], m->scale[2], 0.0f);
    const __m128 top = _mm_set1_ps((float)(m->bins - 1)), zero = _mm_setzero_ps();
    const uint32_t skip = (uint32_t)step - 1;
    for (size_t k = 0; k < n; k++) {
        if (refs[k].id & skip)
            continue;
        const __m128 lo = _mm_loadu_ps(refs[k].lo), hi = _mm_loadu_ps(refs[k].hi);
        __m128 f = _mm_mul_ps(_mm_sub_ps(_mm_add_ps(lo, hi), base), scale);
        f = _mm_min_ps(_mm_max_ps(f, zero), top); /* NaN: 0, as in bin_of */
        const __m128i bi = _mm_cvttps_epi32(f);
        const int i[3] = {_mm_cvtsi128_si32(bi), _mm_cvtsi128_si32(_mm_shuffle_epi32(bi, 1)),
                          _mm_cvtsi128_si32(_mm_shuffle_epi32(bi, 2))};
        for (int a = 0; a < 3; a++) {
            bin *x = &bn->b[a][i[a]];
            _mm_storeu_ps(x->lo, _mm_min_ps(_mm_loadu_ps(x->lo), lo));
            _mm_storeu_ps(x->hi, _mm_max_ps(_mm_loadu_ps(x->hi), hi));
            bn->count[a][i[a]]++;
        }
    }
}

/* Neighbouring references often fall in the same bins, which chains each
 * bin update to the last through memory: large nodes bin odd and even
 * references into two sets and merge them. */
static void bins_fill2(binning *bn, const mapping *m, const prism__bvh_ref *refs, size_t n,
                       binning *other)
{
    const __m128 base = _mm_setr_ps(m->base[0], m->base[1], m->base[2], 0.0f);
    const __m128 scale = _mm_setr_ps(m->scale[0], m->scale[1], m->scale[2], 0.0f);
    const __m128 top = _mm_set1_ps((float)(m->bins - 1)), zero = _mm_setzero_ps();
    binning *set[2] = {bn, other};
    size_t k = 0;
    for (; k + 1 < n; k += 2) {
        for (int j = 0; j < 2; j++) {
            const __m128 lo = _mm_loadu_ps(refs[k + j].lo), hi = _mm_loadu_ps(refs[k + j].hi);
            __m128 f = _mm_mul_ps(_mm_sub_ps(_mm_add_ps(lo, hi), base), scale);
            f = _mm_min_ps(_mm_max_ps(f, zero), top);
            const __m128i bi = _mm_cvttps_epi32(f);
            const int i[3] = {_mm_cvtsi128_si32(bi), _mm_cvtsi128_si32(_mm_shuffle_epi32(bi, 1)),
                              _mm_cvtsi128_si32(_mm_shuffle_epi32(bi, 2))};
            binning *b = set[j];
            for (int a = 0; a < 3; a++) {
                bin *x = &b->b[a][i[a]];
                _mm_storeu_ps(x->lo, _mm_min_ps(_mm_loadu_ps(x->lo), lo));
                _mm_storeu_ps(x->hi, _mm_max_ps(_mm_loadu_ps(x->hi), hi));
                b->count[a][i[a]]++;
            }
        }
    }
    bins_fill(bn, m, refs + k, n - k, 1);
}
#else
static void bins_fill(binning *bn, const mapping *m, const prism__bvh_ref *refs, size_t n,
                      size_t step)
{
    const uint32_t skip = (uint32_t)step - 1;
    for (size_t k = 0; k < n; k++) {
        const prism__bvh_ref *r = &refs[k];
        if (r->id & skip)
            continue;
        for (int a = 0; a < 3; a++) {
            int i = bin_of(m, r, a);
            bin *x = &bn->b[a][i];
            for (int c = 0; c < 3; c++) {
                x->lo[c] = r->lo[c] < x->lo[c] ? r->lo[c] : x->lo[c];
                x->hi[c] = r->hi[c] > x->hi[c] ? r->hi[c] : x->hi[c];
            }
            bn->count[a][i]++;
        }
    }
}
#endif

static void bins_merge(binning *into, const binning *from, int bins)
{
    for (int a = 0; a < 3; a++)
        for (int i = 0; i < bins; i++) {
            box3 x;
            memcpy(x.lo, into->b[a][i].lo, sizeof x.lo);
            memcpy(x.hi, into->b[a][i].hi, sizeof x.hi);
            box_grow(&x, from->b[a][i].lo, from->b[a][i].hi);
            memcpy(into->b[a][i].lo, x.lo, sizeof x.lo);
            memcpy(into->b[a][i].hi, x.hi, sizeof x.hi);
            into->count[a][i] += from->count[a][i];
        }
}

static inline float area3(const box3 *b)
{
    float dx = b->hi[0] - b->lo[0], dy = b->hi[1] - b->lo[1], dz = b->hi[2] - b->lo[2];
    return dx * dy + dy * dz + dz * dx;
}

static void sweep_axis(const bin *bins, const uint32_t *count, int nb, int axis, split *best)
{
    float rarea[PRISM__BVH_MAX_BINS];
    uint32_t rcount[PRISM__BVH_MAX_BINS];
    box3 acc;
    uint32_t cnt = 0;
    box_empty(&acc);
    for (int i = nb - 1; i > 0; i--) {
        box_grow(&acc, bins[i].lo, bins[i].hi);
        cnt += count[i];
        rarea[i] = area3(&acc);
        rcount[i] = cnt;
    }
    box_empty(&acc);
    cnt = 0;
    for (int i = 1; i < nb; i++) {
        box_grow(&acc, bins[i - 1].lo, bins[i - 1].hi);
        cnt += count[i - 1];
        if (cnt == 0 || rcount[i] == 0)
            continue;
        double cost = (double)area3(&acc) * cnt + (double)rarea[i] * rcount[i];
        if (cost < best->cost) {
            best->cost = cost;
            best->axis = axis;
            best->pos = i;
        }
    }
}

/* The best split over all axes; 0 when no axis can split. */
static int sweep(const binning *bn, const mapping *m, split *s)
{
    s->cost = DBL_MAX;
    s->axis = -1;
    for (int a = 0; a < 3; a++)
        if (m->scale[a] > 0.0f)
            sweep_axis(bn->b[a], bn->count[a], m->bins, a, s);
    if (s->axis < 0)
        return 0;
    box_empty(&s->l);
    box_empty(&s->r);
    s->nl = 0;
    for (int i = 0; i < m->bins; i++) {
        const bin *x = &bn->b[s->axis][i];
        box_grow(i < s->pos ? &s->l : &s->r, x->lo, x->hi);
        if (i < s->pos)
            s->nl += bn->count[s->axis][i];
    }
    return 1;
}

/* Whether a node bins and partitions with all threads: only while there
 * are fewer such nodes than threads (below that the subtrees' tasks keep
 * the threads busy, and the fork-join would only cost). */
static int par_node(const prism__bvh_builder *b, size_t n)
{
    return b->threads > 1 && n >= PRISM__BVH_PAR_MIN && n * (size_t)b->threads >= b->n;
}

static int chunk_count(const prism__bvh_builder *b, size_t n)
{
    int k = 4 * b->threads;
    return k > 64 ? 64 : (size_t)k > n ? 1 : k;
}

/* Bin with one task per chunk, each into bins on its own stack, merged
 * under a lock (min, max and integer sums: the merge order changes
 * nothing). No allocation in the parallel part of the build: a malloc of
 * the chunks' bins (1.7 MB at 64 chunks) was an mmap and a munmap per
 * node. */
static void bins_fill_parallel(binning *bn, const mapping *m, const prism__bvh_ref *refs, size_t n,
                               size_t step, const prism__bvh_builder *b)
{
    const int k = chunk_count(b, n);
    omp_lock_t lock;
    omp_init_lock(&lock);
    for (int c = 0; c < k; c++) {
#pragma omp task firstprivate(c) shared(lock)
        {
            binning part; /* ~27 KB of the task's stack */
            const size_t lo = n * c / k, hi = n * (c + 1) / k;
            bins_clear(&part, m->bins);
            bins_fill(&part, m, refs + lo, hi - lo, step);
            omp_set_lock(&lock);
            bins_merge(bn, &part, m->bins);
            omp_unset_lock(&lock);
        }
    }
#pragma omp taskwait
    omp_destroy_lock(&lock);
}

/* Bins for a node of n references: the quality's count, fewer for small
 * nodes, whose few references leave most of many bins empty. */
static int bins_for(const prism__bvh_builder *b, size_t n)
{
    size_t want = n < 8 ? 8 : n;
    return want < b->bins ? (int)want : (int)b->bins;
}

static int widest_axis(const box3 *cb)
{
    int axis = 0;
    for (int a = 1; a < 3; a++)
        if (cb->hi[a] - cb->lo[a] > cb->hi[axis] - cb->lo[axis])
            axis = a;
    return axis;
}

/* Nodes this large bin a sample, the references whose triangle id is a
 * multiple of SAMPLE_STEP (a power of two): a quarter of them places the
 * split about as well, and the sample does not depend on the order the
 * references are in, so neither does the tree. Their child boxes are then
 * computed by the partition. */
#define SAMPLE_MIN ((size_t)1 << 17)
#define SAMPLE_STEP 4

static int find_split(const prism__bvh_builder *b, size_t begin, size_t end, const box3 *cb,
                      split *s)
{
    mapping m;
    binning bn; /* ~27 KB of stack in this frame only, popped before recursing */
    const size_t n = end - begin, step = n >= SAMPLE_MIN && b->sample ? SAMPLE_STEP : 1;
    make_mapping(&m, cb, bins_for(b, n));
    bins_clear(&bn, m.bins);
    if (par_node(b, n)) {
        bins_fill_parallel(&bn, &m, b->refs + begin, n, step, b);
    } else if (step > 1) {
        bins_fill(&bn, &m, b->refs + begin, n, step);
#ifdef PRISM__BVH_SSE
    } else if (n >= 256) {
        binning other;
        bins_clear(&other, m.bins);
        bins_fill2(&bn, &m, b->refs + begin, n, &other);
        bins_merge(&bn, &other, m.bins);
#endif
    } else {
        bins_fill(&bn, &m, b->refs + begin, n, 1);
    }
    const int ok = sweep(&bn, &m, s);
    s->sampled = step > 1;
    s->nl *= step; /* an estimate, for the depth guard */
    return ok;
}

/* ---- partitions -------------------------------------------------------- */

/* Hoare partition by the split's bin; grows the children's centroid boxes
 * and, for a split found on a sample, their boxes (s->l, s->r). */
static size_t partition(prism__bvh_ref *r, size_t begin, size_t end, const mapping *m, split *s,
                        box3 *lc, box3 *rc)
{
    size_t i = begin, j = end;
    const int boxes = s->sampled;
    if (boxes) {
        box_empty(&s->l);
        box_empty(&s->r);
    }
    for (;;) {
        for (; i < j && bin_of(m, &r[i], s->axis) < s->pos; i++) {
            box_grow_centroid(lc, &r[i]);
            if (boxes)
                box_grow(&s->l, r[i].lo, r[i].hi);
        }
        for (; i < j && bin_of(m, &r[j - 1], s->axis) >= s->pos; j--) {
            box_grow_centroid(rc, &r[j - 1]);
            if (boxes)
                box_grow(&s->r, r[j - 1].lo, r[j - 1].hi);
        }
        if (i >= j)
            return i;
        prism__bvh_ref t = r[i];
        r[i] = r[j - 1];
        r[j - 1] = t;
    }
}

/* The references [at, at + len) of a run of intervals, as (interval,
 * offset) of position `at` in their concatenation. */
typedef struct span {
    size_t lo, len;
} span;

static void span_seek(const span *v, size_t at, int *i, size_t *off)
{
    int k = 0;
    while (at >= v[k].len) {
        at -= v[k].len;
        k++;
    }
    *i = k;
    *off = at;
}

/* Swap positions [from, to) of the concatenation of `a` with the same ones
 * of `b`. */
static void swap_spans(prism__bvh_ref *r, const span *a, const span *b, size_t from, size_t to)
{
    int ia, ib;
    size_t oa, ob;
    span_seek(a, from, &ia, &oa);
    span_seek(b, from, &ib, &ob);
    for (size_t left = to - from; left > 0;) {
        size_t run = a[ia].len - oa;
        run = b[ib].len - ob < run ? b[ib].len - ob : run;
        run = left < run ? left : run;
        prism__bvh_ref *x = r + a[ia].lo + oa, *y = r + b[ib].lo + ob;
        for (size_t i = 0; i < run; i++) {
            prism__bvh_ref t = x[i];
            x[i] = y[i];
            y[i] = t;
        }
        left -= run;
        if ((oa += run) == a[ia].len) {
            ia++;
            oa = 0;
        }
        if ((ob += run) == b[ib].len) {
            ib++;
            ob = 0;
        }
    }
}

/* In place with all threads, as Embree partitions large nodes: each chunk
 * partitions itself (one read of every reference, writes only where it
 * swaps), then the right-side references left of the node's boundary trade
 * places with the left-side ones right of it. The partition it replaces
 * counted, scattered into a scratch array and copied back: five passes over
 * the node, each reference moved twice, which made parallel nodes slower
 * than none at all; this one makes them pay. The
 * order inside each side depends on the chunks, so on the thread count;
 * nothing downstream depends on it. */
static size_t partition_parallel(prism__bvh_builder *b, size_t begin, size_t end, const mapping *m,
                                 split *s, box3 *lc, box3 *rc)
{
    const size_t n = end - begin;
    const int k = chunk_count(b, n);
    size_t mid[64];
    box3 cl[64], cr[64];
    split part[64];
    prism__bvh_ref *r = b->refs + begin;
    for (int c = 0; c < k; c++) {
#pragma omp task firstprivate(c) shared(mid, cl, cr, part)
        {
            part[c] = *s;
            box_empty(&cl[c]);
            box_empty(&cr[c]);
            mid[c] = partition(r, n * c / k, n * (c + 1) / k, m, &part[c], &cl[c], &cr[c]);
        }
    }
#pragma omp taskwait
    size_t nl = 0;
    for (int c = 0; c < k; c++)
        nl += mid[c] - n * c / k;
    /* a: right-side runs inside [0, nl); bl: left-side runs inside [nl, n) */
    span a[64], bl[64];
    int na = 0, nb = 0;
    size_t w = 0;
    for (int c = 0; c < k; c++) {
        size_t lo = n * c / k, hi = n * (c + 1) / k;
        if (mid[c] < nl && mid[c] < hi) {
            size_t e = hi < nl ? hi : nl;
            a[na++] = (span){mid[c], e - mid[c]};
            w += e - mid[c];
        }
        if (mid[c] > nl && lo < mid[c]) {
            size_t f = lo > nl ? lo : nl;
            bl[nb++] = (span){f, mid[c] - f};
        }
    }
    const int t = w == 0 ? 0 : w >= 8192 ? k : 1;
    for (int c = 0; c < t; c++) {
#pragma omp task firstprivate(c) shared(a, bl) if (t > 1)
        swap_spans(r, a, bl, w * c / t, w * (c + 1) / t);
    }
    if (s->sampled) {
        box_empty(&s->l);
        box_empty(&s->r);
    }
    for (int c = 0; c < k; c++) {
        box_grow(lc, cl[c].lo, cl[c].hi);
        box_grow(rc, cr[c].lo, cr[c].hi);
        if (s->sampled) {
            box_grow(&s->l, part[c].l.lo, part[c].l.hi);
            box_grow(&s->r, part[c].r.lo, part[c].r.hi);
        }
    }
#pragma omp taskwait
    return begin + nl;
}

/* Centroid order on axis a, ties broken by triangle id: a total order, so
 * the median split takes the same references to each side whatever order
 * they arrive in (which depends on the thread count). */
static inline int centroid_less(const prism__bvh_ref *x, const prism__bvh_ref *y, int a)
{
    const float kx = x->lo[a] + x->hi[a], ky = y->lo[a] + y->hi[a];
    return kx < ky || (kx == ky && x->id < y->id);
}

/* Put the k-th smallest reference (centroid_less on axis a) at r[k],
 * smaller ones before. */
static void select_nth(prism__bvh_ref *r, size_t n, size_t k, int a)
{
    size_t lo = 0, hi = n - 1;
    while (lo < hi) {
        const prism__bvh_ref pivot = r[lo + (hi - lo) / 2];
        size_t i = lo, j = hi;
        while (i <= j) {
            while (centroid_less(&r[i], &pivot, a))
                i++;
            while (centroid_less(&pivot, &r[j], a))
                j--;
            if (i <= j) {
                prism__bvh_ref t = r[i];
                r[i] = r[j];
                r[j] = t;
                i++;
                if (j == 0)
                    break;
                j--;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            return;
    }
}

/* Split at the object median of the widest centroid axis: half each side,
 * whatever the cost. Used by the depth guard and where no bin splits. */
static size_t median_split(prism__bvh_builder *b, size_t begin, size_t end, const box3 *cb,
                           split *s, box3 *lc, box3 *rc)
{
    const int axis = widest_axis(cb);
    size_t n = end - begin, mid = n / 2;
    select_nth(b->refs + begin, n, mid, axis);
    box_empty(&s->l);
    box_empty(&s->r);
    for (size_t i = 0; i < n; i++) {
        const prism__bvh_ref *r = &b->refs[begin + i];
        box_grow(i < mid ? &s->l : &s->r, r->lo, r->hi);
        box_grow_centroid(i < mid ? lc : rc, r);
    }
    return begin + mid;
}

/* ---- small nodes: every partition ---------------------------------------- */

/* Nodes this small try every partition into two sides instead of binning:
 * cheaper than clearing and sweeping bins, and exact. */
#define SMALL_MAX 4
#define SMALL_SPLIT 3

/* Insertion sort by triangle id, for a few references. */
static void sort_by_id(prism__bvh_ref *r, size_t n)
{
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && r[j].id < r[j - 1].id; j--) {
            prism__bvh_ref t = r[j];
            r[j] = r[j - 1];
            r[j - 1] = t;
        }
}

static int small_split(const prism__bvh_builder *b, size_t begin, size_t end, split *s)
{
    prism__bvh_ref *r = b->refs + begin;
    const unsigned n = (unsigned)(end - begin);
    /* Order by id first: partitions of equal cost are then chosen the same
     * way whatever order the references arrived in (the tree does not
     * depend on the thread count), and the leaves list their triangles in
     * one order. Larger leaves are sorted too (build_node). */
    sort_by_id(r, n);
    s->cost = DBL_MAX;
    s->axis = -1;
    s->sampled = 0;
    /* the last reference always goes right: each partition is tried once */
    for (unsigned mask = 1; mask < (1u << (n - 1)); mask++) {
        box3 l, rt;
        box_empty(&l);
        box_empty(&rt);
        unsigned nl = 0;
        for (unsigned i = 0; i < n; i++) {
            box_grow(mask >> i & 1 ? &l : &rt, r[i].lo, r[i].hi);
            nl += mask >> i & 1;
        }
        double cost = (double)area3(&l) * nl + (double)area3(&rt) * (n - nl);
        if (cost < s->cost) {
            s->cost = cost;
            s->axis = SMALL_SPLIT;
            s->mask = mask;
            s->l = l;
            s->r = rt;
            s->nl = nl;
        }
    }
    return s->axis == SMALL_SPLIT;
}

static size_t small_partition(prism__bvh_builder *b, size_t begin, size_t end, const split *s,
                              box3 *lc, box3 *rc)
{
    prism__bvh_ref tmp[SMALL_MAX];
    const size_t n = end - begin;
    memcpy(tmp, b->refs + begin, n * sizeof *tmp);
    size_t li = begin, ri = begin + s->nl;
    for (size_t i = 0; i < n; i++) {
        int left = s->mask >> i & 1;
        box_grow_centroid(left ? lc : rc, &tmp[i]);
        b->refs[left ? li++ : ri++] = tmp[i];
    }
    return begin + s->nl;
}

/* ---- the recursion ----------------------------------------------------- */

/* Levels a subtree of n references needs below its root when every split
 * halves it: ceil(log2(ceil(n / leaf))). */
static unsigned levels_needed(size_t n, unsigned leaf)
{
    unsigned d = 0;
    for (size_t m = (n + leaf - 1) / leaf; m > 1; m = (m + 1) / 2)
        d++;
    return d;
}

/* Whether a progress callback cancelled the build: every node still to
 * build then becomes a leaf, and prism_bvh_build discards the tree. */
static int is_cancelled(prism__bvh_builder *b)
{
    if (!b->progress)
        return 0;
    int c;
#pragma omp atomic read
    c = b->cancelled;
    return c;
}

/* Whether the node becomes a leaf; otherwise *s is the split to take and
 * *median tells whether the SAH split must be replaced by a median split. */
static int choose(prism__bvh_builder *b, size_t begin, size_t end, const box3 *bounds,
                  const box3 *cb, unsigned depth, split *s, int *median)
{
    size_t n = end - begin;
    if (n <= 1 || depth >= PRISM_BVH_MAX_DEPTH || is_cancelled(b))
        return 1;
    int ok = n <= SMALL_MAX ? small_split(b, begin, end, s) : find_split(b, begin, end, cb, s);
    if (n <= b->leaf) {
        double area = prism__bvh_area(bounds->lo, bounds->hi);
        double cost = ok && area > 0.0 ? PRISM_BVH_SAH_TRAV + PRISM_BVH_SAH_ISECT * s->cost / area
                                       : PRISM_BVH_SAH_TRAV + PRISM_BVH_SAH_ISECT * (double)n;
        if (!ok || PRISM_BVH_SAH_ISECT * (double)n <= cost)
            return 1;
    }
    size_t big = ok ? (s->nl > n - s->nl ? s->nl : n - s->nl) : n;
    *median = !ok || depth + 1 + levels_needed(big, b->leaf) > PRISM_BVH_MAX_DEPTH;
    return 0;
}

/* A pair of node slots from the calling thread's block; a block of
 * PRISM__BVH_NODE_BLOCK slots from the shared counter when it runs out, so
 * threads rarely touch the counter and never share a cache line of nodes. */
static size_t alloc_pair(prism__bvh_builder *b)
{
    prism__bvh_block *blk = &b->blocks[omp_get_thread_num()];
    if (blk->next == blk->end) {
        size_t base;
#pragma omp atomic capture
        {
            base = b->node_next;
            b->node_next += PRISM__BVH_NODE_BLOCK;
        }
        blk->next = base;
        blk->end = base + PRISM__BVH_NODE_BLOCK;
    }
    size_t first = blk->next;
    blk->next += 2;
    return first;
}

/* ---- progress ------------------------------------------------------------ */

/* Thread 0 (the caller: the master of the build's team) reports the
 * count when it has grown by a step since the last report; below total
 * only, the final call is prism_bvh_build's. */
static void report(prism__bvh_builder *b)
{
    size_t done;
#pragma omp atomic read
    done = b->placed;
    /* b->cancelled is written by this thread only: no call after a false */
    if (b->cancelled || done < b->next_report || done >= b->n)
        return;
    b->next_report = done + b->report_step;
    if (!b->progress(b->progress_user, done, b->n)) {
#pragma omp atomic write
        b->cancelled = 1;
    }
}

/* A leaf of `count` triangles: counted in the thread's block, added to the
 * shared count a step at a time (so the shared line is written ~100 times
 * per thread per build, not once per leaf). */
static void count_placed(prism__bvh_builder *b, size_t count)
{
    const int tid = omp_get_thread_num();
    prism__bvh_block *blk = &b->blocks[tid];
    blk->placed += count;
    if (blk->placed >= b->report_step) {
#pragma omp atomic
        b->placed += blk->placed;
        blk->placed = 0;
    }
    if (tid == 0)
        report(b);
}

/* A leaf's triangles and ids into the output, in id order (the order the
 * references arrived in depends on the thread count; most leaves are
 * sorted already, see small_split). Nothing for a cancelled build, whose
 * output is discarded. */
static void emit_leaf(prism__bvh_builder *b, size_t begin, size_t end)
{
    if (is_cancelled(b))
        return;
    const prism__bvh_ref *r = b->refs + begin;
    sort_by_id(b->refs + begin, end - begin);
    for (size_t i = begin; i < end; i++, r++) {
        const uint32_t *t = b->indices + 3 * (size_t)r->id;
        b->out_ids[i] = r->id;
        b->out_triangles[3 * i] = t[0];
        b->out_triangles[3 * i + 1] = t[1];
        b->out_triangles[3 * i + 2] = t[2];
    }
}

static void build_node(prism__bvh_builder *b, size_t idx, size_t begin, size_t end, box3 bounds,
                       box3 cb, unsigned depth)
{
    prism_bvh_node *node = &b->nodes[idx];
    memcpy(node->lo, bounds.lo, sizeof node->lo);
    memcpy(node->hi, bounds.hi, sizeof node->hi);
    split s;
    int median = 0;
    if (choose(b, begin, end, &bounds, &cb, depth, &s, &median)) {
        emit_leaf(b, begin, end);
        node->first = (uint32_t)begin;
        node->count = (uint32_t)(end - begin);
        if (b->progress)
            count_placed(b, end - begin);
        return;
    }
    box3 lc, rc;
    box_empty(&lc);
    box_empty(&rc);
    size_t mid;
    if (median) {
        mid = median_split(b, begin, end, &cb, &s, &lc, &rc);
    } else if (s.axis == SMALL_SPLIT) {
        mid = small_partition(b, begin, end, &s, &lc, &rc);
    } else {
        mapping m;
        make_mapping(&m, &cb, bins_for(b, end - begin));
        mid = par_node(b, end - begin) ? partition_parallel(b, begin, end, &m, &s, &lc, &rc)
                                       : partition(b->refs, begin, end, &m, &s, &lc, &rc);
    }
    const size_t left = alloc_pair(b), right = left + 1;
    node->first = (uint32_t)left;
    node->count = 0;
    if (end - begin >= PRISM__BVH_TASK_MIN) {
#pragma omp task
        build_node(b, left, begin, mid, s.l, lc, depth + 1);
    } else {
        build_node(b, left, begin, mid, s.l, lc, depth + 1);
    }
    build_node(b, right, mid, end, s.r, rc, depth + 1);
}

/* References and root boxes, in parallel. */
static void make_refs(prism__bvh_builder *b, const float *positions, const uint32_t *indices,
                      box3 *bounds, box3 *cb)
{
    box_empty(bounds);
    box_empty(cb);
    const long n = (long)b->n;
#pragma omp parallel num_threads(b->threads)
    {
        box3 tb, tc;
        box_empty(&tb);
        box_empty(&tc);
#pragma omp for schedule(static)
        for (long t = 0; t < n; t++) {
            prism__bvh_ref *r = &b->refs[t];
            const float *v0 = positions + 3 * (size_t)indices[3 * t];
            box3 x = {{v0[0], v0[1], v0[2]}, {v0[0], v0[1], v0[2]}};
            for (int k = 1; k < 3; k++) {
                const float *v = positions + 3 * (size_t)indices[3 * t + k];
                box_grow(&x, v, v);
            }
            memcpy(r->lo, x.lo, sizeof r->lo);
            memcpy(r->hi, x.hi, sizeof r->hi);
            r->id = (uint32_t)t;
            r->pad = 0;
            box_grow(&tb, x.lo, x.hi);
            box_grow_centroid(&tc, r);
        }
#pragma omp critical(prism_bvh_root)
        {
            box_grow(bounds, tb.lo, tb.hi);
            box_grow(cb, tc.lo, tc.hi);
        }
    }
}

void prism__bvh_build_nodes(prism__bvh_builder *b, const float *positions, const uint32_t *indices)
{
    box3 bounds, cb;
    b->indices = indices;
    make_refs(b, positions, indices, &bounds, &cb);
    b->node_next = 1;
    if (b->n == 0) {
        memcpy(b->nodes[0].lo, bounds.lo, sizeof bounds.lo);
        memcpy(b->nodes[0].hi, bounds.hi, sizeof bounds.hi);
        b->nodes[0].first = 0;
        b->nodes[0].count = 0;
        return;
    }
#pragma omp parallel num_threads(b->threads)
#pragma omp single
    build_node(b, 0, 0, b->n, bounds, cb, 0);
}
