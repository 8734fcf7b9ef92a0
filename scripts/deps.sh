#!/usr/bin/env bash
# What Prism needs, checked the way the build will look for it, and the
# Debian packages that bring what is missing.
#   scripts/deps.sh run      what `make run` needs: build and show a file
#   scripts/deps.sh test     that, plus the test peers: cmocka, Xvfb, assimp
#                            and its models, Embree, clang for the fuzzer,
#                            Python with NumPy and pytest, Open MPI (the default)
#   scripts/deps.sh --python the Python interpreter the tests use
# A dependency counts as present when one of its checks passes: a command on
# PATH, a pkg-config module, a CMake find_package/find_path/find_library
# (so CMAKE_PREFIX_PATH and PKG_CONFIG_* are honoured), a runtime library,
# a Python module. dpkg is not asked: libraries may have come by other means.
# What is missing is installed with apt-get when we are root and a registry
# answers; otherwise the script names what is missing and stops (exit 1).
# PRISM_DEPS_TRACE=1 prints which check found each one.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

# The interpreter the Python tests run under: $PYTHON when set, else the
# first python3 that imports numpy and pytest, else Debian's (the one
# python3-numpy and python3-pytest install into).
pick_python() {
  if [ -n "${PYTHON:-}" ]; then echo "$PYTHON"; return; fi
  local p
  for p in "$(command -v python3 || true)" /usr/bin/python3; do
    [ -n "$p" ] && [ -x "$p" ] && "$p" -c 'import numpy, pytest' >/dev/null 2>&1 && { echo "$p"; return; }
  done
  if [ -x /usr/bin/python3 ]; then echo /usr/bin/python3; else command -v python3 || echo python3; fi
}

mode=${1:-test}
case "$mode" in
  --python) pick_python; exit 0 ;;
  run|test) ;;
  *) echo "usage: scripts/deps.sh [run|test|--python]" >&2; exit 2 ;;
esac

# package | what it is | checks (any one passing is enough)
run_deps=(
  "cmake|CMake|cmd:cmake"
  "ninja-build|Ninja|cmd:ninja"
  "gcc|a C compiler|cmd:gcc"
  "g++|a C++ compiler (nvcc's host compiler)|cmd:g++"
  "make|make|cmd:make"
  "pkg-config|pkg-config|cmd:pkg-config"
  "libexpat1-dev|expat|pc:expat cmake:EXPAT"
  "libpng-dev|libpng|pc:libpng cmake:PNG"
  "zlib1g-dev|zlib|pc:zlib cmake:ZLIB"
  "libglfw3-dev|GLFW 3|pc:glfw3 cmake:glfw3"
  "libglew-dev|GLEW|pc:glew cmake:GLEW"
  "libstb-dev|stb (the HUD's text)|pc:stb path:stb/stb_easy_font.h"
  "libegl-dev|EGL|pc:egl cmake:OpenGL_EGL"
  "libgl-dev|OpenGL|pc:gl cmake:OpenGL"
  "libegl-mesa0|an EGL driver|so:libEGL_mesa.so.0 so:libEGL_nvidia.so.0"
  "libglx-mesa0|a GLX driver|so:libGLX_mesa.so.0 so:libGLX_nvidia.so.0"
  "libgl1-mesa-dri|Mesa's software renderer (or NVIDIA's GL)|dri:swrast_dri.so so:libEGL_nvidia.so.0"
)
test_deps=(
  "libcmocka-dev|cmocka|pc:cmocka cmake:cmocka"
  "xvfb|Xvfb|cmd:Xvfb"
  "xauth|xauth|cmd:xauth"
  "libassimp-dev|assimp|pc:assimp cmake:assimp"
  "assimp-testmodels|assimp's COLLADA models|dir:/usr/share/assimp/models/Collada"
  "libembree-dev|Embree 3|cmake:embree"
  "clang|clang|cmd:clang-14 cmd:clang"
  "libclang-rt-14-dev|libFuzzer (clang's runtime)|fuzzer:"
  "python3-dev|Python's headers|py:headers"
  "python3-numpy|NumPy|py:numpy"
  "python3-pytest|pytest|py:pytest"
  "python3-venv|Python's venv and ensurepip (.ci/run's pip install step)|py:ensurepip"
  "libopenmpi-dev|Open MPI's headers and mpicc (prism-propagate under mpirun)|cmd:mpicc pc:ompi-c"
  "openmpi-bin|Open MPI's mpirun (the mpi tests)|cmd:mpirun"
)
deps=("${run_deps[@]}")
[ "$mode" = test ] && deps+=("${test_deps[@]}")
PYTHON=$(pick_python)

