#!/usr/bin/env bash
# Installs what SPL needs to build (Debian packages, with apt) and configures and builds it.
# Idempotent and quiet when everything is present. Environment:
#   SPL_BUILD_DIR  build directory (default: build)
#   SPL_JOBS       parallel build jobs (default: number of cores)
#   SPL_NO_BUILD=1 install packages only
#   SPL_NO_PETSC=1 leave out the optional PETSc and MPI packages (libsplpetsc and its tests,
#                  label petsc, are then not built; everything else builds and passes without them)
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
# Optional: PETSc and MPI for libsplpetsc (issue 27, docs/petsc.md). Installed without the
# packages they only recommend; a failure to install them is reported and the build goes on.
optional=(petsc-dev libopenmpi-dev openmpi-bin)
missing_optional=()
if [ "${SPL_NO_PETSC:-0}" != 1 ]; then
  for p in "${optional[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing_optional+=("$p")
  done
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo=sudo; fi
if [ ${#missing[@]} -gt 0 ] || [ ${#missing_optional[@]} -gt 0 ]; then
  # Only the required packages make a failed update fatal.
  $sudo apt-get update -qq || [ ${#missing[@]} -eq 0 ]
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if [ ${#missing_optional[@]} -gt 0 ]; then
  echo "setup: installing (optional) ${missing_optional[*]}"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing_optional[@]}" >/dev/null \
    || echo "setup: the optional PETSc/MPI packages did not install; libsplpetsc and the petsc tests are left out" >&2
fi
[ "${SPL_NO_BUILD:-0}" = 1 ] && exit 0

build="${SPL_BUILD_DIR:-build}"
jobs="${SPL_JOBS:-$(nproc)}"
if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build "$build" -j "$jobs" | grep -v '^\[' || true
test -x "$build/bin/splc" || { echo "setup: the build failed" >&2; exit 1; }
