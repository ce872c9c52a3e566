"""sieve.langchain.SieveVectorStore: LangChain's own standard suite (langchain-tests'
VectorStoreIntegrationTests, sync and async, unmodified) over an embedded database and over
`sieve serve`; filter dicts checked against a Python evaluator of the documented rules on random
documents and filters; metadata round trips and schema rules; distances, relevance scores and
MMR against float64 brute force; id hash collisions; async variants."""

import asyncio
import itertools
import math
import threading

import numpy as np
import pytest

pytest.importorskip("langchain_core")
pytest.importorskip("langchain_tests")

from langchain_core.documents import Document  # noqa: E402
from langchain_core.embeddings import DeterministicFakeEmbedding  # noqa: E402
from langchain_core.structured_query import (Comparator, Comparison, Operation,  # noqa: E402
                                             Operator, StructuredQuery)
from langchain_core.vectorstores.utils import maximal_marginal_relevance  # noqa: E402
from langchain_tests.integration_tests.vectorstores import (  # noqa: E402
    VectorStoreIntegrationTests)

import sieve  # noqa: E402
import sieve._documents as documents  # noqa: E402
from conftest import Server  # noqa: E402
from sieve.langchain import (SieveTranslator, SieveVectorStore,  # noqa: E402
                             UnfilteredMetadata)

_names = itertools.count()


class UnitFakeEmbedding(DeterministicFakeEmbedding):
    """LangChain's deterministic fake embedding scaled to unit length, as most models' are."""

    def _get_embedding(self, seed: int) -> list[float]:
        v = np.asarray(super()._get_embedding(seed))
        return (v / np.linalg.norm(v)).tolist()


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    s = Server(tmp_path_factory.mktemp("served") / "db")
    yield s
    s.stop()


class TestSieveVectorStoreEmbedded(VectorStoreIntegrationTests):
    """The standard suite against a database opened in this process."""

    @pytest.fixture()
    def vectorstore(self, tmp_path):
        db = sieve.open(tmp_path / "db")
        store = SieveVectorStore(self.get_embeddings(), database=db, collection_name="lc")
        try:
            yield store
        finally:
            db.close()


class TestSieveVectorStoreServer(VectorStoreIntegrationTests):
    """The standard suite against `sieve serve`, through sieve.Client: a new collection per
    test, dropped after it."""

    @pytest.fixture()
    def vectorstore(self, served):
        client = sieve.Client(served.url)
        store = SieveVectorStore(self.get_embeddings(), database=client,
                                 collection_name="lc%d" % next(_names))
        try:
            yield store
        finally:
            if store.collection is not None:
                store.delete_collection()
            client.close()


# -- filters against an evaluator of the documented rules ------------------------------------

COLORS = ["red", "green", "blue", "it's"]
TAGS = ["a", "b", "c", "d"]


def random_metadata(rng, i):
    md = {}
    if rng.random() < 0.8:
        md["n"] = int(rng.integers(-3, 4))
    r = rng.random()
    if r < 0.7:
        md["x"] = float(np.round(rng.normal(), 2))
    elif r < 0.8:
        md["x"] = None
    if rng.random() < 0.8:
        md["color"] = COLORS[int(rng.integers(0, len(COLORS)))]
    if rng.random() < 0.8:
        md["ok"] = bool(rng.random() < 0.5)
    r = rng.random()
    if r < 0.6:
        md["tags"] = sorted({TAGS[int(j)] for j in rng.integers(0, 4, int(rng.integers(1, 4)))})
    elif r < 0.7:
        md["tags"] = []
    md["id"] = i % 7  # "id" is the row id in Sieve's language: kept as attribute "_id"
    if rng.random() < 0.5:
        md["file-name"] = "f%d.txt" % (i % 3)
    if rng.random() < 0.2:
        md["nested"] = {"page": i}
    return md


