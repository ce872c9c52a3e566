"""Attribute columns (a dict of columns, a pandas.DataFrame or a pyarrow.Table) in the forms
the extension module reads without Python objects per value where it can (see
python/src/columns.h): numeric columns as numpy arrays with a null mask, Arrow strings as
their offsets and bytes, everything else as a list of Python objects.

Nulls: None in lists; masked entries of a numpy masked array; NaN, None, pd.NA and NaT in
pandas columns (pandas' own notion of missing); Arrow nulls; and NaN in any float column or list
(numpy, Arrow, a list of floats), which is how pandas and numpy users write a missing number. A
name of the schema missing from the input is null in every row; a name the schema lacks is an
error.

Numbers for an int attribute: a float column (pandas makes an int column float64 once it holds
a NaN, e.g. ``read_csv`` with an empty field) is taken when every value that is not null is a
whole number below 2**53 in magnitude, as JSON ingest takes 3.0 for an int; a fraction or a
larger float is an error naming the row and attribute.
"""

from __future__ import annotations

import sys
from typing import Any, Mapping, Sequence

import numpy as np

from .errors import InvalidArgument

Column = Any  # None or a tuple (kind, ...) as python/src/columns.h describes


def _unknown(names: Sequence[str], schema: Sequence[str]) -> None:
    extra = [n for n in names if n not in schema]
    if extra:
        raise InvalidArgument(
            "unknown attribute %r (the collection's attributes: %s)"
            % (extra[0], ", ".join(schema) if schema else "none"))


def _numpy_column(a: np.ndarray, mask: np.ndarray | None, name: str) -> Column:
    if a.ndim != 1:
        raise InvalidArgument("attribute %r: a column must be 1-D, got shape %s" % (name, a.shape))
    kind = a.dtype.kind
    if kind == "b":
        return ("bool", np.ascontiguousarray(a, dtype=np.bool_), mask)
    if kind in "iu":
        if kind == "u" and a.dtype.itemsize == 8 and a.size and int(a.max()) > np.iinfo(np.int64).max:
            raise InvalidArgument("attribute %r: a value above the int64 range" % name)
        return ("int64", np.ascontiguousarray(a, dtype=np.int64), mask)
    if kind == "f":
        return ("float64", np.ascontiguousarray(a, dtype=np.float64), mask)
    if kind in "US":
        values = a.tolist()
        if mask is not None:
            values = [None if m else v for v, m in zip(values, mask.tolist())]
        return ("objects", values)
    if kind == "O":
        values = a.tolist()
        if mask is not None:
            values = [None if m else v for v, m in zip(values, mask.tolist())]
        return ("objects", values)
    raise InvalidArgument("attribute %r: columns of dtype %s are not supported" % (name, a.dtype))


def _mask_of(m: Any, n: int) -> np.ndarray | None:
    if m is np.ma.nomask or m is None:
        return None
    m = np.ascontiguousarray(np.broadcast_to(m, (n,)), dtype=np.bool_)
    return m if m.any() else None


def _plain_column(values: Any, name: str, n: int) -> Column:
    """A column of a dict: a list, a tuple, a numpy (masked) array or a pandas Series."""
    pd = sys.modules.get("pandas")
    if pd is not None and isinstance(values, pd.Series):
        return _pandas_column(values, name)
    pa = sys.modules.get("pyarrow")
    if pa is not None and isinstance(values, (pa.Array, pa.ChunkedArray)):
        return _arrow_column(values, name)
    if isinstance(values, np.ma.MaskedArray):
        return _numpy_column(np.ma.getdata(values), _mask_of(np.ma.getmaskarray(values), n), name)
    if isinstance(values, np.ndarray):
        return _numpy_column(values, None, name)
    if isinstance(values, (list, tuple)):
        return ("objects", list(values))
    raise InvalidArgument("attribute %r: a column must be a list, a numpy array, a pandas Series "
                          "or a pyarrow array, got %s" % (name, type(values).__name__))


