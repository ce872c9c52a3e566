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

    ``ids, distances = coll.search(...)`` unpacks the two arrays.
    """

    __slots__ = ("ids", "distances", "counts", "plan", "rows")

    def __init__(self, ids: np.ndarray, distances: np.ndarray, counts: np.ndarray,
                 plan: dict[str, Any] | None = None) -> None:
        self.ids = ids
        self.distances = distances
        self.counts = counts
        self.plan = plan
        # With search(include=...): per query, the neighbours' rows (dicts), best first.
        self.rows: list[list[dict[str, Any]]] | None = None

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
