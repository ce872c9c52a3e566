#!/usr/bin/env python3
"""The PyTorch code a user would write for filtered exact kNN, timed on the GPU.

Same shape as tools/bench/gpu_paths_bench.cc: ROWS x DIM float16 rows, Q queries, k, one shared
filter passing each fraction of rows. Two baselines per fraction, both exact:
  dense:  scores = q @ x.T, distances, masked_fill of the failing rows, topk
  gather: idx = mask.nonzero(), x.index_select(idx), q @ xg.T, topk, idx[...] to map back
Timed with CUDA events after warm-up; medians. Prints a table and one JSON line per case.
"""
import argparse
import json
import statistics

import torch


def timeit(fn, warmup, reps):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times), min(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--k", type=int, default=64)
    ap.add_argument("--fractions", default="0.0001,0.001,0.01,0.1,1.0")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--reps", type=int, default=10)
    a = ap.parse_args()
    dev = torch.device("cuda")
    g = torch.Generator(device=dev).manual_seed(1)
    x = torch.rand(a.rows, a.dim, device=dev, generator=g, dtype=torch.float32).half()
    q = torch.rand(a.queries, a.dim, device=dev, generator=g, dtype=torch.float32).half()
    xn = (x.float() ** 2).sum(1)
    qn = (q.float() ** 2).sum(1, keepdim=True)
    print("# PyTorch %s on %s: rows=%d dim=%d queries=%d k=%d f16, medians of %d (ms)" %
          (torch.__version__, torch.cuda.get_device_name(), a.rows, a.dim, a.queries, a.k, a.reps))
    print("| passing | n_pass | dense ms | gather ms | better |")
    print("|---|---|---|---|---|")
    for frac in [float(f) for f in a.fractions.split(",")]:
        n_pass = max(1, int(round(frac * a.rows)))
        perm = torch.randperm(a.rows, device=dev, generator=g)[:n_pass]
        mask = torch.zeros(a.rows, dtype=torch.bool, device=dev)
        mask[perm] = True
        k = min(a.k, n_pass)

        def dense():
            s = (q @ x.T).float()
            d = qn + xn - 2 * s
            d.masked_fill_(~mask, float("inf"))
            return torch.topk(d, k, dim=1, largest=False)

        def gather():
            idx = mask.nonzero().squeeze(1)
            xg = x.index_select(0, idx)
            s = (q @ xg.T).float()
            d = qn + xn[idx] - 2 * s
            v, i = torch.topk(d, k, dim=1, largest=False)
            return v, idx[i]

        dm, _ = timeit(dense, a.warmup, a.reps)
        gm, _ = timeit(gather, a.warmup, a.reps)
        # Both must agree (exact baselines).
        dv, _ = dense()
        gv, _ = gather()
        agree = torch.allclose(dv, gv, rtol=1e-3, atol=1e-2)
        print("| %.4g %% | %d | %.3f | %.3f | %.3f |" % (frac * 100, n_pass, dm, gm, min(dm, gm)))
        print(json.dumps({"fraction": frac, "n_pass": n_pass, "torch_dense_ms": dm,
                          "torch_gather_ms": gm, "agree": bool(agree)}))


if __name__ == "__main__":
    main()
