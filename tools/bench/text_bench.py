#!/usr/bin/env python3
"""BM25 top-10 query latency and indexing throughput: Sieve beside Tantivy and bm25s, on the
same tokens, over WordNet's glosses and a synthetic Zipfian corpus (tools/bench/README.md,
"Text: BM25 beside Tantivy and bm25s").

Every engine indexes exactly the terms Sieve's analyzer makes (sieve.analyze): bm25s gets the
term lists, Tantivy a text field with its "whitespace" tokenizer over the terms joined by
spaces, and Sieve the original text in a `text` attribute with that analyzer. Queries are
term queries ORed (BM25 summed over the query's terms), top 10, one at a time on one thread,
after a warm-up; the time is the Python call's, measured with perf_counter_ns.

Corpora:
  wordnet  the 117,659 glosses of Debian's wordnet-base (tools/wordnet.py), analyzer english.
  zipf     --zipf-docs synthetic documents (default 1,000,000), analyzer simple. Vocabulary of
           --zipf-vocab words (default 200,000); word r (rank 1..V) is r written in base 26
           with letters a-z and the prefix "w" ("wb", "wc", ...), so the simple analyzer keeps
           it as it is; a word's probability is proportional to 1 / r^--zipf-s (default 1.07,
           the exponent measured for English text); lengths are lognormal with median 12 and
           sigma 0.6, clipped to 1..200 (mean 14.4: titles, glosses, short abstracts).
Queries (--queries, default 1,000, after --warmup 100; seed --seed): 1 to 4 words (uniform);
each word, with probability 1/2, is a word occurrence of a random document (so common words
come at their frequency) and otherwise a word drawn uniformly from the words of document
frequency >= 2 (rare words); a query whose terms are all stop words is drawn again.

Agreement: top-10 overlap |A ∩ B| / 10 averaged over queries. bm25s runs twice: k1 = 1.5,
b = 0.75 (Sieve's default: Sieve must equal it, scores to 1e-9 relative) and k1 = 1.2 (Tantivy's
fixed k1, so Tantivy's overlap measures its document-length quantization only). Sieve is run
when this build's Collection.search takes a text query (text=, text_field=); otherwise its
column is left out and the report says so.

Interleaved (--interleave ROUNDS): Tantivy and Sieve again over the same timed queries, each
query on both back to back in every round, each query's minimum over the rounds reported
(tools/bench/README.md, "Text"): the ratio a shared machine's noise moves least.
"""
import argparse
import inspect
import json
import math
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tools"))

import sieve  # noqa: E402
import wordnet  # noqa: E402


def zipf_corpus(n_docs, vocab, s, seed):
    """(texts, term lists) of the synthetic corpus: deterministic for its arguments."""
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, vocab + 1, dtype=np.float64) ** s
    cdf = np.cumsum(p / p.sum())
    lengths = np.clip(np.rint(rng.lognormal(math.log(12), 0.6, n_docs)), 1, 200).astype(int)
    ids = np.minimum(np.searchsorted(cdf, rng.random(int(lengths.sum()))), vocab - 1)
    words = [_word(r) for r in range(1, vocab + 1)]
    terms, at = [], 0
    for n in lengths:
        terms.append([words[i] for i in ids[at:at + n]])
        at += n
    return [" ".join(t) for t in terms], terms


def _word(r):
    s = ""
    while True:
        s = chr(ord("a") + r % 26) + s
        r //= 26
        if r == 0:
            return "w" + s


def draw_queries(surface, terms_of, analyzer, n, seed):
    """n query texts and their analyzed terms (see the module docstring)."""
    rng = np.random.default_rng(seed)
    df = {}
    for words in surface:
        for w in set(words):
            df[w] = df.get(w, 0) + 1
    rare = sorted(w for w, c in df.items() if c >= 2)
    out = []
    while len(out) < n:
        words = []
        for _ in range(int(rng.integers(1, 5))):
            if rng.random() < 0.5:
                doc = surface[int(rng.integers(len(surface)))]
                if doc:
                    words.append(doc[int(rng.integers(len(doc)))])
            else:
                words.append(rare[int(rng.integers(len(rare)))])
        text = " ".join(words)
        terms = terms_of(text)
        if terms:
            out.append((text, terms))
    return out


def timed(fn, queries, warmup):
    for q in queries[:warmup]:
        fn(q)
    results, lat = [], []
    for q in queries[warmup:]:
        t0 = time.perf_counter_ns()
        r = fn(q)
        lat.append((time.perf_counter_ns() - t0) / 1e3)
        results.append(r)
    return results, lat


