#!/usr/bin/env python3
# Copyright 2026 The Sieve Authors.
"""Replays a recorded path sweep under planner rules, offline: every path of every point was
timed, so the penalty of any rule (chosen path's time / fastest path's time) can be computed
without a device. Standard library only.

    tools/bench/analysis/replay_rules.py SWEEP [SWEEP ...] [--rule NAME=SPEC ...] [--worst N]

SWEEP is a `sieve bench --csv` file (one row per point x path) or a `sieve calibrate` JSON
summary (its "points"). SPEC is one of
    recorded:COLUMN     the choice recorded in the CSV's rule_COLUMN column (as it was run)
    v1:THRESHOLDS       the rule before 2026-11-30 (dim-free SDDMM count; bitmap count, fraction
                        and share bounds all at once on the mean count) under THRESHOLDS
    v2:THRESHOLDS       the current rule (query/planner.cc) under THRESHOLDS
    old_cuvs            sparsity < 0.9 -> dense, else SDDMM
THRESHOLDS is a JSON file holding a PlannerThresholds object, or one with a "thresholds" member
(a `sieve calibrate` summary), or gpu_defaults / cuvs_2610 / cpu_defaults (v2 only).
Without --rule: the recorded columns of each CSV, and old_cuvs.

Prints, per input and filter mode, the penalty table (points, mean, p90, worst, as `sieve
bench` computes them) and the N worst points of each rule. A CSV from before 2026-11-30 has no
max_passing column; its bitmap points then use the mean per-query count as the maximum (the
sweep's filters are uniform, so the two differ by a few standard deviations of a binomial).
"""

import argparse
import csv
import json
import math
import os
import sys

PATHS = ("sddmm", "gather", "dense")
REFERENCE_DIM = 128.0  # query/planner.h kReferenceDim
REFERENCE_ROWS = 1e6  # query/planner.h kReferenceRows
UINT64_MAX = 2**64 - 1


# ------------------------------------------------------------------------------------------
# Thresholds

GPU_DEFAULTS = {  # query/planner.cc PlannerThresholds::GpuDefaults()
    "sddmm_max_rows": 2000, "sddmm_dim_exponent": 0.5, "sddmm_max_fraction": 0.03,
    "gather_min_rows": 200000, "gather_scale": 5.5, "gather_max_fraction": 0.5,
    "bitmap_sddmm_max_rows": UINT64_MAX, "bitmap_sddmm_max_fraction": 0.03,
    "bitmap_sddmm_base_rows": 0.0,
    "bitmap_sddmm_max_share": 1.0, "bitmap_union_gather": False,
    "bitmap_gather_max_fraction": 0.0, "bitmap_gather_scale": 0.0,
    "bitmap_gather_dim_exponent": 0.0, "bitmap_gather_rows_exponent": 0.0,
}
CUVS_2610 = dict(GPU_DEFAULTS, sddmm_dim_exponent=0.0)  # query/planner.cc Cuvs2610Thresholds()
CPU_DEFAULTS = {  # query/planner.cc PlannerThresholds::CpuDefaults()
    "sddmm_max_rows": 20000, "sddmm_dim_exponent": 0.0, "sddmm_max_fraction": 1.0,
    "gather_min_rows": 0, "gather_scale": 1e9, "gather_max_fraction": 0.5,
    "bitmap_sddmm_max_rows": 2000, "bitmap_sddmm_max_fraction": 1.0,
    "bitmap_sddmm_base_rows": 0.0,
    "bitmap_sddmm_max_share": 1.0, "bitmap_union_gather": True,
    "bitmap_gather_max_fraction": 0.6, "bitmap_gather_scale": 0.0,
    "bitmap_gather_dim_exponent": 0.0, "bitmap_gather_rows_exponent": 0.0,
}
PRESETS = {"gpu_defaults": GPU_DEFAULTS, "cuvs_2610": CUVS_2610, "cpu_defaults": CPU_DEFAULTS}
# Fields a stored calibration may lack (older versions); PlannerThresholds::FromJson's defaults.
OPTIONAL_DEFAULTS = {"sddmm_dim_exponent": 0.0, "bitmap_sddmm_max_share": 1.0,
                     "gather_rows_exponent": 0.0, "gather_rows_dim_exponent": 0.0,
                     "bitmap_sddmm_rows_exponent": 0.0, "bitmap_sddmm_dim_exponent": 0.0,
                     "bitmap_sddmm_base_rows": 0.0, "bitmap_gather_scale": 0.0,
                     "bitmap_gather_dim_exponent": 0.0, "bitmap_gather_rows_exponent": 0.0}


