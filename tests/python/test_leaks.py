"""No leaks over 1000 load / upload / propagate cycles: Python's heap
(tracemalloc), the engine's ledger, and the process's resident memory
(what the C heap holds) all return to where they were."""
import gc
import logging
import os
import tracemalloc

import numpy as np
import pytest

import prism
from conftest import TINY

CYCLES = 1000


# ASan keeps freed memory in quarantine: resident memory grows by design
SANITIZED = bool(os.environ.get("PRISM_SANITIZED"))


def resident_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def cycle(ctx, i):
    scene = prism.load(TINY, progress=False)
    geometry = ctx.upload(scene, progress=False)
    centre = tuple(float(x) for x in scene.bbox.mean(axis=0))
    r = geometry.propagate(prism.Source.point(32, centre), seed=i, record_steps=2)
    assert r.photons.shape == (32,)
    d = geometry.propagate(r.photons, seed=i, on_device=True)
    assert d.photons.shape == (32, 4, 4)
    _ = scene.positions, scene.materials, r.hits


@pytest.fixture(autouse=True)
def quiet():
    # pytest keeps every log record of a test: the upload's INFO lines
    # would grow the heap by themselves
    logger = logging.getLogger("prism")
    level = logger.level
    logger.setLevel(logging.WARNING)
    yield
    logger.setLevel(level)


def test_a_thousand_cycles_leak_nothing():
    ctx = prism.Context("host")
    tracemalloc.start()
    # warm up under tracing: CPython's free lists and tables grow once (a
    # ~1 MB step was seen after ~450 calls), the context's pools fill
    for i in range(500):
        cycle(ctx, i)
    gc.collect()
    ctx.trim()
    ledger = ctx.memory_report()
    python_before = tracemalloc.get_traced_memory()[0]
    rss_before = resident_bytes()
    for i in range(CYCLES):
        cycle(ctx, i)
    gc.collect()
    ctx.trim()
    python_growth = tracemalloc.get_traced_memory()[0] - python_before
    tracemalloc.stop()
    rss_growth = resident_bytes() - rss_before
    after = ctx.memory_report()
    assert (after["count"], after["bytes"]) == (ledger["count"], ledger["bytes"]) == (0, 0)
    # a leaked object per cycle would be >= 1000 * ~50 bytes
    assert python_growth < 32 * 1024, "Python heap grew %d bytes" % python_growth
    # a leaked scene per cycle would be >= 1000 * ~40 KB
    assert SANITIZED or rss_growth < 8 << 20, "resident memory grew %d bytes" % rss_growth
    ctx.close()  # raises LiveAllocationsError if the ledger still held anything


def test_contexts_come_and_go():
    rss_before = None
    for i in range(200):
        with prism.Context("host") as ctx:
            g = ctx.upload(prism.load(TINY, progress=False), progress=False)
            g.propagate(prism.Source.point(8), seed=i)
            del g
        if i == 20:
            gc.collect()
            rss_before = resident_bytes()
    gc.collect()
    assert SANITIZED or resident_bytes() - rss_before < 4 << 20


def test_contexts_closed_under_their_objects_and_views_leak_nothing():
    # close() releases the geometry and the device arrays NumPy does not
    # read; the others, and then the context, go when NumPy lets go of them,
    # the Python objects alive (odd cycles) or not (1.3 MB of photons a
    # cycle: a cycle's leak would show at once)
    scene = prism.load(TINY, progress=False)
    rss_before = None
    for i in range(100):
        with prism.Context("host") as ctx:
            g = ctx.upload(scene, progress=False)
            r = g.propagate(prism.Source.point(20000), seed=i, record_steps=1, on_device=True)
            view = np.from_dlpack(r.photons)
            records = np.asarray(r.records)
        assert view.shape == (20000, 4, 4) and records.shape == (20000, 1, 8)
        if i % 2:
            del g, r
        del view, records
        if i == 20:
            gc.collect()
            rss_before = resident_bytes()
    gc.collect()
    assert SANITIZED or resident_bytes() - rss_before < 8 << 20


def test_a_failed_call_leaves_nothing(tmp_path):
    ctx = prism.Context("host")
    bad = tmp_path / "bad.dae"
    bad.write_text("<COLLADA><library_geometries><geometry id='g'><mesh>")
    for _ in range(50):
        with pytest.raises(prism.ParseError):
            prism.load(bad)
        g = ctx.upload(prism.load(TINY, progress=False), progress=False)
        with pytest.raises(prism.InvalidArgumentError):  # refused by the C call
            g.propagate(np.zeros(0, prism.PHOTON_DTYPE))
        del g
    gc.collect()
    ctx.trim()
    assert ctx.memory_report()["count"] == 0
    ctx.close()
