/* The _prism module: prism.Error and one subclass per prism_result, the C
 * log forwarded to Python, progress callbacks driven from C, the device
 * report, and the layouts and constants the Python package builds its
 * NumPy dtypes from (so they follow the C headers, not a copy of them). */
#include "pyprism.h"

#include <stddef.h>
#include <string.h>

/* ---- Errors ------------------------------------------------------------ */

/* Python bases besides prism.Error: v ValueError, t TypeError,
 * m MemoryError, o OSError. */
static const struct error_spec {
    prism_result result;
    const char *name;
    const char *bases;
    const char *doc;
} error_specs[] = {
    {PRISM_ERROR_INVALID_ARGUMENT, "InvalidArgumentError", "vt",
     "A bad argument: a wrong dtype, shape, size or value (also a ValueError and a TypeError)."},
    {PRISM_ERROR_OUT_OF_MEMORY, "OutOfMemoryError", "m", "Host memory ran out."},
    {PRISM_ERROR_OUT_OF_DEVICE_MEMORY, "OutOfDeviceMemoryError", "m", "Device memory ran out."},
    {PRISM_ERROR_IO, "IOError", "o",
     "A file could not be opened or read, or a progress callback cancelled the work."},
    {PRISM_ERROR_PARSE, "ParseError", "v",
     "Malformed input; the message names the file, line and element."},
    {PRISM_ERROR_LIMIT, "LimitError", "v", "Input beyond a documented limit (nesting, counts)."},
    {PRISM_ERROR_UNSUPPORTED, "UnsupportedError", "",
     "Something this build or device lacks (e.g. CUDA in a build without it)."},
    {PRISM_ERROR_NO_DRIVER, "NoDriverError", "", "No CUDA driver, or one too old."},
    {PRISM_ERROR_NO_DEVICE, "NoDeviceError", "", "A CUDA driver, but no CUDA device."},
    {PRISM_ERROR_INVALID_DEVICE, "InvalidDeviceError", "v",
     "A device choice that names no device; the message names where it came from."},
    {PRISM_ERROR_DEVICE_UNAVAILABLE, "DeviceUnavailableError", "",
     "The device exists but gives no context (busy, prohibited)."},
    {PRISM_ERROR_NO_GL_CONTEXT, "NoGLContextError", "", "GL sharing asked for, no GL context."},
    {PRISM_ERROR_GL_NOT_ON_CUDA_DEVICE, "GLNotOnCudaDeviceError", "",
     "The current GL context is not on a CUDA device."},
    {PRISM_ERROR_INTEROP_UNAVAILABLE, "InteropUnavailableError", "",
     "A GL buffer could not be registered with CUDA."},
    {PRISM_ERROR_MAPPED_NOT_ALLOWED, "MappedNotAllowedError", "",
     "Mapped host memory on a context created without it."},
    {PRISM_ERROR_OUT_OF_RANGE, "OutOfRangeError", "v", "An offset or size outside an object."},
    {PRISM_ERROR_LIVE_ALLOCATIONS, "LiveAllocationsError", "",
     "A context closed while objects made from it are alive."},
    {PRISM_ERROR_CUDA, "CudaError", "", "A CUDA failure; the message has CUDA's words."},
    {PRISM_ERROR_GL, "GLError", "", "An OpenGL failure."},
    {PRISM_ERROR_PLACEMENT, "PlacementError", "", "A placement policy that cannot be met."},
    {PRISM_ERROR_COMPILE, "CompileError", "",
     "Runtime compilation failed; the message has the compiler's log."},
};
#define ERROR_SPECS (sizeof error_specs / sizeof error_specs[0])

static PyObject *error_base; /* prism.Error */
static PyObject *error_classes[PRISM_RESULT_COUNT_];

static PyObject *make_error(prism_result result, const char *message)
{
    PyObject *cls = (unsigned)result < PRISM_RESULT_COUNT_ && error_classes[result]
                        ? error_classes[result]
                        : error_base;
    const char *text = message && message[0] ? message : prism_result_string(result);
    PyObject *exc = PyObject_CallFunction(cls, "s", text);
    if (exc == NULL)
        return NULL;
    PyObject *code = PyLong_FromLong((long)result);
    PyObject *name = PyUnicode_FromString(prism_result_string(result));
    PyObject *msg = PyUnicode_FromString(text);
    int bad = !code || !name || !msg || PyObject_SetAttrString(exc, "code", code) < 0 ||
              PyObject_SetAttrString(exc, "result", name) < 0 ||
              PyObject_SetAttrString(exc, "message", msg) < 0;
    Py_XDECREF(code);
    Py_XDECREF(name);
    Py_XDECREF(msg);
    if (bad)
        Py_CLEAR(exc);
    return exc;
}

