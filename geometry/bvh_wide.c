/* The collapse of a binary BVH into the wide layout (bvh_wide.h), on the
 * host: after the host build, and for the tests as the reference of the
 * device's collapse. One pass over a breadth-first queue: node i is built
 * from queue entry i, and appends its inner children to the queue, so
 * children come after their parent and siblings are consecutive. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "bvh_internal.h"

enum { ITEM_EMPTY, ITEM_INNER, ITEM_LEAF, ITEM_RANGE };

/* A child of a wide node before it has a slot: a binary inner node, a
 * piece of at most 4 triangles, or a run of more (a binary leaf too big for
 * one slot, under that leaf's box). */
typedef struct item {
    uint32_t kind;
    uint32_t ref;   /* INNER: binary node; LEAF, RANGE: first triangle */
    uint32_t count; /* LEAF, RANGE: triangles */
    uint32_t depth; /* of the wide node this item becomes (INNER, RANGE) */
    float lo[3], hi[3];
} item;

static item item_of(const prism_bvh *b, uint32_t node, uint32_t depth)
{
    const prism_bvh_node *n = &b->nodes[node];
    item it = {ITEM_INNER, node, 0, depth, {n->lo[0], n->lo[1], n->lo[2]},
               {n->hi[0], n->hi[1], n->hi[2]}};
    if (n->count == 0 && n->first == 0)
        it.kind = ITEM_EMPTY; /* the empty BVH's root */
    else if (n->count > 0) {
        it.kind = n->count <= PRISM_WIDE_LEAF_MAX ? ITEM_LEAF : ITEM_RANGE;
        it.ref = n->first;
        it.count = n->count;
    }
    return it;
}

static float half_area(const item *it)
{
    const float x = it->hi[0] - it->lo[0], y = it->hi[1] - it->lo[1], z = it->hi[2] - it->lo[2];
    return x * y + y * z + z * x;
}

/* Cut a run into pieces of `size` triangles (the last one shorter), each a
 * leaf if it fits one slot; written at list[at] and appended. */
static int cut_range(item *list, int n, int at, uint32_t size)
{
    const item r = list[at];
    for (uint32_t first = r.ref, k = 0; first < r.ref + r.count; first += size, k++) {
        item piece = r;
        piece.ref = first;
        piece.count = r.ref + r.count - first < size ? r.ref + r.count - first : size;
        piece.kind = piece.count <= PRISM_WIDE_LEAF_MAX ? ITEM_LEAF : ITEM_RANGE;
        list[k == 0 ? at : n++] = piece;
    }
    return n;
}

/* The children of the wide node made from `start`: opened greedily, the
 * inner item of largest area first, until there are 8 or nothing opens. */
static int open_items(const prism_bvh *b, const item *start, item list[8])
{
    if (start->kind == ITEM_EMPTY)
        return 0;
    int n = 1;
    list[0] = *start;
    for (;;) {
        int best = -1;
        float best_area = -1.0f;
        for (int i = 0; i < n && n < 8; i++)
            if (list[i].kind == ITEM_INNER && half_area(&list[i]) > best_area) {
                best = i;
                best_area = half_area(&list[i]);
            }
        if (best >= 0) {
            const uint32_t c = b->nodes[list[best].ref].first;
            if (c == 0 || (size_t)c + 1 >= b->node_count)
                return -1; /* a given tree's child outside its array */
            const uint32_t depth = list[best].depth;
            list[best] = item_of(b, c, depth);
            list[n++] = item_of(b, c + 1, depth);
            continue;
        }
        bool opened = false;
        for (int i = 0; i < n; i++) {
            const uint32_t pieces = (list[i].count + PRISM_WIDE_LEAF_MAX - 1) / PRISM_WIDE_LEAF_MAX;
            if (list[i].kind == ITEM_RANGE && n - 1 + (int)pieces <= 8) {
                n = cut_range(list, n, i, PRISM_WIDE_LEAF_MAX);
                opened = true;
            }
        }
        if (!opened && n == 1 && list[0].kind == ITEM_RANGE) { /* too long for one node */
            n = cut_range(list, n, 0, (list[0].count + 7) / 8);
            opened = true;
        }
        if (!opened)
            return n;
    }
}

/* Slot of each item: the item whose centre lies furthest towards octant s
 * (sign bits of s) goes to slot s, greedily, best pair first. */
static void assign_slots(const item *list, int n, const float lo[3], const float hi[3], int slot[8])
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
    bool taken[8] = {false};
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
        taken[bs] = true;
    }
}

