"""Range search (radius, limit) and pages (offset, after), embedded and over HTTP, against a
float64 oracle: rows on the radius, the limit, per-query filters, include, pages through exact
ties by offset and by cursor, writes between pages under a snapshot, and argument errors."""

import numpy as np
import pytest

import sieve
from conftest import Server

DIM = 6


@pytest.fixture(params=["embedded", "http"])
def store(request, tmp_path):
    if request.param == "embedded":
        db = sieve.open(tmp_path / "db")
        yield db
        db.close()
    else:
        server = Server(tmp_path / "served")
        yield sieve.Client(server.url)
        server.stop()


def make(store, metric, n=600, distinct=40, seed=0):
    """Rows of `distinct` small-integer vectors, each repeated (exact ties), cat = id % 4."""
    rng = np.random.default_rng(seed)
    base = np.round(rng.uniform(-3, 3, (distinct, DIM))).astype(np.float32)
    base[:, 0] += 4  # no zero vector (cosine)
    rows = base[np.arange(n) % distinct]
    ids = np.arange(n, dtype=np.int64)[::-1].copy()  # ids fall as rows are stored
    coll = store.create_collection("c", DIM, metric=metric, attributes={"cat": "int"})
    coll.ingest(rows, attributes={"cat": ids % 4}, ids=ids)
    queries = np.round(rng.uniform(-3, 3, (3, DIM))).astype(np.float32)
    return coll, rows, ids, queries


def order(rows, ids, q, metric, mask=None):
    """(ids, float64 distances) of the passing rows in exact (distance, id) order."""
    x = rows.astype(np.float64)
    qq = q.astype(np.float64)
    if metric == "l2":
        d = ((x - qq) ** 2).sum(1)
    elif metric == "ip":
        d = x @ qq
    else:
        d = 1 - (x @ qq) / (np.linalg.norm(x, axis=1) * np.linalg.norm(qq))
    keep = np.ones(len(ids), bool) if mask is None else mask
    d, i = d[keep], ids[keep]
    key = -d if metric == "ip" else d
    o = np.lexsort((i, key))
    return i[o], d[o]


@pytest.mark.parametrize("metric", ["l2", "ip", "cosine"])
def test_range_equals_the_oracle(store, metric):
    coll, rows, ids, queries = make(store, metric)
    filters = ["cat = 1", None, "cat != 2"]
    masks = [ids % 4 == 1, None, ids % 4 != 2]
    want = [order(rows, ids, queries[i], metric, masks[i]) for i in range(3)]
    # The radius is query 0's 50th distance: rows tied with it, exactly on it, are in.
    r = float(want[0][1][49])
    res = coll.search(queries, filters=filters, radius=r, limit=100000, include="cat")
    assert res.limit_reached == [False, False, False]
    for i in range(3):
        wi, wd = want[i]
        inside = (wd >= r) if metric == "ip" else (wd <= r)
        n = int(inside.sum())
        assert res.counts[i] == n
        got_ids, got_d = res.neighbors(i)
        np.testing.assert_array_equal(got_ids, wi[:n])
        np.testing.assert_array_equal(got_d, wd[:n].astype(np.float32))
        assert [row["cat"] for row in res.rows[i]] == list(wi[:n] % 4)
    # The limit: reached inside query 0's tie group.
    res = coll.search(queries[:1], filter="cat = 1", radius=r, limit=20)
    assert res.limit_reached == [True]
    np.testing.assert_array_equal(res.neighbors(0)[0], want[0][0][:20])
    # A radius no row passes: empty results, arrays of width 0.
    best = float(order(rows, ids, queries[0], metric)[1][0])
    far = best + (1 if metric == "ip" else -1)
    res = coll.search(queries[:1], radius=far)
    assert res.counts[0] == 0 and res.limit_reached == [False]


@pytest.mark.parametrize("metric", ["l2", "ip"])
def test_pages_by_offset_and_cursor_equal_one_exact_search(store, metric):
    coll, rows, ids, queries = make(store, metric, n=500, distinct=5)  # 100-row tie groups
    want = order(rows, ids, queries[0], metric)[0]
    k = 9
    got_offset, got_cursor = [], []
    after = ""  # the first page, with a cursor
    for page in range(len(want) // k + 1):
        res = coll.search(queries[:1], k=k, offset=page * k)
        got_offset.extend(res.neighbors(0)[0])
        res = coll.search(queries[:1], k=k, after=after)
        got_cursor.extend(res.neighbors(0)[0])
        after = res.next[0]
        if after is None:
            break
    assert after is None
    np.testing.assert_array_equal(got_offset, want)
    np.testing.assert_array_equal(got_cursor, want)


def test_writes_between_pages_under_a_snapshot_change_nothing(store):
    coll, rows, ids, queries = make(store, "l2", n=300, distinct=30)
    want = order(rows, ids, queries[0], "l2")[0]
    snap = store.snapshot()
    got, after = [], ""
    while True:
        res = coll.search(queries[:1], k=25, after=after, snapshot=snap)
        got.extend(res.neighbors(0)[0])
        after = res.next[0]
        if after is None:
            break
        # Rows equal to the query (they would come first) and deletes of rows still to come.
        coll.ingest(np.repeat(queries[:1], 3, axis=0), attributes={"cat": [0, 0, 0]},
                    ids=np.arange(3) + 10000 + len(got))
        coll.delete(ids=want[len(got) + 1:len(got) + 3])
    snap.release()
    np.testing.assert_array_equal(got, want)


def test_argument_errors(store):
    coll, rows, ids, queries = make(store, "l2", n=50, distinct=50)
    with pytest.raises(sieve.InvalidArgument, match="not a cursor"):
        coll.search(queries[:1], after="c1.nope")
    # The server refuses the combination by its keys, in its own words.
    with pytest.raises(sieve.InvalidArgument, match="not both|not two"):
        coll.search(queries[:1], offset=0, after=[None])
    with pytest.raises(sieve.InvalidArgument, match="offset must be"):
        coll.search(queries[:1], offset=-1)
    with pytest.raises(sieve.InvalidArgument, match="takes no offset|not two"):
        coll.search(queries[:1], radius=1.0, offset=3)
    with pytest.raises(sieve.InvalidArgument, match="limit must be"):
        coll.search(queries[:1], radius=1.0, limit=0)
    with pytest.raises(sieve.InvalidArgument, match="cursors for"):
        coll.search(queries[:2], after=[None])
    with pytest.raises(TypeError, match="radius"):
        coll.search(queries[:1], radius="1")
    with pytest.raises(TypeError, match="offset"):
        coll.search(queries[:1], offset=1.5)
