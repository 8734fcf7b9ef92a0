/* _prism.Geometry: an uploaded prism_geometry, its report, and the two
 * kernels: prism_propagate (host arrays in and out, or device memory out as
 * DeviceArrays) and prism_render (an RGBA8 image into a caller's buffer).
 * The GIL is released around both; the context's lock is held. */
#include "pyprism.h"

#include <string.h>

static void geometry_release(pyprism_child *k)
{
    prism_geometry_destroy(((pyprism_geometry *)k)->geometry);
    ((pyprism_geometry *)k)->geometry = NULL;
}

PyObject *pyprism_geometry_new(pyprism_context *c, prism_geometry *g)
{
    pyprism_geometry *self = PyObject_New(pyprism_geometry, &pyprism_geometry_type);
    if (self == NULL) {
        pyprism_context_lock(c);
        if (c->ctx != NULL)
            prism_geometry_destroy(g);
        pyprism_context_unlock(c);
        return NULL;
    }
    self->geometry = g;
    pyprism_child_attach(c, (pyprism_child *)self, "geometry", geometry_release);
    return (PyObject *)self;
}

static void geometry_dealloc(PyObject *self)
{
    pyprism_child_dealloc((pyprism_child *)self);
}

static PyObject *geometry_close(PyObject *self, PyObject *unused)
{
    pyprism_child_close((pyprism_child *)self);
    Py_RETURN_NONE;
}

static PyObject *geometry_closed(PyObject *self, void *unused)
{
    pyprism_child *k = (pyprism_child *)self;
    return PyBool_FromLong(k->closed || k->released || k->context->closed);
}

static PyObject *entry_dict(const prism_upload_entry *e)
{
    return Py_BuildValue("{s:s,s:n,s:n,s:n,s:d,s:d,s:O,s:s,s:O}", "name", e->name, "bytes",
                         (Py_ssize_t)e->bytes, "device_bytes", (Py_ssize_t)e->device_bytes,
                         "mapped_bytes", (Py_ssize_t)e->mapped_bytes, "seconds", e->seconds, "gbps",
                         e->gbps, "demoted", e->demoted ? Py_True : Py_False, "reason", e->reason,
                         "gl_shared", e->gl_shared ? Py_True : Py_False);
}

static PyObject *geometry_report(PyObject *self, PyObject *unused)
{
    if (pyprism_child_check((pyprism_child *)self) < 0)
        return NULL;
    const prism_upload_report *r = prism_geometry_report(((pyprism_geometry *)self)->geometry);
    PyObject *arrays = PyList_New((Py_ssize_t)r->array_count);
    for (size_t i = 0; arrays && i < r->array_count; i++) {
        PyObject *e = entry_dict(&r->arrays[i]);
        if (e == NULL)
            Py_CLEAR(arrays);
        else
            PyList_SET_ITEM(arrays, (Py_ssize_t)i, e);
    }
    const prism_bvh_build_report *b = &r->bvh;
    PyObject *phases = Py_BuildValue("(ddddd)", b->phase_seconds[0], b->phase_seconds[1],
                                     b->phase_seconds[2], b->phase_seconds[3], b->phase_seconds[4]);
    PyObject *bvh =
        phases
            ? Py_BuildValue(
                  "{s:s,s:s,s:d,s:O,s:I,s:O,s:O,s:n,s:O,s:{s:n,s:n,s:I,s:d,s:I,s:d,s:n,s:n,s:n}}",
                  "builder", prism_bvh_builder_name(b->builder), "why", b->why, "seconds",
                  b->seconds, "phase_seconds", phases, "iterations", b->iterations, "balanced",
                  b->balanced ? Py_True : Py_False, "hploc", b->hploc ? Py_True : Py_False,
                  "peak_device_bytes", (Py_ssize_t)b->peak_device_bytes, "nodes_moved",
                  b->nodes_moved ? Py_True : Py_False, "stats", "nodes", (Py_ssize_t)b->stats.nodes,
                  "leaves", (Py_ssize_t)b->stats.leaves, "max_depth", b->stats.max_depth,
                  "mean_leaf_triangles", b->stats.mean_leaf_triangles, "max_leaf_triangles",
                  b->stats.max_leaf_triangles, "sah_cost", b->stats.sah_cost, "node_bytes",
                  (Py_ssize_t)b->stats.node_bytes, "vertex_bytes",
                  (Py_ssize_t)b->stats.vertex_bytes, "triangle_bytes",
                  (Py_ssize_t)b->stats.triangle_bytes)
            : NULL;
    char text[4096];
    prism_geometry_report_format(r, text, sizeof text);
    PyObject *d = arrays && bvh
                      ? Py_BuildValue("{s:s,s:n,s:n,s:n,s:n,s:O,s:n,s:n,s:d,s:O,s:O,s:d,s:s}",
                                      "policy", prism_placement_policy_name(r->policy),
                                      "free_bytes", (Py_ssize_t)r->free_bytes, "total_bytes",
                                      (Py_ssize_t)r->total_bytes, "reserve", (Py_ssize_t)r->reserve,
                                      "device_budget", (Py_ssize_t)r->device_budget, "arrays",
                                      arrays, "device_bytes", (Py_ssize_t)r->device_bytes,
                                      "mapped_bytes", (Py_ssize_t)r->mapped_bytes, "seconds",
                                      r->seconds, "bvh", bvh, "gl_filled",
                                      r->gl_filled ? Py_True : Py_False, "gl_fill_seconds",
                                      r->gl_fill_seconds, "text", text)
                      : NULL;
    Py_XDECREF(arrays);
    Py_XDECREF(phases);
    Py_XDECREF(bvh);
    return d;
}

