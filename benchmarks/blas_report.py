#!/usr/bin/env python3
"""Turns benchmarks/run-blas.sh's CSV into its report (markdown) and a chart (PNG).

usage: blas_report.py RESULTS.csv REPORT.md CHART.png

The report keeps the CSV's first line (machine, date, commit, load), states the issue's targets
(issue 26: levels 1 and 2 at least 0.9x OpenBLAS's speed, gemm, trsv and trsm at least 0.5x)
and how many groups meet them, then one table per thread count: each routine's time in both
libraries, SPL's speed (OpenBLAS's time / SPL's), and beside it the bound: the bandwidth each
library reached against the STREAM triad of the same run (levels 1 and 2) or their GFlop/s
(level 3). The chart is SPL's speed per group, one panel per thread count. Without matplotlib
the chart is skipped, saying so."""
import csv
import math
import sys

LEVEL1 = {"dot", "axpy", "nrm2", "asum", "scal", "iamax", "dot inc2", "nrm2 inc2", "iamax inc2"}
LEVEL3 = {"gemm NN", "gemm TN", "gemm TT", "symm LL", "trsm LLN", "trsm RLN", "trmm RUT", "syrk LN"}


def duration(seconds):
    """A call's time in a unit that keeps three digits: a level-1 call of 32 elements takes
    about 10 ns, which 0.0 us had hidden."""
    if seconds < 1e-6:
        return f"{seconds * 1e9:.1f} ns"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} us"
    return f"{seconds * 1e3:.2f} ms"


def target(routine):
    if routine.startswith("gemm") or routine.startswith("trsm") or routine.startswith("trsv"):
        return 0.5
    if routine in LEVEL3:
        return None  # symm, syrk, trmm: no target in the issue
    return 0.9


def main():
    src, md, png = sys.argv[1:4]
    with open(src) as f:
        lines = f.read().splitlines()
    notes = list(dict.fromkeys(l[2:] for l in lines if l.startswith("# ")))  # each thread count's run repeats some
    rows = list(csv.DictReader(l for l in lines if not l.startswith("#")))
    out = ["# libsplblas against OpenBLAS", ""]
    out += [f"- {n}" for n in notes]
    sized = any(n.startswith("sizes: ") for n in notes)
    sizes_text = ("Levels 1 and 2 at the sizes the first lines name (--sizes: small operands, in the L1 and L2 "
                  "caches), no level 3." if sized else
                  "Level 1 at n = 4096 is in the L1/L2 cache, at 4M (64 MB of x and y in f64) beyond the L2; level 2 "
                  "at n = 400 in the L2, at 4000 (128 MB in f64) beyond it (a last-level cache of 260 MB, as on the "
                  "2-core Xeon, may hold them).")
    out += ["", "Measured by benchmarks/run-blas.sh (benchmarks/blas_bench.c): both libraries in one process through "
            "their Fortran entry points, checked against each other first, then timed on one set of operands at the "
            "same addresses (since 2026-11-29; before, each library read a copy of its own); the median of 7 paired "
            "rounds (3 for level 3 at n >= 2000), each sample at least 20 ms of calls. \"speed\" is OpenBLAS's "
            "time over SPL's (above 1: SPL is faster). " + sizes_text, ""]
    met, total = 0, 0
    for r in rows:
        t = target(r["routine"])
        if t is not None:
            total += 1
            met += float(r["spl_speed"]) >= t
    out += [f"Issue 26's targets (levels 1 and 2 at least 0.9x, gemm, trsv and trsm at least 0.5x): met in {met} of {total} groups.", ""]
    for threads in sorted({r["threads"] for r in rows}, key=int):
        sel = [r for r in rows if r["threads"] == threads]
        speeds = [float(r["spl_speed"]) for r in sel]
        geo = math.exp(sum(math.log(s) for s in speeds) / len(speeds))
        out += [f"## {threads} thread{'s' if threads != '1' else ''} (geomean speed {geo:.2f}x)", "",
                "| precision | routine | n | SPL | OpenBLAS | speed | target | SPL | OpenBLAS | bound |",
                "|---|---|---|---|---|---|---|---|---|---|"]
        for r in sel:
            lvl3 = r["routine"] in LEVEL3
            t = target(r["routine"])
            mark = "" if t is None else (" ok" if float(r["spl_speed"]) >= t else " below")
            if lvl3:
                rate = (f"{float(r['spl_GFlops']):.1f} GFlop/s", f"{float(r['openblas_GFlops']):.1f} GFlop/s", "")
            else:
                triad = float(r["triad_GBs"])
                rate = (f"{float(r['spl_GBs']):.1f} GB/s ({100 * float(r['spl_GBs']) / triad:.0f}%)",
                        f"{float(r['openblas_GBs']):.1f} GB/s ({100 * float(r['openblas_GBs']) / triad:.0f}%)",
                        f"triad {triad:.1f} GB/s")
            out.append(f"| {r['precision']} | {r['routine']} | {r['n']} | {duration(float(r['spl_s']))} | "
                       f"{duration(float(r['openblas_s']))} | {float(r['spl_speed']):.2f}x | "
                       f"{'' if t is None else f'{t}x'}{mark} | {rate[0]} | {rate[1]} | {rate[2]} |")
        out.append("")
    with open(md, "w") as f:
        f.write("\n".join(out))
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("blas_report.py: no matplotlib, no chart (apt install python3-matplotlib)")
        return 0
    threads = sorted({r["threads"] for r in rows}, key=int)
    fig, axes = plt.subplots(len(threads), 1, figsize=(14, 4.5 * len(threads)), squeeze=False)
    for ax, t in zip(axes[:, 0], threads):
        sel = [r for r in rows if r["threads"] == t]
        labels = [f"{r['precision'][1:]} {r['routine']} {r['n']}" for r in sel]
        vals = [float(r["spl_speed"]) for r in sel]
        colors = ["tab:green" if (target(r["routine"]) or 0) <= v else "tab:red" for r, v in zip(sel, vals)]
        ax.bar(range(len(vals)), vals, color=colors)
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.axhline(0.9, color="grey", linestyle="--", linewidth=0.8)
        ax.set_xticks(range(len(vals)))
        ax.set_xticklabels(labels, rotation=90, fontsize=7)
        ax.set_ylabel("SPL speed (OpenBLAS time / SPL time)")
        ax.set_title(f"libsplblas vs OpenBLAS, {t} thread(s)")
    fig.tight_layout()
    fig.savefig(png, dpi=100)
    return 0


if __name__ == "__main__":
    sys.exit(main())
