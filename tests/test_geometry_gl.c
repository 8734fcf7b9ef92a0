/* Vertices shared with a GL buffer (prism_geometry_desc.gl_vertex_buffer):
 * a geometry whose kernels read the vertices from a GL vertex buffer gives
 * the same images and photons, bit for bit, as one that uploaded them.
 *   (default)  CUDA backend on the NVIDIA EGL device: interop, the vertices
 *              are stored once and the report says so. Skipped (77) without
 *              a CUDA device or an EGL device of the NVIDIA driver.
 *   --host     host backend on whatever EGL offers (Mesa surfaceless in
 *              CI): no interop, so the vertices are uploaded (2 copies), the
 *              log says why once, and the results are the same. Skipped (77)
 *              without EGL. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "egl_test_util.h"
#include "kernels_test_scene.h"
#include "prism/device_view.h"
#include "prism/memory.h"
#include "prism/propagate.h"
#include "prism/render.h"

/* GL entry points, taken from EGL (no GL library linked). */
#define GL_ARRAY_BUFFER 0x8892
#define GL_ELEMENT_ARRAY_BUFFER 0x8893
#define GL_STATIC_DRAW 0x88E4

static test_egl egl;
static prism_context *host;    /* builds the scenes */
static prism_context *subject; /* CUDA (interop) or host (fallback) */
static bool host_mode;
static int not_shared_logs; /* "vertices not shared" warnings seen */

static void on_log(void *user, prism_log_level level, const char *message)
{
    (void)user;
    if (level == PRISM_LOG_WARNING && strstr(message, "vertices not shared with GL buffer"))
        not_shared_logs++;
}

static bool egl_start(bool any)
{
    return test_egl_open(&egl, any ? TEST_EGL_ANY : TEST_EGL_CUDA, 0, 0);
}

/* A GL vertex buffer holding `bytes` of `data`, as a raster view makes it. */
static unsigned gl_vertices(const void *data, size_t bytes)
{
    return test_egl_buffer(&egl, GL_ARRAY_BUFFER, bytes, data, GL_STATIC_DRAW);
}

static prism_geometry *upload_kept(kt_scene *s, unsigned gl, bool keep_mapped)
{
    prism_geometry_desc d = {.policy = PRISM_PLACEMENT_DEVICE,
                             .gl_vertex_buffer = gl,
                             .gl_keep_mapped = keep_mapped};
    prism_geometry *g = NULL;
    assert_int_equal(prism_geometry_upload(subject, &s->scene, s->bvh, &d, &g), PRISM_SUCCESS);
    return g;
}

static prism_geometry *upload(kt_scene *s, unsigned gl)
{
    return upload_kept(s, gl, false);
}

/* The report of a geometry given the GL buffer: shared (no bytes placed,
 * reason names the buffer) or uploaded as usual. */
static void check_report(const prism_geometry *g, const prism_geometry *plain)
{
    const prism_upload_report *r = prism_geometry_report(g), *p = prism_geometry_report(plain);
    const prism_upload_entry *v = &r->arrays[2];
    assert_string_equal(v->name, "vertices");
    char text[4096];
    prism_geometry_report_format(r, text, sizeof text);
    printf("# %s", text);
    /* the device view: no pointer to vertices GL owns between launches */
    prism_device_view view;
    assert_int_equal(prism_geometry_device_view(g, &view),
                     host_mode ? PRISM_SUCCESS : PRISM_ERROR_UNSUPPORTED);
    if (host_mode) {
        assert_false(prism_geometry_vertices_shared(g));
        assert_false(v->gl_shared);
        assert_int_equal(v->device_bytes, v->bytes); /* the engine's own copy: 2 copies */
        assert_int_equal(r->device_bytes, p->device_bytes);
        return;
    }
    assert_true(prism_geometry_vertices_shared(g));
    assert_true(v->gl_shared);
    assert_int_equal(v->device_bytes + v->mapped_bytes, 0);
    assert_int_equal(r->device_bytes + v->bytes, p->device_bytes);
    assert_non_null(strstr(text, "interop, read-only): stored once"));
}

