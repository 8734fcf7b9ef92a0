#!/usr/bin/env bash
# `make run`: the main job on the bundled detector. With a display, the
# viewer opens a window; without one, it renders headless, writes out/*.png
# and prints the benchmark summary.
set -euo pipefail
build=${1:-build}
asset=${PRISM_ASSET:-assets/tiny_detector.dae}
"$build/tools/prism-info" --devices
echo
"$build/tools/prism-info" "$asset"
echo
view="$build/viewer/prism-view"
if [ ! -x "$view" ]; then
  echo "prism: $view was not built (GLFW, GLEW, EGL or libpng missing?); stopping after the summary" >&2
  exit 1
fi
mkdir -p out
if [ -n "${DISPLAY:-}" ]; then
  echo "prism: opening the viewer on $asset (H: help, Esc: quit)"
  exec "$view" --photons 100000 "$asset"
fi
# Each step says what it does first: the benchmark takes about a minute on
# the host backend (seconds on a GPU), and prism-view shows its progress
# (a bar on a terminal, else a line every few seconds).
echo "prism: no display: rendering headless, 1280x720, 100000 photons"
echo "prism: [1/3] the ray-traced view -> out/raytrace.png"
"$view" --headless --size 1280x720 --photons 100000 --view raytrace --screenshot out/raytrace.png "$asset"
echo "prism: [2/3] the raster view -> out/raster.png"
"$view" --headless --size 1280x720 --photons 100000 --view raster --screenshot out/raster.png "$asset"
echo "prism: [3/3] the benchmark: 30 frames of each way of drawing, timed (about a minute on the host backend)"
"$view" --headless --size 1280x720 --photons 100000 --frames 30 --bench "$asset"
echo "prism: wrote out/raytrace.png and out/raster.png"
