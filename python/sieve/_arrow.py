"""Arrow data into a collection: a ``pyarrow.Table`` or ``RecordBatch``, a stream of record
batches (``pyarrow.RecordBatchReader`` or any object with ``__arrow_c_stream__``: polars,
DuckDB, ...) or a Parquet file read batch by batch with ``pyarrow.parquet``.

Vectors are a column of ``fixed_size_list`` or ``list``/``large_list`` of float32, float16 or
float64. float32 and float16 vectors reach the engine as numpy views of the column's own
buffer (no copy); float64 is converted. Every other column is an attribute, as
``Collection.ingest`` takes a ``pyarrow.Table`` (see _columns.py), except the id column.
"""

from __future__ import annotations

import os
import re
import sys
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from . import _arrays, _columns
from .errors import InvalidArgument, Error

_ROW = re.compile(r"(\brows? )(\d+)(\.\.(\d+))?")


def _pyarrow() -> Any:
    try:
        import pyarrow
    except ImportError:
        raise ImportError("Arrow and Parquet input needs pyarrow: pip install 'pyarrow>=12' "
                          "(the sieve[arrow] extra)") from None
    return pyarrow


def shift_rows(e: Error, first_row: int, context: str = "") -> Error:
    """``e`` of the same class with its row numbers ("row 5", "rows 0..9") moved on by
    ``first_row``: the engine counts from the start of a batch, the caller from the input's."""
    def bump(m: re.Match) -> str:
        text = m.group(1) + str(int(m.group(2)) + first_row)
        if m.group(4) is not None:
            text += ".." + str(int(m.group(4)) + first_row)
        return text
    message = _ROW.sub(bump, str(e)) if first_row else str(e)
    out = type(e)(context + message)
    return out


