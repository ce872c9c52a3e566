"""Every engine status code is its own exception class under sieve.Error, carrying the engine's
message; the ones user input can reach are raised by real calls."""

import os

import numpy as np
import pytest

import sieve
from sieve import _sieve

# sieve::Status::Code → class (include/sieve/status.h).
CODES = {
    1: sieve.NotFound,
    2: sieve.Corruption,
    3: sieve.NotSupported,
    4: sieve.InvalidArgument,
    5: sieve.IOError,
    6: sieve.AlreadyExists,
    7: sieve.ResourceExhausted,
    8: sieve.Unavailable,
    9: sieve.Internal,
}


@pytest.mark.parametrize("code,cls", sorted(CODES.items()))
def test_every_status_code_has_its_class(code, cls):
    with pytest.raises(cls) as e:
        _sieve._raise_status(code, "the engine's message %d" % code)
    assert str(e.value) == "the engine's message %d" % code
    assert isinstance(e.value, sieve.Error) and type(e.value) is cls
    assert e.value.code == cls.__name__
    others = [c for c in CODES.values() if c is not cls]
    assert not any(isinstance(e.value, c) for c in others)


def test_python_bases():
    assert issubclass(sieve.InvalidArgument, ValueError)
    assert issubclass(sieve.NotFound, LookupError)
    assert issubclass(sieve.IOError, OSError)
    assert issubclass(sieve.Unauthorized, PermissionError)


def test_invalid_argument(db):
    c = db.create_collection("c", 4, attributes={"a": "int", "s": "string"})
    c.ingest(np.ones((3, 4), np.float32), ids=[1, 2, 3])
    q = np.ones((1, 4), np.float32)
    cases = [
        (lambda: c.search(q, k=0), "k must be at least 1, got 0"),
        (lambda: c.search(q, k=1, filter="a = "), "filter: at position"),
        (lambda: c.search(q, k=1, filter="s < 3"), "position"),
        (lambda: c.search(q, k=1, filter="nope = 1"), "nope"),
        (lambda: c.search(np.ones((1, 3), np.float32), k=1), "3 components.*dim 4"),
        (lambda: c.search(q, k=1, filters=["a = 1", "a = 2"]), "2 filters for 1 queries"),
        (lambda: c.search(q, k=1, filter="a = 1", filters=["a = 1"]), "not both"),
        (lambda: c.search(q, k=1, device="tpu"), "tpu"),
        (lambda: c.search(q, k=1, path="fast"), "fast"),
        (lambda: c.search(np.full((1, 4), np.nan, np.float32), k=1), "query 0: component 0 is NaN"),
        (lambda: c.ingest(np.ones((1, 4), np.float32), ids=[2]), "id 2 already exists"),
        (lambda: c.ingest(np.ones((2, 4), np.float32), ids=[7, 7]), "repeats row 0"),
        (lambda: c.ingest(np.ones((2, 4), np.float32), ids=[7]), "1 ids for 2 vectors"),
        (lambda: c.ingest(np.array([[1, 2, np.inf, 4]], np.float32)), "row 0, component 2"),
        (lambda: c.ingest(np.ones((2, 5), np.float32)), "5 components"),
        (lambda: c.ingest(np.ones((2, 4, 1), np.float32)), "2-D"),
        (lambda: c.ingest([["x"] * 4]), "numbers"),
        (lambda: c.delete(), "exactly one of ids or filter"),
        (lambda: c.delete(filter=""), "filter is empty"),
        (lambda: db.create_collection("bad name!", 4), "name"),
        (lambda: db.create_collection("d0", 0), "dim"),
        (lambda: db.create_collection("m", 4, metric="hamming"), "hamming"),
        (lambda: db.create_collection("t", 4, attributes={"a": "date"}), "attribute 'a'"),
    ]
    for call, message in cases:
        with pytest.raises(sieve.InvalidArgument, match=message):
            call()
    assert len(c) == 3


def test_not_found(db, tmp_path):
    with pytest.raises(sieve.NotFound, match="no collection named 'nope'"):
        db["nope"]
    with pytest.raises(sieve.NotFound, match="no Sieve database"):
        sieve.open(tmp_path / "missing", create=False)
    assert not (tmp_path / "missing").exists()


def test_already_exists(db):
    db.create_collection("c", 2)
    with pytest.raises(sieve.AlreadyExists, match="'c'"):
        db.create_collection("c", 2)


def test_io_error_when_locked_or_unusable(tmp_path):
    path = tmp_path / "locked"
    with sieve.open(path):
        with pytest.raises(sieve.IOError, match="in use"):
            sieve.open(path)
    with pytest.raises(sieve.IOError):
        sieve.open("/proc/no/such/db")


