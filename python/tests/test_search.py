"""Search results against a float64 numpy oracle: every metric, no filter, one filter, a filter
per query, every path (proved by the plan), float16 storage and input, fewer passing rows
than k."""

import numpy as np
import pytest

import sieve

from conftest import assert_matches, oracle

N, DIM, NQ = 3000, 24, 6
METRICS = ["l2", "ip", "cosine"]
PATHS = ["sddmm", "gather", "dense"]


def make(db, metric, dtype="f32", seed=0):
    rng = np.random.default_rng(seed)
    rows = rng.standard_normal((N, DIM)).astype(np.float32)
    rows[5] = 0  # a zero vector: cosine 0
    ids = rng.permutation(10 * N)[:N].astype(np.int64) + 7 * N  # ids are never negative
    cat = rng.integers(0, 10, N)
    price = rng.uniform(0, 100, N)
    coll = db.create_collection("c_" + metric + dtype, DIM, metric=metric, dtype=dtype,
                                attributes={"cat": "int", "price": "float"})
    coll.ingest(rows, attributes={"cat": cat, "price": price}, ids=ids)
    queries = rng.standard_normal((NQ, DIM)).astype(np.float32)
    stored = rows.astype(np.float16).astype(np.float32) if dtype == "f16" else rows
    return coll, stored, ids, queries, cat, price


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("path", ["auto"] + PATHS)
def test_one_filter_every_path(db, metric, path):
    coll, rows, ids, queries, cat, price = make(db, metric)
    res = coll.search(queries, k=10, filter="cat IN (1, 3) AND price < 60", path=path,
                      explain=True)
    passing = np.isin(cat, [1, 3]) & (price < 60)
    assert_matches(res, oracle(rows, queries, metric, 10, passing), ids, metric)
    assert res.plan["filter_mode"] == "bitset"
    assert res.plan["passing_rows"] == passing.sum()
    if path != "auto":
        assert {s["path"] for s in res.plan["shards"]} == {path}


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("path", ["auto"] + PATHS)
def test_no_filter(db, metric, path):
    coll, rows, ids, queries, _, _ = make(db, metric)
    res = coll.search(queries, k=7, path=path, explain=True)
    assert_matches(res, oracle(rows, queries, metric, 7), ids, metric)
    assert res.plan["filter_mode"] == "none"
    if path != "auto":
        assert {s["path"] for s in res.plan["shards"]} == {path}


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("path", ["auto"] + PATHS)
def test_filter_per_query(db, metric, path):
    coll, rows, ids, queries, cat, price = make(db, metric)
    filters = ["cat = %d" % q for q in range(NQ - 2)] + ["price >= 50", None]
    masks = [cat == q for q in range(NQ - 2)] + [price >= 50, None]
    res = coll.search(queries, k=5, filters=filters, path=path, explain=True)
    assert_matches(res, oracle(rows, queries, metric, 5, masks), ids, metric)
    assert res.plan["filter_mode"] == "bitmap"
    if path != "auto":
        assert {s["path"] for s in res.plan["shards"]} == {path}


@pytest.mark.parametrize("metric", METRICS)
def test_float16_storage_and_input(db, metric):
    coll, rows, ids, queries, cat, _ = make(db, metric, dtype="f16")
    res = coll.search(queries.astype(np.float16), k=8, filter="cat != 4")
    q16 = queries.astype(np.float16).astype(np.float32)
    assert_matches(res, oracle(rows, q16, metric, 8, cat != 4), ids, metric, rtol=1e-3,
                   atol=1e-3)


def test_fewer_passing_rows_than_k_are_filled(db):
    coll, rows, ids, queries, cat, price = make(db, "ip")
    passing = (cat == 2) & (price < 3)
    k = int(passing.sum()) + 5
    res = coll.search(queries, k=k, filter="cat = 2 AND price < 3")
    assert (res.counts == passing.sum()).all()
    assert_matches(res, oracle(rows, queries, "ip", k, passing), ids, "ip")
    assert (res.ids[:, -5:] == -1).all() and np.isneginf(res.distances[:, -5:]).all()
    assert res.valid.sum() == passing.sum() * NQ
    got_ids, got_d = res.neighbors(0)
    assert len(got_ids) == passing.sum() and np.isfinite(got_d).all()
    none = coll.search(queries, k=3, filter="cat = 99")
    assert (none.counts == 0).all() and (none.ids == -1).all() and np.isneginf(
        none.distances).all()


def test_unpacks_like_faiss_and_one_query_may_be_1d(db):
    coll, rows, ids, queries, _, _ = make(db, "l2")
    found, distances = coll.search(queries[0], k=4)
    assert found.shape == distances.shape == (1, 4)
    want = oracle(rows, queries[:1], "l2", 4)[0]
    assert list(found[0]) == list(ids[want[0]])


def test_non_float32_input_is_converted(db):
    coll, rows, ids, queries, _, _ = make(db, "l2")
    a = coll.search(queries, k=5)
    b = coll.search(queries.astype(np.float64), k=5)
    c = coll.search(np.asfortranarray(queries), k=5)
    d = coll.search(queries.tolist(), k=5)
    for r in (b, c, d):
        assert np.array_equal(a.ids, r.ids) and np.array_equal(a.distances, r.distances)


