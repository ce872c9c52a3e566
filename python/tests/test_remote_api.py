"""sieve.RemoteCollection has the embedded Collection's API: every public method with the same
parameters, and the same answers on the same rows (get, count, scan, update, upsert, search with
include, compact, delete, snapshots), against a live `sieve serve`; the Client's database calls
(drop_collection, snapshot, backup, compact, metrics, openapi)."""

import inspect

import numpy as np
import pandas as pd
import pytest

import sieve
from conftest import Server

DIM = 6
ATTRS = {"cat": "int", "price": "float", "color": "string", "tags": "tags", "ok": "bool"}


def rows(n=300, seed=3):
    rng = np.random.default_rng(seed)
    v = rng.standard_normal((n, DIM)).astype(np.float32)
    ids = np.arange(n, dtype=np.int64) * 5 + 7
    attrs = {
        "cat": [int(x) if x % 7 else None for x in rng.integers(0, 5, n)],
        "price": [float(x) for x in rng.uniform(0, 100, n).round(2)],
        "color": [["red", "green", None][i % 3] for i in range(n)],
        "tags": [["a", "b"][: i % 3] for i in range(n)],
        "ok": [bool(i % 2) for i in range(n)],
    }
    return v, ids, attrs


@pytest.fixture
def pair(tmp_path, server):
    """The same rows in an embedded collection and in a served one."""
    db = sieve.open(tmp_path / "local")
    client = sieve.Client(server.url)
    local = db.create_collection("items", DIM, attributes=ATTRS)
    remote = client.create_collection("items", DIM, attributes=ATTRS)
    v, ids, attrs = rows()
    local.ingest(v, attributes=attrs, ids=ids)
    remote.ingest(v, attributes=attrs, ids=ids, batch_rows=128)  # three requests
    yield local, remote, client, (v, ids, attrs)
    client.close()
    db.close()


