/* Contexts on several threads at once share nothing (issue 27): each of
 * THREADS threads makes its own host context, loads the bundled detector,
 * uploads it (host BVH build, upload trace on, through its own log),
 * renders it and propagates photons through it, ROUNDS times; every image
 * and every photon equals those of the same work done afterwards on one
 * thread. The threads go first, together (a barrier), so that state the
 * library sets lazily on a first call is first touched by several at
 * once. Run under ThreadSanitizer by `make test-tsan`, which reports any
 * state one thread's call changes under another's. */
#define _POSIX_C_SOURCE 200809L /* pthread_barrier */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "prism/context.h"
#include "prism/geometry.h"
#include "prism/propagate.h"
#include "prism/render.h"
#include "prism/scene.h"

#define THREADS 4
#define ROUNDS 2
#define W 64
#define H 48
#define PHOTONS 500

/* What one pipeline made, and what its logs saw. */
typedef struct outcome {
    prism_result result;
    char failed[256]; /* which step, and the context's message */
    uint32_t image[W * H];
    uint32_t xray[W * H];
    prism_photon photons[PHOTONS];
    prism_propagate_summary summary;
    int upload_trace_lines;
    int load_trace_lines;
} outcome;

static outcome reference;
static outcome results[THREADS];
static pthread_barrier_t start;

/* The context's log: this thread's own counter, no shared state. */
static void count_upload_trace(void *user, prism_log_level level, const char *message)
{
    outcome *o = user;
    if (level == PRISM_LOG_DEBUG && strncmp(message, "upload: ", 8) == 0)
        o->upload_trace_lines++;
}

static void count_load_trace(void *user, prism_log_level level, const char *message)
{
    outcome *o = user;
    if (level == PRISM_LOG_DEBUG && strncmp(message, "prism load: ", 12) == 0)
        o->load_trace_lines++;
}

static prism_result step_failed(outcome *o, prism_context *ctx, const char *step, prism_result r)
{
    o->result = r;
    snprintf(o->failed, sizeof o->failed, "%s: %s (%s)", step,
             ctx ? prism_context_last_error(ctx) : "", prism_result_string(r));
    return r;
}

static prism_result draw(prism_context *ctx, const prism_geometry *g, const prism_scene *s,
                         prism_render_mode mode, uint32_t *image)
{
    const float c[3] = {0.5f * (s->bbox_min[0] + s->bbox_max[0]),
                        0.5f * (s->bbox_min[1] + s->bbox_max[1]),
                        0.5f * (s->bbox_min[2] + s->bbox_max[2])};
    const float span = s->bbox_max[0] - s->bbox_min[0] + s->bbox_max[1] - s->bbox_min[1] +
                       s->bbox_max[2] - s->bbox_min[2];
    prism_camera cam = {.eye = {c[0] + span, c[1] + 0.5f * span, c[2] + 0.8f * span},
                        .look_at = {c[0], c[1], c[2]}};
    prism_render_desc d = {.width = W, .height = H, .mode = mode, .background = {10, 20, 30, 255}};
    prism_target t = {.kind = PRISM_TARGET_HOST, .host = image};
    return prism_render(ctx, g, &cam, &d, &t, NULL);
}

/* Load, upload, render (shaded and x-ray) and propagate, all on a
 * context of this thread's own. */
