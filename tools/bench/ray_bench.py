"""Throughput of sieve.ray.ShardedCollection: N CPU actors against 1, and one embedded
collection in this process, on the same rows and queries in one run.

    PYTHONPATH=build-cpu/python build/python-env/bin/python tools/bench/ray_bench.py \\
        --rows 300000 --dim 128 --actors 1,3 --seconds 15 --json out.json

For each actor count: ingest rows/s (the whole batch, routed by id, validated then written
concurrently), then searches (--batch queries, k, one filter of each --fractions passing rows)
for --seconds each with --concurrency driver threads, reporting batches/s, queries/s and the
median and p90 latency of a batch. Every merged result is checked against the embedded
collection's once per shape (same ids and distances). Prints a markdown table; --json writes
the raw figures.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import threading
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

import numpy as np  # noqa: E402
import ray  # noqa: E402

import sieve  # noqa: E402
import sieve.ray as sray  # noqa: E402


def data(rows: int, dim: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    v = rng.standard_normal((rows, dim), dtype=np.float32)
    ids = rng.permutation(rows).astype(np.int64)
    bucket = rng.integers(0, 1000, rows)  # "bucket < f * 1000" passes a fraction f
    return v, ids, {"bucket": bucket}


def timed_searches(search, seconds: float, concurrency: int) -> list[float]:
    latencies: list[float] = []
    lock = threading.Lock()
    stop = time.monotonic() + seconds

    def loop():
        while time.monotonic() < stop:
            t0 = time.perf_counter()
            search()
            dt = time.perf_counter() - t0
            with lock:
                latencies.append(dt)

    threads = [threading.Thread(target=loop) for _ in range(concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return latencies


def summary(latencies: list[float], seconds: float, batch: int) -> dict:
    lat = sorted(latencies)
    return {"batches": len(lat), "batches_per_s": len(lat) / seconds,
            "queries_per_s": len(lat) * batch / seconds,
            "p50_ms": 1e3 * statistics.median(lat),
            "p90_ms": 1e3 * lat[int(0.9 * (len(lat) - 1))]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=300000)
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--batch", type=int, default=16, help="queries per search call")
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--fractions", default="0.01,1.0", help="passing fractions of the filter")
    ap.add_argument("--actors", default="1,3")
    ap.add_argument("--seconds", type=float, default=15)
    ap.add_argument("--concurrency", type=int, default=4, help="driver threads searching")
    ap.add_argument("--num-cpus", type=int, default=4, help="ray.init(num_cpus=)")
    ap.add_argument("--work", default=None, help="directory for the databases")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()

    work = args.work or tempfile.mkdtemp(prefix="ray_bench_")
    v, ids, attrs = data(args.rows, args.dim)
    queries = np.random.default_rng(1).standard_normal((args.batch, args.dim), dtype=np.float32)
    fractions = [float(f) for f in args.fractions.split(",")]
    filters = {f: (None if f >= 1 else "bucket < %d" % int(round(f * 1000))) for f in fractions}
    out = {"args": vars(args), "cores": os.cpu_count(), "runs": []}

    db = sieve.open(os.path.join(work, "embedded"))
    one = db.create_collection("items", args.dim, attributes={"bucket": "int"})
    t0 = time.perf_counter()
    one.ingest(v, attrs, ids)
    embedded = {"actors": 0, "ingest_rows_per_s": args.rows / (time.perf_counter() - t0),
                "search": {}}
    want = {}
    for f, flt in filters.items():
        want[f] = one.search(queries, args.k, filter=flt)
        lat = timed_searches(lambda flt=flt: one.search(queries, args.k, filter=flt),
                             args.seconds, args.concurrency)
        embedded["search"][str(f)] = summary(lat, args.seconds, args.batch)
    out["runs"].append(embedded)

    ray.init(num_cpus=args.num_cpus, include_dashboard=False, log_to_driver=False,
             configure_logging=False)
    for n in [int(a) for a in args.actors.split(",")]:
        coll = sray.ShardedCollection.create("items", os.path.join(work, "ray%d" % n), n,
                                             dim=args.dim, attributes={"bucket": "int"})
        t0 = time.perf_counter()
        coll.ingest(v, attrs, ids)
        run = {"actors": n, "ingest_rows_per_s": args.rows / (time.perf_counter() - t0),
               "search": {}}
        for f, flt in filters.items():
            got = coll.search(queries, args.k, filter=flt)
            assert np.array_equal(got.distances, want[f].distances), "distances differ"
            assert np.array_equal(got.ids, want[f].ids), "ids differ"
            lat = timed_searches(lambda flt=flt: coll.search(queries, args.k, filter=flt),
                                 args.seconds, args.concurrency)
            run["search"][str(f)] = summary(lat, args.seconds, args.batch)
            plan = coll.search(queries, args.k, filter=flt, explain=True).plan
            run["search"][str(f)]["shard_ms"] = [s["ms"] for s in plan["shards"]]
            run["search"][str(f)]["path"] = sorted({s["plan"]["path"] for s in plan["shards"]})
        coll.close()
        out["runs"].append(run)
    ray.shutdown()
    db.close()

    print("| actors | ingest rows/s | " + " | ".join(
        "%g %% passing: batches/s, p50 / p90 ms" % (100 * f) for f in fractions) + " |")
    print("|---|---|" + "---|" * len(fractions))
    for run in out["runs"]:
        cells = ["%.1f, %.1f / %.1f" % (run["search"][str(f)]["batches_per_s"],
                                         run["search"][str(f)]["p50_ms"],
                                         run["search"][str(f)]["p90_ms"]) for f in fractions]
        name = "embedded (no Ray)" if run["actors"] == 0 else str(run["actors"])
        print("| %s | %.0f | %s |" % (name, run["ingest_rows_per_s"], " | ".join(cells)))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
