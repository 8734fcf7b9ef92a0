/* Binned SAH BVH builder (object splits), parallel over OpenMP tasks.
 *
 * Triangles become 32-byte references (box + id) that are partitioned in
 * place, so each subtree's references end up contiguous and in leaf order.
 * Each node bins its references' centroids into `bins` slots per axis, sweeps
 * the bins for the cheapest SAH split, and partitions (bvh_build_nodes.c).
 * This file checks the input, runs that, and lays out the result: a
 * breadth-first pass renumbers the nodes so that every prefix of the array
 * is the top of the tree, and the triangles are copied in leaf order. */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "bvh_build_internal.h"
#include "bvh_traverse.h" /* prism_bvh_empty_root */

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
        build_log(d, PRISM_LOG_ERROR, "bvh: bins %u is outside 2..%d", d->bins, PRISM__BVH_MAX_BINS);
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

static prism_result check_arrays(const float *positions, size_t vertex_count,
                                 const uint32_t *indices, size_t triangle_count,
                                 const prism_bvh_desc *desc)
{
    if ((vertex_count && !positions) || (triangle_count && !indices)) {
        build_log(desc, PRISM_LOG_ERROR, "bvh: NULL %s with a nonzero count",
                  !indices && triangle_count ? "indices" : "positions");
        return PRISM_ERROR_INVALID_ARGUMENT;
    }
    if (triangle_count > PRISM__BVH_MAX_TRIANGLES || vertex_count >= UINT32_MAX) {
        build_log(desc, PRISM_LOG_ERROR, "bvh: %zu triangles on %zu vertices is beyond the limits "
                  "(2^31 triangles, 2^32-1 vertices)", triangle_count, vertex_count);
        return PRISM_ERROR_LIMIT;
    }
    for (size_t t = 0; t < triangle_count; t++) {
        for (int k = 0; k < 3; k++) {
            uint32_t i = indices[3 * t + k];
            if (i >= vertex_count) {
                build_log(desc, PRISM_LOG_ERROR, "bvh: triangle %zu: vertex index %u >= vertex count %zu",
                          t, i, vertex_count);
                return PRISM_ERROR_INVALID_ARGUMENT;
            }
            const float *p = positions + 3 * (size_t)i;
            if (!isfinite(p[0]) || !isfinite(p[1]) || !isfinite(p[2])) {
                build_log(desc, PRISM_LOG_ERROR, "bvh: triangle %zu: vertex %u has a non-finite coordinate",
                          t, i);
                return PRISM_ERROR_INVALID_ARGUMENT;
            }
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
    b->threads = d && d->threads > 0 ? d->threads : omp_get_max_threads();
    b->bfs_levels = d && d->order == PRISM_BVH_ORDER_DFS ? PRISM_BVH_DFS_BFS_LEVELS : UINT_MAX;
}

/* ---- output ---------------------------------------------------------- */

static prism_bvh *alloc_bvh(size_t vertex_count, size_t triangle_count)
{
    prism_bvh *bvh = calloc(1, sizeof *bvh);
    if (!bvh)
        return NULL;
    /* 2n-1 nodes and the padding node; 64-byte aligned, so that each pair
     * of siblings (at an even index) is one cache line. */
    size_t max_nodes = triangle_count ? 2 * triangle_count : 1;
    bvh->nodes = aligned_alloc(64, (max_nodes * sizeof *bvh->nodes + 63) / 64 * 64);
    bvh->vertices = malloc((vertex_count ? vertex_count : 1) * 3 * sizeof(float));
    bvh->triangles = malloc((triangle_count ? triangle_count : 1) * 3 * sizeof(uint32_t));
    bvh->triangle_ids = malloc((triangle_count ? triangle_count : 1) * sizeof(uint32_t));
    if (!bvh->nodes || !bvh->vertices || !bvh->triangles || !bvh->triangle_ids) {
        prism_bvh_free(bvh);
        return NULL;
    }
    bvh->vertex_count = vertex_count;
    bvh->triangle_count = triangle_count;
    return bvh;
}

/* Copy the triangles into leaf order (the references are in it already)
 * and renumber the vertices by first use in that order, unused ones last,
 * so that the triangles of a leaf, and of neighbouring leaves, read
 * neighbouring vertices: a traversal touches fewer cache lines. Serial (the
 * order is), so it runs beside reorder; *map is for copy_vertices. */
static prism_result fill_triangles(prism_bvh *bvh, const prism__bvh_ref *refs,
                                   const uint32_t *indices, uint32_t **map_out)
{
    const size_t n = bvh->triangle_count, nv = bvh->vertex_count;
    uint32_t *map = malloc((nv ? nv : 1) * sizeof *map);
    *map_out = map;
    if (!map)
        return PRISM_ERROR_OUT_OF_MEMORY;
    memset(map, 0xff, nv * sizeof *map);
    uint32_t next = 0;
    for (size_t i = 0; i < n; i++) {
        const uint32_t *t = indices + 3 * (size_t)refs[i].id;
        bvh->triangle_ids[i] = refs[i].id;
        for (int k = 0; k < 3; k++) {
            if (map[t[k]] == UINT32_MAX)
                map[t[k]] = next++;
            bvh->triangles[3 * i + k] = map[t[k]];
        }
    }
    for (size_t v = 0; v < nv; v++)
        if (map[v] == UINT32_MAX)
            map[v] = next++;
    return PRISM_SUCCESS;
}

static void copy_vertices(prism_bvh *bvh, const float *positions, const uint32_t *map, int threads)
{
    const long nv = (long)bvh->vertex_count;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (long v = 0; v < nv; v++)
        memcpy(bvh->vertices + 3 * (size_t)map[v], positions + 3 * (size_t)v, 3 * sizeof(float));
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

/* The structural stats and the SAH, from the laid-out nodes (the SAH in
 * array order, as prism_bvh_sah_cost sums it). */
static void layout_stats(prism_bvh *bvh, const uint8_t *depth)
{
    prism_bvh_stats *s = &bvh->stats;
    const double root = sah_root_area(&bvh->nodes[0]);
    double sah = 0.0;
    for (size_t k = 0; k < bvh->node_count; k++) {
        const prism_bvh_node *n = &bvh->nodes[k];
        sah += sah_term(n, root);
        if (n->count) {
            s->leaves++;
            s->max_leaf_triangles = n->count > s->max_leaf_triangles ? n->count : s->max_leaf_triangles;
        }
        s->max_depth = depth[k] > s->max_depth ? depth[k] : s->max_depth;
    }
    s->nodes = bvh->node_count;
    s->sah_cost = root > 0.0 || bvh->triangle_count ? sah : 0.0;
    s->mean_leaf_triangles = s->leaves ? (double)bvh->triangle_count / (double)s->leaves : 0.0;
}

typedef struct layout {
    prism_bvh_node *out;
    const prism_bvh_node *tmp;
    uint32_t *order; /* output position -> builder node */
    uint8_t *depth;
    size_t next;     /* next free output position (pairs) */
} layout;

/* Place node k's children as a pair at the next free positions. */
static size_t place_children(layout *l, size_t k)
{
    const uint32_t c0 = l->order[k] + 1, c1 = l->tmp[l->order[k]].first;
    const size_t q = l->next;
    l->order[q] = c0;
    l->order[q + 1] = c1;
    l->out[q] = l->tmp[c0];
    l->out[q + 1] = l->tmp[c1];
    l->depth[q] = l->depth[q + 1] = (uint8_t)(l->depth[k] + 1);
    l->out[k].first = (uint32_t)q;
    l->next += 2;
    return q;
}

/* Depth-first below node k: each sibling pair, then the first child's
 * subtree, then the second's. */
static void place_dfs(layout *l, size_t k)
{
    size_t stack[2 * PRISM_BVH_MAX_DEPTH + 2];
    int sp = 0;
    stack[sp++] = k;
    while (sp > 0) {
        size_t at = stack[--sp];
        if (l->out[at].count != 0)
            continue;
        size_t q = place_children(l, at);
        stack[sp++] = q + 1;
        stack[sp++] = q;
    }
}

/* Renumber the builder's nodes (`cap` slots, see prism__bvh_build_nodes)
 * into bvh->nodes: breadth-first down to depth `bfs_levels`, then each
 * subtree below depth-first. Node 1 is padding so that sibling pairs start
 * at even indices. Either way a child comes after its parent. */
static prism_result reorder(prism_bvh *bvh, const prism_bvh_node *tmp, size_t cap,
                            unsigned bfs_levels)
{
    const size_t pad = tmp[0].count == 0 && bvh->triangle_count, total = cap + pad;
    layout l = {bvh->nodes, tmp, malloc(total * sizeof *l.order), malloc(total), 1 + pad};
    if (!l.order || !l.depth) {
        free(l.order);
        free(l.depth);
        return PRISM_ERROR_OUT_OF_MEMORY;
    }
    l.order[0] = 0;
    l.depth[0] = 0;
    l.out[0] = tmp[0];
    if (pad) {
        l.out[1] = (prism_bvh_node){{FLT_MAX, FLT_MAX, FLT_MAX}, 0, {-FLT_MAX, -FLT_MAX, -FLT_MAX}, 0};
        l.depth[1] = 1;
    }
    size_t bfs_end = 1; /* nodes [0, bfs_end) placed breadth-first so far */
    for (size_t k = 0; k < l.next; k += (k == 0 && pad) ? 2 : 1) {
        bfs_end = k + 1;
        if (l.out[k].count == 0 && bvh->triangle_count && l.depth[k] < bfs_levels)
            place_children(&l, k);
    }
    for (size_t k = 0; k < bfs_end; k++) /* the frontier, in order */
        if (l.out[k].count == 0 && bvh->triangle_count && (k != 1 || !pad) && l.depth[k] >= bfs_levels)
            place_dfs(&l, k);
    bvh->node_count = l.next;
    layout_stats(bvh, l.depth);
    free(l.order);
    free(l.depth);
    return PRISM_SUCCESS;
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
    const double root = sah_root_area(&nodes[0]);
    double sum = 0.0;
    for (size_t i = 0; i < node_count; i++)
        sum += sah_term(&nodes[i], root);
    return sum;
}

/* ---- entry points ---------------------------------------------------- */

static prism_result build_tree(prism__bvh_builder *b, prism_bvh *bvh, const float *positions,
                               const uint32_t *indices)
{
    size_t n = bvh->triangle_count;
    size_t cap = n ? 2 * n - 1 : 1;
    b->n = n;
    b->refs = malloc((n ? n : 1) * sizeof *b->refs);
    b->nodes = malloc(cap * sizeof *b->nodes);
    b->tmp = n >= PRISM__BVH_PAR_MIN && b->threads > 1 ? malloc(n * sizeof *b->tmp) : NULL;
    prism_result r = PRISM_ERROR_OUT_OF_MEMORY;
    if (b->refs && b->nodes && (b->tmp || !(n >= PRISM__BVH_PAR_MIN && b->threads > 1))) {
        prism__bvh_build_nodes(b, positions, indices);
        prism_result r1 = PRISM_SUCCESS, r2 = PRISM_SUCCESS;
        uint32_t *map = NULL;
        /* Both are serial and independent: side by side on two threads. */
#pragma omp parallel sections num_threads(b->threads > 1 ? 2 : 1)
        {
#pragma omp section
            r1 = fill_triangles(bvh, b->refs, indices, &map);
#pragma omp section
            r2 = reorder(bvh, b->nodes, n ? 2 * n - 1 : 1, b->bfs_levels);
        }
        if (r1 == PRISM_SUCCESS)
            copy_vertices(bvh, positions, map, b->threads);
        free(map);
        r = r1 != PRISM_SUCCESS ? r1 : r2;
    }
    free(b->refs);
    free(b->nodes);
    free(b->tmp);
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
    if (r == PRISM_SUCCESS)
        r = check_arrays(positions, vertex_count, indices, triangle_count, desc);
    if (r != PRISM_SUCCESS)
        return r;
    prism_bvh *bvh = alloc_bvh(vertex_count, triangle_count);
    if (!bvh) {
        build_log(desc, PRISM_LOG_ERROR, "bvh: out of memory for %zu triangles", triangle_count);
        return PRISM_ERROR_OUT_OF_MEMORY;
    }
    prism__bvh_builder b = {0};
    resolve_desc(desc, &b);
    r = build_tree(&b, bvh, positions, indices);
    if (r != PRISM_SUCCESS) {
        build_log(desc, PRISM_LOG_ERROR, "bvh: out of memory for %zu triangles", triangle_count);
        prism_bvh_free(bvh);
        return r;
    }
    fill_stats(bvh, omp_get_wtime() - t0);
    const prism_bvh_stats *s = &bvh->stats;
    build_log(desc, PRISM_LOG_INFO,
              "bvh: %zu triangles, %zu nodes, %zu leaves, depth %u, %.2f tri/leaf (max %u), "
              "SAH %.2f, %.3f s", triangle_count, s->nodes, s->leaves, s->max_depth,
              s->mean_leaf_triangles, s->max_leaf_triangles, s->sah_cost, s->build_seconds);
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
