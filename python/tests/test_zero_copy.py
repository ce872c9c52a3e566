"""C-contiguous float32 vectors and queries reach the engine where numpy keeps them: the
address the engine was handed (RowBatch::vectors, SearchRequest::queries, recorded by the
module) is the array's own, and numpy allocates nothing the size of the data. Other inputs are
converted, and the same probe sees a different address."""

import tracemalloc

import numpy as np

from sieve import _sieve


def address(a):
    return a.__array_interface__["data"][0]


def test_float32_vectors_and_queries_are_not_copied(db):
    c = db.create_collection("c", 16)
    v = np.random.default_rng(1).standard_normal((2000, 16)).astype(np.float32)
    c.ingest(v)
    assert _sieve._last_input_pointers()["ingest_vectors"] == address(v)
    q = v[100:104]  # a C-contiguous view into v
    res = c.search(q, k=3)
    assert _sieve._last_input_pointers()["search_queries"] == address(q) == address(v) + 6400
    assert list(res.ids[:, 0]) == [100, 101, 102, 103]


def test_read_only_and_memory_mapped_arrays_are_not_copied(db, tmp_path):
    c = db.create_collection("c", 8)
    path = tmp_path / "v.npy"
    np.save(path, np.arange(800, dtype=np.float32).reshape(100, 8))
    m = np.load(path, mmap_mode="r")
    assert not m.flags.writeable
    c.ingest(m)
    assert _sieve._last_input_pointers()["ingest_vectors"] == address(m)


def test_other_inputs_are_converted_first(db):
    c = db.create_collection("c", 4)
    f64 = np.ones((10, 4))
    c.ingest(f64)
    assert _sieve._last_input_pointers()["ingest_vectors"] != address(f64)
    strided = np.ones((10, 8), np.float32)[:, ::2]
    assert not strided.flags.c_contiguous
    c.ingest(strided, auto_ids=True)
    assert _sieve._last_input_pointers()["ingest_vectors"] != address(strided)
    f16 = np.ones((10, 4), np.float16)  # widened to float32 for the engine
    c.ingest(f16, auto_ids=True)
    assert _sieve._last_input_pointers()["ingest_vectors"] != address(f16)
    assert len(c) == 30


def test_no_numpy_allocation_of_the_data_size(db):
    c = db.create_collection("c", 64)
    v = np.random.default_rng(2).standard_normal((50_000, 64)).astype(np.float32)  # 12.8 MB
    ids = np.arange(50_000, dtype=np.int64)
    q = v[:256].copy()
    tracemalloc.start()
    try:
        c.ingest(v, ids=ids)
        ingest_peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.reset_peak()
        res = c.search(q, k=10)
        search_peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.reset_peak()
        c.ingest(v[:, :].astype(np.float64), ids=ids + 50_000)  # a conversion: caught
        converted_peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert ingest_peak < v.nbytes / 20, ingest_peak
    # The result arrays are numpy's own memory (made through its C API), so the probe sees them.
    result_bytes = res.ids.nbytes + res.distances.nbytes + res.counts.nbytes
    assert search_peak - result_bytes < q.nbytes / 4, (search_peak, result_bytes)
    assert converted_peak > v.nbytes  # the probe sees copies when there are some


def test_engine_time_of_the_last_call_is_recorded(db):
    import time

    c = db.create_collection("t", 8)
    c.ingest(np.ones((1000, 8), np.float32))
    t0 = time.perf_counter()
    c.search(np.ones((4, 8), np.float32), k=5)
    wall = time.perf_counter() - t0
    engine = _sieve._last_engine_seconds()
    assert 0 < engine <= wall
