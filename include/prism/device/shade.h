/* Per-pixel rendering: a primary ray from the camera, headlight diffuse
 * shading with a colour per material, or x-ray layers blended front to back.
 * Pixels are RGBA8 packed little-endian (R in the lowest byte), the byte
 * order of GL_RGBA / GL_UNSIGNED_BYTE. */
#ifndef PRISM_KERNELS_SHADE_H
#define PRISM_KERNELS_SHADE_H

#include "camera.h"
#include "traverse.h"

enum { PRISM_SHADE_SHADED = 0, PRISM_SHADE_XRAY = 1 };

typedef struct prism_render_params {
    prism_camera_basis camera;
    uint32_t width, height;
    uint32_t mode;
    uint32_t layers;
    float alpha, ambient, max_distance;
    uint32_t background;    /* packed RGBA */
    const uint32_t *colors; /* packed RGBA per material */
    uint32_t color_count;
    uint32_t bottom_row_first;
    uint32_t row_pixels; /* distance between rows, in pixels */
    /* Solids rays pass through: bit s of hidden[s / 32] for solid s <
     * hidden_bits (hidden_bits 0: none, hidden may be NULL). */
    const uint32_t *hidden;
    uint32_t hidden_bits;
    uint32_t max_hidden_crossings; /* hidden surfaces a ray may pass */
    /* One word the CUDA kernel's persistent warps count pixels off (zeroed
     * before each launch); NULL where there is none. */
    uint32_t *work;
} prism_render_params;

PRISM_HD uint32_t prism_pack_rgba(float r, float g, float b, float a)
{
    float c[4] = {r, g, b, a};
    uint32_t out = 0;
    for (int i = 0; i < 4; i++) {
        float v = fminf(fmaxf(c[i], 0.0f), 1.0f);
        out |= (uint32_t)(v * 255.0f + 0.5f) << (8 * i);
    }
    return out;
}

PRISM_HD float prism_channel(uint32_t rgba, int i)
{
    return (float)((rgba >> (8 * i)) & 0xFFu) * (1.0f / 255.0f);
}

/* The default colour of material m: hues spread by the golden ratio, so
 * neighbouring indices differ, fully saturated-ish and opaque. */
PRISM_HD uint32_t prism_palette(uint32_t m)
{
    float h = (float)(m * 0.61803398875 - (double)(uint32_t)(m * 0.61803398875)) * 6.0f;
    int sector = (int)h;
    float f = h - (float)sector, p = 0.25f, q = 0.25f + 0.7f * (1.0f - f), t = 0.25f + 0.7f * f;
    float r, g, b;
    switch (sector % 6) {
    case 0:
        r = 0.95f;
        g = t;
        b = p;
        break;
    case 1:
        r = q;
        g = 0.95f;
        b = p;
        break;
    case 2:
        r = p;
        g = 0.95f;
        b = t;
        break;
    case 3:
        r = p;
        g = q;
        b = 0.95f;
        break;
    case 4:
        r = t;
        g = p;
        b = 0.95f;
        break;
    default:
        r = 0.95f;
        g = p;
        b = q;
        break;
    }
    return prism_pack_rgba(r, g, b, 1.0f);
}

PRISM_HD uint32_t prism_material_color(const prism_render_params *p, uint32_t material)
{
    return material < p->color_count ? p->colors[material] : prism_palette(material);
}

/* Headlight brightness of triangle `index` seen along unit `d`. */
PRISM_HD float prism_headlight(const prism_geometry_view *g, const prism_render_params *p,
                               uint32_t index, pv3 d)
{
    const uint32_t *tri = g->triangles + 3u * (size_t)index;
    pv3 v0 = prism_trace_vertex(g, tri[0]);
    pv3 n = pv3_normalize(pv3_cross(pv3_sub(prism_trace_vertex(g, tri[1]), v0),
                                    pv3_sub(prism_trace_vertex(g, tri[2]), v0)));
    float c = fabsf(pv3_dot(n, d));
    return p->ambient + (1.0f - p->ambient) * c;
}

PRISM_HD int prism_solid_hidden(const prism_render_params *p, uint32_t solid)
{
    return solid < p->hidden_bits && ((p->hidden[solid >> 5] >> (solid & 31u)) & 1u);
}

/* A pixel's state between traces: its ray, where the next trace starts,
 * and the colour blended so far. A pixel is prism_shade_begin, then a
 * trace and prism_shade_hit for as long as that returns 1, then
 * prism_shade_end; the CUDA backend runs the same steps with its own
 * traversal (prism/device/traverse_gpu.h). */
typedef struct prism_shade_state {
    pv3 d;
    float tmin;
    uint32_t skip;
    uint32_t layer, layers, crossings;
    float alpha, acc[3], acc_a;
} prism_shade_state;

