"""NumPy forms of Prism's C structs, and how photons given by the caller
are turned into what prism_propagate reads.

The dtypes are built from the field offsets the extension reports
(``_prism.LAYOUTS``), so they follow ``include/prism/propagate.h``.
"""
import numpy as np

from . import _prism


def _dtype(layout):
    fields, size = layout
    return np.dtype({
        "names": [f[0] for f in fields],
        "formats": [f[1] for f in fields],
        "offsets": [f[2] for f in fields],
        "itemsize": size,
    })


#: One photon, 64 bytes: ``prism_photon`` (pos, time, dir, wavelength, pol,
#: history, solid, triangle, steps, reserved). Units: metres, ns, nm.
PHOTON_DTYPE = _dtype(_prism.LAYOUTS["photon"])
#: One step record, 32 bytes: ``prism_step_record``.
STEP_RECORD_DTYPE = _dtype(_prism.LAYOUTS["step_record"])

_DL_CUDA, _DL_CUDA_MANAGED = 2, 13


def _error(code, message):
    return _prism.make_error(code, message)


def _invalid(message):
    # PRISM_ERROR_INVALID_ARGUMENT is 1 (prism_result)
    return _error(1, message)


def _describe(a):
    return "%s %s" % (a.dtype, tuple(a.shape))


def host_photons(obj, what="photons"):
    """``obj`` as a C-contiguous (N,) PHOTON_DTYPE array (no copy when it
    already is one; a float32 (N, 4, 4) array is viewed, not copied; a
    float64 (N, 4, 4) one is cast to float32, a copy, its values rounded to
    the float32 that prism_photon holds)."""
    if isinstance(obj, np.ndarray):
        a = obj
    elif hasattr(obj, "__dlpack__") and not hasattr(obj, "__array_interface__"):
        a = np.from_dlpack(obj)  # a CPU tensor of another library, read in place
    else:
        a = np.asarray(obj)
    if a.dtype == PHOTON_DTYPE and a.ndim == 1:
        return np.ascontiguousarray(a)
    if a.dtype in (np.float32, np.float64) and a.ndim == 3 and a.shape[1:] == (4, 4):
        n = a.shape[0]
        a = np.ascontiguousarray(a, dtype=np.float32)
        return a.reshape(n, 16).view(PHOTON_DTYPE).reshape(n)
    raise _invalid(
        "%s: expected a structured array of prism.PHOTON_DTYPE, shape (N,), or float32 "
        "(N, 4, 4) (the .npy form; float64 is cast); got %s" % (what, _describe(a)))


class DevicePhotons:
    """Photons in CUDA memory handed to propagate: the address, the count,
    and the object that keeps the memory alive."""

    def __init__(self, ptr, count, keep):
        self.ptr, self.count, self.keep = ptr, count, keep


def _check_device_layout(shape, strides_bytes, dtype, what):
    if dtype != "float32" or len(shape) != 3 or tuple(shape[1:]) != (4, 4):
        return ("%s: device photons must be float32 (N, 4, 4), read in place (no cast on the "
                "device: convert first, e.g. CuPy's a.astype('float32')); got %s %s"
                % (what, dtype, tuple(shape)))
    if strides_bytes is not None and shape[0] > 1 and tuple(strides_bytes) != (64, 16, 4):
        return "%s: device photons must be C-contiguous; got strides %s" % (
            what, tuple(strides_bytes))
    return None


def device_photons(obj, what="photons"):
    """A CUDA array (DLPack on a CUDA device, else ``__cuda_array_interface__``)
    as DevicePhotons, or None when ``obj`` is not one. DLPack comes first: its
    producer orders its work before the stream we name, where the CUDA Array
    Interface would leave a producer's stream unsynchronised."""
    dev = getattr(obj, "__dlpack_device__", None)
    if dev is not None and dev()[0] in (_DL_CUDA, _DL_CUDA_MANAGED):
        try:  # stream 1: CUDA's legacy default stream, which the engine's copy runs on
            capsule = obj.__dlpack__(stream=1, max_version=(1, 0))
        except TypeError:
            capsule = obj.__dlpack__(stream=1)
        taken = _prism.from_dlpack(capsule)
        d = taken.describe()
        strides = None if d["strides"] is None else [st * 4 for st in d["strides"]]
        code, bits, lanes = d["dtype"]
        dtype = ("%s%d" % ({0: "int", 1: "uint", 2: "float"}.get(code, "code%d " % code), bits)
                 + ("x%d" % lanes if lanes != 1 else ""))
        bad = _check_device_layout(d["shape"], strides, dtype, what)
        if bad:
            raise _invalid(bad)
        return DevicePhotons(d["ptr"], d["shape"][0], taken)
    cai = getattr(obj, "__cuda_array_interface__", None)
    if cai is None:
        return None
    shape = tuple(cai["shape"])
    typestr = cai["typestr"]
    try:
        dtype = str(np.dtype(typestr))
    except TypeError:
        dtype = str(typestr)
    bad = _check_device_layout(shape, cai.get("strides"), dtype, what)
    if bad:
        raise _invalid(bad)
    return DevicePhotons(cai["data"][0], shape[0], obj)
