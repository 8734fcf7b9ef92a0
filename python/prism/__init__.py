"""Prism: GPU ray tracing and optical photon propagation for detector
geometry (COLLADA / G4DAE), from Python.

A thin layer over Prism's C library::

    import prism
    print(prism.devices())
    scene = prism.load("detector.dae")            # arrays view the C memory
    ctx = prism.Context()                         # CUDA when there is a device
    geometry = ctx.upload(scene)
    result = geometry.propagate(prism.Source.point(100_000), seed=1)
    hits = result.hits                            # (N,) prism.PHOTON_DTYPE
    image = geometry.render(prism.Camera(eye=(0, 0, 5), look_at=(0, 0, 0)), (640, 480))

Errors raise prism.Error subclasses (code, result, message attributes), one
per prism_result: InvalidArgumentError, ParseError, IOError, ... (see __all__;
prism.IOError, a subclass of OSError, is left out of it so that a star import
keeps the builtin IOError).

Contexts, geometries and device arrays have close() and work with `with`;
closing a context releases what was made from it.

The C log goes to the "prism" logger of the logging module.
"""
from . import _log  # noqa: F401  (installs the log handler)
from ._prism import (  # noqa: F401
    BUILT_WITH_CUDA, NONE, TERMINAL_FLAGS,
    GEANT4_EXTRAS, GEANT4_META, GEANT4_POINTER_IDS, GEANT4_DD_PATHS,
    NO_HIT, BULK_ABSORB, SURFACE_DETECT, SURFACE_ABSORB, RAYLEIGH_SCATTER, REFLECT_DIFFUSE,
    REFLECT_SPECULAR, SURFACE_REEMIT, SURFACE_TRANSMIT, BULK_REEMIT, REFRACT, TOTAL_INTERNAL,
    STEP_LIMIT, NAN_ABORT,
    Error, InvalidArgumentError, OutOfMemoryError, OutOfDeviceMemoryError, IOError, ParseError,
    LimitError, UnsupportedError, NoDriverError, NoDeviceError, InvalidDeviceError,
    DeviceUnavailableError, NoGLContextError, GLNotOnCudaDeviceError, InteropUnavailableError,
    MappedNotAllowedError, OutOfRangeError, LiveAllocationsError, CudaError, GLError,
    PlacementError, CompileError,
    history_flag_name,
)
from ._dtypes import PHOTON_DTYPE, STEP_RECORD_DTYPE
from ._scene import Material, Scene, Solids, Surface, load
from ._engine import Camera, Context, DeviceArray, DeviceList, Geometry, Result, Source, devices

__version__ = __import__("prism._prism", fromlist=["version"]).version()

__all__ = [
    # functions and classes
    "load", "devices", "Context", "Scene", "Geometry", "Result", "Source", "Camera",
    "DeviceArray", "history_flag_name",
    # dtypes and constants
    "PHOTON_DTYPE", "STEP_RECORD_DTYPE", "BUILT_WITH_CUDA",
    "NO_HIT", "BULK_ABSORB", "SURFACE_DETECT", "SURFACE_ABSORB", "RAYLEIGH_SCATTER",
    "REFLECT_DIFFUSE", "REFLECT_SPECULAR", "SURFACE_REEMIT", "SURFACE_TRANSMIT", "BULK_REEMIT",
    "REFRACT", "TOTAL_INTERNAL", "STEP_LIMIT", "NAN_ABORT", "TERMINAL_FLAGS",
    "NONE", "GEANT4_EXTRAS", "GEANT4_META", "GEANT4_POINTER_IDS", "GEANT4_DD_PATHS",
    # errors: prism.Error and one subclass per prism_result (prism.IOError too,
    # left out here only so that `from prism import *` does not hide the
    # builtin IOError)
    "Error", "InvalidArgumentError", "OutOfMemoryError", "OutOfDeviceMemoryError",
    "ParseError", "LimitError", "UnsupportedError", "NoDriverError", "NoDeviceError",
    "InvalidDeviceError", "DeviceUnavailableError", "NoGLContextError", "GLNotOnCudaDeviceError",
    "InteropUnavailableError", "MappedNotAllowedError", "OutOfRangeError",
    "LiveAllocationsError", "CudaError", "GLError", "PlacementError", "CompileError",
]
