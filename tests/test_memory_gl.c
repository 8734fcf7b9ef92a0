/* A GL buffer as a prism_buffer, through a headless EGL context: data put
 * in with glBufferData reads back through the mapped pointer, a fill made
 * while mapped lands in the GL buffer after unmap. Without arguments it
 * runs the copy path on the host backend (Mesa's surfaceless EGL, as in CI);
 * with --cuda it needs the NVIDIA EGL device, shares it with a CUDA context
 * and asserts that CUDA-GL interop is really used (label gpu). Skipped (77)
 * where no such EGL display exists. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "egl_test_util.h"
#include "prism/context.h"
#include "prism/memory.h"

#define GL_ARRAY_BUFFER 0x8892u
#define GL_DYNAMIC_DRAW 0x88E8u

typedef void (*gen_buffers_fn)(int, unsigned *);
typedef void (*delete_buffers_fn)(int, const unsigned *);
typedef void (*bind_buffer_fn)(unsigned, unsigned);
typedef void (*buffer_data_fn)(unsigned, ptrdiff_t, const void *, unsigned);
typedef void (*get_buffer_sub_data_fn)(unsigned, ptrdiff_t, ptrdiff_t, void *);
typedef void (*finish_fn)(void);

static bool use_cuda;
static test_egl egl;

static void test_round_trip(void **state)
{
    (void)state;
    gen_buffers_fn gen = (gen_buffers_fn)eglGetProcAddress("glGenBuffers");
    delete_buffers_fn del = (delete_buffers_fn)eglGetProcAddress("glDeleteBuffers");
    bind_buffer_fn bind = (bind_buffer_fn)eglGetProcAddress("glBindBuffer");
    buffer_data_fn data = (buffer_data_fn)eglGetProcAddress("glBufferData");
    get_buffer_sub_data_fn get = (get_buffer_sub_data_fn)eglGetProcAddress("glGetBufferSubData");
    finish_fn finish = (finish_fn)eglGetProcAddress("glFinish");
    assert_true(gen && del && bind && data && get && finish);

    enum { N = 4096 };
    static uint32_t words[N], back[N];
    for (uint32_t i = 0; i < N; i++)
        words[i] = i * 3u + 1u;
    unsigned vbo = 0;
    gen(1, &vbo);
    bind(GL_ARRAY_BUFFER, vbo);
    data(GL_ARRAY_BUFFER, sizeof words, words, GL_DYNAMIC_DRAW);
    bind(GL_ARRAY_BUFFER, 0);
    finish();

    prism_context_desc desc = {.backend = use_cuda ? PRISM_BACKEND_CUDA : PRISM_BACKEND_HOST,
                               .share_gl = use_cuda};
    prism_context *ctx = NULL;
    assert_int_equal(prism_context_create(&desc, &ctx), PRISM_SUCCESS);
    prism_buffer *b = NULL;
    assert_int_equal(prism_buffer_create_gl(ctx, vbo, sizeof words, PRISM_GL_NONE,
                                            eglGetProcAddress, "test.vbo", &b),
                     PRISM_SUCCESS);
    printf("GL buffer through %s: interop %s\n", eglQueryString(egl.display, EGL_VENDOR),
           prism_buffer_gl_interop(b) ? "active" : "unavailable (copy path)");
    assert_int_equal(prism_buffer_gl_interop(b), use_cuda);
    void *k = NULL;
    assert_int_equal(prism_buffer_gl_map(b, NULL, &k), PRISM_SUCCESS);
    assert_non_null(k);
    assert_int_equal(prism_buffer_read(b, 0, back, sizeof back), PRISM_SUCCESS);
    assert_memory_equal(back, words, sizeof words);
    uint32_t pattern[2] = {0xDEADBEEFu, 0x01234567u};
    assert_int_equal(prism_buffer_fill(b, 64, 8 * 100, pattern, 8), PRISM_SUCCESS);
    assert_int_equal(prism_buffer_gl_unmap(b, NULL), PRISM_SUCCESS);
    finish();
    bind(GL_ARRAY_BUFFER, vbo);
    get(GL_ARRAY_BUFFER, 0, sizeof back, back);
    bind(GL_ARRAY_BUFFER, 0);
    for (uint32_t i = 0; i < N; i++) {
        uint32_t want = i >= 16 && i < 16 + 200 ? pattern[(i - 16) % 2] : words[i];
        assert_int_equal(back[i], want);
    }
    prism_buffer_release(b);
    assert_int_equal(prism_context_destroy(ctx), PRISM_SUCCESS);
    del(1, &vbo);
}

int main(int argc, char **argv)
{
    use_cuda = argc > 1 && strcmp(argv[1], "--cuda") == 0;
    if (use_cuda && prism_cuda_device_count() == 0) {
        printf("no CUDA device: skipped\n");
        return 77;
    }
    if (!test_egl_open(&egl, use_cuda ? TEST_EGL_CUDA : TEST_EGL_SURFACELESS, 0, 0)) {
        printf("no %s EGL display: skipped\n", use_cuda ? "NVIDIA" : "Mesa surfaceless");
        test_egl_close(&egl);
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    test_egl_close(&egl);
    return rc;
}
