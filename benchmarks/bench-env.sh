# bench-env.sh: what the benchmark scripts (run.sh, run-spmm.sh, run-blas.sh, run-petsc.sh) record of a run, sourced by
# them: the machine's name for the results' file names (SPL_BENCH_MACHINE, or the CPU's model
# and core count) and the commit (SPL_BENCH_COMMIT, or git's short hash, +dirty when the tree
# has changes). Needs $root, the repository.
bench_machine() {
  echo "${SPL_BENCH_MACHINE:-$( (lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1) | tr 'A-Z' 'a-z' | tr -cs 'a-z0-9' '-' | sed 's/^-//; s/-$//')-$(nproc)c}"
}
bench_commit() {
  if [ -n "${SPL_BENCH_COMMIT:-}" ]; then
    echo "$SPL_BENCH_COMMIT"
    return
  fi
  local c
  c="$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  if [ -n "$(git -C "$root" status --porcelain 2>/dev/null)" ]; then c="$c+dirty"; fi
  echo "$c"
}
