"""prism.load and prism.Scene: arrays that view the C memory, the scene
kept alive by them, units, and errors that say what went wrong."""
import gc

import numpy as np
import pytest

import prism
from conftest import TEST_DATA, TINY

ARRAYS = {
    "positions": (np.float32, 3), "indices": (np.uint32, 3), "triangle_solid": (np.uint32, None),
    "triangle_material_inner": (np.uint32, None), "triangle_material_outer": (np.uint32, None),
    "triangle_surface": (np.uint32, None),
}


def c_address(scene, name):
    return scene._c.view(name).address


def test_arrays_have_the_scene_shapes_and_dtypes(tiny):
    for name, (dtype, columns) in ARRAYS.items():
        a = getattr(tiny, name)
        rows = tiny.vertices_count if name == "positions" else tiny.triangles_count
        assert a.dtype == dtype, name
        assert a.shape == ((rows, columns) if columns else (rows,)), name
    assert tiny.triangles_count > 0 and tiny.indices.max() < tiny.vertices_count
    assert tiny.bbox.shape == (2, 3)
    np.testing.assert_array_equal(tiny.bbox[0], tiny.positions.min(axis=0))
    np.testing.assert_array_equal(tiny.bbox[1], tiny.positions.max(axis=0))


def test_arrays_view_the_c_memory_without_copying(tiny):
    for name in list(ARRAYS) + ["bbox"]:
        a = getattr(tiny, name)
        # the array's first element is where the C struct's pointer points
        assert a.__array_interface__["data"][0] == c_address(tiny, name), name
        # a second, independent view reads the same bytes
        b = np.asarray(tiny._c.view(name))
        assert np.shares_memory(a, b), name
        assert not a.flags.writeable, name
    with pytest.raises(ValueError):
        tiny.positions[0, 0] = 1.0


def test_the_scene_outlives_its_python_references():
    scene = prism.load(TINY, progress=False)
    positions, indices, bbox = scene.positions, scene.indices, scene.bbox
    expected = positions.copy(), indices.copy(), bbox.copy()
    address = positions.__array_interface__["data"][0]
    del scene
    gc.collect()
    # other loads reuse freed memory if the scene had been freed
    others = [prism.load(TINY, progress=False) for _ in range(3)]
    assert positions.__array_interface__["data"][0] == address
    np.testing.assert_array_equal(positions, expected[0])
    np.testing.assert_array_equal(indices, expected[1])
    np.testing.assert_array_equal(bbox, expected[2])
    del others


def test_materials_surfaces_and_solids(tiny):
    materials = tiny.materials
    assert materials and all(isinstance(m.name, str) for m in materials)
    for m in materials:
        for name, (wavelength, value) in m.properties.items():
            assert wavelength.dtype == np.float32 and wavelength.shape == value.shape
            assert np.all(np.diff(wavelength) >= 0), (m.name, name)
    assert tiny.find_material(materials[0].name) == 0
    assert tiny.find_material("no such material") is None
    solids = tiny.solids
    assert len(solids.name) == len(solids.path) == len(solids.parent) > 0
    # each solid's triangles are the ones triangle_solid names it for
    for i, (first, count) in enumerate(zip(solids.first_triangle, solids.triangle_count)):
        assert np.all(tiny.triangle_solid[first:first + count] == i)
    assert int(solids.triangle_count.sum()) == tiny.triangles_count
    inner = tiny.triangle_material_inner
    assert np.all(inner == solids.material[tiny.triangle_solid])
    for s in tiny.surfaces:
        assert s.kind in ("skin", "border")


def test_units():
    default = prism.load(TINY, progress=False)
    assert default.unit_meter == pytest.approx(0.001) and default.unit_source == "geant4"
    assert "Geant4" in default.unit_rule and default.geant4_marks & prism.GEANT4_EXTRAS
    mm = prism.load(TINY, unit="mm", progress=False)
    metres = prism.load(TINY, unit="M", progress=False)  # prism_length_unit_parse: any case
    cm = prism.load(TINY, unit=0.01, progress=False)
    assert mm.unit_source == metres.unit_source == cm.unit_source == "user"
    np.testing.assert_array_equal(mm.positions, default.positions)
    np.testing.assert_allclose(metres.positions, default.positions * 1000, rtol=1e-6)
    np.testing.assert_allclose(cm.positions, default.positions * 10, rtol=1e-6)
    assert prism.load(TINY, unit="auto", progress=False).unit_meter == default.unit_meter
    for bad in ("furlong", -1.0, 0, True, [1]):
        with pytest.raises(prism.InvalidArgumentError, match="unit"):
            prism.load(TINY, unit=bad)


def test_a_missing_file_raises_ioerror_naming_it(tmp_path):
    missing = tmp_path / "nothing.dae"
    with pytest.raises(prism.IOError) as e:
        prism.load(missing)
    assert "nothing.dae" in str(e.value)
    assert isinstance(e.value, OSError) and isinstance(e.value, prism.Error)
    assert e.value.result == "PRISM_ERROR_IO" and e.value.code == 4
    assert e.value.message == str(e.value)


@pytest.mark.parametrize("name", ["bad_malformed.dae", "bad_truncated.dae", "bad_index_range.dae"])
def test_a_malformed_file_raises_parseerror_with_file_and_line(name):
    with pytest.raises(prism.ParseError) as e:
        prism.load(TEST_DATA / "collada" / name)
    assert name in str(e.value) and e.value.result == "PRISM_ERROR_PARSE"
    assert isinstance(e.value, ValueError)


def test_bad_arguments():
    with pytest.raises(TypeError):
        prism.load(None)
    with pytest.raises(prism.InvalidArgumentError):
        prism.load(TINY, max_triangles=-1)
    with pytest.raises(prism.LimitError):
        prism.load(TINY, max_triangles=10)


def test_progress_callback_sees_every_byte_and_can_cancel():
    calls = []
    prism.load(TINY, progress=lambda done, total: calls.append((done, total)))
    size = TINY.stat().st_size
    assert calls and calls[-1] == (size, size)
    assert all(d <= t for d, t in calls)
    with pytest.raises(prism.IOError, match="cancel"):
        prism.load(TINY, progress=lambda done, total: False)

    class Stop(Exception):
        pass

    def boom(done, total):
        raise Stop("from the callback")
    with pytest.raises(Stop, match="from the callback"):
        prism.load(TINY, progress=boom)