def load_thresholds(spec):
    if spec in PRESETS:
        return dict(OPTIONAL_DEFAULTS, **PRESETS[spec])
    with open(spec) as f:
        j = json.load(f)
    if "thresholds" in j:
        j = j["thresholds"]
    t = dict(OPTIONAL_DEFAULTS)
    t.update(j)
    return t


# ------------------------------------------------------------------------------------------
# Rules. A point p has rows, dim, k, per_query, passing (bitmap: mean per query), union,
# max_passing (bitmap: largest per-query count).


def below_fraction(sel, bound):
    return bound >= 1.0 or sel < bound


def gather_max_selectivity(t, rows, dim):
    if rows == 0:
        return 0.0
    amortized = 1.0 - t["gather_min_rows"] / rows
    if amortized <= 0:
        return 0.0
    cap = t["gather_max_fraction"]
    if t["gather_rows_exponent"] != 0 and rows > REFERENCE_ROWS:
        e = t["gather_rows_exponent"] * (REFERENCE_DIM / max(dim, 1)) ** t["gather_rows_dim_exponent"]
        cap *= (REFERENCE_ROWS / rows) ** e
    return amortized * min(t["gather_scale"] / math.sqrt(max(dim, 1)), cap)


def bitset_v1(t, p):
    sel = p["passing"] / p["rows"]
    if p["passing"] < t["sddmm_max_rows"] and below_fraction(sel, t["sddmm_max_fraction"]):
        return "sddmm"
    if p["passing"] > p["k"] and sel < gather_max_selectivity(t, p["rows"], p["dim"]):
        return "gather"
    return "dense"


def rule_v1(t, p):
    if p["rows"] == 0 or p["passing"] == 0:
        return "sddmm"
    if not p["per_query"]:
        return bitset_v1(t, p)
    sel = p["passing"] / p["rows"]
    share = p["passing"] / p["union"] if p["union"] > 0 else 1.0
    if (p["passing"] < t["bitmap_sddmm_max_rows"]
            and below_fraction(sel, t["bitmap_sddmm_max_fraction"])
            and below_fraction(share, t["bitmap_sddmm_max_share"])):
        return "sddmm"
    if t["bitmap_union_gather"] and p["union"] < t["bitmap_gather_max_fraction"] * p["rows"]:
        return "gather"
    return "dense"


def sddmm_max_rows_at(t, dim):
    """query/planner.cc SddmmMaxRows: the bitset SDDMM bound at this dim."""
    if t["sddmm_max_rows"] >= UINT64_MAX:
        return float("inf")
    return t["sddmm_max_rows"] * (REFERENCE_DIM / max(dim, 1)) ** t["sddmm_dim_exponent"]


def rule_v2(t, p):
    if p["rows"] == 0 or p["passing"] == 0:
        return "sddmm"
    rows = float(p["rows"])
    # query/planner.cc SameSetForEveryQuery: a bitmap of one set is planned as that bitset.
    same_set = p["per_query"] and p["passing"] == p["union"] and p["max_passing"] <= p["union"]
    if not p["per_query"] or same_set:
        sel = p["passing"] / rows
        if (p["passing"] < sddmm_max_rows_at(t, p["dim"])
                and below_fraction(sel, t["sddmm_max_fraction"])):
            return "sddmm"
        if p["passing"] > p["k"] and sel < gather_max_selectivity(t, p["rows"], p["dim"]):
            return "gather"
        return "dense"
    most = max(p["max_passing"], p["passing"])
    union = max(p["union"], most)
    alternative = bitmap_alternative(t, union, rows, p["dim"])
    if most >= t["bitmap_sddmm_max_rows"]:
        return alternative
    if alternative == "gather":
        share = t["bitmap_sddmm_max_share"]
        return "sddmm" if share >= 1.0 or most < share * union else alternative
    frac = t["bitmap_sddmm_max_fraction"]
    if frac >= 1.0 or (most < t["bitmap_sddmm_base_rows"]
                       + bitmap_sddmm_max_fraction(t, rows, p["dim"]) * rows):
        return "sddmm"
    return alternative


