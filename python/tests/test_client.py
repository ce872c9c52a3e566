"""sieve.Client against a real `sieve serve` on 127.0.0.1 (port 0), started by the tests:
the same collection API, results equal to the float64 oracle, .npy bulk ingest, keep-alive,
and HTTP failures as the package's exceptions."""

import pathlib
import threading

import numpy as np
import pandas as pd
import pytest

import sieve
from conftest import Server, assert_matches, oracle

DIM = 8


def data(n=500, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((n, DIM)).astype(np.float32), rng.integers(0, 5, n),
            rng.standard_normal((4, DIM)).astype(np.float32))


def test_collection_api(server):
    client = sieve.Client(server.url)
    assert client.health() == {"status": "ok"}
    assert client.collections() == []
    items = client.create_collection("items", DIM, metric="cosine",
                                     attributes={"cat": "int", "color": "string"})
    assert (items.dim, items.metric, items.attributes) == (DIM, "cosine",
                                                           {"cat": "int", "color": "string"})
    rows, cat, queries = data()
    color = np.where(cat % 2 == 0, "red", None).astype(object)
    ids = np.arange(len(rows), dtype=np.int64) * 3 + 1
    r = items.ingest(rows, attributes=pd.DataFrame({"cat": cat, "color": color}), ids=ids)
    assert (r.ingested, r.rows) == (len(rows), len(rows))
    assert client.collections() == ["items"] and "items" in client
    assert len(client["items"]) == len(rows)

    res = items.search(queries, k=6, filter="cat = 2", explain=True)
    assert_matches(res, oracle(rows, queries, "cosine", 6, cat == 2), ids, "cosine")
    assert res.plan["passing_rows"] == (cat == 2).sum()
    res = items.search(queries, k=4, filters=["color = 'red'", "cat < 2", None, "color IS NULL"])
    masks = [cat % 2 == 0, cat < 2, None, cat % 2 == 1]
    assert_matches(res, oracle(rows, queries, "cosine", 4, masks), ids, "cosine")
    for path in ("sddmm", "gather", "dense"):
        res = items.search(queries, k=3, filter="cat >= 1", path=path, explain=True)
        assert {s["path"] for s in res.plan["shards"]} == {path}
        assert_matches(res, oracle(rows, queries, "cosine", 3, cat >= 1), ids, "cosine")

    few = items.search(queries, k=len(rows), filter="cat = 3 AND color = 'red'")
    assert (few.counts == 0).all() and (few.ids == -1).all()

    assert items.delete(ids=ids[:5]) == 5
    assert items.delete(filter="cat = 0") == ((cat == 0)[5:]).sum()
    st = items.stats()
    keep = (cat != 0)
    keep[:5] = False
    assert st["rows"] == keep.sum()
    assert_matches(items.search(queries, k=5), oracle(rows, queries, "cosine", 5, keep), ids,
                   "cosine")


def test_npy_bulk_ingest_and_json_with_ids(server):
    client = sieve.Client(server.address)  # without the scheme
    c = client.create_collection("bulk", DIM)
    rows, _, queries = data(2000, seed=1)
    assert c.ingest(rows) == (2000, 2000, 0)  # .npy body, ids assigned from 0
    assert c.ingest(rows[:3].astype(np.float16), ids=[5000, 5001, 5002]).rows == 2003
    res = c.search(queries, k=5)
    assert_matches(res, oracle(rows, queries, "l2", 5), np.arange(2000), "l2", rtol=1e-3)


def test_keep_alive_reuses_one_connection_per_thread(server):
    client = sieve.Client(server.url)
    client.create_collection("k", DIM).ingest(data()[0])
    coll = client["k"]
    q = data()[2]
    coll.search(q, k=2)
    conn = client._local.conn
    sock = conn.sock
    for _ in range(20):
        coll.search(q, k=2)
        coll.stats()
    assert client._local.conn is conn and conn.sock is sock  # one TCP connection throughout
    seen = []

    def other():
        coll.search(q, k=2)
        seen.append(client._local.conn)

    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert seen[0] is not conn  # each thread its own
    client.close()
    assert coll.search(q, k=2).ids.shape == (4, 2)  # reconnects


def test_reconnects_after_the_server_closed_an_idle_connection(tmp_path):
    s = Server(tmp_path / "idle", "--idle-timeout-ms", "100")
    try:
        client = sieve.Client(s.url)
        c = client.create_collection("c", DIM)
        c.ingest(data()[0])
        first = client._local.conn
        import time

        time.sleep(0.5)  # the server closes the idle connection
        assert c.ingest(data()[0][:2]).rows == 502  # not idempotent: sent on a new connection
        assert client._local.conn is not first
        time.sleep(0.5)
        assert len(c) == 502
    finally:
        s.stop()
    assert first is not None


