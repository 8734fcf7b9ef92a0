/* Embedding Prism in another renderer: this program owns its window, its GL
 * context and its buffers. Prism's upload writes the detector's vertices
 * and triangles, and each triangle's solid and materials, into the
 * program's GL buffers (in place through CUDA-GL interop; the program
 * fills them itself where there is none), then
 * propagates photons and writes their step records into another of its
 * buffers (through interop, else Prism's copy path); the program draws
 * both itself: the detector in wireframe coloured by solid, one line strip
 * per photon, with
 * the layouts documented in prism/geometry.h and prism/propagate.h.
 *
 *   embed FILE.dae [FRAMES]     (FRAMES: quit after that many, for tests) */
#include <GL/glew.h>
#include <GLFW/glfw3.h>

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <prism/bvh.h>
#include <prism/context.h>
#include <prism/geometry.h>
#include <prism/memory.h>
#include <prism/propagate.h>
#include <prism/scene.h>

#define PHOTONS 20000
#define STEPS 8 /* records per photon */

static const char *VERTEX =
    "#version 330 core\n"
    "layout(location = 0) in vec4 pos_time;\n" /* offset 0, 4 floats */
    "layout(location = 1) in uint history;\n"  /* offset 16, 1 uint */
    "uniform mat4 mvp;\n"
    "out vec3 colour_v;\n"
    "void main() {\n"
    "  colour_v = (history & 4u) != 0u ? vec3(0.2, 1.0, 0.3)\n" /* SURFACE_DETECT */
    "           : (history & 2u) != 0u ? vec3(1.0, 0.3, 0.2)\n" /* BULK_ABSORB */
    "           : (history & 8u) != 0u ? vec3(1.0, 0.6, 0.1)\n" /* SURFACE_ABSORB */
    "           : vec3(0.6, 0.7, 1.0);\n"
    "  gl_Position = mvp * vec4(pos_time.xyz, 1.0);\n"
    "}\n";
static const char *FRAGMENT = "#version 330 core\n"
                              "in vec3 colour_v;\n"
                              "out vec4 colour;\n"
                              "void main() { colour = vec4(colour_v, 1.0); }\n";

/* The detector: each triangle coloured by its solid, read from the
 * per-triangle codes buffer (gl_triangle_buffer's layout: solid, then
 * materials) by gl_PrimitiveID, the scene's triangle. */
static const char *GEO_VERTEX = "#version 330 core\n"
                                "layout(location = 0) in vec3 position;\n"
                                "uniform mat4 mvp;\n"
                                "void main() { gl_Position = mvp * vec4(position, 1.0); }\n";
static const char *GEO_FRAGMENT =
    "#version 330 core\n"
    "uniform usamplerBuffer codes;\n"
    "out vec4 colour;\n"
    "void main() {\n"
    "  float h = fract(float(texelFetch(codes, gl_PrimitiveID).x) * 0.618034);\n"
    "  colour = vec4(0.35 + 0.4 * h, 0.45, 0.75 - 0.4 * h, 1.0);\n"
    "}\n";

static GLuint program(const char *vertex, const char *fragment)
{
    GLuint p = glCreateProgram();
    const char *src[2] = {vertex, fragment};
    GLenum kind[2] = {GL_VERTEX_SHADER, GL_FRAGMENT_SHADER};
    for (int i = 0; i < 2; i++) {
        GLuint s = glCreateShader(kind[i]);
        glShaderSource(s, 1, &src[i], NULL);
        glCompileShader(s);
        glAttachShader(p, s);
        glDeleteShader(s);
    }
    glLinkProgram(p);
    GLint ok = 0;
    glGetProgramiv(p, GL_LINK_STATUS, &ok);
    return ok ? p : 0;
}

