"""prism.Context, prism.Geometry and what goes in and out of the kernels:
Source, Camera, Result; prism.devices()."""
import numpy as np

from . import _prism
from ._log import logger
from ._dtypes import PHOTON_DTYPE, STEP_RECORD_DTYPE, _invalid, device_photons, host_photons
from ._progress import progress_callback
from ._scene import Scene

_BACKENDS = {"auto": 0, "cuda": 1, "host": 2}
_SOURCE_KINDS = {"point": 0, "beam": 1}
_RENDER_MODES = {"shaded": 0, "xray": 1}
_MATHS = {"exact": 1, "fast": 2}

#: The DeviceArray type: results left in the context's device memory.
#: ``close()`` (or ``with``) releases the memory now; closing its context
#: releases it too. Later use raises prism.InvalidArgumentError.
DeviceArray = _prism.DeviceArray


class DeviceList(list):
    """prism.devices(): one dict per device (the host first, then each CUDA
    device); str() gives the report Prism prints at start-up."""

    def __init__(self, items, report):
        super().__init__(items)
        self.report = report

    def __str__(self):
        return self.report.rstrip("\n")


def devices():
    """The devices Prism sees: ``prism_device_report`` and
    ``prism_device_query`` for the host and each CUDA device.

    ``print(prism.devices())`` prints the report; each item is a dict
    (backend, index, name, total_memory, compute_capability, ...).
    """
    report = _prism.device_report()
    items = [_prism.device_query(-1)]
    for i in range(_prism.cuda_device_count()):
        try:
            items.append(_prism.device_query(i))
        except _prism.Error:
            pass
    return DeviceList(items, report)


def _vec3(v, what):
    try:
        t = tuple(float(x) for x in v)
    except TypeError:
        raise _invalid("%s must be 3 numbers, not %r" % (what, v)) from None
    if len(t) != 3:
        raise _invalid("%s must be 3 numbers, got %d" % (what, len(t)))
    return t


_MAX_SOURCE_COUNT = 2**32 - 1


class Source:
    """Photons generated on the device (``prism_photon_source``).

    kind "point": ``count`` photons from ``position``, directions uniform on
    the sphere. kind "beam": from a disc of ``radius`` around ``position``
    perpendicular to ``direction``, within a cone of half-angle
    ``divergence`` (radians). Wavelength in nm (uniform between
    ``wavelength`` and ``wavelength_max`` when that is larger); time in ns;
    lengths in metres.
    """

    def __init__(self, kind="point", count=1, position=(0.0, 0.0, 0.0),
                 direction=(0.0, 0.0, 1.0), radius=0.0, divergence=0.0, wavelength=420.0,
                 wavelength_max=0.0, time=0.0):
        if kind not in _SOURCE_KINDS:
            raise _invalid("source kind %r is not one of point, beam" % (kind,))
        # one prism_propagate call: 1..2^32-1 photons (first_photon splits larger runs)
        if not isinstance(count, (int, np.integer)) or not 1 <= count <= _MAX_SOURCE_COUNT:
            raise _invalid("count must be a positive integer (1..2^32-1), not %r" % (count,))
        self.kind, self.count = kind, int(count)
        self.position = _vec3(position, "position")
        self.direction = _vec3(direction, "direction")
        self.radius, self.divergence = float(radius), float(divergence)
        self.wavelength, self.wavelength_max = float(wavelength), float(wavelength_max)
        self.time = float(time)

    @classmethod
    def point(cls, count, position=(0.0, 0.0, 0.0), **kwargs):
        """``count`` photons from ``position``, isotropic."""
        return cls("point", count, position, **kwargs)

    @classmethod
    def beam(cls, count, position, direction, radius=0.0, divergence=0.0, **kwargs):
        """A torch: ``count`` photons along ``direction``."""
        return cls("beam", count, position, direction, radius, divergence, **kwargs)

    def __repr__(self):
        return "prism.Source(%r, count=%d, position=%r)" % (self.kind, self.count, self.position)