def random_test(rng, key):
    """One {key: {op: value}} of LangChain's operators with a value of the key's type."""
    numeric = {"n": lambda: int(rng.integers(-3, 4)), "x": lambda: float(np.round(rng.normal(), 1)),
               "id": lambda: int(rng.integers(0, 7))}
    if key in numeric:
        val = numeric[key]
        op = ["$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$between",
              "$exists"][int(rng.integers(0, 10))]
        if op in ("$in", "$nin"):
            return {key: {op: [val() for _ in range(int(rng.integers(0, 4)))]}}
        if op == "$between":
            lo = val()
            return {key: {op: [lo, lo + abs(val()) + 1]}}
    elif key in ("color", "file-name"):
        pool = COLORS if key == "color" else ["f0.txt", "f1.txt", "f2.txt"]
        val = lambda: pool[int(rng.integers(0, len(pool)))]  # noqa: E731
        op = ["$eq", "$ne", "$in", "$nin", "$exists", "plain"][int(rng.integers(0, 6))]
        if op in ("$in", "$nin"):
            return {key: {op: [val() for _ in range(int(rng.integers(0, 3)))]}}
    elif key == "ok":
        val = lambda: bool(rng.random() < 0.5)  # noqa: E731
        op = ["$eq", "$ne", "$in", "$nin", "plain"][int(rng.integers(0, 5))]
        if op in ("$in", "$nin"):
            return {key: {op: [val()]}}
    elif key == "tags":
        val = lambda: TAGS[int(rng.integers(0, 4))]  # noqa: E731
        op = ["$eq", "$ne", "$contains", "$in", "$nin", "$all", "$exists",
              "plain"][int(rng.integers(0, 8))]
        if op in ("$in", "$nin", "$all"):
            return {key: {op: [val() for _ in range(int(rng.integers(0, 3)))]}}
    else:  # a key no document has
        val = lambda: 1  # noqa: E731
        op = ["$eq", "$ne", "$gt", "$in", "$nin", "$exists"][int(rng.integers(0, 6))]
        if op in ("$in", "$nin"):
            return {key: {op: [1, 2]}}
    if op == "$exists":
        return {key: {op: bool(rng.random() < 0.5)}}
    if op == "plain":
        return {key: val()}
    return {key: {op: val()}}


def random_filter(rng, depth=0):
    r = rng.random()
    keys = ["n", "x", "color", "ok", "tags", "id", "file-name", "missing"]
    if depth < 3 and r < 0.3:
        op = ["$and", "$or"][int(rng.integers(0, 2))]
        return {op: [random_filter(rng, depth + 1) for _ in range(int(rng.integers(1, 4)))]}
    if depth < 3 and r < 0.4:
        return {"$not": random_filter(rng, depth + 1)}
    if r < 0.5:  # two keys in one dict: both must hold
        a, b = rng.choice(len(keys), 2, replace=False)
        return {**random_test(rng, keys[a]), **random_test(rng, keys[b])}
    return random_test(rng, keys[int(rng.integers(0, len(keys)))])


def holds(md, f):
    """The documented rules: a missing key (or None, or an empty list) fails every test but
    $ne, $nin and $exists: false; tags lists compare by membership; $not negates."""
    for key, value in f.items():
        if key == "$and":
            ok = all(holds(md, x) for x in value)
        elif key == "$or":
            ok = any(holds(md, x) for x in value)
        elif key == "$not":
            ok = not holds(md, value)
        else:
            ops = value if isinstance(value, dict) else {"$eq": value}
            ok = all(check(md.get(key), op, v) for op, v in ops.items())
        if not ok:
            return False
    return True


def check(x, op, v):
    if x == []:
        x = None
    if op == "$ne":
        return not check(x, "$eq", v)
    if op == "$nin":
        return not check(x, "$in", v)
    if op == "$exists":
        return (x is not None) == v
    if x is None:
        return False
    if isinstance(x, list):
        return {"$eq": lambda: v in x, "$contains": lambda: v in x,
                "$in": lambda: any(e in x for e in v),
                "$all": lambda: all(e in x for e in v)}[op]()
    return {"$eq": lambda: x == v, "$gt": lambda: x > v, "$gte": lambda: x >= v,
            "$lt": lambda: x < v, "$lte": lambda: x <= v, "$in": lambda: x in v,
            "$between": lambda: v[0] <= x <= v[1]}[op]()