PyObject *pyprism_raise(prism_result result, const char *message)
{
    PyObject *exc = make_error(result, message);
    if (exc != NULL) {
        PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
        Py_DECREF(exc);
    }
    return NULL;
}

static PyObject *py_make_error(PyObject *self, PyObject *args)
{
    int code;
    const char *message;
    if (!PyArg_ParseTuple(args, "is:make_error", &code, &message))
        return NULL;
    return make_error((prism_result)code, message);
}

static int add_errors(PyObject *m)
{
    error_base = PyErr_NewExceptionWithDoc(
        "prism.Error",
        "Base of Prism's errors. Attributes: code (the prism_result value), result (its "
        "name, e.g. 'PRISM_ERROR_PARSE') and message (the C library's message).",
        NULL, NULL);
    if (error_base == NULL || PyModule_AddObjectRef(m, "Error", error_base) < 0)
        return -1;
    for (size_t i = 0; i < ERROR_SPECS; i++) {
        const struct error_spec *e = &error_specs[i];
        PyObject *bases = PyTuple_New(1 + (Py_ssize_t)strlen(e->bases));
        if (bases == NULL)
            return -1;
        PyTuple_SET_ITEM(bases, 0, Py_NewRef(error_base));
        for (size_t k = 0; e->bases[k]; k++) {
            PyObject *b = e->bases[k] == 'v'   ? PyExc_ValueError
                          : e->bases[k] == 't' ? PyExc_TypeError
                          : e->bases[k] == 'm' ? PyExc_MemoryError
                                               : PyExc_OSError;
            PyTuple_SET_ITEM(bases, (Py_ssize_t)k + 1, Py_NewRef(b));
        }
        char qualified[96];
        snprintf(qualified, sizeof qualified, "prism.%s", e->name);
        PyObject *cls = PyErr_NewExceptionWithDoc(qualified, e->doc, bases, NULL);
        Py_DECREF(bases);
        if (cls == NULL || PyModule_AddObjectRef(m, e->name, cls) < 0) {
            Py_XDECREF(cls);
            return -1;
        }
        error_classes[e->result] = cls; /* the module keeps it alive */
        Py_DECREF(cls);
    }
    return 0;
}

/* ---- Log --------------------------------------------------------------- */

static PyObject *log_handler; /* callable(level: int, message: str) */

void pyprism_log(void *user, prism_log_level level, const char *message)
{
    pyprism_log_sink *sink = user;
    if (sink != NULL && level >= PRISM_LOG_ERROR)
        snprintf(sink->last_error, sizeof sink->last_error, "%s", message);
    if (!Py_IsInitialized())
        return;
    PyGILState_STATE g = PyGILState_Ensure();
    if (log_handler != NULL) {
        /* a log line may come while an exception is being raised */
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        PyObject *r = PyObject_CallFunction(log_handler, "is", (int)level, message);
        if (r == NULL)
            PyErr_WriteUnraisable(log_handler);
        Py_XDECREF(r);
        PyErr_Restore(type, value, tb);
    }
    PyGILState_Release(g);
}

static PyObject *py_set_log_handler(PyObject *self, PyObject *handler)
{
    if (handler != Py_None && !PyCallable_Check(handler))
        return pyprism_raise(PRISM_ERROR_INVALID_ARGUMENT, "the log handler must be callable");
    Py_XSETREF(log_handler, handler == Py_None ? NULL : Py_NewRef(handler));
    Py_RETURN_NONE;
}

/* ---- Progress ---------------------------------------------------------- */

