/* One node of the collapse of a binary BVH into the wide layout
 * (prism/device/bvh_wide.h), shared by the host collapse (geometry/bvh/wide.c, one pass over a
 * breadth-first queue) and the device's (engine/cuda/bvh/wide.cu, level by
 * level), so that both write the same bytes from the same tree: the same
 * children opened, the same slots, the same quantised planes. The device
 * compiles this without contraction or flushing (engine/CMakeLists.txt),
 * so its float and double arithmetic is the host's.
 *
 * Not a kernel header (it calls frexp, floor and ceil, which NVRTC has
 * not): named outside the bvh_wide* set that the device headers embed. */
#ifndef PRISM_BVH_COLLAPSE_H
#define PRISM_BVH_COLLAPSE_H

#include <math.h>
#include <stdint.h>

#include "prism/device/bvh_wide.h"

enum { PRISM__WIDE_EMPTY, PRISM__WIDE_INNER, PRISM__WIDE_LEAF, PRISM__WIDE_RANGE };

/* A child of a wide node before it has a slot: a binary inner node, a
 * piece of at most 4 triangles, or a run of more (a binary leaf too big
 * for one slot, under that leaf's box). INNER and RANGE items become wide
 * nodes, LEAF items leaf slots. */
typedef struct prism__wide_item {
    uint32_t kind;
    uint32_t ref;   /* INNER: binary node; LEAF, RANGE: first triangle */
    uint32_t count; /* LEAF, RANGE: triangles */
    uint32_t depth; /* of the wide node this item becomes (INNER, RANGE) */
    float lo[3], hi[3];
} prism__wide_item;

/* The binary nodes, split as the geometry view splits them (unsplit:
 * split == count). */
typedef struct prism__wide_source {
    const prism_bvh_node *head, *tail;
    uint32_t split, count;
} prism__wide_source;

PRISM_HD prism__wide_item prism__wide_item_of(const prism__wide_source *b, uint32_t i,
                                              uint32_t depth)
{
    const prism_bvh_node *n = i < b->split ? &b->head[i] : &b->tail[i - b->split];
    prism__wide_item it;
    it.kind = PRISM__WIDE_INNER;
    it.ref = i;
    it.count = 0;
    it.depth = depth;
    for (int k = 0; k < 3; k++) {
        it.lo[k] = n->lo[k];
        it.hi[k] = n->hi[k];
    }
    const uint32_t first = n->first, count = n->count;
    if (count == 0 && first == 0)
        it.kind = PRISM__WIDE_EMPTY; /* the empty BVH's root */
    else if (count > 0) {
        it.kind = count <= PRISM_WIDE_LEAF_MAX ? PRISM__WIDE_LEAF : PRISM__WIDE_RANGE;
        it.ref = first;
        it.count = count;
    }
    return it;
}

PRISM_HD uint32_t prism__wide_first_child(const prism__wide_source *b, uint32_t i)
{
    return i < b->split ? b->head[i].first : b->tail[i - b->split].first;
}

PRISM_HD float prism__wide_half_area(const prism__wide_item *it)
{
    const float x = it->hi[0] - it->lo[0], y = it->hi[1] - it->lo[1], z = it->hi[2] - it->lo[2];
    return x * y + y * z + z * x;
}

/* Cut a run into pieces of `size` triangles (the last one shorter), each a
 * leaf if it fits one slot; written at list[at] and appended. */
PRISM_HD int prism__wide_cut(prism__wide_item *list, int n, int at, uint32_t size)
{
    const prism__wide_item r = list[at];
    for (uint32_t first = r.ref, k = 0; first < r.ref + r.count; first += size, k++) {
        prism__wide_item piece = r;
        piece.ref = first;
        piece.count = r.ref + r.count - first < size ? r.ref + r.count - first : size;
        piece.kind = piece.count <= PRISM_WIDE_LEAF_MAX ? PRISM__WIDE_LEAF : PRISM__WIDE_RANGE;
        list[k == 0 ? at : n++] = piece;
    }
    return n;
}

/* The children of the wide node made from `start`: opened greedily, the
 * inner item of largest area first, until there are 8 or nothing opens.
 * -1: a child index outside the tree. */
PRISM_HD int prism__wide_open(const prism__wide_source *b, const prism__wide_item *start,
                              prism__wide_item list[8])
{
    if (start->kind == PRISM__WIDE_EMPTY)
        return 0;
    int n = 1;
    list[0] = *start;
    for (;;) {
        int best = -1;
        float best_area = -1.0f;
        for (int i = 0; i < n && n < 8; i++)
            if (list[i].kind == PRISM__WIDE_INNER && prism__wide_half_area(&list[i]) > best_area) {
                best = i;
                best_area = prism__wide_half_area(&list[i]);
            }
        if (best >= 0) {
            const uint32_t c = prism__wide_first_child(b, list[best].ref);
            if (c == 0 || c >= b->count - 1)
                return -1;
            const uint32_t depth = list[best].depth;
            list[best] = prism__wide_item_of(b, c, depth);
            list[n++] = prism__wide_item_of(b, c + 1, depth);
            continue;
        }
        int opened = 0;
        for (int i = 0; i < n; i++) {
            const uint32_t pieces = (list[i].count + PRISM_WIDE_LEAF_MAX - 1) / PRISM_WIDE_LEAF_MAX;
            if (list[i].kind == PRISM__WIDE_RANGE && n - 1 + (int)pieces <= 8) {
                n = prism__wide_cut(list, n, i, PRISM_WIDE_LEAF_MAX);
                opened = 1;
            }
        }
        if (!opened && n == 1 && list[0].kind == PRISM__WIDE_RANGE) { /* too long for one node */
            n = prism__wide_cut(list, n, 0, (list[0].count + 7) / 8);
            opened = 1;
        }
        if (!opened)
            return n;
    }
}

