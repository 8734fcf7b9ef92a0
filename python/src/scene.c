/* _prism.Scene: a loaded prism_scene. Its arrays leave as views of the C
 * memory (view.c), never copies; names and small tables as Python objects.
 * The scene is freed when the last reference (a view included) goes. */
#include "pyprism.h"

#include <string.h>

static void scene_dealloc(PyObject *self)
{
    pyprism_scene *s = (pyprism_scene *)self;
    prism_scene_free(s->scene);
    Py_TYPE(self)->tp_free(self);
}

static PyObject *scene_new_from(prism_scene *scene)
{
    pyprism_scene *s = PyObject_New(pyprism_scene, &pyprism_scene_type);
    if (s == NULL) {
        prism_scene_free(scene);
        return NULL;
    }
    s->scene = scene;
    return (PyObject *)s;
}

/* `unit`: None (the file decides), a name prism_length_unit_parse reads
 * ("auto", "m", "cm", "mm") or a number of metres. */
static int parse_unit(PyObject *unit, prism_load_desc *desc)
{
    if (unit == Py_None)
        return 0;
    if (PyUnicode_Check(unit)) {
        const char *text = PyUnicode_AsUTF8(unit);
        if (text != NULL && prism_length_unit_parse(text, &desc->length_unit) == PRISM_SUCCESS)
            return 0;
    } else if (PyNumber_Check(unit) && !PyBool_Check(unit)) {
        double m = PyFloat_AsDouble(unit);
        if (m > 0.0 && m < 1e30) {
            desc->unit_meter = m;
            return 0;
        }
    }
    PyErr_Clear();
    PyObject *r = PyObject_Repr(unit);
    char msg[200];
    snprintf(msg, sizeof msg,
             "unit %.80s is not one of auto, m, cm, mm or a positive number of "
             "metres",
             r != NULL ? PyUnicode_AsUTF8(r) : "?");
    Py_XDECREF(r);
    pyprism_raise(PRISM_ERROR_INVALID_ARGUMENT, msg);
    return -1;
}

PyObject *pyprism_load(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"path", "unit", "progress", "max_triangles", "max_depth", NULL};
    PyObject *path = NULL, *unit = Py_None, *progress = Py_None, *max_triangles = Py_None;
    unsigned max_depth = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O&|OOOI:load", keywords, PyUnicode_FSConverter,
                                     &path, &unit, &progress, &max_triangles, &max_depth))
        return NULL;
    PyObject *result = NULL;
    prism_load_desc desc;
    memset(&desc, 0, sizeof desc);
    if (pyprism_size_arg(max_triangles, "max_triangles", 0, &desc.max_triangles) < 0 ||
        parse_unit(unit, &desc) < 0)
        goto done;
    if (progress != Py_None && !PyCallable_Check(progress)) {
        pyprism_raise(PRISM_ERROR_INVALID_ARGUMENT, "progress must be callable(done, total)");
        goto done;
    }
    char error[1024] = "";
    pyprism_progress prog = {progress == Py_None ? NULL : progress, NULL};
    desc.max_depth = max_depth;
    desc.log = pyprism_log;
    desc.progress = pyprism_progress_call; /* also turns Ctrl-C into a cancel */
    desc.progress_user = &prog;
    desc.error = error;
    desc.error_size = sizeof error;
    prism_scene *scene = NULL;
    prism_result r;
    const char *file = PyBytes_AS_STRING(path);
    Py_BEGIN_ALLOW_THREADS r = prism_scene_load(file, &desc, &scene);
    Py_END_ALLOW_THREADS if (pyprism_progress_finish(&prog) == NULL)
    {
        prism_scene_free(scene);
        goto done;
    }
    if (r != PRISM_SUCCESS) {
        pyprism_raise(r, error);
        goto done;
    }
    result = scene_new_from(scene);
done:
    Py_DECREF(path);
    return result;
}

/* ---- Arrays ------------------------------------------------------------ */

static PyObject *u32_view(PyObject *owner, uint32_t *data, size_t count, size_t columns)
{
    Py_ssize_t shape[2] = {(Py_ssize_t)count, (Py_ssize_t)columns};
    return pyprism_view_new(owner, data, "I", 4, columns > 1 ? 2 : 1, shape, NULL, true);
}

