/* Hostile scenes for BVH builders: geometry chosen to break the usual
 * assumptions of a SAH builder (distinct centroids, boxes of nonzero area,
 * a sane spread of sizes and coordinates, a tree that stays shallow). Plain
 * C with no test framework, so the host and the CUDA builders' tests share
 * them. Every scene is deterministic (a fixed seed). */
#ifndef PRISM_BVH_HOSTILE_H
#define PRISM_BVH_HOSTILE_H

#include <stddef.h>
#include <stdint.h>

/* The scenes, NULL-terminated:
 *   identical    100k copies of one triangle (three shared vertices)
 *   collinear    100k triangles whose vertices lie exactly on one diagonal
 *                line, each spanning up to 0.1 m of its 10 m
 *   collinear_x  100k triangles on the x axis: every box is flat in y and z
 *   points       100k triangles each collapsed to a point (all degenerate)
 *   huge_tiny    one triangle spanning 1 km, and 1M triangles of 1e-6 m in a
 *                1 cm cube that the huge one cuts through
 *   extreme      50k triangles at coordinates up to +-1e7 m, sized to stay
 *                resolvable there, mixed with 50k of 1 mm..1 m near 0
 *   chain        20k small triangles along x at geometrically growing
 *                spacing: each binned SAH split peels off a few, which
 *                would give a tree hundreds of levels deep
 *   overlap      20k long slivers that all cross the scene's middle: every
 *                box overlaps every other
 *   plane        100k triangles of a grid in the plane z = 0: flat boxes
 *   minuscule    10k triangles of 1e-12 m in a cube of side 2e-11 m: the
 *                ray test's float products come near underflow
 *   single       one triangle
 *   empty        no triangles */
extern const char *const bvh_hostile_names[];

/* What bvh_hostile_scene returns. */
#define BVH_HOSTILE_OK 0
#define BVH_HOSTILE_UNKNOWN 1 /* no scene of that name */
#define BVH_HOSTILE_OUT_OF_MEMORY 2

/* Generate scene `name`: *positions gets *vertex_count x 3 floats (metres),
 * *indices *triangle_count x 3 vertex indices. Both arrays are malloc'd
 * and the caller frees them (free(); "empty" gives NULL arrays and zero
 * counts). On failure the outputs are NULL and 0. */
int bvh_hostile_scene(const char *name, float **positions, size_t *vertex_count, uint32_t **indices,
                      size_t *triangle_count);

#endif
