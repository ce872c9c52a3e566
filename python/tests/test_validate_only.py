"""Collection.ingest(validate_only=True): refuses what the ingest would refuse and writes
nothing (sieve.ray checks every shard's part this way before writing any)."""

import numpy as np
import pytest

import sieve


def test_validate_only_writes_nothing(db):
    c = db.create_collection("c", 3, attributes={"cat": "int"})
    c.ingest(np.ones((2, 3), np.float32), {"cat": [1, 2]}, ids=[1, 2])
    v = np.arange(9, dtype=np.float32).reshape(3, 3) + 1
    with pytest.raises(sieve.InvalidArgument, match="row 1: id 2 already exists"):
        c.ingest(v, ids=[5, 2, 6], validate_only=True)
    with pytest.raises(sieve.InvalidArgument, match="row 2, attribute 'cat'"):
        c.ingest(v, {"cat": [1, 2, "x"]}, ids=[5, 6, 7], validate_only=True)
    r = c.ingest(v, {"cat": [1, 2, 3]}, ids=[5, 6, 7], validate_only=True)
    assert (r.ingested, r.rows) == (0, 2)
    assert c.ingest(v, ids=[5, 2, 6], upsert=True, validate_only=True).ingested == 0
    assert c.stats()["total_rows"] == 2 and c.get([5, 6, 7]) == [None] * 3
    assert c.ingest(v, {"cat": [1, 2, 3]}, ids=[5, 6, 7]).ingested == 3
