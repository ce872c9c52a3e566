"""sieve.ray.ShardedCollection on a local Ray cluster of CPU actors (three shards), every answer
compared with one embedded collection holding the same rows: every metric, no filter, one
filter, a filter per query, get/count/delete/update/upsert; an actor killed mid-ingest and
mid-search; a search while a shard is down (waiting, and partial); restart from disk."""

import os
import signal
import threading
import time

import numpy as np
import pytest

# Ray reports no usage statistics from this machine (ray.init already turns them off for a
# release wheel; this says so whatever the wheel).
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
ray = pytest.importorskip("ray", reason="ray is not installed (python/requirements-test.txt)")

import sieve  # noqa: E402
import sieve.ray as sray  # noqa: E402

DIM = 12
SHARDS = 3
ATTRS = {"cat": "int", "price": "float", "color": "string", "tags": "tags"}


@pytest.fixture(scope="module")
def cluster():
    # The actors inherit this environment (the package's PYTHONPATH, one BLAS thread).
    ray.init(num_cpus=6, include_dashboard=False, log_to_driver=False,
             configure_logging=False)
    yield
    ray.shutdown()


def rows(n, seed, first_id=0):
    rng = np.random.default_rng(seed)
    v = rng.standard_normal((n, DIM)).astype(np.float32)
    ids = first_id + rng.permutation(4 * n)[:n].astype(np.int64) * 7 + 10**6
    attrs = {
        "cat": rng.integers(0, 6, n),
        "price": np.ma.masked_array(rng.uniform(0, 100, n), mask=rng.random(n) < 0.1),
        "color": [None if i % 7 == 0 else ("red", "green", "blue")[i % 3] for i in range(n)],
        "tags": [["a"] if i % 2 else ["a", "b"] for i in range(n)],
    }
    return v, ids, attrs


def pair(tmp_path, metric="l2", dtype="f32", **options):
    """A sharded collection and one embedded collection of the same schema."""
    sharded = sray.ShardedCollection.create("items", tmp_path / "shards", SHARDS, dim=DIM,
                                            metric=metric, dtype=dtype, attributes=ATTRS,
                                            num_cpus=0.5, **options)
    db = sieve.open(tmp_path / "one")
    one = db.create_collection("items", DIM, metric=metric, dtype=dtype, attributes=ATTRS)
    return sharded, db, one


def assert_same(got, want, metric):
    """got (merged from the shards) equals want (one collection): counts and distances
    exactly, and per distance the same ids (rows whose distances tie at the k-th place may
    differ, as between any two exact searches)."""
    assert got.ids.shape == want.ids.shape
    np.testing.assert_array_equal(got.counts, want.counts)
    np.testing.assert_array_equal(got.distances, want.distances)
    k = want.ids.shape[1]
    for q in range(len(want.counts)):
        n = int(want.counts[q])
        d = want.distances[q, :n]
        for value in np.unique(d):
            at = d == value
            if n == k and value == d[-1]:
                assert at.sum() == (got.distances[q, :n] == value).sum()
            else:
                assert sorted(got.ids[q, :n][at]) == sorted(want.ids[q, :n][at]), \
                    "query %d: ids differ at distance %r" % (q, value)
    assert np.all(got.ids[~got.valid] == -1)


def searches(sharded, one, metric, queries, ks=(1, 10, 250)):
    filters = [None, "cat IN (1, 3) AND price < 60", "color = 'red' AND tags CONTAINS 'b'",
               "cat = 99", "price IS NULL"]
    for k in ks:
        for f in filters:
            assert_same(sharded.search(queries, k, filter=f), one.search(queries, k, filter=f),
                        metric)
        per_query = [filters[q % len(filters)] for q in range(len(queries))]
        assert_same(sharded.search(queries, k, filters=per_query),
                    one.search(queries, k, filters=per_query), metric)


def pid_of(sharded, shard):
    return sharded.shard_info()[shard]["pid"]


def kill(sharded, shard):
    """SIGKILL the shard's actor process (Ray restarts it); returns the old pid."""
    pid = pid_of(sharded, shard)
    os.kill(pid, signal.SIGKILL)
    return pid


