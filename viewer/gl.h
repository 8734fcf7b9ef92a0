/* The OpenGL entry points for the whole viewer (GLEW), and loading them in
 * whichever context is current: a GLFW window's or a headless EGL one. */
#ifndef VIEWER_GL_H
#define VIEWER_GL_H

#include <GL/glew.h>
#include <stddef.h>

/* Load GL functions for the current context. GLEW 2.2 built for GLX answers
 * GLEW_ERROR_NO_GLX_DISPLAY under EGL after it has loaded the core
 * functions; that is success here. Returns 0, or -1 with `err` set. */
int viewer_gl_load(char *err, size_t err_size);

/* Compile and link a program from vertex and fragment source (GLSL 330
 * core). Returns 0 on failure, with the compiler's log on stderr. */
GLuint viewer_gl_program(const char *name, const char *vertex, const char *fragment);

#endif
