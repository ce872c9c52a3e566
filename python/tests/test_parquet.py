"""Arrow and Parquet in: Collection.ingest_arrow (tables, record batches, streams) and
Collection.ingest_parquet, float32 vectors without a copy, errors that name the column and the
row, and bad input that changes nothing; the CLI's `ingest --vectors FILE.parquet:COLUMN` and
`export --format parquet` on files pyarrow writes with and without its Arrow schema."""

import json
import subprocess

import numpy as np
import pytest

import sieve
from sieve import _sieve

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from conftest import sieve_cli  # noqa: E402

DIM = 8
ATTRS = {"color": "string", "price": "float", "n": "int", "tags": "tags"}


def make_table(n=1000, seed=0, vector_type="fixed"):
    rng = np.random.default_rng(seed)
    v = rng.standard_normal((n, DIM)).astype(np.float32)
    if vector_type == "fixed":
        emb = pa.FixedSizeListArray.from_arrays(pa.array(v.ravel()), DIM)
    else:
        offsets = pa.array(np.arange(0, (n + 1) * DIM, DIM, dtype=np.int32))
        emb = pa.ListArray.from_arrays(offsets, pa.array(v.ravel()))
    table = pa.table({
        "id": pa.array(np.arange(n, dtype=np.int64) * 3),
        "embedding": emb,
        "color": pa.array([["red", "blue", None][i % 3] for i in range(n)]),
        "price": pa.array([None if i % 7 == 0 else i / 4 for i in range(n)], pa.float64()),
        "n": pa.array(np.arange(n) % 5, pa.int32()),
        "tags": pa.array([["t%d" % (i % 3)] for i in range(n)]),
    })
    return table, v


def address(a):
    return a.__array_interface__["data"][0]


def test_ingest_parquet_reads_every_column_in_batches(db, tmp_path):
    table, v = make_table()
    path = tmp_path / "rows.parquet"
    pq.write_table(table, path, row_group_size=128)
    c = db.create_collection("c", DIM, attributes=ATTRS)
    r = c.ingest_parquet(path, vector_column="embedding", id_column="id", batch_rows=300)
    assert r == sieve.IngestResult(1000, 1000, 0)
    assert c.count("color = 'red'") == 334
    assert c.count("price IS NULL") == 143
    assert c.count("tags CONTAINS 't1' AND n = 4") == 67
    row = c.get([30], include="*,vector")[0]
    assert (row["color"], row["price"], row["n"], row["tags"]) == ("blue", 2.5, 0, ["t1"])
    np.testing.assert_array_equal(row["vector"], v[10])
    res = c.search(v[5], k=1)
    assert res.ids[0, 0] == 15


def test_ingest_parquet_columns_and_files_written_without_the_arrow_schema(db, tmp_path):
    table, v = make_table(200)
    path = tmp_path / "plain.parquet"
    # What writers other than Arrow's produce: no Arrow schema (the fixed_size_list reads back
    # as list<float>), no dictionaries, data pages v2, zstd.
    pq.write_table(table, path, store_schema=False, use_dictionary=False,
                   data_page_version="2.0", compression="zstd", row_group_size=64)
    c = db.create_collection("c", DIM, attributes=ATTRS)
    c.ingest_parquet(path, vector_column="embedding", columns=["n"], batch_rows=50)
    assert c.count("n = 2") == 40
    assert c.count("color IS NULL") == 200  # not taken
    np.testing.assert_array_equal(c.get([199], include="vector")[0]["vector"], v[199])


