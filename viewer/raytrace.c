/* Ray-traced view: prism_render -> PBO -> full-screen triangle. The
 * fragment shader reads the PBO in place as a buffer texture (texelFetch),
 * so a frame is the kernel and one draw: copying the PBO into a 2D texture
 * first (glTexSubImage2D) made the frame 1.48x the kernel on an H200
 * (1.10 ms for a 0.75 ms kernel at 1920x1080). Where the buffer texture
 * cannot hold the image (GL_MAX_TEXTURE_BUFFER_SIZE), the copy remains. */
#include "raytrace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One triangle covering the viewport, from gl_VertexID alone. */
static const char *VERTEX = "#version 330 core\n"
                            "out vec2 uv;\n"
                            "void main() {\n"
                            "  vec2 p = vec2((gl_VertexID << 1) & 2, gl_VertexID & 2);\n"
                            "  uv = p;\n"
                            "  gl_Position = vec4(p * 2.0 - 1.0, 0.0, 1.0);\n"
                            "}\n";

static const char *FRAGMENT = "#version 330 core\n"
                              "in vec2 uv;\n"
                              "uniform sampler2D image;\n"
                              "out vec4 colour;\n"
                              "void main() { colour = vec4(texture(image, uv).rgb, 1.0); }\n";

/* The PBO itself, one texel per pixel, bottom row first as rendered. */
static const char *FRAGMENT_BUFFER =
    "#version 330 core\n"
    "uniform samplerBuffer image;\n"
    "uniform ivec2 size;\n"
    "out vec4 colour;\n"
    "void main() {\n"
    "  ivec2 p = ivec2(gl_FragCoord.xy);\n"
    "  colour = p.x < size.x && p.y < size.y ? vec4(texelFetch(image, p.y * size.x + p.x).rgb, 1.0)\n"
    "                                        : vec4(0.0, 0.0, 0.0, 1.0);\n"
    "}\n";

static int gl_objects(viewer_raytrace *rt)
{
    GLint max_texels = 0;
    glGetIntegerv(GL_MAX_TEXTURE_BUFFER_SIZE, &max_texels);
    rt->in_place = getenv("PRISM_VIEW_PBO_COPY") == NULL &&
                   (double)max_texels >= (double)rt->width * rt->height;
    rt->program = viewer_gl_program("raytrace", VERTEX, rt->in_place ? FRAGMENT_BUFFER : FRAGMENT);
    if (!rt->program)
        return -1;
    rt->u_image = glGetUniformLocation(rt->program, "image");
    rt->u_size = glGetUniformLocation(rt->program, "size");
    glGenVertexArrays(1, &rt->vao);
    glGenBuffers(1, &rt->pbo);
    glBindBuffer(GL_PIXEL_UNPACK_BUFFER, rt->pbo);
    glBufferData(GL_PIXEL_UNPACK_BUFFER, (GLsizeiptr)rt->width * rt->height * 4, NULL,
                 GL_STREAM_DRAW);
    glBindBuffer(GL_PIXEL_UNPACK_BUFFER, 0);
    glGenTextures(1, &rt->texture);
    glBindTexture(GL_TEXTURE_2D, rt->texture);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, rt->width, rt->height, 0, GL_RGBA, GL_UNSIGNED_BYTE,
                 NULL);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    glBindTexture(GL_TEXTURE_2D, 0);
    if (rt->in_place) {
        glGenTextures(1, &rt->buffer_texture);
        glBindTexture(GL_TEXTURE_BUFFER, rt->buffer_texture);
        glTexBuffer(GL_TEXTURE_BUFFER, GL_RGBA8, rt->pbo);
        glBindTexture(GL_TEXTURE_BUFFER, 0);
    }
    return glGetError() == GL_NO_ERROR ? 0 : -1;
}

