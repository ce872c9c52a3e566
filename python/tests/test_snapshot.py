"""Snapshots from Python: Database.snapshot() and snapshot= on search, get, count and scan read
one version while writes land; scan() reads one version by itself; misuse raises."""

import threading

import numpy as np
import pytest

import sieve


def make(tmp_path, n=400, dim=8):
    db = sieve.open(tmp_path / "db")
    c = db.create_collection("c", dim, attributes={"price": "float"}, shards=3)
    rng = np.random.default_rng(3)
    v = rng.standard_normal((n, dim)).astype(np.float32)
    ids = np.arange(n, dtype=np.int64)
    c.ingest(v, {"price": [float(i % 10) for i in range(n)]}, ids, batch_rows=100)
    return db, c, v


def oracle(v, q, k, keep):
    d = ((v.astype(np.float64) - q.astype(np.float64)) ** 2).sum(axis=1)
    order = [i for i in np.lexsort((np.arange(len(d)), d)) if keep(i)]
    return order[:k]


def test_reads_through_a_snapshot_keep_the_version_it_was_taken_at(tmp_path):
    db, c, v = make(tmp_path)
    with db.snapshot() as snap:
        assert isinstance(snap, sieve.Snapshot) and not snap.released
        c.delete(filter="price < 3")
        c.update({"price": 99.0}, ids=[5, 6, 7])
        rng = np.random.default_rng(4)
        c.upsert(rng.standard_normal((50, 8)).astype(np.float32), {"price": [1.0] * 50},
                 np.arange(350, 400, dtype=np.int64))
        c.ingest(rng.standard_normal((20, 8)).astype(np.float32),
                 ids=np.arange(1000, 1020, dtype=np.int64))
        assert c.compact(force=True)["rows_removed"] > 0

        assert c.count(snapshot=snap) == 400
        assert c.count("price = 5", snapshot=snap) == 40
        assert c.count() == 400 - 120 + 15 + 20  # 15 deleted ids among the upserted come back
        got = c.get([0, 5, 1000], snapshot=snap)
        assert got[0]["price"] == 0.0 and got[1]["price"] == 5.0 and got[2] is None
        got = c.get([0, 5, 1000])
        assert got[0] is None and got[1]["price"] == 99.0 and got[2] is not None
        rows = list(c.scan(include="price,vector", page_rows=33, snapshot=snap))
        assert [r["id"] for r in rows] == list(range(400))
        assert all(np.array_equal(r["vector"], v[r["id"]]) for r in rows)
        q = v[360:364] + 0.01
        r = c.search(q, k=7, filter="price >= 4", snapshot=snap)
        for i in range(4):
            want = oracle(v, q[i], 7, lambda row: row % 10 >= 4)
            assert list(r.ids[i]) == want
    assert snap.released
    with pytest.raises(sieve.InvalidArgument, match="released"):
        c.count(snapshot=snap)
    db.close()


def test_scan_reads_one_version_by_itself(tmp_path):
    db, c, _ = make(tmp_path)
    pages = c.scan(include="price", page_rows=50)
    first = next(pages)
    assert first["id"] == 0
    # Rows deleted and added after the first page are not seen by the rest of the scan.
    c.delete(filter="id >= 200")
    c.ingest(np.ones((5, 8), dtype=np.float32), ids=np.arange(5000, 5005, dtype=np.int64))
    rest = [r["id"] for r in pages]
    assert [first["id"]] + rest == list(range(400))
    assert [r["id"] for r in c.scan(include="price")] == list(range(200)) + list(range(5000, 5005))
    db.close()


def test_pages_read_one_version_while_another_thread_writes(tmp_path):
    db, c, _ = make(tmp_path)
    snap = db.snapshot()
    stop = threading.Event()

    def writer():
        rng = np.random.default_rng(9)
        i = 0
        while not stop.is_set() and i < 100:
            lo = (i * 37) % 400
            c.delete(filter="id >= %d AND id < %d" % (lo, lo + 5))
            c.upsert(rng.standard_normal((5, 8)).astype(np.float32), {"price": [50.0] * 5},
                     np.arange(lo, lo + 5, dtype=np.int64))
            i += 1

    t = threading.Thread(target=writer)
    t.start()
    try:
        seen = [r["id"] for r in c.scan("price < 10", include="price", page_rows=9, snapshot=snap)]
    finally:
        stop.set()
        t.join()
    assert seen == list(range(400))
    snap.release()
    snap.release()  # twice is harmless
    db.close()


def test_misuse(tmp_path):
    db, c, _ = make(tmp_path)
    other = sieve.open(tmp_path / "other")
    foreign = other.snapshot()
    with pytest.raises(sieve.InvalidArgument, match="another database"):
        c.count(snapshot=foreign)
    with pytest.raises(TypeError, match="sieve.Snapshot"):
        c.count(snapshot="s1")
    snap = db.snapshot()
    db.close()
    assert snap.released  # closing the database released it
    snap.release()
    other.close()
