#!/usr/bin/env bash
# Coverage-guided fuzzing of splc with libFuzzer, by hand (CI runs the seeded driver instead):
# builds build-fuzz/ with Clang and SPL_LIBFUZZER=ON (every file instrumented for coverage),
# then runs the fuzz target (tests/fuzz/FrontendFuzzer.cpp: parse, type check, lower, LLVM IR;
# a rejection must be a located diagnostic) for SECONDS (default 600) on a corpus kept in
# build-fuzz/corpus, seeded with the contract examples and the stdlib. A failing input is
# written by libFuzzer as crash-* in the current folder.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-600}"
SPL_NO_BUILD=1 tools/setup.sh
for p in clang-14 libfuzzer-14-dev; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || {
    sudo=""; [ "$(id -u)" -ne 0 ] && sudo=sudo
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$p" >/dev/null
  }
done
build="${SPL_FUZZ_BUILD_DIR:-build-fuzz}"
cmake -G Ninja -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=clang-14 \
  -DCMAKE_CXX_COMPILER=clang++-14 -DSPL_LIBFUZZER=ON -DSPL_BUILD_TESTS=ON >/dev/null
cmake --build "$build" -j "${SPL_JOBS:-$(nproc)}" --target spl_fuzz_frontend
mkdir -p "$build/corpus"
cp -n tests/contract/*.spl stdlib/*.spl "$build/corpus/" 2>/dev/null || true
"$build/tests/fuzz/spl_fuzz_frontend" -max_total_time="$seconds" -max_len=8192 -timeout=20 "$build/corpus"
