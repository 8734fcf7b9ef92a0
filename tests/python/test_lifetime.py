"""Closing: a context's `with` block never hides the exception in flight;
closing a context releases the geometries and device arrays made from it;
a released object raises a prism error when used, never crashes; memory
another library still reads (DLPack, the buffer protocol) stays valid until
it lets go; close() may come twice and in any order (issue 28)."""
import gc
import logging
import threading

import numpy as np
import pytest

import prism
from conftest import TINY


@pytest.fixture(scope="module")
def scene():
    return prism.load(TINY, progress=False)


@pytest.fixture
def ctx():
    c = prism.Context("host")
    yield c
    c.close()


def made_from(ctx, scene):
    """A geometry and device results (photons, records, hits) of `ctx`."""
    g = ctx.upload(scene, progress=False)
    centre = tuple(float(x) for x in scene.bbox.mean(axis=0))
    r = g.propagate(prism.Source.point(200, centre), seed=1, record_steps=2, on_device=True)
    return g, r


def live_count(ctx):
    gc.collect()
    ctx.trim()  # the upload's staging chunks, kept for the next upload
    return ctx.memory_report()["count"]


def test_the_reported_case_closes_cleanly(scene):
    with prism.Context("host") as ctx:
        g = ctx.upload(scene, progress=False)
        g.propagate(prism.Source.point(10), seed=1)
    assert ctx.closed and g.closed


def test_an_exception_in_the_block_goes_on_unchanged(scene):
    raised = KeyError("missing")
    with pytest.raises(KeyError) as e:
        with prism.Context("host") as ctx:
            g, r = made_from(ctx, scene)
            raise raised
    assert e.value is raised and e.value.__context__ is None and e.value.__cause__ is None
    assert ctx.closed and g.closed and r.photons.closed and r.records.closed


def test_an_exception_in_flight_survives_a_failing_close(scene, caplog):
    class FailingClose:  # the extension's context, its close failing
        def __init__(self, real):
            self.real = real

        def close(self):
            raise prism._prism.make_error(18, "close: the device went away")  # CudaError

    raised = ValueError("user error")
    ctx = prism.Context("host")
    real = ctx._c
    ctx._c = FailingClose(real)
    with caplog.at_level(logging.WARNING, logger="prism"):
        with pytest.raises(ValueError) as e:
            with ctx:
                raise raised
    assert e.value is raised and e.value.__context__ is None
    assert "device went away" in caplog.text and "ValueError" in caplog.text
    # without an exception in flight, close's own error is raised
    with pytest.raises(prism.Error, match="device went away"):
        with ctx:
            pass
    real.close()


def test_objects_used_after_their_context_closed_raise(scene):
    ctx = prism.Context("host")
    g, r = made_from(ctx, scene)
    photons, records = r.photons, r.records
    ctx.close()
    assert ctx.closed and g.closed and photons.closed and records.closed
    closed = "released when its context was closed"
    calls = [
        lambda: g.propagate(prism.Source.point(10)),
        lambda: g.render(prism.Camera((0, 0, 5), (0, 0, 0)), (8, 8)),
        lambda: g.batch_limit(),
        lambda: g.vertices_shared,
        lambda: photons.read_into(np.empty((200, 4, 4), np.float32)),
        lambda: photons.select(prism.SURFACE_DETECT),
        lambda: r.hits,
        lambda: photons.__dlpack__(),
        lambda: np.from_dlpack(photons),
        lambda: photons.ptr,
    ]
    for call in calls:
        with pytest.raises(prism.InvalidArgumentError, match=closed):
            call()
    with pytest.raises(BufferError, match=closed):
        memoryview(records)
    for call in (lambda: ctx.upload(scene), ctx.memory_report, ctx.trim, lambda: ctx.backend):
        with pytest.raises(prism.InvalidArgumentError, match="the context is closed"):
            call()
    # what needs no memory still answers
    assert photons.shape == (200, 4, 4) and g.report["arrays"]
    assert "closed" in repr(ctx) and "closed" in repr(g)


