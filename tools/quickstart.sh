#!/usr/bin/env bash
# From a fresh machine to a running SpMV: sets up and builds SPL, compiles the stdlib's CSR
# SpMV to an object and a C header, links it into a small C program with the runtime, and runs
# it on a bundled real matrix, printing the checksum of y = A x and the time per SpMV.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
build="${SPL_BUILD_DIR:-build}"
out="$build/quickstart"
mkdir -p "$out"
matrix="${1:-tests/data/matrices/utm300.rua}"
"$build/bin/splc" stdlib/spmv.spl --target=cpu -o "$out/spmv.o" --header "$out/spmv.h"
cc -O2 -std=c11 tools/quickstart/main.c "$out/spmv.o" -I "$out" -I tools/matrix \
   "$build/tools/matrix/libsplmatrix.a" -L "$build/runtime" -lsplrt -lm \
   -Wl,-rpath,"$PWD/$build/runtime" -o "$out/spmv"
echo "quickstart: splc stdlib/spmv.spl -> $out/spmv.o + spmv.h; cc main.c spmv.o -lsplrt"
"$out/spmv" "$matrix"