def filter_store(store, n, seed):
    rng = np.random.default_rng(seed)
    mds = [random_metadata(rng, i) for i in range(n)]
    ids = store.add_texts(["text %d" % i for i in range(n)], mds, ids=[str(i) for i in range(n)])
    assert ids == [str(i) for i in range(n)]
    return mds


def assert_filters_match(store, mds, rng, count):
    n = len(mds)
    for _ in range(count):
        f = random_filter(rng)
        got = {d.id for d in store.similarity_search("query", k=n, filter=f)}
        want = {str(i) for i in range(n) if holds(mds[i], f)}
        assert got == want, "filter %r (%s)" % (f, store.filter_text(f))


def test_filter_dicts_match_the_documented_rules(tmp_path):
    store = SieveVectorStore(DeterministicFakeEmbedding(size=8), database=tmp_path / "db")
    mds = filter_store(store, 300, seed=1)
    assert_filters_match(store, mds, np.random.default_rng(2), 400)
    store.close()


def test_filter_dicts_match_over_a_server(served):
    client = sieve.Client(served.url)
    store = SieveVectorStore(DeterministicFakeEmbedding(size=8), database=client,
                             collection_name="filters%d" % next(_names))
    mds = filter_store(store, 120, seed=3)
    assert_filters_match(store, mds, np.random.default_rng(4), 60)
    store.delete_collection()


def test_filter_text_and_sieve_filters_as_is(tmp_path):
    store = SieveVectorStore(DeterministicFakeEmbedding(size=8), database=tmp_path / "db")
    store.add_texts(["a", "b", "c"], [{"year": 2020, "id": 1, "genre": "sf"},
                                      {"year": 2021, "id": 2, "genre": "drama"},
                                      {"year": 2022, "tags": ["x", "y"]}], ids=["a", "b", "c"])
    assert store.filter_text({"year": {"$gte": 2021}}) == "year >= 2021"
    assert store.filter_text({"genre": "sf", "id": {"$in": [1, 2]}}) == \
        "(genre = 'sf' AND _id IN (1, 2))"
    assert store.filter_text({"genre": {"$ne": "sf"}}) == "(genre IS NULL OR NOT (genre = 'sf'))"
    assert store.filter_text({"$or": [{"tags": "x"}, {"nothing": 1}]}) == "tags CONTAINS 'x'"
    assert store.filter_text({"nothing": 1}) == "id < 0"
    assert store.filter_text({"nothing": {"$ne": 1}}) is None
    assert store.attribute_name("id") == "_id" and store.attribute_name("nothing") is None
    # Sieve's own filter text goes through as it is (attribute names as the store made them).
    docs = store.similarity_search("a", k=3, filter="year BETWEEN 2020 AND 2021 AND _id = 2")
    assert [d.id for d in docs] == ["b"]
    with pytest.raises(sieve.InvalidArgument, match="position"):
        store.similarity_search("a", filter="year >>> 3")


