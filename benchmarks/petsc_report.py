#!/usr/bin/env python3
"""Writes the report of benchmarks/run-petsc.sh: PETSc's MatMult against SPL's shell.

usage: petsc_report.py RESULTS.csv REPORT.md

The CSV (petsc_bench.c's lines, one run per rank count, '#' lines: the machine and the load)
gives per matrix and rank count the median MatMult times of PETSc's MPIAIJ (SeqAIJ on one rank),
SPL's shell and SPL's shell without the overlap of the ghost exchange. The report: a table per
rank count, the geomean and the smallest speedup, and what the overlap changed."""
import csv
import math
import sys


def main():
    src, dst = sys.argv[1], sys.argv[2]
    header, rows = [], []
    with open(src) as f:
        lines = [line for line in f]
    header = [line[1:].strip() for line in lines if line.startswith("#")]
    body = [line for line in lines if not line.startswith("#")]
    rows = [r for r in csv.DictReader(body) if r.get("matrix") != "matrix"]
    out = ["# MatMult: PETSc's MPIAIJ against SPL's kernels (spl_petsc_mat_create)", ""]
    out += [f"- {h}" for h in header]
    out += ["", "Median of the rounds (each the slowest rank's time after a barrier); speed-up = PETSc's time / SPL's. "
            "GB/s: the compulsory bytes (values, column indices, row offsets, x and y once) over the time; "
            "the triad is STREAM's on every rank at once (24 bytes an element). \"no overlap\": SPL's shell with "
            "the ghost exchange finished before the diagonal block's product (-spl_petsc_overlap 0).", ""]
    for ranks in sorted({int(r["ranks"]) for r in rows}):
        group = [r for r in rows if int(r["ranks"]) == ranks]
        out += [f"## {ranks} rank{'s' if ranks > 1 else ''}", "",
                "| matrix | rows | entries | PETSc us | SPL us | speed-up | SPL no overlap us | SPL GB/s | PETSc GB/s | triad GB/s | kernels (diagonal/off-diagonal per rank) |",
                "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
        speedups = []
        for r in group:
            s = float(r["speedup"])
            speedups.append(s)
            out.append(f"| {r['matrix']} | {r['rows']} | {r['nnz']} | {float(r['petsc_us']):.1f} | {float(r['spl_us']):.1f} | "
                       f"{s:.2f}x | {float(r['spl_no_overlap_us']):.1f} | {r['spl_gbs']} | {r['petsc_gbs']} | {r['triad_gbs']} | {r['kernels']} |")
        geo = math.exp(sum(math.log(s) for s in speedups) / len(speedups))
        overlap = [float(r["spl_no_overlap_us"]) / float(r["spl_us"]) for r in group]
        geo_overlap = math.exp(sum(math.log(v) for v in overlap) / len(overlap))
        out += ["", f"Geomean speed-up {geo:.2f}x, smallest {min(speedups):.2f}x ({sum(s >= 1.0 for s in speedups)} of "
                f"{len(speedups)} at or above 1.0x, {sum(s >= 1.1 for s in speedups)} at or above 1.1x). "
                f"Without the overlap SPL's time is {geo_overlap:.2f}x that with it (geomean).", ""]
    with open(dst, "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
