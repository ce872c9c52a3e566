"""How vectors, queries and ids reach the engine: without a copy when they already have the
form the engine reads (C-contiguous float32 or float16; C-contiguous int64)."""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from .errors import InvalidArgument


def matrix(x: Any, what: str) -> np.ndarray:
    """A 2-D C-contiguous float32 or float16 array: ``x`` itself when it is one (no copy), else
    a float32 copy. A 1-D array is one row (a view). A pyarrow array of fixed_size_list or list
    of floats is taken as _arrow.vectors takes it (float32: a view of its values)."""
    pa = sys.modules.get("pyarrow")
    if pa is not None and isinstance(x, (pa.Array, pa.ChunkedArray)):
        from . import _arrow
        x = _arrow.vectors(x, what)
    if not isinstance(x, np.ndarray) or x.dtype not in (np.float32, np.float16):
        try:
            x = np.asarray(x)
        except (TypeError, ValueError) as e:
            raise InvalidArgument("%s must be a 2-D array of numbers: %s" % (what, e)) from None
        if x.dtype.kind not in "fiu":
            raise InvalidArgument("%s must be a 2-D array of numbers, got dtype %s"
                                  % (what, x.dtype))
        x = x.astype(np.float32)
    if x.ndim == 1:
        x = x.reshape(1, -1)
    if x.ndim != 2:
        raise InvalidArgument("%s must be 2-D [rows, dim], got shape %s" % (what, x.shape))
    if not x.flags.c_contiguous:
        x = np.ascontiguousarray(x)
    return x


def ids(x: Any, what: str = "ids") -> np.ndarray:
    """A 1-D C-contiguous int64 array (``x`` itself when it is one)."""
    a = np.asarray(x)
    if a.ndim == 0:
        a = a.reshape(1)
    if a.ndim != 1:
        raise InvalidArgument("%s must be 1-D, got shape %s" % (what, a.shape))
    if a.size and a.dtype.kind not in "iu":
        raise InvalidArgument("%s must be integers, got dtype %s" % (what, a.dtype))
    if a.dtype.kind == "u" and a.size and int(a.max()) > np.iinfo(np.int64).max:
        raise InvalidArgument("%s: a value above the int64 range" % what)
    return np.ascontiguousarray(a, dtype=np.int64)


def k_value(k: Any) -> int:
    """``k`` as an int: an int (or numpy integer) only; a bool, float or string is refused
    (TypeError naming k) rather than truncated. The range is the engine's rule."""
    if type(k) is int:  # the common case first: a search's fixed cost counts
        return k
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)):
        raise TypeError("k must be an int, got %s %r" % (type(k).__name__, k))
    return int(k)


def group_args(group_by: Any, group_size: Any, group_strategy: Any) -> tuple[str, int, str]:
    """``group_by``, ``group_size`` and ``group_strategy`` checked for type (TypeError naming
    the argument); their rules (the attribute, the bounds) are the engine's."""
    if not isinstance(group_by, str):
        raise TypeError("group_by must be a str, got %s %r" % (type(group_by).__name__, group_by))
    if isinstance(group_size, (bool, np.bool_)) or not isinstance(group_size, (int, np.integer)):
        raise TypeError("group_size must be an int, got %s %r" % (type(group_size).__name__,
                                                                   group_size))
    if not isinstance(group_strategy, str):
        raise TypeError("group_strategy must be a str, got %s %r" % (
            type(group_strategy).__name__, group_strategy))
    return group_by, int(group_size), group_strategy


def range_and_pages(radius: Any, limit: Any, offset: Any, after: Any
                    ) -> tuple[float | None, int, int | None, list[str] | None]:
    """Range search and pages as the engine takes them: ``radius`` a real number (or None),
    ``limit`` and ``offset`` ints (bools, floats and strings are refused, as for k), ``after``
    one cursor (a str, for one query) or a list of them, one per query (None or "" = from the
    start). TypeError naming the argument otherwise; the ranges are the engine's rules."""
    if radius is not None:
        if isinstance(radius, (bool, np.bool_)) or not isinstance(
                radius, (int, float, np.integer, np.floating)):
            raise TypeError("radius must be a number, got %s %r" % (type(radius).__name__, radius))
        radius = float(radius)
    for name, value in (("limit", limit), ("offset", offset)):
        if value is not None and (isinstance(value, (bool, np.bool_))
                                  or not isinstance(value, (int, np.integer))):
            raise TypeError("%s must be an int, got %s %r" % (name, type(value).__name__, value))
    cursors = None
    if after is not None:
        items = [after] if isinstance(after, str) else after
        if not isinstance(items, (list, tuple)) or not all(
                x is None or isinstance(x, str) for x in items):
            raise TypeError("after must be a cursor (a string from result.next) or a list of "
                            "them, one per query, got %s" % type(after).__name__)
        cursors = [x or "" for x in items]
    return (radius, 1000 if limit is None else int(limit),
            None if offset is None else int(offset), cursors)


def depth_value(depth: Any) -> int:
    """A hybrid search's ``depth`` as an int (TypeError as for k); values past a C int are
    passed as the largest one, so that the engine's range message names them."""
    if type(depth) is int and -2**31 <= depth < 2**31:
        return depth
    if isinstance(depth, (bool, np.bool_)) or not isinstance(depth, (int, np.integer)):
        raise TypeError("depth must be an int, got %s %r" % (type(depth).__name__, depth))
    return max(min(int(depth), 2**31 - 1), -(2**31))


def include_text(include: Any, default: str = "") -> str:
    """``include`` as the engine's comma-separated text: a string as it is, a list or tuple
    of names joined with commas, None as ``default``. TypeError naming include otherwise."""
    if include is None:
        return default
    if isinstance(include, str):
        return include
    if isinstance(include, (list, tuple)) and all(isinstance(x, str) for x in include):
        return ",".join(include)
    raise TypeError("include must be a string (\"price,color\", \"*\", \"vector\") or a list "
                    "of such names, got %s" % type(include).__name__)


def search_filters(filter: Any, filters: Any) -> tuple[str | None, list[str] | None]:
    """The search call's filter arguments checked: `filter` one string (or None), `filters` a
    sequence of strings or None, one a query (or None). Returns (filter, per-query list with
    None as ""). Raises InvalidArgument naming the argument otherwise; both given is the
    engine's rule, and its message."""
    if filter is not None and not isinstance(filter, str):
        hint = (" (for a filter per query pass filters=[...])"
                if isinstance(filter, (list, tuple)) else "")
        raise InvalidArgument("filter: one filter string, got %s%s" % (type(filter).__name__, hint))
    if filters is None:
        return filter, None
    if isinstance(filters, (str, bytes)) or not hasattr(filters, "__iter__"):
        raise InvalidArgument("filters: a list with one filter string (or None) a query, got %s"
                              " (for one filter for every query pass filter=...)"
                              % type(filters).__name__)
    per_query = []
    for i, f in enumerate(filters):
        if f is not None and not isinstance(f, str):
            raise InvalidArgument("filters[%d]: a filter string or None, got %s"
                                  % (i, type(f).__name__))
        per_query.append("" if f is None else f)
    return filter, per_query
