/* Photon display: buffers for both modes, propagation into them, and the
 * shader that animates the records. */
#include "photons.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "camera.h"
#include "clock.h"

/* Records are read through a buffer texture (two RGBA32F texels per
 * 32-byte record: x y z t, then history wavelength photon step), so one
 * vertex can see all K records of its photon and place it at any time. */
static const char *VERTEX =
    "#version 330 core\n"
    "uniform samplerBuffer records;\n"
    "uniform mat4 mvp;\n"
    "uniform int steps, per_photon;\n"
    "uniform float time, track;\n"
    "uniform uint filter_bits;\n"
    "uniform float point_size;\n"
    "out vec4 colour_v;\n"
    "vec4 rec(int p, int j) { return texelFetch(records, (p * steps + j) * 2); }\n"
    "vec3 at(int p, float t) {\n"
    "  vec4 a = rec(p, 0);\n"
    "  if (t <= a.w) return a.xyz;\n"
    "  for (int j = 1; j < steps; j++) {\n"
    "    vec4 b = rec(p, j);\n"
    "    if (t <= b.w) return mix(a.xyz, b.xyz, (t - a.w) / max(b.w - a.w, 1e-9));\n"
    "    a = b;\n"
    "  }\n"
    "  return a.xyz;\n"
    "}\n"
    "vec3 flag_colour(uint h) {\n"
    "  if ((h & 4u) != 0u) return vec3(0.2, 1.0, 0.3);\n"          /* SURFACE_DETECT */
    "  if ((h & 8u) != 0u) return vec3(1.0, 0.6, 0.1);\n"          /* SURFACE_ABSORB */
    "  if ((h & 2u) != 0u) return vec3(1.0, 0.25, 0.2);\n"         /* BULK_ABSORB */
    "  if ((h & 0xC0000000u) != 0u) return vec3(1.0, 0.2, 1.0);\n" /* STEP_LIMIT, NAN */
    "  if ((h & 1u) != 0u) return vec3(0.55, 0.7, 1.0);\n"         /* NO_HIT */
    "  return vec3(1.0);\n"
    "}\n"
    "void main() {\n"
    "  int p = gl_VertexID / per_photon;\n"
    "  bool tail = per_photon == 2 && (gl_VertexID & 1) == 1;\n"
    "  uint h = floatBitsToUint(texelFetch(records, (p * steps + steps - 1) * 2 + 1).x);\n"
    "  gl_PointSize = point_size;\n"
    "  if (filter_bits != 0u && (h & filter_bits) == 0u) {\n"
    "    gl_Position = vec4(2.0, 2.0, 2.0, 1.0);\n" /* outside the clip volume */
    "    return;\n"
    "  }\n"
    "  vec3 pos = at(p, tail ? time - track : time);\n"
    "  colour_v = vec4(flag_colour(h), tail ? 0.15 : 1.0);\n"
    "  gl_Position = mvp * vec4(pos, 1.0);\n"
    "}\n";

static const char *FRAGMENT = "#version 330 core\n"
                              "in vec4 colour_v;\n"
                              "out vec4 colour;\n"
                              "void main() { colour = colour_v; }\n";

static const struct {
    const char *name;
    uint32_t bits;
} FILTERS[VIEWER_FILTER_COUNT] = {
    {"all", 0},
    {"SURFACE_DETECT", PRISM_SURFACE_DETECT},
    {"SURFACE_ABSORB", PRISM_SURFACE_ABSORB},
    {"BULK_ABSORB", PRISM_BULK_ABSORB},
    {"NO_HIT", PRISM_NO_HIT},
    {"RAYLEIGH_SCATTER", PRISM_RAYLEIGH_SCATTER},
    {"REFLECT", PRISM_REFLECT_SPECULAR | PRISM_REFLECT_DIFFUSE},
};

const char *viewer_photons_filter_name(int f)
{
    return FILTERS[f % VIEWER_FILTER_COUNT].name;
}

uint32_t viewer_photons_filter_bits(int f)
{
    return FILTERS[f % VIEWER_FILTER_COUNT].bits;
}

const char *viewer_photon_mode_name(viewer_photon_mode mode)
{
    return mode == PHOTONS_VBO ? "VBO" : "copy";
}

static size_t records_bytes(const viewer_photons *ph)
{
    return ph->count * ph->steps * sizeof(prism_step_record);
}

/* K records per photon: enough for tracks, but the whole buffer stays
 * within the buffer-texture limit and 2 GiB. */
static unsigned choose_steps(size_t count)
{
    GLint max_texels = 0;
    glGetIntegerv(GL_MAX_TEXTURE_BUFFER_SIZE, &max_texels);
    size_t limit = (size_t)max_texels / 2;
    if (limit > ((size_t)1 << 31) / sizeof(prism_step_record))
        limit = ((size_t)1 << 31) / sizeof(prism_step_record);
    size_t k = count ? limit / count : 8;
    return k >= 8 ? 8 : k >= 2 ? (unsigned)k : 0;
}

