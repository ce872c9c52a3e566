import numpy as np, sys
rng = np.random.default_rng(7)
n, extra, d = 1_000_000, 100_000, 128
v = rng.standard_normal((n + extra, d), dtype=np.float32)
np.save('base.npy', v[:n]); np.save('append.npy', v[n:])
np.save('queries.npy', rng.standard_normal((100, d), dtype=np.float32))
def attrs(path, lo, hi):
    with open(path, 'w') as f:
        f.write('year,cat,score\n')
        i = np.arange(lo, hi)
        years = 1990 + i % 35; cats = np.array(['a','b','c','d','e'])[i % 5]; score = (i % 1000) / 10.0
        f.write(''.join(f'{y},{c},{s}\n' for y, c, s in zip(years, cats, score)))
attrs('base.csv', 0, n); attrs('append.csv', n, n + extra)