/* Slot of each item: the item whose centre lies furthest towards octant s
 * (sign bits of s) goes to slot s, greedily, best pair first. */
PRISM_HD void prism__wide_slots(const prism__wide_item *list, int n, const float lo[3],
                                const float hi[3], int by_slot[8])
{
    float score[8][8];
    for (int i = 0; i < n; i++)
        for (int s = 0; s < 8; s++) {
            float sum = 0.0f;
            for (int k = 0; k < 3; k++) {
                const float d = (list[i].lo[k] + list[i].hi[k]) - (lo[k] + hi[k]);
                sum += (s >> k & 1) ? d : -d;
            }
            score[i][s] = sum;
        }
    int slot[8], taken[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int i = 0; i < n; i++)
        slot[i] = -1;
    for (int round = 0; round < n; round++) {
        int bi = -1, bs = -1;
        for (int i = 0; i < n; i++)
            for (int s = 0; s < 8; s++)
                if (slot[i] < 0 && !taken[s] && (bi < 0 || score[i][s] > score[bi][bs])) {
                    bi = i;
                    bs = s;
                }
        slot[bi] = bs;
        taken[bs] = 1;
    }
    for (int s = 0; s < 8; s++)
        by_slot[s] = -1;
    for (int i = 0; i < n; i++)
        by_slot[slot[i]] = i;
}

/* The smallest exponent byte whose grid of 255 steps from lo reaches hi. */
PRISM_HD uint32_t prism__wide_exponent(float lo, float hi)
{
    const double extent = (double)hi - (double)lo;
    int e = 1;
    if (extent > 0) {
        int x;
        frexp(extent / 255.0, &x); /* extent/255 < 2^x */
        e = x - 1 + 127;
        e = e < 1 ? 1 : e > 254 ? 254 : e;
    }
    while (e < 254 && prism__wide_plane(lo, (uint32_t)e, 255) < hi)
        e++;
    return (uint32_t)e;
}

/* The bytes of [clo, chi] on an axis: the largest plane <= clo and the
 * smallest >= chi, as the traversal decodes them (monotone in q). */
PRISM_HD void prism__wide_quantise(float p, uint32_t e, float clo, float chi, uint8_t *qlo,
                                   uint8_t *qhi)
{
    const double s = (double)prism__wide_scale(e);
    const double fl = floor(((double)clo - p) / s), fh = ceil(((double)chi - p) / s);
    int l = fl < 0 ? 0 : fl > 255 ? 255 : (int)fl;
    int h = fh < 0 ? 0 : fh > 255 ? 255 : (int)fh;
    while (l > 0 && prism__wide_plane(p, e, (uint32_t)l) > clo)
        l--;
    while (l < 255 && prism__wide_plane(p, e, (uint32_t)l + 1) <= clo)
        l++;
    while (h < 255 && prism__wide_plane(p, e, (uint32_t)h) < chi)
        h++;
    while (h > 0 && prism__wide_plane(p, e, (uint32_t)h - 1) >= chi)
        h--;
    *qlo = (uint8_t)l;
    *qhi = (uint8_t)h;
}

/* Wide node *w made from `start`, its inner children from node child_base
 * on and its leaf triangles from tri_base on. The children are left in
 * list, list[by_slot[s]] in slot s (by_slot[s] < 0: empty slot): the
 * caller queues the inner ones (meta[s] - 1 is the rank) and copies the
 * leaves' triangles (at tri_base + (meta[s] & 31)). Returns the number of
 * children, or -1 for a child index outside the tree. */
PRISM_HD int prism__wide_node(const prism__wide_source *b, const prism__wide_item *start,
                              uint32_t child_base, uint32_t tri_base, prism_wide_node *w,
                              prism__wide_item list[8], int by_slot[8])
{
    const int n = prism__wide_open(b, start, list);
    if (n < 0)
        return -1;
    prism_wide_node z = {{0.0f, 0.0f, 0.0f}, {0, 0, 0}, 0, 0, 0, {0}, {{0}}, {{0}}};
    *w = z;
    float lo[3], hi[3];
    for (int k = 0; k < 3; k++) {
        lo[k] = start->lo[k];
        hi[k] = start->hi[k];
    }
    for (int i = 0; i < n;
         i++) /* the start box holds them; this also covers a given tree's slack */
        for (int k = 0; k < 3; k++) {
            lo[k] = list[i].lo[k] < lo[k] ? list[i].lo[k] : lo[k];
            hi[k] = list[i].hi[k] > hi[k] ? list[i].hi[k] : hi[k];
        }
    prism__wide_slots(list, n, lo, hi, by_slot);
    uint32_t e[3];
    for (int k = 0; k < 3; k++) {
        e[k] = n ? prism__wide_exponent(lo[k], hi[k]) : 127;
        w->p[k] = n ? lo[k] : 0.0f;
        w->e[k] = (uint8_t)e[k];
    }
    w->child_base = child_base;
    w->tri_base = tri_base;
    uint32_t rank = 0, off = 0;
    for (int s = 0; s < 8; s++) {
        const int i = by_slot[s];
        if (i < 0)
            continue;
        for (int k = 0; k < 3; k++)
            prism__wide_quantise(w->p[k], e[k], list[i].lo[k], list[i].hi[k], &w->qlo[k][s],
                                 &w->qhi[k][s]);
        if (list[i].kind == PRISM__WIDE_LEAF) {
            w->meta[s] = (uint8_t)(list[i].count << 5 | off);
            off += list[i].count;
        } else {
            w->imask = (uint8_t)(w->imask | 1u << s);
            w->meta[s] = (uint8_t)(1 + rank++);
        }
    }
    return n;
}

#endif
