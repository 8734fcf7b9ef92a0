/* _prism.Context: a prism_context, a lock that keeps it to one thread at a
 * time while the GIL is released around long calls, the ledger as a dict,
 * and the upload that makes geometries. */
#include "pyprism.h"

#include <string.h>

prism_context *pyprism_context_get(pyprism_context *c)
{
    if (c->closed || c->ctx == NULL) {
        pyprism_raise(PRISM_ERROR_INVALID_ARGUMENT, "the context is closed");
        return NULL;
    }
    return c->ctx;
}

void pyprism_context_lock(pyprism_context *c)
{
    if (!PyThread_acquire_lock(c->lock, NOWAIT_LOCK)) {
        Py_BEGIN_ALLOW_THREADS PyThread_acquire_lock(c->lock, WAIT_LOCK);
        Py_END_ALLOW_THREADS
    }
}

void pyprism_context_unlock(pyprism_context *c)
{
    PyThread_release_lock(c->lock);
}

/* Check, lock, check again (a close may have come while waiting): 0 with
 * the lock held, or -1 unlocked with an exception. */
static int context_enter(pyprism_context *c)
{
    if (pyprism_context_get(c) == NULL)
        return -1;
    pyprism_context_lock(c);
    if (pyprism_context_get(c) == NULL) {
        pyprism_context_unlock(c);
        return -1;
    }
    return 0;
}

/* prism_context_destroy, once; its result. */
static prism_result destroy_context(pyprism_context *c)
{
    prism_result r = PRISM_SUCCESS;
    c->sink.last_error[0] = 0;
    pyprism_context_lock(c);
    if (c->ctx != NULL)
        r = prism_context_destroy(c->ctx);
    c->ctx = NULL;
    pyprism_context_unlock(c);
    return r;
}

/* ---- Children ---------------------------------------------------------- */

static void unlink_child(pyprism_child *k)
{
    if (k->prev != NULL)
        k->prev->next = k->next;
    else if (k->context->children == k)
        k->context->children = k->next;
    if (k->next != NULL)
        k->next->prev = k->prev;
    k->prev = k->next = NULL;
}

/* Free the child's C object (the lock held) and unlink it. */
static void free_child(pyprism_child *k)
{
    k->release(k);
    k->released = true;
    unlink_child(k);
}

/* Release the child now, whatever its exports; the last child of a closed
 * context destroys the context (the C library logs what it finds alive). */
static void release_child(pyprism_child *k)
{
    pyprism_context *c = k->context;
    if (k->released)
        return;
    pyprism_context_lock(c);
    if (!k->released) /* another thread may have, while we waited */
        free_child(k);
    pyprism_context_unlock(c);
    if (c->closed && c->children == NULL && c->ctx != NULL)
        (void)destroy_context(c);
}

void pyprism_child_attach(pyprism_context *c, pyprism_child *k, const char *kind,
                          void (*release)(pyprism_child *))
{
    k->context = (pyprism_context *)Py_NewRef((PyObject *)c);
    k->prev = k->next = NULL;
    k->release = release;
    k->kind = kind;
    k->exports = 0;
    k->closed = c->closed;
    /* a context destroyed meanwhile (another thread closed it between the
     * C call and here) freed the child's memory with it */
    k->released = c->ctx == NULL;
    if (k->released)
        return;
    k->next = c->children;
    if (k->next != NULL)
        k->next->prev = k;
    c->children = k;
    if (k->closed)
        release_child(k);
}

void pyprism_child_close(pyprism_child *k)
{
    k->closed = true;
    if (k->exports == 0)
        release_child(k);
}

void pyprism_child_unexport(pyprism_child *k)
{
    if (--k->exports == 0 && k->closed)
        release_child(k);
}

void pyprism_child_dealloc(pyprism_child *k)
{
    if (k->context != NULL) {
        release_child(k); /* what exported its memory held a reference: none is left */
        Py_CLEAR(k->context);
    }
    PyObject_Free(k);
}

int pyprism_child_check(pyprism_child *k)
{
    if (!k->closed && !k->released && !k->context->closed)
        return 0;
    char msg[160];
    if (k->context->closed)
        snprintf(msg, sizeof msg, "this %s was released when its context was closed", k->kind);
    else
        snprintf(msg, sizeof msg, "this %s is closed (its memory was released)", k->kind);
    pyprism_raise(PRISM_ERROR_INVALID_ARGUMENT, msg);
    return -1;
}

