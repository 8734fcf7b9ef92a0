/* Ear clipping with hole bridging (see geometry/collada/triangulate.h). The polygon
 * is projected on the plane of its dominant Newell normal axis, with the two
 * remaining axes ordered so the outer ring turns counter-clockwise; ears are
 * then triangles with positive area holding no other vertex. When no ear is
 * found (self-intersecting input) a vertex is clipped anyway, so the loop
 * always ends. Work is O(n^2) per polygon, fine for the polygons exporters
 * write (tens of vertices); nothing here allocates per polygon once warm. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "triangulate.h"

#define RING_SIZE 0x7fffffffu /* the loader flags holes in the top bit */

typedef struct tnode {
    double x, y;
    uint32_t v, prev, next;
} tnode;

void prism__tri_scratch_free(prism__tri_scratch *s)
{
    free(s->nodes);
    free(s->holes);
    memset(s, 0, sizeof *s);
}

static double area2(const tnode *a, const tnode *b, const tnode *c)
{
    return (b->x - a->x) * (c->y - a->y) - (b->y - a->y) * (c->x - a->x);
}

static bool same_xy(const tnode *a, const tnode *b)
{
    return a->x == b->x && a->y == b->y;
}

/* Build ring r as a circular list of nodes n[first..]; drops repeated
 * vertices. Returns the head, or UINT32_MAX when fewer than 3 remain. */
static uint32_t make_ring(tnode *n, uint32_t *used, const float *pos, const uint32_t *idx,
                          uint32_t size, int u, int v, uint32_t *count)
{
    uint32_t first = *used, k = 0;
    for (uint32_t i = 0; i < size; i++) {
        tnode t = {pos[3 * (size_t)idx[i] + u], pos[3 * (size_t)idx[i] + v], idx[i], 0, 0};
        if (k && (t.v == n[first + k - 1].v || same_xy(&t, &n[first + k - 1])))
            continue;
        n[first + k++] = t;
    }
    while (k > 1 && (n[first].v == n[first + k - 1].v || same_xy(&n[first], &n[first + k - 1])))
        k--;
    *count = k;
    if (k < 3)
        return UINT32_MAX;
    for (uint32_t i = 0; i < k; i++) {
        n[first + i].prev = first + (i + k - 1) % k;
        n[first + i].next = first + (i + 1) % k;
    }
    *used += k;
    return first;
}

static double ring_area(const tnode *n, uint32_t head)
{
    double a = 0;
    uint32_t i = head;
    do {
        const tnode *p = &n[i], *q = &n[p->next];
        a += p->x * q->y - q->x * p->y;
        i = p->next;
    } while (i != head);
    return a;
}

static void reverse_ring(tnode *n, uint32_t head)
{
    uint32_t i = head;
    do {
        uint32_t t = n[i].next;
        n[i].next = n[i].prev;
        n[i].prev = t;
        i = t;
    } while (i != head);
}

static bool in_triangle(const tnode *a, const tnode *b, const tnode *c, const tnode *p)
{
    return area2(a, b, p) >= 0 && area2(b, c, p) >= 0 && area2(c, a, p) >= 0;
}

static bool is_ear(const tnode *n, uint32_t i)
{
    const tnode *a = &n[n[i].prev], *b = &n[i], *c = &n[n[i].next];
    if (area2(a, b, c) <= 0)
        return false;
    for (uint32_t j = n[c - n].next; j != n[i].prev; j = n[j].next) {
        const tnode *p = &n[j];
        if (same_xy(p, a) || same_xy(p, b) || same_xy(p, c))
            continue;
        if (in_triangle(a, b, c, p))
            return false;
    }
    return true;
}

/* Segments pq and rs cross at a point inside both (touching does not count). */
static bool crosses(const tnode *p, const tnode *q, const tnode *r, const tnode *s)
{
    double d1 = area2(p, q, r), d2 = area2(p, q, s), d3 = area2(r, s, p), d4 = area2(r, s, q);
    return ((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) && ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0));
}