static int gl_objects(viewer_photons *ph)
{
    ph->program = viewer_gl_program("photons", VERTEX, FRAGMENT);
    if (!ph->program)
        return -1;
    const char *names[] = {"mvp",   "records",     "steps",      "time",
                           "track", "filter_bits", "per_photon", "point_size"};
    GLint *locs[] = {&ph->u_mvp,   &ph->u_records, &ph->u_steps,      &ph->u_time,
                     &ph->u_track, &ph->u_filter,  &ph->u_per_photon, &ph->u_point};
    for (int i = 0; i < 8; i++)
        *locs[i] = glGetUniformLocation(ph->program, names[i]);
    glGenVertexArrays(1, &ph->vao);
    glGenBuffers(1, &ph->vbo);
    glBindBuffer(GL_ARRAY_BUFFER, ph->vbo);
    glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)records_bytes(ph), NULL, GL_DYNAMIC_DRAW);
    glBindBuffer(GL_ARRAY_BUFFER, 0);
    glGenTextures(1, &ph->texture);
    glBindTexture(GL_TEXTURE_BUFFER, ph->texture);
    glTexBuffer(GL_TEXTURE_BUFFER, GL_RGBA32F, ph->vbo);
    glBindTexture(GL_TEXTURE_BUFFER, 0);
    return glGetError() == GL_NO_ERROR ? 0 : -1;
}

static void release_mode_buffers(viewer_photons *ph)
{
    prism_buffer_release(ph->gl_buffer);
    prism_buffer_release(ph->device);
    if (ph->pinned)
        prism_buffer_release(ph->pinned);
    else
        free(ph->staging);
    ph->gl_buffer = ph->device = ph->pinned = NULL;
    ph->staging = NULL;
}

static int fail(prism_context *ctx, prism_result r, const char *what, char *err, size_t size)
{
    snprintf(err, size, "%s: %s (%s)", what, prism_context_last_error(ctx), prism_result_string(r));
    return -1;
}

/* VBO mode: wrap the VBO; without interop say why once and use copy mode. */
static int use_vbo(viewer_photons *ph, prism_context *ctx, char *err, size_t size)
{
    prism_result r = prism_buffer_create_gl(ctx, ph->vbo, records_bytes(ph), PRISM_GL_WRITE_DISCARD,
                                            ph->loader, "photons.vbo", &ph->gl_buffer);
    if (r != PRISM_SUCCESS && r != PRISM_ERROR_INTEROP_UNAVAILABLE)
        return fail(ctx, r, "photon VBO", err, size);
    if (r == PRISM_SUCCESS && prism_buffer_gl_interop(ph->gl_buffer)) {
        ph->mode = PHOTONS_VBO;
        return 0;
    }
    prism_buffer_release(ph->gl_buffer);
    ph->gl_buffer = NULL;
    if (!ph->fallback_said)
        fprintf(stderr,
                "prism-view: VBO mode needs CUDA-GL interop, which this GL context "
                "does not have (%s backend%s): photons use the copy path\n",
                prism_backend_name(prism_context_backend(ctx)),
                prism_context_gl_shared(ctx) ? "" : ", GL not shared");
    ph->fallback_said = true;
    return 1; /* copy mode, please */
}

static int use_copy(viewer_photons *ph, prism_context *ctx, char *err, size_t size)
{
    prism_result r = prism_buffer_create_device(ctx, records_bytes(ph), "photons.records",
                                                &ph->device);
    if (r != PRISM_SUCCESS)
        return fail(ctx, r, "photon records", err, size);
    /* Pinned host memory, so the copy runs at the bus's speed: the copy
     * mode measured is the best a non-interop viewer can do. */
    if (prism_buffer_create_pinned(ctx, records_bytes(ph), 0, "photons.staging", &ph->pinned) ==
        PRISM_SUCCESS)
        ph->staging = prism_buffer_host_pointer(ph->pinned);
    else
        ph->staging = malloc(records_bytes(ph));
    if (!ph->staging) {
        snprintf(err, size, "out of memory for %zu photon records", ph->count * ph->steps);
        return -1;
    }
    ph->mode = PHOTONS_COPY;
    return 0;
}

int viewer_photons_set_mode(viewer_photons *ph, prism_context *ctx, viewer_photon_mode mode,
                            char *err, size_t err_size)
{
    if (!ph->count)
        return 0;
    release_mode_buffers(ph);
    int r = mode == PHOTONS_VBO ? use_vbo(ph, ctx, err, err_size) : 1;
    return r == 1 ? use_copy(ph, ctx, err, err_size) : r;
}