bool pyprism_progress_call(void *user, size_t done, size_t total)
{
    pyprism_progress *p = user;
    PyGILState_STATE g = PyGILState_Ensure();
    bool go = p->exc == NULL;
    if (go && PyErr_CheckSignals() < 0)
        go = false;
    if (go && p->callable != NULL) {
        PyObject *r = PyObject_CallFunction(p->callable, "nn", (Py_ssize_t)done, (Py_ssize_t)total);
        if (r == NULL)
            go = false;
        else
            go = r == Py_None || PyObject_IsTrue(r) > 0;
        Py_XDECREF(r);
        if (PyErr_Occurred())
            go = false;
    }
    if (!go && p->exc == NULL) {
        if (PyErr_Occurred()) {
            PyObject *type, *tb;
            PyErr_Fetch(&type, &p->exc, &tb);
            PyErr_NormalizeException(&type, &p->exc, &tb);
            if (tb != NULL && p->exc != NULL)
                PyException_SetTraceback(p->exc, tb);
            Py_XDECREF(type);
            Py_XDECREF(tb);
        } else {
            p->exc = make_error(PRISM_ERROR_IO, "cancelled by the progress callback");
            PyErr_Clear();
        }
    }
    PyGILState_Release(g);
    return go;
}

PyObject *pyprism_progress_finish(pyprism_progress *p)
{
    if (p->exc == NULL)
        return Py_None;
    PyErr_SetObject((PyObject *)Py_TYPE(p->exc), p->exc);
    Py_CLEAR(p->exc);
    return NULL;
}

int pyprism_size_arg(PyObject *o, const char *what, size_t fallback, size_t *out)
{
    if (o == NULL || o == Py_None) {
        *out = fallback;
        return 0;
    }
    if (!PyLong_Check(o)) {
        PyErr_Clear();
        char msg[160];
        snprintf(msg, sizeof msg, "%s must be an integer, not %.60s", what, Py_TYPE(o)->tp_name);
        pyprism_raise(PRISM_ERROR_INVALID_ARGUMENT, msg);
        return -1;
    }
    size_t v = PyLong_AsSize_t(o);
    if (v == (size_t)-1 && PyErr_Occurred()) {
        PyErr_Clear();
        char msg[160];
        snprintf(msg, sizeof msg, "%s must be between 0 and %zu", what, (size_t)SIZE_MAX - 1);
        pyprism_raise(PRISM_ERROR_INVALID_ARGUMENT, msg);
        return -1;
    }
    *out = v;
    return 0;
}

/* ---- Devices ----------------------------------------------------------- */

static PyObject *py_device_report(PyObject *self, PyObject *unused)
{
    char *text = NULL;
    size_t need;
    Py_BEGIN_ALLOW_THREADS need = prism_device_report(NULL, 0);
    text = PyMem_RawMalloc(need + 1);
    if (text != NULL)
        prism_device_report(text, need + 1);
    Py_END_ALLOW_THREADS if (text == NULL) return PyErr_NoMemory();
    PyObject *r = PyUnicode_FromString(text);
    PyMem_RawFree(text);
    return r;
}

static PyObject *py_cuda_device_count(PyObject *self, PyObject *unused)
{
    int n;
    Py_BEGIN_ALLOW_THREADS n = prism_cuda_device_count();
    Py_END_ALLOW_THREADS return PyLong_FromLong(n);
}

PyObject *pyprism_device_info_dict(const prism_device_info *d)
{
    return Py_BuildValue("{s:s,s:i,s:s,s:(ii),s:n,s:i,s:i,s:i,s:n,s:n,s:O,s:O,s:O,s:O,s:O,s:i}",
                         "backend", prism_backend_name(d->backend), "index", d->index, "name",
                         d->name, "compute_capability", d->cc_major, d->cc_minor, "total_memory",
                         (Py_ssize_t)d->total_memory, "multiprocessors", d->multiprocessors,
                         "max_threads_per_block", d->max_threads_per_block, "warp_size",
                         d->warp_size, "shared_memory_per_block",
                         (Py_ssize_t)d->shared_memory_per_block, "shared_memory_per_multiprocessor",
                         (Py_ssize_t)d->shared_memory_per_multiprocessor, "can_map_host_memory",
                         d->can_map_host_memory ? Py_True : Py_False, "unified_addressing",
                         d->unified_addressing ? Py_True : Py_False, "memory_pools_supported",
                         d->memory_pools_supported ? Py_True : Py_False, "integrated",
                         d->integrated ? Py_True : Py_False, "kernel_timeout",
                         d->kernel_timeout ? Py_True : Py_False, "host_threads", d->host_threads);
}

static PyObject *py_device_query(PyObject *self, PyObject *args)
{
    int index;
    if (!PyArg_ParseTuple(args, "i:device_query", &index))
        return NULL;
    prism_device_info info;
    prism_result r;
    Py_BEGIN_ALLOW_THREADS r = prism_device_query(index, &info);
    Py_END_ALLOW_THREADS if (r != PRISM_SUCCESS)
    {
        char msg[96];
        snprintf(msg, sizeof msg, "no device %d", index);
        return pyprism_raise(r, msg);
    }
    return pyprism_device_info_dict(&info);
}

