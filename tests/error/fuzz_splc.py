#!/usr/bin/python3
"""Mutation fuzzing of splc's front end (parser and type checker).

Usage: fuzz_splc.py SPLC EXAMPLES_DIR [--count N] [--seed S] [--timeout SECONDS] [--jobs J]
                    [--keep DIR] [--only INDEX]

Takes the contract examples (*.spl in EXAMPLES_DIR), makes N randomly mutated copies (byte
flips, deletions, duplications, truncations, insertions of tokens the grammar cares about, and
names or numbers replaced by others of the same file; one to four mutations each, all drawn
from one seeded generator), and runs
`splc FILE --emit=types` on each with a per-input timeout. splc may accept or reject a mutant,
but it must exit with status 0 or 1: a signal (crash), status 2 (an internal error), any other
status or a timeout fails the test, and so does status 1 without a located error
(`FILE:LINE:COL: error: ...`, LINE and COL from 1) or with an unlocated one. Each failing input is saved in --keep (default
./fuzz-failures) with its seed and mutant index, and `--seed S --only INDEX` reruns just that
mutant. Before fuzzing, every unmutated example must compile (exit 0), so a broken harness
cannot pass. Only the Python standard library is used.
"""

import argparse
import concurrent.futures
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile


def read_dictionary(path):
    r"""The tokens of a libFuzzer dictionary: one "quoted" token a line (\\, \" and \xNN escapes)."""
    tokens = []
    with open(path, "rb") as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith(b"#"):
                continue
            body = line[line.index(b'"') + 1:line.rindex(b'"')]
            out, k = bytearray(), 0
            while k < len(body):
                if body[k:k + 1] == b"\\" and body[k + 1:k + 2] == b"x":
                    out.append(int(body[k + 2:k + 4], 16))
                    k += 4
                elif body[k:k + 1] == b"\\":
                    out += body[k + 1:k + 2]
                    k += 2
                else:
                    out += body[k:k + 1]
                    k += 1
            tokens.append(bytes(out))
    return tokens