static bool ring_blocks(const tnode *n, uint32_t head, const tnode *h, const tnode *m)
{
    uint32_t i = head;
    do {
        const tnode *a = &n[i], *b = &n[a->next];
        if (crosses(h, m, a, b))
            return true;
        i = a->next;
    } while (i != head);
    return false;
}

/* Join hole `hh` to the outer list at the nearest vertex it can see. */
static void bridge(tnode *n, uint32_t *used, uint32_t outer, uint32_t hh, const uint32_t *holes,
                   size_t nholes)
{
    uint32_t h = hh;
    for (uint32_t i = n[hh].next; i != hh; i = n[i].next)
        if (n[i].x > n[h].x)
            h = i;
    uint32_t best = UINT32_MAX, any = outer;
    double best_d = INFINITY, any_d = INFINITY;
    uint32_t i = outer;
    do {
        double dx = n[i].x - n[h].x, dy = n[i].y - n[h].y, d = dx * dx + dy * dy;
        if (d < any_d) {
            any_d = d;
            any = i;
        }
        if (d < best_d && !ring_blocks(n, outer, &n[h], &n[i])) {
            bool blocked = false;
            for (size_t k = 0; k < nholes && !blocked; k++)
                blocked = ring_blocks(n, holes[k], &n[h], &n[i]);
            if (!blocked) {
                best_d = d;
                best = i;
            }
        }
        i = n[i].next;
    } while (i != outer);
    uint32_t a = best != UINT32_MAX ? best : any, b = h;
    uint32_t a2 = (*used)++, b2 = (*used)++;
    n[a2] = n[a];
    n[b2] = n[b];
    uint32_t an = n[a].next, bp = n[b].prev;
    n[a].next = b;
    n[b].prev = a;
    n[a2].next = an;
    n[an].prev = a2;
    n[b2].next = a2;
    n[a2].prev = b2;
    n[bp].next = b2;
    n[b2].prev = bp;
}

/* Every corner of the ring ends up in a triangle, so a simple ring of n
 * corners gives n-2 triangles, as a fan would: zero-area triangles (collinear
 * corners) are kept, only bridge seams (a vertex twice) are dropped. */
static size_t emit(const tnode *n, uint32_t a, uint32_t b, uint32_t c, uint32_t *out, size_t t)
{
    if (n[a].v == n[b].v || n[b].v == n[c].v || n[a].v == n[c].v)
        return t;
    out[3 * t] = n[a].v;
    out[3 * t + 1] = n[b].v;
    out[3 * t + 2] = n[c].v;
    return t + 1;
}

/* Clip ears; when a whole turn finds none (self-intersecting or degenerate
 * rings), fan what is left rather than search again: O(n^2) at worst. */
static size_t clip(tnode *n, uint32_t head, uint32_t count, uint32_t *out)
{
    size_t t = 0;
    uint32_t cur = head, stop = head;
    while (count > 3) {
        uint32_t p = n[cur].prev, q = n[cur].next;
        if (is_ear(n, cur)) {
            t = emit(n, p, cur, q, out, t);
            n[p].next = q;
            n[q].prev = p;
            count--;
            cur = stop = q;
            continue;
        }
        cur = q;
        if (cur == stop)
            break;
    }
    for (uint32_t a = n[cur].next; n[a].next != cur; a = n[a].next)
        t = emit(n, cur, a, n[a].next, out, t);
    return t;
}

static double ring_max_x(const tnode *n, uint32_t head)
{
    double x = n[head].x;
    for (uint32_t i = n[head].next; i != head; i = n[i].next)
        if (n[i].x > x)
            x = n[i].x;
    return x;
}

/* Rightmost holes first, so that later bridges see the earlier ones. */
static void sort_holes(const tnode *n, uint32_t *holes, size_t count)
{
    for (size_t i = 1; i < count; i++) {
        uint32_t h = holes[i];
        double x = ring_max_x(n, h);
        size_t j = i;
        for (; j > 0 && ring_max_x(n, holes[j - 1]) < x; j--)
            holes[j] = holes[j - 1];
        holes[j] = h;
    }
}