def test_http_failures_are_the_packages_exceptions(server, tmp_path):
    client = sieve.Client(server.url)
    c = client.create_collection("e", DIM, attributes={"cat": "int"})
    c.ingest(data()[0], ids=np.arange(500))
    q = data()[2]
    with pytest.raises(sieve.InvalidArgument, match="k") as e:
        c.search(q, k=0)
    assert e.value.http_status == 400
    with pytest.raises(sieve.InvalidArgument, match="position"):
        c.search(q, k=1, filter="cat = = 1")
    with pytest.raises(sieve.InvalidArgument, match="dim"):
        c.search(np.ones((1, 3), np.float32), k=1)
    with pytest.raises(sieve.InvalidArgument, match="already exists"):
        c.ingest(data()[0][:1], ids=[3])
    with pytest.raises(sieve.InvalidArgument, match="unknown attribute"):
        c.ingest(data()[0][:1], attributes={"nope": [1]})
    with pytest.raises(sieve.NotFound) as e:
        client["missing"]
    assert e.value.http_status == 404
    with pytest.raises(sieve.AlreadyExists) as e:
        client.create_collection("e", DIM)
    assert e.value.http_status == 409
    with pytest.raises(sieve.InvalidArgument):
        client.create_collection("x", 0)
    if "gpu" not in c.search(q, k=1, explain=True).plan["device"]:
        with pytest.raises(sieve.Unavailable) as e:
            c.search(q, k=1, device="gpu")
        assert e.value.http_status == 503
    with pytest.raises(sieve.InvalidArgument, match="exactly one"):
        c.delete()


def test_token_and_request_limits(tmp_path):
    token = tmp_path / "token"
    token.write_text("s3cret-0123456789abcdef\n")
    s = Server(tmp_path / "auth", "--token-file", str(token), "--max-body-bytes", "4096")
    try:
        with pytest.raises(sieve.Unauthorized) as e:
            sieve.Client(s.url).collections()
        assert e.value.http_status == 401
        with pytest.raises(sieve.Unauthorized, match="wrong"):
            sieve.Client(s.url, token="guess").collections()
        client = sieve.Client(s.url, token="s3cret-0123456789abcdef")
        c = client.create_collection("c", DIM)
        with pytest.raises(sieve.ResourceExhausted) as e:
            c.ingest(np.ones((1000, DIM), np.float32))
        assert e.value.http_status == 413
    finally:
        s.stop()


def test_unreachable_server_is_unavailable(tmp_path):
    s = Server(tmp_path / "gone")
    url = s.url
    s.stop()
    with pytest.raises(sieve.Unavailable, match="cannot reach"):
        sieve.Client(url, timeout=5).collections()
    with pytest.raises(sieve.InvalidArgument):
        sieve.Client("ftp://x")


def test_same_answers_as_the_embedded_api(tmp_path):
    rows, cat, queries = data(800, seed=7)
    with sieve.open(tmp_path / "embedded") as db:
        e = db.create_collection("c", DIM, metric="ip", attributes={"cat": "int"})
        e.ingest(rows, attributes={"cat": cat})
        want = e.search(queries, k=9, filter="cat IN (1, 2)")
        want_pq = e.search(queries, k=9, filters=["cat = 1", "", "cat = 3", None])
    s = Server(tmp_path / "embedded")  # the same store, now served
    try:
        c = sieve.Client(s.url)["c"]
        got = c.search(queries, k=9, filter="cat IN (1, 2)")
        got_pq = c.search(queries, k=9, filters=["cat = 1", "", "cat = 3", None])
    finally:
        s.stop()
    # The client checks the filter arguments as the embedded API does, before any request.
    with pytest.raises(sieve.InvalidArgument, match="filter: one filter string, got list"):
        c.search(queries, k=9, filter=["cat = 1"] * len(queries))
    with pytest.raises(sieve.InvalidArgument, match="filters: a list"):
        c.search(queries, k=9, filters="cat = 1")
    for a, b in ((want, got), (want_pq, got_pq)):
        assert np.array_equal(a.ids, b.ids) and np.array_equal(a.distances, b.distances)
        assert np.array_equal(a.counts, b.counts)
    assert pathlib.Path(tmp_path / "embedded").is_dir()


def test_alter_rename_and_aliases_over_http(server):
    client = sieve.Client(server.url)
    rows, cat, _ = data(50)
    c = client.create_collection("items_v1", DIM, attributes={"cat": "int", "price": "float"})
    c.ingest(rows, attributes={"cat": cat, "price": cat * 0.5})
    assert c.add_attribute("stock", "int", default=4)["stock"] == "int"
    assert (c.search(rows[:1], k=100, filter="stock = 4").ids[0] >= 0).sum() == 50
    assert "cat" not in c.drop_attribute("cat")
    c.rename_attribute("price", "cost")
    assert list(c.attributes) == ["cost", "stock"]
    c.rename("items_v2")
    assert client.collections() == ["items_v2"]
    client.set_alias("items", "items_v2")
    assert client.aliases() == {"items": "items_v2"}
    assert len(client["items"]) == 50
    with pytest.raises(sieve.InvalidArgument, match="alias"):
        client._request("DELETE", "/collections/items_v2")
    client.drop_alias("items")
    with pytest.raises(sieve.NotFound):
        client.drop_alias("items")
    assert client.aliases() == {}
