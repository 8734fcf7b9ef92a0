/* Memory on a CUDA device (label gpu; skipped without one): the host-alloc
 * flags really set, a kernel reading mapped write-combined memory, host
 * memory page-locked off the context's thread, fills and
 * copies of every kind, pools, the stream-ordered allocator with a captured
 * and replayed graph, uploads under each policy read back from the device,
 * a forced budget splitting the nodes, and 1,000 upload/destroy cycles that
 * leave cudaMemGetInfo where it started. The CUDA runtime's own answers
 * come from memory_gpu_kernels.cu. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/upload/geometry_internal.h"
#include "engine/memory/internal.h" /* prism__memory_inject_device_failures */
#include "prism/geometry.h"
#include "prism/memory.h"

int prism_test_kernel_sum(const void *p, size_t n, unsigned long long *sum);
int prism_test_graph_capture(prism_context *ctx, prism_stream *stream, uint32_t *result, size_t n,
                             uint32_t base);
int prism_test_host_flags(const void *p, bool *portable, bool *mapped, bool *write_combined);
int prism_test_copy(void *dst, const void *src, size_t n);
int prism_test_pointer_type(const void *p, int *type); /* 1 host, 2 device, 0 else */
int prism_test_free_memory(size_t *free_bytes);
enum { HOST_MEMORY = 1, DEVICE_MEMORY = 2 };

static prism_context *ctx;

static int setup(void **state)
{
    (void)state;
    prism_context_desc d = {.backend = PRISM_BACKEND_CUDA};
    return prism_context_create(&d, &ctx) == PRISM_SUCCESS ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    return prism_context_destroy(ctx) == PRISM_SUCCESS ? 0 : -1;
}

static void test_host_flags_really_set(void **state)
{
    (void)state;
    for (unsigned f = 0; f < 8; f++) {
        prism_buffer *b;
        assert_int_equal(prism_buffer_create_pinned(ctx, 4096, f, "flags", &b), PRISM_SUCCESS);
        bool portable = false, mapped = false, write_combined = false;
        assert_int_equal(prism_test_host_flags(prism_buffer_host_pointer(b), &portable, &mapped,
                                               &write_combined),
                         0);
        if (f & PRISM_HOST_PORTABLE)
            assert_true(portable);
        if (f & PRISM_HOST_MAPPED)
            assert_true(mapped);
        assert_int_equal(write_combined, (f & PRISM_HOST_WRITE_COMBINED) != 0);
        assert_true((prism_buffer_device_pointer(b) != NULL) == ((f & PRISM_HOST_MAPPED) != 0));
        prism_buffer_release(b);
    }
}

static void test_kernel_reads_mapped_wc(void **state)
{
    (void)state;
    enum { N = 1 << 20 };
    prism_buffer *m, *d;
    assert_int_equal(prism_buffer_create_pinned(
                         ctx, N * 4, PRISM_HOST_MAPPED | PRISM_HOST_WRITE_COMBINED, "wc", &m),
                     PRISM_SUCCESS);
    uint32_t *host = prism_buffer_host_pointer(m);
    unsigned long long want = 0;
    for (uint32_t i = 0; i < N; i++) {
        host[i] = i * 7u; /* stores only: write-combined memory is never read here */
        want += i * 7u;
    }
    unsigned long long sum = 0;
    assert_int_equal(prism_test_kernel_sum(prism_buffer_device_pointer(m), N, &sum), 0);
    assert_true(sum == want);
    /* the same through device memory, copied from the mapped buffer */
    assert_int_equal(prism_buffer_create_device(ctx, N * 4, "dev", &d), PRISM_SUCCESS);
    assert_int_equal(prism_buffer_copy(d, 0, m, 0, N * 4), PRISM_SUCCESS);
    sum = 0;
    assert_int_equal(prism_test_kernel_sum(prism_buffer_device_pointer(d), N, &sum), 0);
    assert_true(sum == want);
    prism_buffer_release(m);
    prism_buffer_release(d);
}