int pyprism_child_enter(pyprism_child *k)
{
    if (pyprism_child_check(k) < 0)
        return -1;
    pyprism_context_lock(k->context);
    if (pyprism_child_check(k) < 0) {
        pyprism_context_unlock(k->context);
        return -1;
    }
    return 0;
}

/* ---- The context ------------------------------------------------------- */

PyObject *pyprism_context_raise(pyprism_context *c, prism_result r)
{
    const char *m = c->ctx != NULL ? prism_context_last_error(c->ctx) : "";
    return pyprism_raise(r, m && m[0] ? m : c->sink.last_error);
}

static int context_init(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"backend", "device", "host_threads", "log_level", NULL};
    pyprism_context *c = (pyprism_context *)self;
    int backend = PRISM_BACKEND_AUTO, host_threads = 0, log_level = PRISM_LOG_DEFAULT;
    const char *device = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|izii:Context", keywords, &backend, &device,
                                     &host_threads, &log_level))
        return -1;
    if (c->ctx != NULL || c->closed) {
        pyprism_raise(PRISM_ERROR_INVALID_ARGUMENT, "the context is already created");
        return -1;
    }
    if (backend < PRISM_BACKEND_AUTO || backend > PRISM_BACKEND_HOST || host_threads < 0 ||
        log_level < PRISM_LOG_DEFAULT || log_level > PRISM_LOG_ERROR) {
        pyprism_raise(PRISM_ERROR_INVALID_ARGUMENT, "bad backend, host_threads or log_level");
        return -1;
    }
    if (c->lock == NULL && (c->lock = PyThread_allocate_lock()) == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    prism_context_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.backend = (prism_backend)backend;
    desc.device = device;
    desc.host_threads = host_threads;
    desc.log = pyprism_log;
    desc.log_user = &c->sink;
    desc.log_level = (prism_log_level)log_level;
    c->sink.last_error[0] = 0;
    prism_result r;
    prism_context *ctx = NULL;
    Py_BEGIN_ALLOW_THREADS r = prism_context_create(&desc, &ctx);
    Py_END_ALLOW_THREADS if (r != PRISM_SUCCESS)
    {
        pyprism_raise(r, c->sink.last_error);
        return -1;
    }
    c->ctx = ctx;
    c->cuda = prism_context_backend(ctx) == PRISM_BACKEND_CUDA;
    c->device_index = prism_context_device(ctx)->index;
    return 0;
}

static void context_dealloc(PyObject *self)
{
    pyprism_context *c = (pyprism_context *)self;
    if (c->ctx != NULL)
        prism_context_destroy(c->ctx); /* children hold references: none is alive */
    if (c->lock != NULL)
        PyThread_free_lock(c->lock);
    Py_TYPE(self)->tp_free(self);
}

/* Release every child (those whose memory another library still reads
 * when it lets go), then destroy the context (when the last child goes,
 * if some are still read). */
static PyObject *context_close(PyObject *self, PyObject *unused)
{
    pyprism_context *c = (pyprism_context *)self;
    if (c->closed || c->ctx == NULL)
        Py_RETURN_NONE;
    c->closed = true; /* from now on no call starts; one in flight ends first */
    pyprism_context_lock(c);
    for (pyprism_child *k = c->children, *next; k != NULL; k = next) {
        next = k->next;
        k->closed = true;
        if (k->exports == 0)
            free_child(k);
    }
    pyprism_context_unlock(c);
    if (c->children != NULL)
        Py_RETURN_NONE;
    prism_result r = destroy_context(c);
    if (r != PRISM_SUCCESS)
        return pyprism_raise(r, c->sink.last_error);
    Py_RETURN_NONE;
}

static PyObject *context_backend(PyObject *self, void *unused)
{
    prism_context *ctx = pyprism_context_get((pyprism_context *)self);
    return ctx ? PyUnicode_FromString(prism_backend_name(prism_context_backend(ctx))) : NULL;
}

