"""BM25 top-k with and without dynamic pruning's effect, on a synthetic Zipfian corpus.

Builds a collection of DOCS documents (words drawn from a Zipf(1.1) vocabulary of VOCAB words,
lengths 5 to 40, the "simple" analyzer), then times text-only searches (k = 10) of random 2- to
4-word queries and reports, from each search's explain, the postings the scorer read and skipped
against the postings of the query terms (what an exhaustive scorer reads). bm25s (method
"lucene") retrieves the same queries on the same tokens as a peer in the same run.

    PYTHONPATH=build/python python tools/bench/bm25_pruning.py --docs 200000 --out DIR
"""

import argparse
import json
import pathlib
import tempfile
import time

import numpy as np

import sieve


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=200000)
    ap.add_argument("--vocab", type=int, default=50000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--out", type=pathlib.Path, default=None)
    args = ap.parse_args()
    rng = np.random.default_rng(34)
    lengths = rng.integers(5, 41, args.docs)
    words = np.minimum(rng.zipf(1.1, lengths.sum()), args.vocab) - 1
    docs, at = [], 0
    for n in lengths:
        docs.append(" ".join("w%d" % w for w in words[at:at + n]))
        at += n
    queries = []
    for _ in range(args.queries):
        n = int(rng.integers(2, 5))
        queries.append(" ".join("w%d" % w for w in np.minimum(rng.zipf(1.1, n), 2000) - 1))

    with tempfile.TemporaryDirectory() as tmp:
        db = sieve.open(pathlib.Path(tmp) / "db")
        coll = db.create_collection("docs", 2, attributes={"body": "text:simple"})
        t0 = time.perf_counter()
        coll.ingest(np.zeros((args.docs, 2), np.float32), attributes={"body": docs})
        ingest_s = time.perf_counter() - t0
        coll.search(k=10, text=queries[0], text_field="body")  # loads the index
        lat, read, skipped, total, blocks_skipped = [], 0, 0, 0, 0
        for q in queries:
            t0 = time.perf_counter()
            res = coll.search(k=10, text=q, text_field="body", explain=True)
            lat.append(time.perf_counter() - t0)
            t = res.plan["text"]
            read += t["postings_read"]
            skipped += t["postings_skipped"]
            total += t["postings"]
            blocks_skipped += t["blocks_skipped"]
        db.close()

    import bm25s
    model = bm25s.BM25(method="lucene", dtype="float64")
    model.index([d.split() for d in docs], show_progress=False)
    peer = []
    for q in queries:
        toks = [w for w in q.split() if w in model.vocab_dict]
        t0 = time.perf_counter()
        if toks:
            model.get_scores(toks).argsort()[-10:]
        peer.append(time.perf_counter() - t0)

    ms = lambda xs, p: 1000 * float(np.percentile(xs, p))
    summary = {
        "docs": args.docs, "vocab": args.vocab, "queries": args.queries, "k": 10,
        "ingest_docs_per_s": round(args.docs / ingest_s),
        "sieve_ms": {"p50": round(ms(lat, 50), 3), "p99": round(ms(lat, 99), 3)},
        "bm25s_get_scores_ms": {"p50": round(ms(peer, 50), 3), "p99": round(ms(peer, 99), 3)},
        "postings": total, "postings_read": read, "postings_skipped": skipped,
        "blocks_skipped": blocks_skipped,
        "read_fraction": round(read / max(total, 1), 4),
    }
    print(json.dumps(summary))
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")


if __name__ == "__main__":
    main()