def interleaved(searches, queries, warmup, rounds):
    """Per engine, each timed query's minimum time over `rounds` rounds; in every round each
    query runs on every engine back to back (the engines' order alternating from round to
    round), so a slow spell of a shared machine falls on all engines alike."""
    names = list(searches)
    for q in queries[:warmup]:
        for name in names:
            searches[name](q)
    best = {name: [math.inf] * (len(queries) - warmup) for name in names}
    clock = time.perf_counter_ns
    for r in range(rounds):
        order = names if r % 2 == 0 else names[::-1]
        for i, q in enumerate(queries[warmup:]):
            for name in order:
                fn = searches[name]
                t0 = clock()
                fn(q)
                t = (clock() - t0) / 1e3
                if t < best[name][i]:
                    best[name][i] = t
    return best


def summary(lat_us):
    lat = sorted(lat_us)
    return {"median_us": round(statistics.median(lat), 1),
            "p99_us": round(lat[min(len(lat) - 1, int(math.ceil(0.99 * len(lat))) - 1)], 1),
            "mean_us": round(statistics.fmean(lat), 1), "queries": len(lat)}


def overlap(a, b, k=10):
    return statistics.fmean(len(set(x[:k]) & set(y[:k])) / k for x, y in zip(a, b))


def tie_aware(hits, queries, exact, k=10):
    """Mean fraction of an engine's top k that is a correct top-k answer by the exact scores
    `exact(q)` (bm25s over every document): a hit counts when its exact score is at least the
    exact k-th best score (so a different choice among tied documents is not a disagreement)."""
    fracs = []
    for h, q in zip(hits, queries):
        scores = exact(q)
        positive = scores[scores > 0]
        if len(positive) == 0:
            fracs.append(1.0 if not h else 0.0)
            continue
        kth = np.partition(positive, -min(k, len(positive)))[-min(k, len(positive))]
        want = min(k, len(positive))
        good = sum(1 for d in h[:k] if scores[d] >= kth * (1 - 1e-9))
        fracs.append(min(good, want) / want)
    return statistics.fmean(fracs)


# ---- engines ------------------------------------------------------------------------------


def bm25s_engine(term_lists, k1, b):
    import bm25s

    t0 = time.perf_counter()
    r = bm25s.BM25(k1=k1, b=b, method="lucene", dtype="float64")
    r.index(term_lists, show_progress=False)
    secs = time.perf_counter() - t0
    vocab = r.vocab_dict

    def search(q):
        terms = [t for t in q[1] if t in vocab]
        if not terms:
            return [], []
        docs, scores = r.retrieve([terms], k=10, show_progress=False, n_threads=0)
        keep = scores[0] > 0
        return docs[0][keep].tolist(), scores[0][keep].tolist()

    def exact(q):
        terms = [t for t in q[1] if t in vocab]
        return r.get_scores(terms) if terms else np.zeros(len(term_lists))

    search.exact = exact
    return search, secs


def tantivy_engine(term_lists, workdir):
    import tantivy

    sb = tantivy.SchemaBuilder()
    sb.add_text_field("body", stored=False, tokenizer_name="whitespace", index_option="freq")
    schema = sb.build()
    path = os.path.join(workdir, "tantivy")
    os.makedirs(path)
    index = tantivy.Index(schema, path=path)
    t0 = time.perf_counter()
    writer = index.writer(heap_size=512 << 20, num_threads=1)
    for terms in term_lists:
        writer.add_document(tantivy.Document(body=" ".join(terms)))
    writer.commit()
    writer.wait_merging_threads()
    secs = time.perf_counter() - t0
    index.reload()
    searcher = index.searcher()
    should = tantivy.Occur.Should

    def search(q):
        query = tantivy.Query.boolean_query(
            [(should, tantivy.Query.term_query(schema, "body", t)) for t in dict.fromkeys(q[1])])
        hits = searcher.search(query, 10).hits
        return [addr.doc for _, addr in hits], [score for score, _ in hits]

    # One thread adds the documents in row order and the merges end in one segment, so a hit's
    # doc id is its row; checked rather than assumed.
    if searcher.num_segments != 1:
        raise RuntimeError("tantivy: %d segments after wait_merging_threads; the row mapping "
                           "needs one" % searcher.num_segments)
    return search, secs


def sieve_engine(texts, analyzer, workdir):
    params = inspect.signature(sieve.Collection.search).parameters
    if "text" not in params or "text_field" not in params:
        return None, None, "this build's Collection.search takes no text query (issue 34 item 4)"
    db = sieve.open(os.path.join(workdir, "sieve.db"))
    coll = db.create_collection("t", 1, attributes={"body": "text:" + analyzer})
    t0 = time.perf_counter()
    batch = 100_000
    for s in range(0, len(texts), batch):
        part = texts[s:s + batch]
        coll.ingest(np.zeros((len(part), 1), np.float32), attributes={"body": part},
                    ids=np.arange(s, s + len(part)))
    secs = time.perf_counter() - t0

    def search(q):
        res = coll.search(None, k=10, text=q[0], text_field="body")
        n = int(res.counts[0])
        return res.ids[0, :n].tolist(), res.distances[0, :n].tolist()

    return search, secs, db


