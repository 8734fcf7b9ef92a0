/* The geometry upload on the host backend: every policy, a forced budget
 * that splits the nodes, demotion after a device allocation failure, the
 * refusals (deny_mapped, device policy, mismatched BVH), and the kernels'
 * view of every array read back against the BVH and the scene, including
 * traversal of a split node array. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "prism/device/bvh_traverse.h"
#include "prism/device/bvh_wide_traverse.h"
#include "engine/upload/geometry_internal.h"
#include "engine/memory/internal.h"
#include "prism/geometry.h"
#include "prism/memory.h"

#define MB ((size_t)1000000)

/* A grid of boxes, 12 triangles each; solid i has material i % 3 inside
 * and material 3 outside; every other box has surface 0. */
enum { BOXES_X = 8, BOXES_Y = 8, BOXES_Z = 4, BOXES = BOXES_X * BOXES_Y * BOXES_Z };

static float positions[BOXES * 8 * 3];
static uint32_t indices[BOXES * 12 * 3];
static uint32_t tri_solid[BOXES * 12], tri_inner[BOXES * 12], tri_outer[BOXES * 12],
    tri_surface[BOXES * 12];
static prism_material materials[4] = {
    {"air", NULL, 0}, {"water", NULL, 0}, {"glass", NULL, 0}, {"rock", NULL, 0}};
static prism_surface surfaces[1] = {{.name = "pmt", .kind = PRISM_SURFACE_SKIN}};
static prism_scene scene;
static prism_bvh *bvh;

static void make_box(int b, float x, float y, float z)
{
    static const int faces[12][3] = {{0, 2, 1}, {1, 2, 3}, {4, 5, 6}, {5, 7, 6},
                                     {0, 1, 4}, {1, 5, 4}, {2, 6, 3}, {3, 6, 7},
                                     {0, 4, 2}, {2, 4, 6}, {1, 3, 5}, {3, 7, 5}};
    for (int c = 0; c < 8; c++) {
        positions[(b * 8 + c) * 3 + 0] = x + (float)(c & 1) * 0.8f;
        positions[(b * 8 + c) * 3 + 1] = y + (float)((c >> 1) & 1) * 0.8f;
        positions[(b * 8 + c) * 3 + 2] = z + (float)((c >> 2) & 1) * 0.8f;
    }
    for (int t = 0; t < 12; t++) {
        int tri = b * 12 + t;
        for (int k = 0; k < 3; k++)
            indices[tri * 3 + k] = (uint32_t)(b * 8 + faces[t][k]);
        tri_solid[tri] = (uint32_t)b;
        tri_inner[tri] = (uint32_t)(b % 3);
        tri_outer[tri] = b % 5 == 0 ? PRISM_NONE : 3;
        tri_surface[tri] = b % 2 ? 0 : PRISM_NONE;
    }
}

static int setup(void **state)
{
    (void)state;
    int b = 0;
    for (int i = 0; i < BOXES_X; i++)
        for (int j = 0; j < BOXES_Y; j++)
            for (int k = 0; k < BOXES_Z; k++)
                make_box(b++, (float)i, (float)j, (float)k);
    scene = (prism_scene){.positions = positions,
                          .vertices_count = BOXES * 8,
                          .indices = indices,
                          .triangles_count = BOXES * 12,
                          .triangle_solid = tri_solid,
                          .triangle_material_inner = tri_inner,
                          .triangle_material_outer = tri_outer,
                          .triangle_surface = tri_surface,
                          .materials = materials,
                          .materials_count = 4,
                          .surfaces = surfaces,
                          .surfaces_count = 1};
    prism_bvh_desc d = {.max_leaf_size = 2};
    return prism_bvh_build(positions, BOXES * 8, indices, BOXES * 12, &d, &bvh) == PRISM_SUCCESS
               ? 0
               : -1;
}

static int teardown(void **state)
{
    (void)state;
    prism_bvh_free(bvh);
    return 0;
}

static prism_context *make(bool deny_mapped)
{
    prism_context_desc d = {.backend = PRISM_BACKEND_HOST, .deny_mapped_memory = deny_mapped};
    prism_context *ctx = NULL;
    assert_int_equal(prism_context_create(&d, &ctx), PRISM_SUCCESS);
    return ctx;
}