/* A C-contiguous buffer of exactly `bytes` bytes (writable if asked). */
static int exact_buffer(PyObject *o, Py_buffer *b, size_t bytes, bool writable, const char *what)
{
    if (PyObject_GetBuffer(o, b, PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0)) < 0) {
        PyErr_Clear();
        char msg[200];
        snprintf(msg, sizeof msg, "%s must be a C-contiguous%s buffer", what,
                 writable ? " writable" : "");
        pyprism_raise(PRISM_ERROR_INVALID_ARGUMENT, msg);
        return -1;
    }
    if ((size_t)b->len != bytes) {
        char msg[200];
        snprintf(msg, sizeof msg, "%s holds %zd bytes, %zu expected", what, b->len, bytes);
        PyBuffer_Release(b);
        pyprism_raise(PRISM_ERROR_INVALID_ARGUMENT, msg);
        return -1;
    }
    return 0;
}

static PyObject *stats_dict(const prism_propagate_stats *s)
{
    return Py_BuildValue("{s:d,s:K,s:I,s:I,s:n,s:n,s:d,s:d,s:d,s:I,s:d,s:d}", "seconds", s->seconds,
                         "steps", (unsigned long long)s->steps, "launches", s->launches,
                         "history_or", s->history_or, "detected", (Py_ssize_t)s->detected,
                         "step_limited", (Py_ssize_t)s->step_limited, "time_max",
                         (double)s->time_max, "generate_seconds", s->generate_seconds,
                         "tail_seconds", s->tail_seconds, "tail_launches", s->tail_launches,
                         "tally_seconds", s->tally_seconds, "hits_seconds", s->hits_seconds);
}

typedef struct propagate_args {
    prism_photon_source source;
    prism_propagate_desc desc;
    PyObject *photons, *out_photons, *out_records, *gensteps;
    unsigned long long photons_device;
    int on_device;
    int generate_only; /* prism_photons_generate: the starting photons only */
} propagate_args;

static int parse_propagate(PyObject *args, PyObject *kwargs, propagate_args *a)
{
    static char *keywords[] = {"kind",
                               "count",
                               "position",
                               "direction",
                               "radius",
                               "divergence",
                               "wavelength",
                               "wavelength_max",
                               "time",
                               "photons",
                               "photons_device",
                               "seed",
                               "max_steps",
                               "record_steps",
                               "steps_per_launch",
                               "out_photons",
                               "out_records",
                               "on_device",
                               "math",
                               "first_photon",
                               "gensteps",
                               "generate_only",
                               NULL};
    memset(a, 0, sizeof *a);
    a->photons = a->out_photons = a->out_records = a->gensteps = Py_None;
    int kind = 0, math = 0;
    Py_ssize_t count = 0;
    prism_photon_source *s = &a->source;
    if (!PyArg_ParseTupleAndKeywords(
            args, kwargs, "in|(fff)(fff)fffffOKKIIIOOpiKOp:propagate", keywords, &kind, &count,
            &s->position[0], &s->position[1], &s->position[2], &s->direction[0], &s->direction[1],
            &s->direction[2], &s->radius, &s->divergence, &s->wavelength_nm, &s->wavelength_max_nm,
            &s->time, &a->photons, &a->photons_device, &a->desc.seed, &a->desc.max_steps,
            &a->desc.record_steps, &a->desc.steps_per_launch, &a->out_photons, &a->out_records,
            &a->on_device, &math, &a->desc.first_photon, &a->gensteps, &a->generate_only))
        return -1;
    a->desc.math = (prism_propagate_math)math; /* prism_propagate checks it */
    if (kind < PRISM_SOURCE_POINT || kind > PRISM_SOURCE_GENSTEPS || count < 0) {
        pyprism_raise(PRISM_ERROR_INVALID_ARGUMENT, "bad source kind or negative count");
        return -1;
    }
    s->kind = (prism_source_kind)kind;
    s->count = (size_t)count;
    return 0;
}

