/* The viewer's camera (viewer/camera.c): framing on a box with each up
 * axis, orbit about the target, pan, zoom limits, flight, and matrices
 * that put the box's centre in the middle of the picture. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#include "../viewer/camera.h"

static float dist(const float a[3], const float b[3])
{
    return sqrtf((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) +
                 (a[2] - b[2]) * (a[2] - b[2]));
}

/* Project a world point: clip-space x, y, w. */
static void project(const viewer_camera *cam, const float p[3], float out[3])
{
    float v[16], pr[16], m[16];
    viewer_camera_view(cam, v);
    viewer_camera_projection(cam, 1.0f, pr);
    viewer_mat4_mul(pr, v, m);
    for (int r = 0; r < 4; r++) {
        float s = m[12 + r];
        for (int k = 0; k < 3; k++)
            s += m[k * 4 + r] * p[k];
        if (r == 0)
            out[0] = s;
        else if (r == 1)
            out[1] = s;
        else if (r == 3)
            out[2] = s;
    }
}

static void test_frame_each_up_axis(void **state)
{
    const float lo[3] = {-1, 2, 10}, hi[3] = {3, 4, 14};
    for (int up = 0; up < 3; up++) {
        viewer_camera cam;
        viewer_camera_frame(&cam, lo, hi, up, 45);
        assert_float_equal(cam.up[up], 1.0f, 0);
        assert_float_equal(cam.target[0], 1.0f, 1e-6);
        assert_float_equal(cam.target[1], 3.0f, 1e-6);
        assert_float_equal(cam.target[2], 12.0f, 1e-6);
        assert_true(cam.eye[up] > cam.target[up]); /* looking down a little */
        /* Every corner of the box is in front of the camera and inside the view. */
        for (int c = 0; c < 8; c++) {
            float p[3] = {c & 1 ? hi[0] : lo[0], c & 2 ? hi[1] : lo[1], c & 4 ? hi[2] : lo[2]};
            float q[3];
            project(&cam, p, q);
            assert_true(q[2] > 0);
            assert_true(fabsf(q[0] / q[2]) <= 1.0f && fabsf(q[1] / q[2]) <= 1.0f);
        }
        float centre[3];
        project(&cam, cam.target, centre);
        assert_float_equal(centre[0] / centre[2], 0, 1e-5);
        assert_float_equal(centre[1] / centre[2], 0, 1e-5);
    }
}

static void test_empty_box_frames_unit_cube(void **state)
{
    const float lo[3] = {1, 1, 1}, hi[3] = {-1, -1, -1};
    viewer_camera cam;
    viewer_camera_frame(&cam, lo, hi, 1, 0);
    assert_float_equal(cam.fov_deg, 45, 0);
    assert_true(isfinite(cam.eye[0]) && dist(cam.eye, cam.target) > 0);
}

static void test_orbit_keeps_distance_and_stops_at_poles(void **state)
{
    const float lo[3] = {-1, -1, -1}, hi[3] = {1, 1, 1};
    viewer_camera cam;
    viewer_camera_frame(&cam, lo, hi, 2, 45);
    float d0 = dist(cam.eye, cam.target);
    viewer_camera_orbit(&cam, 1.0f, 0.3f);
    assert_float_equal(dist(cam.eye, cam.target), d0, 1e-4);
    viewer_camera_orbit(&cam, 0, 10.0f); /* far past the pole: held short of it */
    assert_float_equal(dist(cam.eye, cam.target), d0, 1e-4);
    float off = (cam.eye[2] - cam.target[2]) / d0;
    assert_true(off < 0.9999f && off > 0.99f);
}

static void test_pan_zoom_fly(void **state)
{
    const float lo[3] = {-1, -1, -1}, hi[3] = {1, 1, 1};
    viewer_camera cam;
    viewer_camera_frame(&cam, lo, hi, 1, 45);
    float d0 = dist(cam.eye, cam.target), t0[3] = {cam.target[0], cam.target[1], cam.target[2]};
    viewer_camera_pan(&cam, 0.1f, 0);
    assert_float_equal(dist(cam.eye, cam.target), d0, 1e-5);
    assert_true(dist(cam.target, t0) > 0.01f);
    viewer_camera_zoom(&cam, 0.5f);
    assert_float_equal(dist(cam.eye, cam.target), 0.5f * d0, 1e-5);
    viewer_camera_zoom(&cam, 1e-9f); /* never onto the target */
    assert_true(dist(cam.eye, cam.target) > 0);
    float e0[3] = {cam.eye[0], cam.eye[1], cam.eye[2]};
    float d1 = dist(cam.eye, cam.target);
    viewer_camera_fly(&cam, 2.0f, 0);
    assert_float_equal(dist(cam.eye, e0), 2.0f, 1e-4);
    assert_float_equal(dist(cam.eye, cam.target), d1, 1e-4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_frame_each_up_axis),
        cmocka_unit_test(test_empty_box_frames_unit_cube),
        cmocka_unit_test(test_orbit_keeps_distance_and_stops_at_poles),
        cmocka_unit_test(test_pan_zoom_fly),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