static void newell(const float *pos, const uint32_t *idx, uint32_t size, double nrm[3])
{
    nrm[0] = nrm[1] = nrm[2] = 0;
    for (uint32_t i = 0; i < size; i++) {
        const float *a = pos + 3 * (size_t)idx[i], *b = pos + 3 * (size_t)idx[(i + 1) % size];
        nrm[0] += ((double)a[1] - b[1]) * ((double)a[2] + b[2]);
        nrm[1] += ((double)a[2] - b[2]) * ((double)a[0] + b[0]);
        nrm[2] += ((double)a[0] - b[0]) * ((double)a[1] + b[1]);
    }
}

/* The two axes to project on: those of the Newell normal's smaller
 * components, ordered so that the outer ring turns counter-clockwise. */
static bool project_axes(const float *pos, const uint32_t *idx, uint32_t size, int *u, int *v)
{
    double nrm[3];
    newell(pos, idx, size, nrm);
    int k = fabs(nrm[0]) > fabs(nrm[1]) ? (fabs(nrm[0]) > fabs(nrm[2]) ? 0 : 2)
                                        : (fabs(nrm[1]) > fabs(nrm[2]) ? 1 : 2);
    if (!(fabs(nrm[k]) > 0))
        return false;
    *u = (k + 1) % 3;
    *v = (k + 2) % 3;
    if (nrm[k] < 0) {
        int t = *u;
        *u = *v;
        *v = t;
    }
    return true;
}

static bool convex_fan(const tnode *n, uint32_t head, uint32_t count, uint32_t *out, size_t *t)
{
    uint32_t i = head;
    do {
        if (area2(&n[n[i].prev], &n[i], &n[n[i].next]) <= 0)
            return false;
        i = n[i].next;
    } while (i != head);
    *t = 0;
    for (uint32_t a = n[head].next; n[a].next != head; a = n[a].next, ++*t) {
        out[3 * *t] = n[head].v;
        out[3 * *t + 1] = n[a].v;
        out[3 * *t + 2] = n[n[a].next].v;
    }
    return count >= 3;
}

static bool reserve(prism__tri_scratch *s, size_t nodes, size_t rings)
{
    if (nodes > s->cap) {
        void *p = realloc(s->nodes, nodes * sizeof(tnode));
        if (!p)
            return false;
        s->nodes = p;
        s->cap = nodes;
    }
    if (rings > s->holes_cap) {
        void *p = realloc(s->holes, rings * sizeof *s->holes);
        if (!p)
            return false;
        s->holes = p;
        s->holes_cap = rings;
    }
    return true;
}

size_t prism__triangulate(prism__tri_scratch *s, const float *pos, const uint32_t *idx,
                          const uint32_t *sizes, size_t rings, uint32_t *out)
{
    size_t total = 0;
    for (size_t r = 0; r < rings; r++)
        total += sizes[r] & RING_SIZE;
    if (!reserve(s, total + 2 * rings, rings))
        return SIZE_MAX;
    int u, v;
    if (!project_axes(pos, idx, sizes[0] & RING_SIZE, &u, &v))
        return 0;
    tnode *n = s->nodes;
    uint32_t used = 0, count, hcount;
    uint32_t outer = make_ring(n, &used, pos, idx, sizes[0] & RING_SIZE, u, v, &count);
    if (outer == UINT32_MAX || !(ring_area(n, outer) > 0))
        return 0;
    size_t nholes = 0, at = sizes[0] & RING_SIZE;
    for (size_t r = 1; r < rings; at += sizes[r] & RING_SIZE, r++) {
        uint32_t h = make_ring(n, &used, pos, idx + at, sizes[r] & RING_SIZE, u, v, &hcount);
        if (h == UINT32_MAX)
            continue;
        if (ring_area(n, h) > 0)
            reverse_ring(n, h);
        s->holes[nholes++] = h;
        count += hcount + 2;
    }
    size_t t;
    if (nholes == 0 && convex_fan(n, outer, count, out, &t))
        return t;
    sort_holes(n, s->holes, nholes);
    for (size_t h = 0; h < nholes; h++)
        bridge(n, &used, outer, s->holes[h], s->holes + h + 1, nholes - h - 1);
    return clip(n, outer, count, out);
}