def test_filter_errors_name_what_is_wrong(tmp_path):
    store = SieveVectorStore(DeterministicFakeEmbedding(size=8), database=tmp_path / "db")
    store.add_texts(["a"], [{"year": 2020, "genre": "sf", "tags": ["x"]}])
    with pytest.raises(sieve.NotSupported, match=r"\$like"):
        store.similarity_search("a", filter={"genre": {"$like": "s%"}})
    with pytest.raises(sieve.InvalidArgument, match=r"unknown operator \$foo"):
        store.similarity_search("a", filter={"genre": {"$foo": 1}})
    with pytest.raises(sieve.InvalidArgument, match=r"'year'.*numbers, got '2020'"):
        store.similarity_search("a", filter={"year": "2020"})
    with pytest.raises(sieve.InvalidArgument, match=r"applies to numbers; 'genre' is a string"):
        store.similarity_search("a", filter={"genre": {"$gt": "a"}})
    with pytest.raises(sieve.NotSupported, match=r"'genre' is a string attribute"):
        store.similarity_search("a", filter={"genre": {"$contains": "s"}})
    with pytest.raises(sieve.InvalidArgument, match=r"\$in"):
        store.similarity_search("a", filter={"genre": ["sf"]})
    with pytest.raises(sieve.InvalidArgument, match=r"expects a list"):
        store.similarity_search("a", filter={"year": {"$in": 2020}})
    with pytest.raises(sieve.InvalidArgument, match=r"numbers, got inf"):
        store.similarity_search("a", filter={"year": {"$lt": math.inf}})
    with pytest.raises(sieve.InvalidArgument, match="a Python function cannot run"):
        store.similarity_search("a", filter=lambda doc: True)
    with pytest.raises(TypeError, match="unexpected argument 'where'"):
        store.similarity_search("a", where={"year": 1})


# -- metadata ---------------------------------------------------------------------------------

def test_metadata_round_trips_with_typed_attributes(tmp_path):
    store = SieveVectorStore(DeterministicFakeEmbedding(size=8), database=tmp_path / "db")
    mds = [
        {"id": 1, "file-name": "a.txt", "AND": True, "größe": 2.5, "source": "a",
         "page": 3, "tags": ["x", "y", "x"], "nested": {"k": [1, 2]}, "none": None,
         "empty": [], "ints": [1, 2], "big": 1 << 70, "page_content": "a key like the text's"},
        {"id": 2, "ratio": np.float32(0.5), "count": np.int64(7), "flag": np.bool_(False)},
        {},
    ]
    ids = store.add_texts(["one", "two", "three"], mds)
    # A whole float into the int attribute the first batch made.
    store.add_texts(["two"], [dict(mds[1], page=4.0)], ids=ids[1:2])
    types = store.collection.attributes
    assert types == {"page_content": "string", "lc_id": "string", "lc_metadata": "string",
                     "_id": "int", "_file_x2dname": "string", "_AND": "bool",
                     "_gr_xc3_xb6_xc3_x9fe": "float", "source": "string", "page": "int",
                     "tags": "tags", "ratio": "float", "count": "int", "flag": "bool",
                     "_page__content": "string"}
    got = store.get_by_ids(ids)
    assert [d.page_content for d in got] == ["one", "two", "three"]
    assert got[0].metadata == mds[0]
    assert got[1].metadata == {"id": 2, "page": 4, "ratio": 0.5, "count": 7, "flag": False}
    assert type(got[1].metadata["page"]) is int  # a whole float into an int attribute
    assert got[2].metadata == {}
    # Every key with a typed value filters, under its escaped name in Sieve's language too.
    for f, want in [({"größe": {"$gt": 2}}, ids[:1]), ({"file-name": "a.txt"}, ids[:1]),
                    ({"AND": True}, ids[:1]), ({"tags": {"$all": ["x", "y"]}}, ids[:1]),
                    ({"count": 7, "flag": False}, ids[1:2]), ({"page": {"$gte": 3}}, ids[:2]),
                    ({"none": {"$exists": True}}, []), ({"empty": {"$exists": False}}, ids),
                    ("_gr_xc3_xb6_xc3_x9fe > 2", ids[:1])]:
        assert sorted(d.id for d in store.similarity_search("x", k=5, filter=f)) == \
            sorted(want), f
    with pytest.raises(sieve.InvalidArgument, match="set cannot be stored"):
        store.add_texts(["bad"], [{"s": {1, 2}}])