static PyObject *scene_view(PyObject *self, PyObject *arg)
{
    prism_scene *s = ((pyprism_scene *)self)->scene;
    const char *name = PyUnicode_AsUTF8(arg);
    if (name == NULL)
        return NULL;
    if (strcmp(name, "positions") == 0) {
        Py_ssize_t shape[2] = {(Py_ssize_t)s->vertices_count, 3};
        return pyprism_view_new(self, s->positions, "f", 4, 2, shape, NULL, true);
    }
    if (strcmp(name, "indices") == 0)
        return u32_view(self, s->indices, s->triangles_count, 3);
    if (strcmp(name, "triangle_solid") == 0)
        return u32_view(self, s->triangle_solid, s->triangles_count, 1);
    if (strcmp(name, "triangle_material_inner") == 0)
        return u32_view(self, s->triangle_material_inner, s->triangles_count, 1);
    if (strcmp(name, "triangle_material_outer") == 0)
        return u32_view(self, s->triangle_material_outer, s->triangles_count, 1);
    if (strcmp(name, "triangle_surface") == 0)
        return u32_view(self, s->triangle_surface, s->triangles_count, 1);
    if (strcmp(name, "bbox") == 0) {
        /* bbox_min and bbox_max as rows 0 and 1, in place */
        Py_ssize_t shape[2] = {2, 3};
        Py_ssize_t strides[2] = {(Py_ssize_t)((char *)s->bbox_max - (char *)s->bbox_min), 4};
        return pyprism_view_new(self, s->bbox_min, "f", 4, 2, shape, strides, true);
    }
    /* the solids' numeric fields, strided over the prism_solid array */
    static const struct {
        const char *name;
        size_t offset;
        const char *format;
    } solid_fields[] = {
        {"solid_parent", offsetof(prism_solid, parent), "I"},
        {"solid_material", offsetof(prism_solid, material), "I"},
        {"solid_first_triangle", offsetof(prism_solid, first_triangle), "I"},
        {"solid_triangle_count", offsetof(prism_solid, triangle_count), "I"},
        {"solid_copy_number", offsetof(prism_solid, copy_number), "i"},
    };
    for (size_t i = 0; i < sizeof solid_fields / sizeof solid_fields[0]; i++) {
        if (strcmp(name, solid_fields[i].name) != 0)
            continue;
        Py_ssize_t shape[1] = {(Py_ssize_t)s->solids_count};
        Py_ssize_t strides[1] = {(Py_ssize_t)sizeof(prism_solid)};
        char *base = s->solids ? (char *)s->solids + solid_fields[i].offset : NULL;
        return pyprism_view_new(self, base, solid_fields[i].format, 4, 1, shape, strides, true);
    }
    char msg[160];
    snprintf(msg, sizeof msg, "the scene has no array named '%.100s'", name);
    return pyprism_raise(PRISM_ERROR_INVALID_ARGUMENT, msg);
}

/* {name: (wavelength_nm view, value view)} of a property list. */
static PyObject *properties_dict(PyObject *owner, const prism_property *p, size_t count)
{
    PyObject *d = PyDict_New();
    for (size_t i = 0; d != NULL && i < count; i++) {
        Py_ssize_t shape[1] = {(Py_ssize_t)p[i].count};
        PyObject *wl = pyprism_view_new(owner, p[i].wavelength_nm, "f", 4, 1, shape, NULL, true);
        PyObject *v = pyprism_view_new(owner, p[i].value, "f", 4, 1, shape, NULL, true);
        PyObject *pair = wl && v ? PyTuple_Pack(2, wl, v) : NULL;
        Py_XDECREF(wl);
        Py_XDECREF(v);
        if (pair == NULL || PyDict_SetItemString(d, p[i].name ? p[i].name : "", pair) < 0)
            Py_CLEAR(d);
        Py_XDECREF(pair);
    }
    return d;
}

static PyObject *scene_materials(PyObject *self, PyObject *unused)
{
    prism_scene *s = ((pyprism_scene *)self)->scene;
    PyObject *list = PyList_New((Py_ssize_t)s->materials_count);
    for (size_t i = 0; list != NULL && i < s->materials_count; i++) {
        const prism_material *m = &s->materials[i];
        PyObject *props = properties_dict(self, m->properties, m->properties_count);
        PyObject *item = props ? Py_BuildValue("(sO)", m->name ? m->name : "", props) : NULL;
        Py_XDECREF(props);
        if (item == NULL)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, (Py_ssize_t)i, item);
    }
    return list;
}

static PyObject *scene_surfaces(PyObject *self, PyObject *unused)
{
    prism_scene *s = ((pyprism_scene *)self)->scene;
    PyObject *list = PyList_New((Py_ssize_t)s->surfaces_count);
    for (size_t i = 0; list != NULL && i < s->surfaces_count; i++) {
        const prism_surface *f = &s->surfaces[i];
        PyObject *props = properties_dict(self, f->properties, f->properties_count);
        PyObject *item = props ? Py_BuildValue("{s:s,s:s,s:i,s:i,s:i,s:d,s:O}", "name",
                                               f->name ? f->name : "", "kind",
                                               f->kind == PRISM_SURFACE_SKIN ? "skin" : "border",
                                               "model", f->model, "finish", f->finish, "type",
                                               f->type, "value", f->value, "properties", props)
                               : NULL;
        Py_XDECREF(props);
        if (item == NULL)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, (Py_ssize_t)i, item);
    }
    return list;
}

/* A C string of the file as str (NULL as ""); bytes that are not UTF-8
 * are replaced rather than failing the whole list. */
