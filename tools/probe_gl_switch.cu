/* A standalone probe of what a ray-traced frame costs beyond its kernel
 * when GL shows it (issue 11), outside Prism so that nothing of the
 * library's stands between the measurement and the driver: a CUDA kernel
 * of ~0.75 ms (the 2.56M detector's at 1920x1080 on an H200) followed by
 * no GL work, by the least GL work there is (one pixel cleared), by a
 * full-screen clear and by the viewer's full-screen draw of a PBO; each
 * alone too, and the kernel after 0.5 ms of idle GPU. Medians of 200.
 * Not built by CMake; on the GPU machine, from the project's root, after
 * `source .gpu/setup.sh` (shared/gpu/README.md: GLEW and EGL headers):
 *   nvcc -O2 -arch=sm_90 -Iviewer tools/probe_gl_switch.cu viewer/context_egl.c \
 *       viewer/gl.c -lGLEW -lOpenGL -lEGL -o /tmp/probe_gl && /tmp/probe_gl
 * On an H200 (2026-11-24): kernel 0.751 ms; + glFinish alone 0.753; + a
 * 1-pixel clear 1.069 (the clear alone 0.011); + a full clear 1.213; + the
 * PBO drawn 1.227 (the draw alone 0.162); + 0.5 ms idle, then the 1-pixel
 * clear 1.567: the switch from CUDA's work to GL's costs ~0.3 ms whatever
 * GL does, and full-screen pixels ~0.15 ms more on this compute GPU. */
extern "C" {
#include "context_egl.h"
#include "gl.h"
}
#include <cuda_gl_interop.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "probe_check.h"

enum { W = 1920, H = 1080, RUNS = 200, WARM = 20 };

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Arithmetic per pixel, `iters` steps, so that its time can be set. */
__global__ void work(unsigned *image, int iters)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= W * H)
        return;
    float a = i * 1e-6f, b = 0.5f;
    for (int k = 0; k < iters; k++) {
        a = a * 0.999f + b;
        b = b * 1.0001f - a * 1e-4f;
    }
    image[i] = 0xff000000u | ((unsigned)(a * 255.f) & 255u);
}

static int iters = 2000;
static unsigned *image;
static GLuint pbo, texture, program, vao;
static cudaGraphicsResource *pbo_resource;

static void kernel_into(unsigned *dst)
{
    work<<<(W * H + 127) / 128, 128>>>(dst, iters);
    CK(cudaDeviceSynchronize());
}

static void clear_pixel(void)
{
    glEnable(GL_SCISSOR_TEST);
    glScissor(0, 0, 1, 1);
    glClear(GL_COLOR_BUFFER_BIT);
    glDisable(GL_SCISSOR_TEST);
}

static void draw(void)
{
    glUseProgram(program);
    glActiveTexture(GL_TEXTURE0);
    glBindTexture(GL_TEXTURE_BUFFER, texture);
    glBindVertexArray(vao);
    glDrawArrays(GL_TRIANGLES, 0, 3);
}

static void kernel_only(void)
{
    kernel_into(image);
}
static void kernel_finish(void)
{
    kernel_into(image);
    glFinish();
}
static void kernel_pixel(void)
{
    kernel_into(image);
    clear_pixel();
    glFinish();
}
static void kernel_clear(void)
{
    kernel_into(image);
    glClear(GL_COLOR_BUFFER_BIT);
    glFinish();
}
static void pixel_only(void)
{
    clear_pixel();
    glFinish();
}
static void draw_only(void)
{
    draw();
    glFinish();
}

static void kernel_idle_pixel(void)
{
    kernel_into(image);
    for (double t = now(); now() - t < 0.5e-3;)
        ;
    clear_pixel();
    glFinish();
}

/* As prism-view's ray-traced frame: the kernel writes the mapped PBO,
 * which is unmapped and drawn in place. */
static void kernel_pbo_draw(void)
{
    void *p;
    size_t n;
    CK(cudaGraphicsMapResources(1, &pbo_resource, 0));
    CK(cudaGraphicsResourceGetMappedPointer(&p, &n, pbo_resource));
    kernel_into((unsigned *)p);
    CK(cudaGraphicsUnmapResources(1, &pbo_resource, 0));
    draw();
    glFinish();
}

