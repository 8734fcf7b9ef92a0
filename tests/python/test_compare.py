"""The Python API gives what the C API gives, byte for byte, for the same
file, source and seed (python_reference.c runs the C side; prism-propagate
too where it is built)."""
import os
import pathlib
import shutil
import subprocess

import numpy as np
import pytest

import prism
from conftest import TINY

REFERENCE = os.environ.get("PRISM_PYTHON_REFERENCE")
needs_reference = pytest.mark.skipif(not REFERENCE or not os.path.exists(REFERENCE),
                                     reason="python_reference not built (run from ctest)")


def reference(tmp_path, source, seed, max_steps=100, record_steps=0):
    out, rec = tmp_path / "photons.bin", tmp_path / "records.bin"
    subprocess.run([REFERENCE, str(TINY), str(seed), str(max_steps), str(record_steps), source,
                    str(out), str(rec)], check=True)
    photons = np.fromfile(out, prism.PHOTON_DTYPE)
    records = np.fromfile(rec, prism.STEP_RECORD_DTYPE) if record_steps else None
    return photons, records


@needs_reference
@pytest.mark.parametrize("seed", [0, 7, 2**40 + 3])
def test_a_point_source_matches_the_c_api(tmp_path, geometry, centre, seed):
    n = 2000
    expected, records = reference(tmp_path, "point:%r,%r,%r,%d" % (*centre, n), seed,
                                  record_steps=4)
    got = geometry.propagate(prism.Source.point(n, centre), seed=seed, record_steps=4)
    assert got.photons.tobytes() == expected.tobytes()
    assert got.records.reshape(-1).tobytes() == records.tobytes()


@needs_reference
def test_given_photons_match_the_c_api(tmp_path, geometry, centre):
    start = geometry.propagate(prism.Source.beam(500, centre, (0.3, 1, 0), divergence=0.5),
                               seed=2, max_steps=2).photons
    start.tofile(tmp_path / "in.bin")
    expected, _ = reference(tmp_path, "photons:%s" % (tmp_path / "in.bin"), seed=11, max_steps=50)
    got = geometry.propagate(start.view(np.float32).reshape(-1, 4, 4), seed=11, max_steps=50)
    assert got.photons.tobytes() == expected.tobytes()


def prism_propagate():
    """The prism-propagate program, where the build has it."""
    build = pathlib.Path(REFERENCE).resolve().parent.parent if REFERENCE else None
    for candidate in ([build / "tools" / "prism-propagate"] if build else []):
        if candidate.exists():
            return candidate
    return shutil.which("prism-propagate")


def test_photons_from_a_file_match_prism_propagate(tmp_path, geometry, centre):
    tool = prism_propagate()
    if tool is None:
        pytest.skip("prism-propagate is not built")
    start = geometry.propagate(prism.Source.point(3000, centre), seed=4, max_steps=1).photons
    np.save(tmp_path / "in.npy", start.view(np.float32).reshape(-1, 4, 4))
    # batches of 1000: the tool's run-wide photon indices give one call's photons
    subprocess.run([str(tool), str(TINY), "--photons", str(tmp_path / "in.npy"), "--seed", "6",
                    "--backend", "host", "--batch", "1000", "--out", str(tmp_path / "out.npy"),
                    "--hits", str(tmp_path / "hits.npy"), "--quiet"],
                   check=True, stdout=subprocess.DEVNULL)
    got = geometry.propagate(start, seed=6)
    assert got.photons.view(np.float32).reshape(-1, 4, 4).tobytes() == \
        np.load(tmp_path / "out.npy").tobytes()
    assert got.hits.view(np.float32).reshape(-1, 4, 4).tobytes() == \
        np.load(tmp_path / "hits.npy").tobytes()
