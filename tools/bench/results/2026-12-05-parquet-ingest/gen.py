# 1M x 128 float32 vectors and three attribute columns (color: string, price: float, n: int),
# written as .npy + .jsonl and as one Parquet file (pyarrow, Snappy, row groups of 128K rows).
import json, sys
import numpy as np, pyarrow as pa, pyarrow.parquet as pq
n, d = 1_000_000, 128
rng = np.random.default_rng(0)
v = rng.standard_normal((n, d), dtype=np.float32)
colors = np.array(["red", "green", "blue", "black", "white"])[rng.integers(0, 5, n)]
price = np.round(rng.random(n) * 100, 2)
cnt = rng.integers(0, 1000, n)
np.save("v.npy", v)
with open("a.jsonl", "w") as f:
    for c, p, k in zip(colors.tolist(), price.tolist(), cnt.tolist()):
        f.write(json.dumps({"color": c, "price": p, "n": k}) + "\n")
t = pa.table({"emb": pa.FixedSizeListArray.from_arrays(pa.array(v.ravel()), d),
              "color": pa.array(colors), "price": pa.array(price), "n": pa.array(cnt)})
pq.write_table(t, "data.parquet", row_group_size=131072)