static int compare(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double run(const char *what, void (*step)(void))
{
    static double t[RUNS];
    for (int i = 0; i < WARM; i++)
        step();
    for (int i = 0; i < RUNS; i++) {
        double t0 = now();
        step();
        t[i] = now() - t0;
    }
    qsort(t, RUNS, sizeof *t, compare);
    if (what)
        printf("%-52s %8.3f ms\n", what, t[RUNS / 2] * 1e3);
    return t[RUNS / 2];
}

int main(void)
{
    char err[256];
    viewer_egl *egl;
    if (viewer_egl_create(&egl, err, sizeof err)) {
        fprintf(stderr, "probe_gl_switch: %s\n", err);
        return 1;
    }
    printf("GL %s, %s\n", (const char *)glGetString(GL_RENDERER), viewer_egl_platform(egl));
    CK(cudaMalloc((void **)&image, (size_t)W * H * 4));
    GLuint fbo, colour;
    glGenFramebuffers(1, &fbo);
    glBindFramebuffer(GL_FRAMEBUFFER, fbo);
    glGenRenderbuffers(1, &colour);
    glBindRenderbuffer(GL_RENDERBUFFER, colour);
    glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, W, H);
    glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, colour);
    glViewport(0, 0, W, H);
    glGenBuffers(1, &pbo);
    glBindBuffer(GL_PIXEL_UNPACK_BUFFER, pbo);
    glBufferData(GL_PIXEL_UNPACK_BUFFER, (GLsizeiptr)W * H * 4, NULL, GL_STREAM_DRAW);
    glBindBuffer(GL_PIXEL_UNPACK_BUFFER, 0);
    glGenTextures(1, &texture);
    glBindTexture(GL_TEXTURE_BUFFER, texture);
    glTexBuffer(GL_TEXTURE_BUFFER, GL_RGBA8, pbo);
    const char *vs = "#version 330 core\n"
                     "void main() {\n"
                     "  vec2 p = vec2((gl_VertexID << 1) & 2, gl_VertexID & 2);\n"
                     "  gl_Position = vec4(p * 2.0 - 1.0, 0.0, 1.0);\n"
                     "}\n";
    const char *fs = "#version 330 core\n"
                     "uniform samplerBuffer image;\n"
                     "out vec4 colour;\n"
                     "void main() {\n"
                     "  ivec2 p = ivec2(gl_FragCoord.xy);\n"
                     "  colour = vec4(texelFetch(image, p.y * 1920 + p.x).rgb, 1.0);\n"
                     "}\n";
    program = viewer_gl_program("probe", vs, fs);
    glGenVertexArrays(1, &vao);
    CK(cudaGraphicsGLRegisterBuffer(&pbo_resource, pbo, cudaGraphicsRegisterFlagsWriteDiscard));
    if (!program || glGetError() != GL_NO_ERROR) {
        fprintf(stderr, "probe_gl_switch: GL objects could not be made\n");
        return 1;
    }
    for (int k = 0; k < 6; k++) /* the kernel to ~0.75 ms */
        iters = (int)(iters * 0.75e-3 / run(NULL, kernel_only));
    run("kernel (synchronised)", kernel_only);
    run("kernel, then glFinish (no GL work)", kernel_finish);
    run("kernel, then a 1-pixel clear and glFinish", kernel_pixel);
    run("kernel, then a full-screen clear and glFinish", kernel_clear);
    run("kernel, then the PBO drawn (prism-view's frame)", kernel_pbo_draw);
    run("kernel, 0.5 ms idle, then a 1-pixel clear", kernel_idle_pixel);
    run("a 1-pixel clear and glFinish alone", pixel_only);
    run("the PBO drawn and glFinish alone", draw_only);
    CK(cudaGraphicsUnregisterResource(pbo_resource));
    CK(cudaFree(image));
    viewer_egl_destroy(egl);
    return 0;
}
