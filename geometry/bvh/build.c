/* Binned SAH BVH builder (object splits), parallel over OpenMP tasks.
 *
 * Triangles become 32-byte references (box + id) that are partitioned in
 * place, so each subtree's references end up contiguous and in leaf order.
 * Each node bins its references' centroids into `bins` slots per axis, sweeps
 * the bins for the cheapest SAH split, and partitions (geometry/bvh/build_nodes.c).
 * This file checks the input, runs that, and lays out the result: a
 * breadth-first pass renumbers the nodes so that every prefix of the array
 * is the top of the tree (the leaves wrote the triangles in leaf order as
 * they were made). Every pass over O(n) data runs on all threads. */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "geometry/big_alloc.h"
#include "build_internal.h"
#include "prism/device/bvh_traverse.h" /* prism_bvh_empty_root */

static void build_log(const prism_bvh_desc *desc, prism_log_level level, const char *fmt, ...)
{
    if (!desc || !desc->log)
        return;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    desc->log(desc->log_user, level, msg);
}

/* ---- input checks ---------------------------------------------------- */

static prism_result check_desc(const prism_bvh_desc *d)
{
    if (!d)
        return PRISM_SUCCESS;
    if (d->max_leaf_size > 64) {
        build_log(d, PRISM_LOG_ERROR, "bvh: max_leaf_size %u is outside 1..64", d->max_leaf_size);
        return PRISM_ERROR_INVALID_ARGUMENT;
    }
    if (d->quality > PRISM_BVH_QUALITY_HIGH) {
        build_log(d, PRISM_LOG_ERROR, "bvh: quality %u is not a PRISM_BVH_QUALITY_*", d->quality);
        return PRISM_ERROR_INVALID_ARGUMENT;
    }
    if (d->bins == 1 || d->bins > PRISM__BVH_MAX_BINS) {
        build_log(d, PRISM_LOG_ERROR, "bvh: bins %u is outside 2..%d", d->bins,
                  PRISM__BVH_MAX_BINS);
        return PRISM_ERROR_INVALID_ARGUMENT;
    }
    if (d->bfs_levels > PRISM_BVH_MAX_DEPTH) {
        build_log(d, PRISM_LOG_ERROR, "bvh: bfs_levels %u is outside 0..%d", d->bfs_levels,
                  PRISM_BVH_MAX_DEPTH);
        return PRISM_ERROR_INVALID_ARGUMENT;
    }
    if (d->order > PRISM_BVH_ORDER_DFS) {
        build_log(d, PRISM_LOG_ERROR, "bvh: order %u is not a PRISM_BVH_ORDER_*", d->order);
        return PRISM_ERROR_INVALID_ARGUMENT;
    }
    if (d->threads < 0) {
        build_log(d, PRISM_LOG_ERROR, "bvh: threads %d is negative", d->threads);
        return PRISM_ERROR_INVALID_ARGUMENT;
    }
    return PRISM_SUCCESS;
}

static int bad_triangle(const float *positions, size_t vertex_count, const uint32_t *t)
{
    for (int k = 0; k < 3; k++) {
        if (t[k] >= vertex_count)
            return 1;
        const float *p = positions + 3 * (size_t)t[k];
        if (!isfinite(p[0]) || !isfinite(p[1]) || !isfinite(p[2]))
            return 1;
    }
    return 0;
}