def test_float32_vectors_of_a_table_are_not_copied(db):
    table, v = make_table(500)
    c = db.create_collection("c", DIM, attributes=ATTRS)
    emb = table.column("embedding").chunk(0)
    c.ingest_arrow(table, "embedding", "id")
    assert _sieve._last_input_pointers()["ingest_vectors"] == emb.values.buffers()[1].address
    # A slice is a view too: the engine reads from the slice's first row.
    c2 = db.create_collection("c2", DIM, attributes=ATTRS)
    c2.ingest_arrow(table.slice(100, 50), "embedding", "id")
    assert (_sieve._last_input_pointers()["ingest_vectors"]
            == emb.values.buffers()[1].address + 100 * DIM * 4)
    assert c2.get([300], include="vector")[0]["vector"].tolist() == v[100].tolist()
    # list<float> whose rows are contiguous, as Hugging Face datasets store embeddings.
    listed, _ = make_table(500, vector_type="list")
    c3 = db.create_collection("c3", DIM, attributes=ATTRS)
    c3.ingest_arrow(listed, "embedding", "id")
    assert (_sieve._last_input_pointers()["ingest_vectors"]
            == listed.column("embedding").chunk(0).values.buffers()[1].address)
    # ingest() takes a vector column too, with the other columns as attributes.
    c5 = db.create_collection("c5", DIM, attributes=ATTRS)
    c5.ingest(emb, attributes=table.select(["color", "n"]), ids=table.column("id"))
    assert _sieve._last_input_pointers()["ingest_vectors"] == emb.values.buffers()[1].address
    assert c5.count("color = 'red' AND n = 0") == 34
    # float64 is converted, one batch at a time.
    f64 = pa.table({"vector": pa.FixedSizeListArray.from_arrays(
        pa.array(v.ravel().astype(np.float64)), DIM)})
    c4 = db.create_collection("c4", DIM)
    c4.ingest_arrow(f64)
    np.testing.assert_array_equal(c4.get([3], include="vector")[0]["vector"], v[3])


def test_a_record_batch_stream_commits_batch_by_batch(db):
    table, v = make_table(1000)
    c = db.create_collection("c", DIM, attributes=ATTRS)
    r = c.ingest_arrow(table.to_reader(max_chunksize=300), "embedding", "id")
    assert (r.ingested, r.rows) == (1000, 1000)

    class Stream:  # any producer of the Arrow C stream interface (polars, DuckDB, ...)
        def __init__(self, t):
            self.t = t

        def __arrow_c_stream__(self, requested_schema=None):
            return self.t.__arrow_c_stream__(requested_schema)

    c2 = db.create_collection("c2", DIM, attributes=ATTRS)
    assert c2.ingest_arrow(Stream(table), "embedding", "id").ingested == 1000
    # A stream is read once: a bad batch leaves the batches before it committed, and says so.
    ids = np.arange(1000, dtype=np.int64)
    ids[700] = 5
    bad = table.set_column(0, "id", pa.array(ids))
    c3 = db.create_collection("c3", DIM, attributes=ATTRS)
    with pytest.raises(sieve.InvalidArgument,
                       match=r"column 'id': row 700: id 5 repeats the id of row 5"):
        c3.ingest_arrow(bad.to_reader(max_chunksize=300), "embedding", "id")
    assert len(c3) == 600