def test_corruption(tmp_path):
    path = tmp_path / "broken"
    with sieve.open(path) as db:
        db.create_collection("c", 2).ingest(np.ones((3, 2), np.float32))
        assert db.check() == [] or all(isinstance(x, str) for x in db.check())
    with open(os.path.join(path, "CURRENT"), "w") as f:
        f.write("garbage")
    with pytest.raises(sieve.Corruption, match="CURRENT"):
        sieve.open(path)


def test_unavailable_without_a_gpu(db):
    c = db.create_collection("c", 2)
    c.ingest(np.ones((3, 2), np.float32))
    if "gpu" in db.planner_thresholds("auto")["device"]:
        pytest.skip("this machine has a usable GPU")
    with pytest.raises(sieve.Unavailable, match="gpu"):
        c.search(np.ones(2, np.float32), k=1, device="gpu")
    with pytest.raises(sieve.Unavailable):
        db.planner_thresholds("gpu")


def test_closed_database(tmp_path):
    db = sieve.open(tmp_path / "d")
    c = db.create_collection("c", 2)
    db.close()
    db.close()  # twice is fine
    with pytest.raises(sieve.InvalidArgument, match="closed"):
        c.search(np.ones(2, np.float32), k=1)
    with pytest.raises(sieve.InvalidArgument, match="closed"):
        db.collections()
    with sieve.open(tmp_path / "d") as again:  # the lock was released
        assert again.collections() == ["c"]


def test_read_only_open_refuses_writes_with_not_supported(tmp_path):
    path = tmp_path / "ro"
    with pytest.raises(sieve.NotFound):
        sieve.open(path, read_only=True)
    with sieve.open(path) as db:
        db.create_collection("c", 2).ingest(np.eye(2, dtype=np.float32), ids=[4, 5])
    with sieve.open(path, read_only=True) as db:
        c = db["c"]
        assert list(c.search(np.array([0, 1], np.float32), k=1).ids[0]) == [5]
        with pytest.raises(sieve.NotSupported):
            c.ingest(np.eye(2, dtype=np.float32))  # refused as read-only before anything else
        with pytest.raises(sieve.NotSupported):
            db.create_collection("d", 2)
        assert len(c) == 2


def test_blank_filters_negative_ids_and_a_second_open(db, tmp_path):
    # Issue 32 item 8 a, b, e: the engine's rules, passed on.
    c = db.create_collection("bl", 4, attributes={"a": "int"})
    c.ingest(np.eye(4, dtype=np.float32), attributes={"a": [0, 1, 2, 3]})
    for blank in ("", "  ", "\t\n"):
        with pytest.raises(sieve.InvalidArgument, match="update: the filter is empty"):
            c.update({"a": 9}, filter=blank)
        with pytest.raises(sieve.InvalidArgument, match="delete: the filter is empty"):
            c.delete(filter=blank)
    assert c.count("a = 9") == 0 and len(c) == 4
    with pytest.raises(sieve.InvalidArgument, match="row 1: id -1 is negative"):
        c.ingest(np.ones((2, 4), np.float32), ids=[10, -1])
    with pytest.raises(sieve.InvalidArgument, match="row 0: id -7 is negative"):
        c.upsert(np.ones((1, 4), np.float32), ids=[-7])
    assert len(c) == 4
    with pytest.raises(sieve.IOError, match="already open in this process") as e:
        sieve.open(tmp_path / "db")
    assert "another process" not in str(e.value)


def test_search_k_and_include_types(db):
    # Issue 32 item 8d: k is an int (never truncated); include is a string or a list of names.
    c = db.create_collection("kt", 4, attributes={"a": "int", "s": "string"})
    c.ingest(np.eye(4, dtype=np.float32),
             attributes={"a": [0, 1, 2, 3], "s": ["x0", "x1", "x2", "x3"]})
    q = np.eye(4, dtype=np.float32)[:1]
    for bad in ("5", 5.7, 5.0, True, False, None, [5]):
        with pytest.raises(TypeError, match="k must be an int"):
            c.search(q, k=bad)
    assert c.search(q, k=np.int64(2)).ids.shape == (1, 2)
    as_list = c.search(q, k=2, include=["a", "s"])
    as_text = c.search(q, k=2, include="a,s")
    assert as_list.rows == as_text.rows
    assert as_list.rows[0][0] == {"id": 0, "a": 0, "s": "x0"}
    assert c.get([1], include=["s"]) == c.get([1], include="s") == [{"id": 1, "s": "x1"}]
    assert list(c.scan(include=("a",))) == [{"id": i, "a": i} for i in range(4)]
    with pytest.raises(TypeError, match="include must be"):
        c.search(q, k=2, include=3)
    with pytest.raises(TypeError, match="include must be"):
        c.search(q, k=2, include=["a", 3])
