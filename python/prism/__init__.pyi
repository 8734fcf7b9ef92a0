# Type stubs of the prism package (the public API; see help(prism.X)).
import os
from typing import (Any, Callable, Dict, Iterable, List, NamedTuple, Optional, Sequence, Tuple,
                    Union)

import numpy as np
import numpy.typing as npt

__version__: str
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
# What the package re-exports from its extension (as __init__.py does).
from ._prism import (
    history_flag_name as history_flag_name,
    BUILT_WITH_CUDA as BUILT_WITH_CUDA,
    NONE as NONE,
    TERMINAL_FLAGS as TERMINAL_FLAGS,
    GEANT4_EXTRAS as GEANT4_EXTRAS,
    GEANT4_META as GEANT4_META,
    GEANT4_POINTER_IDS as GEANT4_POINTER_IDS,
    GEANT4_DD_PATHS as GEANT4_DD_PATHS,
    NO_HIT as NO_HIT,
    BULK_ABSORB as BULK_ABSORB,
    SURFACE_DETECT as SURFACE_DETECT,
    SURFACE_ABSORB as SURFACE_ABSORB,
    RAYLEIGH_SCATTER as RAYLEIGH_SCATTER,
    REFLECT_DIFFUSE as REFLECT_DIFFUSE,
    REFLECT_SPECULAR as REFLECT_SPECULAR,
    SURFACE_REEMIT as SURFACE_REEMIT,
    SURFACE_TRANSMIT as SURFACE_TRANSMIT,
    BULK_REEMIT as BULK_REEMIT,
    REFRACT as REFRACT,
    TOTAL_INTERNAL as TOTAL_INTERNAL,
    STEP_LIMIT as STEP_LIMIT,
    NAN_ABORT as NAN_ABORT,
    Error as Error,
    InvalidArgumentError as InvalidArgumentError,
    OutOfMemoryError as OutOfMemoryError,
    OutOfDeviceMemoryError as OutOfDeviceMemoryError,
    IOError as IOError,
    ParseError as ParseError,
    LimitError as LimitError,
    UnsupportedError as UnsupportedError,
    NoDriverError as NoDriverError,
    NoDeviceError as NoDeviceError,
    InvalidDeviceError as InvalidDeviceError,
    DeviceUnavailableError as DeviceUnavailableError,
    NoGLContextError as NoGLContextError,
    GLNotOnCudaDeviceError as GLNotOnCudaDeviceError,
    InteropUnavailableError as InteropUnavailableError,
    MappedNotAllowedError as MappedNotAllowedError,
    OutOfRangeError as OutOfRangeError,
    LiveAllocationsError as LiveAllocationsError,
    CudaError as CudaError,
    GLError as GLError,
    PlacementError as PlacementError,
    CompileError as CompileError,
    DeviceArray as DeviceArray,
)

PHOTON_DTYPE: np.dtype
STEP_RECORD_DTYPE: np.dtype

_Progress = Union[None, bool, Callable[[int, int], Optional[bool]]]
_Vec3 = Sequence[float]

class Material(NamedTuple):
    name: str
    properties: Dict[str, Tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]]

class Surface(NamedTuple):
    name: str
    kind: str
    model: int
    finish: int
    type: int
    value: float
    properties: Dict[str, Tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]]

class Solids(NamedTuple):
    name: List[str]
    path: List[str]
    copy_number: npt.NDArray[np.int32]
    parent: npt.NDArray[np.uint32]
    material: npt.NDArray[np.uint32]
    first_triangle: npt.NDArray[np.uint32]
    triangle_count: npt.NDArray[np.uint32]

class Scene:
    def __init__(self, c: Any, path: Optional[str] = ...) -> None: ...
    path: Optional[str]
    vertices_count: int
    triangles_count: int
    unit_meter: float
    unit_rule: str
    unit_source: str
    geant4_marks: int
    quirks: Dict[str, int]
    up_axis: str
    g4dae: bool
    stats: Dict[str, Any]
    skipped: Dict[str, int]
    @property
    def positions(self) -> npt.NDArray[np.float32]: ...
    @property
    def indices(self) -> npt.NDArray[np.uint32]: ...
    @property
    def triangle_solid(self) -> npt.NDArray[np.uint32]: ...
    @property
    def triangle_material_inner(self) -> npt.NDArray[np.uint32]: ...
    @property
    def triangle_material_outer(self) -> npt.NDArray[np.uint32]: ...
    @property
    def triangle_surface(self) -> npt.NDArray[np.uint32]: ...
    @property
    def bbox(self) -> npt.NDArray[np.float32]: ...
    @property
    def materials(self) -> List[Material]: ...
    @property
    def surfaces(self) -> List[Surface]: ...
    @property
    def solids(self) -> Solids: ...
    def find_material(self, name: str) -> Optional[int]: ...