static PyObject *context_device(PyObject *self, void *unused)
{
    prism_context *ctx = pyprism_context_get((pyprism_context *)self);
    return ctx ? pyprism_device_info_dict(prism_context_device(ctx)) : NULL;
}

static PyObject *context_closed(PyObject *self, void *unused)
{
    return PyBool_FromLong(((pyprism_context *)self)->closed);
}

static PyObject *context_memory_report(PyObject *self, PyObject *unused)
{
    pyprism_context *c = (pyprism_context *)self;
    prism_memory_report rep;
    if (context_enter(c) < 0)
        return NULL;
    prism_result r = prism_memory_report_get(c->ctx, &rep);
    if (r != PRISM_SUCCESS) {
        pyprism_context_raise(c, r);
        pyprism_context_unlock(c);
        return NULL;
    }
    pyprism_context_unlock(c);
    PyObject *kinds = PyDict_New(), *tags = PyList_New(0);
    for (int k = 0; kinds && k < PRISM_MEMORY_KIND_COUNT; k++) {
        PyObject *v = Py_BuildValue("{s:n,s:n}", "bytes", (Py_ssize_t)rep.by_kind[k].bytes, "count",
                                    (Py_ssize_t)rep.by_kind[k].count);
        if (v == NULL ||
            PyDict_SetItemString(kinds, prism_memory_kind_name((prism_memory_kind)k), v) < 0)
            Py_CLEAR(kinds);
        Py_XDECREF(v);
    }
    for (size_t i = 0; tags && i < rep.tags_count; i++) {
        const prism_memory_tag_usage *t = &rep.tags[i];
        PyObject *v = Py_BuildValue("{s:s,s:s,s:n,s:n}", "tag", t->tag, "kind",
                                    prism_memory_kind_name(t->kind), "bytes", (Py_ssize_t)t->bytes,
                                    "count", (Py_ssize_t)t->count);
        if (v == NULL || PyList_Append(tags, v) < 0)
            Py_CLEAR(tags);
        Py_XDECREF(v);
    }
    PyObject *d = kinds && tags
                      ? Py_BuildValue("{s:n,s:n,s:O,s:O,s:O,s:n,s:n,s:n,s:n}", "bytes",
                                      (Py_ssize_t)rep.total.bytes, "count",
                                      (Py_ssize_t)rep.total.count, "by_kind", kinds, "tags", tags,
                                      "tags_truncated", rep.tags_truncated ? Py_True : Py_False,
                                      "pool_held_bytes", (Py_ssize_t)rep.pool_held_bytes,
                                      "peak_bytes", (Py_ssize_t)rep.peak_bytes, "device_free",
                                      (Py_ssize_t)rep.device_free, "device_total",
                                      (Py_ssize_t)rep.device_total)
                      : NULL;
    Py_XDECREF(kinds);
    Py_XDECREF(tags);
    return d;
}

static PyObject *context_trim(PyObject *self, PyObject *unused)
{
    pyprism_context *c = (pyprism_context *)self;
    if (context_enter(c) < 0)
        return NULL;
    prism_memory_trim(c->ctx);
    pyprism_context_unlock(c);
    Py_RETURN_NONE;
}

static int parse_builder(const char *name, prism_bvh_builder *out)
{
    static const char *names[] = {"auto", "host", "cuda"};
    for (int i = 0; i < 3; i++)
        if (strcmp(name, names[i]) == 0) {
            *out = (prism_bvh_builder)i;
            return 0;
        }
    char msg[160];
    snprintf(msg, sizeof msg, "builder '%.60s' is not one of auto, host, cuda", name);
    pyprism_raise(PRISM_ERROR_INVALID_ARGUMENT, msg);
    return -1;
}

