"""The store's input: 1,000,000 x 128 float32 vectors (standard normal, seed 7) and three
attributes per row: cat (int 0..99), price (float), color (string)."""
import numpy as np

n, d = 1_000_000, 128
rng = np.random.default_rng(7)
np.save("vectors.npy", rng.standard_normal((n, d), dtype=np.float32))
cat = rng.integers(0, 100, n)
price = rng.random(n) * 100
with open("attrs.jsonl", "w") as f:
    for i in range(n):
        f.write('{"cat": %d, "price": %.3f, "color": "%s"}\n'
                % (cat[i], price[i], ("red", "green", "blue")[i % 3]))