static void render_both(prism_geometry *g, prism_geometry *plain)
{
    enum { W = 320, H = 200 };
    prism_camera cam = {.eye = {0.5f, 1, 2.8f}, .look_at = {0, 0, 0}, .vfov_degrees = 80};
    uint32_t *a = malloc(W * H * 4), *b = malloc(W * H * 4);
    for (int mode = 0; mode < 2; mode++) {
        prism_render_desc d = {.width = W,
                               .height = H,
                               .mode = mode ? PRISM_RENDER_XRAY : PRISM_RENDER_SHADED,
                               .background = {0, 0, 0, 255}};
        prism_target ta = {.kind = PRISM_TARGET_HOST, .host = a};
        prism_target tb = {.kind = PRISM_TARGET_HOST, .host = b};
        assert_int_equal(prism_render(subject, plain, &cam, &d, &ta, NULL), PRISM_SUCCESS);
        assert_int_equal(prism_render(subject, g, &cam, &d, &tb, NULL), PRISM_SUCCESS);
        assert_memory_equal(a, b, W * H * 4);
        size_t lit = 0;
        for (size_t i = 0; i < (size_t)W * H; i++)
            lit += a[i] != a[0];
        assert_true(lit > (size_t)W * H / 10); /* the scene is in the picture */
    }
    free(a);
    free(b);
}

static void propagate_both(prism_geometry *g, prism_geometry *plain)
{
    enum { N = 50000, K = 8 };
    prism_photon_source src = {.kind = PRISM_SOURCE_POINT, .count = N};
    prism_propagate_desc d = {.seed = 11, .record_steps = K};
    prism_photon *pa = malloc(N * sizeof *pa), *pb = malloc(N * sizeof *pb);
    prism_step_record *ra = malloc((size_t)N * K * sizeof *ra),
                      *rb = malloc((size_t)N * K * sizeof *rb);
    prism_propagate_outputs oa = {.photons = {.kind = PRISM_TARGET_HOST, .host = pa},
                                  .records = {.kind = PRISM_TARGET_HOST, .host = ra}};
    prism_propagate_outputs ob = {.photons = {.kind = PRISM_TARGET_HOST, .host = pb},
                                  .records = {.kind = PRISM_TARGET_HOST, .host = rb}};
    prism_propagate_stats sa, sb;
    assert_int_equal(prism_propagate(subject, plain, &src, &d, &oa, &sa), PRISM_SUCCESS);
    assert_int_equal(prism_propagate(subject, g, &src, &d, &ob, &sb), PRISM_SUCCESS);
    assert_memory_equal(pa, pb, N * sizeof *pa);
    assert_memory_equal(ra, rb, (size_t)N * K * sizeof *ra);
    size_t hit = 0;
    for (size_t i = 0; i < N; i++)
        hit += !(pa[i].history & PRISM_NO_HIT);
    assert_true(hit > N / 2); /* the photons met the geometry */
    free(pa);
    free(pb);
    free(ra);
    free(rb);
}

static void test_shared_equals_uploaded(void **state)
{
    (void)state;
    kt_scene s = {0};
    kt_rich_scene(&s, 64);
    assert_int_equal(kt_build(&s, host), 0);
    size_t bytes = s.bvh->vertex_count * 12;
    /* The BVH keeps the input's vertex order: the raster view's buffer of
     * the scene's positions is what the kernels need. */
    assert_int_equal(s.bvh->vertex_count, s.vertices);
    assert_memory_equal(s.bvh->vertices, s.positions, bytes);
    unsigned gl = gl_vertices(s.positions, bytes);
    int logs = not_shared_logs;
    prism_geometry *plain = upload(&s, 0), *g = upload(&s, gl);
    assert_int_equal(not_shared_logs - logs, host_mode ? 1 : 0);
    assert_false(prism_geometry_vertices_shared(plain));
    check_report(g, plain);
    render_both(g, plain);
    propagate_both(g, plain);
    /* Read-only: GL still holds the positions, and may draw them now. */
    float *back = malloc(bytes);
    test_egl_read(&egl, GL_ARRAY_BUFFER, gl, bytes, back);
    assert_memory_equal(back, s.positions, bytes);
    free(back);
    prism_geometry_destroy(g); /* unregisters before GL deletes the buffer */
    prism_geometry_destroy(plain);
    egl.gl.delete_buffers(1, &gl);
    kt_free(&s, host);
}

/* desc.gl_keep_mapped: the buffer stays mapped between calls, the
 * results are the same, and after prism_geometry_gl_release GL reads it
 * again (then the next call maps it anew). Without interop it changes
 * nothing and the release does nothing. */