# ---- one corpus ---------------------------------------------------------------------------


def run_corpus(name, texts, term_lists, analyzer, queries, warmup, engines, rounds=0):
    out = {"corpus": name, "docs": len(texts), "analyzer": analyzer,
           "tokens": int(sum(len(t) for t in term_lists)),
           "vocabulary": len({t for ts in term_lists for t in ts}),
           "queries": len(queries) - warmup, "warmup": warmup, "engines": {}}
    print("%s: %d docs, %d tokens, %d distinct terms" % (name, out["docs"], out["tokens"],
                                                         out["vocabulary"]), file=sys.stderr)
    results, searches, db = {}, {}, None
    work = tempfile.mkdtemp(prefix="text-bench-")
    try:
        plan = [("bm25s k1=1.5", lambda: bm25s_engine(term_lists, 1.5, 0.75)),
                ("bm25s k1=1.2", lambda: bm25s_engine(term_lists, 1.2, 0.75)),
                ("tantivy", lambda: tantivy_engine(term_lists, work))]
        exact = {}
        for label, make in plan:
            if engines and label.split()[0] not in engines:
                continue
            search, secs = make()
            if hasattr(search, "exact"):
                exact[label] = search.exact
            res, lat = timed(search, queries, warmup)
            results[label] = res
            if label == "tantivy":
                searches[label] = search
            out["engines"][label] = dict(summary(lat), index_s=round(secs, 2),
                                         docs_per_s=round(len(texts) / secs))
            print("  %-13s index %6.1f s (%8.0f docs/s)  median %7.1f us  p99 %8.1f us"
                  % (label, secs, len(texts) / secs, out["engines"][label]["median_us"],
                     out["engines"][label]["p99_us"]), file=sys.stderr)
        if not engines or "sieve" in engines:
            search, secs, db = sieve_engine(texts, analyzer, work)
            if search is None:
                out["sieve_skipped"] = db
                print("  sieve         skipped: %s" % db, file=sys.stderr)
            else:
                res, lat = timed(search, queries, warmup)
                results["sieve"] = res
                searches["sieve"] = search
                out["engines"]["sieve"] = dict(summary(lat), index_s=round(secs, 2),
                                               docs_per_s=round(len(texts) / secs))
                print("  sieve         index %6.1f s (%8.0f docs/s)  median %7.1f us  p99 "
                      "%8.1f us" % (secs, len(texts) / secs, out["engines"]["sieve"]["median_us"],
                                    out["engines"]["sieve"]["p99_us"]), file=sys.stderr)
        if rounds > 0 and searches:
            best = interleaved(searches, queries, warmup, rounds)
            out["interleaved"] = {"rounds": rounds}
            for label, lat in best.items():
                out["interleaved"][label] = summary(lat)
                print("  interleaved %-7s min of %d rounds: median %7.1f us  p99 %8.1f us"
                      % (label, rounds, out["interleaved"][label]["median_us"],
                         out["interleaved"][label]["p99_us"]), file=sys.stderr)
            if "sieve" in best and "tantivy" in best:
                ratio = {m: round(out["interleaved"]["sieve"][m] / out["interleaved"]["tantivy"][m],
                                  3) for m in ("median_us", "p99_us")}
                out["interleaved"]["sieve/tantivy"] = ratio
                print("  interleaved sieve/tantivy: median %.3f  p99 %.3f"
                      % (ratio["median_us"], ratio["p99_us"]), file=sys.stderr)
    finally:
        if db is not None and not isinstance(db, str):
            db.close()
        shutil.rmtree(work, ignore_errors=True)
    ids = {k: [r[0] for r in v] for k, v in results.items()}
    agree = {}
    for a, b in [("tantivy", "bm25s k1=1.2"), ("tantivy", "bm25s k1=1.5"),
                 ("sieve", "bm25s k1=1.5"), ("sieve", "tantivy")]:
        if a in ids and b in ids:
            agree["%s vs %s" % (a, b)] = round(overlap(ids[a], ids[b]), 4)
    timed_queries = queries[warmup:]
    for a, b in [("tantivy", "bm25s k1=1.2"), ("sieve", "bm25s k1=1.5")]:
        if a in ids and b in exact:
            agree["%s top-10 correct by %s's exact scores (ties allowed)" % (a, b)] = round(
                tie_aware(ids[a], timed_queries, exact[b]), 4)
    if "sieve" in results and "bm25s k1=1.5" in results:
        worst = 0.0
        for (_, s1), (_, s2) in zip(results["sieve"], results["bm25s k1=1.5"]):
            for x, y in zip(s1, s2):
                worst = max(worst, abs(x - y) / max(abs(y), 1e-300))
        agree["sieve vs bm25s k1=1.5: max relative score difference"] = worst
    out["top10_agreement"] = agree
    for k, v in agree.items():
        print("  agreement %s: %s" % (k, v), file=sys.stderr)
    return out


