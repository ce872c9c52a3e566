"""The driver side of sieve.ray's query shapes (range search, pages, group-by): how the shards'
answers merge into the one a single collection gives, and the page cursor of a sharded
collection. Pure functions over numpy arrays; sieve.ray does the calls.

Order. One collection orders rows by (float64 distance, id) in the metric's order. A shard
does the same within its rows, but answers in float32, so the driver merges the shards'
lists head by head on (float32 key, id), each list kept in its shard's own order: rows of
different shards whose float64 distances differ but round to one float32 come out by id (one
collection would order them by the float64 distance); every other order, exact ties included,
is one collection's.

The cursor. A page's rows come out of the merge in float32-key order, so everything before a
cursor is: every row whose float32 key is below the last row's, and, of the rows whose key
equals it (its bucket), the first ``c_s`` of each shard s. The cursor holds that key, the rows
consumed from each shard (``P_s``) and each ``c_s``; the next page asks shard s for the rows
after the start of the bucket (an engine cursor on the float64 midpoint below it) and drops its
first ``c_s`` rows of the bucket.
"""

from __future__ import annotations

import heapq
import re
import struct
from typing import Any, Iterable, Sequence

import numpy as np

from . import errors

MAX_K = 1000000
_INT64_MIN = -(1 << 63)
_CURSOR = re.compile(r"^r1\.(\d+)\.([0-9a-f]{8})\.(\d+)\.((?:\d+:\d+)(?:,\d+:\d+)*)$")


def keys(distances: np.ndarray, metric: str) -> np.ndarray:
    """Smaller-is-better float64 keys of float32 distances (ip's scores negated)."""
    d = np.asarray(distances, dtype=np.float64)
    return -d if metric == "ip" else d


def merge(lists: Sequence[tuple[np.ndarray, np.ndarray]], metric: str,
          limit: int | None = None) -> list[tuple[float, int, int, int]]:
    """The head-by-head merge of per-shard (ids, distances) lists, each in its shard's order:
    [(key, id, shard, position in its list)], at most ``limit``."""
    def rows(s: int, ids: np.ndarray, dist: np.ndarray) -> Iterable[tuple[float, int, int, int]]:
        k = keys(dist, metric).tolist()
        return ((k[j], i, s, j) for j, i in enumerate(ids.tolist()))

    merged = heapq.merge(*(rows(s, ids, d) for s, (ids, d) in enumerate(lists)),
                         key=lambda r: (r[0], r[1]))
    out = []
    for r in merged:
        if limit is not None and len(out) >= limit:
            break
        out.append(r)
    return out


class PageState:
    """Where a query's pages stand: the bucket's float32 distance (None before the first
    page), and per shard the rows consumed (``consumed``) and those of them in the bucket
    (``in_bucket``)."""

    __slots__ = ("distance", "consumed", "in_bucket")

    def __init__(self, shards: int, distance: float | None = None,
                 consumed: list[int] | None = None, in_bucket: list[int] | None = None) -> None:
        self.distance = distance
        self.consumed = consumed or [0] * shards
        self.in_bucket = in_bucket or [0] * shards

    @property
    def position(self) -> int:
        return sum(self.consumed)

    def key(self, metric: str) -> float | None:
        return None if self.distance is None else float(keys(np.float32(self.distance), metric))

    def advanced(self, taken: Sequence[tuple[float, int, int, int]], metric: str
                 ) -> "PageState":
        """The state after the merged rows ``taken`` (in order; the last is the new bucket)."""
        if not taken:
            return self
        shards = len(self.consumed)
        consumed = list(self.consumed)
        last = taken[-1][0]
        in_bucket = list(self.in_bucket) if last == self.key(metric) else [0] * shards
        for key, _, s, _ in taken:
            consumed[s] += 1
            if key == last:
                in_bucket[s] += 1
        distance = float(np.float32(-last if metric == "ip" else last))
        return PageState(shards, distance, consumed, in_bucket)

    def encode(self) -> str:
        bits = struct.unpack("<I", struct.pack("<f", self.distance))[0]
        return "r1.%d.%08x.%d.%s" % (len(self.consumed), bits, self.position, ",".join(
            "%d:%d" % pc for pc in zip(self.consumed, self.in_bucket)))

    @classmethod
    def decode(cls, text: str, shards: int, query: int, k: int) -> "PageState":
        """A cursor from ``result.next``; InvalidArgument naming the query otherwise."""
        m = _CURSOR.match(text)
        bad = errors.InvalidArgument(
            "after: query %d: '%s' is not a cursor a sieve.ray search of this collection gave "
            "(result.next)" % (query, text[:64]))
        if m is None or int(m.group(1)) != shards:
            raise bad
        distance = struct.unpack("<f", struct.pack("<I", int(m.group(2), 16)))[0]
        pairs = [tuple(int(x) for x in p.split(":")) for p in m.group(4).split(",")]
        position = int(m.group(3))
        if (len(pairs) != shards or not np.isfinite(distance)
                or sum(p for p, _ in pairs) != position or position == 0
                or any(c > p for p, c in pairs) or sum(c for _, c in pairs) == 0):
            raise bad
        if position > MAX_K - k:
            raise errors.InvalidArgument(
                "after: query %d: the cursor is %d rows deep; pages reach row %d at most "
                "(position + k <= %d)" % (query, position, MAX_K, MAX_K))
        return cls(shards, distance, [p for p, _ in pairs], [c for _, c in pairs])

    def shard_cursor(self, shard: int, metric: str, asked: int) -> str:
        """The engine cursor that starts shard ``shard``'s rows at the bucket: the float64
        midpoint between the bucket's float32 and the next better float32 (every row rounding
        to the bucket or worse comes after it), the smallest id, and as position (the engine's
        first window) the shard's rows before the bucket."""
        if self.distance is None:
            return ""
        d = np.float32(self.distance)
        better = np.nextafter(d, np.float32(np.inf if metric == "ip" else -np.inf))
        if np.isfinite(better):
            edge = (float(d) + float(better)) / 2
        else:
            edge = np.finfo(np.float64).max * (1.0 if metric == "ip" else -1.0)
        bits = struct.unpack("<Q", struct.pack("<d", edge))[0]
        before = self.consumed[shard] - self.in_bucket[shard]
        before = max(0, min(before, MAX_K - asked))
        return "c1.%016x%016x%016x" % (bits, _INT64_MIN & 0xFFFFFFFFFFFFFFFF, before)

    def after_bucket(self, distances: np.ndarray, shard: int, metric: str) -> np.ndarray:
        """The positions of shard ``shard``'s rows from its shard_cursor that were not
        consumed yet: its rows with keys below the bucket, and its first in_bucket rows of the
        bucket, dropped."""
        if self.distance is None:
            return np.arange(len(distances))
        k = keys(distances, metric)
        bucket = self.key(metric)
        keep = k > bucket
        at = np.flatnonzero(k == bucket)
        keep[at[self.in_bucket[shard]:]] = True
        return np.flatnonzero(keep)


def group_condition(field: str, value: Any, kind: str) -> str:
    """A filter selecting the rows of one group: ``field`` (an attribute of type ``kind``)
    equal to ``value``, or holding it (tags)."""
    name = '"%s"' % field.replace('"', '""')
    if kind == "bool":
        literal = "true" if value else "false"
    elif kind == "int":
        literal = str(int(value))
    else:
        literal = "'%s'" % str(value).replace("'", "''")
    return "%s %s %s" % (name, "CONTAINS" if kind == "tags" else "=", literal)


def and_filters(first: str, second: str) -> str:
    return second if not first.strip() else "(%s) AND %s" % (first, second)