static PyObject *context_upload(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"scene",         "policy",      "reserve",          "budget",
                               "builder",       "skip_optics", "host_free_memory", "progress",
                               "device_budget", NULL};
    pyprism_context *c = (pyprism_context *)self;
    PyObject *scene, *reserve = Py_None, *budget = Py_None, *host_free = Py_None;
    PyObject *progress = Py_None, *device_budget = Py_None;
    const char *policy = "auto", *builder = "auto";
    int skip_optics = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!|sOOspOOO:upload", keywords,
                                     &pyprism_scene_type, &scene, &policy, &reserve, &budget,
                                     &builder, &skip_optics, &host_free, &progress, &device_budget))
        return NULL;
    if (pyprism_context_get(c) == NULL)
        return NULL;
    prism_geometry_desc desc;
    memset(&desc, 0, sizeof desc);
    if (!prism_placement_policy_parse(policy, &desc.policy)) {
        char msg[160];
        snprintf(msg, sizeof msg, "policy '%.60s' is not one of auto, device, mapped, chroma",
                 policy);
        return pyprism_raise(PRISM_ERROR_INVALID_ARGUMENT, msg);
    }
    size_t reserve_bytes;
    if (parse_builder(builder, &desc.builder) < 0 ||
        pyprism_size_arg(reserve, "reserve", 0, &reserve_bytes) < 0 ||
        pyprism_size_arg(budget, "budget", 0, &desc.budget) < 0 ||
        pyprism_size_arg(device_budget, "device_budget", 0, &desc.device_budget) < 0 ||
        pyprism_size_arg(host_free, "host_free_memory", 0, &desc.host_free_memory) < 0)
        return NULL;
    /* Python's reserve=0 means none; the C zero means the default */
    desc.reserve = reserve == Py_None   ? 0
                   : reserve_bytes == 0 ? PRISM_PLACEMENT_NO_RESERVE
                                        : reserve_bytes;
    desc.skip_optics = skip_optics != 0;
    if (progress != Py_None && !PyCallable_Check(progress))
        return pyprism_raise(PRISM_ERROR_INVALID_ARGUMENT,
                             "progress must be callable(done, total)");
    pyprism_progress prog = {progress == Py_None ? NULL : progress, NULL};
    prism_bvh_desc bvh;
    memset(&bvh, 0, sizeof bvh);
    bvh.progress = pyprism_progress_call;
    bvh.progress_user = &prog;
    desc.bvh = &bvh;
    prism_geometry *g = NULL;
    prism_result r;
    char message[1024] = "";
    const prism_scene *s = ((pyprism_scene *)scene)->scene;
    if (context_enter(c) < 0)
        return NULL;
    Py_BEGIN_ALLOW_THREADS r = prism_geometry_upload(c->ctx, s, NULL, &desc, &g);
    Py_END_ALLOW_THREADS if (r != PRISM_SUCCESS)
        snprintf(message, sizeof message, "%s", prism_context_last_error(c->ctx));
    pyprism_context_unlock(c);
    if (pyprism_progress_finish(&prog) == NULL) {
        if (g != NULL && c->ctx != NULL) {
            pyprism_context_lock(c);
            if (c->ctx != NULL)
                prism_geometry_destroy(g);
            pyprism_context_unlock(c);
        }
        return NULL;
    }
    if (r != PRISM_SUCCESS)
        return pyprism_raise(r, message);
    return pyprism_geometry_new(c, g);
}

static PyGetSetDef context_getset[] = {
    {"backend", context_backend, NULL, "'cuda' or 'host'.", NULL},
    {"device", context_device, NULL, "The device's figures (prism_device_info) as a dict.", NULL},
    {"closed", context_closed, NULL,
     "True once close() released what was made from the context and destroyed it.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef context_methods[] = {
    {"close", context_close, METH_NOARGS,
     "close()\n--\n\nRelease the geometries and device arrays made from the context, then "
     "destroy it (see prism.Context.close)."},
    {"memory_report", context_memory_report, METH_NOARGS, "The ledger (prism_memory_report)."},
    {"trim", context_trim, METH_NOARGS, "prism_memory_trim: free the context's idle pools."},
    {"upload", (PyCFunction)(void (*)(void))context_upload, METH_VARARGS | METH_KEYWORDS,
     "upload(scene, policy, reserve, budget, builder, skip_optics, host_free_memory, progress, "
     "device_budget)"},
    {NULL, NULL, 0, NULL},
};

PyTypeObject pyprism_context_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "prism._prism.Context",
    .tp_basicsize = sizeof(pyprism_context),
    .tp_dealloc = context_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "A prism_context (see prism.Context).",
    .tp_methods = context_methods,
    .tp_getset = context_getset,
    .tp_init = context_init,
    .tp_new = PyType_GenericNew,
};
