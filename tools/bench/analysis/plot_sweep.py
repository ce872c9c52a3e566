#!/usr/bin/env python3
# Copyright 2026 The Sieve Authors.
"""Plots a `sieve bench --csv` sweep: time against passing rows per path, log-log, one panel
per (rows, dim), with the path the calibrated planner chose drawn over the curves.

    tools/bench/analysis/setup-plot.sh            # once: matplotlib into .bundle/plot-venv
    .bundle/plot-venv/bin/python tools/bench/analysis/plot_sweep.py sweep.csv --out sweep.png \
        [--rows 1000000,10000000] [--dims 128,1024] [--rule sieve_calibrated]

Writes OUT for the bitset (one filter) points and OUT's stem + "-bitmap-<overlap>.png" for each
per-query overlap in the CSV.
"""

import argparse
import collections
import csv
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

PATHS = ("sddmm", "gather", "dense")
COLORS = {"sddmm": "#1f77b4", "gather": "#2ca02c", "dense": "#d62728"}


def read(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def int_list(text):
    return [int(float(x)) for x in text.split(",") if x] if text else None


def plot_mode(rows, mode, overlap, out, rule, rows_sel, dims_sel, title_extra):
    sel = [r for r in rows if r["mode"] == mode and (mode == "bitset" or r["overlap"] == overlap)]
    shapes = sorted({(int(r["rows"]), int(r["dim"])) for r in sel})
    if rows_sel:
        shapes = [s for s in shapes if s[0] in rows_sel]
    if dims_sel:
        shapes = [s for s in shapes if s[1] in dims_sel]
    if not shapes:
        return False
    row_values = sorted({s[0] for s in shapes})
    dim_values = sorted({s[1] for s in shapes})
    fig, axes = plt.subplots(len(row_values), len(dim_values),
                             figsize=(3.6 * len(dim_values), 2.9 * len(row_values)),
                             squeeze=False)
    rule_col = "rule_" + rule
    for (n, d) in shapes:
        ax = axes[row_values.index(n)][dim_values.index(d)]
        pts = [r for r in sel if int(r["rows"]) == n and int(r["dim"]) == d]
        by_path = collections.defaultdict(list)
        chosen = {}
        for r in pts:
            x = int(r["passing"])
            by_path[r["path"]].append((x, float(r["ms"]), r["status"]))
            if rule_col in r:
                chosen[x] = r[rule_col]
        times = {}
        for p in PATHS:
            series = sorted(by_path.get(p, []))
            ok = [(x, y) for x, y, s in series if s == "ok" and y > 0]
            if ok:
                ax.plot([x for x, _ in ok], [y for _, y in ok], "-o", ms=3, lw=1.2,
                        color=COLORS[p], label=p)
            for x, y, s in series:
                times[(p, x)] = (y, s)
        # The planner's choice: a thick translucent band over the chosen path's time.
        cx, cy = [], []
        for x in sorted(chosen):
            y, s = times.get((chosen[x], x), (math.nan, "failed"))
            if s == "ok" and y > 0:
                cx.append(x)
                cy.append(y)
        if cx:
            ax.plot(cx, cy, "-", lw=6, alpha=0.25, color="black",
                    label=rule.replace("_", " ") + " choice")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(f"{n:,} rows × dim {d}", fontsize=9)
        ax.grid(True, which="both", alpha=0.2)
        ax.tick_params(labelsize=7)
        if dim_values.index(d) == 0:
            ax.set_ylabel("ms (median)", fontsize=8)
        if row_values.index(n) == len(row_values) - 1:
            ax.set_xlabel("passing rows" + (" per query (mean)" if mode == "bitmap" else ""),
                          fontsize=8)
    for i, n in enumerate(row_values):
        for j, d in enumerate(dim_values):
            if (n, d) not in shapes:
                axes[i][j].set_visible(False)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.955), ncol=4,
               fontsize=8, frameon=False)
    what = "bitset (one filter)" if mode == "bitset" else f"bitmap (per-query filters, {overlap})"
    fig.suptitle(f"{what}{title_extra}", fontsize=10, y=0.995)
    fig.tight_layout(rect=(0, 0, 1, 0.91))
    fig.savefig(out, dpi=110)
    plt.close(fig)
    print("wrote", out)
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv")
    ap.add_argument("--out", required=True)
    ap.add_argument("--rows", help="comma list of rows to plot (default: all)")
    ap.add_argument("--dims", help="comma list of dims to plot (default: all)")
    ap.add_argument("--rule", default="sieve_calibrated",
                    help="rule whose choice is drawn (old_cuvs, cuvs_2610, sieve_defaults, "
                         "sieve_calibrated)")
    ap.add_argument("--title", default="", help="appended to each figure title")
    a = ap.parse_args()
    rows = read(a.csv)
    if not rows:
        sys.exit("plot_sweep: the CSV has no rows")
    extra = f" — {a.title}" if a.title else ""
    rows_sel, dims_sel = int_list(a.rows), int_list(a.dims)
    wrote = plot_mode(rows, "bitset", "", a.out, a.rule, rows_sel, dims_sel, extra)
    stem, ext = os.path.splitext(a.out)
    for overlap in sorted({r["overlap"] for r in rows if r["mode"] == "bitmap"}):
        wrote |= plot_mode(rows, "bitmap", overlap, f"{stem}-bitmap-{overlap}{ext or '.png'}",
                           a.rule, rows_sel, dims_sel, extra)
    if not wrote:
        sys.exit("plot_sweep: nothing matched the selection")


if __name__ == "__main__":
    main()
