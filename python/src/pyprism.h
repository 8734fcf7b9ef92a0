/* The _prism extension: Prism's C API for Python, on the CPython API and
 * the buffer protocol (no NumPy headers: NumPy views our memory through
 * buffers; DLPack and __cuda_array_interface__ export device memory).
 * One file per object kind: module.c (errors, log, devices, load),
 * scene.c, view.c (zero-copy buffers), context.c, geometry.c,
 * device_array.c (DLPack), foreign.c (device arrays taken in). */
#ifndef PYPRISM_H
#define PYPRISM_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pythread.h>

#include "prism/prism.h"

/* ---- module.c: errors, log, progress ---------------------------------- */

/* Raise the prism.Error subclass of `result` with `message` (the C
 * library's words; "" gives the result's name). Returns NULL. */
PyObject *pyprism_raise(prism_result result, const char *message);
/* Forward a C log line to the Python handler (prism's logger). Safe from any
 * thread, with or without the GIL. `user` may be a pyprism_log_sink. */
void pyprism_log(void *user, prism_log_level level, const char *message);

/* Where a context keeps its last error line while it is being created (the
 * C library has no context yet to hold it). */
typedef struct pyprism_log_sink {
    char last_error[1024];
} pyprism_log_sink;

/* A Python progress callable driven from C (the loader's and the BVH
 * builder's prism_progress_fn). It takes the GIL for each call; an
 * exception in the callable, False, or a pending KeyboardInterrupt cancels
 * the C work, and the exception is kept to be raised afterwards. */
typedef struct pyprism_progress {
    PyObject *callable; /* borrowed; may be NULL (signals are still checked) */
    PyObject *exc;      /* owned: the exception that cancelled */
} pyprism_progress;
bool pyprism_progress_call(void *user, size_t done, size_t total);
/* After the C call, with the GIL: raise what cancelled it (returns NULL),
 * or clear and return Py_None (borrowed) when nothing did. */
PyObject *pyprism_progress_finish(pyprism_progress *p);

/* prism_device_info as a dict. */
PyObject *pyprism_device_info_dict(const prism_device_info *info);
/* Parse a size argument (None -> fallback). -1 and an exception on error. */
int pyprism_size_arg(PyObject *o, const char *what, size_t fallback, size_t *out);

/* ---- view.c: a zero-copy buffer over memory that `owner` keeps alive --- */

extern PyTypeObject pyprism_view_type;
/* A C-contiguous (or strided) read-only or writable buffer of `ndim`
 * dimensions; `format` a struct-module code ("f", "I", "B"). The view holds
 * a reference to `owner`. */
PyObject *pyprism_view_new(PyObject *owner, void *data, const char *format, Py_ssize_t itemsize,
                           int ndim, const Py_ssize_t *shape, const Py_ssize_t *strides,
                           bool readonly);

/* ---- scene.c ---------------------------------------------------------- */

typedef struct pyprism_scene {
    PyObject_HEAD prism_scene *scene;
} pyprism_scene;
extern PyTypeObject pyprism_scene_type;
PyObject *pyprism_load(PyObject *self, PyObject *args, PyObject *kwargs);

/* ---- context.c -------------------------------------------------------- */

typedef struct pyprism_child pyprism_child;

/* A context and the lock that keeps it to one thread at a time (the C
 * library's rule) while the GIL is released around long calls. Closing it
 * releases what was made from it (its children) and destroys it; the
 * destruction waits while another library still reads a child's memory
 * (DLPack, the buffer protocol, __cuda_array_interface__), and comes when
 * the last such child is released. */
typedef struct pyprism_context {
    PyObject_HEAD prism_context *ctx; /* NULL once destroyed */
    PyThread_type_lock lock;
    bool closed; /* close() was called: no new use */
    bool cuda;   /* the backend, kept for children made after close */
    int device_index;
    pyprism_child *children; /* the live children (geometries, device arrays) */
    pyprism_log_sink sink;
} pyprism_context;
extern PyTypeObject pyprism_context_type;
/* The context, or NULL with an exception when it was closed. */
prism_context *pyprism_context_get(pyprism_context *c);
/* Lock around a C call, the GIL released meanwhile. */
void pyprism_context_lock(pyprism_context *c);
void pyprism_context_unlock(pyprism_context *c);
/* Raise the context's last error for `r`. */
PyObject *pyprism_context_raise(pyprism_context *c, prism_result r);

/* What a context made: a geometry or a device array. Each starts with this
 * header; the context lists its live children so that closing it releases
 * them. `exports` counts the views another library holds of the child's
 * memory (DLPack capsules, buffer exports; __cuda_array_interface__ counts
 * for good): a closed child with exports keeps its memory until they end. */
#define PYPRISM_CHILD_HEAD                                                                         \
    PyObject_HEAD pyprism_context *context; /* owned */                                            \
    pyprism_child *prev, *next;                                                                    \
    void (*release)(pyprism_child *); /* frees the C object; the lock is held */                   \
    const char *kind;                 /* "geometry", "device array" */                             \
    Py_ssize_t exports;                                                                            \
    bool closed;   /* close() asked, by the child or by its context */                             \
    bool released; /* the C object is gone */
struct pyprism_child {
    PYPRISM_CHILD_HEAD
};
/* Link a new child to `c` (taking a reference to it). A context closed
 * meanwhile releases it at once; one already destroyed freed its memory. */
void pyprism_child_attach(pyprism_context *c, pyprism_child *k, const char *kind,
                          void (*release)(pyprism_child *));
/* Close the child: release it now, or when its exports end. Idempotent. */
void pyprism_child_close(pyprism_child *k);
/* One export of the child's memory ended (with the GIL). */
void pyprism_child_unexport(pyprism_child *k);
/* The child's dealloc: release it, unlink it, drop the context. */
void pyprism_child_dealloc(pyprism_child *k);
/* Raise unless the child and its context are open (0 when they are). */
int pyprism_child_check(pyprism_child *k);
/* Check, take the context's lock, and check again (a close may have come
 * while waiting): 0 with the lock held, or -1 unlocked with an exception. */
int pyprism_child_enter(pyprism_child *k);

/* ---- geometry.c ------------------------------------------------------- */

typedef struct pyprism_geometry {
    PYPRISM_CHILD_HEAD
    prism_geometry *geometry;
} pyprism_geometry;
extern PyTypeObject pyprism_geometry_type;
PyObject *pyprism_geometry_new(pyprism_context *c, prism_geometry *g);

/* ---- device_array.c: a prism_buffer exported by DLPack / CAI ---------- */

typedef struct pyprism_device_array {
    PYPRISM_CHILD_HEAD
    prism_buffer *buffer;
    void *data;        /* the buffer's device pointer */
    bool cuda;         /* CUDA device memory; else host-backend memory */
    bool cai_exported; /* __cuda_array_interface__ was read: one export for good */
    int device_id;
    int ndim;
    Py_ssize_t shape[3];
    Py_ssize_t strides[3]; /* bytes, C order */
    char typestr[4];       /* "<f4" */
} pyprism_device_array;
extern PyTypeObject pyprism_device_array_type;
/* Take ownership of `buffer` (released with the object; NULL for an empty
 * array). */
PyObject *pyprism_device_array_new(pyprism_context *c, prism_buffer *buffer, int ndim,
                                   const Py_ssize_t *shape);

/* ---- foreign.c: a device array handed to us (DLPack capsule) ---------- */

extern PyTypeObject pyprism_foreign_type;
PyObject *pyprism_from_dlpack(PyObject *self, PyObject *capsule);

#endif