/* The kernels' view holds exactly the BVH's arrays and the scene's codes. */
static void check_view_of(const prism_geometry *g, const prism_scene *sc, const prism_bvh *b)
{
    const prism_geometry_view *v = prism__geometry_view(g);
    assert_int_equal(v->node_count, b->node_count);
    assert_int_equal(v->triangle_count, b->triangle_count);
    assert_int_equal(v->vertex_count, b->vertex_count);
    for (uint32_t i = 0; i < v->node_count; i++) {
        prism_bvh_node n = prism_view_node(v, i);
        assert_memory_equal(&n, &b->nodes[i], sizeof n);
    }
    if (b->vertex_count)
        assert_memory_equal(v->vertices, b->vertices, b->vertex_count * 12);
    if (b->triangle_count)
        assert_memory_equal(v->triangles, b->triangles, b->triangle_count * 12);
    for (size_t i = 0; i < b->triangle_count; i++) {
        const prism_triangle_info *t = &v->triangle_info[i];
        uint32_t id = b->triangle_ids[i];
        uint32_t outer = sc->triangle_material_outer[id];
        assert_int_equal(t->id, id);
        assert_int_equal(t->solid, sc->triangle_solid[id]);
        assert_int_equal(t->materials & 0xFFFF, sc->triangle_material_inner[id] == PRISM_NONE
                                                    ? 0xFFFF
                                                    : sc->triangle_material_inner[id]);
        assert_int_equal(t->materials >> 16, outer == PRISM_NONE ? 0xFFFF : outer);
        assert_int_equal(t->surface, sc->triangle_surface[id]);
    }
    assert_memory_equal(v->bbox_lo, b->nodes[0].lo, 12);
}

static void check_view(const prism_geometry *g)
{
    check_view_of(g, &scene, bvh);
}

/* Rays through the view hit what the CPU reference hits. */
static void check_traversal(const prism_geometry *g)
{
    const prism_geometry_view *v = prism__geometry_view(g);
    unsigned seed = 12345;
    for (int r = 0; r < 500; r++) {
        seed = seed * 1103515245u + 12345u;
        float a = (float)(seed >> 8 & 0xFFFF) / 65536.0f, b = (float)(seed >> 4 & 0xFFF) / 4096.0f;
        prism_ray ray = {
            {-2.0f, 8.0f * a, 4.0f * b}, 0.0f, {1.0f, 0.1f * (a - 0.5f), 0.05f}, 1e30f};
        prism_hit h1, h2;
        int hit1 = prism_bvh_closest(v, &ray, &h1);
        bool hit2 = prism_bvh_intersect(bvh, &ray, &h2);
        assert_int_equal(hit1 != 0, hit2);
        if (hit1) {
            assert_int_equal(v->triangle_info[h1.triangle].id, h2.triangle);
            assert_true(h1.t == h2.t);
        }
    }
}

/* Nothing but what the context's staging pool holds; then trimmed, nothing. */
static void assert_ledger_empty(prism_context *ctx)
{
    prism_memory_report r;
    assert_int_equal(prism_memory_report_get(ctx, &r), PRISM_SUCCESS);
    assert_int_equal(r.total.bytes, r.pool_held_bytes);
    for (size_t i = 0; i < r.tags_count; i++)
        assert_string_equal(r.tags[i].tag, "upload.staging.held");
    prism_memory_trim(ctx);
    assert_int_equal(prism_memory_report_get(ctx, &r), PRISM_SUCCESS);
    assert_int_equal(r.total.count, 0);
}

static void test_every_policy(void **state)
{
    (void)state;
    prism_context *ctx = make(false);
    for (int p = 0; p < PRISM_PLACEMENT_POLICY_COUNT_; p++) {
        prism_geometry_desc d = {.policy = p, .host_free_memory = 1000 * MB, .chunk_bytes = 1000};
        prism_geometry *g = NULL;
        assert_int_equal(prism_geometry_upload(ctx, &scene, bvh, &d, &g), PRISM_SUCCESS);
        check_view(g);
        check_traversal(g);
        const prism_upload_report *rep = prism_geometry_report(g);
        assert_int_equal(rep->array_count, 4);
        assert_int_equal(rep->policy, p);
        assert_string_equal(rep->arrays[0].name, "bvh.nodes");
        size_t total = 0;
        for (int i = 0; i < 4; i++) {
            assert_int_equal(rep->arrays[i].device_bytes + rep->arrays[i].mapped_bytes,
                             rep->arrays[i].bytes);
            assert_true(rep->arrays[i].reason[0] != 0);
            total += rep->arrays[i].bytes;
        }
        assert_int_equal(rep->device_bytes + rep->mapped_bytes, total);
        if (p == PRISM_PLACEMENT_MAPPED)
            assert_int_equal(rep->device_bytes, 0);
        else
            assert_int_equal(rep->mapped_bytes, 0);
        /* the ledger holds them under their names */
        prism_memory_report mr;
        prism_memory_report_get(ctx, &mr);
        bool nodes_seen = false;
        for (size_t i = 0; i < mr.tags_count; i++)
            nodes_seen |= strcmp(mr.tags[i].tag, "bvh.nodes") == 0;
        assert_true(nodes_seen);
        char text[4096];
        assert_true(prism_geometry_report_format(rep, text, sizeof text) < sizeof text);
        assert_non_null(strstr(text, "triangle_info"));
        prism_geometry_destroy(g);
        /* the staging chunks stay in the context's pool for the next upload */
        prism_memory_report_get(ctx, &mr);
        if (p != PRISM_PLACEMENT_MAPPED)
            assert_true(mr.pool_held_bytes > 0);
        assert_ledger_empty(ctx);
    }
    assert_int_equal(prism_context_destroy(ctx), PRISM_SUCCESS);
}