static prism_result check_arrays(const float *positions, size_t vertex_count,
                                 const uint32_t *indices, size_t triangle_count,
                                 const prism_bvh_desc *desc, int threads)
{
    if ((vertex_count && !positions) || (triangle_count && !indices)) {
        build_log(desc, PRISM_LOG_ERROR, "bvh: NULL %s with a nonzero count",
                  !indices && triangle_count ? "indices" : "positions");
        return PRISM_ERROR_INVALID_ARGUMENT;
    }
    if (triangle_count > PRISM__BVH_MAX_TRIANGLES || vertex_count >= UINT32_MAX) {
        build_log(desc, PRISM_LOG_ERROR,
                  "bvh: %zu triangles on %zu vertices is beyond the limits "
                  "(2^31 triangles, 2^32-1 vertices)",
                  triangle_count, vertex_count);
        return PRISM_ERROR_LIMIT;
    }
    /* The first bad triangle, found in parallel, then named. */
    long bad = LONG_MAX;
    const long n = (long)triangle_count;
#pragma omp parallel for num_threads(threads) schedule(static) reduction(min : bad)
    for (long t = 0; t < n; t++)
        if (bad_triangle(positions, vertex_count, indices + 3 * t))
            bad = t < bad ? t : bad;
    for (int k = 0; bad != LONG_MAX && k < 3; k++) {
        uint32_t i = indices[3 * bad + k];
        if (i >= vertex_count) {
            build_log(desc, PRISM_LOG_ERROR,
                      "bvh: triangle %ld: vertex index %u >= vertex count %zu", bad, i,
                      vertex_count);
            return PRISM_ERROR_INVALID_ARGUMENT;
        }
        if (bad_triangle(positions, vertex_count, (const uint32_t[3]){i, i, i})) {
            build_log(desc, PRISM_LOG_ERROR,
                      "bvh: triangle %ld: vertex %u has a non-finite coordinate", bad, i);
            return PRISM_ERROR_INVALID_ARGUMENT;
        }
    }
    return PRISM_SUCCESS;
}

static void resolve_desc(const prism_bvh_desc *d, prism__bvh_builder *b)
{
    static const unsigned bins_of_quality[] = {16, 8, 16, 64};
    unsigned quality = d ? d->quality : 0;
    b->leaf = d && d->max_leaf_size ? d->max_leaf_size : 4;
    b->bins = d && d->bins ? d->bins : bins_of_quality[quality];
    b->sample = quality != PRISM_BVH_QUALITY_HIGH;
    b->threads = d && d->threads > 0 ? d->threads : omp_get_max_threads();
    b->bfs_levels = !d || d->order != PRISM_BVH_ORDER_DFS ? UINT_MAX
                    : d->bfs_levels                       ? d->bfs_levels
                                                          : PRISM_BVH_DFS_BFS_LEVELS;
    b->progress = d ? d->progress : NULL;
    b->progress_user = d ? d->progress_user : NULL;
}

/* The progress calls of the build's ends, from the calling thread: (0, n)
 * before anything is allocated and (n, n) when the BVH is complete; the
 * ones between come from the recursion (geometry/bvh/build_nodes.c), a step
 * apart, ~100 steps per build. False: cancelled. */
#define PROGRESS_STEPS 100

static bool progress_end(prism__bvh_builder *b, size_t n, bool last)
{
    b->report_step = n / PROGRESS_STEPS ? n / PROGRESS_STEPS : 1;
    b->next_report = b->report_step;
    return !b->progress || b->progress(b->progress_user, last ? n : 0, n);
}

/* ---- output ---------------------------------------------------------- */

static prism_bvh *alloc_bvh(size_t vertex_count, size_t triangle_count)
{
    prism_bvh *bvh = calloc(1, sizeof *bvh);
    if (!bvh)
        return NULL;
    /* The nodes come later: build_tree hands over the references' array. */
    bvh->vertices = prism__big_alloc((vertex_count ? vertex_count : 1) * 3 * sizeof(float));
    bvh->triangles = prism__big_alloc((triangle_count ? triangle_count : 1) * 3 * sizeof(uint32_t));
    bvh->triangle_ids = prism__big_alloc((triangle_count ? triangle_count : 1) * sizeof(uint32_t));
    if (!bvh->vertices || !bvh->triangles || !bvh->triangle_ids) {
        prism_bvh_free(bvh);
        return NULL;
    }
    bvh->vertex_count = vertex_count;
    bvh->triangle_count = triangle_count;
    return bvh;
}