static void test_keep_mapped(void **state)
{
    (void)state;
    kt_scene s = {0};
    kt_rich_scene(&s, 64);
    assert_int_equal(kt_build(&s, host), 0);
    size_t bytes = s.bvh->vertex_count * 12;
    unsigned gl = gl_vertices(s.positions, bytes);
    prism_geometry *plain = upload(&s, 0), *g = upload_kept(&s, gl, true);
    assert_int_equal(prism_geometry_vertices_shared(g), !host_mode);
    assert_int_equal(prism_geometry_gl_release(g), PRISM_SUCCESS); /* nothing mapped yet */
    float *back = malloc(bytes);
    for (int round = 0; round < 2; round++) {
        render_both(g, plain);
        propagate_both(g, plain);
        assert_int_equal(prism_geometry_gl_release(g), PRISM_SUCCESS);
        assert_int_equal(prism_geometry_gl_release(g), PRISM_SUCCESS); /* twice: no-op */
        memset(back, 0, bytes);
        test_egl_read(&egl, GL_ARRAY_BUFFER, gl, bytes, back);
        assert_memory_equal(back, s.positions, bytes);
    }
    render_both(g, plain); /* left mapped: destroy unmaps before unregistering */
    free(back);
    prism_geometry_destroy(g);
    prism_geometry_destroy(plain);
    assert_int_equal(prism_geometry_gl_release(NULL), PRISM_SUCCESS);
    egl.gl.delete_buffers(1, &gl);
    kt_free(&s, host);
}

/* desc.gl_triangle_buffer's layout from the scene: solid, then the
 * materials inner | outer << 16 with 0xFFFF for none. */
static void expected_codes(const prism_scene *sc, uint32_t *codes)
{
    for (size_t t = 0; t < sc->triangles_count; t++) {
        uint32_t in = sc->triangle_material_inner[t], out = sc->triangle_material_outer[t];
        codes[2 * t] = sc->triangle_solid[t];
        codes[2 * t + 1] = (in == PRISM_NONE ? 0xFFFFu : in) | (out == PRISM_NONE ? 0xFFFFu : out)
                                                                   << 16;
    }
}

/* desc.gl_fill: the upload writes the scene's vertices, triangles and
 * per-triangle codes into GL buffers made empty, on both builders' paths
 * (the caller's BVH, and none: built on the device with CUDA, on the host
 * otherwise) and with the codes placed in device or mapped memory, and the
 * geometry then traces as a plain upload does. Without interop (host
 * backend on Mesa) nothing is written, report.gl_filled says so, and the
 * caller's fallback applies. */
