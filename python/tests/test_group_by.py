"""Grouped search (group_by) from Python, embedded and over HTTP: the groups against a numpy
float64 oracle, tags multi-membership, include, the plan, and the rules' errors."""

from __future__ import annotations

import numpy as np
import pytest

import sieve


def _oracle(vectors, values, query, k, size):
    d = ((vectors.astype(np.float64) - query.astype(np.float64)) ** 2).sum(axis=1)
    groups = {}
    for i, vs in enumerate(values):
        for v in vs:
            groups.setdefault(v, []).append((d[i], i))
    ranked = sorted((sorted(rows), v) for v, rows in groups.items())
    ranked.sort(key=lambda g: (g[0][0], g[1]))
    return [(v, [i for _, i in rows[:size]]) for rows, v in ranked[:k]]


@pytest.fixture
def coll(tmp_path):
    db = sieve.open(str(tmp_path / "db"))
    c = db.create_collection("c", dim=8, attributes={"brand": "string", "t": "tags",
                                                      "x": "float"})
    rng = np.random.default_rng(3)
    vectors = rng.standard_normal((300, 8)).astype(np.float32)
    attrs = [{"brand": None if i % 17 == 3 else "b%d" % (i % 9),
              "t": ["t%d" % (i % 4), "t%d" % (i % 5)], "x": 1.0} for i in range(300)]
    c.ingest(vectors, attributes={name: [a[name] for a in attrs] for name in ("brand", "t", "x")},
             ids=np.arange(300))
    yield c, vectors, attrs
    db.close()


def test_groups_match_the_oracle(coll):
    c, vectors, attrs = coll
    q = np.random.default_rng(4).standard_normal((2, 8)).astype(np.float32)
    for strategy in ("auto", "few_groups", "many_groups"):
        res = c.search(q, k=4, group_by="brand", group_size=3, group_strategy=strategy,
                       explain=True)
        assert isinstance(res, sieve.GroupedResult)
        assert len(res) == 2
        if strategy != "auto":
            assert res.plan["group"]["strategy"] == strategy
        values = [[a["brand"]] if a["brand"] is not None else [] for a in attrs]
        for i in range(2):
            got = [(g.value, g.ids.tolist()) for g in res[i]]
            assert got == _oracle(vectors, values, q[i], 4, 3)
            assert all(g.distances.dtype == np.float32 for g in res[i])


def test_tags_rows_join_each_group_and_include(coll):
    c, vectors, attrs = coll
    q = np.random.default_rng(5).standard_normal((1, 8)).astype(np.float32)
    res = c.search(q, k=3, group_by="t", group_size=2, include=["brand"])
    values = [sorted(set(a["t"])) for a in attrs]
    assert [(g.value, g.ids.tolist()) for g in res[0]] == _oracle(vectors, values, q[0], 3, 2)
    for g in res[0]:
        assert [r["id"] for r in g.rows] == g.ids.tolist()
        assert all(r["brand"] == attrs[r["id"]]["brand"] for r in g.rows)


def test_rules(coll):
    c, _, _ = coll
    q = np.zeros((1, 8), dtype=np.float32)
    with pytest.raises(sieve.InvalidArgument, match="'x' is float"):
        c.search(q, k=2, group_by="x")
    with pytest.raises(sieve.InvalidArgument, match="group_size must be within"):
        c.search(q, k=2, group_by="brand", group_size=0)
    with pytest.raises(sieve.InvalidArgument, match="group strategy"):
        c.search(q, k=2, group_by="brand", group_strategy="some")
    with pytest.raises(TypeError, match="group_size"):
        c.search(q, k=2, group_by="brand", group_size=1.5)


def test_http_client_gives_the_embedded_groups(coll, server):
    c, vectors, attrs = coll
    remote = sieve.Client(server.url).create_collection(
        "c", 8, attributes={"brand": "string", "t": "tags", "x": "float"})
    remote.ingest(vectors, attributes={n: [a[n] for a in attrs] for n in ("brand", "t", "x")},
                  ids=np.arange(300))
    q = np.random.default_rng(6).standard_normal((2, 8)).astype(np.float32)
    for by in ("brand", "t"):
        want = c.search(q, k=3, group_by=by, group_size=2, include="brand")
        got = remote.search(q, k=3, group_by=by, group_size=2, include="brand", explain=True)
        assert isinstance(got, sieve.GroupedResult)
        assert got.plan["group"]["field"] == by
        for i in range(2):
            assert [(g.value, g.ids.tolist()) for g in got[i]] == \
                [(g.value, g.ids.tolist()) for g in want[i]]
            assert [g.rows for g in got[i]] == [g.rows for g in want[i]]
            for a, b in zip(got[i], want[i]):
                np.testing.assert_allclose(a.distances, b.distances, rtol=1e-6)
    with pytest.raises(sieve.InvalidArgument, match="no attribute 'nope'"):
        remote.search(q, k=3, group_by="nope")