PRISM_HD void prism_shade_begin(const prism_render_params *p, uint32_t x, uint32_t y,
                                prism_shade_state *s)
{
    s->d = prism_camera_ray(&p->camera, x, y, p->width, p->height);
    s->tmin = 0.0f;
    s->skip = PRISM_TRACE_NONE;
    s->layer = 0;
    s->layers = p->mode == PRISM_SHADE_XRAY ? p->layers : 1u;
    s->crossings = 0;
    s->alpha = p->mode == PRISM_SHADE_XRAY ? p->alpha : 1.0f;
    s->acc[0] = s->acc[1] = s->acc[2] = s->acc_a = 0.0f;
}

/* Take the trace's result (`hit` NULL: missed). Returns whether to trace
 * again. A hidden solid's surface is stepped over like an x-ray layer
 * that adds nothing: the ray goes on from just past it, at most
 * max_hidden_crossings times, and past that sees nothing more. */
PRISM_HD int prism_shade_hit(const prism_geometry_view *g, const prism_render_params *p,
                             prism_shade_state *s, const prism_trace_hit *hit)
{
    if (hit == NULL)
        return 0;
    /* Past this surface: a ray through an edge hits both triangles at
     * the same t, which must count as one layer. */
    s->tmin = hit->t + 1e-6f * (1.0f + hit->t);
    s->skip = hit->index;
    /* triangle_info is read once per hit, not per triangle tested */
    const prism_triangle_info info = g->triangle_info[hit->index];
    if (p->hidden_bits != 0 && prism_solid_hidden(p, info.solid))
        return ++s->crossings <= p->max_hidden_crossings;
    s->layer++;
    uint32_t color = prism_material_color(p, prism_materials_inner(info.materials));
    float light = prism_headlight(g, p, hit->index, s->d);
    float w = (1.0f - s->acc_a) * s->alpha * prism_channel(color, 3);
    for (int i = 0; i < 3; i++)
        s->acc[i] += w * light * prism_channel(color, i);
    s->acc_a += w;
    return s->layer < s->layers;
}

PRISM_HD uint32_t prism_shade_end(const prism_render_params *p, const prism_shade_state *s)
{
    float rest = 1.0f - s->acc_a, ba = prism_channel(p->background, 3);
    return prism_pack_rgba(s->acc[0] + rest * ba * prism_channel(p->background, 0),
                           s->acc[1] + rest * ba * prism_channel(p->background, 1),
                           s->acc[2] + rest * ba * prism_channel(p->background, 2),
                           s->acc_a + rest * ba);
}

/* Colour of the pixel at column x, row y (row 0 = top of the picture). */
PRISM_HD uint32_t prism_shade_pixel(const prism_geometry_view *g, const prism_render_params *p,
                                    uint32_t x, uint32_t y)
{
    prism_shade_state s;
    prism_shade_begin(p, x, y, &s);
    for (int more = s.layers > 0; more;) {
        prism_trace_hit hit;
        int h = prism_trace_closest(g, p->camera.eye, s.d, s.tmin, p->max_distance, s.skip, &hit);
        more = prism_shade_hit(g, p, &s, h ? &hit : NULL);
    }
    return prism_shade_end(p, &s);
}

/* Threads map to pixels in tiles of 8 x 4, so the 32 rays of a warp leave
 * through neighbouring pixels and walk the same BVH nodes. A band of
 * `rows` rows from row y0 has prism_render_threads() threads; thread k
 * renders pixel (x, y), or nothing when the tile sticks out of the band. */
#define PRISM_TILE_W 8u
#define PRISM_TILE_H 4u

PRISM_HD uint32_t prism_render_threads(uint32_t width, uint32_t rows)
{
    uint32_t tx = (width + PRISM_TILE_W - 1u) / PRISM_TILE_W;
    uint32_t ty = (rows + PRISM_TILE_H - 1u) / PRISM_TILE_H;
    return tx * ty * PRISM_TILE_W * PRISM_TILE_H;
}

/* Thread k's pixel: column *x and row *y of the picture, and where it goes
 * in the image; 0 when the tile sticks out of the band. */
PRISM_HD int prism_render_pixel(const prism_render_params *p, uint32_t y0, uint32_t rows,
                                uint32_t k, uint32_t *x, uint32_t *y, size_t *at)
{
    uint32_t tiles_x = (p->width + PRISM_TILE_W - 1u) / PRISM_TILE_W;
    uint32_t tile = k / (PRISM_TILE_W * PRISM_TILE_H), in = k % (PRISM_TILE_W * PRISM_TILE_H);
    *x = (tile % tiles_x) * PRISM_TILE_W + in % PRISM_TILE_W;
    uint32_t dy = (tile / tiles_x) * PRISM_TILE_H + in / PRISM_TILE_W;
    if (*x >= p->width || dy >= rows)
        return 0;
    *y = y0 + dy;
    uint32_t row = p->bottom_row_first ? p->height - 1u - *y : *y;
    *at = (size_t)row * p->row_pixels + *x;
    return 1;
}

PRISM_HD void prism_render_one(const prism_geometry_view *g, const prism_render_params *p,
                               uint32_t *image, uint32_t y0, uint32_t rows, uint32_t k)
{
    uint32_t x, y;
    size_t at;
    if (prism_render_pixel(p, y0, rows, k, &x, &y, &at))
        image[at] = prism_shade_pixel(g, p, x, y);
}

#endif