/* Copy the vertices as they are, with all threads: they are the output's
 * first touch (page faults included), which one thread made a large part
 * of the phase on a large scene. With the triangles written by the leaves
 * (geometry/bvh/build_nodes.c), the phase is now a small part of a build.
 * (Vertices renumbered by first use in leaf order made no measurable
 * difference to traversal on the synthetic detector, whose vertices
 * already come solid by solid, and cost a serial pass.) */
#define COPY_CHUNK ((size_t)1 << 16) /* floats */

static void copy_vertices(prism_bvh *bvh, const float *positions, int threads)
{
    const size_t floats = bvh->vertex_count * 3;
    const long chunks = (long)((floats + COPY_CHUNK - 1) / COPY_CHUNK);
#pragma omp parallel for num_threads(threads) schedule(static)
    for (long c = 0; c < chunks; c++) {
        size_t at = (size_t)c * COPY_CHUNK,
               len = floats - at < COPY_CHUNK ? floats - at : COPY_CHUNK;
        memcpy(bvh->vertices + at, positions + at, len * sizeof(float));
    }
}

/* The SAH's parts. A root of zero area (all triangles on one line or
 * point) weighs every node 1: every ray that meets the root meets them all. */
static double sah_root_area(const prism_bvh_node *root)
{
    return prism__bvh_area(root->lo, root->hi);
}

static double sah_term(const prism_bvh_node *n, double root_area)
{
    double a = root_area > 0.0 ? prism__bvh_area(n->lo, n->hi) / root_area : 1.0;
    return a * (n->count ? PRISM_BVH_SAH_ISECT * n->count : PRISM_BVH_SAH_TRAV);
}

/* The SAH over all nodes, summed in SAH_CHUNKS fixed chunks in order, so
 * the sum is the same whatever the thread count (and the build's stats agree
 * with prism_bvh_sah_cost to the last bit). */
#define SAH_CHUNKS 64

static double sah_sum(const prism_bvh_node *nodes, size_t count, int threads)
{
    const double root = sah_root_area(&nodes[0]);
    double part[SAH_CHUNKS];
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int c = 0; c < SAH_CHUNKS; c++) {
        double sum = 0.0;
        for (size_t i = count * c / SAH_CHUNKS; i < count * (c + 1) / SAH_CHUNKS; i++)
            sum += sah_term(&nodes[i], root);
        part[c] = sum;
    }
    double sum = 0.0;
    for (int c = 0; c < SAH_CHUNKS; c++)
        sum += part[c];
    return sum;
}

/* The structural stats and the SAH, from the laid-out nodes in one pass
 * (the SAH in sah_sum's chunks, so it agrees with prism_bvh_sah_cost to the
 * last bit); the depth comes from the layout. */
static void layout_stats(prism_bvh *bvh, unsigned max_depth, int threads)
{
    prism_bvh_stats *s = &bvh->stats;
    const prism_bvh_node *nodes = bvh->nodes;
    const size_t count = bvh->node_count;
    const double root = sah_root_area(&nodes[0]);
    double part[SAH_CHUNKS];
    size_t leaves = 0;
    unsigned max_leaf = 0;
#pragma omp parallel for num_threads(threads) schedule(static) \
    reduction(+ : leaves) reduction(max : max_leaf)
    for (int c = 0; c < SAH_CHUNKS; c++) {
        double sum = 0.0;
        for (size_t i = count * c / SAH_CHUNKS; i < count * (c + 1) / SAH_CHUNKS; i++) {
            const prism_bvh_node *n = &nodes[i];
            leaves += n->count != 0;
            max_leaf = n->count > max_leaf ? n->count : max_leaf;
            sum += sah_term(n, root);
        }
        part[c] = sum;
    }
    double sah = 0.0;
    for (int c = 0; c < SAH_CHUNKS; c++)
        sah += part[c];
    s->leaves = leaves;
    s->max_leaf_triangles = max_leaf;
    s->max_depth = max_depth;
    s->nodes = count;
    s->sah_cost = bvh->triangle_count ? sah : 0.0;
    s->mean_leaf_triangles = s->leaves ? (double)bvh->triangle_count / (double)s->leaves : 0.0;
}