/* Device memory for an output, or NULL (count 0 lets the C call report). */
static prism_result device_output(pyprism_context *c, size_t bytes, const char *tag,
                                  prism_buffer **out)
{
    *out = NULL;
    if (bytes == 0)
        return PRISM_SUCCESS;
    return prism_buffer_create_device(c->ctx, bytes, tag, out);
}

static PyObject *geometry_propagate(PyObject *self, PyObject *args, PyObject *kwargs)
{
    pyprism_geometry *g = (pyprism_geometry *)self;
    pyprism_context *c = g->context;
    propagate_args a;
    if (parse_propagate(args, kwargs, &a) < 0 || pyprism_child_check((pyprism_child *)g) < 0)
        return NULL;
    size_t n = a.source.count, k = a.desc.record_steps;
    Py_buffer in = {0}, op = {0}, orec = {0}, gs = {0};
    PyObject *result = NULL;
    prism_buffer *dev_photons = NULL, *dev_records = NULL;
    bool have_in = false, have_op = false, have_orec = false, have_gs = false;
    if (a.source.kind == PRISM_SOURCE_GENSTEPS && a.gensteps != Py_None) {
        /* (N, 6, 4) float32, C order: 96 bytes a genstep */
        if (PyObject_GetBuffer(a.gensteps, &gs, PyBUF_C_CONTIGUOUS) < 0) {
            PyErr_Clear();
            pyprism_raise(PRISM_ERROR_INVALID_ARGUMENT, "gensteps must be a C-contiguous buffer");
            goto done;
        }
        have_gs = true;
        if (gs.len % (24 * sizeof(float)) != 0) {
            pyprism_raise(PRISM_ERROR_INVALID_ARGUMENT,
                          "gensteps hold a number of bytes not a multiple of 96 (6 x 4 float32)");
            goto done;
        }
        a.source.gensteps = gs.buf;
        a.source.genstep_count = (size_t)gs.len / (24 * sizeof(float));
    }
    if (a.source.kind == PRISM_SOURCE_PHOTONS && a.photons_device != 0) {
        /* device memory: the engine's copy of given photons (cudaMemcpyDefault, as
         * prism/propagate.h promises for the CUDA backend) reads it in place */
        a.source.photons = (const prism_photon *)(uintptr_t)a.photons_device;
    } else if (a.source.kind == PRISM_SOURCE_PHOTONS && a.photons != Py_None) {
        if (exact_buffer(a.photons, &in, n * sizeof(prism_photon), false, "photons") < 0)
            goto done;
        have_in = true;
        a.source.photons = in.buf;
    }
    if (!a.on_device && a.out_photons != Py_None) {
        if (exact_buffer(a.out_photons, &op, n * sizeof(prism_photon), true, "out_photons") < 0)
            goto done;
        have_op = true;
    }
    if (!a.on_device && a.out_records != Py_None) {
        if (exact_buffer(a.out_records, &orec, n * k * sizeof(prism_step_record), true,
                         "out_records") < 0)
            goto done;
        have_orec = true;
    }
    prism_propagate_outputs outputs;
    memset(&outputs, 0, sizeof outputs);
    prism_propagate_stats stats;
    memset(&stats, 0, sizeof stats);
    prism_result r = PRISM_SUCCESS;
    char message[1024] = "";
    if (pyprism_child_enter((pyprism_child *)g) < 0)
        goto done;
    Py_BEGIN_ALLOW_THREADS if (a.on_device)
    {
        r = device_output(c, n * sizeof(prism_photon), "python.photons", &dev_photons);
        if (r == PRISM_SUCCESS && k > 0)
            r = device_output(c, n * k * sizeof(prism_step_record), "python.records", &dev_records);
        outputs.photons.kind = dev_photons ? PRISM_TARGET_BUFFER : PRISM_TARGET_HOST;
        outputs.photons.buffer = dev_photons;
        outputs.records.kind = dev_records ? PRISM_TARGET_BUFFER : PRISM_TARGET_HOST;
        outputs.records.buffer = dev_records;
    }
    else
    {
        outputs.photons.host = have_op ? op.buf : NULL;
        outputs.records.host = have_orec ? orec.buf : NULL;
    }
    if (r == PRISM_SUCCESS && a.generate_only)
        r = prism_photons_generate(c->ctx, g->geometry, &a.source, &a.desc, &outputs.photons);
    else if (r == PRISM_SUCCESS)
        r = prism_propagate(c->ctx, g->geometry, &a.source, &a.desc, &outputs, &stats);
    if (r != PRISM_SUCCESS) {
        snprintf(message, sizeof message, "%s", prism_context_last_error(c->ctx));
        prism_buffer_release(dev_photons);
        prism_buffer_release(dev_records);
        dev_photons = dev_records = NULL;
    }
    Py_END_ALLOW_THREADS pyprism_context_unlock(c);
    if (r != PRISM_SUCCESS) {
        pyprism_raise(r, message);
        goto done;
    }
    PyObject *photons_obj = Py_None, *records_obj = Py_None;
    if (dev_photons != NULL) {
        Py_ssize_t shape[3] = {(Py_ssize_t)n, 4, 4};
        photons_obj = pyprism_device_array_new(c, dev_photons, 3, shape);
        dev_photons = NULL; /* taken, even on failure */
    }
    if (dev_records != NULL && photons_obj != NULL) {
        Py_ssize_t shape[3] = {(Py_ssize_t)n, (Py_ssize_t)k, 8};
        records_obj = pyprism_device_array_new(c, dev_records, 3, shape);
        dev_records = NULL;
    }
    PyObject *st = photons_obj && records_obj ? stats_dict(&stats) : NULL;
    if (st != NULL)
        result = Py_BuildValue("(OOO)", photons_obj, records_obj, st);
    if (photons_obj != Py_None)
        Py_XDECREF(photons_obj);
    if (records_obj != Py_None)
        Py_XDECREF(records_obj);
    Py_XDECREF(st);
done:
    if (dev_photons != NULL || dev_records != NULL) {
        pyprism_context_lock(c);
        if (c->ctx != NULL) { /* else they went with the context */
            prism_buffer_release(dev_photons);
            prism_buffer_release(dev_records);
        }
        pyprism_context_unlock(c);
    }
    if (have_in)
        PyBuffer_Release(&in);
    if (have_op)
        PyBuffer_Release(&op);
    if (have_orec)
        PyBuffer_Release(&orec);
    if (have_gs)
        PyBuffer_Release(&gs);
    return result;
}