static void test_budget_splits_nodes(void **state)
{
    (void)state;
    prism_context *ctx = make(false);
    size_t nodes = bvh->node_count * sizeof(prism_bvh_node);
    prism_geometry_desc d = {.budget = 300 * MB + nodes / 3 + 5, .chunk_bytes = 256};
    prism_geometry *g;
    assert_int_equal(prism_geometry_upload(ctx, &scene, bvh, &d, &g), PRISM_SUCCESS);
    const prism_geometry_view *v = prism__geometry_view(g);
    assert_true(v->nodes_split > 0 && v->nodes_split < v->node_count);
    assert_int_equal(v->nodes_split, (nodes / 3 + 5) / 32);
    assert_non_null(v->nodes_tail);
    const prism_upload_report *rep = prism_geometry_report(g);
    assert_non_null(strstr(rep->arrays[0].reason, "split at element"));
    assert_int_equal(rep->free_bytes, d.budget);
    check_view(g);
    check_traversal(g);
    prism_geometry_destroy(g);
    /* Chroma's rule with the same budget: at least 100 nodes, triangles and
     * vertices stay mapped (nothing is left above the reserve). */
    d.policy = PRISM_PLACEMENT_CHROMA;
    assert_int_equal(prism_geometry_upload(ctx, &scene, bvh, &d, &g), PRISM_SUCCESS);
    rep = prism_geometry_report(g);
    assert_int_equal(rep->arrays[1].device_bytes, 0);
    check_view(g);
    check_traversal(g);
    prism_geometry_destroy(g);
    assert_ledger_empty(ctx);
    assert_int_equal(prism_context_destroy(ctx), PRISM_SUCCESS);
}

static void test_demotion(void **state)
{
    (void)state;
    prism_context *ctx = make(false);
    prism_geometry_desc d = {.policy = PRISM_PLACEMENT_DEVICE, .host_free_memory = 1000 * MB};
    prism_geometry *g;
    prism__memory_inject_device_failures(ctx, 1); /* the nodes' allocation fails */
    assert_int_equal(prism_geometry_upload(ctx, &scene, bvh, &d, &g), PRISM_SUCCESS);
    const prism_upload_report *rep = prism_geometry_report(g);
    assert_true(rep->arrays[0].demoted);
    assert_int_equal(rep->arrays[0].mapped_bytes, rep->arrays[0].bytes);
    assert_non_null(strstr(rep->arrays[0].reason, "demoted to mapped"));
    assert_false(rep->arrays[1].demoted);
    check_view(g);
    check_traversal(g);
    prism_geometry_destroy(g);
    /* demotion needs mapped memory: refused, the upload fails and leaves nothing */
    prism_context *deny = make(true);
    prism__memory_inject_device_failures(deny, 2);
    g = (prism_geometry *)1;
    assert_int_equal(prism_geometry_upload(deny, &scene, bvh, &d, &g),
                     PRISM_ERROR_MAPPED_NOT_ALLOWED);
    assert_null(g);
    assert_ledger_empty(deny);
    assert_int_equal(prism_context_destroy(deny), PRISM_SUCCESS);
    assert_ledger_empty(ctx);
    assert_int_equal(prism_context_destroy(ctx), PRISM_SUCCESS);
}

