"""prism.load and prism.Scene: a COLLADA file as world triangles in metres,
with its arrays as NumPy views of the C memory."""
import collections
import os

import numpy as np

from . import _prism
from ._progress import progress_callback

Material = collections.namedtuple("Material", "name properties")
Material.__doc__ = """A material: its name and its property tables,
{name: (wavelength_nm, value)} as float32 arrays viewing the scene."""

Surface = collections.namedtuple("Surface", "name kind model finish type value properties")
Surface.__doc__ = """A G4DAE optical surface: kind 'skin' or 'border', Geant4's model,
finish and type values, sigma_alpha or polish, and its property tables."""

Solids = collections.namedtuple(
    "Solids", "name path copy_number parent material first_triangle triangle_count")
Solids.__doc__ = """The placed volumes: names and paths as lists of str; the
numeric fields as uint32 (copy_number int32) arrays viewing the C structs."""


def load(path, unit=None, progress=None, max_triangles=None):
    """Load a COLLADA (.dae) file: ``prism_scene_load``.

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    unit : None, "auto", "m", "cm", "mm" or float
        The length unit of the file's numbers. None or "auto": the file's
        ``<unit>``; without one, millimetres for a Geant4 export (G4DAE
        extras, <meta>, pointer-suffixed ids, __dd__ paths), else metres.
        A name (``prism_length_unit_parse``) or a number of metres
        overrides the file. ``Scene.unit_rule`` says which rule decided.
    progress : None, bool or callable(done, total)
        None: a tqdm bar when tqdm is installed and stderr is a terminal.
        True: a tqdm bar whenever tqdm is installed. False: none. A
        callable gets bytes read so far and the file size; returning False
        cancels (prism.IOError). Ctrl-C cancels too.
    max_triangles : int, optional
        Refuse (prism.LimitError) files that place more world triangles.

    Returns
    -------
    Scene
        Its arrays (positions, indices, per-triangle codes, bbox) view the
        C memory; the scene lives as long as any of them.

    Raises
    ------
    prism.IOError
        The file cannot be read (the message names it and why).
    prism.ParseError
        Malformed COLLADA: the message gives file:line:column and element.
    prism.InvalidArgumentError
        A bad ``unit``.
    """
    fspath = os.fspath(path)
    callback, done = progress_callback(progress, "load %s" % os.path.basename(str(fspath)), "B")
    try:
        c = _prism.load(fspath, unit=unit, progress=callback, max_triangles=max_triangles)
    finally:
        done()
    return Scene(c, fspath)


class Scene:
    """A loaded scene (``prism_scene``): world-space triangles in metres.

    The array properties are read-only NumPy arrays viewing the C memory
    (no copy); each keeps the scene alive. Per triangle: ``indices`` (T, 3)
    uint32 vertex indices, ``triangle_solid``, ``triangle_material_inner``,
    ``triangle_material_outer``, ``triangle_surface`` (T,) uint32
    (prism.NONE = none). Per vertex: ``positions`` (V, 3) float32.
    ``bbox`` (2, 3) float32: min row, max row.
    """

    def __init__(self, c, path=None):
        self._c = c
        self.path = path
        info = c.info()
        self.vertices_count = info["vertices_count"]
        self.triangles_count = info["triangles_count"]
        #: metres per unit of the file's numbers (the unit the loader used)
        self.unit_meter = info["unit_meter"]
        #: which rule decided it, in words (prism_scene.unit_rule)
        self.unit_rule = info["unit_rule"]
        #: "user", "file", "geant4" or "default"
        self.unit_source = info["unit_source"]
        #: the Geant4 exporter's marks found (prism.GEANT4_* bits)
        self.geant4_marks = info["geant4_marks"]
        #: what the loader forgave, and how often (float_array counts, XY positions)
        self.quirks = info["quirks"]
        #: the file's up axis: "X", "Y" or "Z"
        self.up_axis = info["up_axis"]
        #: whether the file carried G4DAE extras
        self.g4dae = info["g4dae"]
        #: load statistics (bytes, seconds, geometries, nodes, instances, ...)
        self.stats = info["stats"]
        #: what the loader left out, and how many
        self.skipped = info["skipped"]
        self._arrays = {}

    def _array(self, name):
        a = self._arrays.get(name)
        if a is None:
            a = self._arrays[name] = np.asarray(self._c.view(name))
        return a

    @property
    def positions(self):
        """(V, 3) float32 vertex positions in metres (a view)."""
        return self._array("positions")

    @property
    def indices(self):
        """(T, 3) uint32 vertex indices, counter-clockwise seen from outside (a view)."""
        return self._array("indices")

    @property
    def triangle_solid(self):
        """(T,) uint32 solid of each triangle (a view)."""
        return self._array("triangle_solid")

    @property
    def triangle_material_inner(self):
        """(T,) uint32 material inside each triangle's solid (a view)."""
        return self._array("triangle_material_inner")

    @property
    def triangle_material_outer(self):
        """(T,) uint32 material of the enclosing solid, or prism.NONE (a view)."""
        return self._array("triangle_material_outer")

    @property
    def triangle_surface(self):
        """(T,) uint32 optical surface of each triangle, or prism.NONE (a view)."""
        return self._array("triangle_surface")

    @property
    def bbox(self):
        """(2, 3) float32: bbox_min and bbox_max in metres (a view)."""
        return self._array("bbox")

    @property
    def materials(self):
        """[Material(name, {property: (wavelength_nm, value)})]; the tables view the scene."""
        return [Material(name, {k: (np.asarray(w), np.asarray(v)) for k, (w, v) in p.items()})
                for name, p in self._c.materials()]

    @property
    def surfaces(self):
        """[Surface]: the optical surfaces, their tables viewing the scene."""
        out = []
        for s in self._c.surfaces():
            props = {k: (np.asarray(w), np.asarray(v)) for k, (w, v) in s["properties"].items()}
            out.append(Surface(s["name"], s["kind"], s["model"], s["finish"], s["type"],
                               s["value"], props))
        return out

    @property
    def solids(self):
        """Solids(name, path, copy_number, parent, material, first_triangle, triangle_count)."""
        names, paths = self._c.solid_names()
        return Solids(names, paths, self._array("solid_copy_number"),
                      self._array("solid_parent"), self._array("solid_material"),
                      self._array("solid_first_triangle"), self._array("solid_triangle_count"))

    def find_material(self, name):
        """The index of the material named so, or None."""
        return self._c.find_material(name)

    def __repr__(self):
        return "<prism.Scene %r: %d triangles, %d vertices, unit %g m>" % (
            self.path, self.triangles_count, self.vertices_count, self.unit_meter)
