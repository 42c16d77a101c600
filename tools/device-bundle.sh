#!/usr/bin/env bash
# Packs what a lent GPU machine needs for the GPU tests and benchmarks (issues 6 and 7) into
# build-device/ (ignored by git, like every build folder). That machine has a driver and the CUDA
# toolkit but not this project's toolchain (LLVM 22, ANTLR, isl, Eigen), so everything is built
# here and only binaries travel:
#   build-device/tests/gpu_*_tests          the GPU execution tests (ctest label gpu): static
#                                           gtest and libsplrt, libcuda.so.1 loaded with dlopen
#   build-device/benchmarks/spl-gpu-bench   SPL against cuSPARSE (cudart and cuSPARSE from the
#                                           machine's toolkit)
#   build-device/tools/matgen/spl-matgen    the suite is generated there (2.8 GB at scale 0.5:
#                                           too large to carry)
# The device tool's run then takes, with carry ["build-device"]:
#   tools/device-run.sh COMMIT
# (tools/device-run.sh says what comes back). Uses the test build (SPL_BUILD_DIR, default build)
# and the benchmark build (SPL_BENCH_BUILD_DIR, default build-bench, see tools/setup-bench.sh);
# both must have found the CUDA toolkit.
#   tools/device-bundle.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
tests_build="${SPL_BUILD_DIR:-$root/build}"
bench_build="${SPL_BENCH_BUILD_DIR:-$root/build-bench}"
bundle="$root/build-device"
gpu_tests=(gpu_tests gpu_checked_tests gpu_contract_tests gpu_rows_tests gpu_rows_vector_tests gpu_schedules_tests gpu_sell_tests gpu_sell_wide_tests gpu_temps_tests)

for b in "$tests_build" "$bench_build"; do
  [ -f "$b/CMakeCache.txt" ] || { echo "device-bundle.sh: no build in $b (tools/setup.sh, tools/setup-bench.sh)" >&2; exit 1; }
done
cmake --build "$tests_build" --target "${gpu_tests[@]}"
cmake --build "$bench_build" --target spl-gpu-bench spl-matgen

rm -rf "$bundle"
mkdir -p "$bundle/tests" "$bundle/benchmarks" "$bundle/tools/matgen"
for t in "${gpu_tests[@]}"; do cp "$tests_build/tests/gpu/$t" "$bundle/tests/"; done
cp "$bench_build/benchmarks/spl-gpu-bench" "$bundle/benchmarks/"
cp "$bench_build/tools/matgen/spl-matgen" "$bundle/tools/matgen/"
# The device tool carries at most 64 MiB with the working tree.
size_kib="$(du -sk "$bundle" | cut -f1)"
if [ "$size_kib" -gt $((48 * 1024)) ]; then
  echo "device-bundle.sh: build-device is $((size_kib / 1024)) MiB, too close to the device tool's 64 MiB" >&2
  exit 1
fi
commit="$(git -C "$root" rev-parse --short HEAD)"
[ -z "$(git -C "$root" status --porcelain --untracked-files=no)" ] || commit="$commit+dirty"
echo "device-bundle.sh: build-device holds $((size_kib / 1024)) MiB; on the device tool:"
echo "  run(command=\"tools/device-run.sh $commit\", carry=[\"build-device\"], timeout_s=600)"
