/* The viewer's camera: eye, target, up and field of view, moved by orbit,
 * pan, zoom and WASD flight, framed at start on the scene's bounding box
 * with the file's up axis up. Matrices are column-major float[16], as GL
 * takes them. */
#ifndef VIEWER_CAMERA_H
#define VIEWER_CAMERA_H

typedef struct viewer_camera {
    float eye[3], target[3], up[3];
    float fov_deg;    /* vertical */
    float scene_size; /* bbox diagonal: sets speeds and clip planes */
} viewer_camera;

/* Look at the box from a three-quarter view with `up_axis` (0 x, 1 y, 2 z)
 * up, far enough that the whole box fits in the field of view. An empty box
 * (min > max) frames the unit cube. */
void viewer_camera_frame(viewer_camera *cam, const float lo[3], const float hi[3], int up_axis,
                         float fov_deg);
/* Rotate the eye about the target: dx, dy in radians (yaw about up, pitch). */
void viewer_camera_orbit(viewer_camera *cam, float yaw, float pitch);
/* Move eye and target in the view plane by fractions of the view height. */
void viewer_camera_pan(viewer_camera *cam, float dx, float dy);
/* Move the eye towards the target by a factor (0.9 = 10% closer). */
void viewer_camera_zoom(viewer_camera *cam, float factor);
/* Fly eye and target: forward and right in metres. */
void viewer_camera_fly(viewer_camera *cam, float forward, float right);

void viewer_camera_view(const viewer_camera *cam, float m[16]);
void viewer_camera_projection(const viewer_camera *cam, float aspect, float m[16]);
void viewer_mat4_mul(const float a[16], const float b[16], float out[16]);

#endif