/* The output nodes are copies of the builder's, so an inner node's `first`
 * names its children in the builder's array until its own children are
 * placed: no map from output positions back to builder nodes is needed. */
typedef struct layout {
    prism_bvh_node *out;
    const prism_bvh_node *tmp;
    size_t next; /* next free output position (pairs) */
} layout;

/* Place node k's children as the pair at positions q, q + 1. */
static void place_pair(layout *l, size_t k, size_t q)
{
    const uint32_t c0 = l->out[k].first;
    l->out[q] = l->tmp[c0];
    l->out[q + 1] = l->tmp[c0 + 1];
    l->out[k].first = (uint32_t)q;
}

/* Depth-first below node k (at depth `depth`), from output position *next:
 * each sibling pair, then the first child's subtree, then the second's.
 * Returns the deepest depth placed. */
static unsigned place_dfs(layout *l, size_t k, unsigned depth, size_t *next)
{
    struct {
        size_t at;
        unsigned depth;
    } stack[2 * PRISM_BVH_MAX_DEPTH + 2];
    int sp = 0;
    unsigned deepest = depth;
    stack[sp].at = k;
    stack[sp++].depth = depth;
    while (sp > 0) {
        const size_t at = stack[--sp].at;
        const unsigned d = stack[sp].depth + 1;
        if (l->out[at].count != 0)
            continue;
        const size_t q = *next;
        place_pair(l, at, q);
        *next += 2;
        deepest = d > deepest ? d : deepest;
        stack[sp].at = q + 1;
        stack[sp++].depth = d;
        stack[sp].at = q;
        stack[sp++].depth = d;
    }
    return deepest;
}

/* Nodes below node n (a copy of a builder node) in the builder's tree. */
static size_t nodes_below(const prism_bvh_node *tmp, const prism_bvh_node *n)
{
    uint32_t stack[2 * PRISM_BVH_MAX_DEPTH + 2];
    int sp = 0;
    size_t count = 0;
    if (n->count == 0) {
        stack[sp++] = n->first + 1;
        stack[sp++] = n->first;
        count = 2;
    }
    while (sp > 0) {
        const prism_bvh_node *x = &tmp[stack[--sp]];
        if (x->count != 0)
            continue;
        count += 2;
        stack[sp++] = x->first + 1;
        stack[sp++] = x->first;
    }
    return count;
}

/* The depth-first part: the subtrees below the frontier [lb, le) (nodes at
 * depth `depth`), each sized first so that all of them are placed in
 * parallel, in the order one thread would place them. Returns the deepest
 * depth placed. */
static unsigned place_frontier(layout *l, size_t lb, size_t le, unsigned depth, int threads)
{
    const long n = (long)(le - lb);
    size_t *start = malloc((size_t)n * sizeof *start);
    unsigned deepest = depth;
    if (!start) { /* one thread, no memory needed */
        for (size_t k = lb; k < le; k++) {
            unsigned d = place_dfs(l, k, depth, &l->next);
            deepest = d > deepest ? d : deepest;
        }
        return deepest;
    }
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
    for (long i = 0; i < n; i++)
        start[i] = nodes_below(l->tmp, &l->out[lb + (size_t)i]);
    for (long i = 0; i < n; i++) {
        size_t size = start[i];
        start[i] = l->next;
        l->next += size;
    }
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) reduction(max : deepest)
    for (long i = 0; i < n; i++) {
        size_t at = start[i];
        unsigned d = place_dfs(l, lb + (size_t)i, depth, &at);
        deepest = d > deepest ? d : deepest;
    }
    free(start);
    return deepest;
}
/* One breadth-first level [lb, le): its inner nodes, counted in chunks and
 * prefix-summed, place their pairs in order from l->next, so the result is
 * the serial breadth-first order whatever the thread count. */