multiarch() {
  gcc -print-multiarch 2>/dev/null || dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null ||
    echo "$(uname -m)-linux-gnu"
}
arch=$(multiarch)

# One CMake configure answers every cmake: check (a project of no language
# is quick; the multiarch folder is named so find_library looks in it).
cmake_found=""
probe_cmake() {
  local names=() d
  for d in "${deps[@]}"; do
    for c in ${d##*|}; do [ "${c%%:*}" = cmake ] && names+=("${c#cmake:}"); done
  done
  command -v cmake >/dev/null || return 0
  local work
  work=$(mktemp -d)
  cmake -S "$here/deps-probe" -B "$work" -DPROBE_NAMES="$(IFS=';'; echo "${names[*]}")" \
    -DCMAKE_LIBRARY_ARCHITECTURE="$arch" >"$work/log" 2>&1 || true
  cmake_found=$(sed -n 's/^-- probe found: //p' "$work/log" | tr '\n' ' ')
  rm -rf "$work"
}

has_so() {
  local d
  ldconfig -p 2>/dev/null | grep -q "[[:space:]]$1 " && return 0
  for d in ${LD_LIBRARY_PATH:+${LD_LIBRARY_PATH//:/ }} "/usr/lib/$arch" "/lib/$arch" /usr/lib64 /usr/lib; do
    [ -e "$d/$1" ] && return 0
  done
  return 1
}

check() {
  local kind=${1%%:*} arg=${1#*:} d
  case "$kind" in
    cmd) command -v "$arg" >/dev/null ;;
    pc) command -v pkg-config >/dev/null && pkg-config --exists "$arg" ;;
    cmake) [[ " $cmake_found " == *" $arg "* ]] ;;
    path) for d in ${CPATH:+${CPATH//:/ }} /usr/local/include /usr/include; do [ -e "$d/$arg" ] && return 0; done; return 1 ;;
    so) has_so "$arg" ;;
    dri) for d in ${LIBGL_DRIVERS_PATH:+${LIBGL_DRIVERS_PATH//:/ }} "/usr/lib/$arch/dri" /usr/lib64/dri /usr/lib/dri; do
           [ -e "$d/$arg" ] && return 0
         done; return 1 ;;
    dir) [ -d "$arg" ] ;;
    fuzzer) local cc
            cc=$(command -v clang-14 || command -v clang) || return 1
            ls "$("$cc" -print-resource-dir)"/lib/linux/libclang_rt.fuzzer-*.a >/dev/null 2>&1 ;;
    py) case "$arg" in
          headers) "$PYTHON" -c 'import os, sysconfig, sys
sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' 2>/dev/null ;;
          *) "$PYTHON" -c "import $arg" 2>/dev/null ;;
        esac ;;
    *) return 1 ;;
  esac
}

find_missing() {
  missing=() missing_what=()
  local d c found
  probe_cmake
  for d in "${deps[@]}"; do
    IFS='|' read -r pkg what checks <<<"$d"
    found=no
    for c in $checks; do check "$c" && { found=$c; break; }; done
    [ -n "${PRISM_DEPS_TRACE:-}" ] && echo "prism: $what ($pkg): ${found/#no/MISSING}" >&2
    [ "$found" != no ] || { missing+=("$pkg"); missing_what+=("$what ($pkg)"); }
  done
}

stop() {
  echo "prism: missing for \`make $mode\`: $(IFS=','; echo "${missing_what[*]}" | sed 's/,/, /g')" >&2
  echo "prism: $1" >&2
  echo "  apt-get update && apt-get install -y --no-install-recommends ${missing[*]}" >&2
  [[ " ${missing[*]} " == *" python3-"* ]] && echo "  (Python checked: $PYTHON; set PYTHON= to use another)" >&2
  exit 1
}

find_missing
[ ${#missing[@]} -eq 0 ] && exit 0
command -v apt-get >/dev/null || stop "no apt-get here: install them by other means (CMake, pkg-config and \$CMAKE_PREFIX_PATH are honoured); on Debian:"
[ "$(id -u)" -eq 0 ] || stop "not root: as root, run:"
echo "prism: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
log=$(mktemp)
if ! apt-get update -qq >"$log" 2>&1 ||
   ! apt-get install -y -qq --no-install-recommends "${missing[@]}" >>"$log" 2>&1; then
  tail -n 3 "$log" | sed 's/^/  apt-get: /' >&2
  rm -f "$log"
  stop "apt-get could not install them (no package registry reachable?); install them by other means, or run when one answers:"
fi
rm -f "$log"
find_missing
[ ${#missing[@]} -eq 0 ] || stop "still missing after apt-get install:"