class Camera:
    """A pinhole camera (``prism_camera``): ``eye`` looking at ``look_at``
    with ``up`` (need not be orthogonal), vertical field of view ``vfov``
    degrees; or ``Camera.from_matrix`` with a camera-to-world transform."""

    def __init__(self, eye, look_at, up=(0.0, 1.0, 0.0), vfov=45.0):
        self.eye = _vec3(eye, "eye")
        self.look_at = _vec3(look_at, "look_at")
        self.up = _vec3(up, "up")
        self.vfov = float(vfov)
        self.matrix = None

    @classmethod
    def from_matrix(cls, matrix, vfov=45.0):
        """A 4x4 camera-to-world matrix (the inverse of a view matrix) in
        NumPy's convention (translation in the last column): the camera
        looks along its -Z column with its +Y column up."""
        m = np.asarray(matrix, dtype=np.float32)
        if m.shape != (4, 4):
            raise _invalid("matrix must be 4x4, got shape %s" % (m.shape,))
        cam = cls((0, 0, 0), (0, 0, -1), vfov=vfov)
        cam.matrix = np.ascontiguousarray(m.T)  # column-major, as prism_camera stores it
        return cam

    def __repr__(self):
        return "prism.Camera(eye=%r, look_at=%r, up=%r, vfov=%g)" % (
            self.eye, self.look_at, self.up, self.vfov)


class Result:
    """What ``Geometry.propagate`` returns.

    photons : (N,) PHOTON_DTYPE array, or a DeviceArray (N, 4, 4) float32
        with ``on_device=True``: every photon's final state.
    records : (N, K) STEP_RECORD_DTYPE array, DeviceArray (N, K, 8), or None
        The step records when ``record_steps`` K > 0.
    stats : dict
        seconds, steps, launches, history_or, detected, step_limited,
        time_max (the latest final time, ns); where the seconds went:
        generate_seconds, tail_seconds (the launches while under 1/16 of
        the photons lived, tail_launches of them) and tally_seconds, parts
        of seconds, and hits_seconds (selecting the hits, after seconds).
    hits : the photons with SURFACE_DETECT, in photon order (a new array).
    """

    def __init__(self, photons, records, stats):
        self.photons, self.records, self.stats = photons, records, stats
        self._hits = None

    @property
    def hits(self):
        """The photons that ended detected (SURFACE_DETECT), in photon order:
        a new array, or with ``on_device=True`` a new DeviceArray filtered
        on the device (``prism_photons_select``)."""
        if self._hits is None:
            p = self.photons
            if isinstance(p, DeviceArray):
                self._hits = p.select(_prism.SURFACE_DETECT)
            else:
                self._hits = p[(p["history"] & _prism.SURFACE_DETECT) != 0]
        return self._hits

    def __repr__(self):
        n = self.photons.shape[0]
        return "<prism.Result: %d photons, %d detected>" % (n, self.stats["detected"])