static PyObject *geometry_render(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {
        "out",     "width",       "height",     "eye",          "look_at",          "up",
        "vfov",    "matrix",      "mode",       "background",   "material_colors",  "hidden_solids",
        "ambient", "xray_layers", "xray_alpha", "max_distance", "bottom_row_first", NULL};
    pyprism_geometry *g = (pyprism_geometry *)self;
    pyprism_context *c = g->context;
    PyObject *out, *matrix = Py_None, *colors = Py_None, *hidden = Py_None;
    prism_camera cam;
    prism_render_desc d;
    memset(&cam, 0, sizeof cam);
    memset(&d, 0, sizeof d);
    unsigned width = 0, height = 0;
    int mode = 0, bottom_first = 0;
    unsigned char bg[4] = {0, 0, 0, 0};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OII|(fff)(fff)(fff)fOi(bbbb)OOfIffp:render",
                                     keywords, &out, &width, &height, &cam.eye[0], &cam.eye[1],
                                     &cam.eye[2], &cam.look_at[0], &cam.look_at[1], &cam.look_at[2],
                                     &cam.up[0], &cam.up[1], &cam.up[2], &cam.vfov_degrees, &matrix,
                                     &mode, &bg[0], &bg[1], &bg[2], &bg[3], &colors, &hidden,
                                     &d.ambient, &d.xray_layers, &d.xray_alpha, &d.max_distance,
                                     &bottom_first))
        return NULL;
    if (pyprism_child_check((pyprism_child *)g) < 0)
        return NULL;
    if (mode != PRISM_RENDER_SHADED && mode != PRISM_RENDER_XRAY)
        return pyprism_raise(PRISM_ERROR_INVALID_ARGUMENT, "mode must be shaded or xray");
    d.width = width;
    d.height = height;
    d.mode = (prism_render_mode)mode;
    memcpy(d.background, bg, 4);
    d.bottom_row_first = bottom_first != 0;
    Py_buffer ob = {0}, mb = {0}, cb = {0}, hb = {0};
    bool have_m = false, have_c = false, have_h = false;
    PyObject *result = NULL;
    if (exact_buffer(out, &ob, (size_t)width * height * 4, true, "out") < 0)
        return NULL;
    if (matrix != Py_None) {
        if (exact_buffer(matrix, &mb, 16 * sizeof(float), false, "matrix (16 float32)") < 0)
            goto done;
        have_m = true;
        cam.use_matrix = true;
        memcpy(cam.matrix, mb.buf, sizeof cam.matrix);
    }
    if (colors != Py_None) {
        if (PyObject_GetBuffer(colors, &cb, PyBUF_C_CONTIGUOUS) < 0 || cb.len % 4 != 0) {
            if (!PyErr_Occurred() || PyErr_ExceptionMatches(PyExc_BufferError)) {
                PyErr_Clear();
                pyprism_raise(PRISM_ERROR_INVALID_ARGUMENT,
                              "material_colors must be (M, 4) uint8 RGBA");
            }
            if (cb.obj != NULL)
                PyBuffer_Release(&cb);
            goto done;
        }
        have_c = true;
        d.material_colors = (const uint8_t(*)[4])cb.buf;
        d.material_colors_count = (size_t)cb.len / 4;
    }
    if (hidden != Py_None) {
        if (PyObject_GetBuffer(hidden, &hb, PyBUF_C_CONTIGUOUS) < 0 || hb.len % 4 != 0) {
            PyErr_Clear();
            if (hb.obj != NULL)
                PyBuffer_Release(&hb);
            pyprism_raise(PRISM_ERROR_INVALID_ARGUMENT, "hidden_solids must be uint32 solid ids");
            goto done;
        }
        have_h = true;
        d.hidden_solids = hb.buf;
        d.hidden_solids_count = (size_t)hb.len / 4;
    }
    prism_target target;
    memset(&target, 0, sizeof target);
    target.kind = PRISM_TARGET_HOST;
    target.host = ob.buf;
    prism_render_stats stats;
    prism_result r;
    char message[1024] = "";
    if (pyprism_child_enter((pyprism_child *)g) < 0)
        goto done;
    Py_BEGIN_ALLOW_THREADS r = prism_render(c->ctx, g->geometry, &cam, &d, &target, &stats);
    if (r != PRISM_SUCCESS)
        snprintf(message, sizeof message, "%s", prism_context_last_error(c->ctx));
    Py_END_ALLOW_THREADS pyprism_context_unlock(c);
    if (r != PRISM_SUCCESS)
        pyprism_raise(r, message);
    else
        result = Py_BuildValue("{s:d,s:I,s:O}", "seconds", stats.seconds, "launches",
                               stats.launches, "interop", stats.interop ? Py_True : Py_False);