def bitmap_sddmm_max_fraction(t, rows, dim):
    """query/planner.cc BitmapSddmmMaxFraction: per-query SDDMM's fraction against dense."""
    f = t["bitmap_sddmm_max_fraction"]
    if t["bitmap_sddmm_rows_exponent"] != 0 and rows > 0:
        f *= (REFERENCE_ROWS / rows) ** t["bitmap_sddmm_rows_exponent"]
    if t["bitmap_sddmm_dim_exponent"] != 0 and dim > 0:
        f *= (REFERENCE_DIM / dim) ** t["bitmap_sddmm_dim_exponent"]
    return f


def bitmap_gather_max_fraction(t, rows, dim):
    """query/planner.cc BitmapGatherMaxFraction: the union gather's bound on union / rows."""
    if not t["bitmap_union_gather"] or rows == 0:
        return 0.0
    bound = t["bitmap_gather_max_fraction"]
    if t["bitmap_gather_scale"] > 0:
        bound = min(bound, t["bitmap_gather_scale"]
                    * (max(dim, 1) / REFERENCE_DIM) ** t["bitmap_gather_dim_exponent"]
                    * (REFERENCE_ROWS / rows) ** t["bitmap_gather_rows_exponent"])
    return bound


def bitmap_alternative(t, union, rows, dim):
    """The path a bitmap takes when not SDDMM: the union gather or dense."""
    if union < bitmap_gather_max_fraction(t, rows, dim) * rows:
        return "gather"
    return "dense"


def old_cuvs(p):
    if p["rows"] == 0 or p["passing"] == 0:
        return "sddmm"
    return "dense" if 1.0 - p["passing"] / p["rows"] < 0.9 else "sddmm"


def make_rule(spec):
    if spec == "old_cuvs":
        return old_cuvs
    if spec.startswith("recorded:"):
        col = "rule_" + spec.split(":", 1)[1]
        return lambda p: p["recorded"].get(col)
    kind, _, arg = spec.partition(":")
    if kind not in ("v1", "v2") or not arg:
        sys.exit(f"replay_rules: rule spec '{spec}' is not recorded:COL, v1:T, v2:T or old_cuvs")
    t = load_thresholds(arg)
    fn = rule_v1 if kind == "v1" else rule_v2
    return lambda p: fn(t, p)


# ------------------------------------------------------------------------------------------
# Sweeps


def load_csv(path):
    points = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            key = (r["mode"], r["overlap"], int(r["rows"]), int(r["dim"]), int(r["passing"]))
            p = points.get(key)
            if p is None:
                mean = int(r["passing"])
                p = points[key] = {
                    "mode": r["mode"], "overlap": r["overlap"], "rows": int(r["rows"]),
                    "dim": int(r["dim"]), "k": int(r["k"]), "per_query": r["mode"] == "bitmap",
                    "passing": mean, "union": int(r["union_rows"]),
                    "max_passing": int(r.get("max_passing") or mean),
                    "ms": {}, "ok": {}, "pruned": {},
                    "recorded": {c: v for c, v in r.items() if c.startswith("rule_")},
                }
            p["ms"][r["path"]] = float(r["ms"])
            p["ok"][r["path"]] = r["status"] == "ok"
            p["pruned"][r["path"]] = r["status"] == "pruned"
    return list(points.values()), sorted({c[5:] for p in points.values() for c in p["recorded"]})