class Geometry:
    """An uploaded geometry (``prism_geometry``): BVH, triangles and optics
    in the context's memory. Made by ``Context.upload``.

    ``close()``, or the end of a ``with`` block, releases its memory now
    (else it goes when the object is collected, or when its context is
    closed); a closed geometry raises prism.InvalidArgumentError when used.
    """

    def __init__(self, c, context, scene):
        self._c, self.context, self.scene = c, context, scene
        #: where each array went, who built the BVH and why (prism_upload_report)
        self.report = c.report()

    def close(self):
        """Release the geometry's memory (``prism_geometry_destroy``).
        Closing twice, or after its context was closed, is fine."""
        self._c.close()

    @property
    def closed(self):
        """True once the geometry, or its context, was closed."""
        return self._c.closed

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()  # never raises: an exception in flight goes on unchanged

    @property
    def vertices_shared(self):
        """True when the kernels read the vertices from a GL buffer."""
        return self._c.vertices_shared

    def propagate(self, photons_or_source=None, seed=0, max_steps=100, record_steps=0,
                  on_device=False, math="exact", first_photon=0, steps_per_launch=0,
                  gensteps=None, count=0, _generate_only=False):
        """Propagate photons through the geometry: ``prism_propagate``.

        Parameters
        ----------
        photons_or_source : Source, array or device array (or None with gensteps)
            A ``prism.Source``; or photons: a (N,) ``PHOTON_DTYPE`` array, a
            float32 (N, 4, 4) array (the .npy form), or on a CUDA context a
            CUDA array (``__cuda_array_interface__`` or DLPack) of float32
            (N, 4, 4), read in place. Only pos, time, dir, wavelength and
            pol are read. A float64 (N, 4, 4) host array is cast to
            float32 (a copy; each value rounded to the float32 that
            prism_photon holds, as the engine would compute with anyway);
            CUDA arrays must already be float32 (no copy is made on the
            device). Other dtypes raise InvalidArgumentError.
        seed : int
            Photon i draws the same random numbers for the same seed, on
            either backend and whatever the batch.
        first_photon : int
            This call's photons are the run's first_photon, first_photon+1,
            ...: a run split into calls (see ``batch_limit``) gives the
            photons of one call, byte for byte.
        max_steps : int
            Interactions before a photon stops with STEP_LIMIT.
        record_steps : int
            K step records per photon (0..1024) in ``Result.records``.
        on_device : bool
            Leave the results in the context's device memory as DeviceArray
            (DLPack / __cuda_array_interface__, no copy).
        math : "exact" or "fast"
            CUDA arithmetic: "exact" gives the host backend's photons bit
            for bit; "fast" uses the GPU's approximate functions and agrees
            with it statistically. The host backend always computes exactly.
        gensteps : numpy.ndarray, optional
            float32 (N, 6, 4) gensteps (prism/device/genstep.h: Opticks's
            layout in metres and ns; ``Geometry.gensteps_muon`` makes
            them): the Cerenkov and scintillation photons are made where
            they are propagated. Photon i of the run (first_photon + its
            place) is made by the genstep whose photon counts hold it.
        count : int
            With gensteps: this call's photons, 0 = all of theirs from
            first_photon on.

        Returns
        -------
        Result

        Raises
        ------
        prism.InvalidArgumentError
            Photons of the wrong dtype or shape, a zero count, a bad source,
            a closed geometry.

        The GIL is released during the call.
        """
        if math not in _MATHS:
            raise _invalid("math %r is not one of exact, fast" % (math,))
        kw = dict(seed=int(seed), max_steps=int(max_steps), record_steps=int(record_steps),
                  steps_per_launch=int(steps_per_launch), on_device=bool(on_device),
                  math=_MATHS[math], first_photon=int(first_photon))
        if not 0 <= kw["record_steps"] <= _prism.MAX_RECORD_STEPS:
            raise _invalid("record_steps %d is not in 0..%d"
                           % (kw["record_steps"], _prism.MAX_RECORD_STEPS))
        for name, least in (("max_steps", 1), ("seed", 0), ("first_photon", 0)):
            if kw[name] < least:
                raise _invalid("%s %d: it must be >= %d" % (name, kw[name], least))
        keep = None
        if gensteps is not None:
            if photons_or_source is not None:
                raise _invalid("gensteps and photons_or_source: one source of photons only")
            g = np.asarray(gensteps)
            if g.dtype != np.float32 or g.ndim != 3 or g.shape[1:] != (6, 4) or g.shape[0] == 0:
                raise _invalid("gensteps: expected float32 (N, 6, 4), N > 0; got %s %s"
                               % (g.dtype, g.shape))
            g = np.ascontiguousarray(g)
            total = int(g.view(np.uint32)[:, 0, 3].astype(np.uint64).sum())
            n = int(count) if count else total - kw["first_photon"]
            if n <= 0 or kw["first_photon"] + n > total:
                raise _invalid("gensteps hold %d photons: photons %d..%d asked for"
                               % (total, kw["first_photon"], kw["first_photon"] + max(n, 0)))
            keep = g
            kw.update(kind=3, count=n, gensteps=g)
        elif photons_or_source is None:
            raise _invalid("propagate: no photons, source or gensteps")
        elif isinstance(photons_or_source, Source):
            s = photons_or_source
            kw.update(kind=_SOURCE_KINDS[s.kind], count=s.count, position=s.position,
                      direction=s.direction, radius=s.radius, divergence=s.divergence,
                      wavelength=s.wavelength, wavelength_max=s.wavelength_max, time=s.time)
        else:
            dev = device_photons(photons_or_source)
            if dev is not None:
                if self.context.backend != "cuda":
                    raise _invalid("photons in CUDA memory given to a %s context"
                                   % self.context.backend)
                keep = dev.keep
                kw.update(kind=2, count=dev.count, photons_device=dev.ptr)
            else:
                host = host_photons(photons_or_source)
                kw.update(kind=2, count=host.shape[0], photons=host)
        n, k = kw["count"], kw["record_steps"]
        out_photons = out_records = None
        if not on_device:
            out_photons = np.empty(n, PHOTON_DTYPE)
            kw["out_photons"] = out_photons
            if k > 0:
                out_records = np.empty((n, k), STEP_RECORD_DTYPE)
                kw["out_records"] = out_records
        if _generate_only:
            kw["generate_only"] = True
        dev_photons, dev_records, stats = self._c.propagate(**kw)
        del keep
        if on_device:
            return Result(dev_photons, dev_records, stats)
        return Result(out_photons, out_records, stats)

    def generate(self, photons_or_source=None, seed=0, first_photon=0, gensteps=None, count=0,
                 on_device=False):
        """The photons a run starts with, not propagated: ``prism_photons_generate``.

        The same arguments as ``propagate`` name the source (a ``Source``,
        photons, or ``gensteps``); photon i is the one ``propagate`` with
        the same seed and first_photon would start from (history and steps
        clear). To keep, inspect, or hand back as photons.

        Returns
        -------
        numpy.ndarray (N,) of ``PHOTON_DTYPE``, or a DeviceArray with on_device.
        """
        return self.propagate(photons_or_source, seed=seed, first_photon=first_photon,
                              gensteps=gensteps, count=count, on_device=on_device,
                              _generate_only=True).photons

    def gensteps_muon(self, position, direction, energy, seed=0, max_step=0.0,
                      wavelength_min=0.0, wavelength_max=0.0, dedx=0.0, max_length=0.0,
                      time=0.0):
        """A muon's gensteps through the geometry: ``prism_gensteps_muon``.

        A straight track from ``position`` (m) along ``direction`` at the
        speed of ``energy`` (GeV, total) all along; per material piece of
        at most ``max_step`` (m, 0 = 0.1) a Cerenkov genstep (Frank-Tamm on
        the RINDEX table, ``wavelength_min``..``wavelength_max`` nm, 0 =
        200..800) and in scintillators a scintillation genstep (``dedx``
        MeV/cm, 0 = 2). Deterministic for a seed.

        Returns
        -------
        (numpy.ndarray, dict)
            float32 (N, 6, 4) gensteps for ``propagate(gensteps=...)``, and
            count, photons, cerenkov_photons, scintillation_photons,
            segments, length (m of track in materials).
        """
        data, info = self._c.gensteps_muon(
            _vec3(position, "position"), _vec3(direction, "direction"), float(energy),
            seed=int(seed), max_step=float(max_step), wavelength_min=float(wavelength_min),
            wavelength_max=float(wavelength_max), dedx=float(dedx),
            max_length=float(max_length), time=float(time))
        return np.frombuffer(data, np.float32).reshape(-1, 6, 4).copy(), info

    def batch_limit(self, kind="point", record_steps=0):
        """How many photons one ``propagate`` call can take here
        (``prism_propagate_batch_limit``): the device memory the geometry
        left free over what a photon needs. kind: "point", "beam" or
        "photons" (given photons need room for their input too)."""
        kinds = dict(_SOURCE_KINDS, photons=2, gensteps=3)
        if kind not in kinds:
            raise _invalid("kind %r is not one of point, beam, photons, gensteps" % (kind,))
        return self._c.batch_limit(kinds[kind], int(record_steps))

    def render(self, camera, size, mode="shaded", background=(0, 0, 0, 0),
               material_colors=None, hidden_solids=None, ambient=0.0, xray_layers=0,
               xray_alpha=0.0, max_distance=0.0):
        """Ray trace a picture: ``prism_render``.

        Parameters
        ----------
        camera : Camera
        size : (width, height)
        mode : "shaded" (headlight diffuse) or "xray" (layers blended)
        background : RGBA of pixels that see nothing (0..255)
        material_colors : (M, 4) uint8, optional; RGBA per material
        hidden_solids : sequence of solid ids the rays pass through
        ambient, xray_layers, xray_alpha, max_distance : 0 = the defaults

        Returns
        -------
        numpy.ndarray
            (height, width, 4) uint8 RGBA, premultiplied alpha, top row first.
        """
        if not isinstance(camera, Camera):
            raise _invalid("camera must be a prism.Camera, not %s" % type(camera).__name__)
        try:
            width, height = (int(x) for x in size)
        except (TypeError, ValueError):
            raise _invalid("size must be (width, height), not %r" % (size,)) from None
        if not (0 < width <= 16384 and 0 < height <= 16384):
            raise _invalid("size %dx%d is not within 1..16384 each" % (width, height))
        if mode not in _RENDER_MODES:
            raise _invalid("mode %r is not one of shaded, xray" % (mode,))
        image = np.empty((height, width, 4), np.uint8)
        kw = dict(eye=camera.eye, look_at=camera.look_at, up=camera.up, vfov=camera.vfov,
                  mode=_RENDER_MODES[mode], background=tuple(int(x) for x in background),
                  ambient=float(ambient), xray_layers=int(xray_layers),
                  xray_alpha=float(xray_alpha), max_distance=float(max_distance))
        if camera.matrix is not None:
            kw["matrix"] = camera.matrix
        if material_colors is not None:
            colors = np.ascontiguousarray(material_colors, dtype=np.uint8)
            if colors.ndim != 2 or colors.shape[1] != 4:
                raise _invalid("material_colors must be (M, 4) uint8, got shape %s"
                               % (colors.shape,))
            kw["material_colors"] = colors
        if hidden_solids is not None:
            kw["hidden_solids"] = np.ascontiguousarray(hidden_solids, dtype=np.uint32).ravel()
        self._c.render(image, width, height, **kw)
        return image

    def __repr__(self):
        r = self.report
        if self._c.closed:
            return "<prism.Geometry (closed)>"
        if self.context.backend == "host":  # its "device" memory is the heap
            return "<prism.Geometry: %d bytes of host memory, BVH by %s>" % (
                r["device_bytes"] + r["mapped_bytes"], r["bvh"]["builder"])
        return "<prism.Geometry: %d device bytes, %d mapped bytes, BVH by %s>" % (
            r["device_bytes"], r["mapped_bytes"], r["bvh"]["builder"])