done:
    PyBuffer_Release(&ob);
    if (have_m)
        PyBuffer_Release(&mb);
    if (have_c)
        PyBuffer_Release(&cb);
    if (have_h)
        PyBuffer_Release(&hb);
    return result;
}

static PyObject *geometry_batch_limit(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"kind", "record_steps", NULL};
    pyprism_geometry *g = (pyprism_geometry *)self;
    pyprism_context *c = g->context;
    int kind = 0;
    prism_propagate_desc desc;
    memset(&desc, 0, sizeof desc);
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|iI:batch_limit", keywords, &kind,
                                     &desc.record_steps) ||
        pyprism_child_enter((pyprism_child *)g) < 0)
        return NULL;
    size_t count = 0;
    char message[1024] = "";
    prism_result r = prism_propagate_batch_limit(c->ctx, g->geometry, (prism_source_kind)kind,
                                                 &desc, &count);
    if (r != PRISM_SUCCESS)
        snprintf(message, sizeof message, "%s", prism_context_last_error(c->ctx));
    pyprism_context_unlock(c);
    if (r != PRISM_SUCCESS)
        return pyprism_raise(r, message);
    return PyLong_FromSize_t(count);
}

/* prism_gensteps_muon: (bytes of the (N, 6, 4) float32 gensteps, dict of
 * what they hold). */
