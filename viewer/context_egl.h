/* The headless mode: an EGL context with no window, OpenGL 3.3+ core, on
 * NVIDIA's device platform when an NVIDIA (CUDA) EGL device exists, else on
 * Mesa's surfaceless platform. It renders into a viewer_fbo. */
#ifndef VIEWER_CONTEXT_EGL_H
#define VIEWER_CONTEXT_EGL_H

#include <stddef.h>

typedef struct viewer_egl viewer_egl;

/* Create the context, make it current and load GL. $PRISM_EGL_PLATFORM =
 * "device" or "surfaceless" forces a platform. Returns 0, or -1 with `err`. */
int viewer_egl_create(viewer_egl **out, char *err, size_t err_size);
void viewer_egl_destroy(viewer_egl *egl);
/* "device (NVIDIA)", "surfaceless (Mesa)", ... for the HUD and messages. */
const char *viewer_egl_platform(const viewer_egl *egl);

#endif
