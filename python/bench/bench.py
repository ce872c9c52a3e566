#!/usr/bin/env python3
"""The Python package's figures (issue 19), in one process on one machine:

1. search overhead of the Python API beside the C++ API on ROWS x DIM float32, 16 queries,
   k = 10, all rows passing and 1 % passing (and 0.1 %, 10 %);
2. ingest of ROWS x DIM float32 with 3 attributes from numpy + a pandas.DataFrame, beside the C++
   API's DB::Ingest of the same rows (its attribute values built before its clock starts);
3. Sieve's Python API beside FAISS's (IndexFlatL2 + IDSelectorBitmap, Debian's python3-faiss)
   on the same data: time per batch at 0.1, 1, 10 and 100 % passing.

The C++ side is python/bench/cpp_baseline.cc, built as build/python/libpy_bench_cpp.so and
loaded with ctypes: its own database and its own copy of the engine, timed in C++. C++ and
Python calls alternate (ingest: ROUNDS times each into fresh databases; search: REPS pairs
per filter), so load on the machine hits both alike; figures are medians.

Usage (python/bench/setup-env.sh makes the environment):
  PYTHONPATH=build/python $(bash python/bench/setup-env.sh) python/bench/bench.py \\
      --lib build/python/libpy_bench_cpp.so --work /tmp/pybench --out RESULTS.json
"""

import argparse
import ctypes
import json
import os
import shutil
import statistics
import time

import numpy as np
import pandas as pd

import sieve
from sieve import _sieve

FILTERS = {  # cat is uniform in [0, 1000)
    "0.1%": "cat < 1",
    "1%": "cat < 10",
    "10%": "cat < 100",
    "100%": "",
}
F32P = ctypes.POINTER(ctypes.c_float)
I64P = ctypes.POINTER(ctypes.c_int64)


def load(path):
    lib = ctypes.CDLL(path)
    lib.bench_open.restype = ctypes.c_void_p
    lib.bench_open.argtypes = [ctypes.c_char_p]
    lib.bench_close.argtypes = [ctypes.c_void_p]
    lib.bench_ingest_s.restype = ctypes.c_double
    lib.bench_ingest_s.argtypes = [ctypes.c_void_p, F32P, ctypes.c_size_t, ctypes.c_uint32,
                                   I64P, I64P, I64P]
    lib.bench_search_ms.restype = ctypes.c_double
    lib.bench_search_ms.argtypes = [ctypes.c_void_p, F32P, ctypes.c_size_t, ctypes.c_int,
                                    ctypes.c_char_p]
    return lib


def ptr(a, t):
    return a.ctypes.data_as(t)


