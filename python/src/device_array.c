/* _prism.DeviceArray: a prism_buffer in the context's device memory (CUDA
 * device memory; heap memory on the host backend), exported without a copy
 * through DLPack (__dlpack__, __dlpack_device__), __cuda_array_interface__
 * (CUDA only) and, on the host backend, the buffer protocol. Each DLPack
 * capsule holds a reference to the array, so the memory outlives the
 * producer's Python references for as long as a consumer holds it. */
#include "pyprism.h"

#include <stdlib.h>
#include <string.h>

#include "dlpack_abi.h"

static void device_array_release(pyprism_child *k)
{
    pyprism_device_array *a = (pyprism_device_array *)k;
    prism_buffer_release(a->buffer);
    a->buffer = NULL;
    a->data = NULL;
}

PyObject *pyprism_device_array_new(pyprism_context *c, prism_buffer *buffer, int ndim,
                                   const Py_ssize_t *shape)
{
    pyprism_device_array *a = PyObject_New(pyprism_device_array, &pyprism_device_array_type);
    if (a == NULL) {
        pyprism_context_lock(c);
        if (c->ctx != NULL)
            prism_buffer_release(buffer);
        pyprism_context_unlock(c);
        return NULL;
    }
    a->buffer = buffer;
    a->cai_exported = false;
    a->data = buffer != NULL ? prism_buffer_device_pointer(buffer) : NULL;
    a->cuda = c->cuda;
    a->device_id = a->cuda && c->device_index >= 0 ? c->device_index : 0;
    a->ndim = ndim;
    for (int i = ndim - 1; i >= 0; i--) {
        a->shape[i] = shape[i];
        a->strides[i] = i == ndim - 1 ? 4 : a->strides[i + 1] * shape[i + 1];
    }
    snprintf(a->typestr, sizeof a->typestr, "<f4");
    pyprism_child_attach(c, (pyprism_child *)a, "device array", device_array_release);
    return (PyObject *)a;
}

static void device_array_dealloc(PyObject *self)
{
    pyprism_child_dealloc((pyprism_child *)self);
}

static PyObject *device_array_close(PyObject *self, PyObject *unused)
{
    pyprism_child_close((pyprism_child *)self);
    Py_RETURN_NONE;
}

static PyObject *device_array_enter(PyObject *self, PyObject *unused)
{
    return Py_NewRef(self);
}

static PyObject *device_array_exit(PyObject *self, PyObject *args)
{
    pyprism_child_close((pyprism_child *)self);
    Py_RETURN_FALSE;
}

static PyObject *device_array_closed(PyObject *self, void *unused)
{
    pyprism_child *k = (pyprism_child *)self;
    return PyBool_FromLong(k->closed || k->released || k->context->closed);
}

static Py_ssize_t elements(const pyprism_device_array *a)
{
    Py_ssize_t n = 1;
    for (int i = 0; i < a->ndim; i++)
        n *= a->shape[i];
    return n;
}

/* ---- DLPack ------------------------------------------------------------ */

/* What a capsule carries: the managed tensor (one of the two layouts), the
 * shape it points to, and the array it keeps alive. */
typedef struct export_state {
    union {
        pyprism_dl_managed legacy;
        pyprism_dl_managed_versioned versioned;
    } m;
    int64_t shape[3];
    PyObject *owner;
} export_state;

static void release_owner(export_state *st)
{
    /* consumers may call the deleter from any thread, without the GIL */
    PyGILState_STATE g = PyGILState_Ensure();
    if (st->owner != NULL)
        pyprism_child_unexport((pyprism_child *)st->owner);
    Py_XDECREF(st->owner);
    PyGILState_Release(g);
    free(st);
}

static void legacy_deleter(pyprism_dl_managed *m)
{
    release_owner((export_state *)m->manager_ctx);
}

static void versioned_deleter(pyprism_dl_managed_versioned *m)
{
    release_owner((export_state *)m->manager_ctx);
}

/* A capsule nobody took still owns its tensor. */
static void capsule_destructor(PyObject *capsule)
{
    if (PyCapsule_IsValid(capsule, PYPRISM_DL_CAPSULE)) {
        pyprism_dl_managed *m = PyCapsule_GetPointer(capsule, PYPRISM_DL_CAPSULE);
        m->deleter(m);
    } else if (PyCapsule_IsValid(capsule, PYPRISM_DL_CAPSULE_VERSIONED)) {
        pyprism_dl_managed_versioned *m = PyCapsule_GetPointer(capsule,
                                                               PYPRISM_DL_CAPSULE_VERSIONED);
        m->deleter(m);
    }
}

