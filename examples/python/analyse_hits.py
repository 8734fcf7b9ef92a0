#!/usr/bin/env python3
"""Load a detector, propagate photons from its centre, and histogram the
arrival times of the detected ones: to a PNG with matplotlib when it is
installed, as text otherwise.

    python3 examples/python/analyse_hits.py [FILE.dae] [--photons N] [--out hits.png]
"""
import argparse
import pathlib

import numpy as np

import prism

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file", nargs="?", default=str(ROOT / "assets" / "tiny_detector.dae"))
    ap.add_argument("--photons", type=int, default=200_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default="hits.png", help="the histogram (PNG, needs matplotlib)")
    args = ap.parse_args()

    scene = prism.load(args.file)
    ctx = prism.Context()
    geometry = ctx.upload(scene)
    centre = scene.bbox.mean(axis=0)
    result = geometry.propagate(prism.Source.point(args.photons, centre), seed=args.seed)
    hits = result.hits
    print("%s: %d of %d photons detected (%.1f%%) in %.3f s on %s" % (
        pathlib.Path(args.file).name, len(hits), args.photons,
        100.0 * len(hits) / args.photons, result.stats["seconds"], ctx.backend))
    if len(hits) == 0:
        return
    counts, edges = np.histogram(hits["time"], bins=40)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        peak = counts.max()
        for c, lo in zip(counts, edges):
            print("%8.3f ns %6d %s" % (lo, c, "#" * int(50 * c / peak)))
        return
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.stairs(counts, edges)
    ax.set_xlabel("arrival time (ns)")
    ax.set_ylabel("detected photons")
    ax.set_title("%s: %d hits" % (pathlib.Path(args.file).name, len(hits)))
    fig.savefig(args.out, dpi=100, bbox_inches="tight")
    print("wrote", args.out)


if __name__ == "__main__":
    main()
