# Collection.ingest_parquet and Collection.ingest(np.load, pyarrow attributes) of the same rows.
import resource, shutil, sys, time
import numpy as np, pyarrow.parquet as pq
import sieve
form = sys.argv[1]
shutil.rmtree("pydb", ignore_errors=True)
with sieve.open("pydb") as db:
    c = db.create_collection("c", 128, attributes={"color": "string", "price": "float", "n": "int"})
    t0 = time.perf_counter()
    if form == "parquet":
        r = c.ingest_parquet("data.parquet", vector_column="emb")
    else:
        import pandas as pd
        r = c.ingest(np.load("v.npy"), attributes=pd.read_json("a.jsonl", lines=True))
    dt = time.perf_counter() - t0
print("python-%s wall_s=%.2f rows=%d maxrss_kb=%d" % (form, dt, r.rows,
      resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))
shutil.rmtree("pydb", ignore_errors=True)
