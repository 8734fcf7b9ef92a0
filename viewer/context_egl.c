/* Headless EGL context: device platform on NVIDIA, surfaceless on Mesa. */
#include "context_egl.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <EGL/egl.h>
#include <EGL/eglext.h>

#include "gl.h"
#include "sanitizer.h"

struct viewer_egl {
    EGLDisplay display;
    EGLContext context;
    EGLSurface surface; /* a 1x1 pbuffer only where surfaceless contexts are refused */
    char platform[64];
};

static bool has_extension(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; p && (p = strstr(p, name)); p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == 0))
            return true;
    return false;
}

/* The first EGL device that is an NVIDIA GPU (it names a CUDA device). */
static EGLDisplay nvidia_device_display(const char *client_ext)
{
    /* NVIDIA's glvnd lists EGL_EXT_device_base (enumeration + query in
     * one) rather than EGL_EXT_device_query: the entry points decide. */
    if (!has_extension(client_ext, "EGL_EXT_platform_device"))
        return EGL_NO_DISPLAY;
    PFNEGLQUERYDEVICESEXTPROC query_devices =
        (PFNEGLQUERYDEVICESEXTPROC)eglGetProcAddress("eglQueryDevicesEXT");
    PFNEGLQUERYDEVICESTRINGEXTPROC query_string =
        (PFNEGLQUERYDEVICESTRINGEXTPROC)eglGetProcAddress("eglQueryDeviceStringEXT");
    PFNEGLGETPLATFORMDISPLAYEXTPROC get_display =
        (PFNEGLGETPLATFORMDISPLAYEXTPROC)eglGetProcAddress("eglGetPlatformDisplayEXT");
    EGLDeviceEXT devices[16];
    EGLint count = 0;
    if (!query_devices || !query_string || !get_display || !query_devices(16, devices, &count))
        return EGL_NO_DISPLAY;
    for (EGLint i = 0; i < count; i++) {
        const char *ext = query_string(devices[i], EGL_EXTENSIONS);
        if (has_extension(ext, "EGL_NV_device_cuda"))
            return get_display(EGL_PLATFORM_DEVICE_EXT, devices[i], NULL);
    }
    return EGL_NO_DISPLAY;
}

static EGLDisplay surfaceless_display(const char *client_ext)
{
    if (!has_extension(client_ext, "EGL_MESA_platform_surfaceless"))
        return EGL_NO_DISPLAY;
    PFNEGLGETPLATFORMDISPLAYEXTPROC get_display =
        (PFNEGLGETPLATFORMDISPLAYEXTPROC)eglGetProcAddress("eglGetPlatformDisplayEXT");
    return get_display ? get_display(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, NULL)
                       : EGL_NO_DISPLAY;
}

static EGLDisplay open_display(viewer_egl *egl)
{
    const char *client_ext = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
    const char *force = getenv("PRISM_EGL_PLATFORM");
    EGLDisplay d = EGL_NO_DISPLAY;
    if (!force || !strcmp(force, "device")) {
        d = nvidia_device_display(client_ext);
        snprintf(egl->platform, sizeof egl->platform, "EGL device (NVIDIA)");
    }
    if (d == EGL_NO_DISPLAY && (!force || !strcmp(force, "surfaceless"))) {
        d = surfaceless_display(client_ext);
        snprintf(egl->platform, sizeof egl->platform, "EGL surfaceless (Mesa)");
    }
    return d;
}

static EGLContext make_context(viewer_egl *egl, EGLConfig config)
{
    static const EGLint attrs[] = {EGL_CONTEXT_MAJOR_VERSION,
                                   3,
                                   EGL_CONTEXT_MINOR_VERSION,
                                   3,
                                   EGL_CONTEXT_OPENGL_PROFILE_MASK,
                                   EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT,
                                   EGL_NONE};
    return eglCreateContext(egl->display, config, EGL_NO_CONTEXT, attrs);
}

/* Choose a config, create the context and make it current, surfaceless if
 * the display allows it, else on a 1x1 pbuffer. */
static int make_current(viewer_egl *egl, char *err, size_t err_size)
{
    static const EGLint config_attrs[] = {EGL_SURFACE_TYPE,
                                          EGL_PBUFFER_BIT,
                                          EGL_RENDERABLE_TYPE,
                                          EGL_OPENGL_BIT,
                                          EGL_RED_SIZE,
                                          8,
                                          EGL_GREEN_SIZE,
                                          8,
                                          EGL_BLUE_SIZE,
                                          8,
                                          EGL_NONE};
    EGLConfig config;
    EGLint n = 0;
    if (!eglBindAPI(EGL_OPENGL_API) ||
        !eglChooseConfig(egl->display, config_attrs, &config, 1, &n) || n < 1) {
        snprintf(err, err_size, "EGL: no OpenGL config on %s (error 0x%x)", egl->platform,
                 eglGetError());
        return -1;
    }
    egl->context = make_context(egl, config);
    if (egl->context == EGL_NO_CONTEXT) {
        snprintf(err, err_size, "EGL: no OpenGL 3.3 core context on %s (error 0x%x)", egl->platform,
                 eglGetError());
        return -1;
    }
    if (eglMakeCurrent(egl->display, EGL_NO_SURFACE, EGL_NO_SURFACE, egl->context))
        return 0;
    static const EGLint pbuffer_attrs[] = {EGL_WIDTH, 1, EGL_HEIGHT, 1, EGL_NONE};
    egl->surface = eglCreatePbufferSurface(egl->display, config, pbuffer_attrs);
    if (egl->surface != EGL_NO_SURFACE &&
        eglMakeCurrent(egl->display, egl->surface, egl->surface, egl->context))
        return 0;
    snprintf(err, err_size, "EGL: cannot make the context current (error 0x%x)", eglGetError());
    return -1;
}

int viewer_egl_create(viewer_egl **out, char *err, size_t err_size)
{
    *out = NULL;
    viewer_egl *egl = calloc(1, sizeof *egl);
    if (!egl) {
        snprintf(err, err_size, "out of memory");
        return -1;
    }
    egl->display = open_display(egl);
    EGLint major, minor;
    if (egl->display == EGL_NO_DISPLAY || !eglInitialize(egl->display, &major, &minor)) {
        snprintf(err, err_size,
                 "EGL: neither an NVIDIA device nor Mesa's surfaceless "
                 "platform is available (error 0x%x)",
                 eglGetError());
        free(egl);
        return -1;
    }
    if (make_current(egl, err, err_size) || viewer_gl_load(err, err_size)) {
        viewer_egl_destroy(egl);
        return -1;
    }
    *out = egl;
    return 0;
}

void viewer_egl_destroy(viewer_egl *egl)
{
    if (!egl)
        return;
    eglMakeCurrent(egl->display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    if (egl->surface != EGL_NO_SURFACE)
        eglDestroySurface(egl->display, egl->surface);
    if (egl->context != EGL_NO_CONTEXT)
        eglDestroyContext(egl->display, egl->context);
    if (!VIEWER_KEEP_GL_DRIVER)
        eglTerminate(egl->display);
    free(egl);
}

const char *viewer_egl_platform(const viewer_egl *egl)
{
    return egl->platform;
}
