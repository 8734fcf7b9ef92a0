/* GLFW window, context and input callbacks for the windowed mode. */
#include "window_glfw.h"

#include <stdio.h>
#include <stdlib.h>

#include "gl.h"
#include "sanitizer.h"
#include <GLFW/glfw3.h>

struct viewer_window {
    GLFWwindow *handle;
    viewer_input *input;
    double last_x, last_y;
    bool have_last;
    double s_pressed_at;
};

static char glfw_message[256];

static void on_glfw_error(int code, const char *message)
{
    snprintf(glfw_message, sizeof glfw_message, "GLFW error %d: %s", code, message);
}

static void on_key(GLFWwindow *w, int key, int scancode, int action, int mods)
{
    viewer_window *win = glfwGetWindowUserPointer(w);
    viewer_input *in = win->input;
    bool down = action != GLFW_RELEASE;
    switch (key) {
    case GLFW_KEY_W: in->fly_forward = down; break;
    case GLFW_KEY_S: in->fly_back = down; break;
    case GLFW_KEY_A: in->fly_left = down; break;
    case GLFW_KEY_D: in->fly_right = down; break;
    case GLFW_KEY_LEFT_SHIFT:
    case GLFW_KEY_RIGHT_SHIFT: in->shift = down; break;
    default: break;
    }
    /* S both flies back (held, as WASD) and takes a screenshot (tapped):
     * a release within a quarter second is a tap. */
    if (key == GLFW_KEY_S) {
        if (action == GLFW_PRESS)
            win->s_pressed_at = glfwGetTime();
        else if (action == GLFW_RELEASE && glfwGetTime() - win->s_pressed_at < 0.25)
            viewer_input_push_key(in, 'S');
        return;
    }
    if (action != GLFW_PRESS)
        return;
    if (key == GLFW_KEY_ESCAPE)
        viewer_input_push_key(in, VIEWER_KEY_ESCAPE);
    else if (key >= 32 && key < 127)
        viewer_input_push_key(in, key);
}

static void on_cursor(GLFWwindow *w, double x, double y)
{
    viewer_window *win = glfwGetWindowUserPointer(w);
    if (win->have_last) {
        double dx = x - win->last_x, dy = y - win->last_y;
        if (glfwGetMouseButton(w, GLFW_MOUSE_BUTTON_LEFT) == GLFW_PRESS) {
            win->input->orbit_dx += dx;
            win->input->orbit_dy += dy;
        } else if (glfwGetMouseButton(w, GLFW_MOUSE_BUTTON_RIGHT) == GLFW_PRESS ||
                   glfwGetMouseButton(w, GLFW_MOUSE_BUTTON_MIDDLE) == GLFW_PRESS) {
            win->input->pan_dx += dx;
            win->input->pan_dy += dy;
        }
    }
    win->last_x = x;
    win->last_y = y;
    win->have_last = true;
}

static void on_scroll(GLFWwindow *w, double dx, double dy)
{
    viewer_window *win = glfwGetWindowUserPointer(w);
    win->input->scroll += dy;
}

static GLFWwindow *open_window(int w, int h, const char *title)
{
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
    glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
    glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
    glfwWindowHint(GLFW_DEPTH_BITS, 24);
    return glfwCreateWindow(w, h, title, NULL, NULL);
}

int viewer_window_create(int w, int h, const char *title, viewer_input *input, viewer_window **out,
                         char *err, size_t err_size)
{
    *out = NULL;
    glfwSetErrorCallback(on_glfw_error);
    glfw_message[0] = 0;
    if (!glfwInit()) {
        snprintf(err, err_size, "no window system (%s)", glfw_message);
        return -1;
    }
    GLFWwindow *handle = open_window(w, h, title);
    if (!handle) {
        snprintf(err, err_size, "no OpenGL 3.3 core window (%s)", glfw_message);
        glfwTerminate();
        return -1;
    }
    glfwMakeContextCurrent(handle);
    glfwSwapInterval(0); /* measure frames, not the monitor */
    viewer_window *win = calloc(1, sizeof *win);
    if (!win || viewer_gl_load(err, err_size)) {
        if (!win)
            snprintf(err, err_size, "out of memory");
        free(win);
        glfwDestroyWindow(handle);
        glfwTerminate();
        return -1;
    }
    win->handle = handle;
    win->input = input;
    glfwSetWindowUserPointer(handle, win);
    glfwSetKeyCallback(handle, on_key);
    glfwSetCursorPosCallback(handle, on_cursor);
    glfwSetScrollCallback(handle, on_scroll);
    *out = win;
    return 0;
}

void viewer_window_destroy(viewer_window *win)
{
    if (!win)
        return;
    glfwDestroyWindow(win->handle);
    if (!VIEWER_KEEP_GL_DRIVER)
        glfwTerminate();
    free(win);
}

bool viewer_window_should_close(const viewer_window *win)
{
    return glfwWindowShouldClose(win->handle);
}

void viewer_window_close(viewer_window *win)
{
    glfwSetWindowShouldClose(win->handle, GLFW_TRUE);
}

void viewer_window_poll(viewer_window *win)
{
    glfwPollEvents();
}

void viewer_window_swap(viewer_window *win)
{
    glfwSwapBuffers(win->handle);
}

void viewer_window_framebuffer_size(const viewer_window *win, int *w, int *h)
{
    glfwGetFramebufferSize(win->handle, w, h);
}
