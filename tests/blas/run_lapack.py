#!/usr/bin/env python3
"""Runs LAPACK's own test programs (Debian's liblapack-test: xlintsts/d, xeigtsts/d) with the
reference LAPACK on top of libsplblas, and fails unless every test passes its threshold.

usage: run_lapack.py LIBSPLBLAS PROGRAM INPUT.in...

The reference liblapack.so.3 (the multiarch lib folder's lapack/, not the one the alternatives
system may point at OpenBLAS's) is loaded by name from a directory of its own, with
libsplblas preloaded: every real BLAS routine LAPACK calls binds to libsplblas. LAPACK's library
also needs the complex BLAS (cgemv_, zgemm_, ...), which libsplblas does not have yet (issue 26
item 7): those come from the reference libblas.so.3 in that directory, and the test first checks
that every real (s, d) BLAS routine liblapack imports is one libsplblas defines, so none of them
can fall through to the reference. Each input runs in turn; its output must end its tests ("End
of tests") with no test over its threshold, no error exit missed and no routine returning an
error code. Exit 77 (ctest's skip) where the programs are not installed (apt install
liblapack-test; tools/setup.sh does)."""
import os
import re
import subprocess
import sys
import tempfile

LIB_DIR = "/usr/lib/x86_64-linux-gnu"


def dynamic_symbols(path, undefined):
    flag = "--undefined-only" if undefined else "--defined-only"
    out = subprocess.run(["nm", "-D", flag, path], stdout=subprocess.PIPE, check=True).stdout.decode()
    return {line.split()[-1].split("@")[0] for line in out.splitlines() if line.split()}


def main():
    if len(sys.argv) < 4:
        print(__doc__)
        return 2
    lib, prog, inputs = os.path.abspath(sys.argv[1]), sys.argv[2], sys.argv[3:]
    lapack = os.path.join(LIB_DIR, "lapack", "liblapack.so.3")
    blas = os.path.join(LIB_DIR, "blas", "libblas.so.3")
    missing = [p for p in [prog, lapack, blas] + inputs if not os.path.exists(p)]
    if missing:
        print(f"SKIP: {', '.join(missing)} not installed (apt install liblapack-test libblas-test; tools/setup.sh does)")
        return 77
    # Every real BLAS routine the reference LAPACK calls must come from libsplblas.
    blas_names = dynamic_symbols(blas, undefined=False)
    needed = dynamic_symbols(lapack, undefined=True) & blas_names
    real = {s for s in needed if not re.match(r"^(c|z|ic|iz|sc|dz|scabs|dcabs)", s)}
    lacking = sorted(real - dynamic_symbols(lib, undefined=False))
    if lacking:
        print(f"FAIL: libsplblas lacks real BLAS routines LAPACK calls: {', '.join(lacking)}")
        return 1
    failures = 0
    with tempfile.TemporaryDirectory(prefix="spl-lapack-") as work:
        os.symlink(lapack, os.path.join(work, "liblapack.so.3"))
        os.symlink(blas, os.path.join(work, "libblas.so.3"))
        env = dict(os.environ, LD_LIBRARY_PATH=work, LD_PRELOAD=lib)
        for inp in inputs:
            with open(inp, "rb") as stdin:
                r = subprocess.run([prog], cwd=work, env=env, stdin=stdin, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, timeout=1200)
            out = r.stdout.decode(errors="replace")
            bad = re.findall(r".*(?:failed to pass the threshold|FAILED|not detected|Error code|returned INFO|"
                             r"ILLEGAL|fatal).*", out, re.I)
            name = os.path.basename(inp)
            if r.returncode != 0 or "End of tests" not in out or bad:
                failures += 1
                print(out)
                print(f"FAIL: {os.path.basename(prog)} < {name}: exit {r.returncode}, {len(bad)} failure lines:")
                print("\n".join(bad[:20]))
            else:
                ran = sum(int(n) for n in re.findall(r"passed the threshold \(\s*(\d+) tests run\)", out))
                print(f"PASS: {os.path.basename(prog)} < {name} ({ran} tests within their thresholds)")
    if failures:
        print(f"FAIL: {failures} of {len(inputs)} inputs")
        return 1
    print(f"PASS: {len(inputs)} inputs, {len(real)} real BLAS routines from libsplblas")
    return 0


if __name__ == "__main__":
    sys.exit(main())
