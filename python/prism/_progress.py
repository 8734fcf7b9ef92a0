"""Progress of long C calls: the caller's callable, or a tqdm bar when tqdm
is installed. The C library calls back on the calling thread (the load's
bytes, the host BVH build's triangles); the extension takes the GIL for it."""
import sys


def _tqdm():
    try:
        from tqdm.auto import tqdm  # type: ignore[import-untyped]
    except ImportError:
        return None
    return tqdm


def progress_callback(progress, desc, unit):
    """(callable(done, total) or None, close()) for a ``progress=`` argument:
    None (a bar when tqdm is installed and stderr is a terminal), True (a
    bar when tqdm is installed), False (nothing) or a callable."""
    if progress is False:
        return None, lambda: None
    if callable(progress) and progress is not True:
        return progress, lambda: None
    if progress is not None and progress is not True:
        raise TypeError("progress must be None, True, False or callable(done, total)")
    tqdm = _tqdm()
    if tqdm is None or (progress is None and not sys.stderr.isatty()):
        return None, lambda: None
    bar = []

    def update(done, total):
        if not bar:
            bar.append(tqdm(total=total, desc=desc, unit=unit, unit_scale=True, leave=False))
        b = bar[0]
        if b.total != total:
            b.total = total
        b.update(done - b.n)
        return True

    def close():
        if bar:
            bar[0].close()

    return update, close
