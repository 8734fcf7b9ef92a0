/* prism_bvh_validate: checks that a node array obeys the layout contract of
 * prism/bvh.h, so that the host builder, the CUDA builder and anything
 * else producing this layout can be held to one definition of "well
 * formed", and a bad tree is named (node and rule) instead of showing up as
 * a wrong pixel or a stack overflow in a kernel.
 *
 * One forward pass over the nodes does it without recursion: every child
 * comes after its parent, so when node i is reached in index order all its
 * possible parents have been seen, and a node nobody has claimed by then is
 * unreachable (or its parent breaks the order, which is as bad). Scratch is
 * one byte per node (depth, 0 = not reached) and one bit per triangle. */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prism/bvh.h"

typedef struct checker {
    const prism_bvh_node *nodes;
    size_t node_count;
    const float *vertices;
    size_t vertex_count;
    const uint32_t *triangles, *ids;
    size_t triangle_count;
    unsigned max_leaf;
    int padded;     /* node 1 is the padding node (the root is inner) */
    uint8_t *depth; /* per node: depth + 1 once a parent claimed it, 0 before */
    uint64_t *bits; /* per triangle: in a leaf already (later: id seen) */
    char *message;
    size_t message_size;
} checker;

static const char axis_name[3] = {'x', 'y', 'z'};

static prism_result fail(checker *c, const char *fmt, ...)
{
    if (c->message && c->message_size) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->message, c->message_size, fmt, ap);
        va_end(ap);
    }
    return PRISM_ERROR_INVALID_ARGUMENT;
}

static int bit_test_set(uint64_t *bits, size_t i)
{
    const uint64_t m = (uint64_t)1 << (i % 64);
    const int was = (bits[i / 64] & m) != 0;
    bits[i / 64] |= m;
    return was;
}

/* The error paths' searches, O(n) once: they only make the message exact. */
static size_t parent_before(const checker *c, size_t i, size_t child)
{
    for (size_t j = 0; j < i; j++) {
        const prism_bvh_node *n = &c->nodes[j];
        if (n->count == 0 && n->first != 0 && (n->first == child || n->first + 1 == child))
            return j;
    }
    return i;
}

static size_t leaf_before(const checker *c, size_t i, size_t tri)
{
    for (size_t j = 0; j < i; j++) {
        const prism_bvh_node *n = &c->nodes[j];
        if (n->count && tri >= n->first && tri - n->first < n->count)
            return j;
    }
    return i;
}

/* Every box a traversal reads must be finite and not inverted: a NaN or an
 * infinity turns the slab test's products into NaN, which culls silently. */
static prism_result check_box(checker *c, size_t i)
{
    const prism_bvh_node *n = &c->nodes[i];
    for (int a = 0; a < 3; a++) {
        if (!isfinite(n->lo[a]) || !isfinite(n->hi[a]))
            return fail(c, "node %zu: box is not finite (axis %c: lo %.9g, hi %.9g)", i,
                        axis_name[a], n->lo[a], n->hi[a]);
        if (n->lo[a] > n->hi[a])
            return fail(c, "node %zu: box is inverted (axis %c: lo %.9g > hi %.9g)", i,
                        axis_name[a], n->lo[a], n->hi[a]);
    }
    return PRISM_SUCCESS;
}

/* lo > hi on every axis: the empty box the builders write (FLT_MAX, -FLT_MAX)
 * and what the SAH counts as area 0. */
static prism_result check_empty_box(checker *c, size_t i, const char *what)
{
    const prism_bvh_node *n = &c->nodes[i];
    for (int a = 0; a < 3; a++)
        if (!(n->lo[a] > n->hi[a]))
            return fail(c, "node %zu: %s's box is not empty (axis %c: lo %.9g <= hi %.9g)", i, what,
                        axis_name[a], n->lo[a], n->hi[a]);
    return PRISM_SUCCESS;
}

/* The empty BVH: one node, count 0, first 0, an empty box, no triangles. */
static prism_result check_empty_bvh(checker *c)
{
    const prism_bvh_node *root = &c->nodes[0];
    if (root->count != 0 || root->first != 0)
        return fail(c,
                    "node 0: triangle_count is 0 but the root is not the empty root "
                    "(count %" PRIu32 ", first %" PRIu32 "; expected 0, 0)",
                    root->count, root->first);
    if (c->node_count != 1)
        return fail(c, "node 0: the empty BVH has %zu nodes (expected 1)", c->node_count);
    return check_empty_box(c, 0, "empty root");
}

