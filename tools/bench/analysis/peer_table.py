#!/usr/bin/env python3
"""Sieve beside cuVS from one device run: the ratio table and its geometric mean.

Reads gpu_paths_bench JSON lines (Sieve: every path of each case; its best path and the time of
that path) and cuvs_peer_bench JSON lines (cuVS 26.10 brute_force::search, its e2e_ms: filter and
query upload, search, result download — the span gpu_paths_bench's median_ms covers), matches
cases on (rows, dim, dtype, queries, k, filter, passing) and prints a Markdown table with the ratio
cuVS / Sieve per case, then the geometric mean over all cases and per filter kind.

Usage: peer_table.py SIEVE.jsonl[,SIEVE2.jsonl...] PEER.jsonl[,PEER2.jsonl...]
Standard library only.
"""

import json
import math
import sys


def read(paths):
    out = []
    for path in paths.split(","):
        with open(path, encoding="utf-8") as f:
            for line in f:
                line = line.strip()
                if line.startswith("{"):
                    out.append(json.loads(line))
    return out


def key(r):
    return (r["rows"], r["dim"], r.get("dtype", "f16"), r["queries"], r["k"],
            r.get("filter", "bitset"), r["passing"])


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    sieve = {}
    for r in read(argv[1]):
        if "error" in r or "median_ms" not in r:
            continue
        best = sieve.get(key(r))
        if best is None or r["median_ms"] < best["median_ms"]:
            sieve[key(r)] = r
    peer = {key(r): r for r in read(argv[2]) if "e2e_ms" in r}
    rows = []
    for k in sorted(set(sieve) & set(peer)):
        s, p = sieve[k], peer[k]
        rows.append((k, s, p, p["e2e_ms"] / s["median_ms"]))
    print("| rows × dim | dtype | filter | passing | Sieve ms (path) | Sieve host ms | cuVS 26.10 ms | cuVS / Sieve |")
    print("|---|---|---|---|---|---|---|---|")
    for (n, dim, dtype, _q, _k, filt, passing), s, p, ratio in rows:
        print(f"| {n:,} × {dim} | {dtype} | {filt} | {passing / n:.4%} ({passing:,}) | "
              f"{s['median_ms']:.3f} ({s['path']}) | {s.get('host_ms', 0):.2f} | "
              f"{p['e2e_ms']:.3f} | {ratio:.2f}× |")
    missing = sorted(set(sieve) ^ set(peer))
    for k in missing:
        print(f"(only {'Sieve' if k in sieve else 'cuVS'} ran {k})", file=sys.stderr)
    if not rows:
        print("no case ran on both", file=sys.stderr)
        return 1

    def geomean(values):
        return math.exp(sum(math.log(v) for v in values) / len(values))

    print()
    print(f"geometric mean cuVS / Sieve over {len(rows)} cases: {geomean([r[3] for r in rows]):.2f}×")
    for filt in sorted({r[0][5] for r in rows}):
        sub = [r[3] for r in rows if r[0][5] == filt]
        print(f"  {filt}: {geomean(sub):.2f}× over {len(sub)} cases (worst {min(sub):.2f}×)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
