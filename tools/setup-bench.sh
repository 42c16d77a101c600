#!/usr/bin/env bash
# Installs the benchmark baselines (Debian packages, with apt) and configures and builds the
# benchmark targets (spl-spmv-bench, spl-matgen) in their own build folder. Idempotent and quiet
# when everything is present. Runs tools/setup.sh first for the compiler's own packages.
# Environment:
#   SPL_BENCH_BUILD_DIR  build directory (default: build-bench)
#   SPL_JOBS             parallel build jobs (default: number of cores)
#   SPL_NO_BUILD=1       install packages only
# Then: benchmarks/run.sh [--scale S]
set -euo pipefail
cd "$(dirname "$0")/.."

SPL_NO_BUILD=1 tools/setup.sh

# Eigen (header-only), librsb, SuiteSparse (CXSparse, CHOLMOD), Google Benchmark, OpenBLAS
# (benchmarks/run-blas.sh's baseline), and the plotting and reference tools of benchmarks/plot.py.
packages=(libeigen3-dev librsb-dev libsuitesparse-dev libbenchmark-dev libopenblas-dev python3-matplotlib python3-scipy)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup-bench: installing ${missing[*]}"
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo=sudo; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
[ "${SPL_NO_BUILD:-0}" = 1 ] && exit 0

build="${SPL_BENCH_BUILD_DIR:-build-bench}"
jobs="${SPL_JOBS:-$(nproc)}"
if [ ! -f "$build/build.ninja" ] || ! grep -q '^SPL_BUILD_BENCHMARKS:BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null; then
  cmake -G Ninja -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DSPL_BUILD_BENCHMARKS=ON >/dev/null
fi
cmake --build "$build" -j "$jobs" --target spl-bench-targets | grep -v '^\[' | grep -v '^ninja: ' || true
test -x "$build/benchmarks/spl-spmv-bench" && test -x "$build/tools/matgen/spl-matgen" ||
  { echo "setup-bench: the build failed" >&2; exit 1; }