/* Node 1 where the root is inner: count 0, first 0, an empty box (so the
 * SAH, which sums every node, gives it no weight). */
static prism_result check_padding(checker *c)
{
    const prism_bvh_node *n = &c->nodes[1];
    if (n->count != 0 || n->first != 0)
        return fail(c,
                    "node 1: the padding node (the root is inner) has count %" PRIu32
                    ", first %" PRIu32 " (expected 0, 0)",
                    n->count, n->first);
    return check_empty_box(c, 1, "padding node");
}

static prism_result check_vertex(checker *c, size_t i, size_t tri, uint32_t v)
{
    const prism_bvh_node *n = &c->nodes[i];
    if (v >= c->vertex_count)
        return fail(c, "node %zu: triangle %zu: vertex index %" PRIu32 " >= vertex_count %zu", i,
                    tri, v, c->vertex_count);
    if (!c->vertices)
        return PRISM_SUCCESS;
    const float *p = c->vertices + 3 * (size_t)v;
    for (int a = 0; a < 3; a++)
        if (!(p[a] >= n->lo[a] && p[a] <= n->hi[a])) /* also catches NaN */
            return fail(c,
                        "node %zu: triangle %zu: vertex %" PRIu32 " is outside the leaf's box "
                        "(axis %c: %.9g not in [%.9g, %.9g])",
                        i, tri, v, axis_name[a], p[a], n->lo[a], n->hi[a]);
    return PRISM_SUCCESS;
}

static prism_result check_leaf(checker *c, size_t i)
{
    const prism_bvh_node *n = &c->nodes[i];
    if (c->max_leaf && n->count > c->max_leaf)
        return fail(c, "node %zu: leaf of %" PRIu32 " triangles exceeds max_leaf_size %u", i,
                    n->count, c->max_leaf);
    const uint64_t end = (uint64_t)n->first + n->count;
    if (end > c->triangle_count)
        return fail(c,
                    "node %zu: leaf triangles [%" PRIu32 ", %" PRIu64 ") run past "
                    "triangle_count %zu",
                    i, n->first, end, c->triangle_count);
    for (size_t t = n->first; t < end; t++) {
        if (bit_test_set(c->bits, t))
            return fail(c, "node %zu: triangle %zu is also in leaf %zu (leaves must not overlap)",
                        i, t, leaf_before(c, i, t));
        for (int k = 0; c->triangles && k < 3; k++) {
            prism_result r = check_vertex(c, i, t, c->triangles[3 * t + k]);
            if (r != PRISM_SUCCESS)
                return r;
        }
    }
    return PRISM_SUCCESS;
}

static prism_result check_child_box(checker *c, size_t i, size_t child)
{
    const prism_bvh_node *p = &c->nodes[i], *n = &c->nodes[child];
    for (int a = 0; a < 3; a++) {
        if (!(n->lo[a] >= p->lo[a]))
            return fail(
                c, "node %zu: child %zu's box is not inside its parent's (axis %c: %.9g < %.9g)", i,
                child, axis_name[a], n->lo[a], p->lo[a]);
        if (!(n->hi[a] <= p->hi[a]))
            return fail(
                c, "node %zu: child %zu's box is not inside its parent's (axis %c: %.9g > %.9g)", i,
                child, axis_name[a], n->hi[a], p->hi[a]);
    }
    return PRISM_SUCCESS;
}

/* An inner node: a pair first, first + 1 that exists, starts even, comes
 * after it, is not the padding node and has no other parent. */
static prism_result check_inner(checker *c, size_t i)
{
    const prism_bvh_node *n = &c->nodes[i];
    const size_t f = n->first;
    if (f == 0)
        return fail(c, "node %zu: empty interior node (count 0, first 0: no children)", i);
    if ((uint64_t)f + 1 >= c->node_count)
        return fail(c, "node %zu: children %zu, %zu are outside the %zu nodes", i, f, f + 1,
                    c->node_count);
    if (c->padded && f == 1)
        return fail(c, "node %zu: child 1 is the padding node", i);
    if (f % 2)
        return fail(c,
                    "node %zu: children start at odd index %zu (sibling pairs start at even "
                    "indices)",
                    i, f);
    if (f <= i)
        return fail(c, "node %zu: child %zu is not after its parent", i, f);
    for (size_t child = f; child <= f + 1; child++) {
        if (c->depth[child])
            return fail(c, "node %zu: child %zu already has parent %zu (a shared subtree)", i,
                        child, parent_before(c, i, child));
        prism_result r = check_child_box(c, i, child);
        if (r != PRISM_SUCCESS)
            return r;
        c->depth[child] = (uint8_t)(c->depth[i] + 1);
    }
    return PRISM_SUCCESS;
}

