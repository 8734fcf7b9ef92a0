"""prism.devices, Context, upload, propagate and render on the host
backend: results, photons in both forms, bad input, DLPack export, the GIL
released around the kernels, and the package's public names
(test_lifetime.py has the closing rules)."""
import ast
import ctypes
import gc
import inspect
import pathlib
import pydoc
import threading
import time

import numpy as np
import pytest

import prism


def test_devices_lists_the_host_first_and_prints_the_report():
    devs = prism.devices()
    assert devs[0]["backend"] == "host" and devs[0]["index"] == -1
    assert all(d["backend"] == "cuda" for d in devs[1:])
    assert str(devs).startswith("Prism " + prism.__version__)
    assert '"cpu"' in str(devs)


def test_context_backend_and_bad_arguments(host):
    assert host.backend == "host" and host.device["backend"] == "host"
    with pytest.raises(prism.InvalidArgumentError, match="backend"):
        prism.Context("gpu")
    with pytest.raises(prism.InvalidArgumentError):
        prism.Context("host", device=1.5)


def test_cuda_without_a_device_raises_a_prism_error():
    if prism.BUILT_WITH_CUDA and prism._prism.cuda_device_count() > 0:
        pytest.skip("a CUDA device is present")
    with pytest.raises(prism.Error) as e:
        prism.Context("cuda")
    assert e.value.result in ("PRISM_ERROR_UNSUPPORTED", "PRISM_ERROR_NO_DRIVER",
                              "PRISM_ERROR_NO_DEVICE")


def test_upload_report_is_a_dict(geometry, tiny):
    r = geometry.report
    assert r["policy"] == "auto" and r["bvh"]["builder"] == "host"
    names = [a["name"] for a in r["arrays"]]
    assert names == ["bvh.nodes", "triangles", "vertices", "triangle_info"]
    assert r["device_bytes"] + r["mapped_bytes"] == sum(a["bytes"] for a in r["arrays"])
    assert "bvh.nodes" in r["text"]


def test_upload_bad_arguments(host, tiny):
    with pytest.raises(prism.InvalidArgumentError, match="policy"):
        host.upload(tiny, policy="everywhere")
    with pytest.raises(prism.InvalidArgumentError, match="builder"):
        host.upload(tiny, builder="gpu")
    with pytest.raises(prism.InvalidArgumentError, match="reserve"):
        host.upload(tiny, reserve=-1)
    with pytest.raises(prism.InvalidArgumentError, match="Scene"):
        host.upload("tiny_detector.dae")
    with pytest.raises(prism.UnsupportedError):
        host.upload(tiny, builder="cuda")
    mapped = host.upload(tiny, policy="mapped", progress=False)
    assert mapped.report["device_bytes"] == 0 and mapped.report["mapped_bytes"] > 0


