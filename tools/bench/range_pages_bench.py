"""Range search and deep pages through the Python module, beside the naive way (one top-k with
k large, then post-processing) and, for range search, FAISS's CPU range search (IndexFlat, when
faiss-cpu is installed) on the same rows.

  range: radii that pass --passing rows of each query (exactly: the radius is the float64
         distance of the query's n-th row), limit = the most rows a search takes;
         naive = search(k = n + 1 rounded up to the window a user would guess: min(4n, rows,
         1,000,000)), keep d <= r.
  pages: pages --pages of k = --k rows: offset (p-1)*k, and the cursor of the page before;
         naive = search(k = p*k) and slice.

Prints one JSON line per case and a table (median ms over --reps runs, one query per search).
Run at 10M rows on the H200 with --device gpu --rows 10000000 --passing 10,10000,1000000.

  python tools/bench/range_pages_bench.py --rows 200000 --dim 64 --passing 10,10000,100000
"""

import argparse
import json
import statistics
import sys
import tempfile
import time

import numpy as np

import sieve


def med_ms(fn, reps):
    times = []
    out = None
    for _ in range(reps):
        t0 = time.perf_counter()
        out = fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times), out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=200000)
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--shards", type=int, default=1)
    ap.add_argument("--passing", default="10,10000,100000")
    ap.add_argument("--pages", default="1,10,100")
    ap.add_argument("--k", type=int, default=100)
    ap.add_argument("--queries", type=int, default=3)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--device", default="auto")
    ap.add_argument("--no-faiss", action="store_true")
    a = ap.parse_args()

    rng = np.random.default_rng(0)
    x = rng.standard_normal((a.rows, a.dim), dtype=np.float32)
    qs = rng.standard_normal((a.queries, a.dim), dtype=np.float32)
    faiss = None
    if not a.no_faiss:
        try:
            import faiss as faiss_module
            faiss = faiss_module
        except ImportError:
            print("faiss not installed: no FAISS column (pip install faiss-cpu)", file=sys.stderr)
    table = []
    with tempfile.TemporaryDirectory() as d:
        db = sieve.open(d + "/db")
        coll = db.create_collection("c", a.dim, metric="l2", shards=a.shards)
        for s in range(0, a.rows, 1000000):
            coll.ingest(x[s:s + 1000000])
        coll.search(qs[:1], k=1, device=a.device)  # load the rows
        index = None
        if faiss is not None:
            index = faiss.IndexFlatL2(a.dim)
            index.add(x)
        xd = x.astype(np.float64)
        for n in [int(v) for v in a.passing.split(",")]:
            n = min(n, a.rows)
            for qi in range(a.queries):
                q = qs[qi:qi + 1]
                dist = ((xd - q.astype(np.float64)) ** 2).sum(1)
                r = float(np.partition(dist, n - 1)[n - 1])
                limit = 1000000
                ms, res = med_ms(lambda: coll.search(q, radius=r, limit=limit, device=a.device,
                                                     explain=True), a.reps)
                got = int(res.counts[0])
                windows = res.plan["windows"]
                kn = min(4 * n, a.rows, 1000000)

                def naive():
                    rr = coll.search(q, k=kn, device=a.device)
                    ids, dd = rr.neighbors(0)
                    return ids[dd <= r]
                naive_ms, naive_ids = med_ms(naive, a.reps)
                row = {"case": "range", "rows": a.rows, "dim": a.dim, "passing": n,
                       "returned": got, "sieve_ms": round(ms, 2), "windows": windows,
                       "naive_k": kn, "naive_ms": round(naive_ms, 2),
                       "naive_returned": int(len(naive_ids))}
                if index is not None:
                    # FAISS compares float32 distances to the radius: allow its rounding.
                    fr = np.float32(r) * np.float32(1 + 1e-6)
                    fms, (lims, _, _) = med_ms(lambda: index.range_search(q, float(fr)), a.reps)
                    row["faiss_ms"] = round(fms, 2)
                    row["faiss_returned"] = int(lims[1])
                print(json.dumps(row))
                table.append(row)
        for p in [int(v) for v in a.pages.split(",")]:
            for qi in range(a.queries):
                q = qs[qi:qi + 1]
                off = (p - 1) * a.k
                ms, res = med_ms(lambda: coll.search(q, k=a.k, offset=off, device=a.device,
                                                     explain=True), a.reps)
                cursor = None
                if p > 1:
                    prev = coll.search(q, k=a.k, offset=off - a.k, device=a.device)
                    cursor = prev.next[0]
                cms, cres = med_ms(lambda: coll.search(q, k=a.k, after=cursor or "",
                                                       device=a.device), a.reps)
                assert (cres.ids == res.ids).all()

                def naive():
                    rr = coll.search(q, k=p * a.k, device=a.device)
                    return rr.ids[0, off:]
                naive_ms, naive_ids = med_ms(naive, a.reps)
                assert (naive_ids == res.ids[0]).all()
                row = {"case": "page", "rows": a.rows, "dim": a.dim, "page": p, "k": a.k,
                       "offset_ms": round(ms, 2), "cursor_ms": round(cms, 2),
                       "windows": res.plan["windows"], "naive_ms": round(naive_ms, 2)}
                print(json.dumps(row))
                table.append(row)
        db.close()
    print("| case | n | sieve ms | rounds | naive ms | faiss ms |", file=sys.stderr)
    for row in table:
        if row["case"] == "range":
            print("| range | %d | %.2f | %d | %.2f | %s |" % (
                row["passing"], row["sieve_ms"], len(row["windows"]), row["naive_ms"],
                row.get("faiss_ms", "-")), file=sys.stderr)
        else:
            print("| page %d (offset / cursor) | %d | %.2f / %.2f | %d | %.2f | - |" % (
                row["page"], row["k"], row["offset_ms"], row["cursor_ms"],
                len(row["windows"]), row["naive_ms"]), file=sys.stderr)


if __name__ == "__main__":
    main()
