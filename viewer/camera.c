/* Camera motion and the view/projection matrices. */
#include "camera.h"

#include <math.h>
#include <string.h>

#define VIEWER_PI 3.14159265f

static void sub(const float a[3], const float b[3], float o[3])
{
    for (int i = 0; i < 3; i++)
        o[i] = a[i] - b[i];
}

static float dot(const float a[3], const float b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static void cross(const float a[3], const float b[3], float o[3])
{
    float r[3] = {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
    memcpy(o, r, sizeof r);
}

static float normalize(float v[3])
{
    float n = sqrtf(dot(v, v));
    if (n > 0)
        for (int i = 0; i < 3; i++)
            v[i] /= n;
    return n;
}

/* Rotate v about the unit axis k by angle a (Rodrigues). */
static void rotate(float v[3], const float k[3], float a)
{
    float c = cosf(a), s = sinf(a), kxv[3], kv = dot(k, v);
    cross(k, v, kxv);
    for (int i = 0; i < 3; i++)
        v[i] = v[i] * c + kxv[i] * s + k[i] * kv * (1 - c);
}

void viewer_camera_frame(viewer_camera *cam, const float lo[3], const float hi[3], int up_axis,
                         float fov_deg)
{
    float c[3], ext[3];
    int empty = lo[0] > hi[0] || lo[1] > hi[1] || lo[2] > hi[2];
    for (int i = 0; i < 3; i++) {
        c[i] = empty ? 0.0f : 0.5f * (lo[i] + hi[i]);
        ext[i] = empty ? 1.0f : hi[i] - lo[i];
    }
    float diag = sqrtf(dot(ext, ext));
    if (!(diag > 0))
        diag = 1;
    float radius = 0.5f * diag;
    cam->fov_deg = fov_deg > 0 ? fov_deg : 45.0f;
    cam->scene_size = diag;
    memset(cam->up, 0, sizeof cam->up);
    cam->up[up_axis] = 1;
    /* A three-quarter view: along the two horizontal axes and a bit above. */
    int h1 = (up_axis + 1) % 3, h2 = (up_axis + 2) % 3;
    float dir[3] = {0};
    dir[h1] = 0.6f;
    dir[h2] = 0.8f;
    dir[up_axis] = 0.45f;
    normalize(dir);
    float dist = radius / sinf(0.5f * cam->fov_deg * VIEWER_PI / 180.0f) * 1.05f;
    memcpy(cam->target, c, sizeof c);
    for (int i = 0; i < 3; i++)
        cam->eye[i] = c[i] + dir[i] * dist;
}

void viewer_camera_orbit(viewer_camera *cam, float yaw, float pitch)
{
    float off[3], up[3], right[3];
    sub(cam->eye, cam->target, off);
    memcpy(up, cam->up, sizeof up);
    normalize(up);
    rotate(off, up, yaw);
    cross(up, off, right);
    if (normalize(right) == 0)
        return;
    /* Stop short of the poles, where up and the view direction meet. */
    float r = sqrtf(dot(off, off));
    float elev = asinf(fmaxf(-1.0f, fminf(1.0f, dot(off, up) / r)));
    float limit = 1.50f;
    if (elev + pitch > limit)
        pitch = limit - elev;
    if (elev + pitch < -limit)
        pitch = -limit - elev;
    rotate(off, right, -pitch);
    for (int i = 0; i < 3; i++)
        cam->eye[i] = cam->target[i] + off[i];
}

/* Unit forward, right and true-up vectors of the view. */
static void basis(const viewer_camera *cam, float f[3], float r[3], float u[3])
{
    sub(cam->target, cam->eye, f);
    normalize(f);
    cross(f, cam->up, r);
    normalize(r);
    cross(r, f, u);
}

void viewer_camera_pan(viewer_camera *cam, float dx, float dy)
{
    float f[3], r[3], u[3], off[3];
    basis(cam, f, r, u);
    sub(cam->eye, cam->target, off);
    float dist = sqrtf(dot(off, off));
    float h = 2 * dist * tanf(0.5f * cam->fov_deg * VIEWER_PI / 180.0f);
    for (int i = 0; i < 3; i++) {
        float d = (-dx * r[i] + dy * u[i]) * h;
        cam->eye[i] += d;
        cam->target[i] += d;
    }
}

void viewer_camera_zoom(viewer_camera *cam, float factor)
{
    float off[3];
    sub(cam->eye, cam->target, off);
    float dist = sqrtf(dot(off, off));
    float min = 1e-4f * cam->scene_size;
    if (dist * factor < min)
        factor = min / dist;
    for (int i = 0; i < 3; i++)
        cam->eye[i] = cam->target[i] + off[i] * factor;
}

void viewer_camera_fly(viewer_camera *cam, float forward, float right)
{
    float f[3], r[3], u[3];
    basis(cam, f, r, u);
    for (int i = 0; i < 3; i++) {
        float d = f[i] * forward + r[i] * right;
        cam->eye[i] += d;
        cam->target[i] += d;
    }
}

void viewer_camera_view(const viewer_camera *cam, float m[16])
{
    float f[3], r[3], u[3];
    basis(cam, f, r, u);
    float t[16] = {r[0],
                   u[0],
                   -f[0],
                   0,
                   r[1],
                   u[1],
                   -f[1],
                   0,
                   r[2],
                   u[2],
                   -f[2],
                   0,
                   -dot(r, cam->eye),
                   -dot(u, cam->eye),
                   dot(f, cam->eye),
                   1};
    memcpy(m, t, sizeof t);
}

void viewer_camera_projection(const viewer_camera *cam, float aspect, float m[16])
{
    float off[3];
    sub(cam->eye, cam->target, off);
    float dist = sqrtf(dot(off, off));
    /* Clip planes from the scene size and the distance, so that both a far
     * overview and a fly-through inside the detector keep their depth. */
    float zfar = dist + 2 * cam->scene_size;
    float znear = fmaxf(zfar * 1e-4f, 1e-6f);
    float t = 1.0f / tanf(0.5f * cam->fov_deg * VIEWER_PI / 180.0f);
    memset(m, 0, 16 * sizeof *m);
    m[0] = t / aspect;
    m[5] = t;
    m[10] = -(zfar + znear) / (zfar - znear);
    m[11] = -1;
    m[14] = -2 * zfar * znear / (zfar - znear);
}

void viewer_mat4_mul(const float a[16], const float b[16], float out[16])
{
    float r[16];
    for (int c = 0; c < 4; c++)
        for (int row = 0; row < 4; row++) {
            float s = 0;
            for (int k = 0; k < 4; k++)
                s += a[k * 4 + row] * b[c * 4 + k];
            r[c * 4 + row] = s;
        }
    memcpy(out, r, sizeof r);
}
