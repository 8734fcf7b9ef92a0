/* The pinhole camera of prism_render, reduced to what a pixel needs: the
 * eye and three scaled axes, so a primary ray is two multiply-adds. Built
 * on the host by engine/launch/render.c (prism__camera_basis). */
#ifndef PRISM_KERNELS_CAMERA_H
#define PRISM_KERNELS_CAMERA_H

#include <stddef.h>
#include <stdint.h>

#include "vec.h"

typedef struct prism_camera_basis {
    pv3 eye;
    pv3 forward; /* unit view direction */
    pv3 right;   /* unit right * tan(vfov/2) * aspect */
    pv3 up;      /* unit up * tan(vfov/2) */
} prism_camera_basis;

/* Direction (normalised) of the ray through the centre of pixel (x, y),
 * row 0 at the top of the picture. */
PRISM_HD pv3 prism_camera_ray(const prism_camera_basis *c, uint32_t x, uint32_t y, uint32_t width,
                              uint32_t height)
{
    float sx = 2.0f * ((float)x + 0.5f) / (float)width - 1.0f;
    float sy = 1.0f - 2.0f * ((float)y + 0.5f) / (float)height;
    pv3 d = pv3_madd(pv3_madd(c->forward, c->right, sx), c->up, sy);
    return pv3_normalize(d);
}

#endif
