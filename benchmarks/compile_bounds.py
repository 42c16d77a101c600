#!/usr/bin/env python3
"""compile_bounds.py: splc's compile time and peak memory against the size of its input (issue 23:
"compile time and memory have no bound"). Not a test: it records what a machine measures.

Four families of generated sources, each at growing sizes, each compiled by one splc:
  defs N       N small defs (parsing and type checking grow with the source)
  aliases K    type aliases t_k = (t_{k-1}, t_{k-1}) used by one def: 2^K parts, refused past
               the checker's bound (2^14 parts) before anything is expanded
  nest D       a map over a D-dimensional array: D nested loops, given to isl's AST generation
               up to 16 deep and kept as they are beyond
  chain L      one def whose body is a pipeline of L maps (one expression of growing depth)

For each: the source size, splc's exit status, wall time (s) and peak resident memory (MiB), from
/usr/bin/time. Usage:
  benchmarks/compile_bounds.py [--splc PATH] [--out FILE.md] [--quick]
"""
import argparse
import datetime
import os
import platform
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def defs_source(n):
    lines = ["def f%d {n: nat} (x: n.f32) (y: n.f32) : n.f32 = zip(x, y) |> map((a, b) => a * 2.0 + b * %d.0);" % (i, i % 7)
             for i in range(n)]
    return "\n".join(lines) + "\nexport f0 as spl_f0 for cpu;\n"


def aliases_source(k):
    lines = ["type t0 = f32;"] + ["type t%d = (t%d, t%d);" % (i, i - 1, i - 1) for i in range(1, k + 1)]
    return "\n".join(lines) + "\ndef f (x: t%d) : f32 = 1.0;\ndef g (x: f32) : f32 = x;\nexport g as spl_g for cpu;\n" % k


def nest_source(d):
    ty = ".".join(["n"] * d) + ".f32"
    expr = "x => x * 2.0"
    for k in range(d - 1):
        expr = "r%d => r%d |> map(%s)" % (k, k, expr)
    return "def c {n: nat} (a: %s) : %s = a |> map(%s);\nexport c as spl_c for cpu;\n" % (ty, ty, expr)


def chain_source(length):
    body = "x" + "".join(" |> map(v => v * 1.5 + %d.0)" % (i % 5) for i in range(length))
    return "def f {n: nat} (x: n.f32) : n.f32 = %s;\nexport f as spl_f for cpu;\n" % body


def measure(splc, source, work):
    path = os.path.join(work, "input.spl")
    with open(path, "w") as f:
        f.write(source)
    proc = subprocess.run(["/usr/bin/time", "-f", "%e %M", splc, path, "-o", os.path.join(work, "out.o")],
                          capture_output=True, text=True)
    last = proc.stderr.strip().splitlines()[-1].split()
    seconds, kib = float(last[0]), int(last[1])
    # /usr/bin/time reports a signal in its own line; the exit status is splc's.
    status = proc.returncode
    message = ""
    for line in proc.stderr.splitlines():
        if "error:" in line:
            message = line.split("error:", 1)[1].strip()[:70]
            break
    return len(source), status, seconds, kib / 1024.0, message


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--splc", default=os.path.join(ROOT, "build", "bin", "splc"), help="the compiler (default build/bin/splc)")
    ap.add_argument("--out", default=None, help="also write the table to this Markdown file")
    ap.add_argument("--quick", action="store_true", help="smaller sizes (a minute or so)")
    a = ap.parse_args()
    if not os.access(a.splc, os.X_OK):
        sys.exit("compile_bounds.py: no splc at %s" % a.splc)
    families = [
        ("defs", defs_source, [100, 1000, 4000] if a.quick else [100, 1000, 4000, 16000, 40000]),
        ("aliases", aliases_source, [8, 12, 14, 20, 40]),
        ("nest", nest_source, [4, 8, 16, 24] if a.quick else [4, 8, 16, 24, 40, 80]),
        ("chain", chain_source, [10, 100, 400] if a.quick else [10, 100, 400, 1000]),
    ]
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "")
    except OSError:
        pass
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for name, make, sizes in families:
            for size in sizes:
                nbytes, status, seconds, mib, message = measure(a.splc, make(size), work)
                rows.append((name, size, nbytes, status, seconds, mib, message))
                print("%-8s %6d  %10d bytes  exit %d  %8.2f s  %8.1f MiB  %s" % (name, size, nbytes, status, seconds, mib, message),
                      flush=True)
    if a.out:
        with open(a.out, "w") as f:
            f.write("# splc compile time and peak memory against input size\n\n")
            f.write("Machine: %s (%s, %d cores). Date: %s. Commit: %s. Produced by `benchmarks/compile_bounds.py%s`.\n\n"
                    % (platform.node() or "?", cpu or platform.machine(), os.cpu_count() or 0,
                       datetime.date.today().isoformat(), commit or "?", " --quick" if a.quick else ""))
            f.write("| family | size | source bytes | exit | wall (s) | peak RSS (MiB) | error |\n|---|---|---|---|---|---|---|\n")
            for name, size, nbytes, status, seconds, mib, message in rows:
                f.write("| %s | %d | %d | %d | %.2f | %.1f | %s |\n" % (name, size, nbytes, status, seconds, mib, message))


if __name__ == "__main__":
    main()