int viewer_photons_create(viewer_photons *ph, size_t count, prism_gl_get_proc_address_fn loader,
                          char *err, size_t err_size)
{
    memset(ph, 0, sizeof *ph);
    ph->loader = loader;
    if (!count)
        return 0;
    ph->steps = choose_steps(count);
    if (!ph->steps) {
        snprintf(err, err_size, "%zu photons do not fit a GL buffer texture", count);
        return -1;
    }
    ph->count = count;
    if (gl_objects(ph)) {
        snprintf(err, err_size, "photons: GL objects for %zu photons could not be made", count);
        viewer_photons_destroy(ph);
        return -1;
    }
    return 0;
}

/* Copy mode: device -> host -> GL. Also finds the last time. */
static int copy_to_gl(viewer_photons *ph, prism_context *ctx, char *err, size_t size)
{
    double t0 = viewer_clock();
    prism_result r = prism_buffer_read(ph->device, 0, ph->staging, records_bytes(ph));
    if (r != PRISM_SUCCESS)
        return fail(ctx, r, "photon records to host", err, size);
    glBindBuffer(GL_ARRAY_BUFFER, ph->vbo);
    glBufferSubData(GL_ARRAY_BUFFER, 0, (GLsizeiptr)records_bytes(ph), ph->staging);
    glBindBuffer(GL_ARRAY_BUFFER, 0);
    ph->copy_seconds = viewer_clock() - t0;
    return 0;
}

int viewer_photons_propagate(viewer_photons *ph, prism_context *ctx, const prism_geometry *geometry,
                             const prism_photon_source *source, char *err, size_t err_size)
{
    if (!ph->count)
        return 0;
    /* The records only: the animation's time range is the stats' latest
     * final time (downloading the 1M final photons to find it was a third
     * of the first propagate's 60 ms on an H200). */
    prism_propagate_desc desc = {.seed = ph->seed, .record_steps = ph->steps};
    prism_propagate_outputs out = {
        .records = {.kind = PRISM_TARGET_BUFFER,
                    .buffer = ph->mode == PHOTONS_VBO ? ph->gl_buffer : ph->device}};
    prism_photon_source src = *source;
    src.count = ph->count;
    double t0 = viewer_clock();
    prism_result r = prism_propagate(ctx, geometry, &src, &desc, &out, &ph->stats);
    ph->propagate_seconds = viewer_clock() - t0;
    if (r != PRISM_SUCCESS)
        return fail(ctx, r, "prism_propagate", err, err_size);
    if (ph->time_max <= 0)
        ph->time_max = ph->stats.time_max;
    if (ph->mode == PHOTONS_COPY && copy_to_gl(ph, ctx, err, err_size))
        return -1;
    return 0;
}

void viewer_photons_draw(const viewer_photons *ph, const float view[16], const float proj[16],
                         double time)
{
    if (!ph->count)
        return;
    float mvp[16];
    viewer_mat4_mul(proj, view, mvp);
    glDisable(GL_DEPTH_TEST); /* photons inside a closed detector stay visible */
    glEnable(GL_BLEND);
    glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
    glEnable(GL_PROGRAM_POINT_SIZE);
    glUseProgram(ph->program);
    glUniformMatrix4fv(ph->u_mvp, 1, GL_FALSE, mvp);
    glActiveTexture(GL_TEXTURE0);
    glBindTexture(GL_TEXTURE_BUFFER, ph->texture);
    glUniform1i(ph->u_records, 0);
    glUniform1i(ph->u_steps, (GLint)ph->steps);
    glUniform1f(ph->u_time, (float)time);
    glUniform1f(ph->u_track, (float)(ph->time_max * 0.04));
    glUniform1ui(ph->u_filter, viewer_photons_filter_bits(ph->filter));
    glBindVertexArray(ph->vao);
    glUniform1i(ph->u_per_photon, 2);
    glUniform1f(ph->u_point, 1.0f);
    glDrawArrays(GL_LINES, 0, (GLsizei)(ph->count * 2));
    glUniform1i(ph->u_per_photon, 1);
    /* Big runs as single pixels, small ones as dots that can be seen. */
    glUniform1f(ph->u_point, ph->count >= 50000 ? 1.0f : ph->count >= 5000 ? 2.0f : 3.0f);
    glDrawArrays(GL_POINTS, 0, (GLsizei)ph->count);
    glBindVertexArray(0);
    glBindTexture(GL_TEXTURE_BUFFER, 0);
    glDisable(GL_BLEND);
    glDisable(GL_PROGRAM_POINT_SIZE);
}

void viewer_photons_destroy(viewer_photons *ph)
{
    release_mode_buffers(ph);
    if (ph->texture)
        glDeleteTextures(1, &ph->texture);
    if (ph->vbo)
        glDeleteBuffers(1, &ph->vbo);
    if (ph->vao)
        glDeleteVertexArrays(1, &ph->vao);
    if (ph->program)
        glDeleteProgram(ph->program);
    memset(ph, 0, sizeof *ph);
}
