#!/usr/bin/env bash
# The bundled copies of the contract examples and matrices must equal the shared originals;
# skipped (exit 77) when the shared folder is not beside the repository.
set -u
root="$(cd "$(dirname "$0")/.." && pwd)"
shared="$root/../shared"
[ -d "$shared/spec/examples" ] || { echo "no ../shared: skipped"; exit 77; }
status=0
for f in "$shared"/spec/examples/*.spl; do
  cmp -s "$f" "$root/tests/contract/$(basename "$f")" || { echo "tests/contract/$(basename "$f") differs from $f"; status=1; }
done
for f in "$shared"/data/matrices/*; do
  cmp -s "$f" "$root/tests/data/matrices/$(basename "$f")" || { echo "tests/data/matrices/$(basename "$f") differs from $f"; status=1; }
done
[ $status = 0 ] && echo "bundled copies match ../shared"
exit $status
