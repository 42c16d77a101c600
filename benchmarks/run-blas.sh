#!/usr/bin/env bash
# Runs libsplblas against OpenBLAS (benchmarks/blas_bench.c: one process, both libraries loaded
# with dlopen, on 1 and 2 threads) and writes benchmarks/results/<date>-<machine>-blas.{md,csv,png}.
#
#   benchmarks/run-blas.sh [--threads 1,2] [--quick] [--only gemm_NN,gemm_TN,...] [--sizes 32,64,...]
#                          [--name SUFFIX]
#
# --only measures those routines alone (named as the report names them, spaces as
# underscores); --sizes measures levels 1 and 2 alone at those sizes (at most eight; the small
# operands of LAPACK's unblocked steps) in place of their defaults; --name adds -SUFFIX to the
# result files' names.
#
# Environment: SPL_BENCH_BUILD_DIR (the build folder whose runtime/blas/libsplblas.so is
# measured; default build), SPL_BLAS_OPENBLAS (OpenBLAS's libblas.so.3; default the multiarch
# openblas-pthread one: apt install libopenblas-dev), SPL_BENCH_MACHINE, SPL_BENCH_COMMIT.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${SPL_BENCH_BUILD_DIR:-$root/build}"
case "$build" in /*) ;; *) build="$root/$build" ;; esac
threads="1,2"
quick=""
only=()
sizes=()
suffix=""
while [ $# -gt 0 ]; do
  case "$1" in
    --threads) threads="$2"; shift 2 ;;
    --quick) quick="--quick"; shift ;;
    --only) only=(--only "$2"); shift 2 ;;
    --sizes) sizes=(--sizes "$2"); shift 2 ;;
    --name) suffix="-$2"; shift 2 ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "run-blas.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
spl="$build/runtime/blas/libsplblas.so"
arch="$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)"
openblas="${SPL_BLAS_OPENBLAS:-/usr/lib/$arch/openblas-pthread/libblas.so.3}"
[ -f "$spl" ] || { echo "run-blas.sh: $spl not built (ninja -C $build splblas_shared)" >&2; exit 1; }
[ -f "$openblas" ] || { echo "run-blas.sh: no OpenBLAS at $openblas (apt install libopenblas-dev)" >&2; exit 1; }
bench="$build/benchmarks/spl-blas-bench"
mkdir -p "$(dirname "$bench")"
cc -O2 -fopenmp "$root/benchmarks/blas_bench.c" -o "$bench" -ldl -lm

machine="${SPL_BENCH_MACHINE:-$(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1 | tr -s ' ')}"
. "$root/benchmarks/bench-env.sh"
commit="$(bench_commit)"
date="$(date +%F)"
out="$root/benchmarks/results/$date-$(bench_machine)-blas$suffix"
[ -n "$quick" ] && out="$build/benchmarks/$date-blas-quick"
csv="$out.csv"
{
  echo "# machine: $machine, $(nproc) cores; date: $date; commit: $commit; libsplblas: $spl; OpenBLAS: $(readlink -f "$openblas"); load: $(cut -d' ' -f1-3 /proc/loadavg)"
  [ ${#sizes[@]} -eq 0 ] || echo "# sizes: levels 1 and 2 at n = ${sizes[1]} (--sizes), no level 3"
  first=1
  for t in ${threads//,/ }; do
    SPL_NUM_THREADS=$t OPENBLAS_NUM_THREADS=$t OMP_NUM_THREADS=$t "$bench" "$spl" "$openblas" "$t" $quick "${only[@]}" "${sizes[@]}" | if [ $first = 1 ]; then cat; else tail -n +2; fi
    first=0
  done
  echo "# load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$csv"
py=python3; [ -x /usr/bin/python3 ] && py=/usr/bin/python3  # the system one has matplotlib (apt)
"$py" "$root/benchmarks/blas_report.py" "$csv" "$out.md" "$out.png"
echo "run-blas.sh: $out.{md,csv,png}"