def test_delete_and_stats(db):
    coll, rows, ids, queries, cat, _ = make(db, "l2")
    assert len(coll) == N
    assert coll.delete(ids=ids[:10]) == 10
    assert coll.delete(ids=ids[:10]) == 0  # unknown ids are ignored
    gone = coll.delete(filter="cat = 0")
    keep = np.ones(N, bool)
    keep[:10] = False
    assert gone == ((cat == 0) & keep).sum()
    keep &= cat != 0
    st = coll.stats()
    assert st["rows"] == keep.sum() and st["deleted_rows"] == N - keep.sum()
    assert st["dim"] == DIM and st["metric"] == "l2" and st["attributes"] == {
        "cat": "int", "price": "float"}
    res = coll.search(queries, k=6)
    assert_matches(res, oracle(rows, queries, "l2", 6, keep), ids, "l2")


def test_ingest_assigns_ids_and_reports_rows(db):
    coll = db.create_collection("auto", 3)
    r = coll.ingest(np.eye(3, dtype=np.float32))
    assert (r.ingested, r.rows) == (3, 3)
    with pytest.raises(sieve.InvalidArgument, match="auto ids"):
        coll.ingest(np.eye(3, dtype=np.float32) * 2)  # a repeat cannot duplicate silently
    r = coll.ingest(np.eye(3, dtype=np.float32) * 2, batch_rows=1, auto_ids=True)
    assert (r.ingested, r.rows) == (3, 6)
    res = coll.search(np.eye(3, dtype=np.float32) * 2, k=1)
    assert list(res.ids[:, 0]) == [3, 4, 5]


def test_database_api(tmp_path):
    import sieve

    with sieve.open(tmp_path / "d") as db:
        a = db.create_collection("a", 2, metric="cosine", dtype="f16",
                                 attributes=[("z", "tags"), ("b", "bool")], shards=3)
        db.create_collection("b", 5)
        assert db.collections() == ["a", "b"]
        assert "a" in db and "zz" not in db
        assert (a.dim, a.metric, a.dtype, a.shards) == (2, "cosine", "f16", 3)
        assert list(a.attributes) == ["z", "b"]
        assert db["a"].attributes == a.attributes and db.collection("b").dim == 5
        assert db.check() == [] or isinstance(db.check(), list)
        t = db.planner_thresholds("cpu")
        assert t["device"] == "cpu" and "sddmm_max_rows" in t["thresholds"]
        changed = dict(t["thresholds"], sddmm_max_rows=12345, source="test")
        db.set_planner_thresholds("cpu", changed)
        assert db.planner_thresholds("cpu")["thresholds"]["sddmm_max_rows"] == 12345
    assert db.closed
    with sieve.open(tmp_path / "d", create=False) as db:
        assert db.collections() == ["a", "b"]
        assert db.planner_thresholds()["thresholds"]["source"] == "test"


def test_calibrate_stores_what_the_planner_then_uses(tmp_path):
    import sieve

    with sieve.open(tmp_path / "cal") as db:
        before = db.planner_thresholds("cpu")["thresholds"]
        assert before["source"].startswith("defaults")
        dry = db.calibrate("cpu", quick=True, store=False, time_limit_s=0.5)
        assert not dry["stored"] and dry["points"] > 0 and dry["device"] == "cpu"
        assert db.planner_thresholds("cpu")["thresholds"] == before
        r = db.calibrate("cpu", quick=True, time_limit_s=0.5)
        assert r["stored"] and not r["complete"]  # cut short by the time limit
        now = db.planner_thresholds("cpu")["thresholds"]
        assert now == r["thresholds"] and now["source"].startswith("calibrated ")
        c = db.create_collection("c", 4)
        c.ingest(np.ones((3, 4), np.float32))
        assert c.search(np.ones(4, np.float32), k=1, explain=True).plan["thresholds"] == now[
            "source"]
        with pytest.raises(sieve.InvalidArgument):
            db.calibrate("cpu", time_limit_s=-1)


def test_filter_arguments_of_the_wrong_type(db):
    coll, _, _, queries, _, _ = make(db, "l2")
    # A list given as `filter` names `filters`; a string given as `filters` names `filter`.
    with pytest.raises(sieve.InvalidArgument, match=r"filter: one filter string, got list.*filters="):
        coll.search(queries, k=3, filter=["cat = 1"] * NQ)
    with pytest.raises(sieve.InvalidArgument, match=r"filters: a list.*got str.*filter="):
        coll.search(queries, k=3, filters="cat = 1")
    with pytest.raises(sieve.InvalidArgument, match=r"filters\[1\]: a filter string or None, got int"):
        coll.search(queries, k=3, filters=["cat = 1", 2] + [None] * (NQ - 2))
    with pytest.raises(sieve.InvalidArgument, match="not both"):
        coll.search(queries, k=3, filter="cat = 1", filters=["cat = 1"] * NQ)
    # A tuple of filters is a sequence like a list: the same answers.
    per_query = ["cat = %d" % (q % 10) for q in range(NQ)]
    a = coll.search(queries, k=3, filters=per_query)
    b = coll.search(queries, k=3, filters=tuple(per_query))
    assert np.array_equal(a.ids, b.ids) and np.array_equal(a.distances, b.distances)