static void test_registered_host_memory(void **state)
{
    (void)state;
    enum { N = 1 << 16 };
    uint32_t *mine = aligned_alloc(4096, N * 4);
    unsigned long long want = 0;
    for (uint32_t i = 0; i < N; i++) {
        mine[i] = i ^ 0x5A5Au;
        want += mine[i];
    }
    prism_buffer *r;
    assert_int_equal(prism_buffer_register_host(ctx, mine, N * 4,
                                                PRISM_HOST_MAPPED | PRISM_HOST_PORTABLE,
                                                "registered", &r),
                     PRISM_SUCCESS);
    bool portable = false, mapped = false, write_combined = false;
    assert_int_equal(prism_test_host_flags(mine, &portable, &mapped, &write_combined), 0);
    assert_true(mapped);
    assert_non_null(prism_buffer_device_pointer(r));
    unsigned long long sum = 0;
    assert_int_equal(prism_test_kernel_sum(prism_buffer_device_pointer(r), N, &sum), 0);
    assert_true(sum == want);
    prism_buffer_release(r);
    free(mine);
}

/* Host memory page-locked on a thread of its own (prism__register_begin),
 * recorded on the context's (prism__register_end): CUDA sees it as host
 * memory only once begun, and a failure off the thread is returned without
 * touching the context's last error. */
typedef struct {
    void *host;
    size_t bytes;
    prism__allocation *a;
    prism_result r;
} pin_job;

static void *pin_off_thread(void *arg)
{
    pin_job *j = arg;
    j->r = prism__register_begin(ctx, j->host, j->bytes, "two.steps", &j->a);
    return NULL;
}

static void test_register_off_thread(void **state)
{
    (void)state;
    const size_t bytes = (size_t)8 << 20;
    unsigned char *mine = aligned_alloc(4096, bytes);
    memset(mine, 7, bytes);
    int type = -1;
    prism_test_pointer_type(mine, &type);
    assert_int_not_equal(type, HOST_MEMORY); /* pageable: unknown to CUDA */
    pin_job j = {.host = mine, .bytes = bytes};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, pin_off_thread, &j), 0);
    pthread_join(t, NULL);
    assert_int_equal(j.r, PRISM_SUCCESS);
    assert_int_equal(prism_test_pointer_type(mine, &type), 0);
    assert_int_equal(type, HOST_MEMORY);
    /* locked twice: CUDA refuses, quietly */
    char before[256];
    snprintf(before, sizeof before, "%s", prism_context_last_error(ctx));
    pin_job again = {.host = mine, .bytes = bytes};
    pthread_create(&t, NULL, pin_off_thread, &again);
    pthread_join(t, NULL);
    assert_int_not_equal(again.r, PRISM_SUCCESS);
    assert_null(again.a);
    assert_string_equal(prism_context_last_error(ctx), before);
    prism_buffer *b = NULL;
    assert_int_equal(prism__register_end(ctx, j.a, &b), PRISM_SUCCESS);
    prism_memory_report r;
    assert_int_equal(prism_memory_report_get(ctx, &r), PRISM_SUCCESS);
    assert_int_equal(r.by_kind[PRISM_MEMORY_REGISTERED].bytes, bytes);
    unsigned char *copy = malloc(bytes);
    assert_int_equal(prism_test_copy(copy, mine, bytes), 0);
    assert_int_equal(memcmp(copy, mine, bytes), 0);
    prism_buffer_release(b);
    assert_int_equal(prism_test_pointer_type(mine, &type) == 0 && type == HOST_MEMORY, 0);
    /* begun and undone: unlocked again */
    pin_job k = {.host = mine, .bytes = bytes};
    pin_off_thread(&k);
    assert_int_equal(k.r, PRISM_SUCCESS);
    prism__register_undo(ctx, k.a);
    assert_int_equal(prism_test_pointer_type(mine, &type) == 0 && type == HOST_MEMORY, 0);
    assert_int_equal(prism_memory_report_get(ctx, &r), PRISM_SUCCESS);
    assert_int_equal(r.by_kind[PRISM_MEMORY_REGISTERED].count, 0);
    free(copy);
    free(mine);
}

