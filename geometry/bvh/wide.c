/* The collapse of a binary BVH into the wide layout (prism/device/bvh_wide.h), on the
 * host: after the host build, and for the tests as the reference of the
 * device's collapse (engine/cuda/bvh/wide.cu). One pass over a
 * breadth-first queue: node i is built from queue entry i
 * (geometry/bvh/collapse.h, shared with the device), and appends its inner
 * children to the queue, so children come after their parent and siblings
 * are consecutive. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "collapse.h"
#include "internal.h"

typedef struct collapse {
    const prism_bvh *b;
    prism_bvh_wide *w;
    prism__wide_item *queue; /* queue[i] becomes node i */
    size_t queued, cap;
    size_t triangles; /* wide triangles written so far */
} collapse;

static bool enqueue(collapse *c, const prism__wide_item *it)
{
    if (c->queued == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 1024;
        prism__wide_item *q = realloc(c->queue, cap * sizeof *q);
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
    const prism__wide_item start = c->queue[at];
    if (c->queued > UINT32_MAX || c->triangles > UINT32_MAX)
        return PRISM_ERROR_LIMIT;
    const prism__wide_source src = {c->b->nodes, NULL, (uint32_t)c->b->node_count,
                                    (uint32_t)c->b->node_count};
    prism__wide_item list[8];
    int by_slot[8];
    prism_wide_node *w = &c->w->nodes[at];
    if (prism__wide_node(&src, &start, (uint32_t)c->queued, (uint32_t)c->triangles, w, list,
                         by_slot) < 0)
        return PRISM_ERROR_INVALID_ARGUMENT; /* a given tree's child outside its array */
    for (int s = 0; s < 8; s++) {
        if (by_slot[s] < 0)
            continue;
        prism__wide_item it = list[by_slot[s]];
        if (it.kind != PRISM__WIDE_INNER &&
            ((size_t)it.ref + it.count > c->b->triangle_count ||
             c->triangles + (it.kind == PRISM__WIDE_LEAF ? it.count : 0) > c->b->triangle_count))
            return PRISM_ERROR_INVALID_ARGUMENT; /* leaves do not cover the triangles once */
        if (it.kind == PRISM__WIDE_LEAF) {
            for (uint32_t j = 0; j < it.count; j++)
                copy_triangle(c->b, it.ref + j, &c->w->triangles[c->triangles++]);
            continue;
        }
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
    if (bvh->node_count > UINT32_MAX)
        return PRISM_ERROR_LIMIT;
    prism_bvh_wide *w = calloc(1, sizeof *w);
    collapse c = {bvh, w, NULL, 0, 0, 0};
    prism_result r = w ? PRISM_SUCCESS : PRISM_ERROR_OUT_OF_MEMORY;
    if (r == PRISM_SUCCESS) {
        w->triangle_count = bvh->triangle_count;
        w->triangles =
            malloc((bvh->triangle_count ? bvh->triangle_count : 1) * sizeof *w->triangles);
        const prism__wide_source src = {bvh->nodes, NULL, (uint32_t)bvh->node_count,
                                        (uint32_t)bvh->node_count};
        const prism__wide_item root = prism__wide_item_of(&src, 0, 0);
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