static PyObject *py_version(PyObject *self, PyObject *unused)
{
    return PyUnicode_FromString(prism_version());
}

static PyObject *py_history_flag_name(PyObject *self, PyObject *arg)
{
    if (!PyLong_Check(arg))
        return pyprism_raise(
            PRISM_ERROR_INVALID_ARGUMENT,
            "history_flag_name: the flag must be an int (e.g. prism.SURFACE_DETECT)");
    unsigned long long flag = PyLong_AsUnsignedLongLong(arg);
    if (PyErr_Occurred() || flag > UINT32_MAX) {
        PyErr_Clear();
        return pyprism_raise(PRISM_ERROR_INVALID_ARGUMENT,
                             "history_flag_name: the flag must be a 32-bit history value "
                             "(one bit set, e.g. prism.SURFACE_DETECT), not a negative or "
                             "larger number");
    }
    return PyUnicode_FromString(prism_history_flag_name((uint32_t)flag));
}

/* ---- Layouts ----------------------------------------------------------- */

/* (name, NumPy format, offset) of each field, and the struct's size: the
 * Python package builds PHOTON_DTYPE and STEP_RECORD_DTYPE from these. */
static PyObject *layouts(void)
{
    PyObject *photon = Py_BuildValue("(["
                                     "(ssn)(ssn)(ssn)(ssn)(ssn)(ssn)(ssn)(ssn)(ssn)(ssn)"
                                     "]n)",
                                     "pos", "3<f4", (Py_ssize_t)offsetof(prism_photon, pos), "time",
                                     "<f4", (Py_ssize_t)offsetof(prism_photon, time), "dir", "3<f4",
                                     (Py_ssize_t)offsetof(prism_photon, dir), "wavelength", "<f4",
                                     (Py_ssize_t)offsetof(prism_photon, wavelength), "pol", "3<f4",
                                     (Py_ssize_t)offsetof(prism_photon, pol), "history", "<u4",
                                     (Py_ssize_t)offsetof(prism_photon, history), "solid", "<u4",
                                     (Py_ssize_t)offsetof(prism_photon, solid), "triangle", "<u4",
                                     (Py_ssize_t)offsetof(prism_photon, triangle), "steps", "<u4",
                                     (Py_ssize_t)offsetof(prism_photon, steps), "reserved", "<u4",
                                     (Py_ssize_t)offsetof(prism_photon, reserved),
                                     (Py_ssize_t)sizeof(prism_photon));
    PyObject *record =
        Py_BuildValue("(["
                      "(ssn)(ssn)(ssn)(ssn)(ssn)(ssn)"
                      "]n)",
                      "pos", "3<f4", (Py_ssize_t)offsetof(prism_step_record, pos), "time", "<f4",
                      (Py_ssize_t)offsetof(prism_step_record, time), "history", "<u4",
                      (Py_ssize_t)offsetof(prism_step_record, history), "wavelength", "<f4",
                      (Py_ssize_t)offsetof(prism_step_record, wavelength), "photon", "<u4",
                      (Py_ssize_t)offsetof(prism_step_record, photon), "step", "<u4",
                      (Py_ssize_t)offsetof(prism_step_record, step),
                      (Py_ssize_t)sizeof(prism_step_record));
    PyObject *r = photon && record
                      ? Py_BuildValue("{s:O,s:O}", "photon", photon, "step_record", record)
                      : NULL;
    Py_XDECREF(photon);
    Py_XDECREF(record);
    return r;
}