static prism_result check_node(checker *c, size_t i)
{
    if (i == 1 && c->padded)
        return check_padding(c);
    if (!c->depth[i])
        return fail(c,
                    "node %zu: no parent before it (unreachable from the root, or its parent "
                    "comes after it)",
                    i);
    if (c->depth[i] - 1 > PRISM_BVH_MAX_DEPTH)
        return fail(c, "node %zu: depth %d exceeds PRISM_BVH_MAX_DEPTH (%d)", i, c->depth[i] - 1,
                    PRISM_BVH_MAX_DEPTH);
    prism_result r = check_box(c, i);
    if (r == PRISM_SUCCESS)
        r = c->nodes[i].count ? check_leaf(c, i) : check_inner(c, i);
    return r;
}

static prism_result check_coverage(checker *c)
{
    for (size_t w = 0; w < (c->triangle_count + 63) / 64; w++)
        if (~c->bits[w]) {
            size_t t = 64 * w;
            while (c->bits[w] >> (t % 64) & 1)
                t++;
            if (t < c->triangle_count)
                return fail(c, "triangle %zu is in no leaf", t);
        }
    return PRISM_SUCCESS;
}

static prism_result check_ids(checker *c)
{
    memset(c->bits, 0, (c->triangle_count + 63) / 64 * sizeof *c->bits);
    for (size_t t = 0; t < c->triangle_count; t++) {
        const uint32_t id = c->ids[t];
        if (id >= c->triangle_count)
            return fail(c, "triangle %zu: id %" PRIu32 " >= triangle_count %zu", t, id,
                        c->triangle_count);
        if (bit_test_set(c->bits, id))
            return fail(c, "triangle %zu: id %" PRIu32 " repeats (ids must be a permutation)", t,
                        id);
    }
    return PRISM_SUCCESS;
}

static prism_result check_tree(checker *c)
{
    c->depth[0] = 1;
    for (size_t i = 0; i < c->node_count; i++) {
        prism_result r = check_node(c, i);
        if (r != PRISM_SUCCESS)
            return r;
    }
    prism_result r = check_coverage(c);
    if (r == PRISM_SUCCESS && c->ids)
        r = check_ids(c);
    return r;
}

prism_result prism_bvh_validate(const prism_bvh_node *nodes, size_t node_count,
                                const float *vertices, size_t vertex_count,
                                const uint32_t *triangles, const uint32_t *triangle_ids,
                                size_t triangle_count, unsigned max_leaf_size, char *message,
                                size_t message_size)
{
    checker c = {nodes,          node_count,    vertices, vertex_count, triangles, triangle_ids,
                 triangle_count, max_leaf_size, 0,        NULL,         NULL,      message,
                 message_size};
    if (message && message_size)
        message[0] = '\0';
    if (!nodes || node_count == 0)
        return fail(&c, "%s",
                    !nodes ? "nodes is NULL" : "no nodes (even an empty BVH has its root)");
    if (triangle_count == 0)
        return check_empty_bvh(&c);
    if (nodes[0].count == 0 && nodes[0].first == 0) /* before its box: that is empty too */
        return fail(&c, "node 0: the empty root (count 0, first 0) but triangle_count is %zu",
                    triangle_count);
    c.padded = nodes[0].count == 0 && node_count > 1;
    c.depth = calloc(node_count, 1);
    c.bits = calloc((triangle_count + 63) / 64, sizeof *c.bits);
    prism_result r = PRISM_ERROR_OUT_OF_MEMORY;
    if (c.depth && c.bits)
        r = check_tree(&c);
    else
        fail(&c, "out of memory checking %zu nodes and %zu triangles", node_count, triangle_count);
    free(c.depth);
    free(c.bits);
    return r;
}

prism_result prism_bvh_check(const prism_bvh *bvh, char *message, size_t message_size)
{
    if (!bvh) {
        if (message && message_size)
            snprintf(message, message_size, "bvh is NULL");
        return PRISM_ERROR_INVALID_ARGUMENT;
    }
    return prism_bvh_validate(bvh->nodes, bvh->node_count, bvh->vertices, bvh->vertex_count,
                              bvh->triangles, bvh->triangle_ids, bvh->triangle_count, 0, message,
                              message_size);
}
