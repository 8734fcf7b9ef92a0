/* The wide BVH's structural checks (bvh_wide_check.h). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "prism/device/bvh_wide.h"
#include "bvh_wide_check.h"

typedef struct walk {
    const prism_bvh *b;
    const prism_bvh_wide *w;
    unsigned char *seen_node, *seen_tri;
    unsigned max_depth;
} walk;

static void decoded_box(const prism_wide_node *n, int s, float lo[3], float hi[3])
{
    for (int k = 0; k < 3; k++) {
        lo[k] = prism__wide_plane(n->p[k], n->e[k], n->qlo[k][s]);
        hi[k] = prism__wide_plane(n->p[k], n->e[k], n->qhi[k][s]);
    }
}

/* Node i at `depth`, inside the box [lo, hi] of every ancestor slot. */
static void check_node(walk *wk, uint32_t i, unsigned depth, const float lo[3], const float hi[3])
{
    assert_true(i < wk->w->node_count);
    assert_false(wk->seen_node[i]);
    wk->seen_node[i] = 1;
    assert_true(depth <= wk->w->depth);
    wk->max_depth = depth > wk->max_depth ? depth : wk->max_depth;
    const prism_wide_node *n = &wk->w->nodes[i];
    uint32_t rank = 0, off = 0;
    for (int s = 0; s < 8; s++) {
        if (n->meta[s] == 0) {
            assert_false(n->imask >> s & 1);
            continue;
        }
        float clo[3], chi[3];
        decoded_box(n, s, clo, chi);
        for (int k = 0; k < 3; k++) { /* within the ancestors' boxes */
            clo[k] = clo[k] > lo[k] ? clo[k] : lo[k];
            chi[k] = chi[k] < hi[k] ? chi[k] : hi[k];
        }
        if (n->imask >> s & 1) {
            assert_int_equal(n->meta[s], 1 + rank);
            const uint32_t child = n->child_base + rank++;
            assert_true(child > i); /* any prefix of the array is the top of the tree */
            check_node(wk, child, depth + 1, clo, chi);
            continue;
        }
        const uint32_t count = n->meta[s] >> 5, at = n->meta[s] & 31u;
        assert_true(count >= 1 && count <= PRISM_WIDE_LEAF_MAX);
        assert_int_equal(at, off); /* leaves consecutive, in slot order */
        off += count;
        for (uint32_t j = 0; j < count; j++) {
            const uint32_t t = n->tri_base + at + j;
            assert_true(t < wk->w->triangle_count);
            const prism_wide_triangle *wt = &wk->w->triangles[t];
            assert_true(wt->index < wk->b->triangle_count);
            assert_false(wk->seen_tri[wt->index]);
            wk->seen_tri[wt->index] = 1;
            const uint32_t *v = wk->b->triangles + 3u * (size_t)wt->index;
            const float *vs[3] = {wt->a, wt->b, wt->c};
            for (int c = 0; c < 3; c++)
                for (int k = 0; k < 3; k++) {
                    const float x = wk->b->vertices[3u * (size_t)v[c] + (size_t)k];
                    assert_true(vs[c][k] == x); /* the vertex copied exactly */
                    assert_true(x >= clo[k] && x <= chi[k]);
                }
        }
    }
    assert_true(off <= 32);
}

void check_wide(const prism_bvh *b, const prism_bvh_wide *w)
{
    assert_true(w->node_count >= 1);
    assert_int_equal(w->triangle_count, b->triangle_count);
    assert_true(w->depth <= PRISM_WIDE_MAX_DEPTH);
    walk wk = {b, w, calloc(w->node_count, 1), calloc(b->triangle_count + 1, 1), 0};
    assert_non_null(wk.seen_node);
    assert_non_null(wk.seen_tri);
    const float lo[3] = {-INFINITY, -INFINITY, -INFINITY}, hi[3] = {INFINITY, INFINITY, INFINITY};
    check_node(&wk, 0, 0, lo, hi);
    for (size_t i = 0; i < w->node_count; i++)
        assert_true(wk.seen_node[i]);
    for (size_t i = 0; i < b->triangle_count; i++)
        assert_true(wk.seen_tri[i]);
    assert_int_equal(wk.max_depth, w->depth);
    free(wk.seen_node);
    free(wk.seen_tri);
}