TOKENS = read_dictionary(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fuzz", "spl.dict"))


WORD = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*|[0-9]+")
NUMBERS = [b"0", b"1", b"2", b"3", b"4", b"7", b"64", b"4096", b"9223372036854775807"]


def mutate(data, rng):
    """Returns (mutant, description) after one to four random mutations. Byte-level mutations
    mostly exercise the parser; word-level ones (a name or number replaced by another one of
    the file) keep the syntax and exercise the type checker."""
    steps = []
    for _ in range(rng.randint(1, 4)):
        kind = rng.choice(["flip", "flip", "delete", "duplicate", "truncate", "insert", "insert", "swap",
                           "word", "word", "word"])
        n = len(data)
        words = list(WORD.finditer(data)) if kind == "word" else []
        if kind == "word" and words:
            w = rng.choice(words)
            if w.group().isdigit():
                new = rng.choice(NUMBERS)
            else:
                new = rng.choice(words).group()
                if new.isdigit() and rng.random() < 0.7:
                    new = rng.choice([x.group() for x in words if not x.group().isdigit()] or [new])
            data = data[:w.start()] + new + data[w.end():]
            steps.append("word@%d=%r" % (w.start(), new))
        elif kind == "flip" and n:
            i = rng.randrange(n)
            if rng.random() < 0.5:
                b = data[i] ^ (1 << rng.randrange(8))
            else:
                b = rng.randrange(256)
            data = data[:i] + bytes([b]) + data[i + 1:]
            steps.append("flip@%d=%d" % (i, b))
        elif kind == "delete" and n:
            i = rng.randrange(n)
            k = rng.randint(1, 32)
            data = data[:i] + data[i + k:]
            steps.append("delete@%d+%d" % (i, k))
        elif kind == "duplicate" and n:
            i = rng.randrange(n)
            k = rng.randint(1, 96)
            j = rng.randrange(n + 1)
            piece = data[i:i + k]
            data = data[:j] + piece + data[j:]
            steps.append("duplicate@%d+%d->%d" % (i, k, j))
        elif kind == "truncate" and n:
            i = rng.randrange(n)
            data = data[:i]
            steps.append("truncate@%d" % i)
        elif kind == "swap" and n > 2:
            i, j = sorted(rng.sample(range(n), 2))
            k = rng.randint(1, min(16, j - i))
            data = data[:i] + data[j:j + k] + data[i + k:j] + data[i:i + k] + data[j + k:]
            steps.append("swap@%d,%d+%d" % (i, j, k))
        else:
            i = rng.randrange(n + 1)
            t = rng.choice(TOKENS)
            data = data[:i] + t + data[i:]
            steps.append("insert@%d=%r" % (i, t))
    return data, ", ".join(steps)


def run_splc(splc, path, timeout):
    """Returns (status, stderr tail); status is the exit code, 'timeout', or 'unlocated' when
    splc exits with 1 but prints an error that is not `PATH:LINE:COL: error: ...` (or none)."""
    try:
        proc = subprocess.run([splc, path, "--emit=types"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", b""
    if proc.returncode == 1:
        located = re.compile(re.escape(path.encode()) + rb":[1-9][0-9]*:[1-9][0-9]*: error: ")
        # Diagnostic headers; the source lines echoed under them contain spaces before any ": ".
        errors = [l for l in proc.stderr.split(b"\n") if b": error: " in l and b" " not in l.split(b": error: ")[0]]
        if not errors or any(not located.match(l) for l in errors):
            return "unlocated", proc.stderr[-2000:]
    return proc.returncode, proc.stderr[-2000:]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("splc")
    ap.add_argument("examples")
    ap.add_argument("--count", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1729)
    ap.add_argument("--timeout", type=float, default=10.0)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--keep", default="fuzz-failures")
    ap.add_argument("--only", type=int, default=None, help="run only this mutant index")
    args = ap.parse_args()

    names = sorted(f for f in os.listdir(args.examples) if f.endswith(".spl"))
    if not names:
        print("FAIL: no .spl files in %s" % args.examples)
        return 1
    sources = []
    for name in names:
        with open(os.path.join(args.examples, name), "rb") as f:
            sources.append((name, f.read()))

    work = tempfile.mkdtemp(prefix="spl-fuzz-")
    try:
        # The harness must see the unmutated examples compile.
        for name, data in sources:
            path = os.path.join(work, name)
            with open(path, "wb") as f:
                f.write(data)
            status, err = run_splc(args.splc, path, args.timeout)
            if status != 0:
                print("FAIL: the unmutated example %s does not compile (status %s):\n%s" %
                      (name, status, err.decode("utf-8", "replace")))
                return 1

        rng = random.Random(args.seed)
        cases = []
        for k in range(args.count):
            name, data = sources[rng.randrange(len(sources))]
            mutant, how = mutate(data, rng)
            if args.only is None or args.only == k:
                cases.append((k, name, mutant, how))

        def one(case):
            k, name, mutant, how = case
            path = os.path.join(work, "mutant_%d_%s" % (k, name))
            with open(path, "wb") as f:
                f.write(mutant)
            status, err = run_splc(args.splc, path, args.timeout)
            os.unlink(path)
            return case, status, err

        counts = {}
        failures = []
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            for case, status, err in pool.map(one, cases):
                counts[status] = counts.get(status, 0) + 1
                if status not in (0, 1):
                    failures.append((case, status, err))

        for (k, name, mutant, how), status, err in failures:
            os.makedirs(args.keep, exist_ok=True)
            saved = os.path.join(args.keep, "seed%d_mutant%d_%s" % (args.seed, k, name))
            with open(saved, "wb") as f:
                f.write(mutant)
            what = "timed out after %gs" % args.timeout if status == "timeout" else (
                "exited with status 1 without a located error" if status == "unlocated" else
                "was killed by signal %d" % -status if isinstance(status, int) and status < 0 else
                "exited with status %s" % status)
            print("FAIL: splc %s on mutant %d of %s (seed %d; rerun with --seed %d --only %d); mutations: %s; "
                  "saved as %s\n%s" % (what, k, name, args.seed, args.seed, k, how, saved,
                                       err.decode("utf-8", "replace")))
        summary = ", ".join("status %s: %d" % (s, c) for s, c in sorted(counts.items(), key=lambda x: str(x[0])))
        print("%d mutants of %d examples (seed %d): %s; %d failure(s)" %
              (len(cases), len(sources), args.seed, summary, len(failures)))
        if not failures and args.only is None and counts.get(1, 0) == 0:
            print("FAIL: no mutant was rejected; the mutations are not reaching the compiler")
            return 1
        return 1 if failures else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