static void test_refusals(void **state)
{
    (void)state;
    prism_context *deny = make(true);
    prism_geometry *g = NULL;
    prism_geometry_desc d = {.policy = PRISM_PLACEMENT_MAPPED};
    assert_int_equal(prism_geometry_upload(deny, &scene, bvh, &d, &g),
                     PRISM_ERROR_MAPPED_NOT_ALLOWED);
    assert_non_null(strstr(prism_context_last_error(deny), "deny_mapped_memory"));
    d = (prism_geometry_desc){.budget = 300 * MB + 100};
    assert_int_equal(prism_geometry_upload(deny, &scene, bvh, &d, &g), PRISM_ERROR_PLACEMENT);
    assert_non_null(strstr(prism_context_last_error(deny), "\"bvh.nodes\" needs"));
    assert_ledger_empty(deny);
    assert_int_equal(prism_context_destroy(deny), PRISM_SUCCESS);

    prism_context *ctx = make(false);
    d = (prism_geometry_desc){.policy = PRISM_PLACEMENT_DEVICE, .host_free_memory = 300 * MB + 10};
    assert_int_equal(prism_geometry_upload(ctx, &scene, bvh, &d, &g), PRISM_ERROR_PLACEMENT);
    assert_non_null(strstr(prism_context_last_error(ctx), "policy device"));
    /* a scene that does not match the BVH */
    prism_scene small = scene;
    small.triangles_count = 10;
    assert_int_equal(prism_geometry_upload(ctx, &small, bvh, NULL, &g),
                     PRISM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(prism_context_last_error(ctx), "do not match"));
    assert_int_equal(prism_geometry_upload(ctx, NULL, NULL, NULL, &g),
                     PRISM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(prism_context_last_error(ctx), "neither a BVH nor a scene"));
    assert_int_equal(prism_geometry_upload(NULL, &scene, bvh, NULL, &g),
                     PRISM_ERROR_INVALID_ARGUMENT);
    /* no BVH: the CUDA builder cannot run on the host backend; a builder
     * that is no prism_bvh_builder is refused */
    d = (prism_geometry_desc){.builder = PRISM_BVH_BUILDER_CUDA};
    assert_int_equal(prism_geometry_upload(ctx, &scene, NULL, &d, &g), PRISM_ERROR_UNSUPPORTED);
    assert_non_null(strstr(prism_context_last_error(ctx), "host backend has no device builder"));
    d = (prism_geometry_desc){.builder = PRISM_BVH_BUILDER_GIVEN};
    assert_int_equal(prism_geometry_upload(ctx, &scene, NULL, &d, &g),
                     PRISM_ERROR_INVALID_ARGUMENT);
    /* the host build's own errors come through, with what failed */
    uint32_t bad[3] = {0, 1, 1u << 30};
    prism_scene broken = scene;
    broken.indices = bad;
    broken.triangles_count = 1;
    assert_int_equal(prism_geometry_upload(ctx, &broken, NULL, NULL, &g),
                     PRISM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(prism_context_last_error(ctx), "host BVH build"));
    assert_ledger_empty(ctx);
    prism_geometry_destroy(NULL);
    assert_null(prism_geometry_report(NULL));
    assert_int_equal(prism_context_destroy(ctx), PRISM_SUCCESS);
}

static void test_no_scene_and_empty(void **state)
{
    (void)state;
    prism_context *ctx = make(false);
    prism_geometry *g;
    assert_int_equal(prism_geometry_upload(ctx, NULL, bvh, NULL, &g), PRISM_SUCCESS);
    const prism_geometry_view *v = prism__geometry_view(g);
    assert_int_equal(v->triangle_info[0].solid, PRISM_NONE);
    assert_int_equal(v->triangle_info[0].materials, 0xFFFFFFFFu);
    assert_null(prism__geometry_optics(g));
    assert_ptr_equal(prism__geometry_context(g), ctx);
    prism_geometry_destroy(g);
    prism_bvh *empty;
    assert_int_equal(prism_bvh_build(NULL, 0, NULL, 0, NULL, &empty), PRISM_SUCCESS);
    assert_int_equal(prism_geometry_upload(ctx, NULL, empty, NULL, &g), PRISM_SUCCESS);
    v = prism__geometry_view(g);
    assert_int_equal(v->triangle_count, 0);
    assert_int_equal(v->node_count, empty->node_count);
    prism_geometry_destroy(g);
    prism_bvh_free(empty);
    /* a geometry left alive is named at context destruction */
    assert_int_equal(prism_geometry_upload(ctx, NULL, bvh, NULL, &g), PRISM_SUCCESS);
    assert_int_equal(prism_context_destroy(ctx), PRISM_ERROR_LIVE_ALLOCATIONS);
    free(g); /* its memory went with the context; only the handle is left */
}

/* No BVH given: the host backend builds one on the host (AUTO and HOST),
 * the same tree prism_bvh_build makes with the same descriptor, uploaded
 * as it would be, and the report says who built it and why. */
static void test_builds_when_no_bvh(void **state)
{
    (void)state;
    prism_context *ctx = make(false);
    prism_bvh_desc bd = {.max_leaf_size = 2};
    for (int builder = PRISM_BVH_BUILDER_AUTO; builder <= PRISM_BVH_BUILDER_HOST; builder++) {
        prism_geometry_desc d = {.builder = (prism_bvh_builder)builder, .bvh = &bd};
        prism_geometry *g = NULL;
        assert_int_equal(prism_geometry_upload(ctx, &scene, NULL, &d, &g), PRISM_SUCCESS);
        check_view(g); /* bvh was built with the same descriptor in setup */
        check_traversal(g);
        const prism_upload_report *r = prism_geometry_report(g);
        assert_int_equal(r->bvh.builder, PRISM_BVH_BUILDER_HOST);
        assert_int_equal(r->bvh.stats.nodes, bvh->node_count);
        assert_true(r->bvh.stats.sah_cost == bvh->stats.sah_cost);
        assert_non_null(
            strstr(r->bvh.why, builder == PRISM_BVH_BUILDER_HOST ? "asked for" : "host backend"));
        char text[4096];
        prism_geometry_report_format(r, text, sizeof text);
        assert_non_null(strstr(text, "bvh: host build"));
        prism_geometry_destroy(g);
    }
    /* a caller's BVH is reported as given */
    prism_geometry *g = NULL;
    assert_int_equal(prism_geometry_upload(ctx, &scene, bvh, NULL, &g), PRISM_SUCCESS);
    assert_int_equal(prism_geometry_report(g)->bvh.builder, PRISM_BVH_BUILDER_GIVEN);
    assert_string_equal(prism_bvh_builder_name(PRISM_BVH_BUILDER_GIVEN), "given");
    assert_string_equal(prism_bvh_builder_name(PRISM_BVH_BUILDER_CUDA), "cuda");
    prism_geometry_destroy(g);
    /* an empty scene builds the empty BVH */
    prism_scene empty = {0};
    assert_int_equal(prism_geometry_upload(ctx, &empty, NULL, NULL, &g), PRISM_SUCCESS);
    assert_int_equal(prism__geometry_view(g)->triangle_count, 0);
    assert_int_equal(prism__geometry_view(g)->node_count, 1);
    prism_geometry_destroy(g);
    assert_ledger_empty(ctx);
    assert_int_equal(prism_context_destroy(ctx), PRISM_SUCCESS);
}

