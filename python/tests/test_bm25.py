"""Exact BM25 and hybrid search from Python: scores against the independent implementation in
the PyPI package bm25s (method "lucene", float64) on the same tokens (the "simple" analyzer on
lowercase words separated by spaces makes exactly str.split()'s tokens), filters, writes seen at
once, hybrid results against fusing the two lists fetched separately, and the HTTP client."""

import numpy as np
import pytest

import sieve

bm25s = pytest.importorskip("bm25s")

WORDS = ["red", "green", "blue", "shoe", "boot", "run", "walk", "city", "road", "river",
         "stone", "light", "dark", "fast", "slow", "tree", "leaf", "wind", "rain", "snow"]


def corpus(n, seed):
    rng = np.random.default_rng(seed)
    docs = []
    for i in range(n):
        length = int(rng.integers(1, 14))
        # Zipf-like: low indexes common; some texts repeat, so scores tie.
        w = np.minimum(rng.integers(0, len(WORDS), length), rng.integers(0, len(WORDS), length))
        docs.append(docs[i // 2] if i % 17 == 5 else " ".join(WORDS[j] for j in w))
    return docs


def reference(texts, query, k1=1.5, b=0.75):
    """bm25s scores of every text (None: not a document), by position."""
    docs = [t for t in texts if t is not None]
    where = [i for i, t in enumerate(texts) if t is not None]
    model = bm25s.BM25(method="lucene", k1=k1, b=b, dtype="float64")
    model.index([d.split() for d in docs], show_progress=False)
    known = [t for t in query.split() if t in model.vocab_dict]
    scores = np.zeros(len(texts))
    if known:
        scores[where] = model.get_scores(known)
    return scores


def expected(ids, scores, passing, k):
    order = sorted((i for i in range(len(ids)) if passing[i] and scores[i] > 0),
                   key=lambda i: (-scores[i], ids[i]))[:k]
    return [ids[i] for i in order], [scores[i] for i in order]


@pytest.fixture
def docs(db):
    coll = db.create_collection("docs", 4, attributes={"body": "text:simple", "n": "int"},
                                shards=2)
    texts = corpus(400, 3)
    texts[7] = None  # a null text is no document
    ids = np.arange(400, dtype=np.int64)[::-1] * 7 + 11  # not in ordinal order
    rng = np.random.default_rng(5)
    coll.ingest(rng.standard_normal((400, 4)).astype(np.float32), ids=ids,
                attributes={"body": texts, "n": list(range(400))})
    return coll, texts, ids.tolist()


@pytest.mark.parametrize("query", ["red shoe", "river stone light", "red red boot",
                                   "snow", "wind rain tree dark"])
def test_scores_agree_with_bm25s(docs, query):
    coll, texts, ids = docs
    want_ids, want_scores = expected(ids, reference(texts, query), [True] * len(ids), 25)
    res = coll.search(text=query, text_field="body", k=25)
    assert res.distances.dtype == np.float64
    assert res.ids.shape == (1, 25)
    assert res.ids[0, : res.counts[0]].tolist() == want_ids
    np.testing.assert_allclose(res.distances[0, : res.counts[0]], want_scores, rtol=1e-9)


def test_filters_writes_and_parameters(docs):
    coll, texts, ids = docs
    n = list(range(len(ids)))
    query = "red shoe walk"
    res = coll.search(None, k=10, filter="n < 150", text=query, text_field="body")
    want, _ = expected(ids, reference(texts, query), [x < 150 for x in n], 10)
    assert res.ids[0, : res.counts[0]].tolist() == want
    # Per-query form: one filter for the one text query.
    res = coll.search(k=10, filters=["n >= 150"], text=query, text_field="body")
    want, _ = expected(ids, reference(texts, query), [x >= 150 for x in n], 10)
    assert res.ids[0, : res.counts[0]].tolist() == want
    # Deletes, updates and upserts are seen by the next search (N, n_t and avgdl too).
    best = coll.search(k=3, text=query, text_field="body").ids[0].tolist()
    coll.delete(ids=best)
    coll.update({"body": "walk walk walk shoe red"}, ids=[ids[20]])
    coll.upsert(np.zeros((1, 4), np.float32), ids=[ids[30]], attributes={"body": ["red"]})
    for i in (ids.index(x) for x in best):
        texts[i] = None
    texts[20] = "walk walk walk shoe red"
    texts[30] = "red"
    alive = [x not in best for x in ids]
    want_ids, want_scores = expected(ids, reference(texts, query), alive, 10)
    res = coll.search(k=10, text=query, text_field="body")
    assert res.ids[0, : res.counts[0]].tolist() == want_ids
    assert want_ids[0] == ids[20]
    np.testing.assert_allclose(res.distances[0, : res.counts[0]], want_scores, rtol=1e-9)
    # Other k1 and b, set on the collection.
    assert coll.set_bm25(k1=0.9, b=0.4) == (0.9, 0.4)
    assert coll.bm25 == (0.9, 0.4)
    want_ids, want_scores = expected(ids, reference(texts, query, 0.9, 0.4), alive, 10)
    res = coll.search(k=10, text=query, text_field="body")
    assert res.ids[0, : res.counts[0]].tolist() == want_ids
    np.testing.assert_allclose(res.distances[0, : res.counts[0]], want_scores, rtol=1e-9)
    with pytest.raises(sieve.InvalidArgument, match="b must be"):
        coll.set_bm25(b=1.5)


def test_empty_results_and_errors(docs):
    coll, _, _ = docs
    res = coll.search(k=5, text="zebra", text_field="body", explain=True)
    assert res.counts.tolist() == [0]
    assert res.ids[0].tolist() == [-1] * 5
    assert np.all(np.isneginf(res.distances[0]))
    assert res.plan["text"]["terms"] == [{"term": "zebra", "count": 1, "rows": 0,
                                          "idf": res.plan["text"]["terms"][0]["idf"]}]
    assert coll.search(k=5, text="  ", text_field="body").counts.tolist() == [0]
    with pytest.raises(sieve.InvalidArgument, match="text_field"):
        coll.search(k=5, text="red")
    with pytest.raises(sieve.InvalidArgument, match="'n' is int, not text"):
        coll.search(k=5, text="red", text_field="n")
    with pytest.raises(sieve.InvalidArgument, match="give queries"):
        coll.search(k=5)
    with pytest.raises(sieve.InvalidArgument, match="fusion"):
        coll.search(np.zeros(4, np.float32), k=5, text="red", text_field="body", fusion="max")


def fuse(vec_ids, vec_scores, txt_ids, txt_scores, method, c, wv, wt, k):
    score = {}

    def add(ids_, scores_, w):
        if method == "rrf":
            for r, i in enumerate(ids_):
                score[i] = score.get(i, 0.0) + w / (c + r + 1)
            return
        if not ids_:
            return
        lo, hi = min(scores_), max(scores_)
        for i, s in zip(ids_, scores_):
            score[i] = score.get(i, 0.0) + w * ((s - lo) / (hi - lo) if hi > lo else 1.0)

    add(vec_ids, vec_scores, wv)
    add(txt_ids, txt_scores, wt)
    order = sorted(score, key=lambda i: (-score[i], i))[:k]
    return order, [score[i] for i in order]


@pytest.mark.parametrize("method", ["rrf", "weighted"])
def test_hybrid_equals_fusing_the_two_lists(docs, method):
    coll, _, _ = docs
    rng = np.random.default_rng(11)
    queries = rng.standard_normal((3, 4)).astype(np.float32)
    filters = ["n < 200", None, "n >= 100"]
    res = coll.search(queries, k=8, filters=filters, text="red shoe river", text_field="body",
                      fusion=method, rrf_c=20, vector_weight=0.5, depth=30, explain=True,
                      include=["n"])
    assert res.plan["text"]["fusion"] == method
    assert res.plan["text"]["depth"] == 30
    assert {"text", "vector", "fusion"} <= set(res.plan["stages_ms"])
    for q in range(3):
        v = coll.search(queries[q], k=30, filter=filters[q])
        t = coll.search(k=30, filter=filters[q], text="red shoe river", text_field="body")
        vi = v.ids[0, : v.counts[0]].tolist()
        ti = t.ids[0, : t.counts[0]].tolist()
        # l2 in float64 (as the engine refines it), negated: larger is better.
        rows = np.stack([r["vector"] for r in coll.get(vi, include="vector")]).astype(np.float64)
        vs = (-((rows - queries[q].astype(np.float64)) ** 2).sum(1)).tolist()
        want_ids, want_scores = fuse(vi, vs, ti, t.distances[0, : t.counts[0]].tolist(), method,
                                     20, 0.5, 1.0, 8)
        got = res.ids[q, : res.counts[q]].tolist()
        assert got == want_ids
        np.testing.assert_allclose(res.distances[q, : res.counts[q]], want_scores, rtol=1e-9)
        assert [r["n"] for r in res.rows[q]] == [
            coll.get([i], include=["n"])[0]["n"] for i in got]


def test_http_client_text_and_hybrid(server):
    client = sieve.Client(server.url)
    coll = client.create_collection("web", 2, attributes={"body": "text:simple"},
                                    bm25_k1=1.2, bm25_b=0.5)
    texts = corpus(60, 9)
    coll.ingest(np.random.default_rng(1).standard_normal((60, 2)).astype(np.float32),
                attributes={"body": texts}, ids=np.arange(60))
    want_ids, want_scores = expected(list(range(60)), reference(texts, "red boot", 1.2, 0.5),
                                     [True] * 60, 5)
    res = coll.search(text="red boot", text_field="body", k=5, explain=True)
    assert res.distances.dtype == np.float64
    assert res.ids[0, : res.counts[0]].tolist() == want_ids
    np.testing.assert_allclose(res.distances[0, : res.counts[0]], want_scores, rtol=1e-9)
    assert res.plan["text"]["k1"] == 1.2
    res = coll.search(np.zeros((2, 2), np.float32), k=4, text="red boot", text_field="body")
    assert res.ids.shape == (2, 4)
    assert res.counts.tolist() == [4, 4]
    with pytest.raises(sieve.InvalidArgument, match="text_field"):
        coll.search(k=4, text="red", text_field="nope")
    assert coll.set_bm25(b=0.8) == (1.2, 0.8)
    want_ids, _ = expected(list(range(60)), reference(texts, "red boot", 1.2, 0.8), [True] * 60, 5)
    res = coll.search(text="red boot", text_field="body", k=5)
    assert res.ids[0, : res.counts[0]].tolist() == want_ids
