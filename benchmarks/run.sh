#!/usr/bin/env bash
# Runs the CPU SpMV benchmark suite and writes benchmarks/results/<date>-<machine>-cpu.{md,csv,png}.
#
#   benchmarks/run.sh [--scale S] [--max-nnz N] [--budget SECONDS] [--only NAME] [--threads N]
#
#   --scale S    multiplies the rows and entries of every mirrored matrix (default 0.5: the
#                banded, stencil and FEM mirrors are then larger than a 32 MiB L3 cache, the run
#                needs about 2 GiB and about 10 minutes on 2 cores)
#   --max-nnz N  caps the entries of a scaled matrix at N, scaling its rows down with them so its
#                average row length stays (default 16000000; 0: no cap). Only the largest graphs
#                (kron_g500-logn21, hollywood-2009, soc-LiveJournal1, ...) reach it.
#   --budget     timing budget per implementation and thread count (default 0.2 s)
#   --only NAMES one matrix of the suite, or several separated by commas (results then go to
#                the build folder, not results/)
#   --generate-only  generate (or check) the matrices and stop
#   --threads N  the "all cores" thread count (default: all cores)
# Environment: SPL_BENCH_BUILD_DIR (default build-bench, configured by tools/setup-bench.sh),
#              SPL_BENCH_PREBUILT=1 (use the binaries in the build folder as they are, without
#              ninja: a folder made by tools/device-bundle.sh on a machine without the toolchain),
#              SPL_BENCH_MACHINE (the machine's name in the file names; default from the CPU),
#              SPL_BENCH_COMMIT (the commit to record; default: git rev-parse, +dirty when the
#              tree has changes).
# The matrices are generated with spl-matgen into the build folder (never the repository) and
# reused while their generator arguments stay the same.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${SPL_BENCH_BUILD_DIR:-$root/build-bench}"
case "$build" in /*) ;; *) build="$root/$build" ;; esac
scale=0.5
maxnnz=16000000
budget=0.2
only=""
threads=""
genonly=0
while [ $# -gt 0 ]; do
  case "$1" in
    --scale) scale="$2"; shift 2 ;;
    --max-nnz) maxnnz="$2"; shift 2 ;;
    --budget) budget="$2"; shift 2 ;;
    --only) only="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --generate-only) genonly=1; shift ;;
    -h|--help) sed -n '2,23p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
if ! awk -v s="$scale" 'BEGIN { exit !(s > 0 && s <= 4) }'; then
  echo "run.sh: --scale must be in (0, 4]" >&2; exit 2
fi

if [ -z "${SPL_BENCH_PREBUILT:-}" ]; then
  if [ ! -f "$build/build.ninja" ]; then
    echo "run.sh: no build in $build; run tools/setup-bench.sh first" >&2; exit 1
  fi
  ninja -C "$build" spl-bench-targets | grep -v '^\[' | grep -v "^ninja: " || true
fi
bench="$build/benchmarks/spl-spmv-bench"
matgen="$build/tools/matgen/spl-matgen"
{ [ -x "$bench" ] || [ "$genonly" = 1 ]; } && [ -x "$matgen" ] || { echo "run.sh: the benchmark targets did not build" >&2; exit 1; }

matdir="$build/bench-matrices/scale-$scale-cap-$maxnnz"
mkdir -p "$matdir"
manifest="$matdir/manifest.tsv"
: > "$manifest"
rm -f "$matdir/pending.tsv"
echo "run.sh: generating the suite at scale $scale into $matdir"
seed=1
while IFS=$'\t' read -r name group class rows cols nnz kind extra; do
  case "$name" in ''|'#'*) continue ;; esac
  seed=$((seed + 1))
  if [ -n "$only" ] && [[ ",$only," != *",$name,"* ]]; then continue; fi
  read -r r c z <<<"$(awk -v s="$scale" -v r="$rows" -v c="$cols" -v z="$nnz" -v k="$kind" -v cap="$maxnnz" 'BEGIN {
    f = (k == "dense") ? sqrt(s) : s
    R = r * f; C = c * f; Z = z * s
    if (cap > 0 && Z > cap && k != "dense") { g = cap / Z; R *= g; C *= g; Z = cap }
    R = int(R + 0.5); C = int(C + 0.5); Z = int(Z + 0.5)
    if (R < 64) R = 64; if (C < 64) C = 64; if (Z < R) Z = R
    printf "%d %d %d\n", R, C, Z }')"
  case "$kind" in
    dense) args="dense --rows $r --cols $c" ;;
    stencil*) args="$kind --rows $r" ;;
    ba) args="ba --rows $r --degree $(awk -v z="$nnz" -v r="$rows" 'BEGIN { printf "%d", z / (2 * r) + 0.5 }')" ;;
    varied) args="varied --rows $r --cols $c" ;;  # the row lengths (in extra) give the entries
    *) args="$kind --rows $r --cols $c --nnz $z" ;;
  esac
  args="$args ${extra:-} --seed $seed"
  args="$(echo "$args" | tr -s ' ')"
  file="$matdir/$name.mtx"
  if [ ! -f "$file" ] || [ "$(cat "$file.args" 2>/dev/null)" != "$args" ]; then
    printf '  %-18s spl-matgen %s\n' "$name" "$args"
    printf '%s\t%s\n' "$file" "$args" >> "$matdir/pending.tsv"
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$group" "$class" "$rows" "$nnz" "$file" "spl-matgen $args" >> "$manifest"
done < "$root/benchmarks/suite.tsv"
# Generate what is missing, SPL_BENCH_GEN_JOBS at a time (default 1).
if [ -s "$matdir/pending.tsv" ]; then
  # shellcheck disable=SC2016
  xargs -d '\n' -P "${SPL_BENCH_GEN_JOBS:-1}" -I{} sh -c '
    file="$(printf "%s" "$1" | cut -f1)"; args="$(printf "%s" "$1" | cut -f2)"
    "$2" $args -o "$file.tmp" && mv "$file.tmp" "$file" && echo "$args" > "$file.args"' _ {} "$matgen" < "$matdir/pending.tsv"
  rm -f "$matdir/pending.tsv"
fi
# The real matrices bundled with the tests.
for f in "$root"/tests/data/matrices/*.mtx "$root"/tests/data/matrices/*.rua; do
  base="$(basename "$f")"; name="${base%.*}"
  [ "$name" = wrong ] && continue
  if [ -n "$only" ] && [[ ",$only," != *",$name,"* ]]; then continue; fi
  printf '%s\treal\treal\t-\t-\t%s\t%s\n' "$name" "$f" "tests/data/matrices/$base" >> "$manifest"
done
[ -s "$manifest" ] || { echo "run.sh: no matrix matches --only $only" >&2; exit 2; }
if [ "$genonly" = 1 ]; then echo "run.sh: the matrices are in $matdir"; exit 0; fi

date="$(date -u +%F)"
. "$root/benchmarks/bench-env.sh"
machine="$(bench_machine)"
commit="$(bench_commit)"
if [ -n "$only" ]; then out="$build/bench-results/$date-$machine-cpu-$only"; else out="$root/benchmarks/results/$date-$machine-cpu"; fi
mkdir -p "$(dirname "$out")" "$build/bench-results"
log="$build/bench-results/$date-$machine-cpu${only:+-$only}.log"

# OpenMP threads that spin after a parallel region (libgomp's default) take the second core from
# the SPL thread pool's worker when the implementations run interleaved: SPL's 2-thread CSR then
# ran no faster than 1 thread (pwtk: 3.06 ms against 1.55 ms alone). With the passive policy every
# runtime blocks when idle, as SPL's pool does; set OMP_WAIT_POLICY to override.
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"
echo "run.sh: load average $(cut -d' ' -f1-3 /proc/loadavg) (benchmarks want a quiet machine)"
extra_args=()
[ -n "$threads" ] && extra_args+=(--threads "$threads")
"$bench" --manifest "$manifest" --csv "$out.csv" --md "$out.md" --budget "$budget" \
  --commit "$commit" --date "$date" --scale "$scale, entries capped at $maxnnz" "${extra_args[@]}" | tee "$log"

python=""
for p in /usr/bin/python3 python3; do
  if "$p" -c 'import matplotlib' 2>/dev/null; then python="$p"; break; fi
done
if [ -n "$python" ]; then
  "$python" "$root/benchmarks/plot.py" "$out.csv" "$out.png"
else
  echo "run.sh: no python3 with matplotlib (tools/setup-bench.sh installs python3-matplotlib); no plot" >&2
fi
echo "run.sh: wrote $out.md, $out.csv${python:+, $out.png} (log: $log)"