/* The smallest exponent byte whose grid of 255 steps from lo reaches hi. */
static uint32_t exponent_for(float lo, float hi)
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
static void quantise(float p, uint32_t e, float clo, float chi, uint8_t *qlo, uint8_t *qhi)
{
    const double s = (double)prism__wide_scale(e);
    double fl = floor(((double)clo - p) / s), fh = ceil(((double)chi - p) / s);
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

typedef struct collapse {
    const prism_bvh *b;
    prism_bvh_wide *w;
    item *queue; /* queue[i] becomes node i */
    size_t queued, cap;
    size_t triangles; /* wide triangles written so far */
} collapse;

static bool enqueue(collapse *c, const item *it)
{
    if (c->queued == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 1024;
        item *q = realloc(c->queue, cap * sizeof *q);
        if (!q)
            return false;
        c->queue = q;
        c->cap = cap;
    }
    c->queue[c->queued++] = *it;
    return true;
}

static void copy_triangle(const prism_bvh *b, uint32_t i, prism_wide_triangle *t)
{
    const uint32_t *v = b->triangles + 3u * (size_t)i;
    memset(t, 0, sizeof *t);
    memcpy(t->a, b->vertices + 3u * (size_t)v[0], sizeof t->a);
    memcpy(t->b, b->vertices + 3u * (size_t)v[1], sizeof t->b);
    memcpy(t->c, b->vertices + 3u * (size_t)v[2], sizeof t->c);
    t->index = i;
}

/* Node `at` from its queue entry. */
static prism_result make_node(collapse *c, size_t at)
{
    const item start = c->queue[at];
    item list[8];
    const int n = open_items(c->b, &start, list);
    if (n < 0)
        return PRISM_ERROR_INVALID_ARGUMENT;
    prism_wide_node *w = &c->w->nodes[at];
    memset(w, 0, sizeof *w);
    float lo[3] = {start.lo[0], start.lo[1], start.lo[2]};
    float hi[3] = {start.hi[0], start.hi[1], start.hi[2]};
    for (int i = 0; i < n; i++) /* the start box holds them; this also covers a given tree's slack */
        for (int k = 0; k < 3; k++) {
            lo[k] = list[i].lo[k] < lo[k] ? list[i].lo[k] : lo[k];
            hi[k] = list[i].hi[k] > hi[k] ? list[i].hi[k] : hi[k];
        }
    int slot[8];
    assign_slots(list, n, lo, hi, slot);
    int by_slot[8];
    for (int s = 0; s < 8; s++)
        by_slot[s] = -1;
    for (int i = 0; i < n; i++)
        by_slot[slot[i]] = i;
    uint32_t e[3];
    for (int k = 0; k < 3; k++) {
        e[k] = n ? exponent_for(lo[k], hi[k]) : 127;
        w->p[k] = n ? lo[k] : 0.0f;
        w->e[k] = (uint8_t)e[k];
    }
    if (c->queued > UINT32_MAX || c->triangles > UINT32_MAX)
        return PRISM_ERROR_LIMIT;
    w->child_base = (uint32_t)c->queued;
    w->tri_base = (uint32_t)c->triangles;
    uint32_t rank = 0, off = 0;
    for (int s = 0; s < 8; s++) {
        const int i = by_slot[s];
        if (i < 0)
            continue;
        item it = list[i];
        for (int k = 0; k < 3; k++)
            quantise(w->p[k], e[k], it.lo[k], it.hi[k], &w->qlo[k][s], &w->qhi[k][s]);
        if (it.kind != ITEM_INNER &&
            ((size_t)it.ref + it.count > c->b->triangle_count ||
             c->triangles + (it.kind == ITEM_LEAF ? it.count : 0) > c->b->triangle_count))
            return PRISM_ERROR_INVALID_ARGUMENT; /* leaves do not cover the triangles once */
        if (it.kind == ITEM_LEAF) {
            w->meta[s] = (uint8_t)(it.count << 5 | off);
            for (uint32_t j = 0; j < it.count; j++)
                copy_triangle(c->b, it.ref + j, &c->w->triangles[c->triangles++]);
            off += it.count;
            continue;
        }
        w->imask |= (uint8_t)(1u << s);
        w->meta[s] = (uint8_t)(1 + rank++);
        it.depth = start.depth + 1;
        if (it.depth > PRISM_WIDE_MAX_DEPTH)
            return PRISM_ERROR_LIMIT;
        if (c->w->depth < it.depth)
            c->w->depth = it.depth;
        if (!enqueue(c, &it))
            return PRISM_ERROR_OUT_OF_MEMORY;
    }
    return PRISM_SUCCESS;
}

prism_result prism__bvh_collapse(const prism_bvh *bvh, prism_bvh_wide **out)
{
    if (!out)
        return PRISM_ERROR_INVALID_ARGUMENT;
    *out = NULL;
    if (!bvh || !bvh->nodes || bvh->node_count == 0 ||
        (bvh->triangle_count && (!bvh->triangles || !bvh->vertices)))
        return PRISM_ERROR_INVALID_ARGUMENT;
    prism_bvh_wide *w = calloc(1, sizeof *w);
    collapse c = {bvh, w, NULL, 0, 0, 0};
    prism_result r = w ? PRISM_SUCCESS : PRISM_ERROR_OUT_OF_MEMORY;
    if (r == PRISM_SUCCESS) {
        w->triangle_count = bvh->triangle_count;
        w->triangles = malloc((bvh->triangle_count ? bvh->triangle_count : 1) * sizeof *w->triangles);
        const item root = item_of(bvh, 0, 0);
        if (!w->triangles || !enqueue(&c, &root))
            r = PRISM_ERROR_OUT_OF_MEMORY;
    }
    size_t cap = 0;
    for (size_t i = 0; r == PRISM_SUCCESS && i < c.queued; i++) {
        if (i == cap) { /* nodes grow with the queue */
            cap = c.cap;
            prism_wide_node *nodes = realloc(w->nodes, cap * sizeof *nodes);
            if (!nodes) {
                r = PRISM_ERROR_OUT_OF_MEMORY;
                break;
            }
            w->nodes = nodes;
        }
        r = make_node(&c, i);
        w->node_count = i + 1;
    }
    free(c.queue);
    if (r == PRISM_SUCCESS && c.triangles != bvh->triangle_count)
        r = PRISM_ERROR_INVALID_ARGUMENT; /* leaves do not cover the triangles once */
    if (r != PRISM_SUCCESS) {
        prism__bvh_wide_free(w);
        return r;
    }
    *out = w;
    return PRISM_SUCCESS;
}

void prism__bvh_wide_free(prism_bvh_wide *w)
{
    if (!w)
        return;
    free(w->nodes);
    free(w->triangles);
    free(w);
}