def test_new_keys_and_types_follow_the_chosen_rules(tmp_path):
    db = sieve.open(tmp_path / "db")
    emb = DeterministicFakeEmbedding(size=8)
    store = SieveVectorStore(emb, database=db, collection_name="add")
    store.add_texts(["a"], [{"year": 2020}])
    store.add_texts(["b"], [{"year": 2021, "rating": 4}])  # a new key: an attribute is added
    assert db["add"].attributes["rating"] == "int"
    store.add_texts(["c", "d"], [{"score": 1}, {"score": 2.5}])  # int and float: a float
    assert db["add"].attributes["score"] == "float"
    # The type most values of a new key have wins; the others are kept, unfiltered, with one
    # warning per key and type.
    pages = [{"page": "iv"}, {"page": 1}, {"page": 2}, {"page": "v"}, {"page": 3}]
    with pytest.warns(UnfilteredMetadata, match=r"'page': value 'iv' \(string, document 0\) "
                      r"does not fit attribute 'page' \(int\)") as caught:
        ids = store.add_texts(["p%d" % i for i in range(5)], pages)
    assert len(caught) == 1
    assert db["add"].attributes["page"] == "int"
    assert [d.metadata for d in store.get_by_ids(ids)] == pages
    assert sorted(d.page_content for d in store.similarity_search(
        "p", k=9, filter={"page": {"$gte": 2}})) == ["p2", "p4"]
    with pytest.warns(UnfilteredMetadata, match=r"'year': value 'MMXX' \(string"):
        [key] = store.add_texts(["e"], [{"year": "MMXX"}])
    assert store.get_by_ids([key])[0].metadata == {"year": "MMXX"}
    assert key in {d.id for d in store.similarity_search("e", k=20,
                                                         filter={"year": {"$exists": False}})}

    strict = SieveVectorStore(emb, database=db, collection_name="add",
                              strict_metadata_types=True)
    before = len(db["add"])
    with pytest.raises(sieve.InvalidArgument, match=r"'year' of document 1: '2022' \(string\) "
                       r"does not fit attribute 'year' \(int\)"):
        strict.add_texts(["c", "d"], [{"year": 2022}, {"year": "2022"}])
    with pytest.raises(sieve.InvalidArgument, match=r"'genre': values of type int or float "
                       r"\(document 0\) and string \(document 1\)"):
        strict.add_texts(["c", "d"], [{"genre": 1}, {"genre": "sf"}])
    assert len(db["add"]) == before and "genre" not in db["add"].attributes  # nothing written

    as_json = SieveVectorStore(emb, database=db, collection_name="json",
                               new_metadata_keys="json", metadata_schema={"year": "float"})
    [key] = as_json.add_texts(["f"], [{"year": 2020, "genre": "sf"}])
    assert db["json"].attributes == {"lc_id": "string", "page_content": "string",
                                     "lc_metadata": "string", "year": "float"}
    assert as_json.get_by_ids([key])[0].metadata == {"year": 2020.0, "genre": "sf"}
    assert as_json.similarity_search("f", filter={"genre": "sf"}) == []  # not an attribute

    strict = SieveVectorStore(emb, database=db, collection_name="json",
                              new_metadata_keys="error")
    with pytest.raises(sieve.InvalidArgument, match="key 'genre' has no attribute"):
        strict.add_texts(["g"], [{"genre": "sf"}])
    with pytest.raises(sieve.InvalidArgument, match="new_metadata_keys must be one of"):
        SieveVectorStore(emb, database=db, new_metadata_keys="maybe")
    with pytest.raises(sieve.InvalidArgument, match="metadata_schema: 'x' has type 'text'"):
        SieveVectorStore(emb, database=db, metadata_schema={"x": "text"})
    db.close()


def test_an_existing_collection_and_a_reopened_database(tmp_path):
    db = sieve.open(tmp_path / "db")
    emb = DeterministicFakeEmbedding(size=8)
    coll = db.create_collection("made", dim=8, metric="l2", attributes={"genre": "string"})
    coll.ingest(np.asarray(emb.embed_documents(["x", "y"])), attributes={"genre": ["a", "b"]},
                ids=[10, 11])
    store = SieveVectorStore(emb, collection=coll)
    docs = store.similarity_search("x", k=2)
    assert [(d.id, d.page_content, d.metadata) for d in docs] == [
        ("10", "", {"genre": "a"}), ("11", "", {"genre": "b"})]
    store.add_texts(["z"], [{"genre": "c", "year": 1}], ids=["z"])  # adds the store's attributes
    assert set(coll.attributes) == {"genre", "page_content", "lc_id", "lc_metadata", "year"}
    db.close()
    again = SieveVectorStore(emb, database=tmp_path / "db", collection_name="made")
    assert again.get_by_ids(["z"]) == [Document(id="z", page_content="z",
                                                metadata={"genre": "c", "year": 1})]
    assert [d.id for d in again.similarity_search("z", k=1, filter={"year": 1})] == ["z"]
    again.close()


