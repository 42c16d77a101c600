#!/usr/bin/env python3
"""Plots the CSV written by spl-gpu-bench (benchmarks/run-gpu.sh) as one PNG.

usage: plot_gpu.py RESULTS.csv OUT.png

Panels: CSR SpMV f32 and f64, each SPL implementation's speed over cuSPARSE's default algorithm
per matrix (1 = as fast, above = faster; a call including its launch, event-timed); dense2csr
over cusparseDenseToSparse; and a BFS frontier step's share of the time its coalesced and
uncoalesced bandwidth limits allow (1 = at the bound).
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

src, dst = sys.argv[1:3]
lines = open(src).read().splitlines()
header = lines[0].lstrip("# ")
rows = list(csv.DictReader(lines[1:]))
by = {}
for r in rows:
    by.setdefault((r["matrix"], r["kernel"]), {})[r["impl"]] = r
matrices = []
for r in rows:
    if r["matrix"] not in matrices:
        matrices.append(r["matrix"])

fig, axes = plt.subplots(4, 1, figsize=(14, 16))
colors = {"spl": "#d62728", "spl vector": "#1f77b4", "spl lil": "#2ca02c", "spl sell": "#9467bd"}
for ax, kernel in zip(axes[:2], ("csr f32", "csr f64")):
    names = [m for m in matrices if (m, kernel) in by]
    for k, impl in enumerate(colors):
        xs, ys = [], []
        for i, m in enumerate(names):
            v = by[(m, kernel)]
            if impl in v and "cusparse default" in v:
                xs.append(i + 0.2 * (k - 1.5))
                ys.append(float(v["cusparse default"]["ms"]) / float(v[impl]["ms"]))
        if xs:
            ax.bar(xs, ys, width=0.2, color=colors[impl], label=impl)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_yscale("log")
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels([n.rsplit(".", 1)[0] for n in names], rotation=60, ha="right", fontsize=8)
    ax.set_ylabel("cuSPARSE time / SPL time")
    ax.set_title(f"CSR SpMV {kernel.split()[1]}: speed over cusparseSpMV (default algorithm)")
    ax.legend(fontsize=8)
names = [m for m in matrices if (m, "dense2csr f32") in by]
ax = axes[2]
ys = [float(by[(m, "dense2csr f32")]["cusparse"]["ms"]) / float(by[(m, "dense2csr f32")]["spl"]["ms"]) for m in names]
ax.bar(range(len(names)), ys, color="#d62728")
ax.axhline(1.0, color="black", linewidth=0.8)
ax.set_xticks(range(len(names)))
ax.set_xticklabels([n.rsplit(".", 1)[0] for n in names], rotation=60, ha="right", fontsize=8)
ax.set_ylabel("cuSPARSE time / SPL time")
ax.set_title("dense2csr f32: speed over cusparseDenseToSparse (analysis + convert)")
names = [m for m in matrices if (m, "bfs step") in by]
ax = axes[3]
ys = [float(by[(m, "bfs step")]["spl"]["of_copy_bandwidth"]) for m in names]
ax.bar(range(len(names)), ys, color="#d62728")
ax.axhline(1.0, color="black", linewidth=0.8)
ax.axhline(1 / 3, color="gray", linewidth=0.8, linestyle="--")
ax.set_yscale("log")
ax.set_xticks(range(len(names)))
ax.set_xticklabels([n.rsplit(".", 1)[0] for n in names], rotation=60, ha="right", fontsize=8)
ax.set_ylabel("bound's time / step's time")
ax.set_title("BFS frontier step: share of its bandwidth bound (dashed: within 3x)")
fig.suptitle(header, fontsize=9)
fig.tight_layout()
fig.savefig(dst, dpi=90)