/* The bundled assets, loaded and uploaded under each policy and with a
 * budget that splits the nodes: the kernels' view reads back the same
 * triangles, codes and nodes. */
static void test_bundled_assets(void **state)
{
    (void)state;
    static const char *const files[] = {"cube.dae", "box_with_hole.dae", "sphere.dae",
                                        "tiny_detector.dae"};
    prism_context *ctx = make(false);
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", PRISM_ASSETS, files[f]);
        prism_scene *sc = NULL;
        assert_int_equal(prism_scene_load(path, NULL, &sc), PRISM_SUCCESS);
        prism_bvh *b = NULL;
        assert_int_equal(prism_bvh_build(sc->positions, sc->vertices_count, sc->indices,
                                         sc->triangles_count, NULL, &b),
                         PRISM_SUCCESS);
        for (int p = 0; p <= PRISM_PLACEMENT_POLICY_COUNT_; p++) {
            /* the extra round: auto with a budget of half the nodes */
            prism_geometry_desc d = {.policy = p % PRISM_PLACEMENT_POLICY_COUNT_,
                                     .host_free_memory = 1000 * MB};
            if (p == PRISM_PLACEMENT_POLICY_COUNT_)
                d.budget = 300 * MB + b->node_count * 16;
            prism_geometry *g = NULL;
            assert_int_equal(prism_geometry_upload(ctx, sc, b, &d, &g), PRISM_SUCCESS);
            check_view_of(g, sc, b);
            if (p == PRISM_PLACEMENT_POLICY_COUNT_ && b->node_count > 1)
                assert_true(prism__geometry_view(g)->nodes_split < b->node_count);
            prism_geometry_destroy(g);
        }
        prism_bvh_free(b);
        prism_scene_free(sc);
    }
    assert_ledger_empty(ctx);
    assert_int_equal(prism_context_destroy(ctx), PRISM_SUCCESS);
}

/* A counting allocator that can be told to fail its k-th allocation. */
typedef struct counting {
    int allocations, releases, fail_at; /* fail_at 0: never */
    size_t live_bytes;
} counting;

static void *counting_allocate(void *user, size_t bytes)
{
    counting *c = user;
    if (c->fail_at && c->allocations + 1 == c->fail_at)
        return NULL;
    c->allocations++;
    c->live_bytes += bytes;
    return malloc(bytes);
}

static void counting_release(void *user, void *p, size_t bytes)
{
    counting *c = user;
    c->releases++;
    c->live_bytes -= bytes;
    free(p);
}

static size_t ledger_tagged(const prism_context *ctx, const char *tag, int *count)
{
    size_t bytes = 0;
    *count = 0;
    for (const prism__allocation *a = ctx->memory->allocations; a; a = a->next)
        if (strcmp(a->tag, tag) == 0) {
            bytes += a->bytes;
            ++*count;
        }
    return bytes;
}

/* prism_load_desc.arrays: the six world arrays come from the allocator
 * and go back to it (sizes matching) when the scene is freed; an
 * allocation that fails fails the load with nothing left. The context's
 * pinned allocator puts them in its ledger as "scene.arrays" (heap memory
 * on the host backend, where the upload stages them as before). */