static int32_t dl_device_type(const pyprism_device_array *a)
{
    return a->cuda ? PYPRISM_DL_CUDA : PYPRISM_DL_CPU;
}

static PyObject *device_array_dlpack(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"stream", "max_version", "dl_device", "copy", NULL};
    pyprism_device_array *a = (pyprism_device_array *)self;
    PyObject *stream = Py_None, *max_version = Py_None, *dl_device = Py_None, *copy = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$OOOO:__dlpack__", keywords, &stream,
                                     &max_version, &dl_device, &copy) ||
        pyprism_child_check((pyprism_child *)a) < 0)
        return NULL;
    /* prism_propagate returns when its results are written: no stream to
     * order against, whatever the consumer's stream. */
    if (copy == Py_True) {
        PyErr_SetString(PyExc_BufferError, "prism: __dlpack__(copy=True) is not supported");
        return NULL;
    }
    if (dl_device != Py_None) {
        int type, id;
        if (!PyArg_ParseTuple(dl_device, "ii", &type, &id))
            return NULL;
        if (type != dl_device_type(a) || id != a->device_id) {
            PyErr_SetString(PyExc_BufferError, "prism: the array is on another device");
            return NULL;
        }
    }
    bool versioned = false;
    if (max_version != Py_None) {
        int major, minor;
        if (!PyArg_ParseTuple(max_version, "ii", &major, &minor))
            return NULL;
        versioned = major >= 1;
    }
    export_state *st = calloc(1, sizeof *st);
    if (st == NULL)
        return PyErr_NoMemory();
    for (int i = 0; i < a->ndim; i++)
        st->shape[i] = a->shape[i];
    pyprism_dl_tensor *t = versioned ? &st->m.versioned.dl_tensor : &st->m.legacy.dl_tensor;
    t->data = a->data;
    t->device.device_type = dl_device_type(a);
    t->device.device_id = a->device_id;
    t->ndim = a->ndim;
    t->dtype.code = PYPRISM_DL_FLOAT;
    t->dtype.bits = 32;
    t->dtype.lanes = 1;
    t->shape = st->shape;
    t->strides = NULL;
    t->byte_offset = 0;
    st->owner = Py_NewRef(self);
    a->exports++; /* until the consumer calls the deleter */
    PyObject *capsule;
    if (versioned) {
        st->m.versioned.version.major = 1;
        st->m.versioned.version.minor = 0;
        st->m.versioned.manager_ctx = st;
        st->m.versioned.deleter = versioned_deleter;
        st->m.versioned.flags = 0;
        capsule = PyCapsule_New(&st->m.versioned, PYPRISM_DL_CAPSULE_VERSIONED, capsule_destructor);
    } else {
        st->m.legacy.manager_ctx = st;
        st->m.legacy.deleter = legacy_deleter;
        capsule = PyCapsule_New(&st->m.legacy, PYPRISM_DL_CAPSULE, capsule_destructor);
    }
    if (capsule == NULL) {
        pyprism_child_unexport((pyprism_child *)a);
        Py_DECREF(self);
        free(st);
    }
    return capsule;
}

static PyObject *device_array_dlpack_device(PyObject *self, PyObject *unused)
{
    pyprism_device_array *a = (pyprism_device_array *)self;
    return Py_BuildValue("(ii)", dl_device_type(a), a->device_id);
}

/* ---- __cuda_array_interface__ (version 3) ------------------------------ */

static PyObject *device_array_cai(PyObject *self, void *unused)
{
    pyprism_device_array *a = (pyprism_device_array *)self;
    if (!a->cuda) {
        PyErr_SetString(PyExc_AttributeError,
                        "__cuda_array_interface__: the array is in host memory (host backend)");
        return NULL;
    }
    if (pyprism_child_check((pyprism_child *)a) < 0)
        return NULL;
    PyObject *shape = PyTuple_New(a->ndim);
    for (int i = 0; shape && i < a->ndim; i++)
        PyTuple_SET_ITEM(shape, i, PyLong_FromSsize_t(a->shape[i]));
    if (shape == NULL)
        return NULL;
    /* stream None: the data is ready, no synchronisation needed */
    PyObject *d = Py_BuildValue("{s:O,s:s,s:(NO),s:i,s:O,s:O}", "shape", shape, "typestr",
                                a->typestr, "data", PyLong_FromVoidPtr(a->data), Py_False,
                                "version", 3, "strides", Py_None, "stream", Py_None);
    Py_DECREF(shape);
    /* a bare address, its consumer unknown: the memory now stays until the
     * array is collected (consumers keep a reference to it) */
    if (d != NULL && !a->cai_exported) {
        a->cai_exported = true;
        a->exports++;
    }
    return d;
}

