#!/usr/bin/env bash
# Builds the whole project with AddressSanitizer and UndefinedBehaviorSanitizer (SPL_SANITIZE:
# undefined behaviour aborts) in build-asan/ and runs the test suite there: splc, the runtime,
# the generated kernels and the tests all run instrumented. Extra arguments go to ctest (e.g.
# -E 'fuzz/' to skip the slower fuzzing tests). Takes about 25 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
SPL_NO_BUILD=1 tools/setup.sh
build="${SPL_ASAN_BUILD_DIR:-build-asan}"
cmake -G Ninja -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DSPL_SANITIZE=ON >/dev/null
cmake --build "$build" -j "${SPL_JOBS:-$(nproc)}"
UBSAN_OPTIONS="print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}" \
  ctest --test-dir "$build" --output-on-failure -j "${SPL_JOBS:-$(nproc)}" -E 'gpu/Matrices|install' "$@"