static void test_upload_writes_gl_buffers(void **state)
{
    (void)state;
    kt_scene s = {0};
    kt_rich_scene(&s, 64);
    assert_int_equal(kt_build(&s, host), 0);
    const size_t vbytes = s.vertices * 12, tbytes = s.triangles * 12;
    /* the references: plain uploads of the same tree (the builders are
     * deterministic, so "none" builds the same one again) */
    prism_geometry *plain = upload(&s, 0), *built = NULL;
    prism_geometry_desc bd = {.policy = PRISM_PLACEMENT_DEVICE};
    assert_int_equal(prism_geometry_upload(subject, &s.scene, NULL, &bd, &built), PRISM_SUCCESS);
    for (int given = 0; given < 2; given++) {
        const size_t jbytes = vbytes > s.triangles * 8 ? vbytes : s.triangles * 8;
        float *junk = malloc(jbytes);
        memset(junk, 0x7F, jbytes);
        unsigned vb = gl_vertices(junk, vbytes);
        unsigned ib = test_egl_buffer(&egl, GL_ELEMENT_ARRAY_BUFFER, tbytes, NULL, GL_STATIC_DRAW);
        unsigned cb = gl_vertices(junk, s.triangles * 8);
        free(junk);
        prism_geometry_desc d = {.policy = given ? PRISM_PLACEMENT_MAPPED : PRISM_PLACEMENT_DEVICE,
                                 .gl_vertex_buffer = vb,
                                 .gl_fill = true,
                                 .gl_index_buffer = ib,
                                 .gl_triangle_buffer = cb};
        prism_geometry *g = NULL;
        assert_int_equal(prism_geometry_upload(subject, &s.scene, given ? s.bvh : NULL, &d, &g),
                         PRISM_SUCCESS);
        const prism_upload_report *r = prism_geometry_report(g);
        char text[4096];
        prism_geometry_report_format(r, text, sizeof text);
        printf("# %s BVH: %s", given ? "the caller's" : "no", text);
        float *vback = malloc(vbytes);
        uint32_t *tback = malloc(tbytes);
        test_egl_read(&egl, GL_ARRAY_BUFFER, vb, vbytes, vback);
        test_egl_read(&egl, GL_ELEMENT_ARRAY_BUFFER, ib, tbytes, tback);
        uint32_t *cback = malloc(s.triangles * 8), *codes = malloc(s.triangles * 8);
        test_egl_read(&egl, GL_ARRAY_BUFFER, cb, s.triangles * 8, cback);
        expected_codes(&s.scene, codes);
        if (host_mode) {
            assert_false(r->gl_filled);
            assert_false(prism_geometry_vertices_shared(g));
            assert_true(((const unsigned char *)vback)[0] == 0x7F); /* untouched */
            assert_true(((const unsigned char *)cback)[0] == 0x7F);
        } else {
            assert_true(r->gl_filled);
            assert_true(prism_geometry_vertices_shared(g));
            assert_memory_equal(vback, s.positions, vbytes);
            assert_memory_equal(tback, s.indices, tbytes);
            assert_memory_equal(cback, codes, s.triangles * 8);
            assert_non_null(strstr(text, "written by the upload"));
            assert_int_equal(r->bvh.builder,
                             given ? PRISM_BVH_BUILDER_GIVEN : PRISM_BVH_BUILDER_CUDA);
        }
        render_both(g, given ? plain : built);
        free(vback);
        free(tback);
        free(cback);
        free(codes);
        prism_geometry_destroy(g);
        egl.gl.delete_buffers(1, &vb);
        egl.gl.delete_buffers(1, &ib);
        egl.gl.delete_buffers(1, &cb);
    }
    /* the triangles come from a scene: none given is refused */
    prism_geometry_desc d = {.gl_vertex_buffer = 1, .gl_fill = true, .gl_index_buffer = 2};
    prism_geometry *g = NULL;
    assert_int_equal(prism_geometry_upload(subject, NULL, s.bvh, &d, &g),
                     PRISM_ERROR_INVALID_ARGUMENT);
    prism_geometry_destroy(plain);
    prism_geometry_destroy(built);
    kt_free(&s, host);
}

/* A GL buffer smaller than the vertices: interop notices at the map, and
 * render and propagate fail cleanly instead of reading past its end. */
