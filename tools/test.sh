#!/usr/bin/env bash
# Sets up, builds and runs the whole test suite through ctest. GPU tests (label gpu) skip
# cleanly on machines without a CUDA driver.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
build="${SPL_BUILD_DIR:-build}"
ctest --test-dir "$build" --output-on-failure -j "${SPL_JOBS:-$(nproc)}" "$@"