def load(path: Union[str, os.PathLike], unit: Union[None, str, float] = ...,
         progress: _Progress = ..., max_triangles: Optional[int] = ...) -> Scene: ...

class DeviceList(List[Dict[str, Any]]):
    report: str
    def __init__(self, items: Iterable[Dict[str, Any]], report: str) -> None: ...

def devices() -> DeviceList: ...

class Source:
    kind: str
    count: int
    position: Tuple[float, float, float]
    direction: Tuple[float, float, float]
    radius: float
    divergence: float
    wavelength: float
    wavelength_max: float
    time: float
    def __init__(self, kind: str = ..., count: int = ..., position: _Vec3 = ...,
                 direction: _Vec3 = ..., radius: float = ..., divergence: float = ...,
                 wavelength: float = ..., wavelength_max: float = ..., time: float = ...) -> None: ...
    @classmethod
    def point(cls, count: int, position: _Vec3 = ..., **kwargs: float) -> "Source": ...
    @classmethod
    def beam(cls, count: int, position: _Vec3, direction: _Vec3, radius: float = ...,
             divergence: float = ..., **kwargs: float) -> "Source": ...

class Camera:
    eye: Tuple[float, float, float]
    look_at: Tuple[float, float, float]
    up: Tuple[float, float, float]
    vfov: float
    matrix: Optional[npt.NDArray[np.float32]]
    def __init__(self, eye: _Vec3, look_at: _Vec3, up: _Vec3 = ..., vfov: float = ...) -> None: ...
    @classmethod
    def from_matrix(cls, matrix: npt.ArrayLike, vfov: float = ...) -> "Camera": ...

class Result:
    def __init__(self, photons: Any, records: Any, stats: Dict[str, Any]) -> None: ...
    photons: Union[npt.NDArray[np.void], DeviceArray]
    records: Union[None, npt.NDArray[np.void], DeviceArray]
    stats: Dict[str, Any]
    @property
    def hits(self) -> Union[npt.NDArray[np.void], DeviceArray]: ...

class Geometry:
    def __init__(self, c: Any, context: "Context", scene: Scene) -> None: ...
    context: "Context"
    scene: Scene
    report: Dict[str, Any]
    def close(self) -> None: ...
    @property
    def closed(self) -> bool: ...
    def __enter__(self) -> "Geometry": ...
    def __exit__(self, *exc: Any) -> None: ...
    @property
    def vertices_shared(self) -> bool: ...
    def propagate(self, photons_or_source: Any = ..., seed: int = ..., max_steps: int = ...,
                  record_steps: int = ..., on_device: bool = ..., math: str = ...,
                  first_photon: int = ..., steps_per_launch: int = ...,
                  gensteps: Optional[np.ndarray] = ..., count: int = ...) -> Result: ...
    def generate(self, photons_or_source: Any = ..., seed: int = ..., first_photon: int = ...,
                 gensteps: Optional[np.ndarray] = ..., count: int = ...,
                 on_device: bool = ...) -> Any: ...
    def gensteps_muon(self, position: Sequence[float], direction: Sequence[float],
                      energy: float, seed: int = ..., max_step: float = ...,
                      wavelength_min: float = ..., wavelength_max: float = ...,
                      dedx: float = ..., max_length: float = ...,
                      time: float = ...) -> Tuple[np.ndarray, Dict[str, Any]]: ...
    def batch_limit(self, kind: str = ..., record_steps: int = ...) -> int: ...
    def render(self, camera: Camera, size: Tuple[int, int], mode: str = ...,
               background: Sequence[int] = ..., material_colors: Optional[npt.ArrayLike] = ...,
               hidden_solids: Optional[Sequence[int]] = ..., ambient: float = ...,
               xray_layers: int = ..., xray_alpha: float = ...,
               max_distance: float = ...) -> npt.NDArray[np.uint8]: ...

class Context:
    def __init__(self, backend: str = ..., device: Union[None, int, str] = ...,
                 host_threads: int = ...) -> None: ...
    @property
    def backend(self) -> str: ...
    @property
    def device(self) -> Dict[str, Any]: ...
    @property
    def closed(self) -> bool: ...
    def memory_report(self) -> Dict[str, Any]: ...
    def trim(self) -> None: ...
    def upload(self, scene: Scene, policy: str = ..., reserve: Optional[int] = ...,
               budget: Optional[int] = ..., builder: str = ..., skip_optics: bool = ...,
               progress: _Progress = ..., device_budget: Optional[int] = ...) -> Geometry: ...
    def close(self) -> None: ...
    def __enter__(self) -> "Context": ...
    def __exit__(self, *exc: Any) -> None: ...
