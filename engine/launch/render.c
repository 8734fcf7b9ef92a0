/* prism_render: checks the camera and descriptor, builds the kernel
 * parameters, resolves the target to a pointer the backend can write
 * (host memory, device memory, or a GL pixel-unpack buffer mapped through
 * interop or the copy path), and launches the image in short bands. */
#include "render_internal.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "engine/backend.h"
#include "engine/upload/geometry_internal.h"
#include "kernel_state.h"
#include "engine/upload/optics_tables.h"
#include "prism/memory.h"
#include "target.h"

#define PRISM_RENDER_MAX_SIZE 16384u

static prism_result basis_from_matrix(prism_context *ctx, const float *m, prism_camera_basis *c)
{
    c->eye = pv3_make(m[12], m[13], m[14]);
    c->right = pv3_normalize(pv3_make(m[0], m[1], m[2]));
    c->up = pv3_normalize(pv3_make(m[4], m[5], m[6]));
    c->forward = pv3_scale(pv3_normalize(pv3_make(m[8], m[9], m[10])), -1.0f);
    if (pv3_dot(c->right, c->right) < 0.5f || pv3_dot(c->up, c->up) < 0.5f ||
        pv3_dot(c->forward, c->forward) < 0.5f || !pv3_finite(c->eye))
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                            "render: camera matrix has a zero or non-finite axis");
    return PRISM_SUCCESS;
}

static prism_result basis_from_look_at(prism_context *ctx, const prism_camera *cam,
                                       prism_camera_basis *c)
{
    c->eye = pv3_load(cam->eye);
    pv3 f = pv3_sub(pv3_load(cam->look_at), c->eye);
    if (!(pv3_length(f) > 0.0f) || !pv3_finite(f))
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                            "render: camera eye and look_at are the same point");
    c->forward = pv3_normalize(f);
    pv3 up = pv3_load(cam->up);
    if (pv3_dot(up, up) == 0.0f)
        up = pv3_make(0.0f, 1.0f, 0.0f);
    pv3 r = pv3_cross(c->forward, pv3_normalize(up));
    if (!(pv3_length(r) > 1e-6f))
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                            "render: camera up is parallel to the view direction");
    c->right = pv3_normalize(r);
    c->up = pv3_cross(c->right, c->forward);
    return PRISM_SUCCESS;
}

prism_result prism__camera_basis(prism_context *ctx, const prism_camera *camera, uint32_t width,
                                 uint32_t height, prism_camera_basis *out)
{
    float vfov = camera->vfov_degrees == 0.0f ? 45.0f : camera->vfov_degrees;
    if (!(vfov > 0.0f && vfov < 180.0f))
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                            "render: vertical field of view %g is not in (0, 180) degrees",
                            (double)vfov);
    prism_result r = camera->use_matrix ? basis_from_matrix(ctx, camera->matrix, out)
                                        : basis_from_look_at(ctx, camera, out);
    if (r != PRISM_SUCCESS)
        return r;
    float t = tanf(vfov * 0.5f * 3.14159265358979f / 180.0f);
    out->up = pv3_scale(out->up, t);
    out->right = pv3_scale(out->right, t * (float)width / (float)height);
    return PRISM_SUCCESS;
}

static uint32_t pack(const uint8_t c[4])
{
    return (uint32_t)c[0] | (uint32_t)c[1] << 8 | (uint32_t)c[2] << 16 | (uint32_t)c[3] << 24;
}