static void test_scene_arrays_allocator(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/tiny_detector.dae", PRISM_ASSETS);
    counting c = {0};
    prism_allocator a = {counting_allocate, counting_release, &c};
    prism_load_desc ld = {.arrays = &a};
    prism_scene *sc = NULL;
    assert_int_equal(prism_scene_load(path, &ld, &sc), PRISM_SUCCESS);
    assert_int_equal(c.allocations, 6);
    assert_true(c.live_bytes >= sc->vertices_count * 12 + sc->triangles_count * 28);
    assert_ptr_equal(sc->arrays_allocator.user, &c);
    prism_scene_free(sc);
    assert_int_equal(c.releases, 6);
    assert_int_equal(c.live_bytes, 0);
    for (int k = 1; k <= 6; k++) {
        c = (counting){.fail_at = k};
        char error[256] = "";
        prism_load_desc bad = {.arrays = &a, .error = error, .error_size = sizeof error};
        sc = NULL;
        assert_int_equal(prism_scene_load(path, &bad, &sc), PRISM_ERROR_OUT_OF_MEMORY);
        assert_null(sc);
        assert_int_equal(c.allocations, c.releases);
        assert_int_equal(c.live_bytes, 0);
        assert_true(strlen(error) > 0);
    }
    prism_context *ctx = make(false);
    prism_allocator pinned;
    assert_int_equal(prism_pinned_allocator(ctx, NULL), PRISM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(prism_pinned_allocator(NULL, &pinned), PRISM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(prism_pinned_allocator(ctx, &pinned), PRISM_SUCCESS);
    ld.arrays = &pinned;
    assert_int_equal(prism_scene_load(path, &ld, &sc), PRISM_SUCCESS);
    int count = 0;
    size_t held = ledger_tagged(ctx, "scene.arrays", &count);
    assert_int_equal(count, 6);
    assert_true(held >= sc->vertices_count * 12 + sc->triangles_count * 28);
    assert_false(prism__host_pinned(ctx, sc->positions, 12)); /* host backend: nothing pinned */
    prism_geometry *g = NULL;
    assert_int_equal(prism_geometry_upload(ctx, sc, NULL, NULL, &g), PRISM_SUCCESS);
    assert_string_equal(prism_geometry_report(g)->inputs_path, ""); /* host build: no inputs */
    prism_bvh *b = NULL;
    assert_int_equal(prism_bvh_build(sc->positions, sc->vertices_count, sc->indices,
                                     sc->triangles_count, NULL, &b),
                     PRISM_SUCCESS);
    check_view_of(g, sc, b);
    prism_bvh_free(b);
    prism_geometry_destroy(g);
    prism_scene_free(sc);
    assert_ledger_empty(ctx);
    assert_int_equal(prism_context_destroy(ctx), PRISM_SUCCESS);
}

/* The threads' pieces cover the range exactly once, on granule boundaries. */
static void count_warning(void *user, prism_log_level level, const char *message)
{
    if (level == PRISM_LOG_WARNING && strstr(message, "vertices not shared with GL buffer 42"))
        ++*(int *)user;
}

/* A GL vertex buffer on the host backend (no interop, nor GL needed to see
 * that): the vertices are uploaded as usual, 2 copies, and the log says so
 * once; the map around a launch gives the geometry's own view. */
static void test_gl_vertices_fallback(void **state)
{
    (void)state;
    int warnings = 0;
    prism_context_desc cd = {.backend = PRISM_BACKEND_HOST,
                             .log = count_warning,
                             .log_user = &warnings,
                             .log_level = PRISM_LOG_WARNING};
    prism_context *ctx = NULL;
    assert_int_equal(prism_context_create(&cd, &ctx), PRISM_SUCCESS);
    prism_geometry *g = NULL;
    prism_geometry_desc d = {.gl_vertex_buffer = 42};
    assert_int_equal(prism_geometry_upload(ctx, &scene, bvh, &d, &g), PRISM_SUCCESS);
    assert_int_equal(warnings, 1);
    assert_string_equal(prism_context_last_error(ctx), "");
    assert_false(prism_geometry_vertices_shared(g));
    assert_false(prism_geometry_vertices_shared(NULL));
    const prism_upload_entry *e = &prism_geometry_report(g)->arrays[2];
    assert_string_equal(e->name, "vertices");
    assert_false(e->gl_shared);
    assert_int_equal(e->device_bytes + e->mapped_bytes, bvh->vertex_count * 12);
    check_view(g);
    prism_geometry_view v;
    assert_int_equal(prism__geometry_map(g, &v), PRISM_SUCCESS);
    assert_memory_equal(&v, prism__geometry_view(g), sizeof v);
    assert_int_equal(prism__geometry_unmap(g), PRISM_SUCCESS);
    prism_geometry_destroy(g);
    assert_ledger_empty(ctx);
    assert_int_equal(prism_context_destroy(ctx), PRISM_SUCCESS);
}

static void fill_index(void *user, size_t first, size_t n, void *dst, bool plain)
{
    unsigned *calls = user; /* [0] calls, [1] misaligned pieces: no cmocka in threads */
    (void)plain;            /* the bytes are checked, not how they were stored */
#pragma omp atomic
    calls[0]++;
    if (first % 96) {
#pragma omp atomic
        calls[1]++;
    }
    for (size_t i = 0; i < n; i++)
        ((unsigned char *)dst)[i] = (unsigned char)((first + i) * 7 / 96);
}

static void test_parallel_fill_and_staged_copy(void **state)
{
    (void)state;
    size_t n = (5u << 20) + 1234 * 12; /* not a multiple of the granule */
    unsigned char *buf = malloc(n);
    unsigned calls[2] = {0, 0};
    prism__parallel_fill(fill_index, calls, 96 * 1000, n, 96, buf);
    assert_true(calls[0] > 1);
    assert_int_equal(calls[1], 0);
    for (size_t i = 0; i < n; i += 7)
        assert_int_equal(buf[i], (unsigned char)((96 * 1000 + i) * 7 / 96));
    /* through the staging buffers into "device" memory, in odd-sized chunks */
    prism_context *ctx = make(false);
    prism__staging st;
    assert_int_equal(prism__staging_open(ctx, 96 * 3001, &st), PRISM_SUCCESS);
    prism_buffer *dst;
    assert_int_equal(prism_buffer_create_device(ctx, n, "staged", &dst), PRISM_SUCCESS);
    calls[0] = calls[1] = 0;
    assert_int_equal(prism__staged_copy(&st, dst, n, fill_index, calls, 96), PRISM_SUCCESS);
    assert_int_equal(calls[1], 0);
    unsigned char *back = malloc(n);
    assert_int_equal(prism_buffer_read(dst, 0, back, n), PRISM_SUCCESS);
    for (size_t i = 0; i < n; i++)
        if (back[i] != (unsigned char)(i * 7 / 96))
            fail_msg("byte %zu", i);
    prism__staging_close(&st);
    prism_buffer_release(dst);
    free(back);
    free(buf);
    assert_ledger_empty(ctx);
    assert_int_equal(prism_context_destroy(ctx), PRISM_SUCCESS);
}

/* The wide tree (engine/upload/wide.c): made with traversal WIDE and, on
 * the host backend, by default (AUTO), not with BINARY; where made, the
 * view's wide walk hits what the CPU reference hits, the ledger holds its
 * arrays under their names, and destroying the geometry frees them. */
static void test_wide_tree(void **state)
{
    (void)state;
    prism_context *ctx = make(false);
    const prism_traversal modes[3] = {PRISM_TRAVERSAL_WIDE, PRISM_TRAVERSAL_BINARY,
                                      PRISM_TRAVERSAL_AUTO};
    for (int m = 0; m < 3; m++)
        for (int p = 0; p < PRISM_PLACEMENT_POLICY_COUNT_; p++) {
            prism_geometry_desc d = {.policy = p,
                                     .host_free_memory = 1000 * MB,
                                     .traversal = modes[m]};
            prism_geometry *g = NULL;
            assert_int_equal(prism_geometry_upload(ctx, &scene, bvh, &d, &g), PRISM_SUCCESS);
            const prism_geometry_view *v = prism__geometry_view(g);
            prism_memory_report mr;
            assert_int_equal(prism_memory_report_get(ctx, &mr), PRISM_SUCCESS);
            bool nodes_seen = false, triangles_seen = false;
            for (size_t i = 0; i < mr.tags_count; i++) {
                nodes_seen |= strcmp(mr.tags[i].tag, "bvh.wide_nodes") == 0 && mr.tags[i].bytes > 0;
                triangles_seen |= strcmp(mr.tags[i].tag, "bvh.wide_triangles") == 0 &&
                                  mr.tags[i].bytes >=
                                      bvh->triangle_count * sizeof(prism_wide_triangle);
            }
            const prism_upload_report *rep = prism_geometry_report(g);
            char text[4096];
            assert_true(prism_geometry_report_format(rep, text, sizeof text) < sizeof text);
            if (m == 1) {
                assert_int_equal(v->wide_count, 0);
                assert_int_equal(rep->wide_nodes, 0);
                assert_null(strstr(text, "wide bvh"));
                assert_false(nodes_seen || triangles_seen);
                prism_geometry_destroy(g);
                continue;
            }
            assert_true(v->wide_count > 0 && v->wide_split == v->wide_count);
            assert_int_equal(rep->wide_nodes, v->wide_count);
            assert_int_equal(rep->wide_node_bytes, v->wide_count * sizeof(prism_wide_node));
            assert_int_equal(rep->wide_triangle_bytes,
                             bvh->triangle_count * sizeof(prism_wide_triangle));
            assert_int_equal(rep->wide_mapped, p == PRISM_PLACEMENT_MAPPED);
            assert_non_null(strstr(text, "wide bvh"));
            assert_true(nodes_seen && triangles_seen);
            check_view(g);
            unsigned seed = 777;
            size_t hits = 0;
            for (int r = 0; r < 500; r++) {
                seed = seed * 1103515245u + 12345u;
                float a = (float)(seed >> 8 & 0xFFFF) / 65536.0f,
                      b = (float)(seed >> 4 & 0xFFF) / 4096.0f;
                prism_ray ray = {
                    {-2.0f, 8.0f * a, 4.0f * b}, 0.0f, {1.0f, 0.1f * (a - 0.5f), 0.05f}, 1e30f};
                prism_hit h1, h2;
                const int hit1 = prism_wide_closest_skip(v, &ray, PRISM_BVH_MISS, &h1);
                const bool hit2 = prism_bvh_intersect(bvh, &ray, &h2);
                assert_int_equal(hit1 != 0, hit2);
                assert_int_equal(prism_wide_any(v, &ray) != PRISM_BVH_MISS, hit2);
                if (hit1) {
                    assert_int_equal(v->triangle_info[h1.triangle].id, h2.triangle);
                    assert_true(h1.t == h2.t);
                    hits++;
                }
            }
            assert_true(hits > 50);
            prism_geometry_destroy(g);
        }
    assert_ledger_empty(ctx);
    prism_context_destroy(ctx);
}

/* The descriptor's settings: values outside their sets are refused with
 * a message naming the field; the upload trace comes through the
 * context's log at DEBUG, one line a stage, and only when asked for;
 * validate_bvh checks the tree the host builds and passes it. */
typedef struct trace_log {
    int debug, upload_lines, validated;
} trace_log;

static void count_trace(void *user, prism_log_level level, const char *message)
{
    trace_log *t = user;
    t->validated += strstr(message, "passed prism_bvh_validate") != NULL;
    if (level != PRISM_LOG_DEBUG)
        return;
    t->debug++;
    t->upload_lines += strncmp(message, "upload: ", 8) == 0 && strstr(message, " ms") != NULL;
}

static void test_settings(void **state)
{
    (void)state;
    trace_log t = {0};
    prism_context_desc cd = {.backend = PRISM_BACKEND_HOST,
                             .log = count_trace,
                             .log_user = &t,
                             .log_level = PRISM_LOG_DEBUG};
    prism_context *ctx = NULL;
    assert_int_equal(prism_context_create(&cd, &ctx), PRISM_SUCCESS);
    prism_geometry *g = NULL;
    const struct {
        prism_geometry_desc d;
        const char *says;
    } bad[] = {{{.traversal = (prism_traversal)3}, "traversal 3"},
               {{.cuda_bvh_radius = 12}, "cuda_bvh_radius 12"},
               {{.cuda_bvh_tail = 1}, "cuda_bvh_tail 1"},
               {{.cuda_bvh_tail = PRISM_BVH_CUDA_TAIL_MAX + 1}, "cuda_bvh_tail 4097"},
               {{.trace = 1u << 5}, "trace 0x20"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(prism_geometry_upload(ctx, &scene, bvh, &bad[i].d, &g),
                         PRISM_ERROR_INVALID_ARGUMENT);
        assert_null(g);
        assert_non_null(strstr(prism_context_last_error(ctx), bad[i].says));
    }
    /* the limits themselves, the CUDA-only fields ignored by the host build */
    prism_bvh_desc bd = {.max_leaf_size = 2}; /* setup's, so check_view applies */
    const prism_geometry_desc good = {.bvh = &bd,
                                      .cuda_bvh_radius = PRISM_BVH_CUDA_RADIUS_SMALL,
                                      .cuda_bvh_tail = PRISM_BVH_CUDA_TAIL_MAX,
                                      .validate_bvh = true,
                                      .traversal = PRISM_TRAVERSAL_BINARY};
    t = (trace_log){0};
    assert_int_equal(prism_geometry_upload(ctx, &scene, NULL, &good, &g), PRISM_SUCCESS);
    check_view(g);
    assert_int_equal(prism__geometry_view(g)->wide_count, 0);
    assert_int_equal(t.upload_lines, 0); /* no trace asked for */
    assert_int_equal(t.validated, 1);
    prism_geometry_destroy(g);
    prism_geometry_desc traced = {.trace = PRISM_GEOMETRY_TRACE_UPLOAD | PRISM_GEOMETRY_TRACE_BVH};
    assert_int_equal(prism_geometry_upload(ctx, &scene, bvh, &traced, &g), PRISM_SUCCESS);
    assert_true(t.upload_lines >= 2); /* optics, the wide tree */
    prism_geometry_destroy(g);
    assert_ledger_empty(ctx);
    assert_int_equal(prism_context_destroy(ctx), PRISM_SUCCESS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_policy),
        cmocka_unit_test(test_budget_splits_nodes),
        cmocka_unit_test(test_demotion),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_no_scene_and_empty),
        cmocka_unit_test(test_builds_when_no_bvh),
        cmocka_unit_test(test_bundled_assets),
        cmocka_unit_test(test_parallel_fill_and_staged_copy),
        cmocka_unit_test(test_gl_vertices_fallback),
        cmocka_unit_test(test_scene_arrays_allocator),
        cmocka_unit_test(test_wide_tree),
        cmocka_unit_test(test_settings),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