def test_schema_changes_from_threads(tmp_path):
    store = SieveVectorStore(DeterministicFakeEmbedding(size=8), database=tmp_path / "db")
    errors = []

    def add(t):
        try:
            for i in range(5):
                store.add_texts(["t%d-%d" % (t, i)], [{"k%d" % t: i, "shared": t}])
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=add, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []
    assert len(store.collection) == 20
    assert {a for a in store.collection.attributes if a.startswith("k")} == {"k0", "k1", "k2",
                                                                             "k3"}
    assert len(store.similarity_search("t", k=50, filter={"k2": {"$gte": 0}})) == 5
    store.close()


# -- ids --------------------------------------------------------------------------------------

def test_ids_whose_hashes_collide_are_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(documents, "row_id", lambda key: len(key))
    store = SieveVectorStore(DeterministicFakeEmbedding(size=8), database=tmp_path / "db")
    store.add_texts(["first"], ids=["ab"])
    with pytest.raises(sieve.InvalidArgument, match="key 'cd' hashes to row id 2, which holds "
                       "key 'ab'"):
        store.add_texts(["second"], ids=["cd"])
    with pytest.raises(sieve.InvalidArgument, match="keys 'xy' and 'zw' hash to the same"):
        store.add_texts(["1", "2"], ids=["xy", "zw"])
    assert store.get_by_ids(["cd"]) == []  # row 2 holds "ab"
    store.delete(["cd"])
    assert [d.id for d in store.get_by_ids(["ab"])] == ["ab"]
    store.add_texts(["third", "fourth"], ids=["ab", "ab"])  # one key twice: the last counts
    assert store.get_by_ids(["ab"])[0].page_content == "fourth"
    store.close()


def test_delete_by_ids_filter_and_everything(tmp_path):
    store = SieveVectorStore(DeterministicFakeEmbedding(size=8), database=tmp_path / "db")
    ids = store.add_texts(["t%d" % i for i in range(10)], [{"i": i} for i in range(10)])
    assert store.delete(ids[:2] + ["unknown"]) is True
    assert store.delete(filter={"i": {"$lt": 5}}) is True
    assert sorted(int(d.page_content[1:]) for d in store.similarity_search("t", k=10)) == \
        [5, 6, 7, 8, 9]
    store.delete(filter="i = 9")
    assert len(store.collection) == 4
    with pytest.raises(sieve.InvalidArgument, match="not both"):
        store.delete(ids[5:6], filter={"i": 5})
    store.delete()
    assert store.similarity_search("t", k=10) == []
    store.close()


# -- distances, relevance, MMR ----------------------------------------------------------------

def brute_force(vectors, q, metric):
    x = np.asarray(vectors, dtype=np.float64)
    q = np.asarray(q, dtype=np.float64)
    if metric == "l2":
        return ((x - q) ** 2).sum(1)
    if metric == "ip":
        return x @ q
    return 1 - (x @ q) / (np.linalg.norm(x, axis=1) * np.linalg.norm(q))


