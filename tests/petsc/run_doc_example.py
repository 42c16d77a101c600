#!/usr/bin/env python3
"""Builds and runs docs/petsc.md's C example (the first ```c block) on 2 ranks, as the page
tells a user to: mpicc with PETSc's pkg-config flags and libsplpetsc, then mpiexec with
-log_view. Passes when CG converges ("CG: N iterations"), MatView names each rank's kernels
and -log_view has a MatMult line.

usage: run_doc_example.py DOC.md MPICC MPIEXEC INCLUDE_DIR LIBSPLPETSC"""
import os
import re
import subprocess
import sys
import tempfile


def main():
    doc, mpicc, mpiexec, include, lib = sys.argv[1:6]
    code = re.search(r"```c\n(.*?)```", open(doc).read(), re.S).group(1)
    with tempfile.TemporaryDirectory(prefix="spl-petsc-doc-") as work:
        src, exe = os.path.join(work, "solve.c"), os.path.join(work, "solve")
        open(src, "w").write(code)
        flags = subprocess.run(["pkg-config", "--cflags", "--libs", "PETSc"], check=True,
                               stdout=subprocess.PIPE).stdout.decode().split()
        libdir = os.path.dirname(os.path.abspath(lib))
        subprocess.run([mpicc, src, "-I", include, *flags, lib, f"-Wl,-rpath,{libdir}", "-o", exe], check=True)
        r = subprocess.run([mpiexec, "-n", "2", exe, "-log_view"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=300)
        out = r.stdout.decode(errors="replace")
    print(out[:4000])
    ok = (r.returncode == 0 and re.search(r"CG: \d+ iterations", out) and out.count("kernel ") >= 4
          and re.search(r"^MatMult +\d+", out, re.M))
    print("PASSED" if ok else "FAILED: the example did not build, converge, view its kernels or log MatMult")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