/* ---- Buffer protocol (host backend only) ------------------------------- */

static int device_array_getbuffer(PyObject *self, Py_buffer *b, int flags)
{
    pyprism_device_array *a = (pyprism_device_array *)self;
    if (a->cuda) {
        PyErr_SetString(PyExc_BufferError,
                        "prism: the array is in CUDA device memory; use numpy(), DLPack or "
                        "__cuda_array_interface__");
        return -1;
    }
    if (pyprism_child_check((pyprism_child *)a) < 0) {
        /* BufferError, which is what consumers of the protocol expect */
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        PyErr_NormalizeException(&type, &value, &tb);
        PyObject *text = value ? PyObject_Str(value) : NULL;
        PyErr_Format(PyExc_BufferError, "prism: %U", text ? text : Py_None);
        Py_XDECREF(text);
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(tb);
        return -1;
    }
    b->buf = a->data;
    b->obj = Py_NewRef(self);
    b->len = elements(a) * 4;
    b->readonly = 0;
    b->itemsize = 4;
    b->format = (flags & PyBUF_FORMAT) ? "f" : NULL;
    b->ndim = a->ndim;
    b->shape = (flags & PyBUF_ND) == PyBUF_ND ? a->shape : NULL;
    b->strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? a->strides : NULL;
    b->suboffsets = NULL;
    b->internal = NULL;
    a->exports++;
    return 0;
}

static void device_array_releasebuffer(PyObject *self, Py_buffer *b)
{
    pyprism_child_unexport((pyprism_child *)self);
}

static PyBufferProcs device_array_as_buffer = {device_array_getbuffer, device_array_releasebuffer};

/* ---- Host copy --------------------------------------------------------- */