static int add_constants(PyObject *m)
{
    static const struct {
        const char *name;
        unsigned long value;
    } flags[] = {
        {"NO_HIT", PRISM_NO_HIT},
        {"BULK_ABSORB", PRISM_BULK_ABSORB},
        {"SURFACE_DETECT", PRISM_SURFACE_DETECT},
        {"SURFACE_ABSORB", PRISM_SURFACE_ABSORB},
        {"RAYLEIGH_SCATTER", PRISM_RAYLEIGH_SCATTER},
        {"REFLECT_DIFFUSE", PRISM_REFLECT_DIFFUSE},
        {"REFLECT_SPECULAR", PRISM_REFLECT_SPECULAR},
        {"SURFACE_REEMIT", PRISM_SURFACE_REEMIT},
        {"SURFACE_TRANSMIT", PRISM_SURFACE_TRANSMIT},
        {"BULK_REEMIT", PRISM_BULK_REEMIT},
        {"REFRACT", PRISM_REFRACT},
        {"TOTAL_INTERNAL", PRISM_TOTAL_INTERNAL},
        {"STEP_LIMIT", PRISM_STEP_LIMIT},
        {"NAN_ABORT", PRISM_NAN_ABORT},
        {"TERMINAL_FLAGS", PRISM_TERMINAL_FLAGS},
        {"NONE", PRISM_NONE},
        {"GEANT4_EXTRAS", PRISM_GEANT4_EXTRAS},
        {"GEANT4_META", PRISM_GEANT4_META},
        {"GEANT4_POINTER_IDS", PRISM_GEANT4_POINTER_IDS},
        {"GEANT4_DD_PATHS", PRISM_GEANT4_DD_PATHS},
        {"MAX_RECORD_STEPS", 1024},
    };
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
        PyObject *v = PyLong_FromUnsignedLong(flags[i].value);
        int bad = v == NULL || PyModule_AddObjectRef(m, flags[i].name, v) < 0;
        Py_XDECREF(v);
        if (bad)
            return -1;
    }
    PyObject *l = layouts();
    int bad = l == NULL || PyModule_AddObjectRef(m, "LAYOUTS", l) < 0;
    Py_XDECREF(l);
    if (bad)
        return -1;
    const bool cuda = prism_backend_built(PRISM_BACKEND_CUDA);
    return PyModule_AddObjectRef(m, "BUILT_WITH_CUDA", cuda ? Py_True : Py_False);
}

static PyMethodDef methods[] = {
    {"load", (PyCFunction)(void (*)(void))pyprism_load, METH_VARARGS | METH_KEYWORDS,
     "load(path, unit_meter=0.0, progress=None) -> Scene (see prism.load)"},
    {"from_dlpack", pyprism_from_dlpack, METH_O,
     "from_dlpack(capsule) -> a read-only description of a DLPack tensor (taken over)"},
    {"device_report", py_device_report, METH_NOARGS, "The device report (prism_device_report)."},
    {"cuda_device_count", py_cuda_device_count, METH_NOARGS, "prism_cuda_device_count()."},
    {"device_query", py_device_query, METH_VARARGS,
     "device_query(index) -> dict: prism_device_query (index < 0: the host)."},
    {"version", py_version, METH_NOARGS, "prism_version()."},
    {"history_flag_name", py_history_flag_name, METH_O,
     "history_flag_name(flag, /)\n--\n\n"
     "The name of one history flag: prism_history_flag_name.\n\n"
     "flag is the flag's value, a mask with one bit set (prism.SURFACE_DETECT, which is\n"
     "1 << 2), not a bit index: history_flag_name(prism.SURFACE_DETECT) and\n"
     "history_flag_name(4) give 'SURFACE_DETECT', history_flag_name(2) gives\n"
     "'BULK_ABSORB' (1 << 1). Zero, several bits or an unused bit give '?'.\n"
     "A photon's history has several bits; name each one:\n\n"
     "    [prism.history_flag_name(1 << i) for i in range(32) if history >> i & 1]"},
    {"set_log_handler", py_set_log_handler, METH_O,
     "set_log_handler(callable(level, message) or None): where the C log goes."},
    {"make_error", py_make_error, METH_VARARGS,
     "make_error(code, message) -> the prism.Error subclass instance for a prism_result."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "prism._prism",
    .m_doc = "Prism's C API for Python (the prism package wraps it; use that).",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC PyInit__prism(void)
{
    PyTypeObject *types[] = {&pyprism_view_type,         &pyprism_scene_type,
                             &pyprism_context_type,      &pyprism_geometry_type,
                             &pyprism_device_array_type, &pyprism_foreign_type};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (PyType_Ready(types[i]) < 0)
            return NULL;
    PyObject *m = PyModule_Create(&module_def);
    if (m == NULL)
        return NULL;
    if (add_errors(m) < 0 || add_constants(m) < 0)
        goto fail;
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        const char *dot = strrchr(types[i]->tp_name, '.');
        if (PyModule_AddObjectRef(m, dot ? dot + 1 : types[i]->tp_name, (PyObject *)types[i]) < 0)
            goto fail;
    }
    return m;
fail:
    Py_DECREF(m);
    return NULL;
}
