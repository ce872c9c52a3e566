"""Rows in and out from Python: get, upsert, update, count, scan, include, drop, compact."""

import numpy as np
import pytest

import sieve


def make(tmp_path, n=300, dim=8):
    db = sieve.open(tmp_path / "db")
    c = db.create_collection("c", dim, attributes={"price": "float", "color": "string",
                                                   "tags": "tags"})
    rng = np.random.default_rng(1)
    v = rng.standard_normal((n, dim)).astype(np.float32)
    ids = np.arange(n, dtype=np.int64)
    attrs = {"price": [float(i % 7) for i in range(n)],
             "color": [None if i % 3 == 0 else ("red" if i % 2 else "blue") for i in range(n)],
             "tags": [["t%d" % (i % 4)] for i in range(n)]}
    c.ingest(v, attrs, ids)
    return db, c, v, attrs


def test_get_include_and_search_rows(tmp_path):
    db, c, v, attrs = make(tmp_path)
    rows = c.get([5, 1000, 3], include="*,vector")
    assert rows[1] is None
    assert rows[0]["id"] == 5 and rows[0]["price"] == attrs["price"][5]
    assert rows[0]["color"] == attrs["color"][5] and rows[0]["tags"] == attrs["tags"][5]
    assert rows[2]["color"] is None
    assert np.array_equal(rows[0]["vector"], v[5])
    r = c.search(v[:2], k=4, filter="color = 'red'", include="price")
    for q in range(2):
        assert [row["id"] for row in r.rows[q]] == list(r.ids[q])
        for row in r.rows[q]:
            assert row["price"] == attrs["price"][row["id"]]
            assert attrs["color"][row["id"]] == "red"
    with pytest.raises(sieve.InvalidArgument, match="price, color, tags"):
        c.get([1], include="colour")
    db.close()


def test_upsert_update_count_scan(tmp_path):
    db, c, v, attrs = make(tmp_path)
    with pytest.raises(sieve.InvalidArgument, match="auto"):
        c.ingest(v[:2])  # no ids into a collection with rows
    r = c.ingest(v[:2], auto_ids=True)
    assert r.ingested == 2 and r.rows == 302
    new = np.ones((3, 8), np.float32)
    r = c.upsert(new, {"price": [1.5, 2.5, 3.5]}, ids=[0, 1, 5000])
    assert r.replaced == 2 and r.rows == 303
    assert np.array_equal(c.get([1], include="vector")[0]["vector"], new[1])
    assert c.update({"color": "green", "tags": ["a", "b"]}, filter="id < 10") == 10
    assert c.update({"price": None}, ids=[2, 3, 99999]) == 2
    assert c.count("color = 'green' AND tags CONTAINS 'b'") == 10
    assert c.count("price IS NULL") == 2 + 2  # the two updated, the two auto-id rows
    got = [row["id"] for row in c.scan("id >= 290", include="", page_rows=3)]
    assert got == sorted(list(range(290, 300)) + [300, 301, 5000])
    assert c.count() == len(list(c.scan(page_rows=50))) == 303
    with pytest.raises(sieve.InvalidArgument, match="exactly one"):
        c.update({"price": 1.0})
    with pytest.raises(sieve.InvalidArgument):
        c.update({"price": "x"}, ids=[4])
    db.close()


def test_compact_and_drop(tmp_path):
    db, c, v, attrs = make(tmp_path, n=2000)
    c.delete(filter="id < 1500")
    # 1,500 rows of dim 8 hold less than a rewrite writes: left in place, and said so.
    res = c.compact()
    assert (res["rows_removed"], res["rows_left_deleted"], res["shards_skipped"]) == (0, 1500, 1)
    assert res["bytes_after"] == res["bytes_before"] and "force" in res["note"]
    assert db.compact()["rows_left_deleted"] == 1500
    res = c.compact(force=True)
    assert res["rows_removed"] == 1500 and res["shards_rewritten"] >= 1
    assert res["rows_left_deleted"] == 0
    rows = list(c.scan(include="price,vector"))
    assert [row["id"] for row in rows] == list(range(1500, 2000))
    assert all(np.array_equal(row["vector"], v[row["id"]]) for row in rows)
    ids, _ = c.search(v[1600:1601], k=1)
    assert ids[0, 0] == 1600
    db.drop_collection("c")
    assert "c" not in db
    with pytest.raises(sieve.NotFound):
        db.drop_collection("c")
    db.create_collection("c", 3)
    assert len(db["c"]) == 0
    # The new collection has dim 3, the old one had 8 and was searched above: a search of the
    # new one must use its dim (a schema kept from before the drop would refuse these queries)
    # and find its rows, as a float64 brute force does.
    new = db["c"]
    assert new.dim == 3
    rng = np.random.default_rng(7)
    rows = rng.standard_normal((500, 3)).astype(np.float32)
    new.ingest(rows, ids=np.arange(500, dtype=np.int64) + 10_000)
    queries = rng.standard_normal((5, 3)).astype(np.float32)
    ids, dist = new.search(queries, k=10)
    d = ((queries.astype(np.float64)[:, None, :] - rows.astype(np.float64)[None, :, :]) ** 2).sum(-1)
    want = np.argsort(d, axis=1, kind="stable")[:, :10]
    np.testing.assert_array_equal(ids, want + 10_000)
    np.testing.assert_allclose(dist, np.take_along_axis(d, want, axis=1), rtol=1e-4, atol=1e-5)
    # The Collection object taken before the drop holds the dropped collection's handle: every
    # call through it is NotFound, and none reaches the new collection of the same name.
    for call in (lambda: c.search(v[:1], k=1), lambda: c.count(), lambda: c.get([1600]),
                 lambda: list(c.scan()), lambda: c.update(ids=[1600], set={"price": 1.0}),
                 lambda: c.delete(ids=[10_000]), lambda: c.delete(filter="id >= 0"),
                 lambda: c.ingest(v[:1], ids=[1]), lambda: c.stats(), lambda: c.compact()):
        with pytest.raises(sieve.NotFound, match="dropped"):
            call()
    assert len(new) == 500
    db.close()
