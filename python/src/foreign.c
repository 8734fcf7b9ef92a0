/* _prism.Foreign: a DLPack tensor handed to Prism (input photons from
 * CuPy, PyTorch, NumPy...). from_dlpack takes the capsule over as the
 * protocol asks (renames it "used_..." and calls the producer's deleter when
 * done) and describes the tensor; the Python package checks the dtype and
 * shape and passes the address on while the object is alive. */
#include "pyprism.h"

#include <string.h>

#include "dlpack_abi.h"

typedef struct pyprism_foreign {
    PyObject_HEAD pyprism_dl_managed *legacy;
    pyprism_dl_managed_versioned *versioned;
    pyprism_dl_tensor *tensor;
} pyprism_foreign;

PyObject *pyprism_from_dlpack(PyObject *self, PyObject *capsule)
{
    pyprism_foreign *f = PyObject_New(pyprism_foreign, &pyprism_foreign_type);
    if (f == NULL)
        return NULL;
    f->legacy = NULL;
    f->versioned = NULL;
    f->tensor = NULL;
    if (PyCapsule_IsValid(capsule, PYPRISM_DL_CAPSULE_VERSIONED)) {
        f->versioned = PyCapsule_GetPointer(capsule, PYPRISM_DL_CAPSULE_VERSIONED);
        if (f->versioned->version.major != 1) {
            /* a layout we do not know: leave the capsule to its producer */
            f->versioned = NULL;
            Py_DECREF(f);
            return pyprism_raise(PRISM_ERROR_UNSUPPORTED, "DLPack: unsupported major version");
        }
        f->tensor = &f->versioned->dl_tensor;
        PyCapsule_SetName(capsule, PYPRISM_DL_CAPSULE_VERSIONED_USED);
    } else if (PyCapsule_IsValid(capsule, PYPRISM_DL_CAPSULE)) {
        f->legacy = PyCapsule_GetPointer(capsule, PYPRISM_DL_CAPSULE);
        f->tensor = &f->legacy->dl_tensor;
        PyCapsule_SetName(capsule, PYPRISM_DL_CAPSULE_USED);
    } else {
        Py_DECREF(f);
        return pyprism_raise(PRISM_ERROR_INVALID_ARGUMENT,
                             "DLPack: not an unused 'dltensor' capsule");
    }
    return (PyObject *)f;
}

static void foreign_dealloc(PyObject *self)
{
    pyprism_foreign *f = (pyprism_foreign *)self;
    if (f->versioned != NULL && f->versioned->deleter != NULL)
        f->versioned->deleter(f->versioned);
    else if (f->legacy != NULL && f->legacy->deleter != NULL)
        f->legacy->deleter(f->legacy);
    PyObject_Free(self);
}

static PyObject *foreign_describe(PyObject *self, PyObject *unused)
{
    const pyprism_dl_tensor *t = ((pyprism_foreign *)self)->tensor;
    if (t->ndim < 0 || t->ndim > 8)
        return pyprism_raise(PRISM_ERROR_INVALID_ARGUMENT, "DLPack: more than 8 dimensions");
    PyObject *shape = PyTuple_New(t->ndim);
    PyObject *strides = t->strides ? PyTuple_New(t->ndim) : Py_NewRef(Py_None);
    for (int i = 0; shape && strides && i < t->ndim; i++) {
        PyTuple_SET_ITEM(shape, i, PyLong_FromLongLong(t->shape[i]));
        if (t->strides)
            PyTuple_SET_ITEM(strides, i, PyLong_FromLongLong(t->strides[i]));
    }
    PyObject *d = shape && strides
                      ? Py_BuildValue("{s:N,s:(ii),s:O,s:O,s:(iii),s:O}", "ptr",
                                      PyLong_FromVoidPtr((char *)t->data + t->byte_offset),
                                      "device", t->device.device_type, t->device.device_id, "shape",
                                      shape, "strides", strides, "dtype", t->dtype.code,
                                      t->dtype.bits, t->dtype.lanes, "read_only",
                                      ((pyprism_foreign *)self)->versioned &&
                                              (((pyprism_foreign *)self)->versioned->flags &
                                               PYPRISM_DL_FLAG_READ_ONLY)
                                          ? Py_True
                                          : Py_False)
                      : NULL;
    Py_XDECREF(shape);
    Py_XDECREF(strides);
    return d;
}

static PyMethodDef foreign_methods[] = {
    {"describe", foreign_describe, METH_NOARGS,
     "describe() -> {ptr, device, shape, strides, dtype: (code, bits, lanes), read_only}"},
    {NULL, NULL, 0, NULL},
};

PyTypeObject pyprism_foreign_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "prism._prism.Foreign",
    .tp_basicsize = sizeof(pyprism_foreign),
    .tp_dealloc = foreign_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A DLPack tensor taken over from another library.",
    .tp_methods = foreign_methods,
};
