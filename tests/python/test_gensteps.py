"""Gensteps from Python: Geometry.gensteps_muon through the bundled detector
and Geometry.propagate(gensteps=...): the photons are the run's whatever
the split (first_photon, count), the C tool's layout (N, 6, 4) float32, and
wrong arrays raise."""
import numpy as np
import pytest

import prism


def muon(geometry):
    # down the detector's axis, 10 GeV: through its liquid scintillator
    return geometry.gensteps_muon((0.05, 0.02, -3.0), (0, 0, 1), 10.0, seed=3)


def test_muon_gensteps(geometry):
    g, info = muon(geometry)
    assert g.dtype == np.float32 and g.shape == (info["count"], 6, 4) and info["count"] > 0
    u = g.view(np.uint32)
    assert set(u[:, 0, 0]) <= {15, 16}                      # Cerenkov, scintillation
    assert int(u[:, 0, 3].sum()) == info["photons"] > 0
    assert info["photons"] == info["cerenkov_photons"] + info["scintillation_photons"]
    assert 0 < info["length"] <= 6.0
    again, _ = muon(geometry)
    assert np.array_equal(g.view(np.uint32), again.view(np.uint32))   # deterministic
    with pytest.raises(prism.InvalidArgumentError, match="above the muon's mass"):
        geometry.gensteps_muon((0, 0, -3), (0, 0, 1), 0.05)


def test_propagate_gensteps_any_split(geometry):
    g, info = muon(geometry)
    n = info["photons"]
    whole = geometry.propagate(gensteps=g, seed=5)
    assert len(whole.photons) == n
    cut = n // 3
    a = geometry.propagate(gensteps=g, seed=5, count=cut)
    b = geometry.propagate(gensteps=g, seed=5, first_photon=cut)   # count 0: the rest
    joined = np.concatenate([a.photons, b.photons])
    assert joined.tobytes() == whole.photons.tobytes()


def test_bad_gensteps_raise(geometry):
    g, info = muon(geometry)
    with pytest.raises(prism.InvalidArgumentError, match=r"float32 \(N, 6, 4\)"):
        geometry.propagate(gensteps=np.zeros((3, 4, 4), np.float32))
    with pytest.raises(prism.InvalidArgumentError, match="float32"):
        geometry.propagate(gensteps=g.astype(np.float64))
    with pytest.raises(prism.InvalidArgumentError, match="photons"):
        geometry.propagate(gensteps=g, count=info["photons"] + 1)
    bad = g.copy()
    bad.view(np.uint32)[1, 0, 2] = 999                       # material index
    with pytest.raises(prism.InvalidArgumentError, match="genstep 1: material 999"):
        geometry.propagate(gensteps=bad)
    with pytest.raises(prism.InvalidArgumentError, match="one source"):
        geometry.propagate(prism.Source("point", 10), gensteps=g)


def test_generate_is_the_start_of_propagate(geometry):
    # the gensteps' photons as a run starts them: record 0 of the same run
    # propagated, histories and steps clear; a slice by first_photon is the
    # same photons
    g, info = muon(geometry)
    start = geometry.generate(gensteps=g, seed=5)
    assert start.dtype == prism.PHOTON_DTYPE and len(start) == info["photons"]
    run = geometry.propagate(gensteps=g, seed=5, record_steps=2)
    assert np.array_equal(start["pos"], run.records["pos"][:, 0])
    assert np.array_equal(start["time"], run.records["time"][:, 0])
    assert np.array_equal(start["wavelength"], run.records["wavelength"][:, 0])
    assert not start["history"].any() and not start["steps"].any()
    assert (run.photons["steps"] > 0).all()
    tail = geometry.generate(gensteps=g, seed=5, first_photon=10)
    assert tail.tobytes() == start[10:].tobytes()
    with pytest.raises(prism.InvalidArgumentError):
        geometry.generate()
