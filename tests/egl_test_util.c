/* Headless GL contexts for the test suites (see egl_test_util.h). */
#define _GNU_SOURCE /* RTLD_NODELETE */
#include "egl_test_util.h"

#include <dlfcn.h>

#include <string.h>

#include <EGL/eglext.h>

#ifndef EGL_PLATFORM_SURFACELESS_MESA
#define EGL_PLATFORM_SURFACELESS_MESA 0x31DD
#endif

static PFNEGLGETPLATFORMDISPLAYEXTPROC platform_display(void)
{
    return (PFNEGLGETPLATFORMDISPLAYEXTPROC)eglGetProcAddress("eglGetPlatformDisplayEXT");
}

/* glvnd may list Mesa's software device too: take the one naming CUDA. */
static EGLDisplay cuda_display(void)
{
    PFNEGLQUERYDEVICESEXTPROC query =
        (PFNEGLQUERYDEVICESEXTPROC)eglGetProcAddress("eglQueryDevicesEXT");
    PFNEGLQUERYDEVICESTRINGEXTPROC query_string =
        (PFNEGLQUERYDEVICESTRINGEXTPROC)eglGetProcAddress("eglQueryDeviceStringEXT");
    PFNEGLGETPLATFORMDISPLAYEXTPROC platform = platform_display();
    EGLDeviceEXT devices[8];
    EGLint n = 0;
    if (!query || !query_string || !platform || !query(8, devices, &n))
        return EGL_NO_DISPLAY;
    for (EGLint i = 0; i < n; i++) {
        const char *ext = query_string(devices[i], EGL_EXTENSIONS);
        if (ext && strstr(ext, "EGL_NV_device_cuda"))
            return platform(EGL_PLATFORM_DEVICE_EXT, devices[i], NULL);
    }
    return EGL_NO_DISPLAY;
}

static EGLDisplay surfaceless_display(void)
{
    const char *ext = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
    PFNEGLGETPLATFORMDISPLAYEXTPROC platform = platform_display();
    if (!ext || !strstr(ext, "EGL_MESA_platform_surfaceless") || !platform)
        return EGL_NO_DISPLAY;
    return platform(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, NULL);
}

static bool make_current(test_egl *egl, int major, int minor)
{
    const EGLint config_attrs[] = {EGL_SURFACE_TYPE, EGL_PBUFFER_BIT, EGL_RENDERABLE_TYPE,
                                   EGL_OPENGL_BIT, EGL_NONE};
    const EGLint core[] = {EGL_CONTEXT_MAJOR_VERSION,
                           major,
                           EGL_CONTEXT_MINOR_VERSION,
                           minor,
                           EGL_CONTEXT_OPENGL_PROFILE_MASK,
                           EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT,
                           EGL_NONE};
    const EGLint pbuffer[] = {EGL_WIDTH, 16, EGL_HEIGHT, 16, EGL_NONE};
    EGLConfig config;
    EGLint count = 0;
    if (!eglChooseConfig(egl->display, config_attrs, &config, 1, &count) || count < 1 ||
        !eglBindAPI(EGL_OPENGL_API))
        return false;
    egl->context = eglCreateContext(egl->display, config, EGL_NO_CONTEXT, major > 0 ? core : NULL);
    if (egl->context == EGL_NO_CONTEXT)
        return false;
    if (eglMakeCurrent(egl->display, EGL_NO_SURFACE, EGL_NO_SURFACE, egl->context))
        return true;
    egl->surface = eglCreatePbufferSurface(egl->display, config, pbuffer);
    return egl->surface != EGL_NO_SURFACE &&
           eglMakeCurrent(egl->display, egl->surface, egl->surface, egl->context);
}

static bool load_gl(test_gl *gl)
{
    gl->gen_buffers = (void (*)(int, unsigned *))eglGetProcAddress("glGenBuffers");
    gl->bind_buffer = (void (*)(unsigned, unsigned))eglGetProcAddress("glBindBuffer");
    gl->buffer_data =
        (void (*)(unsigned, ptrdiff_t, const void *, unsigned))eglGetProcAddress("glBufferData");
    gl->get_buffer_sub_data =
        (void (*)(unsigned, ptrdiff_t, ptrdiff_t, void *))eglGetProcAddress("glGetBufferSubData");
    gl->delete_buffers = (void (*)(int, const unsigned *))eglGetProcAddress("glDeleteBuffers");
    return gl->gen_buffers && gl->bind_buffer && gl->buffer_data && gl->get_buffer_sub_data &&
           gl->delete_buffers;
}

unsigned test_egl_buffer(const test_egl *egl, unsigned target, size_t size, const void *data,
                         unsigned usage)
{
    unsigned b = 0;
    egl->gl.gen_buffers(1, &b);
    egl->gl.bind_buffer(target, b);
    egl->gl.buffer_data(target, (ptrdiff_t)size, data, usage);
    egl->gl.bind_buffer(target, 0);
    return b;
}

void test_egl_read(const test_egl *egl, unsigned target, unsigned buffer, size_t size, void *out)
{
    egl->gl.bind_buffer(target, buffer);
    egl->gl.get_buffer_sub_data(target, 0, (ptrdiff_t)size, out);
    egl->gl.bind_buffer(target, 0);
}

/* Mesa's software driver stays mapped to the end: Mesa unloads it at
 * eglTerminate, before LeakSanitizer reports, and a leak of its own is then
 * in an "<unknown module>" that tests/lsan.supp cannot name (seen on the CI
 * machine: 128 bytes from realloc in swrast_dri.so, on every run of the GL
 * suites). A load that fails (another layout, no Mesa) changes nothing. */
static void pin_mesa(void)
{
    static const char *const drivers[] = {"/usr/lib/x86_64-linux-gnu/dri/swrast_dri.so",
                                          "/usr/lib/aarch64-linux-gnu/dri/swrast_dri.so",
                                          "/usr/lib64/dri/swrast_dri.so",
                                          "/usr/lib/dri/swrast_dri.so"};
    for (size_t i = 0; i < sizeof drivers / sizeof *drivers; i++)
        if (dlopen(drivers[i], RTLD_LAZY | RTLD_NODELETE))
            return;
}

bool test_egl_open(test_egl *egl, test_egl_platform platform, int major, int minor)
{
    pin_mesa();
    egl->display = EGL_NO_DISPLAY;
    egl->context = EGL_NO_CONTEXT;
    egl->surface = EGL_NO_SURFACE;
    if (platform != TEST_EGL_SURFACELESS)
        egl->display = cuda_display();
    if (egl->display == EGL_NO_DISPLAY && platform != TEST_EGL_CUDA)
        egl->display = surfaceless_display();
    EGLint got_major, got_minor;
    if (egl->display == EGL_NO_DISPLAY || !eglInitialize(egl->display, &got_major, &got_minor)) {
        egl->display = EGL_NO_DISPLAY;
        return false;
    }
    if (make_current(egl, major, minor) && load_gl(&egl->gl))
        return true;
    test_egl_close(egl);
    return false;
}

void test_egl_close(test_egl *egl)
{
    if (egl->display == EGL_NO_DISPLAY)
        return;
    eglMakeCurrent(egl->display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    if (egl->surface != EGL_NO_SURFACE)
        eglDestroySurface(egl->display, egl->surface);
    if (egl->context != EGL_NO_CONTEXT)
        eglDestroyContext(egl->display, egl->context);
    eglTerminate(egl->display);
    egl->display = EGL_NO_DISPLAY;
    egl->context = EGL_NO_CONTEXT;
    egl->surface = EGL_NO_SURFACE;
}
