#!/usr/bin/env bash
# ptxas_check.sh SPLC FILE.spl [SPLC FLAGS...]: the PTX of every cuda export of FILE (compiled
# with the flags, e.g. --checked) must assemble for sm_90.
# Exit 77 (ctest: skipped) when the CUDA toolkit's ptxas is not installed.
set -euo pipefail
splc="$1"; file="$2"; shift 2
ptxas="${SPL_PTXAS:-/usr/local/cuda/bin/ptxas}"
[ -x "$ptxas" ] || { echo "ptxas not found: skipped"; exit 77; }
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
"$splc" "$file" --target=cuda --emit=ptx -o "$tmp/k.ptx" "$@"
[ -s "$tmp/k.ptx" ] || { echo "no PTX produced for $file"; exit 1; }
"$ptxas" -arch=sm_90 "$tmp/k.ptx" -o "$tmp/k.cubin"
echo "ptxas -arch=sm_90: ok ($(grep -c '^.visible .entry' "$tmp/k.ptx") kernels)"