def load_calibrate_json(path):
    with open(path) as f:
        j = json.load(f)
    k = 64
    points = []
    for c in j["points"]:
        ms = {q: (v if v is not None else float("nan")) for q, v in c["ms"].items()}
        points.append({
            "mode": c["mode"], "overlap": c.get("overlap", ""), "rows": c["rows"],
            "dim": c["dim"], "k": k, "per_query": c["mode"] == "bitmap",
            "passing": c["passing"], "union": c.get("union", c["passing"]),
            "max_passing": c.get("max_passing", c["passing"]),
            "ms": ms, "ok": {q: c["ms"][q] is not None for q in PATHS},
            "pruned": {q: False for q in PATHS}, "recorded": {},
        })
    return points, []


def best_ms(p):
    times = [p["ms"][q] for q in PATHS if p["ok"].get(q)]
    return min(times) if times else float("nan")


def quantile(v, q):
    v = sorted(v)
    pos = q * (len(v) - 1)
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def score(points, rule):
    """As query/calibrate/score.cc Score: ratios clamped at 1, failed choices skipped."""
    ratios, lower, rows = [], 0, []
    for p in points:
        chosen = rule(p)
        if chosen is None or chosen not in p["ms"] or not (p["ok"][chosen] or p["pruned"][chosen]):
            continue
        r = max(1.0, p["ms"][chosen] / best_ms(p))
        lower += p["pruned"][chosen]
        ratios.append(r)
        rows.append((r, chosen, p))
    if not ratios:
        return None, rows
    return {"points": len(ratios), "mean": sum(ratios) / len(ratios),
            "p90": quantile(ratios, 0.9), "worst": max(ratios), "lower": lower}, rows


def describe(p):
    what = p["mode"] + (f"/{p['overlap']}" if p["per_query"] else "")
    extra = f" union {p['union']:,}" if p["per_query"] else ""
    times = " ".join(f"{q} {p['ms'][q]:.4g}" for q in PATHS if q in p["ms"])
    return f"{what} {p['rows']:,}x{p['dim']} passing {p['passing']:,}{extra}: {times} ms"


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sweeps", nargs="+")
    ap.add_argument("--rule", action="append", default=[], metavar="NAME=SPEC")
    ap.add_argument("--worst", type=int, default=5, help="worst points listed per rule (0: none)")
    a = ap.parse_args()
    for path in a.sweeps:
        if path.endswith(".json"):
            points, recorded = load_calibrate_json(path)
        else:
            points, recorded = load_csv(path)
        rules = []
        for r in a.rule:
            name, eq, spec = r.partition("=")
            if not eq:
                sys.exit(f"replay_rules: --rule '{r}' is not NAME=SPEC")
            rules.append((name, make_rule(spec)))
        if not a.rule:
            rules = [("old_cuvs", old_cuvs)] + [(c, make_rule("recorded:" + c)) for c in recorded]
        print(f"## {os.path.basename(path)}: {len(points)} points\n")
        for mode in ("bitset", "bitmap"):
            sel = [p for p in points if p["mode"] == mode]
            if not sel:
                continue
            print(f"{mode}: penalty = chosen path's time / fastest path's time\n")
            print("| rule | points | mean | p90 | worst |\n|---|---|---|---|---|")
            worst_lists = []
            for name, rule in rules:
                s, rows = score(sel, rule)
                if s is None:
                    print(f"| {name} | 0 | - | - | - |")
                    continue
                lb = f" ({s['lower']} lower bounds)" if s["lower"] else ""
                print(f"| {name} | {s['points']} | {s['mean']:.3f}x | {s['p90']:.3f}x | "
                      f"{s['worst']:.2f}x{lb} |")
                worst_lists.append((name, sorted(rows, key=lambda x: -x[0])[:a.worst]))
            print()
            for name, rows in worst_lists:
                rows = [x for x in rows if x[0] > 1.0]
                if not rows:
                    continue
                print(f"worst under {name}:")
                for r, chosen, p in rows:
                    print(f"  {r:.2f}x  chose {chosen:6s}  {describe(p)}")
                print()


if __name__ == "__main__":
    main()