static PyObject *device_array_read_into(PyObject *self, PyObject *out)
{
    pyprism_device_array *a = (pyprism_device_array *)self;
    Py_buffer b;
    if (PyObject_GetBuffer(out, &b, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) < 0)
        return NULL;
    size_t bytes = (size_t)elements(a) * 4;
    if ((size_t)b.len != bytes) {
        PyBuffer_Release(&b);
        return pyprism_raise(PRISM_ERROR_INVALID_ARGUMENT, "read_into: the buffer's size differs");
    }
    prism_result r = PRISM_SUCCESS;
    char message[1024] = "";
    if (pyprism_child_enter((pyprism_child *)a) < 0) {
        PyBuffer_Release(&b);
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS if (bytes > 0) r = prism_buffer_read(a->buffer, 0, b.buf, bytes);
    if (r != PRISM_SUCCESS)
        snprintf(message, sizeof message, "%s", prism_context_last_error(a->context->ctx));
    Py_END_ALLOW_THREADS pyprism_context_unlock(a->context);
    PyBuffer_Release(&b);
    if (r != PRISM_SUCCESS)
        return pyprism_raise(r, message);
    Py_RETURN_NONE;
}

/* prism_photons_select over photons (N, 4, 4): the selected ones in a new
 * DeviceArray, filtered where they are. */
static PyObject *device_array_select(PyObject *self, PyObject *arg)
{
    pyprism_device_array *a = (pyprism_device_array *)self;
    unsigned long any_of = PyLong_AsUnsignedLong(arg);
    if (any_of == (unsigned long)-1 && PyErr_Occurred())
        return NULL;
    if (a->ndim != 3 || a->shape[1] != 4 || a->shape[2] != 4)
        return pyprism_raise(PRISM_ERROR_INVALID_ARGUMENT, "select: not photons (N, 4, 4)");
    pyprism_context *c = a->context;
    size_t n = (size_t)a->shape[0], selected = 0;
    prism_buffer *out = NULL;
    prism_result r = PRISM_SUCCESS;
    char message[1024] = "";
    if (pyprism_child_enter((pyprism_child *)a) < 0)
        return NULL;
    Py_BEGIN_ALLOW_THREADS if (a->buffer != NULL)
        r = prism_photons_select(c->ctx, a->buffer, n, (uint32_t)any_of, NULL, &selected);
    if (r == PRISM_SUCCESS && selected > 0)
        r = prism_buffer_create_device(c->ctx, selected * sizeof(prism_photon), "python.selected",
                                       &out);
    if (r == PRISM_SUCCESS && selected > 0)
        r = prism_photons_select(c->ctx, a->buffer, n, (uint32_t)any_of, out, &selected);
    if (r != PRISM_SUCCESS) {
        snprintf(message, sizeof message, "%s", prism_context_last_error(c->ctx));
        prism_buffer_release(out);
        out = NULL;
    }
    Py_END_ALLOW_THREADS pyprism_context_unlock(c);
    if (r != PRISM_SUCCESS)
        return pyprism_raise(r, message);
    Py_ssize_t shape[3] = {(Py_ssize_t)selected, 4, 4};
    return pyprism_device_array_new(c, out, 3, shape);
}

static PyObject *device_array_shape(PyObject *self, void *unused)
{
    pyprism_device_array *a = (pyprism_device_array *)self;
    PyObject *t = PyTuple_New(a->ndim);
    for (int i = 0; t && i < a->ndim; i++)
        PyTuple_SET_ITEM(t, i, PyLong_FromSsize_t(a->shape[i]));
    return t;
}

static PyObject *device_array_ptr(PyObject *self, void *unused)
{
    if (pyprism_child_check((pyprism_child *)self) < 0)
        return NULL;
    return PyLong_FromVoidPtr(((pyprism_device_array *)self)->data);
}

static PyObject *device_array_nbytes(PyObject *self, void *unused)
{
    return PyLong_FromSsize_t(elements((pyprism_device_array *)self) * 4);
}

static PyObject *device_array_device(PyObject *self, void *unused)
{
    pyprism_device_array *a = (pyprism_device_array *)self;
    return a->cuda ? PyUnicode_FromFormat("cuda:%d", a->device_id) : PyUnicode_FromString("cpu");
}

static PyObject *device_array_typestr(PyObject *self, void *unused)
{
    return PyUnicode_FromString(((pyprism_device_array *)self)->typestr);
}

static PyGetSetDef device_array_getset[] = {
    {"shape", device_array_shape, NULL, "The shape, e.g. (N, 4, 4).", NULL},
    {"ptr", device_array_ptr, NULL, "The address of the first element.", NULL},
    {"nbytes", device_array_nbytes, NULL, "Bytes.", NULL},
    {"device", device_array_device, NULL, "'cuda:N', or 'cpu' on the host backend.", NULL},
    {"typestr", device_array_typestr, NULL, "'<f4': float32 words.", NULL},
    {"closed", device_array_closed, NULL, "True once it, or its context, was closed.", NULL},
    {"__cuda_array_interface__", device_array_cai, NULL,
     "The CUDA Array Interface (version 3); CUDA memory only.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef device_array_methods[] = {
    {"__dlpack__", (PyCFunction)(void (*)(void))device_array_dlpack, METH_VARARGS | METH_KEYWORDS,
     "__dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None) -> capsule"},
    {"__dlpack_device__", device_array_dlpack_device, METH_NOARGS,
     "__dlpack_device__() -> (device type, device id): (2, N) for CUDA, (1, 0) for the host."},
    {"select", device_array_select, METH_O,
     "select(any_of) -> DeviceArray of the photons whose history has any of these bits."},
    {"read_into", device_array_read_into, METH_O,
     "read_into(buffer): copy the array into a writable host buffer of the same size."},
    {"close", device_array_close, METH_NOARGS,
     "close()\n--\n\nRelease the memory now, or, while another library still reads it "
     "(DLPack, the buffer protocol, __cuda_array_interface__), when it lets go; later use "
     "raises. Closing twice is fine."},
    {"__enter__", device_array_enter, METH_NOARGS, "__enter__()\n--\n\nReturn the array."},
    {"__exit__", device_array_exit, METH_VARARGS,
     "__exit__(*exc_info)\n--\n\nclose(); an exception in flight goes on unchanged."},
    {NULL, NULL, 0, NULL},
};

PyTypeObject pyprism_device_array_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "prism._prism.DeviceArray",
    .tp_basicsize = sizeof(pyprism_device_array),
    .tp_dealloc = device_array_dealloc,
    .tp_as_buffer = &device_array_as_buffer,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Device memory holding a result (see prism.DeviceArray).",
    .tp_methods = device_array_methods,
    .tp_getset = device_array_getset,
};