def test_bad_parquet_input_is_named_and_changes_nothing(db, tmp_path):
    table, v = make_table(1000)
    c = db.create_collection("c", DIM, attributes=ATTRS)
    path = tmp_path / "t.parquet"
    pq.write_table(table, path, row_group_size=128)
    with pytest.raises(sieve.InvalidArgument, match=r"no column 'emb'; the file's columns: id, "
                                                    r"embedding, color"):
        c.ingest_parquet(path, vector_column="emb")
    with pytest.raises(sieve.InvalidArgument, match=r"column 'color' has Arrow type string; a "
                                                    r"vector column"):
        c.ingest_parquet(path, vector_column="color")
    with pytest.raises(sieve.InvalidArgument, match=r"unknown attribute 'id'"):
        c.ingest_parquet(path, vector_column="embedding")  # id is not an attribute
    with pytest.raises(sieve.InvalidArgument, match=r"not a Parquet file"):
        (tmp_path / "x.parquet").write_text("id,embedding\n")
        c.ingest_parquet(tmp_path / "x.parquet")

    # A null vector at row 917 (nine good batches first), then a repeated id at row 800.
    listed, _ = make_table(1000, vector_type="list")
    emb = listed.column("embedding").to_pylist()
    emb[917] = None
    nulled = listed.set_column(1, "embedding", pa.array(emb, pa.list_(pa.float32())))
    pq.write_table(nulled, path, row_group_size=128)
    with pytest.raises(sieve.InvalidArgument,
                       match=r"column 'embedding', row 917: the vector is null"):
        c.ingest_parquet(path, "embedding", "id", batch_rows=100)
    ids = np.arange(1000, dtype=np.int64)
    ids[800] = 3
    pq.write_table(table.set_column(0, "id", pa.array(ids)), path, row_group_size=128)
    with pytest.raises(sieve.InvalidArgument,
                       match=r"column 'id': row 800: id 3 repeats the id of row 3"):
        c.ingest_parquet(path, "embedding", "id", batch_rows=100)
    # An engine check, renumbered from the batch's rows to the file's.
    c.ingest(v[:1], ids=[999])
    with pytest.raises(sieve.InvalidArgument, match=r"row 999: id 999 already exists"):
        c.ingest_parquet(path, "embedding", "id", columns=[], batch_rows=100)
    assert len(c) == 1


def run_cli(*args):
    r = subprocess.run([str(sieve_cli()), *map(str, args)], capture_output=True, text=True)
    if "without Parquet support" in r.stderr:
        pytest.skip("this sieve was built without Parquet: " + r.stderr.strip())
    return r


def test_cli_ingests_what_pyarrow_and_pandas_write_and_exports_parquet(tmp_path):
    pd = pytest.importorskip("pandas")
    table, v = make_table(500)
    frame = table.drop_columns(["embedding", "tags"]).to_pandas()
    frame["color"] = frame["color"].astype("category")  # read back as dictionary<string>
    frame["n"] = frame["n"].astype("Int64")
    frame.loc[3, "n"] = pd.NA
    frame["embedding"] = list(v)  # numpy rows: list<float> in the file
    path = tmp_path / "pandas.parquet"
    frame.to_parquet(path, index=False)
    db = tmp_path / "db"
    attrs = [a for k, t in ATTRS.items() for a in ("--attr", "%s:%s" % (k, t))]
    assert run_cli("create", db, "--collection", "c", "--dim", DIM, *attrs).returncode == 0
    r = run_cli("ingest", db, "--collection", "c", "--vectors", "%s:embedding" % path,
                "--attributes", path, "--id-field", "id", "--batch-rows", 128)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["ingested"] == 500
    r = run_cli("count", db, "--collection", "c", "--filter", "color = 'red' AND n IS NULL")
    assert json.loads(r.stdout) == {"count": 1}

    out = tmp_path / "export.parquet"
    r = run_cli("export", db, "--collection", "c", "--format", "parquet", "--output", out)
    assert r.returncode == 0, r.stderr
    back = pq.read_table(out)
    assert str(back.schema.field("vector").type) == "fixed_size_list<element: float>[8]"
    assert back.schema.field("id").type == pa.int64()
    assert back.column("id").to_pylist() == [3 * i for i in range(500)]
    np.testing.assert_array_equal(np.stack(back.column("vector").to_numpy(zero_copy_only=False)),
                                  v)
    assert back.column("color").to_pylist()[:3] == ["red", "blue", None]
    assert back.column("n").to_pylist()[:4] == [0, 1, 2, None]

    # And the embedded API reads the CLI's file.
    with sieve.open(tmp_path / "db2") as db2:
        c = db2.create_collection("c", DIM, attributes=ATTRS)
        c.ingest_parquet(out, id_column="id")
        assert c.count("color = 'blue'") == 167

    r = run_cli("ingest", db, "--collection", "c", "--vectors", "%s:color" % path)
    assert r.returncode == 1
    assert "column 'color' has Arrow type dictionary<values=string" in r.stderr
    assert r.stderr.count("\n") == 1