def test_closing_twice_and_in_either_order(scene):
    # geometry, then context
    ctx = prism.Context("host")
    g, r = made_from(ctx, scene)
    before = live_count(ctx)
    g.close()
    g.close()
    assert g.closed and not ctx.closed
    assert live_count(ctx) < before  # its memory went now, not at collection
    with pytest.raises(prism.InvalidArgumentError, match="geometry is closed"):
        g.propagate(prism.Source.point(10))
    r.photons.close()
    r.records.close()
    ctx.upload(scene, progress=False).close()  # the context goes on
    ctx.close()
    ctx.close()
    g.close()
    # context, then geometry
    ctx = prism.Context("host")
    g, r = made_from(ctx, scene)
    ctx.close()
    g.close()
    r.photons.close()
    ctx.close()
    assert ctx.closed and g.closed and r.photons.closed


def test_geometry_and_device_arrays_work_with_with(ctx, scene):
    before = live_count(ctx)
    with ctx.upload(scene, progress=False) as g:
        with g.propagate(prism.Source.point(50), seed=2, on_device=True).photons as p:
            assert p.shape == (50, 4, 4) and not p.closed
        assert p.closed
        with pytest.raises(prism.InvalidArgumentError, match="device array is closed"):
            p.read_into(np.empty((50, 4, 4), np.float32))
    assert g.closed and not ctx.closed
    assert live_count(ctx) == before
    raised = RuntimeError("inside")
    with pytest.raises(RuntimeError) as e:
        with ctx.upload(scene, progress=False) as g:
            raise raised
    assert e.value is raised and e.value.__context__ is None and g.closed


def test_views_of_a_closed_context_stay_readable(scene):
    ctx = prism.Context("host")
    g, r = made_from(ctx, scene)
    by_dlpack = np.from_dlpack(r.photons)
    by_buffer = np.asarray(r.records)
    expected = by_dlpack.tobytes(), by_buffer.tobytes()
    ctx.close()
    assert r.photons.closed and r.records.closed
    del g, r
    gc.collect()
    assert (by_dlpack.tobytes(), by_buffer.tobytes()) == expected  # memory kept for the views
    del by_dlpack, by_buffer  # the last views: the memory and then the context go
    gc.collect()


def test_a_closed_array_keeps_its_memory_while_viewed(ctx, scene):
    g, r = made_from(ctx, scene)
    base = live_count(ctx)
    view = np.from_dlpack(r.photons)
    expected = view.tobytes()
    r.photons.close()
    assert r.photons.closed
    with pytest.raises(prism.InvalidArgumentError, match="closed"):
        np.from_dlpack(r.photons)  # no new views
    assert live_count(ctx) == base  # still there: NumPy reads it
    assert view.tobytes() == expected
    del view
    assert live_count(ctx) == base - 1  # released when NumPy let go, the object still alive
    assert r.photons.closed


def test_close_waits_for_a_call_in_flight(ctx, scene):
    g = ctx.upload(scene, progress=False)
    centre = tuple(float(x) for x in scene.bbox.mean(axis=0))
    outcome = []

    def work():
        try:
            outcome.append(g.propagate(prism.Source.point(200_000, centre), seed=1))
        except prism.InvalidArgumentError as e:  # the close came first
            outcome.append(e)
    t = threading.Thread(target=work)
    t.start()
    ctx.close()
    t.join()
    assert ctx.closed and g.closed and len(outcome) == 1
    if isinstance(outcome[0], prism.Result):
        assert outcome[0].photons.shape == (200_000,)


def test_objects_outliving_their_context_in_any_order(scene):
    for order in range(3):
        ctx = prism.Context("host")
        g, r = made_from(ctx, scene)
        view = np.asarray(r.photons)
        if order == 0:
            del ctx
        elif order == 1:
            ctx.close()
            del ctx
        gc.collect()
        del g
        gc.collect()
        assert view.shape == (200, 4, 4)
        del r, view
        gc.collect()
