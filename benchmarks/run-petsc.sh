#!/usr/bin/env bash
# MatMult through PETSc's MPIAIJ against SPL's shell (benchmarks/petsc_bench.c) on 1 and 2 ranks,
# one thread per rank, and writes benchmarks/results/<date>-<machine>-petsc.{md,csv}.
#
#   benchmarks/run-petsc.sh [--ranks 1,2] [--matrices cant,rma10,...] [--laplacian 1000] [--rounds 60]
#
# The suite's matrices are spl-matgen's mirrors at scale 0.5 (benchmarks/run.sh --generate-only,
# into the build folder); the Laplacian is 2D, k x k rows (10^6 by default). Needs libsplpetsc
# (PETSc and MPI found at configure time). Environment: SPL_BENCH_BUILD_DIR (default build),
# SPL_BENCH_MACHINE, SPL_BENCH_COMMIT.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${SPL_BENCH_BUILD_DIR:-$root/build}"
case "$build" in /*) ;; *) build="$root/$build" ;; esac
ranks="1,2"
matrices="cant,rma10,pwtk,thermal2,web-Google,roadNet-CA"
laplacian=1000
rounds=60
while [ $# -gt 0 ]; do
  case "$1" in
    --ranks) ranks="$2"; shift 2 ;;
    --matrices) matrices="$2"; shift 2 ;;
    --laplacian) laplacian="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "run-petsc.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
lib="$build/runtime/petsc/libsplpetsc.so"
[ -f "$lib" ] || { echo "run-petsc.sh: $lib not built (PETSc and MPI at configure time: tools/setup.sh)" >&2; exit 1; }
bench="$build/benchmarks/spl-petsc-bench"
mkdir -p "$(dirname "$bench")"
# shellcheck disable=SC2046
mpicc -O2 "$root/benchmarks/petsc_bench.c" "$root/tests/petsc/dist_matrix.c" -o "$bench" \
  -I "$root/runtime/petsc/include" -I "$root/tests/petsc" -I "$root/tools/matrix" $(pkg-config --cflags PETSc) \
  "$lib" "$build/tools/matrix/libsplmatrix.a" $(pkg-config --libs PETSc) -lm -Wl,-rpath,"$(dirname "$lib")"

# The suite's matrices (generated once, kept in the build folder).
SPL_BENCH_PREBUILT=1 SPL_BENCH_BUILD_DIR="$build" "$root/benchmarks/run.sh" --generate-only --only "$matrices" > /dev/null
manifest="$build/bench-matrices/scale-0.5-cap-16000000/manifest.tsv"
files="" names=""
for m in ${matrices//,/ }; do
  f="$(awk -F'\t' -v n="$m" '$1 == n { print $6 }' "$manifest")"
  [ -n "$f" ] || { echo "run-petsc.sh: no matrix $m in $manifest" >&2; exit 1; }
  files="$files${files:+,}$f"; names="$names${names:+,}$m"
done

cores="$(nproc --all)"  # before OMP_NUM_THREADS=1 below, which nproc obeys
machine="${SPL_BENCH_MACHINE:-$(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1 | tr -s ' ')}"
. "$root/benchmarks/bench-env.sh"
commit="$(bench_commit)"
date="$(date +%F)"
out="$root/benchmarks/results/$date-$(bench_machine)-petsc"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
  OMPI_MCA_btl=self,vader,tcp OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo \
  OMPI_MCA_btl_vader_single_copy_mechanism=none SPL_NUM_THREADS=1 OMP_NUM_THREADS=1
{
  echo "# machine: $machine, $cores cores; date: $date; commit: $commit; PETSc $(pkg-config --modversion PETSc); $(mpiexec --version | head -1); one thread per rank; the suite's matrices at scale 0.5 (spl-matgen), a 2D Laplacian of ${laplacian} x ${laplacian}; $rounds rounds; load: $(cut -d' ' -f1-3 /proc/loadavg)"
  first=1
  for n in ${ranks//,/ }; do
    mpiexec -n "$n" "$bench" -files "$files" -names "$names" -laplacian "$laplacian" -rounds "$rounds" \
      | if [ $first = 1 ]; then cat; else tail -n +2; fi
    first=0
  done
  echo "# load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$out.csv"
py=python3; [ -x /usr/bin/python3 ] && py=/usr/bin/python3
"$py" "$root/benchmarks/petsc_report.py" "$out.csv" "$out.md"
echo "run-petsc.sh: $out.{md,csv}"
