"""Attributes from a dict of columns, pandas and pyarrow, with nulls, checked through filters
(the engine's own view of what was stored)."""

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import sieve

SCHEMA = {"i": "int", "f": "float", "s": "string", "b": "bool", "t": "tags"}
I = [1, None, 3, -4, 2**62, None, 7, 0]
F = [0.5, 1.5, None, -2.25, 1e300, 3.0, None, 0.0]
S = ["red", None, "blue", "", "red", "grün", None, "it's"]
B = [True, False, None, True, None, False, True, False]
T = [["a", "b"], None, [], ["b"], ["a"], None, ["c", "a"], ["it's"]]
N = len(I)
IDS = np.arange(100, 100 + N)


def values(col):
    return {"i": I, "f": F, "s": S, "b": B, "t": T}[col]


def expected(pred):
    return {int(IDS[r]) for r in range(N) if pred(r)}


CHECKS = [
    ("i IS NULL", lambda r: I[r] is None),
    ("i = 3", lambda r: I[r] == 3),
    ("i = 4611686018427387904", lambda r: I[r] == 2**62),
    ("i < 1", lambda r: I[r] is not None and I[r] < 1),
    ("f IS NULL", lambda r: F[r] is None),
    ("f = -2.25", lambda r: F[r] == -2.25),
    ("f > 1", lambda r: F[r] is not None and F[r] > 1),
    ("s IS NULL", lambda r: S[r] is None),
    ("s = 'red'", lambda r: S[r] == "red"),
    ("s = ''", lambda r: S[r] == ""),
    ("s = 'grün'", lambda r: S[r] == "grün"),
    ("s = 'it''s'", lambda r: S[r] == "it's"),
    ("b IS NULL", lambda r: B[r] is None),
    ("b = true", lambda r: B[r] is True),
    ("b = false", lambda r: B[r] is False),
    ("t IS NULL", lambda r: T[r] is None),
    ("t CONTAINS 'a'", lambda r: T[r] is not None and "a" in T[r]),
    ("t CONTAINS 'it''s'", lambda r: T[r] is not None and "it's" in T[r]),
]


def passing(coll, flt):
    res = coll.search(np.zeros(coll.dim, np.float32), k=N, filter=flt)
    return set(res.ids[0, : res.counts[0]].tolist())


def check_stored(coll, skip=()):
    for flt, pred in CHECKS:
        if flt.split()[0] in skip:
            continue
        assert passing(coll, flt) == expected(pred), flt


def vectors():
    return np.arange(N * 2, dtype=np.float32).reshape(N, 2)


@pytest.fixture
def coll(db):
    return db.create_collection("attrs", 2, attributes=SCHEMA)


def test_dict_of_lists(coll):
    coll.ingest(vectors(), attributes={c: values(c) for c in SCHEMA}, ids=IDS)
    check_stored(coll)


def test_dict_of_numpy_and_masked_arrays(coll):
    ints = np.ma.masked_array([0 if v is None else v for v in I], mask=[v is None for v in I],
                              dtype=np.int64)
    floats = np.ma.masked_array([0.0 if v is None else v for v in F],
                                mask=[v is None for v in F])
    bools = np.ma.masked_array([bool(v) for v in B], mask=[v is None for v in B])
    strings = np.array(S, dtype=object)
    coll.ingest(vectors(), attributes={"i": ints, "f": floats, "s": strings, "b": bools,
                                       "t": T}, ids=IDS)
    check_stored(coll)


def test_pandas_nullable_and_nan(coll):
    df = pd.DataFrame({
        "i": pd.array(I, dtype="Int64"),
        "f": [np.nan if v is None else v for v in F],  # float64 with NaN for null
        "s": S,
        "b": pd.array(B, dtype="boolean"),
        "t": pd.Series(T, dtype=object),
    })
    assert df["f"].dtype == np.float64
    coll.ingest(vectors(), attributes=df, ids=IDS)
    check_stored(coll)