static prism_result check_desc(prism_context *ctx, const prism_render_desc *d)
{
    if (d->width == 0 || d->height == 0 || d->width > PRISM_RENDER_MAX_SIZE ||
        d->height > PRISM_RENDER_MAX_SIZE)
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                            "render: image size %ux%u is not in 1..%u", d->width, d->height,
                            PRISM_RENDER_MAX_SIZE);
    if (d->mode != PRISM_RENDER_SHADED && d->mode != PRISM_RENDER_XRAY)
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT, "render: unknown mode %d",
                            (int)d->mode);
    if (d->xray_layers > 16 || !(d->xray_alpha >= 0.0f && d->xray_alpha <= 1.0f))
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                            "render: x-ray layers %u (at most 16) or alpha %g (in (0, 1])",
                            d->xray_layers, (double)d->xray_alpha);
    if (!(d->ambient >= 0.0f && d->ambient <= 1.0f) || !(d->max_distance >= 0.0f))
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                            "render: ambient %g (in [0, 1]) or max_distance %g (>= 0)",
                            (double)d->ambient, (double)d->max_distance);
    if (d->material_colors_count > 0 && d->material_colors == NULL)
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                            "render: %zu material colours but no array", d->material_colors_count);
    if (d->hidden_solids_count > 0 && d->hidden_solids == NULL)
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                            "render: %zu hidden solids but no array", d->hidden_solids_count);
    for (size_t i = 0; i < d->hidden_solids_count; i++)
        if (d->hidden_solids[i] >= PRISM_RENDER_MAX_SOLID_ID)
            return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                                "render: hidden solid %zu has id %u (at most %u)", i,
                                d->hidden_solids[i], PRISM_RENDER_MAX_SOLID_ID - 1u);
    return PRISM_SUCCESS;
}

prism_result prism__render_params(prism_context *ctx, const prism_camera *camera,
                                  const prism_render_desc *desc, prism_render_params *p)
{
    if (camera == NULL || desc == NULL)
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT, "render: NULL camera or desc");
    prism_result r = check_desc(ctx, desc);
    if (r == PRISM_SUCCESS)
        r = prism__camera_basis(ctx, camera, desc->width, desc->height, &p->camera);
    if (r != PRISM_SUCCESS)
        return r;
    p->width = desc->width;
    p->height = desc->height;
    p->mode = desc->mode == PRISM_RENDER_XRAY ? PRISM_SHADE_XRAY : PRISM_SHADE_SHADED;
    p->layers = desc->xray_layers == 0 ? 4u : desc->xray_layers;
    p->alpha = desc->xray_alpha == 0.0f ? 0.3f : desc->xray_alpha;
    p->ambient = desc->ambient == 0.0f ? 0.2f : desc->ambient;
    p->max_distance = desc->max_distance == 0.0f ? INFINITY : desc->max_distance;
    p->background = pack(desc->background);
    p->colors = NULL;
    p->color_count = 0;
    p->bottom_row_first = desc->bottom_row_first;
    p->row_pixels = desc->width;
    p->hidden = NULL;
    p->hidden_bits = 0;
    p->max_hidden_crossings = PRISM_RENDER_MAX_HIDDEN_CROSSINGS;
    p->work = NULL;
    return PRISM_SUCCESS;
}

uint32_t prism__render_hidden_words(const prism_render_desc *desc)
{
    uint32_t bits = 0;
    for (size_t i = 0; i < desc->hidden_solids_count; i++)
        if (desc->hidden_solids[i] >= bits)
            bits = desc->hidden_solids[i] + 1u;
    return (bits + 31u) / 32u;
}

void prism__render_hidden_mask(const prism_render_desc *desc, uint32_t *mask, uint32_t words)
{
    memset(mask, 0, words * sizeof *mask);
    for (size_t i = 0; i < desc->hidden_solids_count; i++)
        mask[desc->hidden_solids[i] >> 5] |= 1u << (desc->hidden_solids[i] & 31u);
}

uint32_t *prism__render_colors(const prism_render_desc *desc, uint32_t count)
{
    uint32_t *c = malloc((count > 0 ? count : 1) * sizeof *c);
    if (c == NULL)
        return NULL;
    for (uint32_t m = 0; m < count; m++)
        c[m] = m < desc->material_colors_count ? pack(desc->material_colors[m]) : prism_palette(m);
    return c;
}

void prism_render_palette_color(uint32_t index, uint8_t rgba[4])
{
    uint32_t c = prism_palette(index);
    for (int i = 0; i < 4; i++)
        rgba[i] = (uint8_t)(c >> (8 * i));
}

prism_result prism__render_launch(prism_context *ctx, const prism_geometry_view *g,
                                  const prism_render_params *p, uint32_t *image, unsigned *launches)
{
    /* Whole 8x4 tiles per band, so no tile is cut between launches. */
    uint32_t band_rows = PRISM_RENDER_PIXELS_PER_LAUNCH / p->width / PRISM_TILE_H * PRISM_TILE_H;
    if (band_rows == 0)
        band_rows = PRISM_TILE_H;
    for (uint32_t y = 0; y < p->height; y += band_rows) {
        uint32_t rows = p->height - y < band_rows ? p->height - y : band_rows;
        prism_result r = ctx->be->render(ctx, g, p, image, y, rows);
        if (r != PRISM_SUCCESS)
            return r;
        if (launches != NULL)
            (*launches)++;
    }
    return PRISM_SUCCESS;
}

