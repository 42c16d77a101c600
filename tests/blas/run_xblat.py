#!/usr/bin/env python3
"""Runs one of netlib's BLAS test programs (Debian's libblas-test: xblat1s/d, xblat2s/d,
xblat3s/d, and the CBLAS ones xscblat1/2/3, xdcblat1/2/3) on libsplblas, and fails unless every
routine it tests passes.

usage: run_xblat.py LIBSPLBLAS PROGRAM [INPUT.in]

The programs load libblas.so.3 by name, so the test runs in a directory of its own whose
libblas.so.3 is a link to libsplblas, with LD_LIBRARY_PATH on it and LD_BIND_NOW=1 (a routine
libsplblas lacks fails at load; LD_PRELOAD would fall back to the system BLAS without a word).
The exit status of the programs is 0 even when a routine fails, so the output decides: level 1
passes when every routine prints PASS and none FAIL; levels 2 and 3 when every routine passed
the computational tests (the CBLAS programs: in column-major and in row-major layout) and the
tests of error exits and the output ends with END OF TESTS.
Exit 77 (ctest's skip) where the program is not installed (apt install libblas-test)."""
import os
import re
import shutil
import subprocess
import sys
import tempfile


def main():
    if len(sys.argv) not in (3, 4):
        print(__doc__)
        return 2
    lib, prog = os.path.abspath(sys.argv[1]), sys.argv[2]
    inp = sys.argv[3] if len(sys.argv) == 4 else None
    if not os.path.exists(prog) or (inp and not os.path.exists(inp)):
        print(f"SKIP: {prog} is not installed (apt install libblas-test; tools/setup.sh does)")
        return 77
    with tempfile.TemporaryDirectory(prefix="spl-xblat-") as work:
        os.symlink(lib, os.path.join(work, "libblas.so.3"))
        env = dict(os.environ, LD_LIBRARY_PATH=work, LD_BIND_NOW="1")
        env.pop("LD_PRELOAD", None)
        stdin = open(inp, "rb") if inp else subprocess.DEVNULL
        r = subprocess.run([prog], cwd=work, env=env, stdin=stdin, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=600)
        out = r.stdout.decode(errors="replace")
        # Levels 2 and 3 write their report to the file the .in names (the first line).
        if inp:
            with open(inp) as f:
                name = f.readline().split("'")[1].strip()
            path = os.path.join(work, name)
            if os.path.exists(path):
                out += open(path, errors="replace").read()
        loaded = subprocess.run(["ldd", prog], env=env, stdout=subprocess.PIPE).stdout.decode()
    print(out)
    if f"libblas.so.3 => {work}/libblas.so.3" not in loaded:
        print("FAIL: the program did not load libsplblas as libblas.so.3:\n" + loaded)
        return 1
    if r.returncode != 0:
        print(f"FAIL: the program exited with status {r.returncode}")
        return 1
    if not inp:
        tested = re.findall(r"Test of subprogram number\s+\d+\s+(\w+)", out)
        passed = out.count("----- PASS -----")
        if not tested or passed != len(tested) or "FAIL" in out:
            print(f"FAIL: {passed} of {len(tested)} routines passed")
            return 1
        print(f"PASS: {passed} of {len(tested)} routines ({', '.join(tested)})")
        return 0
    # The CBLAS programs test each routine in both layouts ("PASSED THE ROW-MAJOR
    # COMPUTATIONAL TESTS"); the Fortran ones once.
    layouts = ["COLUMN-MAJOR ", "ROW-MAJOR "] if "cblat" in os.path.basename(prog) else [""]
    errexits = re.findall(r"^ (\w+) +PASSED THE TESTS OF ERROR-EXITS", out, re.M)
    bad = re.findall(r"FAILED|FATAL ERROR|NOT PASSED|\*\*\*\*\*", out)
    ok = bool(errexits) and not bad and "END OF TESTS" in out
    for layout in layouts:
        routines = re.findall(r"^ (\w+) +PASSED THE " + layout + r" *COMPUTATIONAL TESTS", out, re.M)
        if sorted(routines) != sorted(errexits):
            print(f"FAIL: {layout or ''}computational tests passed by {routines}, error exits by {errexits}")
            ok = False
    if not ok:
        print(f"FAIL: {len(bad)} failure marks; END OF TESTS {'seen' if 'END OF TESTS' in out else 'missing'}")
        return 1
    print(f"PASS: {len(errexits)} routines" + (" in both layouts" if len(layouts) == 2 else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
