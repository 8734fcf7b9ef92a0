/* GL loading through GLEW, and shader compilation with its logs. */
#include "gl.h"

#include <stdio.h>

int viewer_gl_load(char *err, size_t err_size)
{
    glewExperimental = GL_TRUE; /* core profiles: load everything the driver has */
    GLenum r = glewInit();
#ifdef GLEW_ERROR_NO_GLX_DISPLAY
    if (r == GLEW_ERROR_NO_GLX_DISPLAY)
        r = GLEW_OK; /* EGL: core functions are loaded, only GLX is missing */
#endif
    if (r != GLEW_OK) {
        snprintf(err, err_size, "OpenGL loader: %s", (const char *)glewGetErrorString(r));
        return -1;
    }
    if (!glGenVertexArrays || !glCreateShader || !glTexBuffer) {
        snprintf(err, err_size, "OpenGL 3.3 core functions missing (driver: %s)",
                 (const char *)glGetString(GL_VERSION));
        return -1;
    }
    while (glGetError() != GL_NO_ERROR)
        ; /* GLEW's probes may leave errors behind */
    return 0;
}

static GLuint compile(const char *name, GLenum kind, const char *src)
{
    GLuint s = glCreateShader(kind);
    glShaderSource(s, 1, &src, NULL);
    glCompileShader(s);
    GLint ok = 0;
    glGetShaderiv(s, GL_COMPILE_STATUS, &ok);
    if (!ok) {
        char log[2048];
        glGetShaderInfoLog(s, sizeof log, NULL, log);
        fprintf(stderr, "prism-view: %s %s shader: %s\n", name,
                kind == GL_VERTEX_SHADER ? "vertex" : "fragment", log);
        glDeleteShader(s);
        return 0;
    }
    return s;
}

GLuint viewer_gl_program(const char *name, const char *vertex, const char *fragment)
{
    GLuint vs = compile(name, GL_VERTEX_SHADER, vertex);
    GLuint fs = vs ? compile(name, GL_FRAGMENT_SHADER, fragment) : 0;
    if (!fs) {
        glDeleteShader(vs);
        return 0;
    }
    GLuint p = glCreateProgram();
    glAttachShader(p, vs);
    glAttachShader(p, fs);
    glLinkProgram(p);
    glDeleteShader(vs);
    glDeleteShader(fs);
    GLint ok = 0;
    glGetProgramiv(p, GL_LINK_STATUS, &ok);
    if (!ok) {
        char log[2048];
        glGetProgramInfoLog(p, sizeof log, NULL, log);
        fprintf(stderr, "prism-view: %s program: %s\n", name, log);
        glDeleteProgram(p);
        return 0;
    }
    return p;
}