/* The colour table, followed by the hidden-solid mask and the CUDA kernel's
 * work counter (one word), where the kernels can read them, uploaded only
 * when the colours or mask changed since the last frame (kept in the
 * context's kernel state as one table, so hiding the world costs no
 * allocation or copy per frame). */
static prism_result place_colors(prism_context *ctx, const prism_geometry *geometry,
                                 const prism_render_desc *desc, prism_render_params *p)
{
    const prism_optics_view *o = prism__optics_view(prism__geometry_optics(geometry));
    uint32_t count = o != NULL ? o->material_count : 0;
    if (desc->material_colors_count > count)
        count = desc->material_colors_count > 65535u ? 65535u
                                                     : (uint32_t)desc->material_colors_count;
    if (count < 64)
        count = 64;
    uint32_t words = prism__render_hidden_words(desc), total = count + words + 1u;
    uint32_t *host = prism__render_colors(desc, total);
    if (host == NULL)
        return prism__error(ctx, PRISM_ERROR_OUT_OF_MEMORY, "render: colour table");
    prism__render_hidden_mask(desc, host + count, words);
    host[count + words] = 0; /* the work counter */
    struct prism_kernel_state *k = ctx->kernels;
    prism_result r = PRISM_SUCCESS;
    if (k->colors_count != total || memcmp(k->colors_host, host, total * sizeof *host) != 0) {
        if (k->colors.pointer != NULL)
            prism__scratch_release(&k->colors);
        free(k->colors_host);
        k->colors_host = NULL;
        k->colors_count = 0;
        r = prism__scratch_upload(ctx, &k->colors, host, total * sizeof *host, "render.colors");
        if (r == PRISM_SUCCESS) {
            k->colors_host = host;
            k->colors_count = total;
            host = NULL;
        }
    }
    free(host);
    p->colors = k->colors.pointer;
    p->color_count = count;
    p->hidden = words > 0 && p->colors != NULL ? p->colors + count : NULL;
    p->hidden_bits = p->hidden != NULL ? words * 32u : 0u;
    p->work = p->colors != NULL ? (uint32_t *)k->colors.pointer + count + words : NULL;
    return r;
}

prism_result prism_render(prism_context *ctx, const prism_geometry *geometry,
                          const prism_camera *camera, const prism_render_desc *desc,
                          const prism_target *target, prism_render_stats *stats)
{
    double t0 = omp_get_wtime();
    if (ctx == NULL || geometry == NULL || target == NULL)
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                            "render: NULL context, geometry or target");
    if (prism__geometry_context(geometry) != ctx)
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                            "render: the geometry belongs to another context");
    prism_render_params p;
    prism_result r = prism__render_params(ctx, camera, desc, &p);
    if (r != PRISM_SUCCESS)
        return r;
    prism_render_stats st = {0};
    prism__target_map map;
    r = place_colors(ctx, geometry, desc, &p);
    if (r == PRISM_SUCCESS)
        r = prism__target_begin(ctx, target, desc->width * 4u, desc->height, "render", &map);
    if (r == PRISM_SUCCESS) {
        p.row_pixels = (uint32_t)(map.row_bytes / 4u);
        prism_geometry_view view;
        r = prism__geometry_map(geometry, &view);
        if (r == PRISM_SUCCESS) {
            double l0 = omp_get_wtime();
            r = prism__render_launch(ctx, &view, &p, map.pointer, &st.launches);
            st.launch_seconds = omp_get_wtime() - l0;
            prism_result u = prism__geometry_unmap(geometry);
            if (r == PRISM_SUCCESS)
                r = u;
        }
        st.interop = map.interop;
        prism_result e = prism__target_end(ctx, &map, r == PRISM_SUCCESS);
        if (r == PRISM_SUCCESS)
            r = e;
    }
    st.seconds = omp_get_wtime() - t0;
    if (stats != NULL)
        *stats = st;
    return r;
}