/* perspective(45 deg) * lookAt(eye, centre, +y), column-major. */
static void camera(const float c[3], float r, float angle, float aspect, float m[16])
{
    float eye[3] = {c[0] + 2.5f * r * sinf(angle), c[1] + r, c[2] + 2.5f * r * cosf(angle)};
    float f[3] = {c[0] - eye[0], c[1] - eye[1], c[2] - eye[2]};
    float n = sqrtf(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]);
    for (int i = 0; i < 3; i++)
        f[i] /= n;
    float s[3] = {-f[2], 0, f[0]}; /* f x (0,1,0) */
    n = sqrtf(s[0] * s[0] + s[2] * s[2]);
    s[0] /= n, s[2] /= n;
    float u[3] = {s[1] * f[2] - s[2] * f[1], s[2] * f[0] - s[0] * f[2], s[0] * f[1] - s[1] * f[0]};
    float t = 1.0f / tanf(0.3927f), zn = r * 0.01f, zf = r * 10;
    float a = -(zf + zn) / (zf - zn), b = -2 * zf * zn / (zf - zn);
    float view[3][4] = {{s[0], s[1], s[2], -(s[0] * eye[0] + s[1] * eye[1] + s[2] * eye[2])},
                        {u[0], u[1], u[2], -(u[0] * eye[0] + u[1] * eye[1] + u[2] * eye[2])},
                        {-f[0], -f[1], -f[2], f[0] * eye[0] + f[1] * eye[1] + f[2] * eye[2]}};
    for (int col = 0; col < 4; col++) {
        m[col * 4 + 0] = t / aspect * view[0][col];
        m[col * 4 + 1] = t * view[1][col];
        m[col * 4 + 2] = a * view[2][col] + (col == 3 ? b : 0);
        m[col * 4 + 3] = -view[2][col];
    }
}

static int fail(const char *what, prism_context *ctx, prism_result r)
{
    fprintf(stderr, "embed: %s: %s (%s)\n", what, ctx ? prism_context_last_error(ctx) : "",
            prism_result_string(r));
    return 1;
}

/* Step 1: the renderer's own window, context and loader. */
static GLFWwindow *open_window(void)
{
    if (!glfwInit())
        return NULL;
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
    glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
    GLFWwindow *w = glfwCreateWindow(800, 600, "Prism embedded", NULL, NULL);
    if (!w)
        return NULL;
    glfwMakeContextCurrent(w);
    glewExperimental = GL_TRUE;
    GLenum e = glewInit();
    if (e != GLEW_OK && e != 4 /* GLEW_ERROR_NO_GLX_DISPLAY: fine, core is loaded */)
        return NULL;
    return w;
}

