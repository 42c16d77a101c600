#!/usr/bin/env bash
# Runs the CPU SpMM benchmark (C = A B, spl-spmm-bench: SPL's kernel of any width and its plan
# against Eigen, a STREAM triad beside each group) on matrices of the suite and writes
# benchmarks/results/<date>-<machine>-spmm.{md,csv}.
#
#   benchmarks/run-spmm.sh [--only NAMES] [--widths 1,2,3,4,8,16,9] [--threads 1,2] [--budget S]
#                          [--calls N] [--scale S] [--max-nnz N]
#
#   --only NAMES  matrices of the suite, separated by commas (default: eight of its classes:
#                 pwtk, cant, thermal2, ecology1, web-Google, roadNet-CA, kron_g500-logn18,
#                 varied-uniform); results of a --only run go to the build folder
#   --widths      the widths k of B (default 1,2,3,4,8,16 with kernels of their own, and 9 without)
#   --calls       the calls the plan is told to expect (default 1000)
#   --scale, --max-nnz  as benchmarks/run.sh, which generates the matrices (--generate-only)
# Environment: as benchmarks/run.sh (SPL_BENCH_BUILD_DIR, SPL_BENCH_PREBUILT, SPL_BENCH_MACHINE,
# SPL_BENCH_COMMIT).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${SPL_BENCH_BUILD_DIR:-$root/build-bench}"
case "$build" in /*) ;; *) build="$root/$build" ;; esac
default_only="pwtk,cant,thermal2,ecology1,web-Google,roadNet-CA,kron_g500-logn18,varied-uniform"
only=""
widths="1,2,3,4,8,16,9"
threads="1,2"
budget=0.2
calls=1000
gen_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --only) only="$2"; shift 2 ;;
    --widths) widths="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --budget) budget="$2"; shift 2 ;;
    --calls) calls="$2"; shift 2 ;;
    --scale|--max-nnz) gen_args+=("$1" "$2"); shift 2 ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "run-spmm.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
if [ -z "${SPL_BENCH_PREBUILT:-}" ]; then
  ninja -C "$build" spl-bench-targets | grep -v '^\[' | grep -v "^ninja: " || true
fi
bench="$build/benchmarks/spl-spmm-bench"
[ -x "$bench" ] || { echo "run-spmm.sh: $bench did not build" >&2; exit 1; }
# run.sh generates the matrices and writes their manifest beside them.
gen_log="$("$root/benchmarks/run.sh" --generate-only --only "${only:-$default_only}" "${gen_args[@]}")"
echo "$gen_log" | tail -1
matdir="$(echo "$gen_log" | sed -n 's/^run.sh: the matrices are in //p' | tail -1)"
[ -s "$matdir/manifest.tsv" ] || { echo "run-spmm.sh: no manifest in $matdir" >&2; exit 1; }

date="$(date -u +%F)"
. "$root/benchmarks/bench-env.sh"
machine="$(bench_machine)"
commit="$(bench_commit)"
if [ -n "$only" ]; then out="$build/bench-results/$date-$machine-spmm-$only"; else out="$root/benchmarks/results/$date-$machine-spmm"; fi
mkdir -p "$(dirname "$out")" "$build/bench-results"
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}" # as run.sh: idle OpenMP threads must not spin
echo "run-spmm.sh: load average $(cut -d' ' -f1-3 /proc/loadavg) (benchmarks want a quiet machine)"
"$bench" --manifest "$matdir/manifest.tsv" --md "$out.md" --csv "$out.csv" --widths "$widths" --threads "$threads" \
  --budget "$budget" --calls "$calls" --git "$commit" 2>&1 | tee "$build/bench-results/$date-$machine-spmm${only:+-$only}.log"
echo "run-spmm.sh: wrote $out.md, $out.csv"