def same_rows(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        if x is None or y is None:
            assert x is y
            continue
        assert x.keys() == y.keys()
        for key in x:
            if key == "vector":
                assert y[key].dtype == np.float32
                np.testing.assert_array_equal(x[key], y[key])
            else:
                assert x[key] == y[key], key


def test_every_method_of_the_embedded_collection_with_its_parameters():
    for name, method in inspect.getmembers(sieve.Collection, inspect.isfunction):
        if name.startswith("_"):
            continue
        assert hasattr(sieve.RemoteCollection, name), "RemoteCollection lacks %s" % name
        want = inspect.signature(method).parameters
        got = inspect.signature(getattr(sieve.RemoteCollection, name)).parameters
        # validate_only checks on the engine without writing: the server has no such request.
        missing = [p for p in want if p not in got and p != "validate_only"]
        assert not missing, "RemoteCollection.%s lacks %s" % (name, missing)
        for p in want:
            if p in got:
                assert got[p].kind == want[p].kind, (name, p)
                # batch_rows: the server commits a request whole, so the client's default is
                # one request (0) where the embedded one commits 65,536 rows at a time.
                if want[p].default is not inspect.Parameter.empty and p != "batch_rows":
                    assert got[p].default == want[p].default, (name, p)


def test_reads_answer_as_the_embedded_collection(pair):
    local, remote, _, (v, ids, _) = pair
    assert len(remote) == len(local) == len(ids)
    probe = [int(ids[0]), 3, int(ids[5]), int(ids[5]), int(ids[-1])]
    for include in ("*", "cat,price", ["color", "vector"], "vector", "tags,ok"):
        same_rows(remote.get(probe, include=include), local.get(probe, include=include))
    for f in (None, "cat = 2", "price < 30 AND color = 'red'", "tags CONTAINS 'b'", "ok"
              " = true AND cat IS NULL"):
        assert remote.count(f) == local.count(f), f
        same_rows(list(remote.scan(f, include="*,vector", page_rows=37)),
                  list(local.scan(f, include="*,vector", page_rows=37)))
    q = v[:4] + 0.01
    for include in (None, "*", ["price", "vector"]):
        a = local.search(q, k=5, filter="cat >= 1", include=include)
        b = remote.search(q, k=5, filter="cat >= 1", include=include)
        np.testing.assert_array_equal(a.ids, b.ids)
        np.testing.assert_allclose(a.distances, b.distances, rtol=1e-6)
        if include is None:
            assert b.rows is None
        else:
            assert len(b.rows) == 4
            for x, y in zip(a.rows, b.rows):
                same_rows(x, y)


def test_writes_answer_as_the_embedded_collection(pair):
    local, remote, _, (v, ids, _) = pair
    answers = []
    for c in (local, remote):
        a = [c.update({"color": "blue", "price": np.float64(1.5)}, filter="cat = 1"),
             c.update({"cat": 9.0, "tags": ("x",)}, ids=ids[:3]),
             tuple(c.upsert(v[:2] * 2, attributes={"cat": [4, None]}, ids=ids[:2])),
             c.delete(filter="cat = 4"), c.delete(ids=ids[10:20])]
        answers.append(a)
    assert answers[0] == answers[1]
    assert answers[1][0] > 0 and answers[1][1] == 3 and answers[1][2][2] == 2
    assert answers[1][3] > 0 and answers[1][4] > 0
    assert remote.count() == local.count()
    same_rows(list(remote.scan(include="*,vector")), list(local.scan(include="*,vector")))
    a, b = local.compact(force=True), remote.compact(force=True)
    assert (a["rows_removed"], a["shards_rewritten"]) == (b["rows_removed"], b["shards_rewritten"])
    assert b["rows_removed"] > 0
    with pytest.raises(sieve.InvalidArgument, match="exactly one"):
        remote.update({"cat": 1})


def test_snapshots_read_one_version(pair):
    _, remote, client, (_, ids, _) = pair
    with client.snapshot() as snap:
        before = remote.count(snapshot=snap)
        remote.delete(ids=ids[:50])
        assert remote.count() == before - 50
        assert remote.count(snapshot=snap) == before
        assert len(list(remote.scan(snapshot=snap, page_rows=40))) == before
        assert remote.get([int(ids[0])], snapshot=snap)[0]["id"] == ids[0]
        assert remote.get([int(ids[0])])[0] is None
        res = remote.search(np.zeros((1, DIM), np.float32), k=before, snapshot=snap)
        assert res.counts[0] == before
    assert snap.released
    with pytest.raises(sieve.NotFound):
        remote.count(snapshot=snap)
    with pytest.raises(TypeError):
        remote.count(snapshot="s1")
    # A scan abandoned midway releases the snapshot the server opened for it.
    it = remote.scan(page_rows=10)
    next(it)
    it.close()
    assert "sieve_http_requests_total{method=\"DELETE\",route=\"/snapshots/{token}\"," \
           "status=\"200\"}" in client.metrics()


def test_pandas_columns_as_pandas_users_have_them(pair, tmp_path):
    local, remote, _, _ = pair
    csv = tmp_path / "a.csv"
    csv.write_text("cat,price,color\n1,2.5,red\n,3.5,\n3,,blue\n")
    df = pd.read_csv(csv)
    assert df["cat"].dtype == np.float64  # pandas made the int column float
    v = np.ones((3, DIM), np.float32)
    for c in (local, remote):
        c.ingest(v, attributes=df, ids=[1, 2, 3])
        got = c.get([1, 2, 3], include="cat,price,color")
        assert [(r["cat"], r["price"], r["color"]) for r in got] == [
            (1, 2.5, "red"), (None, 3.5, None), (3, None, "blue")]
        assert isinstance(got[0]["cat"], int)
        c.ingest(v[:2], attributes={"price": np.array([np.nan, 1.0])}, ids=[4, 5])
        assert [r["price"] for r in c.get([4, 5], include="price")] == [None, 1.0]
        with pytest.raises(sieve.InvalidArgument, match="row 1, attribute 'cat'.*2.5"):
            c.ingest(v[:2], attributes={"cat": np.array([1.0, 2.5])}, ids=[6, 7])


def test_client_database_calls(tmp_path):
    backups = tmp_path / "backups"
    backups.mkdir()
    s = Server(tmp_path / "served", "--backup-dir", str(backups))
    try:
        client = sieve.Client(s.url)
        a = client.create_collection("a", DIM)
        a.ingest(np.ones((10, DIM), np.float32))
        a.delete(ids=[1, 2])
        client.create_collection("b", DIM)
        total = client.compact(force=True)
        assert total["rows_removed"] == 2 and total["shards_rewritten"] == 1
        r = client.backup("nightly", keep=1)
        assert r["backup_id"] == 1 and (backups / "nightly" / "meta" / "1").is_file()
        with pytest.raises(sieve.InvalidArgument, match="relative path"):
            client.backup("/tmp/elsewhere")
        client.drop_collection("b")
        assert client.collections() == ["a"]
        with pytest.raises(sieve.NotFound):
            client.drop_collection("b")
        doc = client.openapi()
        assert doc["openapi"] == "3.1.0" and "/collections/{name}/get" in doc["paths"]
        assert 'route="/collections/{name}/compact"' in client.metrics()
    finally:
        s.stop()


def test_arrow_and_parquet_ingest_as_the_embedded_collection(tmp_path, server):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    v, ids, attrs = rows(200, seed=11)
    table = pa.table({"id": ids, "vector": pa.FixedSizeListArray.from_arrays(
        pa.array(v.ravel()), DIM), **{k: attrs[k] for k in ("cat", "price", "color")}})
    path = tmp_path / "rows.parquet"
    pq.write_table(table, path, row_group_size=64)
    db = sieve.open(tmp_path / "local")
    client = sieve.Client(server.url)
    schema = {k: ATTRS[k] for k in ("cat", "price", "color")}
    for how in ("arrow", "parquet"):
        local = db.create_collection("t_" + how, DIM, attributes=schema)
        remote = client.create_collection("t_" + how, DIM, attributes=schema)
        for c in (local, remote):
            if how == "arrow":
                r = c.ingest_arrow(table, id_column="id", batch_rows=50)
            else:
                r = c.ingest_parquet(path, id_column="id", batch_rows=50)
            assert (r.ingested, r.rows) == (200, 200)
        probe = [int(ids[0]), int(ids[77]), int(ids[199]), 1]
        same_rows(remote.get(probe, include=["cat", "price", "color", "vector"]),
                  local.get(probe, include=["cat", "price", "color", "vector"]))
        assert remote.count("cat = 2") == local.count("cat = 2")
        # A bad column is refused before any request, naming it.
        with pytest.raises(sieve.InvalidArgument, match="no column 'nope'"):
            remote.ingest_arrow(table, id_column="id", columns=["nope"])
        assert len(remote) == 200
    client.close()
    db.close()
