"""cuBLAS alone at the dense path's shapes (float16 rows, float32 output, float32 compute), as
DeviceRun::Gemm calls it: how fast can the candidate scan's GEMM be before any epilogue?
Run on the H200: python3 gemm_probe.py. CUDA-event medians of 20 after 5 warm-ups."""
import cupy as cp
import numpy as np
from cupy_backends.cuda.libs import cublas

def timed(fn, reps=20, warm=5):
    for _ in range(warm):
        fn()
    ev = [(cp.cuda.Event(), cp.cuda.Event()) for _ in range(reps)]
    for a, b in ev:
        a.record(); fn(); b.record()
    cp.cuda.Device().synchronize()
    t = sorted(cp.cuda.get_elapsed_time(a, b) for a, b in ev)
    return t[len(t) // 2]

h = cp.cuda.device.get_cublas_handle()
one = np.array(1.0, dtype=np.float32)
zero = np.array(0.0, dtype=np.float32)
cublas.setPointerMode(h, cublas.CUBLAS_POINTER_MODE_HOST)
R16, R32 = 2, 0  # CUDA_R_16F, CUDA_R_32F
C32F = 68        # CUBLAS_COMPUTE_32F

def gemm(X, Q, C, n, m, dim, ld, ctype):
    cublas.gemmEx(h, cublas.CUBLAS_OP_T, cublas.CUBLAS_OP_N, n, m, dim,
                  one.ctypes.data, X.data.ptr, R16, dim, Q.data.ptr, R16, dim,
                  zero.ctypes.data, C.data.ptr, ctype, ld, C32F, -1)

for rows, dim in [(1_000_000, 1024), (1_000_000, 512), (1_000_000, 2048), (10_000_000, 1024)]:
    X = cp.random.uniform(-1, 1, (rows, dim), dtype=cp.float32).astype(cp.float16)
    bytes_ = rows * dim * 2
    for m in [100, 128]:
        Q = cp.random.uniform(-1, 1, (m, dim), dtype=cp.float32).astype(cp.float16)
        for tile_mb in [32, 128, 0]:
            tile = rows if tile_mb == 0 else min(rows, (tile_mb << 20) // (4 * m) // 256 * 256)
            ld = (tile + 31) // 32 * 32
            for ctype, cname in [(R32, "f32"), (R16, "f16")]:
                C = cp.empty((m, ld), dtype=cp.float32 if ctype == R32 else cp.float16)
                def run():
                    for off in range(0, rows, tile):
                        n = min(tile, rows - off)
                        gemm(X[off:], Q, C, n, m, dim, ld, ctype)
                try:
                    ms = timed(run)
                except Exception as e:  # noqa: BLE001
                    print(f"{rows}x{dim} m={m} tile={tile_mb}MB {cname}: {e}")
                    continue
                print(f"{rows}x{dim} m={m} tile={tile_mb or 'all'}MB out={cname}: {ms:.3f} ms "
                      f"= {bytes_ / ms / 1e9:.2f} TB/s rows, {2 * m * rows * dim / ms / 1e9:.0f} TFLOP/s")
                del C
    s = timed(lambda: X.sum(dtype=cp.float32))
    print(f"{rows}x{dim} read once (sum): {s:.3f} ms = {bytes_ / s / 1e9:.2f} TB/s")
    del X
    cp.get_default_memory_pool().free_all_blocks()