static prism_result pipeline(outcome *o)
{
    memset(o, 0, sizeof *o);
    char error[512] = "";
    prism_load_desc ld = {.error = error,
                          .error_size = sizeof error,
                          .trace = true,
                          .log = count_load_trace,
                          .log_user = o};
    prism_scene *s = NULL;
    prism_result r = prism_scene_load(PRISM_ASSETS "/tiny_detector.dae", &ld, &s);
    if (r != PRISM_SUCCESS) {
        o->result = r;
        snprintf(o->failed, sizeof o->failed, "load: %s", error);
        return r;
    }
    prism_context_desc cd = {.backend = PRISM_BACKEND_HOST,
                             .log = count_upload_trace,
                             .log_user = o,
                             .log_level = PRISM_LOG_DEBUG};
    prism_context *ctx = NULL;
    prism_geometry *g = NULL;
    r = prism_context_create(&cd, &ctx);
    if (r != PRISM_SUCCESS) {
        step_failed(o, NULL, "context", r);
        goto out;
    }
    prism_geometry_desc gd = {.trace = PRISM_GEOMETRY_TRACE_UPLOAD, .validate_bvh = true};
    if ((r = prism_geometry_upload(ctx, s, NULL, &gd, &g)) != PRISM_SUCCESS) {
        step_failed(o, ctx, "upload", r);
        goto out;
    }
    if ((r = draw(ctx, g, s, PRISM_RENDER_SHADED, o->image)) != PRISM_SUCCESS ||
        (r = draw(ctx, g, s, PRISM_RENDER_XRAY, o->xray)) != PRISM_SUCCESS) {
        step_failed(o, ctx, "render", r);
        goto out;
    }
    prism_photon_source src = {.kind = PRISM_SOURCE_POINT,
                               .count = PHOTONS,
                               .wavelength_nm = 380,
                               .wavelength_max_nm = 500};
    for (int k = 0; k < 3; k++)
        src.position[k] = 0.5f * (s->bbox_min[k] + s->bbox_max[k]);
    prism_propagate_desc pd = {.seed = 27, .max_steps = 50};
    prism_propagate_outputs po = {.photons = {.kind = PRISM_TARGET_HOST, .host = o->photons},
                                  .summary = &o->summary};
    if ((r = prism_propagate(ctx, g, &src, &pd, &po, NULL)) != PRISM_SUCCESS)
        step_failed(o, ctx, "propagate", r);
out:
    prism_geometry_destroy(g);
    if (ctx != NULL) {
        prism_result d = prism_context_destroy(ctx);
        if (r == PRISM_SUCCESS && d != PRISM_SUCCESS)
            r = step_failed(o, NULL, "context destroy", d);
    }
    prism_scene_free(s);
    return r;
}

static void *worker(void *arg)
{
    outcome *o = arg;
    pthread_barrier_wait(&start);
    for (int round = 0; round < ROUNDS && o->result == PRISM_SUCCESS; round++)
        pipeline(o);
    return NULL;
}

static void assert_same(const outcome *o, int thread)
{
    if (o->result != PRISM_SUCCESS)
        fail_msg("thread %d: %s", thread, o->failed);
    assert_memory_equal(o->image, reference.image, sizeof o->image);
    assert_memory_equal(o->xray, reference.xray, sizeof o->xray);
    assert_memory_equal(o->photons, reference.photons, sizeof o->photons);
    assert_int_equal(o->summary.photons, reference.summary.photons);
    assert_int_equal(o->summary.steps, reference.summary.steps);
    assert_memory_equal(o->summary.ended, reference.summary.ended, sizeof o->summary.ended);
    assert_int_equal(o->upload_trace_lines, reference.upload_trace_lines);
    assert_int_equal(o->load_trace_lines, reference.load_trace_lines);
}

static void test_threads_share_nothing(void **state)
{
    (void)state;
    pthread_t threads[THREADS];
    assert_int_equal(pthread_barrier_init(&start, NULL, THREADS), 0);
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_create(&threads[i], NULL, worker, &results[i]), 0);
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_join(threads[i], NULL), 0);
    pthread_barrier_destroy(&start);
    if (pipeline(&reference) != PRISM_SUCCESS)
        fail_msg("one thread: %s", reference.failed);
    /* the work is real: something drawn, photons moved, traces logged */
    size_t drawn = 0;
    for (size_t i = 0; i < W * H; i++)
        drawn += reference.image[i] != reference.image[0];
    assert_true(drawn > W * H / 10);
    assert_true(reference.summary.steps > PHOTONS);
    assert_true(reference.upload_trace_lines > 0);
    assert_true(reference.load_trace_lines > 0);
    for (int i = 0; i < THREADS; i++)
        assert_same(&results[i], i);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_threads_share_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
