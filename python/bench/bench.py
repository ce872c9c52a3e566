#!/usr/bin/env python3
"""The Python package's figures (issue 19), in one run on one machine:

1. search overhead of the Python API beside the C++ API (py_bench_cpp, the same calls in C++)
   on ROWS x DIM float32, 16 queries, k = 10, all rows passing and 1 % passing;
2. ingest of ROWS x DIM float32 with 3 attributes from numpy + a pandas.DataFrame, beside the
   C++ API's DB::Ingest of the same rows (its attribute values built before its clock starts);
3. Sieve's Python API beside FAISS's (IndexFlatL2 + IDSelectorBitmap, Debian's python3-faiss)
   on the same data in this process: time per batch at 0.1, 1, 10 and 100 % passing.

Usage (README "Python"; python/bench/setup-env.sh makes the environment):
  PYTHONPATH=build/python $(bash python/bench/setup-env.sh) python/bench/bench.py \
      --cpp build/python/py_bench_cpp --work /tmp/pybench --out RESULTS.json
C++ and Python alternate (ROUNDS times each) and each figure is the median of its runs.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import time

import numpy as np
import pandas as pd

import sieve

FILTERS = {  # cat is uniform in [0, 1000)
    "0.1%": "cat < 1",
    "1%": "cat < 10",
    "10%": "cat < 100",
    "100%": "",
}


def write_data(d, rows, dim, nq, seed):
    rng = np.random.default_rng(seed)
    os.makedirs(d, exist_ok=True)
    vectors = rng.standard_normal((rows, dim), dtype=np.float32)
    cat = rng.integers(0, 1000, rows).astype(np.int64)
    cents = rng.integers(0, 100_000, rows).astype(np.int64)
    color = rng.integers(0, 37, rows).astype(np.int64)
    queries = rng.standard_normal((nq, dim), dtype=np.float32)
    for name, a in (("vectors", vectors), ("queries", queries), ("cat", cat), ("cents", cents),
                    ("color", color)):
        np.save(os.path.join(d, name + ".npy"), a)
    return vectors, queries, cat, cents, color


def cpp(args, *argv):
    out = subprocess.run([args.cpp, *argv], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def py_ingest(path, vectors, df):
    shutil.rmtree(path, ignore_errors=True)
    with sieve.open(path) as db:
        c = db.create_collection("bench", vectors.shape[1],
                                 attributes={"cat": "int", "price": "float", "color": "string"})
        t0 = time.perf_counter()
        r = c.ingest(vectors, attributes=df)
        s = time.perf_counter() - t0
    assert r.ingested == len(vectors)
    return s


def median_ms(fn, reps):
    fn()  # warm-up
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cpp", required=True, help="py_bench_cpp")
    ap.add_argument("--work", required=True, help="a scratch folder (data, databases)")
    ap.add_argument("--out", required=True, help="results JSON")
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--queries", type=int, default=16)
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--faiss-reps", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    k = 10
    data = os.path.join(args.work, "data")
    vectors, queries, cat, cents, color = write_data(data, args.rows, args.dim, args.queries, 1)
    names = np.array(["color%d" % i for i in range(37)], dtype=object)
    df = pd.DataFrame({"cat": cat, "price": cents / 100.0, "color": names[color]})
    out = {"rows": args.rows, "dim": args.dim, "queries": args.queries, "k": k,
           "sieve": sieve.__version__, "numpy": np.__version__, "pandas": pd.__version__}

    # Ingest, alternating C++ and Python into fresh databases.
    cpp_s, py_s = [], []
    for _ in range(args.rounds):
        db = os.path.join(args.work, "cpp.db")
        shutil.rmtree(db, ignore_errors=True)
        r = cpp(args, "ingest", data, db)
        cpp_s.append(r["ingest_s"])
        out.setdefault("cpp_build_rows_s", r["build_rows_s"])
        shutil.rmtree(db)
        py_s.append(py_ingest(os.path.join(args.work, "py.db"), vectors, df))
    out["ingest"] = {"cpp_s": cpp_s, "python_s": py_s,
                     "cpp_rows_per_s": args.rows / statistics.median(cpp_s),
                     "python_rows_per_s": args.rows / statistics.median(py_s)}
    out["ingest"]["python_over_cpp"] = (out["ingest"]["python_rows_per_s"]
                                        / out["ingest"]["cpp_rows_per_s"])
    print(json.dumps(out["ingest"]), flush=True)

    # Search: the Python database stays open; the C++ program opens the same rows' copy.
    cppdb = os.path.join(args.work, "cpp.db")
    shutil.rmtree(cppdb, ignore_errors=True)
    cpp(args, "ingest", data, cppdb)
    db = sieve.open(os.path.join(args.work, "py.db"))
    coll = db["bench"]
    coll.search(queries, k=k)  # loads the collection
    plans = {f: coll.search(queries, k=k, filter=t, explain=True).plan for f, t in FILTERS.items()}
    cpp_ms = {f: [] for f in FILTERS}
    py_ms = {f: [] for f in FILTERS}
    for _ in range(args.rounds):
        r = cpp(args, "search", data, cppdb, str(args.reps), *FILTERS.values())
        for f, t in FILTERS.items():
            cpp_ms[f].append(r[t])
        for f, t in FILTERS.items():
            py_ms[f].append(median_ms(lambda: coll.search(queries, k=k, filter=t), args.reps))
    out["search"] = {f: {"cpp_ms": cpp_ms[f], "python_ms": py_ms[f],
                         "overhead": statistics.median(py_ms[f]) / statistics.median(cpp_ms[f]) - 1,
                         "path": plans[f]["path"], "passing_rows": plans[f]["passing_rows"]}
                     for f in FILTERS}
    print(json.dumps(out["search"]), flush=True)

    # FAISS's Python API on the same vectors, in this process.
    import faiss

    out["faiss"] = faiss.__version__
    index = faiss.IndexFlatL2(args.dim)
    index.add(vectors)
    faiss_ms, same = {}, {}
    for f, t in FILTERS.items():
        if t:
            limit = int(t.split("<")[1])
            passing = cat < limit
            bits = np.packbits(passing, bitorder="little")
            sel = faiss.IDSelectorBitmap(args.rows, faiss.swig_ptr(bits))
            params = faiss.SearchParameters(sel=sel)
        else:
            params = None

        def run():
            return index.search(queries, k, params=params)

        faiss_ms[f] = median_ms(run, args.faiss_reps)
        _, fi = run()
        si = coll.search(queries, k=k, filter=t).ids
        same[f] = int(sum(len(set(a) & set(b)) for a, b in zip(fi.tolist(), si.tolist())))
    out["beside_faiss"] = {f: {"sieve_ms": statistics.median(py_ms[f]), "faiss_ms": faiss_ms[f],
                               "speedup": faiss_ms[f] / statistics.median(py_ms[f]),
                               "same_ids": same[f], "of": args.queries * k}
                           for f in FILTERS}
    print(json.dumps(out["beside_faiss"]), flush=True)
    db.close()
    with open(args.out, "w") as fh:
        json.dump(out, fh, indent=1)
        fh.write("\n")


if __name__ == "__main__":
    main()