def vectors(column: Any, name: str, dim: int | None = None) -> np.ndarray:
    """The [rows, dim] numpy array of a vector column (a pyarrow Array or ChunkedArray of one
    chunk): a view of the column's values for float32 and float16, a float32 copy for float64.
    InvalidArgument naming the column and the row for a null vector, a null component or a
    vector of another length than the first row's (or ``dim``)."""
    pa = _pyarrow()
    if isinstance(column, pa.ChunkedArray):
        column = column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()
    t = column.type
    n = len(column)
    if pa.types.is_fixed_size_list(t):
        width = t.list_size
        start, stop = column.offset * width, (column.offset + n) * width
    elif pa.types.is_list(t) or pa.types.is_large_list(t):
        width = None
    else:
        raise InvalidArgument("column %r has Arrow type %s; a vector column is a fixed_size_list,"
                              " list or large_list of float, halffloat or double" % (name, t))
    value_type = t.value_type
    if not (pa.types.is_float32(value_type) or pa.types.is_float16(value_type)
            or pa.types.is_float64(value_type)):
        raise InvalidArgument("column %r has Arrow type %s; vector components must be float, "
                              "halffloat or double" % (name, t))
    if column.null_count:
        row = int(np.argmin(column.is_valid().to_numpy(zero_copy_only=False)))
        raise InvalidArgument("column %r, row %d: the vector is null; every row needs a vector"
                              % (name, row))
    if width is None:
        offsets = column.offsets.to_numpy()
        lengths = np.diff(offsets)
        width = int(lengths[0]) if n else (dim or 0)
        if n and not (lengths == width).all():
            row = int(np.argmax(lengths != width))
            raise InvalidArgument("column %r, row %d: the vector has %d components, the first "
                                  "row's %d" % (name, row, int(lengths[row]), width))
        start, stop = (int(offsets[0]), int(offsets[-1])) if n else (0, 0)
    if dim is not None and n and width != dim:
        raise InvalidArgument("column %r holds vectors of dim %d, the collection's dim is %d"
                              % (name, width, dim))
    values = column.values.slice(start, stop - start)
    if values.null_count:
        at = int(np.argmin(values.is_valid().to_numpy(zero_copy_only=False)))
        raise InvalidArgument("column %r, row %d: component %d is null"
                              % (name, at // max(width, 1), at % max(width, 1)))
    flat = values.to_numpy(zero_copy_only=not pa.types.is_float64(value_type))
    if flat.dtype == np.float64:
        flat = flat.astype(np.float32)
    return flat.reshape(n, width) if width else flat.reshape(n, 0)


def ids_of(column: Any, name: str) -> np.ndarray:
    """An id column as int64 (a view where Arrow holds int64 without nulls)."""
    pa = _pyarrow()
    if isinstance(column, pa.ChunkedArray):
        column = column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()
    if not pa.types.is_integer(column.type):
        raise InvalidArgument("column %r has Arrow type %s; ids are an integer column"
                              % (name, column.type))
    if column.null_count:
        row = int(np.argmin(column.is_valid().to_numpy(zero_copy_only=False)))
        raise InvalidArgument("column %r, row %d: the id is null; every row needs its id"
                              % (name, row))
    return _arrays.ids(column.to_numpy(zero_copy_only=False), "column %r" % name)


def _split(batch: Any, vector_column: str, id_column: str | None,
           columns: Sequence[str] | None, dim: int, schema: Sequence[str]) -> tuple:
    """(vectors, ids or None, attribute columns or None) of one record batch."""
    names = batch.schema.names
    for wanted, role in ((vector_column, "the vectors"), (id_column, "the ids")):
        if wanted is not None and wanted not in names:
            raise InvalidArgument("no column %r (%s); the columns: %s"
                                  % (wanted, role, ", ".join(names)))
    v = vectors(batch.column(names.index(vector_column)), vector_column, dim)
    ids = None if id_column is None else ids_of(batch.column(names.index(id_column)), id_column)
    if columns is None:
        take = [n for n in names if n != vector_column and n != id_column]
    else:
        missing = [c for c in columns if c not in names]
        if missing:
            raise InvalidArgument("no column %r (an attribute); the columns: %s"
                                  % (missing[0], ", ".join(names)))
        take = list(columns)
    attrs = None
    if take:
        attrs = _columns.normalize(batch.select(take), schema, batch.num_rows)
    return v, ids, attrs


def _check_unique(ids: list[np.ndarray], what: str) -> None:
    if not ids:
        return
    all_ids = np.concatenate(ids)
    order = np.argsort(all_ids, kind="stable")
    s = all_ids[order]
    dup = np.flatnonzero(s[1:] == s[:-1])
    if dup.size:
        rows = np.flatnonzero(all_ids == s[dup[0]])
        raise InvalidArgument("%s: row %d: id %d repeats the id of row %d; ids must be unique"
                              % (what, int(rows[1]), int(s[dup[0]]), int(rows[0])))


def ingest_batches(write: Callable[..., tuple], batches: Callable[[], Iterable[Any]],
                   replayable: bool, *, vector_column: str, id_column: str | None,
                   columns: Sequence[str] | None, dim: int, schema: Sequence[str],
                   batch_rows: int, upsert: bool,
                   auto_ids: bool) -> tuple[int, int | None, int]:
    """Ingests the record batches that ``batches()`` yields through ``write(vectors, ids,
    columns, batch_rows, upsert, auto_ids, validate_only)``. Replayable input (a table, a
    Parquet file) is checked whole first (every batch with validate_only, and the ids across
    batches) and then written; a one-pass stream is checked and written batch by batch.
    Returns (ingested, live rows or None when there was no batch, replaced)."""
    if id_column is None and upsert:
        raise InvalidArgument("upsert: every row needs an id (give id_column)")
    passes = (True, False) if replayable else (None,)
    ingested = replaced = 0
    live = None
    for validate in passes:
        first = 0
        seen_ids: list[np.ndarray] = []
        for batch in batches():
            n = batch.num_rows
            try:
                v, ids, attrs = _split(batch, vector_column, id_column, columns, dim, schema)
            except Error as e:
                raise shift_rows(e, first) from None
            if ids is not None and validate is not False:
                seen_ids.append(ids)
                if validate is None:  # a stream: against the batches before, now
                    _check_unique(seen_ids, "column %r" % id_column)
            # Once a batch is committed the collection has rows: later batches without ids
            # are what auto_ids (or an empty collection) already allowed.
            later = auto_ids or (first > 0 and not validate)
            for check in ((True, False) if validate is None else (validate,)):
                try:
                    got, live, rep = write(v, ids, attrs, batch_rows, upsert, later, check)
                except Error as e:
                    context = ""
                    if not replayable and ingested:
                        context = "(rows 0..%d were committed before) " % (ingested - 1)
                    raise shift_rows(e, first, context) from None
                ingested += got
                replaced += rep
            first += n
        if validate:
            _check_unique(seen_ids, "column %r" % id_column)
    return ingested, live, replaced


def table_batches(data: Any) -> tuple[Callable[[], Iterable[Any]], bool]:
    """(a function yielding record batches, whether it can be called again) for a Table, a
    RecordBatch, a RecordBatchReader or an object with ``__arrow_c_stream__``."""
    pa = _pyarrow()
    if isinstance(data, pa.Table):
        return (lambda: data.to_batches()), True
    if isinstance(data, pa.RecordBatch):
        return (lambda: [data]), True
    if isinstance(data, pa.RecordBatchReader):
        return (lambda: data), False
    if hasattr(data, "__arrow_c_stream__"):
        if not hasattr(pa.RecordBatchReader, "from_stream"):
            raise InvalidArgument("reading an __arrow_c_stream__ object needs pyarrow >= 15, "
                                  "this is %s" % pa.__version__)
        reader = pa.RecordBatchReader.from_stream(data)
        return (lambda: reader), False
    raise InvalidArgument("expected a pyarrow.Table, RecordBatch or RecordBatchReader, or an "
                          "object with __arrow_c_stream__, got %s" % type(data).__name__)


def parquet_batches(path: str | os.PathLike, vector_column: str, id_column: str | None,
                    columns: Sequence[str] | None,
                    batch_rows: int) -> Callable[[], Iterable[Any]]:
    """A function yielding the Parquet file's record batches of at most ``batch_rows`` rows,
    of the columns ingest needs (each call reads the file again)."""
    _pyarrow()
    import pyarrow.parquet as pq

    path = os.fspath(path)
    try:
        names = pq.ParquetFile(path).schema_arrow.names
    except FileNotFoundError:
        raise InvalidArgument("file %s: no such file" % path) from None
    except Exception as e:  # pyarrow.ArrowInvalid and others: not a Parquet file
        raise InvalidArgument("file %s: not a Parquet file: %s" % (path, e)) from None
    wanted = [vector_column] + ([id_column] if id_column else [])
    wanted += [c for c in (columns if columns is not None else names) if c not in wanted]
    for w in wanted:
        if w not in names:
            raise InvalidArgument("file %s: no column %r; the file's columns: %s"
                                  % (path, w, ", ".join(names)))

    def read() -> Iterable[Any]:
        f = pq.ParquetFile(path)
        yield from f.iter_batches(batch_size=max(1, batch_rows), columns=wanted,
                                  use_threads=False)
    return read


def is_arrow(data: Any) -> bool:
    pa = sys.modules.get("pyarrow")
    return pa is not None and isinstance(data, (pa.Table, pa.RecordBatch, pa.RecordBatchReader))