static void test_short_buffer_fails(void **state)
{
    (void)state;
    if (host_mode)
        skip();
    kt_scene s = {0};
    kt_rich_scene(&s, 64);
    assert_int_equal(kt_build(&s, host), 0);
    size_t bytes = s.bvh->vertex_count * 12;
    unsigned gl = gl_vertices(s.positions, bytes / 2);
    prism_geometry *g = upload(&s, gl);
    assert_true(prism_geometry_vertices_shared(g));
    uint32_t image[64 * 64];
    prism_camera cam = {.eye = {0.5f, 1, 2.8f}, .look_at = {0, 0, 0}, .vfov_degrees = 80};
    prism_render_desc d = {.width = 64, .height = 64};
    prism_target t = {.kind = PRISM_TARGET_HOST, .host = image};
    assert_int_not_equal(prism_render(subject, g, &cam, &d, &t, NULL), PRISM_SUCCESS);
    prism_photon photons[16];
    prism_photon_source src = {.kind = PRISM_SOURCE_POINT, .count = 16};
    prism_propagate_outputs o = {.photons = {.kind = PRISM_TARGET_HOST, .host = photons}};
    assert_int_not_equal(prism_propagate(subject, g, &src, NULL, &o, NULL), PRISM_SUCCESS);
    /* Nothing was left mapped: a third call fails at the size again, not
     * with "already mapped". */
    assert_int_not_equal(prism_render(subject, g, &cam, &d, &t, NULL), PRISM_SUCCESS);
    printf("# %s\n", prism_context_last_error(subject));
    assert_non_null(
        strstr(prism_context_last_error(subject), "cudaGraphicsResourceGetMappedPointer"));
    prism_geometry_destroy(g);
    egl.gl.delete_buffers(1, &gl);
    kt_free(&s, host);
}

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int compare(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median seconds of a tiny render: what a launch costs beyond the kernel. */
static double tiny_render(prism_geometry *g)
{
    uint32_t image[16 * 16];
    prism_camera cam = {.eye = {0.5f, 1, 2.8f}, .look_at = {0, 0, 0}, .vfov_degrees = 80};
    prism_render_desc d = {.width = 16, .height = 16};
    prism_target t = {.kind = PRISM_TARGET_HOST, .host = image};
    double v[41];
    for (int i = 0; i < 41; i++) {
        double t0 = seconds();
        assert_int_equal(prism_render(subject, g, &cam, &d, &t, NULL), PRISM_SUCCESS);
        v[i] = seconds() - t0;
    }
    qsort(v, 41, sizeof *v, compare);
    return v[20];
}

/* The cost of sharing per launch (the map and unmap), for a vertex buffer
 * of the size of a big detector's (16 MB) made with each usage hint. */
static void test_launch_overhead(void **state)
{
    (void)state;
    if (host_mode)
        skip();
    kt_scene s = {0};
    kt_rich_scene(&s, 64);
    assert_int_equal(kt_build(&s, host), 0);
    size_t bytes = s.bvh->vertex_count * 12, big = (size_t)16 << 20;
    char *data = calloc(1, big);
    memcpy(data, s.positions, bytes);
    prism_geometry *plain = upload(&s, 0);
    printf("# tiny render, vertices uploaded: %.1f us\n", 1e6 * tiny_render(plain));
    static const unsigned usage[] = {0x88E4, 0x88E8, 0x88E0, 0x88EA, 0};
    static const char *name[] = {"STATIC_DRAW", "DYNAMIC_DRAW", "STREAM_DRAW", "DYNAMIC_COPY",
                                 "BufferStorage(0)"};
    typedef void (*storage_fn)(unsigned, ptrdiff_t, const void *, unsigned);
    storage_fn storage = (storage_fn)eglGetProcAddress("glBufferStorage");
    for (int u = 0; u < 5; u++) {
        unsigned gl = 0;
        egl.gl.gen_buffers(1, &gl);
        egl.gl.bind_buffer(GL_ARRAY_BUFFER, gl);
        if (usage[u])
            egl.gl.buffer_data(GL_ARRAY_BUFFER, (ptrdiff_t)big, data, usage[u]);
        else if (storage)
            storage(GL_ARRAY_BUFFER, (ptrdiff_t)big, data, 0);
        egl.gl.bind_buffer(GL_ARRAY_BUFFER, 0);
        prism_geometry *g = upload(&s, gl);
        assert_true(prism_geometry_vertices_shared(g));
        printf("# tiny render, vertices shared, 16 MB GL buffer made with %s: %.1f us\n", name[u],
               1e6 * tiny_render(g));
        prism_geometry_destroy(g);
        g = upload_kept(&s, gl, true);
        printf("# tiny render, the same kept mapped between calls: %.1f us\n",
               1e6 * tiny_render(g));
        prism_geometry_destroy(g);
        egl.gl.delete_buffers(1, &gl);
    }
    prism_geometry_destroy(plain);
    free(data);
    kt_free(&s, host);
}

int main(int argc, char **argv)
{
    host_mode = argc > 1 && strcmp(argv[1], "--host") == 0;
    if ((!host_mode && prism_cuda_device_count() == 0) || !egl_start(host_mode)) {
        printf("no %s: skipped\n", host_mode ? "EGL display" : "CUDA device or NVIDIA EGL device");
        return 77;
    }
    prism_context_desc cd = {.backend = host_mode ? PRISM_BACKEND_HOST : PRISM_BACKEND_CUDA,
                             .share_gl = !host_mode,
                             .log = on_log,
                             .log_level = PRISM_LOG_WARNING};
    if (prism_context_create(&cd, &subject) != PRISM_SUCCESS)
        return 1;
    host = kt_host_context();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shared_equals_uploaded),
        cmocka_unit_test(test_upload_writes_gl_buffers),
        cmocka_unit_test(test_keep_mapped),
        cmocka_unit_test(test_short_buffer_fails),
        cmocka_unit_test(test_launch_overhead),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    prism_context_destroy(host);
    prism_result r = prism_context_destroy(subject);
    test_egl_close(&egl);
    return r == PRISM_SUCCESS ? failed : 1;
}
