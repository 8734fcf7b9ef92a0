/* Helpers of the BVH suite: triangle soups, a brute-force reference query,
 * the structural invariants, and a comparison of the BVH against brute
 * force on random rays. */
#ifndef PRISM_BVH_TEST_UTIL_H
#define PRISM_BVH_TEST_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "prism/bvh.h"

typedef struct soup {
    float *pos;
    uint32_t *idx;
    size_t nv, nt, cap_v, cap_t;
} soup;

typedef enum soup_kind {
    SOUP_MIXED = 0,  /* a bit of everything below */
    SOUP_THIN,       /* slivers: long and nearly zero-width */
    SOUP_HUGE,       /* triangles far larger than the scene's other triangles */
    SOUP_DEGENERATE, /* zero area: repeated vertices, collinear vertices */
    SOUP_COINCIDENT, /* each triangle twice (same vertices), and shared vertices */
    SOUP_SMALL       /* small ordinary triangles */
} soup_kind;

typedef struct rng {
    uint64_t s;
} rng;

float rng_float(rng *r); /* [0, 1) */
float rng_range(rng *r, float lo, float hi);

void soup_free(soup *s);
/* Call fn with the path of every .dae file in the bundled assets (the
 * test fails when there is none or the folder cannot be read). */
void for_each_asset(void (*fn)(const char *path, void *user), void *user);
uint32_t soup_vertex(soup *s, float x, float y, float z);
void soup_triangle(soup *s, uint32_t a, uint32_t b, uint32_t c);
/* Append n triangles of a kind inside the cube [-1, 1]^3, scaled and moved by `offset`. */
void soup_random(soup *s, soup_kind kind, size_t n, rng *r, float scale, const float offset[3]);
/* A closed mesh: an icosahedron subdivided `levels` times, on the unit sphere. */
void soup_sphere(soup *s, int levels, const float centre[3], float radius);
/* A closed axis-aligned box made of a grid of n x n squares per face. */
void soup_box(soup *s, const float lo[3], const float hi[3], int n);

prism_bvh *build_soup(const soup *s, unsigned leaf, unsigned quality, int threads);

/* Closest hit by testing every triangle in scene order. */
bool brute_closest(const soup *s, const prism_ray *ray, prism_hit *hit);
/* Whether triangle `id` is hit at exactly t. */
bool brute_hits_at(const soup *s, const prism_ray *ray, uint32_t id, float t);

/* Checks every structural invariant with cmocka asserts, for the default
 * (breadth-first) node order. */
void check_invariants(const prism_bvh *bvh, const soup *s, unsigned leaf);
/* The same for a tree breadth-first down to depth bfs_levels only. */
void check_invariants_order(const prism_bvh *bvh, const soup *s, unsigned leaf,
                            unsigned bfs_levels);

/* Fires n random rays (origins in the scene's box grown by `margin` of its
 * size, directions uniform; `axis_aligned` picks +-x/y/z directions only)
 * and requires the BVH to agree with brute force: the same triangle, or an
 * exact tie (same t, and brute force hits the BVH's triangle at that t).
 * Returns how many rays hit. */
size_t compare_random_rays(const prism_bvh *bvh, const soup *s, size_t n, rng *r, float margin,
                           bool axis_aligned);
/* The same for one ray. */
void compare_ray(const prism_bvh *bvh, const soup *s, const prism_ray *ray);

/* Watertightness: fires rays from `from` at every vertex of every triangle
 * and at points along its edges, and requires each to hit. From outside
 * (inside = false) only triangles clearly facing `from` (their normal,
 * oriented away from `centre`) are aimed at, so no ray grazes a silhouette.
 * Returns the number of rays fired. */
size_t fire_at_edges(const prism_bvh *bvh, const soup *s, const float from[3],
                     const float centre[3], bool inside);

#endif
