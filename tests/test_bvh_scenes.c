/* The BVH on real scenes: every bundled asset (the .dae files in assets/) and a small
 * synthetic detector from prism-gen-detector, loaded with prism_scene_load:
 * structural invariants, brute-force agreement on random rays, and
 * watertightness of the closed convex assets. The detector case skips
 * only where the tools (and so the generator) were not built. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "bvh_test_util.h"

#include "prism/scene.h"

static prism_scene *load(const char *path)
{
    char err[512] = "";
    prism_load_desc d = {.error = err, .error_size = sizeof err};
    prism_scene *scene = NULL;
    if (prism_scene_load(path, &d, &scene) != PRISM_SUCCESS)
        print_error("%s: %s\n", path, err);
    assert_non_null(scene);
    return scene;
}

/* The scene's arrays seen as a soup (borrowed, not freed). */
static soup as_soup(const prism_scene *scene)
{
    return (soup){.pos = scene->positions,
                  .idx = scene->indices,
                  .nv = scene->vertices_count,
                  .nt = scene->triangles_count};
}

static void check_scene(const char *path, size_t rays)
{
    prism_scene *scene = load(path);
    soup s = as_soup(scene);
    for (unsigned leaf = 1; leaf <= 8; leaf *= 8) {
        prism_bvh *bvh = build_soup(&s, leaf, 0, 0);
        check_invariants(bvh, &s, leaf);
        rng r = {0x5eed ^ s.nt};
        if (s.nt) {
            assert_true(compare_random_rays(bvh, &s, rays, &r, 0.1f, false) > 0);
            compare_random_rays(bvh, &s, rays / 4, &r, 0.1f, true);
        }
        prism_bvh_free(bvh);
    }
    prism_scene_free(scene);
}

static void check_asset(const char *path, void *user)
{
    (void)user;
    check_scene(path, 1000);
}

static void test_assets(void **state)
{
    (void)state;
    for_each_asset(check_asset, NULL);
}

/* The closed convex assets: rays from the middle of the box at every vertex
 * and along every edge all hit. */
static void test_assets_watertight(void **state)
{
    (void)state;
    const char *names[] = {"cube.dae", "sphere.dae"};
    size_t done = 0;
    for (size_t i = 0; i < 2; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", PRISM_ASSETS, names[i]);
        if (access(path, R_OK) != 0)
            fail_msg("%s is missing", path);
        prism_scene *scene = load(path);
        soup s = as_soup(scene);
        prism_bvh *bvh = build_soup(&s, 0, 0, 0);
        float c[3];
        for (int a = 0; a < 3; a++)
            c[a] = 0.5f * (scene->bbox_min[a] + scene->bbox_max[a]) +
                   1e-3f * (float)(a + 1) * (scene->bbox_max[a] - scene->bbox_min[a]);
        assert_int_equal(fire_at_edges(bvh, &s, c, c, true), s.nt * 15);
        prism_bvh_free(bvh);
        prism_scene_free(scene);
        done++;
    }
    assert_int_equal(done, 2);
}

static void test_detector(void **state)
{
    (void)state;
    char gen[1024], out[1024], cmd[2600];
    snprintf(gen, sizeof gen, "%s/tools/prism-gen-detector", PRISM_BINARY_DIR);
    if (access(gen, X_OK) != 0)
        skip();
    snprintf(out, sizeof out, "%s/test_bvh_detector_%ld.dae", PRISM_BINARY_DIR, (long)getpid());
    snprintf(cmd, sizeof cmd, "'%s' --pmts 40 --output '%s'", gen, out);
    assert_int_equal(system(cmd), 0);
    check_scene(out, 400);
    remove(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_assets),
        cmocka_unit_test(test_assets_watertight),
        cmocka_unit_test(test_detector),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
