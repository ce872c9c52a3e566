"""Collection.ingest(validate_only=True): refuses what the ingest would refuse and writes
nothing (sieve.ray checks every shard's part this way before writing any); sieve.open's device
options (cpu_executors standing in for devices)."""

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


def test_open_takes_the_device_options(tmp_path):
    rng = np.random.default_rng(0)
    v = rng.standard_normal((600, 4)).astype(np.float32)
    q = rng.standard_normal((3, 4)).astype(np.float32)
    with sieve.open(tmp_path / "three", cpu_executors=3) as d, sieve.open(tmp_path / "one") as o:
        three, one = (x.create_collection("c", 4, shards=6) for x in (d, o))
        three.ingest(v)
        one.ingest(v)
        a = three.search(q, 9, device="cpu", explain=True)
        b = one.search(q, 9, device="cpu", explain=True)
        assert (a.ids == b.ids).all() and (a.distances == b.distances).all()
        assert [x["device"] for x in a.plan["devices"]] == ["cpu0", "cpu1", "cpu2"]
        assert [x["device"] for x in b.plan["devices"]] == ["cpu0"]
    for bad in ({"cpu_executors": 0}, {"devices": [-1]}, {"device_memory_bytes": -5}):
        with pytest.raises(sieve.InvalidArgument):
            sieve.open(tmp_path / "bad", **bad)


def test_open_takes_the_first_use_calibration(tmp_path):
    # Without a GPU nothing is calibrated; the modes and the limit are checked at open.
    for mode in ("unknown", "off", "always"):
        with sieve.open(tmp_path / mode, first_use_calibration=mode,
                        first_use_calibration_s=5) as d:
            c = d.create_collection("c", 2)
            c.ingest(np.eye(2, dtype=np.float32))
            assert c.search(np.eye(2, dtype=np.float32), 1).ids.tolist() == [[0], [1]]
    for bad in ({"first_use_calibration": "sometimes"}, {"first_use_calibration_s": -1},
                {"first_use_calibration_s": float("inf")}, {"first_use_calibration_s": float("nan")}):
        with pytest.raises(sieve.InvalidArgument, match="first_use_calibration"):
            sieve.open(tmp_path / "bad", **bad)
