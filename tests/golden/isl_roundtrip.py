#!/usr/bin/env python3
"""Every loop of the contract examples comes from isl's AST (poly/IslCodegen), and isl's AST
reproduces the loops the schedules chose: for each example and target, `--emit=isl` lists no
region that kept its own loops, and the loop IR is the same as when the scheduled loops are
lowered directly (`--no-isl-codegen`). A difference is a change the AST made to bounds, guards or
loop order: a bug, or an improvement to record in a golden test of its own (isl_codegen.spl).

usage: isl_roundtrip.py SPLC EXAMPLE.spl [EXAMPLE.spl ...]
"""
import difflib
import subprocess
import sys


def emit(splc, path, target, *extra):
    r = subprocess.run([splc, path, "--target=" + target, *extra], capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


def main():
    splc, examples = sys.argv[1], sys.argv[2:]
    failures = 0
    checked = 0
    for path in examples:
        for target in ("cpu", "cuda"):
            rc, isl, err = emit(splc, path, target, "--emit=isl")
            if rc != 0:
                print(f"{path} ({target}): splc --emit=isl failed:\n{err}")
                failures += 1
                continue
            if "ast " not in isl:
                continue  # no export for this target
            checked += 1
            kept = [l for l in isl.splitlines() if l.startswith("kept ")]
            for line in kept:
                print(f"{path} ({target}): {line}")
            failures += len(kept)
            _, through_isl, _ = emit(splc, path, target, "--emit=loopir")
            _, direct, _ = emit(splc, path, target, "--emit=loopir", "--no-isl-codegen")
            if through_isl != direct:
                failures += 1
                print(f"{path} ({target}): isl's loops differ from the scheduled ones:")
                sys.stdout.writelines(difflib.unified_diff(direct.splitlines(True), through_isl.splitlines(True),
                                                           "direct", "isl", n=2))
    print(f"{checked} (file, target) pairs checked, {failures} failures")
    if checked == 0:
        print("nothing was checked")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