def test_upload_device_budget_splits_the_nodes(host, tiny):
    whole = host.upload(tiny, progress=False).report
    nodes = next(a for a in whole["arrays"] if a["name"] == "bvh.nodes")
    assert whole["device_budget"] == 0 and nodes["device_bytes"] == nodes["bytes"]
    budget = nodes["bytes"] // 2
    r = host.upload(tiny, device_budget=budget, progress=False).report
    assert r["device_budget"] == budget
    split = next(a for a in r["arrays"] if a["name"] == "bvh.nodes")
    # the top of the tree on the device, at a whole node; the rest mapped
    assert 0 < split["device_bytes"] <= budget < split["bytes"]
    assert split["device_bytes"] % (nodes["bytes"] // whole["bvh"]["stats"]["nodes"]) == 0
    assert r["device_bytes"] <= budget and r["mapped_bytes"] > 0
    with pytest.raises(prism.InvalidArgumentError, match="device_budget"):
        host.upload(tiny, device_budget=-1)
    with pytest.raises(prism.InvalidArgumentError):
        host.upload(tiny, policy="chroma", device_budget=budget)


def test_upload_progress_counts_triangles(host, tiny):
    calls = []
    host.upload(tiny, builder="host", progress=lambda d, t: calls.append((d, t)))
    assert calls[0] == (0, tiny.triangles_count) and calls[-1][0] == tiny.triangles_count


def test_propagate_a_source(geometry, centre):
    r = geometry.propagate(prism.Source.point(5000, centre), seed=3)
    p = r.photons
    assert p.dtype == prism.PHOTON_DTYPE and p.shape == (5000,)
    assert np.all(p["history"] & prism.TERMINAL_FLAGS)
    assert r.stats["detected"] == r.hits.shape[0] > 0
    assert np.all(r.hits["history"] & prism.SURFACE_DETECT)
    assert r.stats["steps"] == int(p["steps"].sum())
    assert r.stats["time_max"] == float(p["time"][np.isfinite(p["time"])].max())
    parts = r.stats["generate_seconds"] + r.stats["tail_seconds"] + r.stats["tally_seconds"]
    assert 0 < parts <= r.stats["seconds"]
    assert 0 <= r.stats["tail_launches"] <= r.stats["launches"]
    assert r.records is None
    again = geometry.propagate(prism.Source.point(5000, centre), seed=3)
    assert again.photons.tobytes() == p.tobytes()
    other = geometry.propagate(prism.Source.point(5000, centre), seed=4)
    assert other.photons.tobytes() != p.tobytes()


def test_photons_in_both_forms_give_the_same_result(geometry, centre):
    start = geometry.propagate(prism.Source.beam(300, centre, (1, 0.2, 0.1)), seed=1,
                               max_steps=1).photons
    start["history"] = 0
    structured = geometry.propagate(start, seed=9).photons
    as_floats = start.view(np.float32).reshape(-1, 4, 4)
    assert as_floats.shape == (300, 4, 4)
    floats = geometry.propagate(as_floats, seed=9).photons
    assert structured.tobytes() == floats.tobytes()
    spaced = np.zeros(600, prism.PHOTON_DTYPE)
    spaced[::2] = start
    strided = spaced[::2]
    assert not strided.flags.c_contiguous
    assert geometry.propagate(strided, seed=9).photons.tobytes() == structured.tobytes()


def test_a_run_split_by_first_photon_equals_one_call(geometry, centre):
    src = lambda n: prism.Source.point(n, centre)  # noqa: E731
    whole = geometry.propagate(src(3000), seed=12, record_steps=2)
    first = geometry.propagate(src(1000), seed=12, record_steps=2)
    rest = geometry.propagate(src(2000), seed=12, record_steps=2, first_photon=1000)
    assert np.concatenate([first.photons, rest.photons]).tobytes() == whole.photons.tobytes()
    assert np.concatenate([first.records, rest.records]).tobytes() == whole.records.tobytes()
    limit = geometry.batch_limit("photons", record_steps=2)
    assert 0 < limit <= 2**32 - 1 and limit <= geometry.batch_limit("point")
    with pytest.raises(prism.InvalidArgumentError, match="kind"):
        geometry.batch_limit("laser")


def test_records(geometry, centre):
    r = geometry.propagate(prism.Source.point(100, centre), seed=2, record_steps=5)
    assert r.records.dtype == prism.STEP_RECORD_DTYPE and r.records.shape == (100, 5)
    first = r.records[:, 0]
    np.testing.assert_allclose(first["pos"], np.broadcast_to(centre, (100, 3)), atol=1e-6)
    assert np.all(first["step"] == 0) and np.all(first["photon"] == np.arange(100))
    np.testing.assert_array_equal(r.records[:, -1]["pos"], r.photons["pos"])


@pytest.mark.parametrize("bad,match", [
    (np.zeros((10, 4, 4), np.float16), "float16 \\(10, 4, 4\\)"),
    (np.zeros((10, 4, 4), np.int32), "int32 \\(10, 4, 4\\)"),
    (np.zeros((10, 4, 3), np.float32), "float32 \\(10, 4, 3\\)"),
    (np.zeros((10, 4, 3), np.float64), "float64 \\(10, 4, 3\\)"),
    (np.zeros((10, 16), np.float32), "float32 \\(10, 16\\)"),
    (np.zeros(10, np.int32), "int32"),
    ([1.0, 2.0], "float64"),
])
def test_photons_of_the_wrong_dtype_or_shape_raise(geometry, bad, match):
    with pytest.raises(prism.InvalidArgumentError, match="photons: expected .*got " + match) as e:
        geometry.propagate(bad)
    assert isinstance(e.value, TypeError) and isinstance(e.value, ValueError)


def test_float64_photons_are_cast_to_float32(geometry, centre):
    start = geometry.propagate(prism.Source.beam(300, centre, (1, 0.2, 0.1)), seed=1,
                               max_steps=1).photons
    as_floats = start.view(np.float32).reshape(-1, 4, 4)
    expected = geometry.propagate(as_floats, seed=9).photons
    as_doubles = as_floats.astype(np.float64)
    assert geometry.propagate(as_doubles, seed=9).photons.tobytes() == expected.tobytes()
    # values float32 cannot hold are rounded to the float32 they are nearest
    nudged = as_doubles.copy()
    nudged[:, :3] *= 1 + 1e-12  # pos, time, dir, wavelength, pol: far below float32's step
    assert geometry.propagate(nudged, seed=9).photons.tobytes() == expected.tobytes()
    assert as_doubles.dtype == np.float64  # the caller's array is left as it was


def test_bad_propagate_arguments_raise_the_c_message(geometry, centre):
    with pytest.raises(prism.InvalidArgumentError, match="count 0"):
        geometry.propagate(np.zeros(0, prism.PHOTON_DTYPE))
    with pytest.raises(prism.InvalidArgumentError, match="direction"):
        geometry.propagate(prism.Source.beam(10, centre, (0, 0, 0)))
    with pytest.raises(prism.InvalidArgumentError, match="record_steps"):
        geometry.propagate(prism.Source.point(10), record_steps=2000)
    with pytest.raises(prism.InvalidArgumentError, match="math"):
        geometry.propagate(prism.Source.point(10), math="sloppy")
    with pytest.raises(prism.InvalidArgumentError, match="2\\^56"):
        geometry.propagate(prism.Source.point(10), first_photon=2**56)  # beyond index 2^56
    with pytest.raises(prism.InvalidArgumentError, match="kind"):
        prism.Source("laser", 10)
    # the source's count is one call's: 0 is refused as plainly as -5
    for count in (0, -5, 2**32, 1.5):
        with pytest.raises(prism.InvalidArgumentError,
                           match=r"count must be a positive integer \(1\.\.2\^32-1\), not "):
            prism.Source.point(count)
    assert prism.Source.point(2**32 - 1).count == 2**32 - 1
    with pytest.raises(prism.InvalidArgumentError, match="position"):
        prism.Source.point(10, (1, 2))
    # each wrong number is named, alone
    for kw, message in ((dict(max_steps=0), "max_steps 0: it must be >= 1"),
                        (dict(seed=-1), "seed -1: it must be >= 0"),
                        (dict(first_photon=-2), "first_photon -2: it must be >= 0")):
        with pytest.raises(prism.InvalidArgumentError, match=message):
            geometry.propagate(prism.Source.point(10), **kw)


def test_host_memory_is_named_host_memory(geometry):
    assert geometry.context.backend == "host"
    assert "bytes of host memory" in repr(geometry)
    assert "device" not in repr(geometry)


def test_render(geometry, tiny):
    cam = prism.Camera(eye=(0, 0, 4 * float(tiny.bbox[1, 2])), look_at=(0, 0, 0))
    image = geometry.render(cam, (80, 60))
    assert image.shape == (60, 80, 4) and image.dtype == np.uint8
    assert image[30, 40, 3] == 255 and image[0, 0, 3] == 0  # the detector, then background
    grey = geometry.render(cam, (80, 60), background=(10, 20, 30, 255))
    assert tuple(grey[0, 0]) == (10, 20, 30, 255)
    xray = geometry.render(cam, (80, 60), mode="xray")
    assert xray.shape == image.shape and not np.array_equal(xray, image)
    m = np.eye(4)
    m[:3, 3] = cam.eye
    same = geometry.render(prism.Camera.from_matrix(m), (80, 60))
    np.testing.assert_array_equal(same, image)


def test_render_bad_arguments(geometry):
    with pytest.raises(prism.InvalidArgumentError, match="look_at|eye"):
        geometry.render(prism.Camera((1, 1, 1), (1, 1, 1)), (8, 8))
    with pytest.raises(prism.InvalidArgumentError, match="size"):
        geometry.render(prism.Camera((0, 0, 5), (0, 0, 0)), (0, 8))
    with pytest.raises(prism.InvalidArgumentError, match="mode"):
        geometry.render(prism.Camera((0, 0, 5), (0, 0, 0)), (8, 8), mode="wire")
    with pytest.raises(prism.InvalidArgumentError, match="Camera"):
        geometry.render({"eye": (0, 0, 5)}, (8, 8))


def test_device_results_on_the_host_backend_export_by_dlpack(geometry, centre):
    src = prism.Source.point(1000, centre)
    host = geometry.propagate(src, seed=5, record_steps=3)
    dev = geometry.propagate(src, seed=5, record_steps=3, on_device=True)
    p, rec = dev.photons, dev.records
    assert isinstance(p, prism.DeviceArray) and p.device == "cpu"
    assert p.shape == (1000, 4, 4) and rec.shape == (1000, 3, 8)
    assert p.__dlpack_device__() == (1, 0)
    assert not hasattr(p, "__cuda_array_interface__")
    a = np.from_dlpack(p)
    assert a.__array_interface__["data"][0] == p.ptr  # no copy
    assert a.tobytes() == host.photons.tobytes()
    assert np.from_dlpack(rec).tobytes() == host.records.tobytes()
    hits = dev.hits
    assert isinstance(hits, prism.DeviceArray) and hits.shape == (host.hits.shape[0], 4, 4)
    assert np.asarray(hits).tobytes() == host.hits.tobytes()
    del dev, p, rec
    gc.collect()
    assert a.tobytes() == host.photons.tobytes()  # the capsule kept the memory


def test_device_results_go_back_in_as_photons(geometry, centre):
    first = geometry.propagate(prism.Source.point(200, centre), seed=1, max_steps=1,
                               on_device=True)
    again = geometry.propagate(first.photons, seed=2)  # a DeviceArray in host memory
    host = geometry.propagate(np.from_dlpack(first.photons).copy(), seed=2)
    assert again.photons.tobytes() == host.photons.tobytes()

    class OnlyDLPack:  # another library's CPU tensor: DLPack and nothing else
        def __init__(self, a):
            self.a = a

        def __dlpack__(self, **kwargs):
            return self.a.__dlpack__(**kwargs)

        def __dlpack_device__(self):
            return self.a.__dlpack_device__()
    third = geometry.propagate(OnlyDLPack(first.photons), seed=2)
    assert third.photons.tobytes() == host.photons.tobytes()


def dlpack_consume(obj, **kwargs):
    """A DLPack consumer written here, as a C library would be: take the
    capsule, read the DLTensor, return (data, device, shape) and the
    deleter to call when done."""
    class DLTensor(ctypes.Structure):
        _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int32),
                    ("device_id", ctypes.c_int32), ("ndim", ctypes.c_int32),
                    ("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                    ("lanes", ctypes.c_uint16), ("shape", ctypes.POINTER(ctypes.c_int64)),
                    ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]

    class Managed(ctypes.Structure):
        pass
    Deleter = ctypes.CFUNCTYPE(None, ctypes.POINTER(Managed))
    Managed._fields_ = [("tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                        ("deleter", Deleter)]
    api = ctypes.pythonapi
    api.PyCapsule_GetPointer.restype = ctypes.c_void_p
    api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
    capsule = obj.__dlpack__(**kwargs)
    ptr = api.PyCapsule_GetPointer(capsule, b"dltensor")
    api.PyCapsule_SetName(capsule, b"used_dltensor")  # ours now
    m = ctypes.cast(ptr, ctypes.POINTER(Managed))
    t = m.contents.tensor
    shape = tuple(t.shape[i] for i in range(t.ndim))
    info = dict(data=t.data, device=(t.device_type, t.device_id), shape=shape,
                dtype=(t.code, t.bits, t.lanes), strides=bool(t.strides))
    return info, lambda: m.contents.deleter(m)


def test_a_hand_written_dlpack_consumer_gets_the_memory_and_keeps_it(geometry, centre):
    dev = geometry.propagate(prism.Source.point(64, centre), seed=1, on_device=True)
    p = dev.photons
    info, release = dlpack_consume(p)
    assert info == dict(data=p.ptr, device=(1, 0), shape=(64, 4, 4), dtype=(2, 32, 1),
                        strides=False)
    expected = np.asarray(p).tobytes()
    del dev, p
    gc.collect()
    assert ctypes.string_at(info["data"], 64 * 64) == expected
    release()


def test_dlpack_versions_and_refusals(geometry):
    p = geometry.propagate(prism.Source.point(8), on_device=True).photons
    capsule = p.__dlpack__(max_version=(1, 0))
    assert "dltensor_versioned" in repr(capsule)
    assert "dltensor_versioned" not in repr(p.__dlpack__(max_version=(0, 8)))
    with pytest.raises(BufferError):
        p.__dlpack__(copy=True)
    with pytest.raises(BufferError):
        p.__dlpack__(dl_device=(2, 0))
    out = np.empty((8, 4, 4), np.float32)
    p.read_into(out)
    np.testing.assert_array_equal(out, np.asarray(p))


def test_the_gil_is_released_during_propagate(geometry, centre):
    window = []

    def work():
        t0 = time.perf_counter()
        geometry.propagate(prism.Source.point(200_000, centre), seed=1)
        window.extend((t0, time.perf_counter()))

    ticks = []
    t = threading.Thread(target=work)
    t.start()
    while t.is_alive():
        ticks.append(time.perf_counter())
        time.sleep(0.001)
    t.join()
    inside = [x for x in ticks if window[0] < x < window[1]]
    assert window[1] - window[0] > 0.02, "propagate too short to tell"
    assert len(inside) >= 5, "the main thread ran %d times in %.3f s" % (
        len(inside), window[1] - window[0])


def test_threads_sharing_a_context_take_turns(geometry, centre):
    # the C library allows one thread per context at a time; the package's
    # lock makes concurrent calls wait instead of racing
    src = prism.Source.point(20000, centre)
    expected = [geometry.propagate(src, seed=s).photons.tobytes() for s in range(4)]
    got = [None] * 4

    def work(s):
        got[s] = geometry.propagate(src, seed=s).photons.tobytes()
    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got == expected


def test_the_c_log_reaches_the_logging_module(caplog, host, tiny):
    import logging
    with caplog.at_level(logging.DEBUG, logger="prism"):
        host.upload(tiny, progress=False)
    assert any(r.name == "prism" for r in caplog.records)


def test_every_public_name_is_in_all_and_the_stubs_agree():
    errors = {n for n, v in vars(prism._prism).items()
              if isinstance(v, type) and issubclass(v, prism.Error)}
    assert len(errors) == 22 and "LiveAllocationsError" in errors
    # prism.IOError stays out: `from prism import *` must keep the builtin IOError
    assert errors - set(prism.__all__) == {"IOError"}
    assert all(hasattr(prism, n) for n in prism.__all__)
    assert len(set(prism.__all__)) == len(prism.__all__)
    page = pydoc.render_doc(prism, renderer=pydoc.plaintext)  # what help(prism) shows
    assert "class ParseError" in page and "class LiveAllocationsError" in page
    assert inspect.getdoc(prism.ParseError) in page
    namespace = {}
    exec("from prism import *", namespace)
    assert "ParseError" in namespace and namespace.get("IOError", IOError) is IOError
    stubs = pathlib.Path(prism.__file__).with_name("__init__.pyi")
    assigned = [node.value for node in ast.parse(stubs.read_text()).body
                if isinstance(node, ast.Assign) and node.targets[0].id == "__all__"]
    assert [ast.literal_eval(v) for v in assigned] == [prism.__all__]


def test_history_flag_name_takes_a_flag_value_not_a_bit_index():
    assert prism.history_flag_name.__text_signature__ == "(flag, /)"
    assert "not a bit index" in prism.history_flag_name.__doc__
    assert prism.history_flag_name(prism.SURFACE_DETECT) == "SURFACE_DETECT"
    assert prism.history_flag_name(1 << 2) == "SURFACE_DETECT"
    assert prism.history_flag_name(2) == "BULK_ABSORB"  # 1 << 1, not bit 2
    assert prism.history_flag_name(prism.NAN_ABORT) == "NAN_ABORT"
    for not_one_flag in (0, prism.SURFACE_DETECT | prism.REFRACT, prism.TERMINAL_FLAGS):
        assert prism.history_flag_name(not_one_flag) == "?"
    history = prism.SURFACE_DETECT | prism.REFRACT
    names = [prism.history_flag_name(1 << i) for i in range(32) if history >> i & 1]
    assert names == ["SURFACE_DETECT", "REFRACT"]
    for bad in (-1, 1 << 32, 4.0, "SURFACE_DETECT"):
        with pytest.raises(prism.InvalidArgumentError):
            prism.history_flag_name(bad)