int viewer_raytrace_create(viewer_raytrace *rt, prism_context *ctx, int width, int height,
                           prism_gl_get_proc_address_fn loader, char *err, size_t err_size)
{
    memset(rt, 0, sizeof *rt);
    rt->width = width;
    rt->height = height;
    if (gl_objects(rt)) {
        snprintf(err, err_size, "ray-traced view: GL objects could not be made");
        viewer_raytrace_destroy(rt);
        return -1;
    }
    prism_result r = prism_buffer_create_gl(ctx, rt->pbo, (size_t)width * height * 4,
                                            PRISM_GL_WRITE_DISCARD, loader, "view.pbo",
                                            &rt->buffer);
    if (r != PRISM_SUCCESS) {
        snprintf(err, err_size, "ray-traced view: %s (%s)", prism_context_last_error(ctx),
                 prism_result_string(r));
        viewer_raytrace_destroy(rt);
        return -1;
    }
    rt->interop = prism_buffer_gl_interop(rt->buffer);
    return 0;
}

void viewer_raytrace_setup(const viewer_raytrace *rt, const viewer_camera *cam,
                           const uint8_t background[4], prism_camera *camera,
                           prism_render_desc *desc)
{
    *camera = (prism_camera){.vfov_degrees = cam->fov_deg};
    memcpy(camera->eye, cam->eye, sizeof camera->eye);
    memcpy(camera->look_at, cam->target, sizeof camera->look_at);
    memcpy(camera->up, cam->up, sizeof camera->up);
    *desc = (prism_render_desc){.width = (uint32_t)rt->width,
                                .height = (uint32_t)rt->height,
                                .mode = rt->xray ? PRISM_RENDER_XRAY : PRISM_RENDER_SHADED,
                                .bottom_row_first = true,
                                .hidden_solids = rt->hidden,
                                .hidden_solids_count = rt->hidden_count};
    memcpy(desc->background, background, 4);
}

int viewer_raytrace_render(viewer_raytrace *rt, prism_context *ctx, const prism_geometry *geometry,
                           const viewer_camera *cam, const uint8_t background[4], char *err,
                           size_t err_size)
{
    prism_camera camera;
    prism_render_desc desc;
    viewer_raytrace_setup(rt, cam, background, &camera, &desc);
    prism_target target = {.kind = PRISM_TARGET_BUFFER, .buffer = rt->buffer};
    prism_render_stats stats = {0};
    prism_result r = prism_render(ctx, geometry, &camera, &desc, &target, &stats);
    if (r != PRISM_SUCCESS) {
        snprintf(err, err_size, "prism_render: %s (%s)", prism_context_last_error(ctx),
                 prism_result_string(r));
        return -1;
    }
    rt->render_seconds = stats.seconds;
    rt->launch_seconds = stats.launch_seconds;
    if (rt->in_place)
        return 0; /* the draw reads the PBO as it is */
    rt->interop = stats.interop;
    /* The unpack buffer feeds the texture on the GPU: no trip through the host. */
    glBindBuffer(GL_PIXEL_UNPACK_BUFFER, rt->pbo);
    glBindTexture(GL_TEXTURE_2D, rt->texture);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
    glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, rt->width, rt->height, GL_RGBA, GL_UNSIGNED_BYTE, NULL);
    glBindTexture(GL_TEXTURE_2D, 0);
    glBindBuffer(GL_PIXEL_UNPACK_BUFFER, 0);
    return 0;
}

void viewer_raytrace_draw(const viewer_raytrace *rt)
{
    glDisable(GL_DEPTH_TEST);
    glUseProgram(rt->program);
    glActiveTexture(GL_TEXTURE0);
    GLenum target = rt->in_place ? GL_TEXTURE_BUFFER : GL_TEXTURE_2D;
    glBindTexture(target, rt->in_place ? rt->buffer_texture : rt->texture);
    glUniform1i(rt->u_image, 0);
    if (rt->in_place)
        glUniform2i(rt->u_size, rt->width, rt->height);
    glBindVertexArray(rt->vao);
    glDrawArrays(GL_TRIANGLES, 0, 3);
    glBindVertexArray(0);
    glBindTexture(target, 0);
}

void viewer_raytrace_destroy(viewer_raytrace *rt)
{
    prism_buffer_release(rt->buffer);
    if (rt->texture)
        glDeleteTextures(1, &rt->texture);
    if (rt->buffer_texture)
        glDeleteTextures(1, &rt->buffer_texture);
    if (rt->pbo)
        glDeleteBuffers(1, &rt->pbo);
    if (rt->vao)
        glDeleteVertexArrays(1, &rt->vao);
    if (rt->program)
        glDeleteProgram(rt->program);
    memset(rt, 0, sizeof *rt);
}
