#!/usr/bin/env bash
# Installs what SPL needs to build (Debian packages, with apt) and configures and builds it.
# Idempotent and quiet when everything is present. Environment:
#   SPL_BUILD_DIR  build directory (default: build)
#   SPL_JOBS       parallel build jobs (default: number of cores)
#   SPL_NO_BUILD=1 install packages only
set -euo pipefail
cd "$(dirname "$0")/.."

# libblas-test: netlib's BLAS test programs (xblat1s/d ...), and liblapack-test: LAPACK's own
# (xlintsts/d, xeigtsts/d, with the reference liblapack), which the `blas` tests run on
# libsplblas (skipped without them).
packages=(cmake ninja-build g++ lld llvm-22 llvm-22-dev antlr4 libantlr4-runtime-dev libisl-dev
          libfmt-dev libgtest-dev libgmock-dev libbenchmark-dev python3 pkg-config libblas-test
          liblapack-test)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo=sudo; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
[ "${SPL_NO_BUILD:-0}" = 1 ] && exit 0

build="${SPL_BUILD_DIR:-build}"
jobs="${SPL_JOBS:-$(nproc)}"
if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build "$build" -j "$jobs" | grep -v '^\[' || true
test -x "$build/bin/splc" || { echo "setup: the build failed" >&2; exit 1; }