static void test_fill_copy_map_on_device(void **state)
{
    (void)state;
    prism_buffer *d, *v;
    assert_int_equal(prism_buffer_create_device(ctx, 1 << 20, "fill", &d), PRISM_SUCCESS);
    static const uint8_t pattern[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    static uint8_t back[1 << 20];
    for (size_t p = 1; p <= 16; p *= 2) {
        assert_int_equal(prism_buffer_fill(d, 0, 1 << 20, pattern, p), PRISM_SUCCESS);
        assert_int_equal(prism_buffer_read(d, 0, back, sizeof back), PRISM_SUCCESS);
        for (size_t i = 0; i < sizeof back; i += 4099)
            assert_int_equal(back[i], pattern[i % p]);
    }
    assert_int_equal(prism_buffer_view(d, 4096, 4096, &v), PRISM_SUCCESS);
    uint8_t *h;
    assert_int_equal(prism_buffer_map(v, PRISM_MAP_READ_WRITE, (void **)&h), PRISM_SUCCESS);
    assert_int_equal(h[1], 2);
    memset(h, 0x77, 4096);
    assert_int_equal(prism_buffer_unmap(v), PRISM_SUCCESS);
    assert_int_equal(prism_buffer_read(d, 4095, back, 4098), PRISM_SUCCESS);
    assert_int_equal(back[0], 16);
    assert_int_equal(back[1], 0x77);
    assert_int_equal(back[4097], 1);
    prism_buffer_release(v);
    prism_buffer_release(d);
    prism_buffer *pinned; /* host-side memory: filled by the CPU after a sync */
    assert_int_equal(prism_buffer_create_pinned(ctx, 4096, PRISM_HOST_MAPPED, "pinned", &pinned),
                     PRISM_SUCCESS);
    assert_int_equal(prism_buffer_fill(pinned, 0, 4096, pattern, 4), PRISM_SUCCESS);
    assert_int_equal(((uint8_t *)prism_buffer_host_pointer(pinned))[4094], 3);
    prism_buffer_release(pinned);
    prism_buffer *managed;
    assert_int_equal(prism_buffer_create_managed(ctx, 4096, "managed", &managed), PRISM_SUCCESS);
    uint32_t x = 0xCAFEF00Du;
    assert_int_equal(prism_buffer_fill(managed, 0, 4096, &x, 4), PRISM_SUCCESS);
    uint32_t *mh;
    assert_int_equal(prism_buffer_map(managed, PRISM_MAP_READ, (void **)&mh), PRISM_SUCCESS);
    assert_int_equal(mh[1023], 0xCAFEF00Du);
    prism_buffer_unmap(managed);
    prism_buffer_release(managed);
    size_t free_b, total;
    prism_device_memory_info(ctx, &free_b, &total);
    assert_int_equal(prism_buffer_create_managed(ctx, free_b + (1u << 30), "too big", &managed),
                     PRISM_ERROR_OUT_OF_DEVICE_MEMORY);
}

static void test_pools_on_device(void **state)
{
    (void)state;
    prism_pool *pool;
    assert_int_equal(prism_pool_create(ctx, NULL, &pool), PRISM_SUCCESS);
    prism_buffer *a, *b;
    assert_int_equal(prism_pool_allocate(pool, 1 << 20, "a", &a), PRISM_SUCCESS);
    void *pa = prism_buffer_device_pointer(a);
    prism_buffer_release(a);
    assert_int_equal(prism_pool_allocate(pool, 1 << 20, "b", &b), PRISM_SUCCESS);
    assert_ptr_equal(prism_buffer_device_pointer(b), pa);
    prism_buffer_release(b);
    prism_pool_stats st;
    prism_pool_stats_get(pool, &st);
    assert_int_equal(st.held_blocks, 1);
    prism_pool_destroy(pool);
}

static void test_mempool_and_graph_capture(void **state)
{
    (void)state;
    if (!prism_mempool_supported(ctx))
        skip();
    assert_int_equal(prism_mempool_set_enabled(ctx, true), PRISM_SUCCESS);
    assert_int_equal(prism_mempool_set_release_threshold(ctx, 0.25), PRISM_SUCCESS);
    uint64_t th;
    assert_int_equal(prism_mempool_release_threshold(ctx, &th), PRISM_SUCCESS);
    assert_true(th > 0);
    assert_int_equal(prism_mempool_set_release_threshold(ctx, 1 << 20), PRISM_SUCCESS);
    assert_int_equal(prism_mempool_release_threshold(ctx, &th), PRISM_SUCCESS);
    assert_int_equal(th, 1 << 20);
    prism_stream *s;
    assert_int_equal(prism_stream_create(ctx, &s), PRISM_SUCCESS);
    prism_buffer *a;
    assert_int_equal(prism_buffer_create_async(ctx, 8 << 20, s, "async", &a), PRISM_SUCCESS);
    assert_int_equal(prism_stream_synchronize(s), PRISM_SUCCESS);
    size_t cur, high;
    assert_int_equal(prism_mempool_usage(ctx, &cur, &high), PRISM_SUCCESS);
    assert_true(cur >= (8u << 20));
    prism_buffer_release_async(a, s);
    prism_stream_synchronize(s);
    assert_int_equal(prism_mempool_usage(ctx, &cur, &high), PRISM_SUCCESS);
    assert_true(high >= (8u << 20));
    /* capture an allocation plus a kernel, replay it */
    enum { N = 100000 };
    prism_buffer *result;
    assert_int_equal(prism_buffer_create_device(ctx, N * 4, "graph.result", &result),
                     PRISM_SUCCESS);
    assert_int_equal(prism_test_graph_capture(ctx, s, prism_buffer_device_pointer(result), N, 1000),
                     0);
    static uint32_t back[N];
    assert_int_equal(prism_buffer_read(result, 0, back, sizeof back), PRISM_SUCCESS);
    for (uint32_t i = 0; i < N; i += 997)
        assert_int_equal(back[i], 1000 + i);
    prism_memory_report r;
    prism_memory_report_get(ctx, &r);
    assert_int_equal(r.by_kind[PRISM_MEMORY_ASYNC].count, 0); /* the captured free ran */
    prism_buffer_release(result);
    prism_stream_destroy(s);
}

/* ---- uploads */

enum { BOXES = 20000 };
static float *positions;
static uint32_t *indices, *tri_solid;
static prism_scene scene;
static prism_bvh *bvh;

static void make_scene(void)
{
    static const int faces[12][3] = {{0, 2, 1}, {1, 2, 3}, {4, 5, 6}, {5, 7, 6},
                                     {0, 1, 4}, {1, 5, 4}, {2, 6, 3}, {3, 6, 7},
                                     {0, 4, 2}, {2, 4, 6}, {1, 3, 5}, {3, 7, 5}};
    positions = malloc(BOXES * 8 * 3 * sizeof *positions);
    indices = malloc(BOXES * 12 * 3 * sizeof *indices);
    tri_solid = malloc(BOXES * 12 * sizeof *tri_solid);
    for (int b = 0; b < BOXES; b++) {
        float x = (float)(b % 100), y = (float)(b / 100 % 100), z = (float)(b / 10000);
        for (int c = 0; c < 8; c++) {
            positions[(b * 8 + c) * 3 + 0] = x + (float)(c & 1) * 0.5f;
            positions[(b * 8 + c) * 3 + 1] = y + (float)((c >> 1) & 1) * 0.5f;
            positions[(b * 8 + c) * 3 + 2] = z + (float)((c >> 2) & 1) * 0.5f;
        }
        for (int t = 0; t < 12; t++) {
            for (int k = 0; k < 3; k++)
                indices[(b * 12 + t) * 3 + k] = (uint32_t)(b * 8 + faces[t][k]);
            tri_solid[b * 12 + t] = (uint32_t)b;
        }
    }
    scene = (prism_scene){.positions = positions,
                          .vertices_count = BOXES * 8,
                          .indices = indices,
                          .triangles_count = BOXES * 12,
                          .triangle_solid = tri_solid};
    assert_int_equal(prism_bvh_build(positions, BOXES * 8, indices, BOXES * 12, NULL, &bvh),
                     PRISM_SUCCESS);
}

static void read_back(const void *p, void *dst, size_t n)
{
    assert_int_equal(prism_test_copy(dst, p, n), 0);
}

static void check_device_view(const prism_geometry *g)
{
    const prism_geometry_view *v = prism__geometry_view(g);
    size_t nb = bvh->node_count * sizeof(prism_bvh_node);
    char *nodes = malloc(nb);
    size_t head = (size_t)v->nodes_split * sizeof(prism_bvh_node);
    read_back(v->nodes_head, nodes, head);
    if (head < nb)
        read_back(v->nodes_tail, nodes + head, nb - head);
    assert_memory_equal(nodes, bvh->nodes, nb);
    free(nodes);
    size_t tb = bvh->triangle_count * 12, vb = bvh->vertex_count * 12;
    char *buf = malloc(tb > vb ? tb : vb);
    read_back(v->triangles, buf, tb);
    assert_memory_equal(buf, bvh->triangles, tb);
    read_back(v->vertices, buf, vb);
    assert_memory_equal(buf, bvh->vertices, vb);
    free(buf);
    prism_triangle_info *info = malloc(bvh->triangle_count * sizeof *info);
    read_back(v->triangle_info, info, bvh->triangle_count * sizeof *info);
    for (size_t i = 0; i < bvh->triangle_count; i += 101) {
        assert_int_equal(info[i].id, bvh->triangle_ids[i]);
        assert_int_equal(info[i].solid, tri_solid[bvh->triangle_ids[i]]);
    }
    free(info);
}

static void test_upload_policies(void **state)
{
    (void)state;
    make_scene();
    for (int p = 0; p < PRISM_PLACEMENT_POLICY_COUNT_; p++) {
        prism_geometry_desc d = {.policy = p, .skip_optics = true};
        prism_geometry *g;
        assert_int_equal(prism_geometry_upload(ctx, &scene, bvh, &d, &g), PRISM_SUCCESS);
        check_device_view(g);
        char text[4096];
        prism_geometry_report_format(prism_geometry_report(g), text, sizeof text);
        printf("%s", text);
        prism_geometry_destroy(g);
    }
}

static void test_budget_puts_node_tail_in_mapped(void **state)
{
    (void)state;
    size_t nb = bvh->node_count * sizeof(prism_bvh_node);
    prism_geometry_desc d = {.budget = 300000000 + nb / 2, .skip_optics = true};
    prism_geometry *g;
    assert_int_equal(prism_geometry_upload(ctx, &scene, bvh, &d, &g), PRISM_SUCCESS);
    const prism_geometry_view *v = prism__geometry_view(g);
    assert_true(v->nodes_split > 0 && v->nodes_split < v->node_count);
    int type = 0;
    assert_int_equal(prism_test_pointer_type(v->nodes_tail, &type), 0);
    assert_int_equal(type, HOST_MEMORY); /* mapped host memory */
    assert_int_equal(prism_test_pointer_type(v->nodes_head, &type), 0);
    assert_int_equal(type, DEVICE_MEMORY);
    check_device_view(g);
    prism_geometry_destroy(g);
}

static void test_demotion_on_device(void **state)
{
    (void)state;
    prism_geometry_desc d = {.policy = PRISM_PLACEMENT_DEVICE, .skip_optics = true};
    prism_geometry *g;
    prism__memory_inject_device_failures(ctx, 1); /* the nodes' cudaMalloc "fails" */
    assert_int_equal(prism_geometry_upload(ctx, &scene, bvh, &d, &g), PRISM_SUCCESS);
    assert_true(prism_geometry_report(g)->arrays[0].demoted);
    int type = 0;
    assert_int_equal(prism_test_pointer_type(prism__geometry_view(g)->nodes_head, &type), 0);
    assert_int_equal(type, HOST_MEMORY);
    check_device_view(g);
    prism_geometry_destroy(g);
}

static void test_cycles_return_to_baseline(void **state)
{
    (void)state;
    prism_geometry_desc d = {.skip_optics = true};
    prism_geometry *g;
    /* one cycle first: the runtime's own lazy allocations are not ours */
    assert_int_equal(prism_geometry_upload(ctx, &scene, bvh, &d, &g), PRISM_SUCCESS);
    prism_geometry_destroy(g);
    size_t free0 = 0, free1 = 0;
    assert_int_equal(prism_test_free_memory(&free0), 0);
    for (int i = 0; i < 1000; i++) {
        d.policy = (prism_placement_policy)(i % PRISM_PLACEMENT_POLICY_COUNT_);
        assert_int_equal(prism_geometry_upload(ctx, &scene, bvh, &d, &g), PRISM_SUCCESS);
        prism_geometry_destroy(g);
    }
    assert_int_equal(prism_test_free_memory(&free1), 0);
    prism_memory_report r;
    prism_memory_report_get(ctx, &r);
    printf("cudaMemGetInfo free before %zu after %zu (pools hold %zu)\n", free0, free1,
           r.pool_held_bytes);
    assert_int_equal(r.total.bytes, r.pool_held_bytes); /* only the upload's staging chunks */
    assert_true(free1 + r.pool_held_bytes >= free0);
    prism_memory_trim(ctx);
    prism_memory_report_get(ctx, &r);
    assert_int_equal(r.total.count, 0);
    prism_bvh_free(bvh);
    free(positions);
    free(indices);
    free(tri_solid);
}

int main(void)
{
    if (prism_cuda_device_count() == 0) {
        printf("no CUDA device: skipped\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_host_flags_really_set),
        cmocka_unit_test(test_kernel_reads_mapped_wc),
        cmocka_unit_test(test_registered_host_memory),
        cmocka_unit_test(test_register_off_thread),
        cmocka_unit_test(test_fill_copy_map_on_device),
        cmocka_unit_test(test_pools_on_device),
        cmocka_unit_test(test_mempool_and_graph_capture),
        cmocka_unit_test(test_upload_policies),
        cmocka_unit_test(test_budget_puts_node_tail_in_mapped),
        cmocka_unit_test(test_demotion_on_device),
        cmocka_unit_test(test_cycles_return_to_baseline),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