def _pandas_column(s: Any, name: str) -> Column:
    import pandas as pd

    dtype = s.dtype
    na = s.isna().to_numpy(dtype=np.bool_)
    mask = na if na.any() else None
    if isinstance(dtype, pd.CategoricalDtype):
        return ("objects", s.astype(object).where(~na, None).tolist())
    if isinstance(dtype, pd.api.extensions.ExtensionDtype) and not isinstance(dtype, np.dtype):
        kind = getattr(dtype, "kind", "O")
        if kind in "iub":
            data = s.to_numpy(dtype=np.int64 if kind in "iu" else np.bool_,
                              na_value=0 if kind in "iu" else False)
            return _numpy_column(data, mask, name)
        if kind == "f":
            return _numpy_column(s.to_numpy(dtype=np.float64, na_value=0.0), mask, name)
        if kind == "M" or kind == "m":
            raise InvalidArgument("attribute %r: datetime columns are not supported" % name)
        # strings (python or pyarrow storage) and other extension types: Python objects.
        return ("objects", s.to_numpy(dtype=object, na_value=None).tolist())
    if dtype.kind in "Mm":
        raise InvalidArgument("attribute %r: datetime columns are not supported" % name)
    if dtype.kind == "O":
        if mask is None:
            return ("objects", s.tolist())
        return ("objects", s.astype(object).where(~na, None).tolist())
    return _numpy_column(s.to_numpy(), mask, name)


def _arrow_validity(arr: Any) -> np.ndarray | None:
    if arr.null_count == 0:
        return None
    bits = np.frombuffer(arr.buffers()[0], dtype=np.uint8)
    valid = np.unpackbits(bits, bitorder="little")[arr.offset:arr.offset + len(arr)]
    return valid == 0


def _arrow_column(col: Any, name: str) -> Column:
    import pyarrow as pa

    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
    t = col.type
    if pa.types.is_dictionary(t):
        col = col.dictionary_decode()
        t = col.type
    if hasattr(pa.types, "is_string_view") and pa.types.is_string_view(t):
        col = col.cast(pa.string())
        t = col.type
    mask = _arrow_validity(col)
    n = len(col)
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        buffers = col.buffers()
        off_dtype = np.int32 if pa.types.is_string(t) else np.int64
        offsets = np.frombuffer(buffers[1], dtype=off_dtype)[col.offset:col.offset + n + 1]
        data = (np.frombuffer(buffers[2], dtype=np.uint8) if buffers[2] is not None
                else np.zeros(0, dtype=np.uint8))
        return ("utf8", np.ascontiguousarray(offsets), data, mask)
    if pa.types.is_boolean(t):
        data = col.fill_null(False).to_numpy(zero_copy_only=False)
        return ("bool", np.ascontiguousarray(data, dtype=np.bool_), mask)
    if pa.types.is_integer(t):
        data = col.fill_null(0).to_numpy(zero_copy_only=False)
        return _numpy_column(data, mask, name)
    if pa.types.is_floating(t):
        data = col.fill_null(0).to_numpy(zero_copy_only=False)
        return ("float64", np.ascontiguousarray(data, dtype=np.float64), mask)
    if pa.types.is_null(t):
        return None
    if (pa.types.is_list(t) or pa.types.is_large_list(t)) and (
            pa.types.is_string(t.value_type) or pa.types.is_large_string(t.value_type)):
        return ("objects", col.to_pylist())
    raise InvalidArgument("attribute %r: Arrow columns of type %s are not supported" % (name, t))


_TWO_TO_53 = float(2 ** 53)


def _float_nulls(c: Column) -> Column:
    """A float64 column with its NaNs null."""
    data, mask = c[1], c[2]
    nan = np.isnan(data)
    if nan.any():
        mask = nan if mask is None else (mask | nan)
    return ("float64", data, mask)


def _whole_number_error(name: str, row: int, value: Any) -> InvalidArgument:
    return InvalidArgument("row %d, attribute %r (int): %r is not a whole number below 2**53; an "
                           "int attribute takes whole numbers (3 or 3.0)" % (row, name, value))


def _float_column_as_int(c: Column, name: str) -> Column:
    """A float64 column (NaNs already null) for an int attribute, as int64: every value that is
    not null must be whole and below 2**53 in magnitude."""
    data, mask = c[1], c[2]
    valid = np.ones(len(data), dtype=np.bool_) if mask is None else ~mask
    with np.errstate(invalid="ignore"):
        whole = (data == np.trunc(data)) & (np.abs(data) < _TWO_TO_53)
    bad = valid & ~whole
    if bad.any():
        r = int(np.argmax(bad))
        raise _whole_number_error(name, r, float(data[r]))
    return ("int64", np.where(valid, data, 0).astype(np.int64), mask)