static PyObject *text(const char *s)
{
    s = s != NULL ? s : "";
    return PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), "replace");
}

/* (names, paths) of the solids, as lists of str. */
static PyObject *scene_solid_names(PyObject *self, PyObject *unused)
{
    prism_scene *s = ((pyprism_scene *)self)->scene;
    PyObject *names = PyList_New((Py_ssize_t)s->solids_count);
    PyObject *paths = PyList_New((Py_ssize_t)s->solids_count);
    for (size_t i = 0; names && paths && i < s->solids_count; i++) {
        PyObject *n = text(s->solids[i].name), *p = text(s->solids[i].path);
        if (n == NULL || p == NULL) {
            Py_XDECREF(n);
            Py_XDECREF(p);
            Py_CLEAR(names);
            break;
        }
        PyList_SET_ITEM(names, (Py_ssize_t)i, n);
        PyList_SET_ITEM(paths, (Py_ssize_t)i, p);
    }
    PyObject *r = names && paths ? PyTuple_Pack(2, names, paths) : NULL;
    Py_XDECREF(names);
    Py_XDECREF(paths);
    return r;
}

static PyObject *scene_info(PyObject *self, PyObject *unused)
{
    prism_scene *s = ((pyprism_scene *)self)->scene;
    const prism_load_stats *st = &s->stats;
    const prism_skip_counts *k = &s->skipped;
    static const char *axes[] = {"Y", "X", "Z"};
    static const char *sources[] = {"user", "file", "geant4", "default"};
    return Py_BuildValue(
        "{s:n,s:n,s:n,s:n,s:n,s:d,s:s,s:s,s:s,s:I,s:O,"
        "s:{s:n,s:d,s:d,s:n,s:n,s:n,s:n,s:n},"
        "s:{s:n,s:n,s:n,s:n},s:{s:n,s:n}}",
        "vertices_count", (Py_ssize_t)s->vertices_count, "triangles_count",
        (Py_ssize_t)s->triangles_count, "solids_count", (Py_ssize_t)s->solids_count,
        "materials_count", (Py_ssize_t)s->materials_count, "surfaces_count",
        (Py_ssize_t)s->surfaces_count, "unit_meter", s->unit_meter, "unit_rule", s->unit_rule,
        "unit_source", (unsigned)s->unit_source < 4 ? sources[s->unit_source] : "?", "up_axis",
        (unsigned)s->up_axis < 3 ? axes[s->up_axis] : "?", "geant4_marks", s->geant4_marks, "g4dae",
        s->g4dae ? Py_True : Py_False, "stats", "bytes", (Py_ssize_t)st->bytes, "seconds",
        st->seconds, "triangles_per_second", st->triangles_per_second, "geometries",
        (Py_ssize_t)st->geometries, "nodes", (Py_ssize_t)st->nodes, "instances",
        (Py_ssize_t)st->instances, "unique_triangles", (Py_ssize_t)st->unique_triangles,
        "unique_vertices", (Py_ssize_t)st->unique_vertices, "skipped", "lines",
        (Py_ssize_t)k->lines, "degenerate_polygons", (Py_ssize_t)k->degenerate_polygons,
        "nonfinite_vertices", (Py_ssize_t)k->nonfinite_vertices, "unknown_elements",
        (Py_ssize_t)k->unknown_elements, "quirks", "float_array_counts",
        (Py_ssize_t)s->quirks.float_array_counts, "flat_positions",
        (Py_ssize_t)s->quirks.flat_positions);
}

static PyObject *scene_find_material(PyObject *self, PyObject *arg)
{
    const char *name = PyUnicode_AsUTF8(arg);
    if (name == NULL)
        return NULL;
    uint32_t i = prism_scene_find_material(((pyprism_scene *)self)->scene, name);
    if (i == PRISM_NONE)
        Py_RETURN_NONE;
    return PyLong_FromUnsignedLong(i);
}

static PyMethodDef scene_methods[] = {
    {"view", scene_view, METH_O, "view(name) -> View of one of the scene's arrays, in place."},
    {"materials", scene_materials, METH_NOARGS,
     "materials() -> [(name, {property: (wavelength_nm View, value View)})]"},
    {"surfaces", scene_surfaces, METH_NOARGS, "surfaces() -> [dict]"},
    {"solid_names", scene_solid_names, METH_NOARGS, "solid_names() -> (names, paths)"},
    {"info", scene_info, METH_NOARGS, "info() -> dict of counts, unit, stats, skips"},
    {"find_material", scene_find_material, METH_O,
     "find_material(name) -> index or None (prism_scene_find_material)"},
    {NULL, NULL, 0, NULL},
};

PyTypeObject pyprism_scene_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "prism._prism.Scene",
    .tp_basicsize = sizeof(pyprism_scene),
    .tp_dealloc = scene_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A loaded prism_scene (see prism.Scene).",
    .tp_methods = scene_methods,
};
