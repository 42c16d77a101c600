#!/usr/bin/env python3
"""Plots the CSV written by spl-spmv-bench (benchmarks/run.sh) as one PNG.

usage: plot.py RESULTS.csv OUT.png

Panels: CSR f64 and f32 on 1 thread and on all cores (GB/s of compulsory traffic per matrix for
SPL and every baseline, SPL's SELL-C-sigma with y in row order beside them, with the STREAM triad
measured in the same interleaved rounds as a black dash), and the
ELL/DIA/BCSR speedups of SPL over plain C loops of the same format. Matrices whose f64 CSR fits in
the L3 cache are marked with * (they run warm in cache).
"""
import csv
import math
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

IMPLS = [
    ("spl", "SPL", "#d62728", "o"),
    ("eigen", "Eigen", "#1f77b4", "s"),
    ("rsb", "librsb", "#2ca02c", "^"),
    ("csparse", "CSparse", "#9467bd", "v"),
    ("cholmod", "CHOLMOD", "#8c564b", "D"),
    ("c", "C loop", "#7f7f7f", "x"),
]


def read(path):
    meta = {}
    rows = []
    with open(path, newline="") as f:
        first = f.readline()
        if first.startswith("#"):
            for part in next(csv.reader([first[1:].strip()])):
                if "=" in part:
                    k, v = part.split("=", 1)
                    meta[k.strip()] = v
        else:
            f.seek(0)
        for r in csv.DictReader(f):
            rows.append(r)
    return meta, rows


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    meta, rows = read(sys.argv[1])
    threads_all = int(meta.get("threads", "0") or 0) or max(int(r["threads"]) for r in rows)
    data = [r for r in rows if r["impl"] not in ("stream", "triad")]
    group_triad = [r for r in rows if r["impl"] == "triad"]
    order = []
    size = {}
    for r in data:
        if r["matrix"] not in size:
            order.append(r["matrix"])
            size[r["matrix"]] = (int(r["nnz"]), int(r["rows"]), int(r["cols"]))
    # f64 CSR bytes, to mark the matrices that fit in L3
    l3 = meta.get("l3", "0")
    l3_bytes = 0
    try:
        l3_bytes = int(l3.rstrip("KMB")) * (1024 if l3.endswith("K") else 1024 * 1024 if l3.endswith("M") else 1)
    except ValueError:
        pass

    def label(m):
        nnz, nr, nc = size[m]
        fits = l3_bytes and nnz * 12 + (nr + 1) * 4 + (nr + nc) * 8 <= l3_bytes
        return m + ("*" if fits else "")

    idx = {m: i for i, m in enumerate(order)}
    thread_counts = [1] + ([threads_all] if threads_all > 1 else [])
    fig, axes = plt.subplots(
        3, len(thread_counts), figsize=(11 * len(thread_counts), 19), squeeze=False, constrained_layout=True
    )
    for col, t in enumerate(thread_counts):
        for row, prec in enumerate(["f64", "f32"]):
            ax = axes[row][col]
            for impl, name, color, marker in IMPLS:
                xs, ys = [], []
                for r in data:
                    if r["format"] == "csr" and r["precision"] == prec and r["impl"] == impl and int(r["threads"]) == t:
                        xs.append(idx[r["matrix"]])
                        ys.append(float(r["gbps"]))
                if xs:
                    ax.plot(xs, ys, linestyle="none", marker=marker, color=color, label=name,
                            markersize=8 if impl == "spl" else 6, markeredgewidth=1.5,
                            markerfacecolor=color if impl == "spl" else "none", zorder=3 if impl == "spl" else 2)
            # SPL on the SELL-C-sigma form (converted once; y back in row order), CSR bytes.
            sx = [idx[r["matrix"]] for r in data
                  if r["format"] == "sell" and r["precision"] == prec and r["impl"] == "spl" and int(r["threads"]) == t]
            sy = [float(r["gbps"]) for r in data
                  if r["format"] == "sell" and r["precision"] == prec and r["impl"] == "spl" and int(r["threads"]) == t]
            if sx:
                ax.plot(sx, sy, linestyle="none", marker="*", color="#e377c2", markersize=9, label="SPL, SELL-C-sigma",
                        zorder=3)
            tx = [idx[r["matrix"]] for r in group_triad
                  if r["format"] == "csr" and r["precision"] == prec and int(r["threads"]) == t and r["matrix"] in idx]
            ty = [float(r["gbps"]) for r in group_triad
                  if r["format"] == "csr" and r["precision"] == prec and int(r["threads"]) == t and r["matrix"] in idx]
            if tx:
                ax.plot(tx, ty, linestyle="none", marker="_", markersize=16, markeredgewidth=2, color="black",
                        label="STREAM triad (same rounds)")
            ax.set_title("CSR %s SpMV, %d thread%s: GB/s of compulsory traffic" % (prec, t, "" if t == 1 else "s"),
                         fontsize=13)
            ax.set_ylabel("GB/s (log; below 1 GB/s off scale)")
            ax.set_yscale("log")
            ax.set_ylim(bottom=1.0)
            ax.set_xticks(range(len(order)))
            ax.set_xticklabels([label(m) for m in order], rotation=70, ha="right", fontsize=8)
            ax.set_xlim(-0.7, len(order) - 0.3)
            ax.grid(axis="y", which="both", alpha=0.3)
            ax.grid(axis="x", alpha=0.15)
            ax.legend(fontsize=9, ncol=4, loc="lower left")
        ax = axes[2][col]
        width = 0.27
        for k, (fmt, color) in enumerate([("ell", "#ff7f0e"), ("dia", "#17becf"), ("bcsr", "#bcbd22")]):
            xs, ys = [], []
            for m in order:
                s = [r for r in data if r["matrix"] == m and r["format"] == fmt and r["impl"] == "spl"
                     and int(r["threads"]) == t]
                c = [r for r in data if r["matrix"] == m and r["format"] == fmt and r["impl"] == "c"
                     and int(r["threads"]) == t]
                if s and c and float(s[0]["median_s"]) > 0:
                    xs.append(idx[m] + (k - 1) * width)
                    ys.append(float(c[0]["median_s"]) / float(s[0]["median_s"]))
            if xs:
                ax.bar(xs, ys, width=width, color=color, label=fmt.upper())
        ax.axhline(1.0, color="black", linewidth=1)
        ax.set_yscale("log")
        ax.set_title("ELL / DIA / BCSR f32, %d thread%s: SPL speedup over the plain C loop of the format (>1: SPL faster)"
                     % (t, "" if t == 1 else "s"), fontsize=12)
        ax.set_ylabel("C time / SPL time (log, clipped to [0.05, 20])")
        ax.set_ylim(0.05, 20)
        ax.set_xticks(range(len(order)))
        ax.set_xticklabels([label(m) for m in order], rotation=70, ha="right", fontsize=8)
        ax.set_xlim(-0.7, len(order) - 0.3)
        ax.grid(axis="y", which="both", alpha=0.3)
        ax.legend(fontsize=9)
    title = "SPL CPU SpMV vs Eigen, librsb, SuiteSparse, C loops - %s, %s cores, %s, commit %s, %s, scale %s" % (
        meta.get("cpu", "?"), meta.get("cores", "?"), meta.get("memory", "?"), meta.get("commit", "?"),
        meta.get("date", "?"), meta.get("scale", "?"))
    fig.suptitle(title + "\n(* = f64 CSR fits in the L3 cache: timed warm, may exceed the triad)", fontsize=14)
    fig.savefig(sys.argv[2], dpi=80)


if __name__ == "__main__":
    main()