def checked(x, what):
    if x < 0:
        raise RuntimeError("the C++ baseline failed: " + what)
    return x


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True, help="build/python/libpy_bench_cpp.so")
    ap.add_argument("--work", required=True, help="a scratch folder for the databases")
    ap.add_argument("--out", required=True, help="results JSON")
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--queries", type=int, default=16)
    ap.add_argument("--reps", type=int, default=40)
    ap.add_argument("--faiss-reps", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    lib = load(os.path.abspath(args.lib))
    k = 10
    rng = np.random.default_rng(1)
    vectors = rng.standard_normal((args.rows, args.dim), dtype=np.float32)
    cat = rng.integers(0, 1000, args.rows).astype(np.int64)
    cents = rng.integers(0, 100_000, args.rows).astype(np.int64)
    color = rng.integers(0, 37, args.rows).astype(np.int64)
    queries = rng.standard_normal((args.queries, args.dim), dtype=np.float32)
    names = np.array(["color%d" % i for i in range(37)], dtype=object)
    df = pd.DataFrame({"cat": cat, "price": cents / 100.0, "color": names[color]})
    out = {"rows": args.rows, "dim": args.dim, "queries": args.queries, "k": k,
           "sieve": sieve.__version__, "numpy": np.__version__, "pandas": pd.__version__}
    os.makedirs(args.work, exist_ok=True)
    cpp_path = os.path.join(args.work, "cpp.db")
    py_path = os.path.join(args.work, "py.db")

    # Ingest, alternating, each into a fresh database.
    cpp_s, py_s, engine_s = [], [], []
    for r in range(args.rounds):
        for side in ("cpp", "python") if r % 2 == 0 else ("python", "cpp"):
            if side == "cpp":
                shutil.rmtree(cpp_path, ignore_errors=True)
                h = lib.bench_open(cpp_path.encode())
                cpp_s.append(checked(lib.bench_ingest_s(
                    h, ptr(vectors, F32P), args.rows, args.dim, ptr(cat, I64P),
                    ptr(cents, I64P), ptr(color, I64P)), "ingest"))
                lib.bench_close(h)
            else:
                shutil.rmtree(py_path, ignore_errors=True)
                with sieve.open(py_path) as db:
                    c = db.create_collection("bench", args.dim, attributes={
                        "cat": "int", "price": "float", "color": "string"})
                    t0 = time.perf_counter()
                    c.ingest(vectors, attributes=df)
                    py_s.append(time.perf_counter() - t0)
                    engine_s.append(_sieve._last_engine_seconds())
    # same_call: the Python call's wall time beside the DB::Ingest it made (the module times
    # it): the C++ API's time on the very same rows, engine copy and moment.
    out["ingest"] = {"cpp_s": cpp_s, "python_s": py_s, "engine_s_in_python_call": engine_s,
                     "same_call_python_over_cpp": statistics.median(
                         [e / p for e, p in zip(engine_s, py_s)]),
                     "cpp_rows_per_s": args.rows / statistics.median(cpp_s),
                     "python_rows_per_s": args.rows / statistics.median(py_s)}
    out["ingest"]["python_over_cpp"] = (out["ingest"]["python_rows_per_s"]
                                        / out["ingest"]["cpp_rows_per_s"])
    print(json.dumps(out["ingest"]), flush=True)

    # Search: both databases open in this process; a C++ call and a Python call in turn,
    # which one goes first alternating.
    h = lib.bench_open(cpp_path.encode())
    db = sieve.open(py_path)
    coll = db["bench"]
    qp = ptr(queries, F32P)
    out["search"] = {}
    for f, t in FILTERS.items():
        tb = t.encode()
        checked(lib.bench_search_ms(h, qp, args.queries, k, tb), "search")  # loads, warms
        plan = coll.search(queries, k=k, filter=t, explain=True).plan
        cpp_ms, py_ms, engine_ms = [], [], []
        for rep in range(args.reps):
            for side in ("cpp", "python") if rep % 2 == 0 else ("python", "cpp"):
                if side == "cpp":
                    cpp_ms.append(checked(lib.bench_search_ms(h, qp, args.queries, k, tb),
                                          "search"))
                else:
                    t0 = time.perf_counter()
                    coll.search(queries, k=k, filter=t)
                    py_ms.append((time.perf_counter() - t0) * 1e3)
                    engine_ms.append(_sieve._last_engine_seconds() * 1e3)
        ratios = [p / c for p, c in zip(py_ms, cpp_ms)]
        out["search"][f] = {
            "cpp_ms": statistics.median(cpp_ms), "python_ms": statistics.median(py_ms),
            "overhead": statistics.median(py_ms) / statistics.median(cpp_ms) - 1,
            "overhead_of_pairs": statistics.median(ratios) - 1,
            "engine_ms_in_python_call": statistics.median(engine_ms),
            "same_call_overhead": statistics.median(
                [p / e for p, e in zip(py_ms, engine_ms)]) - 1,
            "same_call_overhead_us": statistics.median(
                [(p - e) * 1e3 for p, e in zip(py_ms, engine_ms)]),
            "path": plan["path"], "passing_rows": plan["passing_rows"]}
    lib.bench_close(h)
    print(json.dumps(out["search"]), flush=True)

    # FAISS's Python API on the same vectors, in this process.
    import faiss

    out["faiss"] = faiss.__version__
    index = faiss.IndexFlatL2(args.dim)
    index.add(vectors)
    out["beside_faiss"] = {}
    for f, t in FILTERS.items():
        params = None
        if t:
            bits = np.packbits(cat < int(t.split("<")[1]), bitorder="little")
            params = faiss.SearchParameters(sel=faiss.IDSelectorBitmap(args.rows,
                                                                       faiss.swig_ptr(bits)))
        index.search(queries, k, params=params)  # warm-up
        faiss_ms, sieve_ms = [], []
        for _ in range(args.faiss_reps):
            t0 = time.perf_counter()
            _, fi = index.search(queries, k, params=params)
            faiss_ms.append((time.perf_counter() - t0) * 1e3)
            t0 = time.perf_counter()
            si = coll.search(queries, k=k, filter=t).ids
            sieve_ms.append((time.perf_counter() - t0) * 1e3)
        same = int(sum(len(set(a) & set(b)) for a, b in zip(fi.tolist(), si.tolist())))
        out["beside_faiss"][f] = {
            "sieve_ms": statistics.median(sieve_ms), "faiss_ms": statistics.median(faiss_ms),
            "speedup": statistics.median(faiss_ms) / statistics.median(sieve_ms),
            "same_ids": same, "of": args.queries * k}
    print(json.dumps(out["beside_faiss"]), flush=True)
    db.close()
    with open(args.out, "w") as fh:
        json.dump(out, fh, indent=1)
        fh.write("\n")


if __name__ == "__main__":
    main()
