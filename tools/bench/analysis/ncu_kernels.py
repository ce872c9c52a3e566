#!/usr/bin/env python3
"""Prints the kernels of an `ncu --metrics gpu__time_duration.sum --csv` log in launch order:
id, device microseconds, grid, block and a shortened name; then the total per kernel name.

  python3 tools/bench/analysis/ncu_kernels.py kernels.csv
"""
import csv
import re
import sys
from collections import OrderedDict


def short(name):
    name = re.sub(r"\(.*", "", name)          # drop the parameter list
    name = re.sub(r"<.*>", "<>", name)        # and template arguments
    return name.split("::")[-1][:60]


def main(path):
    rows = []
    with open(path, newline="") as f:
        lines = [l for l in f if l.startswith('"')]  # the CSV part (ncu prints its log too)
    for r in csv.DictReader(lines):
        if r.get("Metric Name") != "gpu__time_duration.sum":
            continue
        v = float(r["Metric Value"].replace(",", ""))
        unit = r.get("Metric Unit", "")
        us = v * {"ns": 1e-3, "nsecond": 1e-3, "ms": 1e3, "msecond": 1e3}.get(unit, 1.0)
        rows.append((int(r["ID"]), us, r.get("Grid Size", ""), r.get("Block Size", ""), short(r["Kernel Name"])))
    print(f"== {path}: {len(rows)} kernels")
    for i, us, grid, block, name in rows:
        print(f"{i:5d} {us:10.1f} us  {grid:>16} {block:>12}  {name}")
    total = OrderedDict()
    for _, us, _, _, name in rows:
        n, t = total.get(name, (0, 0.0))
        total[name] = (n + 1, t + us)
    print("-- per kernel name: launches, total us")
    for name, (n, t) in sorted(total.items(), key=lambda x: -x[1][1]):
        print(f"{n:5d} {t:10.1f}  {name}")


if __name__ == "__main__":
    main(sys.argv[1])