def test_pandas_string_category_and_plain_numpy_dtypes(coll):
    df = pd.DataFrame({
        "s": pd.Series(S, dtype="string"),
        "b": pd.Series(S, dtype="category").notna(),  # plain bool column
        "i": pd.Series([0 if v is None else v for v in I], dtype=np.int64),
    })
    coll.ingest(vectors(), attributes=df, ids=IDS)
    check_stored(coll, skip=("b", "i", "f", "t"))
    assert passing(coll, "b = true") == expected(lambda r: S[r] is not None)
    assert passing(coll, "f IS NULL") == set(IDS.tolist())  # not given: null everywhere
    assert passing(coll, "i IS NULL") == set()


def test_pandas_category(db):
    c = db.create_collection("cat", 2, attributes={"s": "string"})
    c.ingest(vectors(), attributes=pd.DataFrame({"s": pd.Categorical(S)}), ids=IDS)
    check_stored(c, skip=("i", "f", "b", "t"))


def test_pyarrow_table_with_nulls(coll):
    table = pa.table({
        "i": pa.array(I, type=pa.int64()),
        "f": pa.array(F, type=pa.float64()),
        "s": pa.array(S, type=pa.string()),
        "b": pa.array(B, type=pa.bool_()),
        "t": pa.array(T, type=pa.list_(pa.string())),
    })
    coll.ingest(vectors(), attributes=table, ids=IDS)
    check_stored(coll)


def test_pyarrow_chunked_sliced_dictionary_and_large_string(coll):
    s_chunks = pa.chunked_array([pa.array(S[:3], type=pa.large_string()),
                                 pa.array(S[3:], type=pa.large_string())])
    i_full = pa.array([99] + I, type=pa.int64()).slice(1)  # an offset into its buffers
    table = pa.table({
        "i": i_full,
        "s": s_chunks,
        "b": pa.array(B).slice(0),
        "f": pa.chunked_array([pa.array(F[:5]), pa.array(F[5:])]),
        "t": pa.array(T),
    })
    coll.ingest(vectors(), attributes=table, ids=IDS)
    check_stored(coll)
    d = coll._db.create_collection("dict", 2, attributes={"s": "string"})
    d.ingest(vectors(), attributes=pa.table({"s": pa.array(S).dictionary_encode()}), ids=IDS)
    check_stored(d, skip=("i", "f", "b", "t"))


def test_an_int_column_for_a_float_attribute_converts(db):
    c = db.create_collection("conv", 2, attributes={"f": "float"})
    c.ingest(vectors(), attributes={"f": np.arange(N)}, ids=IDS)
    assert passing(c, "f = 3.0") == {103}


def test_bad_attributes_are_the_engines_errors(coll):
    with pytest.raises(sieve.InvalidArgument, match="unknown attribute 'colour'"):
        coll.ingest(vectors(), attributes={"colour": S})
    with pytest.raises(sieve.InvalidArgument, match="row 0, attribute 'i': expected int"):
        coll.ingest(vectors(), attributes={"i": S})
    # NaN is null (docs/python.md#attributes); an infinity is no number a float attribute takes.
    with pytest.raises(sieve.InvalidArgument, match="attribute 'f': .*finite"):
        coll.ingest(vectors(), attributes={"f": np.full(N, np.inf)})
    with pytest.raises(sieve.InvalidArgument, match="has 3 values for 8 vectors"):
        coll.ingest(vectors(), attributes={"s": S[:3]})
    with pytest.raises(sieve.InvalidArgument, match="tags must be strings"):
        coll.ingest(vectors(), attributes={"t": [[1]] * N})
    with pytest.raises(sieve.InvalidArgument, match="int64 range"):
        coll.ingest(vectors(), attributes={"i": [2**63] * N})
    with pytest.raises(sieve.InvalidArgument, match="dict of columns"):
        coll.ingest(vectors(), attributes=[1, 2])
    assert len(coll) == 0  # nothing was written
