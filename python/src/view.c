/* _prism.View: memory that another object owns (a scene's arrays, a
 * material's tables), exported through the buffer protocol with its shape,
 * strides and format, so numpy.asarray(view) reads it in place. The view
 * holds a reference to the owner; NumPy's array holds the view: the C
 * memory lives as long as any array over it. */
#include "pyprism.h"

#include <string.h>

typedef struct pyprism_view {
    PyObject_HEAD PyObject *owner;
    void *data;
    char format[8];
    Py_ssize_t itemsize;
    int ndim;
    Py_ssize_t shape[3];
    Py_ssize_t strides[3];
    bool readonly;
} pyprism_view;

/* A buffer of no elements still needs a non-NULL pointer. */
static char empty_data[64];

PyObject *pyprism_view_new(PyObject *owner, void *data, const char *format, Py_ssize_t itemsize,
                           int ndim, const Py_ssize_t *shape, const Py_ssize_t *strides,
                           bool readonly)
{
    if (ndim < 1 || ndim > 3 || strlen(format) >= sizeof((pyprism_view *)0)->format) {
        PyErr_SetString(PyExc_SystemError, "_prism: bad view");
        return NULL;
    }
    pyprism_view *v = PyObject_New(pyprism_view, &pyprism_view_type);
    if (v == NULL)
        return NULL;
    v->owner = Py_NewRef(owner);
    v->data = data != NULL ? data : empty_data;
    snprintf(v->format, sizeof v->format, "%s", format);
    v->itemsize = itemsize;
    v->ndim = ndim;
    for (int i = ndim - 1; i >= 0; i--) {
        v->shape[i] = shape[i];
        v->strides[i] = strides != NULL ? strides[i]
                        : i == ndim - 1 ? itemsize
                                        : v->strides[i + 1] * shape[i + 1];
    }
    v->readonly = readonly;
    return (PyObject *)v;
}

static bool c_contiguous(const pyprism_view *v)
{
    Py_ssize_t step = v->itemsize;
    for (int i = v->ndim - 1; i >= 0; i--) {
        if (v->shape[i] > 1 && v->strides[i] != step)
            return false;
        step *= v->shape[i];
    }
    return true;
}

static int view_getbuffer(PyObject *self, Py_buffer *b, int flags)
{
    pyprism_view *v = (pyprism_view *)self;
    if ((flags & PyBUF_WRITABLE) == PyBUF_WRITABLE && v->readonly) {
        PyErr_SetString(PyExc_BufferError, "prism: this array is read-only (the scene's memory)");
        return -1;
    }
    bool contiguous = c_contiguous(v);
    if ((flags & PyBUF_STRIDES) != PyBUF_STRIDES && !contiguous) {
        PyErr_SetString(PyExc_BufferError, "prism: this array is strided");
        return -1;
    }
    if ((flags & PyBUF_F_CONTIGUOUS) == PyBUF_F_CONTIGUOUS && v->ndim > 1) {
        PyErr_SetString(PyExc_BufferError, "prism: this array is not Fortran-ordered");
        return -1;
    }
    if (((flags & PyBUF_C_CONTIGUOUS) == PyBUF_C_CONTIGUOUS ||
         (flags & PyBUF_ANY_CONTIGUOUS) == PyBUF_ANY_CONTIGUOUS) &&
        !contiguous) {
        PyErr_SetString(PyExc_BufferError, "prism: this array is not contiguous");
        return -1;
    }
    Py_ssize_t n = 1;
    for (int i = 0; i < v->ndim; i++)
        n *= v->shape[i];
    b->buf = v->data;
    b->obj = Py_NewRef(self);
    b->len = n * v->itemsize;
    b->readonly = v->readonly;
    b->itemsize = v->itemsize;
    b->format = (flags & PyBUF_FORMAT) ? v->format : NULL;
    b->ndim = v->ndim;
    b->shape = (flags & PyBUF_ND) == PyBUF_ND ? v->shape : NULL;
    b->strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? v->strides : NULL;
    b->suboffsets = NULL;
    b->internal = NULL;
    return 0;
}

static PyBufferProcs view_as_buffer = {view_getbuffer, NULL};

static void view_dealloc(PyObject *self)
{
    pyprism_view *v = (pyprism_view *)self;
    Py_XDECREF(v->owner);
    PyObject_Free(self);
}

static PyObject *view_address(PyObject *self, void *unused)
{
    return PyLong_FromVoidPtr(((pyprism_view *)self)->data);
}

static PyObject *view_owner(PyObject *self, void *unused)
{
    return Py_NewRef(((pyprism_view *)self)->owner);
}

static PyGetSetDef view_getset[] = {
    {"address", view_address, NULL, "The address of the first element.", NULL},
    {"owner", view_owner, NULL, "The object that owns the memory.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject pyprism_view_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "prism._prism.View",
    .tp_basicsize = sizeof(pyprism_view),
    .tp_dealloc = view_dealloc,
    .tp_as_buffer = &view_as_buffer,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Memory owned by a Prism object, exported through the buffer protocol.",
    .tp_getset = view_getset,
};
