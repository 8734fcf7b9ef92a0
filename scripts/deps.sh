#!/usr/bin/env bash
# Installs the Debian packages Prism builds and tests with, when missing.
# As root it runs apt-get; otherwise it prints the exact line to run.
set -euo pipefail
packages=(
  cmake ninja-build gcc g++ make pkg-config
  libexpat1-dev libpng-dev zlib1g-dev libglfw3-dev libglew-dev libcglm-dev libcmocka-dev libstb-dev
  libegl-dev libgl-dev libgl1-mesa-dri libegl-mesa0 libglx-mesa0 xvfb xauth
  libassimp-dev assimp-testmodels libembree-dev
  clang libclang-rt-14-dev
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
line="apt-get install -y --no-install-recommends ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  echo "prism: missing Debian packages; run as root:" >&2
  echo "  apt-get update && $line" >&2
  exit 1
fi
echo "prism: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
