"""Search results, shared by the embedded API and the HTTP client."""

from __future__ import annotations

from typing import Any, Iterator

import numpy as np


class SearchResult:
    """The neighbours of a batch of queries, best first.

    Attributes:
        ids: int64 array [queries, k]. Where fewer than k rows pass a query's filter, the
            missing places hold -1.
        distances: float32 array [queries, k], as the metric defines them (l2: squared
            Euclidean; ip: inner product, larger is better; cosine: 1 - cos). Missing places hold
            +inf (l2, cosine) or -inf (ip): worse than any real result, so rows stay sorted.
            For a text search (``text=``) a float64 array of BM25 scores, and for a hybrid one
            of fused scores: larger is better, -inf where missing.
        counts: int64 array [queries]: how many places of each row are real results. Use it
            (or ``valid``) rather than testing for -1 when -1 is one of your ids.
        plan: the planner's decision and stage times (``explain=True``), else None: a dict
            with at least ``path``, ``passing_rows``, ``device``, ``filter_mode``, ``shards``
            and ``stages_ms``.
        limit_reached: a range search's (``radius``): per query, whether more rows than
            ``limit`` lie within the radius; else None.
        next: a page's (``offset`` or ``after``): per query, the cursor of the next page
            (pass it as ``after``), None where no rows follow; else None.

    ``ids, distances = coll.search(...)`` unpacks the two arrays.
    """

    __slots__ = ("ids", "distances", "counts", "plan", "rows", "limit_reached", "next")

    def __init__(self, ids: np.ndarray, distances: np.ndarray, counts: np.ndarray,
                 plan: dict[str, Any] | None = None) -> None:
        self.ids = ids
        self.distances = distances
        self.counts = counts
        self.plan = plan
        # With search(include=...): per query, the neighbours' rows (dicts), best first.
        self.rows: list[list[dict[str, Any]]] | None = None
        self.limit_reached: list[bool] | None = None
        self.next: list[str | None] | None = None

    @property
    def valid(self) -> np.ndarray:
        """bool array [queries, k]: True where a place holds a real result."""
        k = self.ids.shape[1] if self.ids.ndim == 2 else 0
        return np.arange(k)[None, :] < self.counts[:, None]

    def neighbors(self, query: int) -> tuple[np.ndarray, np.ndarray]:
        """The real results of one query: (ids, distances), each of length counts[query]."""
        n = int(self.counts[query])
        return self.ids[query, :n], self.distances[query, :n]

    def __iter__(self) -> Iterator[np.ndarray]:
        yield self.ids
        yield self.distances

    def __len__(self) -> int:
        return int(self.ids.shape[0])

    def __repr__(self) -> str:
        q, k = self.ids.shape if self.ids.ndim == 2 else (0, 0)
        return "SearchResult(queries=%d, k=%d, results=%d%s)" % (
            q, k, int(self.counts.sum()), ", plan=..." if self.plan is not None else "")


class Group:
    """One group of a grouped search: the rows sharing a value of the ``group_by`` attribute.

    Attributes:
        value: the group's value: an int, str (a string attribute's value, or one tag of a
            tags attribute) or bool.
        ids: int64 array of its nearest passing rows' ids, best first (at most
            ``group_size``).
        distances: float32 array, as :class:`SearchResult`'s.
        rows: with ``include``, the rows as dicts (as :meth:`Collection.get` returns them),
            best first; else None.
    """

    __slots__ = ("value", "ids", "distances", "rows")

    def __init__(self, value: Any, ids: Any, distances: Any,
                 rows: list[dict[str, Any]] | None = None) -> None:
        self.value = value
        self.ids = np.asarray(ids, dtype=np.int64)
        self.distances = np.asarray(distances, dtype=np.float32)
        self.rows = rows

    def __repr__(self) -> str:
        return "Group(value=%r, ids=%s)" % (self.value, self.ids.tolist())


class GroupedResult:
    """The groups of a batch of queries (``search(group_by=...)``).

    Attributes:
        groups: per query, its :class:`Group` list, best first (the group whose best row is
            nearest first; at most k).
        plan: as :class:`SearchResult`'s, with a ``group`` entry (the group plan).

    ``result[q]`` is query q's list; iterating yields each query's list.
    """

    __slots__ = ("groups", "plan")

    def __init__(self, groups: list[list[Group]], plan: dict[str, Any] | None = None) -> None:
        self.groups = groups
        self.plan = plan

    def __getitem__(self, query: int) -> list[Group]:
        return self.groups[query]

    def __iter__(self) -> Iterator[list[Group]]:
        return iter(self.groups)

    def __len__(self) -> int:
        return len(self.groups)

    def __repr__(self) -> str:
        return "GroupedResult(queries=%d, groups=%d%s)" % (
            len(self.groups), sum(len(g) for g in self.groups),
            ", plan=..." if self.plan is not None else "")


def pad(per_query: list[tuple[list[int], list[float]]], k: int, metric: str,
        dtype: Any = np.float32) -> SearchResult:
    """Fills a [queries, k] result from per-query lists (the HTTP client's answers); ``dtype``
    float64 for text and hybrid scores."""
    nq = len(per_query)
    ids = np.full((nq, k), -1, dtype=np.int64)
    fill = -np.inf if metric == "ip" else np.inf
    distances = np.full((nq, k), fill, dtype=dtype)
    counts = np.zeros(nq, dtype=np.int64)
    for q, (qi, qd) in enumerate(per_query):
        m = min(len(qi), k)
        ids[q, :m] = qi[:m]
        distances[q, :m] = qd[:m]
        counts[q] = m
    return SearchResult(ids, distances, counts)