/* Step 2: Prism on the GL context's CUDA device if it has one. */
static prism_result open_prism(prism_context **ctx)
{
    prism_context_desc desc = {.share_gl = true};
    if (prism_context_create(&desc, ctx) == PRISM_SUCCESS)
        return PRISM_SUCCESS;
    desc.share_gl = false; /* GL elsewhere (Mesa, another GPU): copy path */
    return prism_context_create(&desc, ctx);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: embed FILE.dae [FRAMES]\n");
        return 2;
    }
    long frames = argc > 2 ? atol(argv[2]) : 0;
    GLFWwindow *window = open_window();
    if (!window) {
        fprintf(stderr, "embed: no OpenGL 3.3 window\n");
        return 1;
    }
    prism_context *ctx = NULL;
    prism_scene *scene = NULL;
    prism_geometry *geometry = NULL;
    prism_buffer *records = NULL;
    prism_result r;
    int status = 1;
    if ((r = open_prism(&ctx)) != PRISM_SUCCESS) {
        fail("context", ctx, r);
        goto done;
    }
    if ((r = prism_scene_load(argv[1], NULL, &scene)) != PRISM_SUCCESS) {
        fail(argv[1], ctx, r);
        goto done;
    }

    /* Step 3: the detector's buffers, sized by the program and written by
     * Prism's upload (vertices: 3 floats each; triangles: 3 uint32 vertex
     * indices each, the scene's order; per triangle its solid and
     * materials, 2 uint32). The upload builds the BVH too, on the GPU when
     * it can. */
    const size_t n = scene->triangles_count;
    const size_t vbytes = scene->vertices_count * 12, tbytes = n * 12, cbytes = n * 8;
    GLuint geo_vao, geo[3], codes_texture;
    glGenVertexArrays(1, &geo_vao);
    glBindVertexArray(geo_vao);
    glGenBuffers(3, geo);
    glBindBuffer(GL_TEXTURE_BUFFER, geo[2]);
    glBufferData(GL_TEXTURE_BUFFER, (GLsizeiptr)(cbytes ? cbytes : 8), NULL, GL_STATIC_DRAW);
    glGenTextures(1, &codes_texture);
    glBindTexture(GL_TEXTURE_BUFFER, codes_texture);
    glTexBuffer(GL_TEXTURE_BUFFER, GL_RG32UI, geo[2]);
    glBindBuffer(GL_ARRAY_BUFFER, geo[0]);
    glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)vbytes, NULL, GL_STATIC_DRAW);
    glEnableVertexAttribArray(0);
    glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, 12, (void *)0);
    glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, geo[1]);
    glBufferData(GL_ELEMENT_ARRAY_BUFFER, (GLsizeiptr)tbytes, NULL, GL_STATIC_DRAW);
    prism_geometry_desc gdesc = {.gl_vertex_buffer = geo[0],
                                 .gl_index_buffer = geo[1],
                                 .gl_triangle_buffer = geo[2],
                                 .gl_fill = true};
    if ((r = prism_geometry_upload(ctx, scene, NULL, &gdesc, &geometry)) != PRISM_SUCCESS) {
        fail(argv[1], ctx, r);
        goto done;
    }
    bool written = prism_geometry_report(geometry)->gl_filled;
    if (!written) { /* no interop: the program fills its own buffers */
        glBufferSubData(GL_ARRAY_BUFFER, 0, (GLsizeiptr)vbytes, scene->positions);
        glBufferSubData(GL_ELEMENT_ARRAY_BUFFER, 0, (GLsizeiptr)tbytes, scene->indices);
        uint32_t *codes = malloc(cbytes ? cbytes : 8);
        for (size_t t = 0; codes && t < n; t++) {
            uint32_t in = scene->triangle_material_inner[t],
                     out = scene->triangle_material_outer[t];
            codes[2 * t] = scene->triangle_solid[t];
            codes[2 * t + 1] = (in == PRISM_NONE ? 0xFFFFu : in) |
                               (out == PRISM_NONE ? 0xFFFFu : out) << 16;
        }
        if (codes)
            glBufferSubData(GL_TEXTURE_BUFFER, 0, (GLsizeiptr)cbytes, codes);
        free(codes);
    }
    glBindVertexArray(0);
    printf("embed: %zu triangles, BVH built by %s, GL buffers written by %s\n",
           scene->triangles_count,
           prism_bvh_builder_name(prism_geometry_report(geometry)->bvh.builder),
           written ? "the upload (interop)" : "the program");

    /* Step 4: the renderer's own vertex buffer for the photons, and its layout. */
    size_t bytes = (size_t)PHOTONS * STEPS * sizeof(prism_step_record);
    GLuint vao, vbo;
    glGenVertexArrays(1, &vao);
    glBindVertexArray(vao);
    glGenBuffers(1, &vbo);
    glBindBuffer(GL_ARRAY_BUFFER, vbo);
    glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)bytes, NULL, GL_DYNAMIC_DRAW);
    glEnableVertexAttribArray(0);
    glVertexAttribPointer(0, 4, GL_FLOAT, GL_FALSE, 32, (void *)0);
    glEnableVertexAttribArray(1);
    glVertexAttribIPointer(1, 1, GL_UNSIGNED_INT, 32, (void *)16);

    /* Step 5: Prism writes the step records straight into that buffer. */
    if ((r = prism_buffer_create_gl(ctx, vbo, bytes, PRISM_GL_WRITE_DISCARD,
                                    (prism_gl_get_proc_address_fn)glfwGetProcAddress,
                                    "embed.records", &records)) != PRISM_SUCCESS) {
        fail("GL buffer", ctx, r);
        goto done;
    }
    float centre[3], radius = 0;
    for (int i = 0; i < 3; i++) {
        centre[i] = 0.5f * (scene->bbox_min[i] + scene->bbox_max[i]);
        float h = 0.5f * (scene->bbox_max[i] - scene->bbox_min[i]);
        radius += h * h;
    }
    radius = sqrtf(radius);
    prism_photon_source source = {.kind = PRISM_SOURCE_POINT, .count = PHOTONS};
    memcpy(source.position, centre, sizeof centre);
    prism_propagate_desc pdesc = {.seed = 1, .record_steps = STEPS};
    prism_propagate_outputs out = {.records = {.kind = PRISM_TARGET_BUFFER, .buffer = records}};
    prism_propagate_stats stats;
    if ((r = prism_propagate(ctx, geometry, &source, &pdesc, &out, &stats)) != PRISM_SUCCESS) {
        fail("propagate", ctx, r);
        goto done;
    }
    printf("embed: %d photons, %zu detected, interop %s\n", PHOTONS, stats.detected,
           prism_buffer_gl_interop(records) ? "yes" : "no (copy path)");

    /* Step 6: the renderer draws its buffers: the detector in wireframe,
     * one line strip per photon. */
    static GLint first[PHOTONS];
    static GLsizei count[PHOTONS];
    for (int p = 0; p < PHOTONS; p++)
        first[p] = p * STEPS, count[p] = STEPS;
    GLuint prog = program(VERTEX, FRAGMENT), geo_prog = program(GEO_VERTEX, GEO_FRAGMENT);
    if (!prog || !geo_prog) {
        fprintf(stderr, "embed: a shader did not build\n");
        goto done;
    }
    GLint u_mvp = glGetUniformLocation(prog, "mvp"),
          u_geo_mvp = glGetUniformLocation(geo_prog, "mvp");
    glUseProgram(geo_prog);
    glUniform1i(glGetUniformLocation(geo_prog, "codes"), 0);
    for (long f = 0; !glfwWindowShouldClose(window) && (!frames || f < frames); f++) {
        int w, h;
        glfwGetFramebufferSize(window, &w, &h);
        glViewport(0, 0, w, h);
        glClearColor(0.1f, 0.1f, 0.12f, 1);
        glClear(GL_COLOR_BUFFER_BIT);
        float mvp[16];
        camera(centre, radius, (float)glfwGetTime() * 0.3f, (float)w / (float)(h ? h : 1), mvp);
        glUseProgram(geo_prog);
        glUniformMatrix4fv(u_geo_mvp, 1, GL_FALSE, mvp);
        glActiveTexture(GL_TEXTURE0);
        glBindTexture(GL_TEXTURE_BUFFER, codes_texture);
        glBindVertexArray(geo_vao);
        glPolygonMode(GL_FRONT_AND_BACK, GL_LINE);
        glDrawElements(GL_TRIANGLES, (GLsizei)(n * 3), GL_UNSIGNED_INT, NULL);
        glPolygonMode(GL_FRONT_AND_BACK, GL_FILL);
        glUseProgram(prog);
        glUniformMatrix4fv(u_mvp, 1, GL_FALSE, mvp);
        glBindVertexArray(vao);
        glMultiDrawArrays(GL_LINE_STRIP, first, count, PHOTONS);
        glfwSwapBuffers(window);
        glfwPollEvents();
    }
    glDeleteProgram(prog);
    glDeleteProgram(geo_prog);
    status = 0;
done:
    prism_buffer_release(records); /* before the GL buffers go */
    prism_geometry_destroy(geometry);
    prism_context_destroy(ctx);
    prism_scene_free(scene);
    glfwDestroyWindow(window);
    glfwTerminate();
    return status;
}