class Context:
    """A Prism context (``prism_context``): a backend and its device.

    As a context manager it is closed at the end of the block, releasing
    the geometries and device arrays made from it (see ``close``); an
    exception raised in the block goes on unchanged::

        with prism.Context() as ctx:
            geometry = ctx.upload(scene)
            hits = geometry.propagate(prism.Source.point(10_000)).hits
        # hits is a NumPy array: it outlives the context

    Parameters
    ----------
    backend : "auto", "cuda" or "host"
        auto: CUDA when a usable device exists, else the host backend (the
        same kernels on CPU threads).
    device : None, int or str
        A CUDA device ("0", "cuda:1"); None chooses from $PRISM_DEVICE,
        $CUDA_DEVICE, ~/.cuda-device, then the first usable device.
    host_threads : int
        Host backend threads (0: OpenMP's choice).

    Raises
    ------
    prism.NoDeviceError, prism.NoDriverError, prism.InvalidDeviceError,
    prism.UnsupportedError (cuda in a build without CUDA)
    """

    def __init__(self, backend="auto", device=None, host_threads=0):
        if backend not in _BACKENDS:
            raise _invalid("backend %r is not one of auto, cuda, host" % (backend,))
        if device is not None and not isinstance(device, (str, int)):
            raise _invalid("device must be None, an int or a str, not %r" % (device,))
        self._c = _prism.Context(_BACKENDS[backend], None if device is None else str(device),
                                 int(host_threads))

    @property
    def backend(self):
        """'cuda' or 'host'."""
        return self._c.backend

    @property
    def device(self):
        """The device's figures (prism_device_info) as a dict."""
        return self._c.device

    def memory_report(self):
        """The ledger: live allocations by kind and tag, the peak, free memory."""
        return self._c.memory_report()

    def trim(self):
        """Free what the context's own pools hold between uses
        (``prism_memory_trim``: the upload's staging chunks)."""
        self._c.trim()

    def upload(self, scene, policy="auto", reserve=None, budget=None, builder="auto",
               skip_optics=False, progress=None, device_budget=None):
        """Build the BVH and place the geometry: ``prism_geometry_upload``.

        Parameters
        ----------
        scene : Scene
        policy : "auto", "device", "mapped" or "chroma"
            Where the arrays go (see prism/placement.h).
        reserve : int, optional
            Bytes of device memory to leave free (None: 300 MB; 0: none).
        budget : int, optional
            Pretend at most this much device memory is free.
        builder : "auto", "host" or "cuda"
            Who builds the BVH.
        skip_optics : bool
            Geometry only: no optics tables.
        progress : None, bool or callable(done, total)
            For a BVH built on the host (triangles placed); as in load().
        device_budget : int, optional
            At most this many bytes of the arrays in device memory (None or
            0: no cap): hottest first, the BVH nodes split at a node, so a
            small budget keeps the top of the tree on the device and maps
            the rest. Not with policy "chroma".

        Returns
        -------
        Geometry, with ``.report`` as a dict.
        """
        if not isinstance(scene, Scene):
            raise _invalid("upload needs a prism.Scene, not %s" % type(scene).__name__)
        callback, done = progress_callback(progress, "BVH", "tri")
        try:
            g = self._c.upload(scene._c, policy=policy, reserve=reserve, budget=budget,
                               builder=builder, skip_optics=bool(skip_optics), progress=callback,
                               device_budget=device_budget)
        finally:
            done()
        return Geometry(g, self, scene)

    def close(self):
        """Release what was made from the context and destroy it now (it is
        destroyed when collected anyway).

        Geometries and device arrays made from it are released: using them
        afterwards raises prism.InvalidArgumentError. Memory another library
        still reads (a NumPy or CuPy array over a DeviceArray, through
        DLPack, the buffer protocol or ``__cuda_array_interface__``) stays
        valid until that library lets go; the context is destroyed then.
        Closing twice is fine.

        Raises
        ------
        prism.Error
            What ``prism_context_destroy`` reported (e.g. CUDA failing).
        """
        self._c.close()

    @property
    def closed(self):
        """True once close() was called."""
        return self._c.closed

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.close()
            return
        # an exception is in flight: it goes on unchanged; a failing close
        # is only logged
        try:
            self.close()
        except _prism.Error as e:
            logger.warning("closing the context after %s: %s", exc_type.__name__, e)

    def __repr__(self):
        if self._c.closed:
            return "<prism.Context (closed)>"
        return "<prism.Context %s: %s>" % (self.backend, self.device["name"])
