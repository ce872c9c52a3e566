import json, subprocess, statistics, sys
N = "/work/main/build-cpu/tools/sieve"; O = "/work/old/build/tools/sieve"
cases = [("none", []), ("cat < 1 (0.1%)", ["--filter", "cat < 1"]), ("cat < 50 (5%)", ["--filter", "cat < 50"]),
         ("cat < 500 (50%)", ["--filter", "cat < 500"]), ("per query, 1-11%", ["--filters", "perq.txt"])]
def one(binary, extra):
    r = subprocess.run([binary, "query", "bdb", "--collection", "c", "--queries", "q100.npy", "--k", "10",
                        "--device", "cpu", "--explain"] + extra, capture_output=True, text=True, check=True)
    ex = json.loads(r.stderr.strip().splitlines()[-1])
    st = ex["stages_ms"]
    return st["total"] - st.get("load", 0), ex["shards"][0]["path"], r.stdout
rows = []
for name, extra in cases:
    t = {"old": [], "new": []}
    outs = {}
    for rep in range(7):
        for who, b in (("old", O), ("new", N)):
            ms, path, out = one(b, extra)
            t[who].append(ms); outs[who] = (path, out)
    same = outs["old"][1] == outs["new"][1]
    mo, mn = statistics.median(t["old"]), statistics.median(t["new"])
    rows.append((name, outs["new"][0], outs["old"][0], mo, mn, mn / mo, same))
print("| filter | path (new / old) | old ms | new ms | new / old | same results |")
print("| --- | --- | --- | --- | --- | --- |")
for name, pn, po, mo, mn, r, same in rows:
    print(f"| {name} | {pn} / {po} | {mo:.2f} | {mn:.2f} | {r:.3f} | {'yes' if same else 'NO'} |")