static void place_level(layout *l, size_t lb, size_t le, int threads)
{
    const size_t n = le - lb;
    const int k = n >= 8192 && threads > 1 ? (4 * threads > 64 ? 64 : 4 * threads) : 1;
    size_t at[65];
#pragma omp parallel for num_threads(k > 1 ? threads : 1) schedule(static)
    for (int c = 0; c < k; c++) {
        size_t inner = 0;
        for (size_t x = lb + n * c / k; x < lb + n * (c + 1) / k; x++)
            inner += l->out[x].count == 0;
        at[c] = inner;
    }
    size_t q = l->next;
    for (int c = 0; c < k; c++) {
        size_t inner = at[c];
        at[c] = q;
        q += 2 * inner;
    }
#pragma omp parallel for num_threads(k > 1 ? threads : 1) schedule(static)
    for (int c = 0; c < k; c++) {
        size_t pos = at[c];
        for (size_t x = lb + n * c / k; x < lb + n * (c + 1) / k; x++)
            if (l->out[x].count == 0) {
                place_pair(l, x, pos);
                pos += 2;
            }
    }
    l->next = q;
}

/* Renumber the builder's nodes into bvh->nodes: breadth-first down to depth
 * `bfs_levels`, then each subtree below depth-first. Node 1 is padding so
 * that sibling pairs start at even indices. Either way a child comes after
 * its parent. */
static void reorder(prism_bvh *bvh, const prism_bvh_node *tmp, unsigned bfs_levels, int threads)
{
    const size_t pad = tmp[0].count == 0 && bvh->triangle_count;
    layout l = {bvh->nodes, tmp, 1 + pad};
    l.out[0] = tmp[0];
    if (pad)
        l.out[1] =
            (prism_bvh_node){{FLT_MAX, FLT_MAX, FLT_MAX}, 0, {-FLT_MAX, -FLT_MAX, -FLT_MAX}, 0};
    size_t lb = 0, le = pad ? 1 : 0; /* the current level; nothing to place without a pad */
    unsigned d = 0, deepest = 0;     /* d: the current level's depth */
    for (; lb < le && d < bfs_levels; d++) {
        deepest = d;
        place_level(&l, lb, le, threads);
        lb = lb == 0 ? 2 : le; /* level 1 starts after the padding node */
        le = l.next;
    }
    if (lb < le) /* the frontier below the breadth-first levels */
        deepest = place_frontier(&l, lb, le, d, threads);
    bvh->node_count = l.next;
    layout_stats(bvh, deepest, threads);
}

static void fill_stats(prism_bvh *bvh, double seconds)
{
    prism_bvh_stats *s = &bvh->stats;
    s->node_bytes = bvh->node_count * sizeof(prism_bvh_node);
    s->vertex_bytes = bvh->vertex_count * 3 * sizeof(float);
    s->triangle_bytes = bvh->triangle_count * 3 * sizeof(uint32_t);
    s->id_bytes = bvh->triangle_count * sizeof(uint32_t);
    s->build_seconds = seconds;
}

double prism_bvh_sah_cost(const prism_bvh_node *nodes, size_t node_count)
{
    if (!nodes || node_count == 0 || prism_bvh_empty_root(&nodes[0]))
        return 0.0;
    return sah_sum(nodes, node_count, omp_get_max_threads());
}

/* ---- entry points ---------------------------------------------------- */

static prism_result cancelled(const prism_bvh_desc *desc)
{
    build_log(desc, PRISM_LOG_ERROR, "bvh: cancelled by the progress callback");
    return PRISM_ERROR_IO;
}