def _objects_as_int(values: list, name: str) -> list:
    """A list for an int attribute with its whole floats as ints and NaN as None."""
    out = None
    for i, v in enumerate(values):
        if isinstance(v, (float, np.floating)):
            if out is None:
                out = list(values)
            f = float(v)
            if f != f:
                out[i] = None
            elif f.is_integer() and abs(f) < _TWO_TO_53:
                out[i] = int(f)
            else:
                raise _whole_number_error(name, i, f)
    return values if out is None else out


def value_for(v: Any, type_: str | None) -> Any:
    """One value (an update's) by the rules of a column of attribute type ``type_``: numpy
    scalars as Python ones, NaN as None, a whole float for an int attribute as an int."""
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float):
        if v != v:
            return None
        if type_ == "int":
            if v.is_integer() and abs(v) < _TWO_TO_53:
                return int(v)
    if isinstance(v, (list, tuple)):
        return [x.item() if isinstance(x, np.generic) else x for x in v]
    return v


def normalize(attributes: Any, schema: Sequence[str], n: int,
              types: Sequence[str] | None = None) -> list[Column] | None:
    """One entry per name of ``schema`` (in its order) for ``n`` rows, or None when
    ``attributes`` is None. ``types``: the schema's attribute types, in the same order, for
    the int rule above (None: no conversion)."""
    if attributes is None:
        return None
    pd = sys.modules.get("pandas")
    pa = sys.modules.get("pyarrow")
    columns: dict[str, Column] = {}
    if pd is not None and isinstance(attributes, pd.DataFrame):
        names = [str(c) for c in attributes.columns]
        _unknown(names, schema)
        for name, c in zip(names, attributes.columns):
            columns[name] = _pandas_column(attributes[c], name)
    elif pa is not None and isinstance(attributes, (pa.Table, pa.RecordBatch)):
        names = list(attributes.schema.names)
        _unknown(names, schema)
        for i, name in enumerate(names):
            columns[name] = _arrow_column(attributes.column(i), name)
    elif isinstance(attributes, Mapping):
        names = [str(k) for k in attributes.keys()]
        _unknown(names, schema)
        for name, values in attributes.items():
            columns[str(name)] = _plain_column(values, str(name), n)
    else:
        raise InvalidArgument("attributes must be a dict of columns, a pandas.DataFrame or a "
                              "pyarrow.Table, got %s" % type(attributes).__name__)
    type_of = dict(zip(schema, types)) if types is not None else {}
    for name, c in columns.items():
        if c is None:
            continue
        length = len(c[1]) - 1 if c[0] == "utf8" else len(c[1])
        if length != n:
            raise InvalidArgument("attribute %r has %d values for %d vectors" % (name, length, n))
        if c[0] == "float64":
            c = _float_nulls(c)
            if type_of.get(name) == "int":
                c = _float_column_as_int(c, name)
        elif c[0] == "objects" and type_of.get(name) == "int":
            c = ("objects", _objects_as_int(c[1], name))
        columns[name] = c
    return [columns.get(name) for name in schema]


def to_rows(columns: list[Column] | None, schema: Sequence[str], n: int) -> list[dict] | None:
    """The same columns as JSON-ready row objects (for the HTTP client), nulls left out."""
    if columns is None:
        return None
    rows: list[dict] = [{} for _ in range(n)]
    for name, c in zip(schema, columns):
        if c is None:
            continue
        kind = c[0]
        if kind == "objects":
            values = c[1]
        elif kind == "utf8":
            offsets, data = c[1].tolist(), c[2].tobytes()
            values = [data[offsets[i]:offsets[i + 1]].decode("utf-8") for i in range(n)]
        else:
            values = c[1].tolist()
        mask = c[3] if kind == "utf8" else (c[2] if kind != "objects" else None)
        if mask is not None:
            values = [None if m else v for v, m in zip(values, mask.tolist())]
        for row, v in zip(rows, values):
            if v is not None:
                row[name] = jsonable(v)
    return rows


def jsonable(v: Any) -> Any:
    """A value as JSON takes it: numpy scalars as Python ones, NaN as None (null)."""
    if isinstance(v, float):
        return None if v != v else v
    if isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, np.generic):
        return jsonable(v.item())
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    return v