def markdown(report):
    """The report's tables, as the results README shows them."""
    lines = ["| corpus | engine | index s | docs/s | median us | p99 us | mean us |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: |"]
    for c in report["corpora"]:
        for name, e in c["engines"].items():
            lines.append("| %s | %s | %.1f | %d | %.1f | %.1f | %.1f |" % (
                c["corpus"], name, e["index_s"], e["docs_per_s"], e["median_us"], e["p99_us"],
                e["mean_us"]))
        if "sieve_skipped" in c:
            lines.append("| %s | sieve | | | | | (skipped: %s) |" % (c["corpus"],
                                                                 c["sieve_skipped"]))
    inter = [c for c in report["corpora"] if "interleaved" in c]
    if inter:
        lines += ["", "| corpus | engine | interleaved rounds | median us | p99 us |",
                  "| --- | --- | ---: | ---: | ---: |"]
        for c in inter:
            for name, e in c["interleaved"].items():
                if isinstance(e, dict) and "median_us" in e and "queries" in e:
                    lines.append("| %s | %s | %d | %.1f | %.1f |" % (
                        c["corpus"], name, c["interleaved"]["rounds"], e["median_us"],
                        e["p99_us"]))
    lines += ["", "| corpus | agreement | value |", "| --- | --- | ---: |"]
    for c in report["corpora"]:
        for k, v in c["top10_agreement"].items():
            lines.append("| %s | %s | %s |" % (c["corpus"], k, v))
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", choices=["wordnet", "zipf", "both"], default="both")
    ap.add_argument("--zipf-docs", type=int, default=1_000_000)
    ap.add_argument("--zipf-vocab", type=int, default=200_000)
    ap.add_argument("--zipf-s", type=float, default=1.07)
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--seed", type=int, default=34)
    ap.add_argument("--engines", default="", help="comma list of bm25s,tantivy,sieve (all)")
    ap.add_argument("--interleave", type=int, default=0, metavar="ROUNDS",
                    help="also time Tantivy and Sieve over the same queries in ROUNDS rounds, "
                    "each query on both engines back to back, and report each query's minimum "
                    "(0: off)")
    ap.add_argument("--out", default="", help="write the results as JSON here (and the tables "
                    "as Markdown beside it, .md)")
    a = ap.parse_args()
    engines = set(filter(None, a.engines.split(",")))
    report = {"command": " ".join([os.path.relpath(sys.argv[0], ROOT)] + sys.argv[1:]),
              "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                          "platform": platform.platform()},
              "versions": _versions(), "corpora": []}
    n = a.queries + a.warmup
    if a.corpus in ("wordnet", "both"):
        texts = [r["gloss"] for r in wordnet.read_synsets()]
        terms = [sieve.analyze(t, "english") for t in texts]
        surface = [sieve.analyze(t, "simple") for t in texts]
        queries = draw_queries(surface, lambda q: sieve.analyze(q, "english"), "english", n,
                               a.seed)
        report["corpora"].append(run_corpus("wordnet", texts, terms, "english", queries,
                                            a.warmup, engines, a.interleave))
    if a.corpus in ("zipf", "both"):
        texts, terms = zipf_corpus(a.zipf_docs, a.zipf_vocab, a.zipf_s, a.seed)
        for t, ts in zip(texts[:200], terms[:200]):  # the analyzer keeps the words as they are
            assert sieve.analyze(t, "simple") == ts
        queries = draw_queries(terms, lambda q: sieve.analyze(q, "simple"), "simple", n,
                               a.seed + 1)
        c = run_corpus("zipf", texts, terms, "simple", queries, a.warmup, engines, a.interleave)
        c.update(zipf_vocab=a.zipf_vocab, zipf_s=a.zipf_s)
        report["corpora"].append(c)
    if a.out:
        with open(a.out, "w") as f:
            json.dump(report, f, indent=1)
        with open(os.path.splitext(a.out)[0] + ".md", "w") as f:
            f.write(markdown(report))
    print(json.dumps(report, indent=1))


def _versions():
    from importlib.metadata import PackageNotFoundError, version

    out = {"sieve": sieve.__version__}
    for p in ["tantivy", "bm25s", "numpy", "scipy"]:
        try:
            out[p] = version(p)
        except PackageNotFoundError:
            out[p] = None
    return out


if __name__ == "__main__":
    main()
