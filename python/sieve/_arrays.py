"""How vectors, queries and ids reach the engine: without a copy when they already have the
form the engine reads (C-contiguous float32 or float16; C-contiguous int64)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .errors import InvalidArgument


def matrix(x: Any, what: str) -> np.ndarray:
    """A 2-D C-contiguous float32 or float16 array: ``x`` itself when it is one (no copy), else
    a float32 copy. A 1-D array is one row (a view)."""
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
