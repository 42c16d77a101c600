#!/usr/bin/env bash
# libFuzzer runs of splc's fuzz target, by hand (CI runs the seeded driver instead, ctest
# fuzz/frontend_in_process). The target (tests/fuzz/FrontendFuzzer.cpp: parse, type check,
# lower, LLVM IR; a rejection must open with a located error) is compiled with clang-14
# -fsanitize=fuzzer and linked against the compiler library of the normal GCC build: Debian's
# ANTLR 4.9 runtime headers do not compile with Clang, so the library itself is not
# instrumented (with a Clang-compatible runtime, -DSPL_LIBFUZZER=ON instruments the whole
# build). Runs SECONDS (default 600) on build/fuzz-corpus, seeded with the contract examples and
# the stdlib; libFuzzer writes a failing input as crash-* in the current folder.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-600}"
build="${SPL_BUILD_DIR:-build}"
tools/setup.sh
for p in clang-14 libfuzzer-14-dev; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || {
    sudo=""; [ "$(id -u)" -ne 0 ] && sudo=sudo
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$p" >/dev/null
  }
done
out="$build/fuzz"
mkdir -p "$out" "$build/fuzz-corpus"
clang++-14 -std=c++17 -O1 -g -fsanitize=fuzzer -I compiler -I "$build/compiler/generated" -I runtime/include \
  -c tests/fuzz/FrontendFuzzer.cpp -o "$out/FrontendFuzzer.o"
# The libraries the normal build links splc with (from its link line), after the harness.
libs=$(awk '/^build bin\/splc:/{f=1} f&&/LINK_LIBRARIES/{sub(/^ *LINK_LIBRARIES = /,""); print; exit}' "$build/build.ninja")
(cd "$build" && clang++-14 -fsanitize=fuzzer -fuse-ld=lld "fuzz/FrontendFuzzer.o" -o fuzz/spl_libfuzzer $libs -lpthread)
cp -n tests/contract/*.spl stdlib/*.spl "$build/fuzz-corpus/" 2>/dev/null || true
"$out/spl_libfuzzer" -max_total_time="$seconds" -max_len=8192 -timeout=20 -dict=tests/fuzz/spl.dict "$build/fuzz-corpus"