def wait_restarted(sharded, shard, old_pid, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            info = sharded.shard_info()[shard]
            if info["pid"] != old_pid:
                return info
        except sieve.Unavailable:
            pass
        time.sleep(0.2)
    pytest.fail("shard %d was not restarted within %d s" % (shard, timeout))


@pytest.mark.parametrize("metric", ["l2", "ip", "cosine"])
def test_search_equals_one_collection(cluster, tmp_path, metric):
    sharded, db, one = pair(tmp_path, metric)
    try:
        v, ids, attrs = rows(3000, seed=1)
        v[7] = 0  # a zero vector (cosine distance 1)
        r = sharded.ingest(v, attrs, ids, batch_rows=700)
        one.ingest(v, attrs, ids)
        assert (r.ingested, r.rows, r.replaced) == (3000, 3000, 0)
        per_shard = [s["rows"] for s in sharded.stats()["per_shard"]]
        assert per_shard == np.bincount(sray.shard_of(ids, SHARDS), minlength=SHARDS).tolist()
        assert min(per_shard) > 800  # every shard holds rows, so every shard is searched
        queries = np.random.default_rng(2).standard_normal((9, DIM)).astype(np.float32)
        searches(sharded, one, metric, queries)
        res = sharded.search(queries, 5, filter="cat = 2", explain=True, include="cat,color")
        want = one.search(queries, 5, filter="cat = 2", explain=True, include="cat,color")
        assert_same(res, want, metric)
        assert res.coverage == 1.0 and res.answered == [0, 1, 2] and res.missing == []
        assert res.plan["passing_rows"] == want.plan["passing_rows"] == one.count("cat = 2")
        assert [p["shard"] for p in res.plan["shards"]] == [0, 1, 2]
        assert sum(p["plan"]["passing_rows"] for p in res.plan["shards"]) == \
            want.plan["passing_rows"]
        for q in range(len(queries)):
            got = [row["id"] for row in res.rows[q]]
            assert got == res.ids[q, :res.counts[q]].tolist()
            assert all(row["cat"] == 2 for row in res.rows[q])
        # A query in float16, one query given 1-D.
        assert_same(sharded.search(queries[0], 4), one.search(queries[0], 4), metric)
        assert_same(sharded.search(queries.astype(np.float16), 4),
                    one.search(queries.astype(np.float16), 4), metric)
    finally:
        sharded.close()
        db.close()


def test_rows_calls_equal_one_collection(cluster, tmp_path):
    sharded, db, one = pair(tmp_path, "l2", dtype="f16")
    try:
        v, ids, attrs = rows(2000, seed=3)
        sharded.ingest(v, attrs, ids, batch_rows=0)
        one.ingest(v, attrs, ids)
        pick = np.concatenate([ids[::97], [123456789, -5]])
        assert sharded.get(pick) == one.get(pick)
        got, want = (c.get(pick, include="color,vector") for c in (sharded, one))
        assert [r is None for r in got] == [r is None for r in want]
        for a, b in zip(got, want):
            if a is not None:
                assert a["id"] == b["id"] and a["color"] == b["color"]
                np.testing.assert_array_equal(a["vector"], b["vector"])
        for f in [None, "cat = 1", "price > 50 OR color IS NULL", "id < 0"]:
            assert sharded.count(f) == one.count(f)
        assert len(sharded) == 2000
        assert sharded.delete(ids=ids[:300]) == one.delete(ids=ids[:300]) == 300
        assert sharded.delete(filter="cat = 4") == one.delete(filter="cat = 4")
        assert sharded.update({"color": "violet", "price": None}, filter="cat = 2") == \
            one.update({"color": "violet", "price": None}, filter="cat = 2")
        assert sharded.update({"cat": 5}, ids=ids[300:400]) == \
            one.update({"cat": 5}, ids=ids[300:400])
        v2, _, attrs2 = rows(500, seed=4)
        up = np.concatenate([ids[350:600], np.arange(250) + 10**9])  # half replace, half new
        r = sharded.upsert(v2, attrs2, up, batch_rows=100)
        w = one.upsert(v2, attrs2, up)
        assert (r.ingested, r.rows, r.replaced) == (w.ingested, w.rows, w.replaced)
        assert sharded.count() == one.count()
        for f in [None, "color = 'violet'", "cat = 5", "price IS NULL"]:
            assert sharded.count(f) == one.count(f)
        queries = np.random.default_rng(5).standard_normal((6, DIM)).astype(np.float32)
        searches(sharded, one, "l2", queries, ks=(10,))
        st = sharded.stats()
        assert (st["rows"], st["deleted_rows"], st["total_rows"]) == (
            one.stats()["rows"], one.stats()["deleted_rows"], one.stats()["total_rows"])
    finally:
        sharded.close()
        db.close()


def test_ids_assigned_scan_and_compact_as_one_collection(cluster, tmp_path):
    sharded, db, one = pair(tmp_path, "ip")
    try:
        v, _, attrs = rows(1500, seed=16)
        for call in (sharded, one):
            r = call.ingest(v[:1000], {k: c[:1000] for k, c in attrs.items()})
            assert (r.ingested, r.rows) == (1000, 1000)
        assert sharded.get(np.arange(1000)) == one.get(np.arange(1000))
        sharded.ingest(v[:10], ids=np.arange(5000, 5010))
        one.ingest(v[:10], ids=np.arange(5000, 5010))
        for call in (sharded, one):  # one past the largest id held: 5010 ..
            call.ingest(v[1000:], {k: c[1000:] for k, c in attrs.items()}, auto_ids=True)
        assert sharded.count() == one.count() == 1510
        assert sharded.get(np.arange(5005, 5515)) == one.get(np.arange(5005, 5515))
        sharded.delete(filter="cat = 3")
        one.delete(filter="cat = 3")
        for f in [None, "cat < 2", "id > 5100"]:
            got = list(sharded.scan(f, include="cat,color", page_rows=97))
            assert got == list(one.scan(f, include="cat,color"))
            assert [r["id"] for r in got] == sorted(r["id"] for r in got)
        c = sharded.compact(force=True)
        assert c["rows_removed"] == one.compact(force=True)["rows_removed"] > 0
        assert c["rows_left_deleted"] == 0
        assert sharded.stats()["deleted_rows"] == 0
        queries = np.random.default_rng(17).standard_normal((5, DIM)).astype(np.float32)
        searches(sharded, one, "ip", queries, ks=(10,))
    finally:
        sharded.close()
        db.close()


def test_arrow_and_pandas_attributes_route_with_their_rows(cluster, tmp_path):
    pa = pytest.importorskip("pyarrow")
    pd = pytest.importorskip("pandas")
    sharded, db, one = pair(tmp_path)
    try:
        v, ids, _ = rows(1200, seed=18)
        colors = [None if i % 5 == 0 else "c%d" % (i % 11) for i in range(1200)]
        table = pa.table({"color": pa.array(colors, pa.string()),
                          "cat": pa.array([None if i % 7 == 0 else i % 4 for i in range(1200)],
                                          pa.int64()),
                          "tags": pa.array([["t%d" % (i % 3)] for i in range(1200)])})
        frame = pd.DataFrame({"price": [float(i) if i % 3 else np.nan for i in range(1200)],
                              "color": pd.array(colors, dtype="string")})
        sharded.ingest(v[:600], table.slice(0, 600), ids[:600])
        one.ingest(v[:600], table.slice(0, 600), ids[:600])
        sharded.ingest(v[600:], frame.iloc[600:], ids[600:])
        one.ingest(v[600:], frame.iloc[600:], ids[600:])
        assert sharded.get(ids) == one.get(ids)
        for f in ["color = 'c3'", "color IS NULL", "cat = 2", "tags CONTAINS 't1'",
                  "price > 700"]:
            assert sharded.count(f) == one.count(f)
    finally:
        sharded.close()
        db.close()


def test_bad_input_changes_no_shard(cluster, tmp_path):
    sharded, db, one = pair(tmp_path)
    try:
        v, ids, attrs = rows(900, seed=6)
        sharded.ingest(v, attrs, ids)
        one.ingest(v, attrs, ids)
        nv, nids, nattrs = rows(600, seed=7, first_id=10**8)
        bad = dict(nattrs, cat=list(nattrs["cat"]))
        bad["cat"][451] = "seven"  # one row of one shard's part
        for call in (sharded, one):
            with pytest.raises(sieve.InvalidArgument, match="row 451, attribute 'cat'"):
                call.ingest(nv, bad, nids)
        live = nids.copy()
        live[300] = ids[17]  # an id that is live already
        for call in (sharded, one):
            with pytest.raises(sieve.InvalidArgument, match="row 300: id %d already exists"
                               % ids[17]):
                call.ingest(nv, nattrs, live)
        nan = nv.copy()
        nan[599, 3] = np.nan
        for call in (sharded, one):
            with pytest.raises(sieve.InvalidArgument, match="row 599"):
                call.ingest(nan, nattrs, nids)
        for call in (sharded, one):
            with pytest.raises(sieve.InvalidArgument, match="already has 900 live rows"):
                call.ingest(nv)
        with pytest.raises(sieve.InvalidArgument, match="filter"):
            sharded.search(nv[:2], 3, filter="cat = = 1")
        with pytest.raises(sieve.InvalidArgument):
            sharded.search(nv[:2, :5], 3)
        assert sharded.count() == one.count() == 900
        assert [s["total_rows"] for s in sharded.stats()["per_shard"]] == np.bincount(
            sray.shard_of(ids, SHARDS), minlength=SHARDS).tolist()
    finally:
        sharded.close()
        db.close()


def test_kill_mid_ingest_keeps_every_acknowledged_row(cluster, tmp_path):
    sharded, db, one = pair(tmp_path)
    try:
        v, ids, attrs = rows(10000, seed=8)
        sharded.ingest(v[:1000], {k: c[:1000] for k, c in attrs.items()}, ids[:1000])
        one.ingest(v[:1000], {k: c[:1000] for k, c in attrs.items()}, ids[:1000])
        victim = 1
        part = int((sray.shard_of(ids[1000:], SHARDS) == victim).sum())
        before = sharded.stats()["per_shard"][victim]["rows"]
        errors = []

        def ingest():
            try:
                rest = {k: c[1000:] for k, c in attrs.items()}
                errors.append(sharded.ingest(v[1000:], rest, ids[1000:], batch_rows=20))
            except Exception as e:  # reported below
                errors.append(e)

        t = threading.Thread(target=ingest)
        old = pid_of(sharded, victim)
        t.start()
        # Kill the shard once part of its rows are committed and the rest are not.
        # What it has committed is read from its directory (a read-only open sees that while
        # the actor, which serializes the ingest with its own reads, is busy writing).
        shard_dir = sharded.shard_info()[victim]["dir"]
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with sieve.open(shard_dir, read_only=True) as view:
                n = view["items"].count()
            if before < n < before + part:
                os.kill(old, signal.SIGKILL)
                break
            assert t.is_alive(), "the ingest ended before the kill: %r" % errors
            time.sleep(0.005)
        else:
            pytest.fail("never saw the shard mid-ingest")
        t.join(120)
        assert not t.is_alive()
        assert isinstance(errors[0], sieve.IngestResult), errors[0]
        assert errors[0].ingested == 9000 and errors[0].rows == 10000
        assert sharded.retries >= 1
        info = sharded.shard_info()[victim]
        assert info["pid"] != old and info["reconstructed"]
        one.ingest(v[1000:], {k: c[1000:] for k, c in attrs.items()}, ids[1000:])
        assert sharded.count() == one.count() == 10000
        assert sharded.get(ids) == one.get(ids)
        queries = np.random.default_rng(9).standard_normal((5, DIM)).astype(np.float32)
        searches(sharded, one, "l2", queries, ks=(10,))
    finally:
        sharded.close()
        db.close()


def test_write_that_times_out_is_completed_by_an_upsert(cluster, tmp_path):
    sharded, db, one = pair(tmp_path)
    try:
        v, ids, attrs = rows(1200, seed=10)
        first = {k: c[:600] for k, c in attrs.items()}
        sharded.ingest(v[:600], first, ids[:600])  # acknowledged
        one.ingest(v[:600], first, ids[:600])
        old = kill(sharded, 2)
        rest = {k: c[600:] for k, c in attrs.items()}
        sharded.timeout_s = 0.01  # shorter than any restart
        with pytest.raises(sieve.Unavailable, match=r"shards \[.*2.*\] of collection 'items'"):
            sharded.ingest(v[600:], rest, ids[600:])
        sharded.timeout_s = 60
        wait_restarted(sharded, 2, old)
        # Every acknowledged row survived the kill.
        assert sharded.get(ids[:600]) == one.get(ids[:600])
        r = sharded.upsert(v[600:], rest, ids[600:])
        one.ingest(v[600:], rest, ids[600:])
        assert r.ingested == 600 and r.rows == 1200
        assert sharded.get(ids) == one.get(ids)
        queries = np.random.default_rng(11).standard_normal((4, DIM)).astype(np.float32)
        searches(sharded, one, "l2", queries, ks=(7,))
    finally:
        sharded.close()
        db.close()


def test_search_while_a_shard_is_down(cluster, tmp_path):
    sharded, db, one = pair(tmp_path, "ip")
    try:
        v, ids, attrs = rows(3000, seed=12)
        sharded.ingest(v, attrs, ids)
        one.ingest(v, attrs, ids)
        queries = np.random.default_rng(13).standard_normal((8, DIM)).astype(np.float32)
        want = one.search(queries, 10, filter="cat != 3")

        # partial=True: the shard that is down is left out at once, and said to be.
        old = kill(sharded, 0)
        res = sharded.search(queries, 10, filter="cat != 3", partial=True, timeout_s=0.5)
        assert res.missing == [0] and res.answered == [1, 2] and 0 in res.reasons
        assert res.coverage == pytest.approx(2 / 3)
        mask = sray.shard_of(ids, SHARDS) != 0
        sub_db = sieve.open(tmp_path / "sub")
        sub = sub_db.create_collection("items", DIM, metric="ip", attributes=ATTRS)
        sub.ingest(v[mask], {k: (c[mask] if not isinstance(c, list) else
                                 [x for x, m in zip(c, mask) if m]) for k, c in attrs.items()},
                   ids[mask])
        assert_same(res, sub.search(queries, 10, filter="cat != 3"), "ip")
        sub_db.close()

        # The default waits for the restarted shard and answers in full.
        wait_restarted(sharded, 0, old)
        old = kill(sharded, 0)
        retries = sharded.retries
        res = sharded.search(queries, 10, filter="cat != 3")
        assert res.coverage == 1.0 and res.missing == []
        assert_same(res, want, "ip")
        assert sharded.retries > retries  # the first call found the shard down
        assert pid_of(sharded, 0) != old

        # Killed while a stream of searches runs: every search still answers in full.
        results, stop = [], threading.Event()

        def loop():
            while not stop.is_set():
                try:
                    results.append(sharded.search(queries, 10, filter="cat != 3"))
                except Exception as e:
                    results.append(e)

        t = threading.Thread(target=loop)
        t.start()
        time.sleep(0.3)
        old = kill(sharded, 2)
        wait_restarted(sharded, 2, old)
        time.sleep(0.3)
        stop.set()
        t.join(60)
        assert len(results) >= 3
        for r in results:
            assert not isinstance(r, Exception), r
            assert_same(r, want, "ip")

        # ray.kill: Ray will not restart that actor; the driver starts it anew from its
        # directory and the search answers in full.
        old = pid_of(sharded, 1)
        ray.kill(sharded.actors[1])
        res = sharded.search(queries, 10, filter="cat != 3")
        assert res.coverage == 1.0
        assert_same(res, want, "ip")
        assert sharded.revived == 1 and pid_of(sharded, 1) != old
        assert sharded.count() == 3000

        # A shard that stays down past the timeout (shorter than any restart): Unavailable
        # names it.
        kill(sharded, 1)
        with pytest.raises(sieve.Unavailable, match=r"search: shards \[1\]"):
            sharded.search(queries, 10, timeout_s=0.01)
    finally:
        sharded.close()
        db.close()


def test_restart_from_disk(cluster, tmp_path):
    # Each shard's own database spreads its 2 shards over 2 CPU executors.
    sharded, db, one = pair(tmp_path, "cosine", local_shards=2,
                            db_options={"cpu_executors": 2})
    v, ids, attrs = rows(2500, seed=14)
    sharded.ingest(v, attrs, ids)
    one.ingest(v, attrs, ids)
    sharded.delete(filter="cat = 0")
    one.delete(filter="cat = 0")
    plan = sharded.search(np.ones(DIM, np.float32), 3, explain=True).plan
    for p in plan["shards"]:
        assert [d["device"] for d in p["plan"]["devices"]] == ["cpu0", "cpu1"], p
    sharded.close()
    try:
        with pytest.raises(sieve.InvalidArgument, match="holds"):
            sray.ShardedCollection.open("items", tmp_path / "shards", 2, num_cpus=0.5)
        with pytest.raises(sieve.NotFound):
            sray.ShardedCollection.open("other", tmp_path / "shards", SHARDS, num_cpus=0.5)
        with pytest.raises(sieve.AlreadyExists, match="exists with"):
            sray.ShardedCollection.create("items", tmp_path / "shards", SHARDS, dim=DIM + 1,
                                          metric="cosine", attributes=ATTRS, num_cpus=0.5)
        again = sray.ShardedCollection.open("items", tmp_path / "shards", SHARDS, num_cpus=0.5)
        try:
            assert (again.dim, again.metric, again.attributes) == (DIM, "cosine", ATTRS)
            assert again.count() == one.count()
            assert all(s["shards"] == 2 for s in again.stats()["per_shard"])
            plan = again.search(np.ones(DIM, np.float32), 3, explain=True).plan
            assert [len(p["plan"]["devices"]) for p in plan["shards"]] == [1, 1, 1]
            queries = np.random.default_rng(15).standard_normal((5, DIM)).astype(np.float32)
            searches(again, one, "cosine", queries, ks=(10,))
            assert all(not s["reconstructed"] for s in again.shard_info())
        finally:
            again.drop()
        with pytest.raises(sieve.NotFound):
            sray.ShardedCollection.open("items", tmp_path / "shards", SHARDS, num_cpus=0.5)
    finally:
        db.close()


def test_routing_is_stable():
    # The shard of an id is part of a sharded collection's layout: these must never change.
    ids = np.array([0, 1, -1, 42, 2**62, -(2**63), 2**63 - 1], dtype=np.int64)
    assert sray.shard_of(ids, 3).tolist() == sray.shard_of(ids.tolist(), 3).tolist()
    assert sray.shard_of(ids, 1).tolist() == [0] * 7
    spread = np.bincount(sray.shard_of(np.arange(30000), 3), minlength=3)
    assert spread.min() > 9500
    # splitmix64(id ^ 0x243f6a8885a308d3) % shards, computed with Python integers.
    assert sray.shard_of(ids, 3).tolist() == [1, 0, 2, 2, 1, 1, 1]
    assert sray.shard_of(ids, 1000).tolist() == [929, 536, 395, 453, 51, 369, 34]


@ray.remote(num_cpus=0.1)
class _WarningProbe:
    """Opens a shard in an actor as ShardedCollection's do, recording the warnings it raises."""

    def open_shard(self, path):
        import warnings

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            shard = sray._Shard(path, "items", 0, 1, {"dim": 4, "metric": "l2", "dtype": "f32",
                                                       "attributes": [], "shards": 1}, True)
            assert shard._error is None, shard._error
        return [f"{w.category.__name__}: {w.message}" for w in caught]


def test_a_shard_starts_without_a_deprecation_warning(cluster, tmp_path):
    # Ray 2.60's was_current_actor_reconstructed warned from every shard actor (on the driver's
    # terminal, once a shard).
    probe = _WarningProbe.remote()
    assert ray.get(probe.open_shard.remote(str(tmp_path))) == []
    ray.kill(probe)


# -- query shapes: range search, pages, group-by (each against one embedded collection) -------

SHAPE_ATTRS = {"cat": "int", "brand": "string", "flag": "bool", "tags": "tags", "price": "float"}


def shape_rows(n, seed, integer=False):
    """Rows whose vectors repeat (duplicates land on different shards, so distances tie exactly
    across shards); `integer`: small integer components, so that many distinct rows tie too."""
    rng = np.random.default_rng(seed)
    if integer:
        v = rng.integers(-2, 3, (n, DIM)).astype(np.float32)
    else:
        v = rng.standard_normal((n, DIM)).astype(np.float32)
        v[n // 2:] = v[:n - n // 2]  # every row of the second half duplicates one of the first
    ids = rng.permutation(3 * n)[:n].astype(np.int64)
    brands = ["b%d" % i for i in range(40)] + ["it's", 'say "x"']
    attrs = {
        "cat": np.ma.masked_array(rng.integers(0, 30, n), mask=rng.random(n) < 0.05),
        "brand": [None if i % 11 == 0 else brands[rng.integers(0, len(brands))]
                  for i in range(n)],
        "flag": [None if i % 13 == 0 else bool(i % 3) for i in range(n)],
        "tags": [list({"t%d" % rng.integers(0, 25) for _ in range(rng.integers(0, 4))})
                 for i in range(n)],
        "price": rng.uniform(0, 100, n),
    }
    return v, ids, attrs


@pytest.fixture(scope="module")
def shaped(cluster, tmp_path_factory):
    """Per metric and data kind: a sharded collection and one embedded one with the same rows
    (its actors ask for little CPU, so that the cluster has room for the tests' others)."""
    made = {}
    root = tmp_path_factory.mktemp("shapes")

    def get(metric, integer=False):
        key = (metric, integer)
        if key not in made:
            where = root / ("%s-%d" % key)
            sharded = sray.ShardedCollection.create("items", where / "shards", SHARDS, dim=DIM,
                                                    metric=metric, attributes=SHAPE_ATTRS,
                                                    num_cpus=0.1)
            db = sieve.open(where / "one")
            one = db.create_collection("items", DIM, metric=metric, attributes=SHAPE_ATTRS)
            v, ids, attrs = shape_rows(2400, seed=11, integer=integer)
            sharded.ingest(v, attrs, ids)
            one.ingest(v, attrs, ids)
            made[key] = (sharded, db, one)
        return made[key]

    yield get
    for sharded, db, _ in made.values():
        sharded.close()
        db.close()


SHAPE_FILTERS = [None, "price < 40", "brand IN ('b1', 'b2', 'b3', 'it''s') OR cat < 5",
                 "cat = 999"]


def shape_queries(metric, integer, n=6):
    rng = np.random.default_rng(5)
    if integer:
        return rng.integers(-2, 3, (n, DIM)).astype(np.float32)
    return rng.standard_normal((n, DIM)).astype(np.float32)


def assert_rows_equal(got, want):
    """Exactly the same rows in the same order (ties ordered by id, as one collection)."""
    np.testing.assert_array_equal(got.counts, want.counts)
    assert got.ids.shape == want.ids.shape
    np.testing.assert_array_equal(got.ids, want.ids)
    np.testing.assert_array_equal(got.distances, want.distances)


def radius_for(one, queries, metric, rank):
    """A radius on the distance of the rank-th row of query 0 (a boundary with ties)."""
    d = one.search(queries[:1], rank + 1).distances[0]
    return float(d[rank])


@pytest.mark.parametrize("metric,integer", [("l2", False), ("ip", False), ("cosine", False),
                                            ("l2", True)])
def test_range_search_equals_one_collection(shaped, metric, integer):
    sharded, _, one = shaped(metric, integer)
    queries = shape_queries(metric, integer)
    proven_limit = 0
    for rank in (0, 40, 400):
        r = radius_for(one, queries, metric, rank)
        for f in SHAPE_FILTERS[:3]:
            for limit in (None, 1, 37):
                want = one.search(queries, filter=f, radius=r, limit=limit)
                got = sharded.search(queries, filter=f, radius=r, limit=limit)
                assert_rows_equal(got, want)
                assert got.limit_reached == want.limit_reached
                proven_limit += sum(want.limit_reached)
        per_query = [SHAPE_FILTERS[q % len(SHAPE_FILTERS)] for q in range(len(queries))]
        want = one.search(queries, filters=per_query, radius=r, limit=50, include="brand,cat")
        got = sharded.search(queries, filters=per_query, radius=r, limit=50,
                             include=["brand", "cat"])
        assert_rows_equal(got, want)
        assert got.limit_reached == want.limit_reached
        assert got.rows == want.rows
    assert proven_limit > 0  # the limit was reached somewhere, and said so the same way
    # The widest answer: more rows than any shard's share, so the merge is across shards.
    r = radius_for(one, queries, metric, 1500)
    want = one.search(queries, radius=r, limit=100000)
    got = sharded.search(queries, radius=r, limit=100000)
    assert_rows_equal(got, want)
    assert want.counts.min() > 800


@pytest.mark.parametrize("metric,integer", [("l2", False), ("ip", False), ("l2", True)])
def test_pages_equal_one_collection(shaped, metric, integer):
    sharded, db, one = shaped(metric, integer)
    queries = shape_queries(metric, integer)
    for f in (None, "price < 40"):
        for k in (1, 7, 64):
            for offset in (0, 3, 100):
                want = one.search(queries, k, filter=f, offset=offset)
                got = sharded.search(queries, k, filter=f, offset=offset)
                assert_rows_equal(got, want)
                assert [n is None for n in got.next] == [n is None for n in want.next]
    # Paging with cursors through a query's whole order gives one collection's order: every
    # row exactly once, ties at the page edges (duplicates across shards) included.
    per_query = [SHAPE_FILTERS[q % len(SHAPE_FILTERS)] for q in range(len(queries))]
    for k, rows_paged in ((1, 40), (13, 400), (250, 2400)):
        everything = one.search(queries, 2400, filters=per_query)
        cursor = [None] * len(queries)
        pages = [[] for _ in queries]
        ecursor = [None] * len(queries)
        for _ in range(rows_paged // k + 2):
            got = sharded.search(queries, k, filters=per_query, after=cursor, include="cat")
            want = one.search(queries, k, filters=per_query, after=ecursor, include="cat")
            assert_rows_equal(got, want)
            assert got.rows == want.rows
            assert [n is None for n in got.next] == [n is None for n in want.next]
            for q in range(len(queries)):
                pages[q].extend(got.ids[q, :got.counts[q]].tolist())
            if all(n is None for n in got.next):
                break
            cursor = [n or "" for n in got.next]
            ecursor = [n or "" for n in want.next]
            # A query whose pages ended starts over: its next page is its first.
        for q in range(len(queries)):
            n = min(int(everything.counts[q]), len(pages[q]))
            assert pages[q][:n] == everything.ids[q, :n].tolist()
        assert max(len(p) for p in pages) >= min(rows_paged, 2400)


def test_pages_under_a_snapshot(cluster, tmp_path):
    sharded = sray.ShardedCollection.create("snap", tmp_path / "shards", SHARDS, dim=DIM,
                                            attributes=SHAPE_ATTRS, num_cpus=0.1)
    try:
        v, ids, attrs = shape_rows(600, seed=3, integer=True)
        sharded.ingest(v, attrs, ids)
        queries = shape_queries("l2", True, n=2)
        with sharded.snapshot() as snap:
            first = sharded.search(queries, 50, snapshot=snap, after=["", ""])
            before = sharded.count(snapshot=snap)
            # Writes between pages: rows nearer than any page's, and deletes of rows to come.
            new_ids = np.arange(10**9, 10**9 + 5, dtype=np.int64)
            sharded.ingest(np.repeat(queries[:1], 5, axis=0), None, new_ids)
            second = sharded.search(queries, 50, snapshot=snap, after=first.next)
            sharded.delete(ids=second.ids[0, :10])
            assert sharded.count(snapshot=snap) == before == 600
            assert sharded.count() == 600 + 5 - 10
            whole = sharded.search(queries, 150, snapshot=snap, offset=0)
            again = sharded.search(queries, 50, snapshot=snap, after=first.next)
            np.testing.assert_array_equal(again.ids, second.ids)
            np.testing.assert_array_equal(whole.ids[:, :50], first.ids)
            np.testing.assert_array_equal(whole.ids[:, 50:100], second.ids)
            third = sharded.search(queries, 50, snapshot=snap, after=again.next)
            np.testing.assert_array_equal(whole.ids[:, 100:], third.ids)
            # Grouped searches read it too (both rounds).
            grouped = sharded.search(queries, 3, group_by="cat", group_size=2, snapshot=snap)
            assert all(i not in new_ids for gs in grouped for g in gs for i in g.ids)
            # The latest rows differ: the new rows lead.
            latest = sharded.search(queries[:1], 5)
            assert sorted(latest.ids[0].tolist()) == new_ids.tolist()
        assert snap.released
        with pytest.raises(sieve.InvalidArgument, match="released"):
            sharded.search(queries, 5, snapshot=snap)
    finally:
        sharded.close()


def group_key(groups):
    return [[(g.value, g.ids.tolist(), g.distances.tolist()) for g in gs] for gs in groups]


@pytest.mark.parametrize("metric,integer", [("l2", False), ("ip", False), ("cosine", False),
                                            ("l2", True)])
def test_group_by_equals_one_collection(shaped, metric, integer):
    sharded, _, one = shaped(metric, integer)
    queries = shape_queries(metric, integer)
    per_query = [SHAPE_FILTERS[q % len(SHAPE_FILTERS)] for q in range(len(queries))]
    checked = 0
    for field in ("cat", "brand", "flag", "tags"):
        for k, size in ((1, 1), (5, 3), (40, 2)):
            for f in (None, "price < 40"):
                want = one.search(queries, k, filter=f, group_by=field, group_size=size)
                got = sharded.search(queries, k, filter=f, group_by=field, group_size=size)
                assert group_key(got) == group_key(want), (field, k, size, f)
                checked += sum(len(g) for g in want)
            want = one.search(queries, k, filters=per_query, group_by=field, group_size=size,
                              include="brand,tags")
            got = sharded.search(queries, k, filters=per_query, group_by=field,
                                 group_size=size, include="brand,tags")
            assert group_key(got) == group_key(want)
            assert [[g.rows for g in gs] for gs in got] == [[g.rows for g in gs] for gs in want]
    assert checked > 500
    # A quoted string value ("it's") and a group with rows on every shard are among them.
    want = one.search(queries, 42, group_by="brand", group_size=60)
    got = sharded.search(queries, 42, group_by="brand", group_size=60, explain=True)
    assert group_key(got) == group_key(want)
    assert "it's" in [g.value for g in got[0]]
    assert len(got.plan["rounds"]) == 2 and len(got.plan["rounds"][1]) == SHARDS


def test_shapes_bad_input_as_one_collection(shaped):
    sharded, _, one = shaped("l2", False)
    q = shape_queries("l2", False, n=2)
    cases = [
        dict(radius=float("nan")), dict(radius=1.0, limit=0), dict(radius=1.0, offset=2),
        dict(radius=1.0, after=["", ""]), dict(offset=-1), dict(offset=999995, k=10),
        dict(offset=1, after=["", ""]), dict(after=[""]), dict(k=0, offset=1),
        dict(group_by="price"), dict(group_by="nope"), dict(group_by="cat", group_size=0),
        dict(group_by="cat", k=1000, group_size=1001), dict(group_by="cat", radius=1.0),
        dict(group_by="cat", offset=0), dict(group_by="cat", group_strategy="odd"),
        dict(radius=1.0, filter="cat <"), dict(offset=0, filter="nope = 1"),
        dict(group_by="cat", filter="cat <"),
    ]
    for case in cases:
        args = dict(k=5)
        args.update(case)
        with pytest.raises(sieve.Error) as want:
            one.search(q, **args)
        with pytest.raises(sieve.Error) as got:
            sharded.search(q, **args)
        assert type(got.value) is type(want.value), case
        assert str(got.value) == str(want.value), case
    for case in [dict(radius="1"), dict(limit=2.5, radius=1.0), dict(offset=True),
                 dict(after=3), dict(group_by=1), dict(group_by="cat", group_size=1.5)]:
        with pytest.raises(TypeError) as want:
            one.search(q, 5, **case)
        with pytest.raises(TypeError) as got:
            sharded.search(q, 5, **case)
        assert str(got.value) == str(want.value)
    # Cursors: one collection's cursor, a damaged one, another shard count's.
    good = sharded.search(q, 5, offset=0).next[0]
    embedded = one.search(q, 5, offset=0).next[0]
    for bad in (embedded, good[:-1] + "9", "r1.4" + good[4:], "nonsense"):
        with pytest.raises(sieve.InvalidArgument, match="not a cursor a sieve.ray search"):
            sharded.search(q, 5, after=[bad, ""])
    with pytest.raises(sieve.InvalidArgument, match="partial=True"):
        sharded.search(q, 5, offset=0, partial=True)
    with pytest.raises(sieve.InvalidArgument, match="partial=True"):
        sharded.search(q, 5, group_by="cat", partial=True)


def test_text_queries_refused(shaped):
    sharded, _, _ = shaped("l2", False)
    q = shape_queries("l2", False, n=1)
    for args in (dict(text="red shoe", text_field="title"), dict(text_field="title"),
                 dict(text="red", text_field="title", fusion="weighted")):
        with pytest.raises(sieve.NotSupported, match="BM25 .*per-collection statistics"):
            sharded.search(q, 5, **args)
    with pytest.raises(sieve.NotSupported, match="BM25"):
        sharded.search(None, 5, text="red", text_field="title")