static PyObject *geometry_gensteps_muon(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"position",       "direction", "energy",
                               "seed",           "max_step",  "wavelength_min",
                               "wavelength_max", "dedx",      "max_length",
                               "time",           NULL};
    pyprism_geometry *g = (pyprism_geometry *)self;
    pyprism_context *c = g->context;
    prism_muon_desc d;
    memset(&d, 0, sizeof d);
    unsigned long long seed = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "(fff)(fff)d|Kffffff:gensteps_muon", keywords,
                                     &d.position[0], &d.position[1], &d.position[2],
                                     &d.direction[0], &d.direction[1], &d.direction[2],
                                     &d.energy_gev, &seed, &d.max_step, &d.wavelength_min_nm,
                                     &d.wavelength_max_nm, &d.dedx_mev_per_cm, &d.max_length,
                                     &d.time) ||
        pyprism_child_enter((pyprism_child *)g) < 0)
        return NULL;
    d.seed = seed;
    prism_gensteps out;
    char message[1024] = "";
    prism_result r;
    Py_BEGIN_ALLOW_THREADS r = prism_gensteps_muon(g->geometry, &d, &out);
    if (r != PRISM_SUCCESS)
        snprintf(message, sizeof message, "%s", prism_context_last_error(c->ctx));
    Py_END_ALLOW_THREADS pyprism_context_unlock(c);
    if (r != PRISM_SUCCESS)
        return pyprism_raise(r, message);
    PyObject *bytes = PyBytes_FromStringAndSize((const char *)out.data,
                                                (Py_ssize_t)(out.count * 24 * sizeof(float)));
    PyObject *info = Py_BuildValue("{s:n,s:K,s:K,s:K,s:n,s:d}", "count", (Py_ssize_t)out.count,
                                   "photons", (unsigned long long)out.photons, "cerenkov_photons",
                                   (unsigned long long)out.cerenkov_photons,
                                   "scintillation_photons",
                                   (unsigned long long)out.scintillation_photons, "segments",
                                   (Py_ssize_t)out.segments, "length", out.length);
    prism_gensteps_free(&out);
    PyObject *result = bytes && info ? Py_BuildValue("(OO)", bytes, info) : NULL;
    Py_XDECREF(bytes);
    Py_XDECREF(info);
    return result;
}

static PyObject *geometry_vertices_shared(PyObject *self, void *unused)
{
    if (pyprism_child_check((pyprism_child *)self) < 0)
        return NULL;
    return PyBool_FromLong(prism_geometry_vertices_shared(((pyprism_geometry *)self)->geometry));
}

static PyObject *geometry_context(PyObject *self, void *unused)
{
    return Py_NewRef((PyObject *)((pyprism_geometry *)self)->context);
}

static PyGetSetDef geometry_getset[] = {
    {"vertices_shared", geometry_vertices_shared, NULL, "prism_geometry_vertices_shared.", NULL},
    {"context", geometry_context, NULL, "The _prism.Context it belongs to.", NULL},
    {"closed", geometry_closed, NULL, "True once it, or its context, was closed.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef geometry_methods[] = {
    {"close", geometry_close, METH_NOARGS,
     "close()\n--\n\nRelease the geometry's memory now (prism_geometry_destroy); later use "
     "raises. Closing twice is fine."},
    {"report", geometry_report, METH_NOARGS, "report() -> dict (prism_upload_report)"},
    {"propagate", (PyCFunction)(void (*)(void))geometry_propagate, METH_VARARGS | METH_KEYWORDS,
     "propagate(kind, count, ...) -> (device photons or None, device records or None, stats)"},
    {"render", (PyCFunction)(void (*)(void))geometry_render, METH_VARARGS | METH_KEYWORDS,
     "render(out, width, height, ...) -> stats"},
    {"batch_limit", (PyCFunction)(void (*)(void))geometry_batch_limit, METH_VARARGS | METH_KEYWORDS,
     "batch_limit(kind=0, record_steps=0) -> photons one propagate call can take"},
    {"gensteps_muon", (PyCFunction)(void (*)(void))geometry_gensteps_muon,
     METH_VARARGS | METH_KEYWORDS,
     "gensteps_muon(position, direction, energy, ...) -> (bytes of (N, 6, 4) float32, dict)"},
    {NULL, NULL, 0, NULL},
};

PyTypeObject pyprism_geometry_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "prism._prism.Geometry",
    .tp_basicsize = sizeof(pyprism_geometry),
    .tp_dealloc = geometry_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "An uploaded prism_geometry (see prism.Geometry).",
    .tp_methods = geometry_methods,
    .tp_getset = geometry_getset,
};