@pytest.mark.parametrize("metric", ["cosine", "l2", "ip"])
def test_scores_equal_brute_force(tmp_path, metric):
    emb = UnitFakeEmbedding(size=16)
    texts = ["doc %d" % i for i in range(60)]
    store = SieveVectorStore(emb, database=tmp_path / "db", metric=metric)
    store.add_texts(texts, [{"even": i % 2 == 0} for i in range(60)], ids=texts)
    q = emb.embed_query("the query")
    d = brute_force(emb.embed_documents(texts), q, metric)
    order = np.argsort(-d if metric == "ip" else d, kind="stable")
    passing = [i for i in order if i % 2 == 0][:7]
    got = store.similarity_search_with_score("the query", k=7, filter={"even": True})
    assert [doc.id for doc, _ in got] == [texts[i] for i in passing]
    np.testing.assert_allclose([s for _, s in got], d[passing], rtol=1e-4, atol=1e-5)
    rel = store.similarity_search_with_relevance_scores("the query", k=7, filter={"even": True})
    expect = {"cosine": 1 - d[passing], "ip": d[passing],
              "l2": 1 - np.sqrt(d[passing]) / math.sqrt(2)}[metric]
    np.testing.assert_allclose([s for _, s in rel], expect, rtol=1e-4, atol=1e-5)
    threshold = float(expect[3] + expect[4]) / 2
    kept = store.similarity_search_with_relevance_scores("the query", k=7, filter={"even": True},
                                                         score_threshold=threshold)
    assert [doc.id for doc, _ in kept] == [texts[i] for i in passing[:4]]
    store.close()


def test_mmr_equals_langchains_mmr_over_the_exact_candidates(tmp_path):
    emb = DeterministicFakeEmbedding(size=16)
    texts = ["doc %d" % i for i in range(80)]
    store = SieveVectorStore(emb, database=tmp_path / "db")
    store.add_texts(texts, [{"i": i} for i in range(80)], ids=texts)
    q = emb.embed_query("q")
    vectors = np.asarray(emb.embed_documents(texts))
    for lam, flt in [(0.5, None), (0.2, {"i": {"$lt": 40}}), (1.0, None), (0.0, None)]:
        passing = [i for i in range(80) if flt is None or i < 40]
        d = brute_force(vectors[passing], q, "cosine")
        cand = [passing[j] for j in np.argsort(d, kind="stable")[:20]]
        want = maximal_marginal_relevance(np.asarray(q), vectors[cand].tolist(), lam, 5)
        got = store.max_marginal_relevance_search("q", k=5, fetch_k=20, lambda_mult=lam,
                                                  filter=flt)
        assert [doc.id for doc in got] == [texts[cand[i]] for i in want], lam
    retriever = store.as_retriever(search_type="mmr",
                                   search_kwargs={"k": 3, "fetch_k": 10,
                                                  "filter": {"i": {"$gte": 70}}})
    assert {int(d.id.split()[1]) for d in retriever.invoke("q")} <= set(range(70, 80))
    with pytest.raises(sieve.InvalidArgument, match="fetch_k"):
        store.max_marginal_relevance_search("q", k=5, fetch_k=2)
    store.close()


# -- async ------------------------------------------------------------------------------------

def test_async_variants_equal_the_sync_ones(tmp_path):
    emb = DeterministicFakeEmbedding(size=8)
    store = SieveVectorStore(emb, database=tmp_path / "db")

    async def run():
        ids = await store.aadd_texts(["t%d" % i for i in range(30)],
                                     [{"i": i} for i in range(30)])
        f = {"i": {"$gte": 10}}
        got = await store.asimilarity_search_with_score("t3", k=5, filter=f)
        assert got == store.similarity_search_with_score("t3", k=5, filter=f)
        assert await store.asimilarity_search("t3", k=5, filter=f) == [d for d, _ in got]
        v = emb.embed_query("t3")
        assert await store.asimilarity_search_by_vector(v, k=4) == \
            store.similarity_search_by_vector(v, k=4)
        assert await store.amax_marginal_relevance_search("t3", k=3, filter=f) == \
            store.max_marginal_relevance_search("t3", k=3, filter=f)
        assert await store.amax_marginal_relevance_search_by_vector(v, k=3) == \
            store.max_marginal_relevance_search_by_vector(v, k=3)
        assert await store.adelete(filter={"i": {"$lt": 10}}) is True
        assert len(await store.aget_by_ids(ids)) == 20
        other = await SieveVectorStore.afrom_texts(["a", "b"], emb, [{"x": 1}, {"x": 2}],
                                                   database=store.collection._db,
                                                   collection_name="other")
        assert [d.metadata for d in await other.aget_by_ids(["nope"])] == []
        assert len(other.collection) == 2

    asyncio.run(run())
    store.close()


