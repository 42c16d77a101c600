#!/usr/bin/env bash
# Runs on a lent GPU machine (the device tool), in the repository root, with build-device/
# carried (made here by tools/device-bundle.sh): the GPU tests, then the GPU benchmarks. Writes
# under $OUT, which comes back (the tool returns at most 8 files):
#   device.txt         nvidia-smi, the toolkit, the kernel
#   tests.log          every GPU test binary's output; tests-summary.txt: one line per binary
#   gpu.csv, gpu.md, gpu.log   benchmarks/run-gpu.sh's results (to copy into benchmarks/results/)
# It stops the benchmarks in time for the results to come back within one call's 10 minutes.
#   tools/device-run.sh COMMIT [--tests-only | --bench-only] [--runs N] [--only NAME] [--budget S]
# COMMIT is recorded in the results (the tree that travels has no .git). --budget: seconds for
# the whole script (default 560).
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bundle="$root/build-device"
out="${OUT:-$bundle/out}"
commit="${1:?usage: tools/device-run.sh COMMIT [--tests-only|--bench-only] [--runs N] [--only NAME] [--budget S]}"
shift
tests=1; bench=1; runs=100; only=""; budget=560
while [ $# -gt 0 ]; do
  case "$1" in
    --tests-only) bench=0; shift ;;
    --bench-only) tests=0; shift ;;
    --runs) runs="$2"; shift 2 ;;
    --only) only="$2"; shift 2 ;;
    --budget) budget="$2"; shift 2 ;;
    *) echo "device-run.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
start=$SECONDS
mkdir -p "$out"
[ -d "$bundle/tests" ] || { echo "device-run.sh: no build-device/ (run tools/device-bundle.sh here and carry it)" >&2; exit 1; }

# The toolkit's libraries (cudart, cuSPARSE, nvJitLink) for spl-gpu-bench: the usual folders, and
# wherever the machine keeps one that the loader does not find.
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}"
for lib in $(ldd "$bundle/benchmarks/spl-gpu-bench" 2>/dev/null | awk '/not found/ { print $1 }'); do
  found="$(find /usr/local /opt /usr/lib -name "$lib" 2>/dev/null | head -1)"
  [ -n "$found" ] && export LD_LIBRARY_PATH="$(dirname "$found"):$LD_LIBRARY_PATH"
done
export SPL_TEST_MATRICES_DIR="$root/tests/data/matrices"

{
  echo "commit $commit, $(date -u +%FT%TZ)"
  nvidia-smi 2>&1
  nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem,driver_version --format=csv 2>&1
  command -v nvcc >/dev/null && nvcc --version 2>&1 | tail -2
  uname -a
  echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
  ldd "$bundle/benchmarks/spl-gpu-bench" 2>&1 | grep -E "cuda|cusparse|nvJit|not found"
} > "$out/device.txt" 2>&1

rc=0
if [ "$tests" = 1 ]; then
  : > "$out/tests.log"
  : > "$out/tests-summary.txt"
  for t in "$bundle"/tests/*; do
    name="$(basename "$t")"
    echo "== $name" >> "$out/tests.log"
    timeout 240 "$t" --gtest_color=no >> "$out/tests.log" 2>&1
    code=$?
    [ "$code" = 0 ] || rc=1
    # One summary line per binary: its exit status and gtest's counts (from its last block).
    awk -v n="$name" -v c="$code" 'BEGIN { p = s = f = 0 }
      $0 == "== " n { p = s = f = 0; inside = 1; next }
      /^== / { inside = 0 }
      inside && /^\[  PASSED  \]/ { p = $4 }
      inside && /^\[  SKIPPED \] [0-9]/ { s = $4 }
      inside && /^\[  FAILED  \] [0-9]/ { f = $4 }
      END { printf "%-22s exit %s  passed %s  skipped %s  failed %s\n", n, c, p, s, f }' "$out/tests.log" >> "$out/tests-summary.txt"
  done
  cat "$out/tests-summary.txt"
fi

if [ "$bench" = 1 ]; then
  left=$((budget - (SECONDS - start)))
  if [ "$left" -lt 60 ]; then
    echo "device-run.sh: no time left for the benchmarks" | tee -a "$out/device.txt"
  else
    before="$(date +%s)"
    onlyArgs=(); [ -n "$only" ] && onlyArgs=(--only "$only")
    SPL_BENCH_BUILD_DIR="$bundle" SPL_BENCH_PREBUILT=1 SPL_BENCH_COMMIT="$commit" \
      timeout "$left" "$root/benchmarks/run-gpu.sh" --runs "$runs" "${onlyArgs[@]}" > "$out/bench-stdout.txt" 2>&1
    code=$?
    if [ "$code" != 0 ]; then
      rc=1
      why=""; [ "$code" = 124 ] && why=" (out of time: the results are partial)"; [ "$code" = 77 ] && why=" (no CUDA device)"
      echo "device-run.sh: run-gpu.sh exited $code$why" | tee -a "$out/device.txt"
    fi
    # run-gpu.sh writes benchmarks/results/DATE-DEVICE-gpu.* (build-device/bench-results/ with --only).
    for ext in csv md log; do
      f="$(find "$root/benchmarks/results" "$bundle/bench-results" -name "*-gpu*.$ext" -newermt "@$before" 2>/dev/null | head -1)"
      [ -n "$f" ] && cp "$f" "$out/gpu.$ext"
    done
    tail -5 "$out/bench-stdout.txt" >> "$out/device.txt"
    rm -f "$out/bench-stdout.txt"
    [ -f "$out/gpu.md" ] && cat "$out/gpu.md"
  fi
fi
exit "$rc"