static prism_result build_tree(prism__bvh_builder *b, prism_bvh *bvh, const float *positions,
                               const uint32_t *indices)
{
    size_t n = bvh->triangle_count;
    b->n = n;
    /* One array of 2n slots (2n-1 nodes and the padding node) holds the n
     * references while the tree is built and becomes the output nodes
     * after: the output's first half is then already paged in, and the
     * build touches 2n slots fewer than with separate arrays. 64-byte
     * aligned, so that each pair of siblings (at an even index) is one
     * cache line. */
    _Static_assert(sizeof(prism__bvh_ref) == sizeof(prism_bvh_node),
                   "a reference fits a node slot");
    b->refs = prism__big_alloc((n ? 2 * n : 1) * sizeof *b->refs);
    b->nodes = prism__big_alloc(prism__bvh_nodes_capacity(n, b->threads) * sizeof *b->nodes);
    b->blocks = calloc((size_t)b->threads, sizeof *b->blocks);
    b->out_triangles = bvh->triangles;
    b->out_ids = bvh->triangle_ids;
    prism_result r = PRISM_ERROR_OUT_OF_MEMORY;
    if (b->refs && b->nodes && b->blocks) {
        prism__bvh_build_nodes(b, positions, indices);
        r = PRISM_ERROR_IO; /* cancelled: the tree is incomplete, and discarded */
        if (!b->cancelled) {
            copy_vertices(bvh, positions, b->threads);
            bvh->nodes = (prism_bvh_node *)(void *)b->refs;
            b->refs = NULL;
            reorder(bvh, b->nodes, b->bfs_levels, b->threads);
            r = PRISM_SUCCESS;
        }
    }
    free(b->refs);
    free(b->nodes);
    free(b->blocks);
    return r;
}

prism_result prism_bvh_build(const float *positions, size_t vertex_count, const uint32_t *indices,
                             size_t triangle_count, const prism_bvh_desc *desc, prism_bvh **out)
{
    if (!out)
        return PRISM_ERROR_INVALID_ARGUMENT;
    *out = NULL;
    double t0 = omp_get_wtime();
    prism_result r = check_desc(desc);
    prism__bvh_builder b = {0};
    if (r == PRISM_SUCCESS) {
        resolve_desc(desc, &b);
        r = check_arrays(positions, vertex_count, indices, triangle_count, desc, b.threads);
    }
    if (r != PRISM_SUCCESS)
        return r;
    if (!progress_end(&b, triangle_count, false))
        return cancelled(desc);
    prism_bvh *bvh = alloc_bvh(vertex_count, triangle_count);
    if (!bvh) {
        build_log(desc, PRISM_LOG_ERROR, "bvh: out of memory for %zu triangles", triangle_count);
        return PRISM_ERROR_OUT_OF_MEMORY;
    }
    r = build_tree(&b, bvh, positions, indices);
    if (r == PRISM_SUCCESS && !progress_end(&b, triangle_count, true))
        r = PRISM_ERROR_IO;
    if (r != PRISM_SUCCESS) {
        if (r == PRISM_ERROR_IO)
            cancelled(desc);
        else
            build_log(desc, PRISM_LOG_ERROR, "bvh: out of memory for %zu triangles",
                      triangle_count);
        prism_bvh_free(bvh);
        return r;
    }
    fill_stats(bvh, omp_get_wtime() - t0);
    const prism_bvh_stats *s = &bvh->stats;
    build_log(desc, PRISM_LOG_INFO,
              "bvh: %zu triangles, %zu nodes, %zu leaves, depth %u, %.2f tri/leaf (max %u), "
              "SAH %.2f, %.3f s",
              triangle_count, s->nodes, s->leaves, s->max_depth, s->mean_leaf_triangles,
              s->max_leaf_triangles, s->sah_cost, s->build_seconds);
    *out = bvh;
    return PRISM_SUCCESS;
}

void prism_bvh_free(prism_bvh *bvh)
{
    if (!bvh)
        return;
    free(bvh->nodes);
    free(bvh->vertices);
    free(bvh->triangles);
    free(bvh->triangle_ids);
    free(bvh);
}
