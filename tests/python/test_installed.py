"""The package as `pip install .` installs it (.ci/run's venv step sets
PRISM_TEST_INSTALLED=1): prism imported from the environment, not from a
build tree, and the command-line programs on PATH beside its Python. Not
registered with ctest (tests/python.cmake): the build tree is not an
installation."""
import os
import pathlib
import shutil
import subprocess
import sys
import sysconfig

import pytest

import prism

pytestmark = pytest.mark.skipif(not os.environ.get("PRISM_TEST_INSTALLED"),
                                reason="not an installed package (PRISM_TEST_INSTALLED unset)")

TOOLS = ["prism-propagate", "prism-info", "prism-bench", "prism-gen-detector"]


def test_prism_comes_from_the_environment():
    here = pathlib.Path(prism.__file__).resolve().parent
    site = {pathlib.Path(sysconfig.get_paths()[k]).resolve() for k in ("purelib", "platlib")}
    assert here.parent in site, "prism imported from %s, not from %s" % (here, site)
    assert sys.prefix != sys.base_prefix, "not a virtual environment"
    assert not os.environ.get("PYTHONPATH")
    assert (here / "__init__.pyi").exists() and (here / "py.typed").exists()


@pytest.mark.parametrize("tool", TOOLS)
def test_the_programs_are_on_path(tool):
    scripts = pathlib.Path(sysconfig.get_paths()["scripts"]).resolve()
    found = shutil.which(tool)
    assert found is not None, "%s is not on PATH" % tool
    assert pathlib.Path(found).resolve().parent == scripts
    run = subprocess.run([found, "--help"], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and run.stdout.startswith("usage: " + tool), run.stderr


def test_the_viewer_is_not_installed():
    scripts = pathlib.Path(sysconfig.get_paths()["scripts"])
    assert not (scripts / "prism-view").exists()


def test_the_installed_programs_run(tmp_path):
    detector = tmp_path / "detector.dae"
    subprocess.run(["prism-gen-detector", "--pmts", "8", "--output", str(detector)], check=True,
                   capture_output=True, timeout=60)
    info = subprocess.run(["prism-info", str(detector)], check=True, capture_output=True,
                          text=True, timeout=60)
    assert "triangles" in info.stdout
    scene = prism.load(detector, progress=False)
    out = tmp_path / "photons.npy"
    subprocess.run(["prism-propagate", str(detector), "--backend", "host", "--count", "1000",
                    "--out", str(out), "--quiet"], check=True, capture_output=True, timeout=120)
    assert out.exists() and scene.triangles_count > 0
