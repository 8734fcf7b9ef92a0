/* Small scenes for the render and propagate suites, built in memory: boxes
 * and spheres with chosen materials and surfaces, their BVH, a geometry
 * view over host arrays and the optics tables, as the host backend reads
 * them (no upload needed). */
#ifndef KERNELS_TEST_SCENE_H
#define KERNELS_TEST_SCENE_H

#include <stddef.h>
#include <stdint.h>

#include "prism/device/geometry_view.h"
#include "engine/upload/optics_tables.h"
#include "prism/bvh.h"
#include "prism/context.h"
#include "prism/geometry.h"
#include "prism/scene.h"

#define KT_MAX_PROPS 4

typedef struct kt_scene {
    /* mesh being built */
    float *positions;
    uint32_t *indices, *solid, *inner, *outer, *surface;
    size_t vertices, triangles;
    /* optics */
    prism_scene scene; /* materials/surfaces only (+ the arrays above, for upload) */
    /* built */
    prism_bvh *bvh;
    prism_triangle_info *info;
    prism_geometry_view view;
    prism_optics *optics;
} kt_scene;

/* Materials with constant properties over wavelength (0 = leave out). */
uint32_t kt_material(kt_scene *s, const char *name, float rindex, float abslength, float rayleigh);
/* A surface with constant Chroma probabilities. */
uint32_t kt_surface(kt_scene *s, const char *name, float detect, float absorb, float specular,
                    float diffuse);
/* An axis-aligned box [lo, hi], normals out; inner/outer material indices,
 * surface index or PRISM_NONE. */
void kt_box(kt_scene *s, const float lo[3], const float hi[3], uint32_t solid, uint32_t inner,
            uint32_t outer, uint32_t surface);
/* A flat quad (a, b, c, d), counter-clockwise seen from its front, split
 * along a-c into two triangles. */
void kt_quad(kt_scene *s, const float a[3], const float b[3], const float c[3], const float d[3],
             uint32_t solid, uint32_t inner, uint32_t outer, uint32_t surface);
/* A UV sphere of radius r at c with `seg` segments around, normals out. */
void kt_sphere(kt_scene *s, const float c[3], float r, unsigned seg, uint32_t solid, uint32_t inner,
               uint32_t outer, uint32_t surface);
/* Build the BVH, view and optics (ctx: a host context). Returns 0 on success. */
int kt_build(kt_scene *s, prism_context *ctx);
void kt_free(kt_scene *s, prism_context *ctx);

/* A host-backend context for the tests. */
prism_context *kt_host_context(void);
/* A cmocka group's setup and teardown around one host context, kt_ctx,
 * that the group's tests share. */
extern prism_context *kt_ctx;
int kt_host_setup(void **state);
int kt_host_teardown(void **state);
/* A CUDA context, or NULL when there is no device (the test then skips). */
prism_context *kt_cuda_context(void);
/* Upload the built scene with a placement policy. `split` forces the
 * node array apart (a device budget of 100 nodes, no reserve), as the
 * chroma policy does on a full GPU. Returns NULL on failure. */
prism_geometry *kt_upload(kt_scene *s, prism_context *ctx, prism_placement_policy policy,
                          bool split);

/* A detector-like scene: a hall of air, a water tank, a steel cube and
 * eight steel spheres inside (solids 0-10). */
void kt_detector_scene(kt_scene *s);
/* A scene with every photon process: a water sphere (Rayleigh scattering,
 * absorption) inside a vacuum box whose walls detect, absorb, reflect
 * diffusely and specularly (solids 1 and 2), the sphere cut into
 * `segments`. Not built. */
void kt_rich_scene(kt_scene *s, unsigned segments);

#endif
