#!/usr/bin/env bash
# Runs on a lent GPU machine (the device tool), in the repository root, with build-device/
# carried (made here by tools/device-bundle.sh): the GPU tests, then the GPU benchmarks, then at
# most one Nsight Compute profile. Writes under $OUT, which comes back (at most 8 files):
#   device.txt         nvidia-smi, the toolkit, the kernel, and what stopped early
#   tests.log          every GPU test binary's output; tests-summary.txt: one line per binary
#   gpu.csv, gpu.md, gpu.log   benchmarks/run-gpu.sh's results (to copy into benchmarks/results/)
#   ncu.txt            the profile (--ncu)
# Everything stops in time for the results to come back within one call's 10 minutes.
#   tools/device-run.sh COMMIT [--tests-only | --bench-only] [--runs N] [--only NAMES]
#                      [--kernels LIST] [--median-budget S] [--dense2csr-sizes N,...]
#                      [--ncu KERNEL_REGEX MATRIX] [--budget S]
# COMMIT is recorded in the results (the tree that travels has no .git). --only: matrices of the
# suite (comma-separated; default all); --kernels, --median-budget, --dense2csr-sizes:
# spl-gpu-bench's --kernels, --budget and --dense2csr-sizes. --budget: seconds for the whole
# script (default 560).
# A test binary that does not finish within its timeout is run again without the test that was
# running (the last "[ RUN ]" line), up to three times: a hang costs one timeout, not the rest of
# the binary, and tests-summary.txt names the tests that hung.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bundle="$root/build-device"
out="${OUT:-$bundle/out}"
commit="${1:?usage: tools/device-run.sh COMMIT [--tests-only|--bench-only] [--runs N] [--only NAMES] [--kernels LIST] [--median-budget S] [--ncu REGEX MATRIX] [--budget S]}"
shift
tests=1; bench=1; runs=100; only=""; budget=560; kernels=""; medianBudget=""; ncuKernel=""; ncuMatrix=""; d2cSizes=""
while [ $# -gt 0 ]; do
  case "$1" in
    --tests-only) bench=0; shift ;;
    --bench-only) tests=0; shift ;;
    --runs) runs="$2"; shift 2 ;;
    --only) only="$2"; shift 2 ;;
    --kernels) kernels="$2"; shift 2 ;;
    --median-budget) medianBudget="$2"; shift 2 ;;
    --dense2csr-sizes) d2cSizes="$2"; shift 2 ;;
    --ncu) ncuKernel="$2"; ncuMatrix="$3"; shift 3 ;;
    --budget) budget="$2"; shift 2 ;;
    *) echo "device-run.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
start=$SECONDS
left() { echo $((budget - (SECONDS - start))); }
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
    excluded=""; hung=""; code=0; p=0; s=0; f=0
    for attempt in 1 2 3 4; do
      [ "$(left)" -gt 60 ] || { echo "device-run.sh: no time left for $name" >> "$out/device.txt"; code=125; break; }
      echo "== $name${excluded:+ (without $excluded)}" >> "$out/tests.log"
      filter=(); [ -n "$excluded" ] && filter=(--gtest_filter="-$excluded")
      timeout -k 5 "${SPL_TEST_TIMEOUT:-45}" "$t" --gtest_color=no "${filter[@]}" > "$out/run.log" 2>&1
      code=$?
      cat "$out/run.log" >> "$out/tests.log"
      # gtest's counts, from this run's summary.
      p=$(awk '/^\[  PASSED  \]/ { print $4 }' "$out/run.log" | tail -1); s=$(awk '/^\[  SKIPPED \] [0-9]/ { print $4 }' "$out/run.log" | tail -1)
      f=$(awk '/^\[  FAILED  \] [0-9]/ { print $4 }' "$out/run.log" | tail -1)
      [ "$code" = 124 ] || break
      last="$(awk '/^\[ RUN      \]/ { t = $4 } END { print t }' "$out/run.log")"
      [ -n "$last" ] || break
      hung="$hung $last"
      excluded="${excluded:+$excluded:}$last"
    done
    rm -f "$out/run.log"
    [ "$code" = 0 ] && [ -z "$hung" ] || rc=1
    printf "%-24s exit %s  passed %s  skipped %s  failed %s%s\n" "$name" "$code" "${p:-0}" "${s:-0}" "${f:-0}" \
      "${hung:+  hung:$hung}" >> "$out/tests-summary.txt"
  done
  cat "$out/tests-summary.txt"
fi

if [ "$bench" = 1 ]; then
  reserve=0; [ -n "$ncuKernel" ] && reserve=90
  bleft=$(( $(left) - reserve ))
  if [ "$bleft" -lt 60 ]; then
    echo "device-run.sh: no time left for the benchmarks" | tee -a "$out/device.txt"
  else
    before="$(date +%s)"
    args=(--runs "$runs")
    [ -n "$only" ] && args+=(--only "$only")
    [ -n "$kernels" ] && args+=(--kernels "$kernels")
    [ -n "$medianBudget" ] && args+=(--budget "$medianBudget")
    [ -n "$d2cSizes" ] && args+=(--dense2csr-sizes "$d2cSizes")
    SPL_BENCH_BUILD_DIR="$bundle" SPL_BENCH_PREBUILT=1 SPL_BENCH_COMMIT="$commit" SPL_BENCH_GEN_JOBS="$(nproc)" \
      timeout "$bleft" "$root/benchmarks/run-gpu.sh" "${args[@]}" > "$out/bench-stdout.txt" 2>&1
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
    [ -f "$out/gpu.log" ] || cp "$out/bench-stdout.txt" "$out/gpu.log"
    tail -5 "$out/bench-stdout.txt" >> "$out/device.txt"
    rm -f "$out/bench-stdout.txt"
    [ -f "$out/gpu.md" ] && cat "$out/gpu.md"
  fi
fi

if [ -n "$ncuKernel" ]; then
  nleft=$(( $(left) - 15 ))
  matrix="$(ls "$bundle"/bench-matrices/*/"$ncuMatrix".mtx "$root/tests/data/matrices/$ncuMatrix".* 2>/dev/null | head -1)"
  ncu="$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)"
  if [ "$nleft" -lt 30 ] || [ -z "$matrix" ] || [ -z "$ncu" ]; then
    echo "device-run.sh: no ncu profile (time left ${nleft}s, matrix '${matrix}', ncu '${ncu}')" | tee -a "$out/device.txt"
  else
    timeout "$nleft" "$ncu" --clock-control none -k "regex:$ncuKernel" -c 2 \
      --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats \
      --section SchedulerStats --section WarpStateStats --section SourceCounters \
      "$bundle/benchmarks/spl-gpu-bench" --runs 20 --kernels spmv --budget 0.2 "$matrix" > "$out/ncu.txt" 2>&1 ||
      echo "device-run.sh: ncu exited $?" | tee -a "$out/device.txt"
  fi
fi
echo "device-run.sh: $((SECONDS - start)) s" >> "$out/device.txt"
exit "$rc"
