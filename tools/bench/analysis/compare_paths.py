#!/usr/bin/env python3
# Copyright 2026 The Sieve Authors.
"""Two builds' path benchmarks side by side: gpu_paths_bench JSON lines (several runs of each
build appended to one file) → a Markdown table of each (passing rows, path)'s median of the
runs' medians, base and new, and new / base. Standard library only.

  compare_paths.py BASE.jsonl NEW.jsonl
"""

import json
import statistics
import sys


def load(path):
    cases = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line.startswith("{"):
                continue
            j = json.loads(line)
            if "median_ms" not in j:
                continue
            cases.setdefault((j["passing"], j["path"]), []).append(j["median_ms"])
    return cases


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    base, new = load(argv[1]), load(argv[2])
    print("| passing | path | base ms | new ms | new / base | runs |")
    print("|---|---|---|---|---|---|")
    ratios = []
    for key in sorted(set(base) | set(new)):
        b = statistics.median(base[key]) if key in base else None
        n = statistics.median(new[key]) if key in new else None
        r = n / b if b and n else None
        if r:
            ratios.append(r)
        fmt = lambda x: f"{x:.4f}" if x is not None else "-"
        runs = f"{len(base.get(key, []))}/{len(new.get(key, []))}"
        print(f"| {key[0]} | {key[1]} | {fmt(b)} | {fmt(n)} | "
              f"{(f'{r:.3f}' if r else '-')} | {runs} |")
    if ratios:
        geo = statistics.geometric_mean(ratios)
        print(f"\ngeometric mean of new / base over {len(ratios)} cases: {geo:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
