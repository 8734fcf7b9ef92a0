/* Polygons (concave, with holes) to triangles by ear clipping, for the
 * COLLADA loader's <polylist> and <polygons>/<ph>. Holes are bridged into
 * the outer ring first (the nearest outer vertex the hole can see), so the
 * clipper sees one simple ring. Triangles keep the outer ring's winding. */
#ifndef PRISM_COLLADA_TRIANGULATE_H
#define PRISM_COLLADA_TRIANGULATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Reusable work memory; zero-initialise, free with prism__tri_scratch_free. */
typedef struct prism__tri_scratch {
    void *nodes;
    size_t cap;
    uint32_t *holes;
    size_t holes_cap;
} prism__tri_scratch;

void prism__tri_scratch_free(prism__tri_scratch *s);

/* Triangulate one polygon. `idx` holds the rings' vertex indices one ring
 * after another (outer ring first), `sizes` the ring lengths (the top bit is
 * ignored: the loader marks holes with it), `pos` the xyz
 * positions the indices refer to (already bounds-checked). Writes at most
 * (total vertices + 2 * holes) triangles, 3 indices each, to `out` (the
 * caller sizes it) and returns how many; 0 for a degenerate polygon
 * (fewer than 3 distinct vertices, or no area); SIZE_MAX when out of memory. */
size_t prism__triangulate(prism__tri_scratch *s, const float *pos, const uint32_t *idx,
                          const uint32_t *sizes, size_t rings, uint32_t *out);

#endif
