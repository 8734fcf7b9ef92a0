"""Fixtures of the Python package's suites: where the assets are, a host
context, and the bundled detector loaded and uploaded once per file."""
import os
import pathlib

import pytest

import prism

HERE = pathlib.Path(__file__).resolve().parent
ASSETS = pathlib.Path(os.environ.get("PRISM_ASSETS", HERE.parent.parent / "assets"))
TEST_DATA = pathlib.Path(os.environ.get("PRISM_TEST_DATA", HERE.parent / "data"))
TINY = ASSETS / "tiny_detector.dae"


def cuda_available():
    return prism.BUILT_WITH_CUDA and prism._prism.cuda_device_count() > 0


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA device (skipped without one)")


def pytest_collection_modifyitems(config, items):
    if cuda_available():
        return
    skip = pytest.mark.skip(reason="no CUDA device")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="module")
def tiny():
    return prism.load(TINY, progress=False)


@pytest.fixture(scope="module")
def host():
    return prism.Context("host")


@pytest.fixture(scope="module")
def geometry(host, tiny):
    return host.upload(tiny, progress=False)


@pytest.fixture(scope="module")
def centre(tiny):
    return tuple(float(x) for x in tiny.bbox.mean(axis=0))