def test_from_texts_and_the_self_query_translator(tmp_path):
    emb = DeterministicFakeEmbedding(size=8)
    store = SieveVectorStore.from_texts(
        ["a", "b", "c"], emb, [{"year": 1990, "genre": "sf"}, {"year": 2005, "genre": "sf"},
                               {"year": 2010, "genre": "drama"}],
        ids=["a", "b", "c"], database=tmp_path / "db", collection_name="movies")
    sq = StructuredQuery(query="space", filter=Operation(operator=Operator.AND, arguments=[
        Comparison(comparator=Comparator.EQ, attribute="genre", value="sf"),
        Operation(operator=Operator.NOT, arguments=[
            Comparison(comparator=Comparator.LT, attribute="year", value=2000)])]))
    query, kwargs = SieveTranslator().visit_structured_query(sq)
    assert query == "space"
    assert kwargs == {"filter": {"$and": [{"genre": {"$eq": "sf"}},
                                          {"$not": {"year": {"$lt": 2000}}}]}}
    assert [d.id for d in store.similarity_search(query, k=3, **kwargs)] == ["b"]
    store.close()


def test_two_clients_growing_one_schema(served):
    emb = DeterministicFakeEmbedding(size=8)
    name = "shared%d" % next(_names)
    a = SieveVectorStore(emb, database=sieve.Client(served.url), collection_name=name)
    a.add_texts(["first"], [{"x": 1}], ids=["1"])
    b = SieveVectorStore(emb, database=sieve.Client(served.url), collection_name=name)
    a.add_texts(["second"], [{"x": 2, "y": "late"}], ids=["2"])  # b has not seen "y"
    b.add_texts(["third"], [{"y": "b"}], ids=["3"])
    assert [d.id for d in a.similarity_search("x", k=5, filter={"y": "b"})] == ["3"]
    assert sorted(d.id for d in b.similarity_search("x", k=5, filter={"y": {"$exists": True}})) \
        == ["2", "3"]
    assert b.get_by_ids(["2"])[0].metadata == {"x": 2, "y": "late"}
    a.delete_collection()


def test_langchains_indexing_api_and_batches(tmp_path):
    from langchain_core.indexing import InMemoryRecordManager, index
    store = SieveVectorStore(DeterministicFakeEmbedding(size=8), database=tmp_path / "db")
    records = InMemoryRecordManager("sieve")
    records.create_schema()
    docs = [Document(page_content="page %d of %s" % (i, s), metadata={"source": s, "page": i})
            for s in ("a.pdf", "b.pdf") for i in range(3)]
    r = index(docs, records, store, cleanup="incremental", source_id_key="source",
              key_encoder="sha256", batch_size=2)
    assert (r["num_added"], r["num_deleted"]) == (6, 0)
    changed = docs[:3] + [Document(page_content="b.pdf, rewritten",
                                   metadata={"source": "b.pdf", "page": 0})]
    r = index(changed, records, store, cleanup="incremental", source_id_key="source",
              key_encoder="sha256")
    assert (r["num_added"], r["num_skipped"], r["num_deleted"]) == (1, 3, 3)
    assert sorted(d.page_content for d in store.similarity_search(
        "x", k=10, filter={"source": "b.pdf"})) == ["b.pdf, rewritten"]
    assert len(store.collection) == 4
    with pytest.raises(sieve.InvalidArgument, match="batch_size must be a positive int"):
        store.add_texts(["x"], batch_size=0)
    store.add_texts(["t%d" % i for i in range(10)], batch_size=3)
    assert len(store.collection) == 14
    store.close()
