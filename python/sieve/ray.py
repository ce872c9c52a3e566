"""One collection over many hosts, on Ray: :class:`ShardedCollection`.

A sharded collection is ``shards`` Sieve databases, one per Ray actor, each on the disk of
the node its actor runs on (``path/NAME/shard-NNNN``), each holding the rows whose ids hash to
it.
The driver (the process that made the :class:`ShardedCollection`) only routes and merges:

- ``ingest``, ``upsert``, ``get`` and ``delete(ids=...)`` send each row to the shard its id
  hashes to (:func:`shard_of`: a stable hash, fixed by the shard count at creation);
- ``search`` sends the queries and the filter text to every shard; each plans on its own exact
  passing-row count and returns its top k, and the driver merges them exactly on (distance,
  id) in the metric's order, so the answer is the one a single collection holding every row
  gives;
- ``count``, ``delete(filter=...)`` and ``update`` go to every shard and add up;
- range search, pages and group-by (``search(radius=...)``, ``offset``/``after``,
  ``group_by``) merge the shards' answers into one collection's (see
  :meth:`ShardedCollection.search` and sieve._ray_shapes); ``snapshot()`` takes a snapshot on every shard. Text and hybrid
  queries are refused (NotSupported): BM25 statistics are per shard.

::

    import ray, sieve.ray
    ray.init()
    items = sieve.ray.ShardedCollection.create(
        "items", "/data/sieve", shards=8, dim=768, metric="ip", dtype="f16",
        attributes={"price": "float", "color": "string"})
    items.ingest(vectors, attributes={"price": prices, "color": colors}, ids=ids)
    ids, distances = items.search(queries, k=10, filter="price < 20 AND color = 'red'")

Rows without ids get them from the driver as one collection would assign them (see
:meth:`ShardedCollection.ingest`). ``sieve`` must be importable on every node.

Placement: shard ``i`` is pinned to one node (hard node affinity, nodes taken in address
order, spread evenly), so that Ray restarts it where its directory is. Each actor asks for
``num_cpus`` CPUs and ``num_gpus`` GPUs (default: one GPU each when the cluster has at least one
GPU per shard, else none); with a GPU its searches with ``device="auto"`` run there.

Failures: an actor that dies is restarted by Ray (``max_restarts``, unbounded by default) and
reopens its shard from disk; one that Ray will not restart (``ray.kill(actor)``, its restarts
used up) is started anew by the driver on its node at the next call that finds it dead, and
reopens its shard the same way. What any call acknowledged is durable there. While a shard is
down:

- **by default a call waits**, retrying the shard until it answers or ``timeout_s`` (60 s
  unless given) has passed, then raises :class:`sieve.Unavailable` naming the shards that did
  not answer;
- ``search(..., partial=True)`` asks every shard once and returns what answered within
  ``timeout_s``: ``result.coverage < 1``, ``result.answered`` and ``result.missing`` name the
  shards.

A write retried after its shard restarted is idempotent: an ingest's part goes again as an
upsert (the rows the first attempt committed are replaced by themselves, so that shard counts
them among its deleted rows until :meth:`ShardedCollection.compact`), deletes and updates set
the same state again (their counts then leave out rows the lost attempt had changed).
Bad input changes no shard: every shard's part is checked (``validate_only``) before any is
written. A write that times out raises Unavailable naming the shards that had not
acknowledged; those hold whole batches of their part, and repeating the call with
``upsert=True`` completes it.
"""

from __future__ import annotations

import heapq
import json
import os
import shutil
import socket
import threading
import time
import warnings
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

import numpy as np
import ray
import ray.exceptions
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from . import _arrays, _columns, errors
from . import _ray_shapes as _shapes
from ._results import Group, GroupedResult, SearchResult

__all__ = ["ShardedCollection", "ShardedSearchResult", "ShardedSnapshot", "shard_of"]

# Part of a sharded collection's layout: changing it moves rows to other shards.
_ROUTE_SALT = np.uint64(0x243F6A8885A308D3)
_LAYOUT = "sieve.ray/1 splitmix64(id ^ 0x243f6a8885a308d3) % shards"
_ERRORS = {cls.code: cls for cls in (
    errors.NotFound, errors.Corruption, errors.NotSupported, errors.InvalidArgument,
    errors.IOError, errors.AlreadyExists, errors.ResourceExhausted, errors.Unavailable,
    errors.Internal, errors.Unauthorized)}
# What a call to an actor that died or is restarting raises: retried, or (partial) left out.
_DOWN = (ray.exceptions.RayActorError, ray.exceptions.WorkerCrashedError,
         ray.exceptions.NodeDiedError, ray.exceptions.ObjectLostError,
         ray.exceptions.ActorUnschedulableError)


def shard_of(ids: Any, shards: int) -> np.ndarray:
    """The shard (0 .. shards-1) of each id: splitmix64 of the id xor a salt, modulo the shard
    count. The salt keeps it independent of the engine's own split of a database into shards
    (which hashes the plain id), so a shard's rows still spread over its internal shards."""
    z = _arrays.ids(ids).view(np.uint64) ^ _ROUTE_SALT
    z = z + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return (z % np.uint64(shards)).astype(np.int64)


class ShardedSearchResult(SearchResult):
    """A :class:`sieve.SearchResult` merged from the shards of a :class:`ShardedCollection`.

    Attributes (beyond SearchResult's):
        coverage: the fraction of shards whose rows the result covers (1.0 unless
            ``partial=True`` and a shard did not answer).
        answered: the shards that answered, ascending.
        missing: the shards that did not, ascending, with ``reasons[shard]`` saying why.
        plan: with ``explain=True``: ``{"passing_rows", "filter_mode", "coverage",
            "stages_ms", "shards": [{"shard", "node", "ms", "plan"}, ...]}``, each ``plan`` the
            shard database's own (``path``, ``passing_rows``, its internal shards, ...).
    """

    __slots__ = ("coverage", "answered", "missing", "reasons")

    def __init__(self, ids: np.ndarray, distances: np.ndarray, counts: np.ndarray,
                 plan: dict[str, Any] | None, answered: list[int], missing: list[int],
                 reasons: dict[int, str], shards: int) -> None:
        super().__init__(ids, distances, counts, plan)
        self.answered = answered
        self.missing = missing
        self.reasons = reasons
        self.coverage = len(answered) / shards if shards else 1.0

    def __repr__(self) -> str:
        return SearchResult.__repr__(self)[:-1] + ", coverage=%.3g)" % self.coverage


class ShardedSnapshot:
    """A snapshot of every shard of a :class:`ShardedCollection` (its :meth:`snapshot
    <ShardedCollection.snapshot>`): pass it as ``snapshot=`` to its ``search`` and ``count``.

    Attributes: ``numbers`` ({shard: the number of its database's snapshot}). Release it when
    done: :meth:`release`, or a ``with`` block.
    """

    def __init__(self, collection: "ShardedCollection", numbers: Mapping[int, int]) -> None:
        self._collection = collection
        self.numbers = dict(numbers)
        self._released = False

    @property
    def released(self) -> bool:
        """Whether :meth:`release` was called."""
        return self._released

    def release(self) -> None:
        """Releases every shard's snapshot (later calls do nothing)."""
        if not self._released:
            self._released = True
            self._collection._release(self.numbers)

    def __enter__(self) -> "ShardedSnapshot":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.release()

    def __repr__(self) -> str:
        return "sieve.ray.ShardedSnapshot(%r%s)" % (self.numbers,
                                                   ", released" if self._released else "")


def _row_list(answer: tuple, query: int) -> tuple[np.ndarray, np.ndarray]:
    """One query's (ids, distances) from a shard's answer (ids, distances, counts, ...)."""
    n = int(answer[2][query])
    return answer[0][query, :n], answer[1][query, :n]


class _SearchCall:
    """One search's calls to the shards: the queries (put into the object store once), the
    snapshot numbers, and what the result needs from them."""

    def __init__(self, coll: "ShardedCollection", queries: np.ndarray,
                 snapshots: dict[int, int] | None, explain: bool, partial: bool,
                 timeout_s: float | None, t0: float) -> None:
        self.coll = coll
        self.queries = queries
        self.snapshots = snapshots
        self.explain = explain
        self.partial = bool(partial)
        self.timeout_s = coll.timeout_s if timeout_s is None else float(timeout_s)
        self.t0 = t0
        self.include: str | None = None
        self.missing: dict[int, str] = {}
        self.last: dict[int, Any] = {}
        self._ref = None

    def no_partial(self, what: str) -> None:
        if self.partial:
            raise errors.InvalidArgument(
                "partial=True takes plain and range searches only: %s needs every shard's "
                "answer" % what)

    def run(self, kwargs: "dict[str, Any] | Callable[[int], dict[str, Any]]", *,
            queries: np.ndarray | None = None, hold: bool = False,
            release: bool = False) -> dict[int, Any]:
        """Every shard's answer to Collection.search(**kwargs) (a dict, or a function of the
        shard): {shard: (kind, value, plan, ms, held snapshot)}."""
        kwargs_of = kwargs if callable(kwargs) else (lambda s: kwargs)
        if queries is None:
            if self._ref is None:
                self._ref = ray.put(self.queries)
            ref = self._ref
        else:
            ref = ray.put(queries)
        snaps = None if hold else self.snapshots
        values, missing, failed = self.coll._fanout(
            "run_search",
            lambda s: (ref, kwargs_of(s), None if snaps is None else snaps[s], hold, release),
            range(self.coll.shards), partial=self.partial, timeout_s=self.timeout_s)
        if hold and (failed or (missing and not self.partial)):
            self.coll._release({s: v[4] for s, v in values.items()})
        if failed:
            raise _first_error(failed, len(values) + len(missing))
        if missing and not self.partial:
            raise self.coll._unavailable("search", missing, self.timeout_s)
        self.missing = missing
        self.last = values
        return values

    def refuse(self, kwargs: dict[str, Any]) -> None:
        """Sends a request the driver will not merge (bad arguments) to the shards as it is,
        so that the engine's own error comes back; raises it."""
        self.partial = False
        self.run(kwargs)
        raise errors.Internal("sieve.ray: the shards took a search the driver refuses: %s"
                              % sorted(k for k, v in kwargs.items() if v is not None))

    def shard_plans(self, values: dict[int, Any]) -> list[dict[str, Any]]:
        return [{"shard": s, "node": self.coll.nodes[s], "ms": round(values[s][3], 3),
                 "plan": values[s][2]} for s in sorted(values)]

    def result(self, ids: np.ndarray, distances: np.ndarray, counts: np.ndarray,
               rows: list | None, t_merge: float, values: dict[int, Any] | None = None
               ) -> ShardedSearchResult:
        values = self.last if values is None else values
        answered = sorted(values)
        plan = None
        if self.explain:
            shard_plans = self.shard_plans(values)
            now = time.perf_counter()
            plan = {"passing_rows": sum(p["plan"].get("passing_rows", 0) for p in shard_plans
                                        if isinstance(p["plan"].get("passing_rows"), int)),
                    "filter_mode": shard_plans[0]["plan"].get("filter_mode", "")
                    if shard_plans else "",
                    "path": shard_plans[0]["plan"].get("path", "") if shard_plans else "",
                    "coverage": len(answered) / self.coll.shards,
                    "stages_ms": {"shards": round((t_merge - self.t0) * 1e3, 3),
                                  "merge": round((now - t_merge) * 1e3, 3),
                                  "total": round((now - self.t0) * 1e3, 3)},
                    "shards": shard_plans}
        result = ShardedSearchResult(ids, distances, counts, plan, answered,
                                     sorted(self.missing), self.missing, self.coll.shards)
        result.rows = rows
        return result


def _error(code: str, message: str) -> errors.Error:
    return _ERRORS.get(code, errors.Internal)(message)


def _first_error(failed: list[tuple[int, str, str]], others: int) -> errors.Error:
    """The error of the lowest shard that failed; named by shard unless every shard asked
    refused with the same message (bad arguments: the message one collection gives)."""
    i, code, message = failed[0]
    if others == 0 and all((c, m) == (code, message) for _, c, m in failed):
        return _error(code, message)
    return _error(code, "shard %d: %s" % (i, message))


def _guarded(method: Callable) -> Callable:
    """An actor method that returns ("ok", value) or ("error", code, message) instead of
    raising, so that the driver raises the engine's own exception class."""

    def run(self, *args, **kwargs):
        if self._error is not None:
            return ("error",) + self._error
        try:
            return ("ok", method(self, *args, **kwargs))
        except errors.Error as e:
            return ("error", e.code, str(e))
        except Exception as e:  # a bug: say what it was rather than lose the actor
            return ("error", "Internal", "%s: %s" % (type(e).__name__, e))

    run.__name__ = method.__name__
    run.__doc__ = method.__doc__
    return run


def _was_restarted() -> bool:
    """Whether this actor is a restart (Ray's was_current_actor_reconstructed). Ray 2.60's
    property reads its own deprecated ``actor_id`` and so printed a RayDeprecationWarning from
    every shard; that warning, and only it, is silenced here."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="This API is deprecated",
                                category=DeprecationWarning)
        return bool(ray.get_runtime_context().was_current_actor_reconstructed)


class _Shard:
    """One shard: a Sieve database at ``path/NAME/shard-NNNN`` on this node holding the
    collection NAME, and beside it ``shard-NNNN.json`` saying which shard of how many it is.
    A constructor that fails keeps its error and answers every call with it."""

    def __init__(self, path: str, name: str, shard: int, shards: int,
                 spec: dict[str, Any] | None, create: bool,
                 db_options: dict[str, Any] | None = None) -> None:
        import sieve

        self._error: tuple[str, str] | None = None
        self._db = None
        self._snapshots: dict[int, Any] = {}  # sieve.Snapshot by number, held for the driver
        self.reconstructed = _was_restarted()
        self.dir = os.path.join(path, name, "shard-%04d" % shard)
        self.where = "%s on %s" % (self.dir, socket.gethostname())
        try:
            marker = self.dir + ".json"
            mine = {"layout": _LAYOUT, "collection": name, "shard": shard, "shards": shards}
            if os.path.exists(marker):
                with open(marker) as f:
                    found = json.load(f)
                if found != mine:
                    raise errors.InvalidArgument(
                        "%s: the directory holds %s, not %s" % (self.where, found, mine))
            elif not create or self.reconstructed:
                # A restarted actor never starts an empty shard where its rows should be.
                raise errors.NotFound("%s: no shard of collection %r here (%s is missing)"
                                      % (self.where, name, marker))
            os.makedirs(os.path.dirname(self.dir), exist_ok=True)
            # The process this one replaces may still hold the database's lock for a moment.
            deadline = time.monotonic() + 30
            while True:
                try:
                    self._db = sieve.open(self.dir, create=create and not self.reconstructed,
                                          **(db_options or {}))
                    break
                except errors.IOError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.2)
            if name not in self._db:
                if spec is None or not create:
                    raise errors.NotFound("%s: the database has no collection %r"
                                          % (self.where, name))
                self._db.create_collection(name, **spec)
            self.coll = self._db[name]
            if spec is not None:
                have = {"dim": self.coll.dim, "metric": self.coll.metric,
                        "dtype": self.coll.dtype, "shards": self.coll.shards,
                        "attributes": list(self.coll.attributes.items())}
                want = dict(spec, attributes=[tuple(a) for a in spec["attributes"]])
                have["attributes"] = [tuple(a) for a in have["attributes"]]
                if any(have[key] != want[key] for key in have):
                    raise errors.AlreadyExists(
                        "%s: collection %r exists with %s, not %s" % (self.where, name, have, want))
            if not os.path.exists(marker):
                tmp = marker + ".tmp"
                with open(tmp, "w") as f:
                    json.dump(mine, f)
                    f.flush()
                    os.fsync(f.fileno())
                os.replace(tmp, marker)
        except errors.Error as e:
            self._error = (e.code, str(e))
        except Exception as e:
            self._error = ("Internal", "%s: %s: %s" % (self.where, type(e).__name__, e))

    @_guarded
    def info(self) -> dict[str, Any]:
        c = self.coll
        return {"pid": os.getpid(), "node": ray.get_runtime_context().get_node_id(),
                "host": socket.gethostname(), "dir": self.dir,
                "reconstructed": self.reconstructed,
                "spec": {"dim": c.dim, "metric": c.metric, "dtype": c.dtype,
                         "shards": c.shards, "attributes": list(c.attributes.items())}}

    @_guarded
    def write(self, vectors: np.ndarray, ids: np.ndarray, columns: list | None,
              batch_rows: int, upsert: bool, validate_only: bool) -> tuple[int, int, int]:
        # The normalized columns (sieve._columns) go straight to the engine: the driver read
        # the caller's dict, DataFrame or Table once.
        return tuple(self.coll._core.ingest(self.coll._handle, vectors, ids, columns,
                                            int(batch_rows), bool(upsert), False,
                                            bool(validate_only)))

    @_guarded
    def run_search(self, queries: np.ndarray, kwargs: dict[str, Any], snapshot: int | None,
                   hold: bool, release: bool) -> tuple:
        """Collection.search with ``kwargs`` under snapshot ``snapshot`` (None: the latest;
        ``hold``: a new one, kept and its number returned; ``release``: released afterwards).
        Returns (kind, value, plan, ms, snapshot number or None)."""
        t0 = time.perf_counter()
        if hold:
            snapshot = self._take()
        try:
            r = self.coll.search(queries, snapshot=self._snapshot(snapshot), **kwargs)
        finally:
            if release and snapshot is not None:
                self._give_back(snapshot)
        ms = (time.perf_counter() - t0) * 1e3
        if hasattr(r, "groups"):
            value = [[(g.value, g.ids, g.distances, g.rows) for g in gs] for gs in r.groups]
            return "groups", value, r.plan, ms, snapshot if hold else None
        return ("rows", (r.ids, r.distances, r.counts, r.rows, r.limit_reached, r.next),
                r.plan, ms, snapshot if hold else None)

    def _snapshot(self, number: int | None) -> Any:
        if number is None:
            return None
        snap = self._snapshots.get(number)
        if snap is None:
            raise errors.InvalidArgument(
                "%s: snapshot %d is not held here (released, or this shard's actor restarted "
                "since it was taken: take a new one)" % (self.where, number))
        return snap

    def _take(self) -> int:
        snap = self._db.snapshot()
        self._snapshots[snap.id] = snap
        return snap.id

    def _give_back(self, number: int) -> None:
        snap = self._snapshots.pop(number, None)
        if snap is not None:
            snap.release()

    @_guarded
    def take_snapshot(self) -> int:
        return self._take()

    @_guarded
    def release_snapshot(self, number: int) -> None:
        self._give_back(number)

    @_guarded
    def count(self, filter: str, snapshot: int | None = None) -> int:
        return self.coll.count(filter or None, snapshot=self._snapshot(snapshot))

    @_guarded
    def get(self, ids: np.ndarray, include: str) -> list:
        return self.coll.get(ids, include=include)

    @_guarded
    def delete(self, ids: np.ndarray | None, filter: str | None) -> int:
        return self.coll.delete(ids=ids, filter=filter)

    @_guarded
    def update(self, assignments: dict[str, Any], ids: np.ndarray | None,
               filter: str | None) -> int:
        return self.coll.update(assignments, ids=ids, filter=filter)

    @_guarded
    def stats(self) -> dict[str, Any]:
        return self.coll.stats()

    @_guarded
    def id_state(self) -> tuple[int, int]:
        return tuple(self.coll._core.id_state(self.coll._handle))

    @_guarded
    def scan_page(self, filter: str, include: str, after: int | None, limit: int) -> tuple:
        return tuple(self.coll._core.scan(self.coll._handle, filter, include, after, int(limit)))

    @_guarded
    def compact(self, force: bool = False) -> dict[str, Any]:
        return self.coll.compact(force=force)

    @_guarded
    def drop(self) -> None:
        self._db.drop_collection(self.coll.name)
        self._db.close()
        self._db = None
        os.remove(self.dir + ".json")
        shutil.rmtree(self.dir)

    def close(self) -> None:
        if self._db is not None:
            self._db.close()


_ShardActor = ray.remote(_Shard)


def _take_columns(columns: list | None, idx: np.ndarray) -> list | None:
    """The normalized columns (sieve._columns.normalize) of the rows at positions ``idx``."""
    if columns is None:
        return None
    out: list = []
    for c in columns:
        if c is None:
            out.append(None)
        elif c[0] == "objects":
            values = c[1]
            out.append(("objects", [values[i] for i in idx.tolist()]))
        elif c[0] == "utf8":
            offsets, data, mask = c[1].astype(np.int64), c[2], c[3]
            starts = offsets[idx]
            lengths = offsets[idx + 1] - starts
            new_offsets = np.zeros(len(idx) + 1, dtype=np.int64)
            np.cumsum(lengths, out=new_offsets[1:])
            picks = np.repeat(starts - new_offsets[:-1], lengths) + np.arange(new_offsets[-1])
            m = None if mask is None else mask[idx]
            out.append(("utf8", new_offsets, np.ascontiguousarray(data[picks]),
                        m if m is not None and m.any() else None))
        else:
            kind, values, mask = c
            m = None if mask is None else mask[idx]
            out.append((kind, np.ascontiguousarray(values[idx]),
                        m if m is not None and m.any() else None))
    return out


def _row_error(code: str, message: str, positions: np.ndarray) -> tuple[int, errors.Error]:
    """A shard's error about its part of an ingest, with its "row N" (the part's row) made the
    caller's row number; and that number, so that the first bad row of the whole input is the
    one reported, as one collection would."""
    if message.startswith("row "):
        digits = message[4:].split(":", 1)[0].split(",", 1)[0]
        if digits.isdigit() and int(digits) < len(positions):
            row = int(positions[int(digits)])
            return row, _error(code, "row %d%s" % (row, message[4 + len(digits):]))
    return 1 << 62, _error(code, message)


class ShardedCollection:
    """One collection split over ``shards`` Ray actors (see the module's description).

    Thread-safe: several threads may call it at once (each actor runs up to
    ``max_concurrency`` calls at a time; the engine itself is thread-safe).

    Attributes: ``name``, ``path``, ``shards`` (the count), ``dim``, ``metric``, ``dtype``,
    ``attributes`` ({name: type}), ``timeout_s``, ``retries`` (shard calls sent again after
    their actor died) and ``revived`` (actors the driver started anew because Ray would not
    restart them, e.g. after ``ray.kill``): for monitoring and tests.
    """

    def __init__(self, name: str, path: str | os.PathLike, shards: int, *,
                 dim: int | None = None, metric: str = "l2", dtype: str = "f32",
                 attributes: Mapping[str, str] | Sequence[tuple[str, str]] | None = None,
                 local_shards: int = 1, create: bool | None = None, num_cpus: float = 1,
                 num_gpus: float | None = None,
                 max_restarts: int = -1, max_concurrency: int = 4, timeout_s: float = 60.0,
                 nodes: Sequence[str] | None = None,
                 db_options: Mapping[str, Any] | None = None) -> None:
        """Opens the sharded collection ``name`` under ``path``, creating its missing shards
        when ``dim`` is given (``create=None``: create exactly when ``dim`` is given).

        Args:
            path: a directory on every node; shard ``i`` lives in ``path/NAME/shard-NNNN``.
            shards: the number of shards (actors), fixed at creation.
            dim, metric, dtype, attributes: the schema, as :meth:`sieve.Database.create_collection`.
            local_shards: the shards of each actor's own database (the engine's shards, which
                its devices search concurrently).
            num_cpus, num_gpus: Ray resources per actor (``num_gpus=None``: 1 when the cluster
                has a GPU per shard, else 0).
            max_restarts: how often Ray restarts a dead actor (-1: always).
            max_concurrency: calls one actor runs at once.
            timeout_s: how long a call waits for shards that are down (see the module); a call
                that a live shard is running is waited for however long it takes.
            nodes: the Ray node id of each shard (default: the alive nodes in address order,
                shards spread evenly over them).
            db_options: keyword arguments of :func:`sieve.open` for each shard's database
                (``devices``, ``cpu_executors``, ``device_memory_bytes``): an actor with
                ``num_gpus=8`` and ``local_shards=16`` spreads its shards over its 8 GPUs.

        Raises:
            InvalidArgument: a bad shard count or schema, or a shard directory that holds
                another shard.
            NotFound: without ``dim``, a shard that does not exist.
            AlreadyExists: a shard holds the collection with another schema.
            Unavailable: an actor could not be started within ``timeout_s``.
        """
        if int(shards) < 1:
            raise errors.InvalidArgument("shards must be at least 1, got %r" % (shards,))
        if not name or "/" in name or "\\" in name or name in (".", ".."):
            raise errors.InvalidArgument("collection name %r cannot name a directory" % (name,))
        if not ray.is_initialized():
            ray.init()
        self.name = name
        self.path = os.path.abspath(os.fspath(path))
        self.shards = int(shards)
        self.timeout_s = float(timeout_s)
        self.retries = 0
        self._id_lock = threading.Lock()
        if create is None:
            create = dim is not None
        spec = None
        if dim is not None:
            pairs = (list(attributes.items()) if isinstance(attributes, Mapping)
                     else list(attributes or []))
            spec = {"dim": int(dim), "metric": metric, "dtype": dtype,
                    "attributes": [(str(a), str(t)) for a, t in pairs],
                    "shards": int(local_shards)}
        if num_gpus is None:
            num_gpus = 1 if ray.cluster_resources().get("GPU", 0) >= self.shards else 0
        if nodes is None:
            nodes = self._spread(num_cpus, num_gpus)
        elif len(nodes) != self.shards:
            raise errors.InvalidArgument("nodes: %d node ids for %d shards"
                                         % (len(nodes), self.shards))
        self.nodes = list(nodes)
        self._actors = []
        self._actor_options = dict(num_cpus=num_cpus, num_gpus=num_gpus,
                                   max_restarts=max_restarts, max_task_retries=0,
                                   max_concurrency=max_concurrency)
        self._db_options = dict(db_options or {})
        self._spec = spec
        self._revive_lock = threading.Lock()
        self.revived = 0
        for i in range(self.shards):
            self._actors.append(self._start(i, bool(create)))
        try:
            infos = self._each("info", lambda i: ())
            first = infos[0]["spec"]
            for i, info in infos.items():
                if info["spec"] != first:
                    raise errors.Corruption("shard %d holds collection %r with %s, shard 0 with %s"
                                            % (i, name, info["spec"], first))
        except BaseException:
            self._kill()
            raise
        self.dim: int = first["dim"]
        self.metric: str = first["metric"]
        self.dtype: str = first["dtype"]
        self.attributes: dict[str, str] = dict(first["attributes"])
        self._schema = list(self.attributes)

    @classmethod
    def create(cls, name: str, path: str | os.PathLike, shards: int, dim: int,
               metric: str = "l2", dtype: str = "f32",
               attributes: Mapping[str, str] | Sequence[tuple[str, str]] | None = None,
               **options: Any) -> "ShardedCollection":
        """Creates the collection on ``shards`` new actors (``options``: the constructor's) (AlreadyExists when a shard exists
        with another schema; an existing shard with the same schema is opened)."""
        return cls(name, path, shards, dim=dim, metric=metric, dtype=dtype,
                   attributes=attributes, create=True, **options)

    @classmethod
    def open(cls, name: str, path: str | os.PathLike, shards: int,
             **options: Any) -> "ShardedCollection":
        """Opens an existing sharded collection from its shards' directories (NotFound when
        one is missing)."""
        return cls(name, path, shards, create=False, **options)

    # -- placement and fan-out --------------------------------------------------------------

    def _start(self, i: int, create: bool) -> Any:
        """A new actor for shard i on its node (creating the shard only when `create`)."""
        strategy = NodeAffinitySchedulingStrategy(self.nodes[i], soft=False)
        return _ShardActor.options(scheduling_strategy=strategy, **self._actor_options).remote(
            self.path, self.name, i, self.shards, self._spec, create, self._db_options)

    def _revive(self, i: int, dead: Any) -> None:
        """Replaces shard i's actor, which Ray will not restart (``ray.kill``, or its restarts
        used up), by a new one that reopens the shard from its directory."""
        with self._revive_lock:
            if self._actors and self._actors[i] is dead:
                self._actors[i] = self._start(i, create=False)
                self.revived += 1

    def _spread(self, num_cpus: float, num_gpus: float) -> list[str]:
        alive = [n for n in ray.nodes() if n.get("Alive")]
        fit = [n for n in alive
               if n["Resources"].get("CPU", 0) >= num_cpus
               and n["Resources"].get("GPU", 0) >= num_gpus]
        if not fit:
            raise errors.Unavailable(
                "no alive Ray node has %g CPUs and %g GPUs for a shard (nodes: %s)"
                % (num_cpus, num_gpus, [n["Resources"] for n in alive]))
        fit.sort(key=lambda n: (n["NodeManagerAddress"], n["NodeID"]))

        def slots(n: dict) -> float:
            r = n["Resources"]
            return r.get("GPU", 0) / num_gpus if num_gpus else r.get("CPU", 0) / max(num_cpus, 1e-9)

        used = [0] * len(fit)
        out = []
        for _ in range(self.shards):
            j = min(range(len(fit)), key=lambda j: (used[j] / max(slots(fit[j]), 1e-9), j))
            used[j] += 1
            out.append(fit[j]["NodeID"])
        return out

    def _fanout(self, method: str, args_of: Callable[[int], tuple], shards: Iterable[int],
                *, partial: bool = False, timeout_s: float | None = None,
                retry_args: Callable[[int], tuple] | None = None
                ) -> tuple[dict[int, Any], dict[int, str], list[tuple[int, str, str]]]:
        """Calls ``method`` on each shard; returns ({shard: value}, {shard: why it did not
        answer}, [(shard, code, message) of each engine error]).

        A shard whose actor is down is called again (with ``retry_args`` when given) after a
        short wait, until ``timeout_s`` has passed; a call that a live actor is running is
        waited for however long it takes (Ray raises on it if the actor dies). With
        ``partial``, a shard that is down is left out at once and ``timeout_s`` bounds the
        whole call."""
        if not self._actors:
            raise errors.InvalidArgument("sieve.ray: collection %r is closed" % self.name)
        timeout = self.timeout_s if timeout_s is None else float(timeout_s)
        deadline = time.monotonic() + timeout
        pending: dict[Any, int] = {}
        attempts: dict[int, int] = {}
        retry_at: dict[int, float] = {}
        values: dict[int, Any] = {}
        down: dict[int, str] = {}
        failed: list[tuple[int, str, str]] = []

        handle: dict[int, Any] = {}

        def submit(i: int) -> None:
            args = args_of(i) if attempts.get(i, 0) == 0 or retry_args is None else retry_args(i)
            handle[i] = self._actors[i]
            pending[getattr(handle[i], method).remote(*args)] = i

        for i in shards:
            submit(i)
        while pending or retry_at:
            now = time.monotonic()
            for i, t in list(retry_at.items()):
                if t <= now:
                    del retry_at[i]
                    if now < deadline:
                        self.retries += 1
                        submit(i)
            if partial and now >= deadline:
                break
            wait = None
            if retry_at:
                wait = max(0.0, min(retry_at.values()) - now)
            if partial:
                wait = deadline - now if wait is None else min(wait, deadline - now)
            if not pending:
                if wait is not None:
                    time.sleep(wait)
                continue
            ready, _ = ray.wait(list(pending), num_returns=1, timeout=wait)
            for ref in ready:
                i = pending.pop(ref)
                try:
                    out = ray.get(ref)
                except _DOWN as e:
                    down[i] = "%s: %s" % (type(e).__name__, str(e).splitlines()[0][:300])
                    attempts[i] = attempts.get(i, 0) + 1
                    if isinstance(e, ray.exceptions.ActorDiedError):
                        self._revive(i, handle[i])  # dead for good: Ray will not restart it
                    if not partial:
                        retry_at[i] = time.monotonic() + min(0.05 * 2 ** attempts[i], 1.0)
                    continue
                down.pop(i, None)
                if out[0] == "ok":
                    values[i] = out[1]
                else:
                    failed.append((i, out[1], out[2]))
        for i in pending.values():
            down.setdefault(i, "no answer within %g s" % timeout)
        answered = set(values) | {f[0] for f in failed}
        missing = {i: why for i, why in down.items() if i not in answered}
        return values, missing, sorted(failed)

    def _each(self, method: str, args_of: Callable[[int], tuple], *,
              shards: Iterable[int] | None = None,
              retry_args: Callable[[int], tuple] | None = None) -> dict[int, Any]:
        """_fanout that needs every shard: the first engine error is raised as its own class
        with the shard named, and Unavailable names the shards that did not answer."""
        values, missing, failed = self._fanout(
            method, args_of, range(self.shards) if shards is None else shards,
            retry_args=retry_args)
        if failed:
            raise _first_error(failed, len(values) + len(missing))
        if missing:
            raise self._unavailable(method, missing, self.timeout_s)
        return values

    def _unavailable(self, method: str, missing: dict[int, str],
                     timeout_s: float) -> errors.Unavailable:
        return errors.Unavailable(
            "%s: shards %s of collection %r did not answer within %g s (%s)"
            % (method, sorted(missing), self.name, timeout_s,
               "; ".join("shard %d: %s" % kv for kv in sorted(missing.items()))))

    def _route(self, ids: np.ndarray) -> dict[int, np.ndarray]:
        """Shard → the positions of its ids, ascending."""
        of = shard_of(ids, self.shards)
        order = np.argsort(of, kind="stable")
        bounds = np.searchsorted(of[order], np.arange(self.shards + 1))
        return {s: order[bounds[s]:bounds[s + 1]] for s in range(self.shards)
                if bounds[s + 1] > bounds[s]}

    # -- rows ---------------------------------------------------------------------------------

    def ingest(self, vectors: Any, attributes: Any = None, ids: Any = None, *,
               batch_rows: int = 65536, upsert: bool = False,
               auto_ids: bool = False) -> "IngestResult":
        """Adds rows, each to the shard its id hashes to, as :meth:`sieve.Collection.ingest`.
        Every shard's part is checked before any is written (bad input changes nothing; an
        error names the caller's row), then the parts are written concurrently, in atomic
        durable batches of ``batch_rows`` per shard. Returns the rows ingested, replaced, and
        the collection's live rows afterwards.

        Without ``ids`` the driver assigns them as one collection would: from one past the
        largest id any shard has held (0 for a new collection), in row order; into a
        collection with live rows only with ``auto_ids=True``. This driver assigns ids to one
        such call at a time; two drivers assigning at once would pick the same ids (the second
        then fails on them, writing nothing)."""
        from ._embedded import IngestResult

        v = _arrays.matrix(vectors, "vectors")
        n = v.shape[0]
        if ids is None and upsert:
            raise errors.InvalidArgument("upsert: every row needs an id (give ids)")
        if ids is None:
            with self._id_lock:
                state = self._each("id_state", lambda s: ())
                live = sum(st[1] for st in state.values())
                first = max(st[0] for st in state.values())
                if live > 0 and not auto_ids and n > 0:
                    raise errors.InvalidArgument(
                        "ingest: collection '%s' already has %d live rows and these rows have no "
                        "ids: they would all be added again as new rows (ids from %d); give "
                        "their ids, or ask for new ids explicitly (auto ids)"
                        % (self.name, live, first))
                if first > np.iinfo(np.int64).max - n:
                    raise errors.InvalidArgument("ingest: assigned ids would overflow int64")
                return self.ingest(v, attributes, np.arange(first, first + n, dtype=np.int64),
                                   batch_rows=batch_rows)
        id_array = _arrays.ids(ids)
        if len(id_array) != n:
            raise errors.InvalidArgument("%d ids for %d vectors" % (len(id_array), n))
        if n and v.shape[1] != self.dim:
            raise errors.InvalidArgument("vectors have %d components, the collection has dim %d"
                                         % (v.shape[1], self.dim))
        columns = _columns.normalize(attributes, self._schema, n,
                                     list(self.attributes.values()))
        parts = self._route(id_array)
        part_refs = {s: (ray.put(np.ascontiguousarray(v[idx])),
                         np.ascontiguousarray(id_array[idx]), _take_columns(columns, idx))
                     for s, idx in parts.items()}

        def args(validate: bool, as_upsert: bool) -> Callable[[int], tuple]:
            return lambda s: part_refs[s] + (int(batch_rows), as_upsert, validate)

        # Every part is checked before any is written; the error reported is the one about
        # the caller's first bad row, as one collection reports it.
        _, missing, failed = self._fanout("write", args(True, bool(upsert)), parts)
        if failed:
            raise min((_row_error(code, message, parts[s]) for s, code, message in failed),
                      key=lambda e: e[0])[1]
        if missing:
            raise self._unavailable("ingest", missing, self.timeout_s)
        written = self._each("write", args(False, bool(upsert)), shards=parts,
                             retry_args=args(False, True))
        ingested = sum(w[0] for w in written.values())
        # A part retried as an upsert counts the rows of its own lost attempt as replaced.
        replaced = sum(w[2] for w in written.values()) if upsert else 0
        live = sum(w[1] for w in written.values())
        others = [s for s in range(self.shards) if s not in parts]
        if others:
            live += sum(self._each("count", lambda s: ("",), shards=others).values())
        return IngestResult(ingested, live, replaced)

    def upsert(self, vectors: Any, attributes: Any = None, ids: Any = None, *,
               batch_rows: int = 65536) -> "IngestResult":
        """``ingest(..., upsert=True)``: replaces the live rows with these ids, inserts the
        rest (``replaced`` counts, after a retried shard, the rows its lost attempt wrote)."""
        return self.ingest(vectors, attributes, ids, batch_rows=batch_rows, upsert=True)

    def get(self, ids: Any, include: str = "*") -> list[dict[str, Any] | None]:
        """The live rows with these ids, in order (None where there is none), as
        :meth:`sieve.Collection.get`."""
        id_array = _arrays.ids(ids)
        include = _arrays.include_text(include, "*")
        parts = self._route(id_array)
        rows = self._each("get", lambda s: (np.ascontiguousarray(id_array[parts[s]]), include),
                          shards=parts)
        out: list[dict[str, Any] | None] = [None] * len(id_array)
        for s, idx in parts.items():
            for pos, row in zip(idx.tolist(), rows[s]):
                out[pos] = row
        return out

    def __len__(self) -> int:
        return self.count()

    def scan(self, filter: str | None = None, include: str = "*",
             page_rows: int = 10000) -> Iterator[dict[str, Any]]:
        """Every live row passing ``filter``, in ascending id order, as
        :meth:`sieve.Collection.scan`: each shard is read page by page and the pages merged by
        id (memory stays bounded by ``page_rows`` per shard)."""
        include = _arrays.include_text(include, "*")

        def pages(s: int) -> Iterator[dict[str, Any]]:
            after = None
            while True:
                rows, after = self._each("scan_page",
                                         lambda _: (filter or "", include, after, page_rows),
                                         shards=[s])[s]
                yield from rows
                if after is None:
                    return

        return heapq.merge(*(pages(s) for s in range(self.shards)), key=lambda r: r["id"])

    def compact(self, force: bool = False) -> dict[str, Any]:
        """Compacts every shard (:meth:`sieve.Collection.compact`); the figures added up, and
        the shards' notes (``"shard N: ..."``) joined."""
        done = self._each("compact", lambda s: (force,))
        out: dict[str, Any] = {}
        notes = []
        for shard, d in sorted(done.items()):
            for key, value in d.items():
                if key == "note":
                    notes.append(f"shard {shard}: {value}")
                else:
                    out[key] = out.get(key, 0) + value
        if notes:
            out["note"] = "; ".join(notes)
        return out

    def delete(self, ids: Any = None, filter: str | None = None) -> int:
        """Deletes the live rows with these ids, or passing ``filter`` (give exactly one), on
        every shard that holds them; each shard's part is atomic and durable on return.
        Returns the rows deleted."""
        if (ids is None) == (filter is None):
            raise errors.InvalidArgument("give exactly one of ids or filter")
        if ids is not None:
            id_array = _arrays.ids(ids)
            parts = self._route(id_array)
            done = self._each("delete", lambda s: (id_array[parts[s]], None), shards=parts)
        else:
            if not filter:
                raise errors.InvalidArgument("delete: the filter is empty")
            done = self._each("delete", lambda s: (None, filter))
        return int(sum(done.values()))

    def update(self, set: Mapping[str, Any], ids: Any = None,  # noqa: A002 - the API's word
               filter: str | None = None) -> int:
        """Sets attributes of the live rows with these ids or passing ``filter`` (give
        exactly one), as :meth:`sieve.Collection.update`, on every shard. Returns the rows
        updated."""
        if (ids is None) == (filter is None):
            raise errors.InvalidArgument("give exactly one of ids or filter")
        assignments = dict(set)
        if ids is not None:
            id_array = _arrays.ids(ids)
            parts = self._route(id_array)
            done = self._each("update", lambda s: (assignments, id_array[parts[s]], None),
                              shards=parts)
        else:
            done = self._each("update", lambda s: (assignments, None, filter))
        return int(sum(done.values()))

    # -- search -------------------------------------------------------------------------------

    def snapshot(self) -> "ShardedSnapshot":
        """Takes a snapshot on every shard (:meth:`sieve.Database.snapshot` of each shard's
        database): pass it as ``snapshot=`` to :meth:`search` and :meth:`count` to read one
        version of every shard across calls while writes go on (pages read under one snapshot
        hold every row exactly once). The shards are not frozen at one instant together: each
        shard's snapshot holds the writes that shard had acknowledged when it was taken.
        Release it when done (:meth:`ShardedSnapshot.release` or a ``with`` block); a shard
        whose actor restarts loses it, and a read given it then raises InvalidArgument."""
        return ShardedSnapshot(self, self._each("take_snapshot", lambda s: ()))

    def _snapshot_numbers(self, snapshot: "ShardedSnapshot | None") -> dict[int, int] | None:
        if snapshot is None:
            return None
        if not isinstance(snapshot, ShardedSnapshot) or snapshot._collection is not self:
            raise TypeError("snapshot must be a sieve.ray.ShardedSnapshot of this collection "
                            "(ShardedCollection.snapshot()), not %s" % type(snapshot).__name__)
        if snapshot.released:
            raise errors.InvalidArgument("the snapshot was released")
        return snapshot.numbers

    def count(self, filter: str | None = None, *,
              snapshot: "ShardedSnapshot | None" = None) -> int:
        """The exact number of live rows passing ``filter`` (every live row without one), of
        ``snapshot`` when given."""
        snaps = self._snapshot_numbers(snapshot)
        return int(sum(self._each(
            "count", lambda s: (filter or "", None if snaps is None else snaps[s])).values()))

    def search(self, queries: Any = None, k: int = 10, filter: str | None = None,
               filters: Sequence[str | None] | None = None, device: str = "auto",
               path: str = "auto", explain: bool = False,
               include: str | Sequence[str] | None = None, *,
               snapshot: "ShardedSnapshot | None" = None, text: str | None = None,
               text_field: str | None = None, fusion: str = "rrf", rrf_c: float = 60.0,
               vector_weight: float = 1.0, text_weight: float = 1.0, depth: int = 0,
               group_by: str | None = None, group_size: int = 1,
               group_strategy: str = "auto", radius: float | None = None,
               limit: int | None = None, offset: int | None = None,
               after: str | Sequence[str | None] | None = None,
               partial: bool = False, timeout_s: float | None = None
               ) -> "ShardedSearchResult | GroupedResult":
        """Exact k-nearest-neighbour search over every shard, optionally filtered; or the k
        best groups (``group_by``), a range search (``radius``), or a page (``offset`` or
        ``after``): as :meth:`sieve.Collection.search` (same arguments and result layout),
        with the answer one collection holding every row gives (docs/python.md#many-hosts-sieveray
        says how each shape is merged, and the one way its order can differ).

        The queries (sent once, through Ray's object store) and the filter text go to every
        shard; each plans from its own exact passing-row count and answers, and the driver
        merges the answers on (distance, id) in the metric's order:

        - plain: each shard's best k;
        - ``radius``: each shard's rows within the radius (at most ``limit``);
          ``limit_reached`` is true where a shard reached it or the shards' rows together pass
          it;
        - ``offset``: each shard's best offset + k; ``after``: each shard's rows after the
          cursor. ``result.next`` is a sieve.ray cursor (not an embedded collection's: it holds
          the rows consumed from each shard), valid for this collection only;
        - ``group_by``: two rounds, under one snapshot per shard (taken for the search when
          none is given): each shard's k best groups (by their best rows) decide the k groups,
          then every shard returns each chosen group's ``group_size`` best rows.

        Args:
            snapshot: a :class:`ShardedSnapshot` (:meth:`snapshot`): search its rows.
            text, text_field, fusion, rrf_c, vector_weight, text_weight, depth: refused
                (NotSupported): BM25 statistics are per shard, so a shard's scores are not the
                ones one collection would give.
            partial: False (the default): wait for every shard, retrying shards that are
                down, until ``timeout_s``; then raise Unavailable naming those that did not
                answer. True (plain and range searches only): ask each shard once and return
                what answered within ``timeout_s``, with ``coverage < 1`` and ``missing``
                naming the others.
            timeout_s: default: the collection's ``timeout_s``.

        Raises:
            InvalidArgument: as Collection.search (from the shards: the message one collection
                gives when every shard gave it, else with the shard named); a cursor this
                collection did not give; ``partial`` with group_by, offset or after.
            NotSupported: a text or hybrid query.
            Unavailable: (not ``partial``) a shard did not answer within ``timeout_s``.
        """
        t0 = time.perf_counter()
        k = _arrays.k_value(k)
        include = _arrays.include_text(include)
        filter, per_query = _arrays.search_filters(filter, filters)
        if text is not None or text_field is not None:
            raise errors.NotSupported(
                "sieve.ray: a sharded collection takes no text query (text, text_field): BM25 "
                "scores rest on per-collection statistics (rows, average length, rows holding "
                "each term), which each shard keeps for its own rows only, so merged scores "
                "would differ from one collection's")
        if filter and per_query is not None:
            # The engine's rule, checked before the request is sent to every shard.
            raise errors.InvalidArgument("a search takes one filter for every query (filter) "
                                         "or one per query (filters), not both")
        if queries is None:
            raise errors.InvalidArgument("search: give queries (sieve.ray takes no text query)")
        q = _arrays.matrix(queries, "queries")
        call = _SearchCall(self, q, self._snapshot_numbers(snapshot), bool(explain), partial,
                           timeout_s, t0)
        base = dict(k=k, filter=filter or None, filters=per_query, device=device, path=path,
                    explain=bool(explain), include=include or None)
        call.include = include or None
        if group_by is not None:
            if radius is not None or offset is not None or after is not None:
                raise errors.InvalidArgument(
                    "group_by does not combine with radius, offset or after: a grouped search "
                    "returns the k best groups")
            by, size, strategy = _arrays.group_args(group_by, group_size, group_strategy)
            call.no_partial("group_by")
            grouped = dict(base, group_by=by, group_size=size, group_strategy=strategy)
            if not (1 <= k <= _shapes.MAX_K and 1 <= size <= 100000
                    and k * size <= _shapes.MAX_K):
                call.refuse(grouped)
            return self._search_groups(call, grouped)
        radius, limit, offset, after = _arrays.range_and_pages(radius, limit, offset, after)
        if radius is not None:
            if offset is not None or after is not None:
                call.refuse(dict(base, radius=radius, limit=limit, offset=offset, after=after))
            return self._search_range(call, dict(base, radius=radius, limit=limit))
        if offset is not None or after is not None:
            call.no_partial("offset and after")
            raw = dict(base, offset=offset, after=after)
            if ((offset is not None and after is not None) or not 1 <= k <= _shapes.MAX_K
                    or (offset is not None and not 0 <= offset <= _shapes.MAX_K - k)
                    or (after is not None and len(after) != q.shape[0])):
                call.refuse(raw)
            return self._search_pages(call, base, offset, after)
        return self._search_plain(call, base)

    def _search_plain(self, call: "_SearchCall", base: dict[str, Any]) -> ShardedSearchResult:
        k = base["k"]
        got = call.run(base)
        values = {s: v[1][:3] + (v[2], v[1][3], v[3]) for s, v in got.items()}
        t_merge = time.perf_counter()
        answered = sorted(values)
        q = call.queries
        nq = q.shape[0]
        fill = -np.inf if self.metric == "ip" else np.inf
        if answered:
            ids = np.concatenate([values[s][0] for s in answered], axis=1)
            dist = np.concatenate([values[s][1] for s in answered], axis=1)
            total = sum(values[s][2] for s in answered)
        else:
            ids = np.full((nq, 0), -1, dtype=np.int64)
            dist = np.full((nq, 0), fill, dtype=np.float32)
            total = np.zeros(nq, dtype=np.int64)
        key = -dist.astype(np.float64) if self.metric == "ip" else dist.astype(np.float64)
        order = np.lexsort((ids, key), axis=-1)[:, :k] if ids.shape[1] else ids[:, :0]
        out_ids = np.full((nq, k), -1, dtype=np.int64)
        out_dist = np.full((nq, k), fill, dtype=np.float32)
        width = order.shape[1]
        out_ids[:, :width] = np.take_along_axis(ids, order, axis=1)
        out_dist[:, :width] = np.take_along_axis(dist, order, axis=1)
        counts = np.minimum(np.asarray(total, dtype=np.int64), k)
        valid = np.arange(k)[None, :] < counts[:, None]
        out_ids[~valid] = -1
        out_dist[~valid] = fill
        rows = None
        if base["include"]:
            rows = []
            for qi in range(nq):
                picked = []
                for col in order[qi, :counts[qi]].tolist():
                    s = answered[col // k]
                    picked.append(values[s][4][qi][col % k])
                rows.append(picked)
        return call.result(out_ids, out_dist, counts, rows, t_merge)

    def _search_range(self, call: "_SearchCall", kwargs: dict[str, Any]) -> ShardedSearchResult:
        limit = kwargs["limit"]
        got = call.run(kwargs)
        t_merge = time.perf_counter()
        answered = sorted(got)
        nq = call.queries.shape[0]
        picked, reached = [], []
        for qi in range(nq):
            lists = [_row_list(got[s][1], qi) for s in answered]
            merged = _shapes.merge(lists, self.metric, limit + 1)
            reached.append(len(merged) > limit or any(got[s][1][4][qi] for s in answered))
            picked.append(merged[:limit])
        result = self._padded(call, got, answered, picked, max(
            (len(p) for p in picked), default=0), t_merge)
        result.limit_reached = reached
        return result

    def _search_pages(self, call: "_SearchCall", base: dict[str, Any], offset: int | None,
                      after: list[str] | None) -> ShardedSearchResult:
        k, nq, shards = base["k"], call.queries.shape[0], self.shards
        skip = offset or 0
        states = [_shapes.PageState(shards) if not after or not after[qi] else
                  _shapes.PageState.decode(after[qi], shards, qi, k) for qi in range(nq)]
        # Per shard the rows asked for: the page, the rows before it (offset), and the rows of
        # the cursor's bucket it consumed already (dropped again), doubled while a shard's
        # answer loses more than that to rows rounding into the bucket from the better side.
        asked = [min(_shapes.MAX_K, k + skip + max((st.in_bucket[s] for st in states),
                                                   default=0)) for s in range(shards)]
        while True:
            def kwargs_of(s: int) -> dict[str, Any]:
                if after is None:
                    return dict(base, k=asked[s], offset=0)
                return dict(base, k=asked[s], after=[
                    st.shard_cursor(s, self.metric, asked[s]) for st in states])

            got = call.run(kwargs_of)
            t_merge = time.perf_counter()
            kept: dict[tuple[int, int], np.ndarray] = {}
            short = set()
            for qi, st in enumerate(states):
                for s in range(shards):
                    ids, dist = _row_list(got[s][1], qi)
                    keep = st.after_bucket(dist, s, self.metric)
                    kept[qi, s] = keep
                    if len(ids) == asked[s] and len(keep) < k + skip and asked[s] < _shapes.MAX_K:
                        short.add(s)
            if not short:
                break
            for s in short:
                asked[s] = min(_shapes.MAX_K, 2 * asked[s])
        picked, cursors = [], []
        for qi, st in enumerate(states):
            lists = []
            for s in range(shards):
                ids, dist = _row_list(got[s][1], qi)
                lists.append((ids[kept[qi, s]], dist[kept[qi, s]]))
            merged = _shapes.merge(lists, self.metric, skip + k)
            # Positions in the merge are into the kept rows: map them back to the shard's list.
            merged = [(key, i, s, int(kept[qi, s][j])) for key, i, s, j in merged]
            page = merged[skip:]
            picked.append(page)
            cursors.append(st.advanced(merged, self.metric).encode() if len(page) == k else None)
        result = self._padded(call, got, list(range(shards)), picked, k, t_merge)
        result.next = cursors
        return result

    def _search_groups(self, call: "_SearchCall", kwargs: dict[str, Any]) -> GroupedResult:
        k, size, by = kwargs["k"], kwargs["group_size"], kwargs["group_by"]
        q = call.queries
        nq = q.shape[0]
        held = call.snapshots is None
        try:
            first = call.run(dict(kwargs, group_size=1, include=None), hold=held)
            if held:
                call.snapshots = {s: v[4] for s, v in first.items()}
            # A group in the k best is among the k best of the shard holding its best row, so
            # the shards' k best hold every group of the answer, each with its best row.
            chosen: list[list[Any]] = []
            for qi in range(nq):
                best: dict[Any, tuple[float, int]] = {}
                for s in sorted(first):
                    for value, ids, dist, _ in first[s][1][qi]:
                        key = (float(_shapes.keys(dist[:1], self.metric)[0]), int(ids[0]))
                        if value not in best or key < best[value]:
                            best[value] = key
                chosen.append([v for _, v in sorted((key, v) for v, key in best.items())][:k])
            pairs = [(qi, v) for qi in range(nq) for v in chosen[qi]]
            out: list[list[Group]] = [[] for _ in range(nq)]
            second: dict[int, Any] = {}
            if pairs:
                kind = self.attributes[by]
                call_filters = []
                for qi, value in pairs:
                    own = (kwargs["filters"][qi] if kwargs["filters"] is not None
                           else kwargs["filter"] or "")
                    call_filters.append(_shapes.and_filters(
                        own, _shapes.group_condition(by, value, kind)))
                rows_kwargs = dict(kwargs, k=size, filter=None, filters=call_filters, offset=0)
                for key in ("group_by", "group_size", "group_strategy"):
                    rows_kwargs.pop(key)
                second = call.run(rows_kwargs, queries=q[[qi for qi, _ in pairs]],
                                  release=held)
                held = False
                for p, (qi, value) in enumerate(pairs):
                    merged = _shapes.merge([_row_list(second[s][1], p) for s in sorted(second)],
                                           self.metric, size)
                    ids = np.array([r[1] for r in merged], dtype=np.int64)
                    dist = np.array([second[r[2]][1][1][p, r[3]] for r in merged],
                                    dtype=np.float32)
                    rows = ([second[r[2]][1][3][p][r[3]] for r in merged]
                            if kwargs["include"] else None)
                    out[qi].append(Group(value, ids, dist, rows))
        finally:
            if held and call.snapshots:
                self._release(call.snapshots)
        plan = None
        if call.explain:
            plan = {"shape": "group", "group_by": by, "coverage": 1.0,
                    "stages_ms": {"total": round((time.perf_counter() - call.t0) * 1e3, 3)},
                    "rounds": [call.shard_plans(first)] + ([call.shard_plans(second)]
                                                           if second else [])}
        return GroupedResult(out, plan)

    def _release(self, numbers: Mapping[int, int]) -> None:
        """Releases shard snapshots, not waiting (a shard that is down has lost them)."""
        for s, n in numbers.items():
            if n is not None and s < len(self._actors):
                self._actors[s].release_snapshot.remote(n)

    def _padded(self, call: "_SearchCall", got: dict[int, Any], answered: list[int],
                picked: list[list[tuple[float, int, int, int]]], width: int,
                t_merge: float) -> ShardedSearchResult:
        """A result [queries, width] from each query's merged rows (key, id, shard, position
        in the shard's answer)."""
        nq = len(picked)
        fill = -np.inf if self.metric == "ip" else np.inf
        ids = np.full((nq, width), -1, dtype=np.int64)
        dist = np.full((nq, width), fill, dtype=np.float32)
        counts = np.zeros(nq, dtype=np.int64)
        rows = [] if call.include else None
        for qi, merged in enumerate(picked):
            counts[qi] = len(merged)
            for j, (_, i, s, pos) in enumerate(merged):
                ids[qi, j] = i
                dist[qi, j] = got[s][1][1][qi, pos]
            if rows is not None:
                rows.append([got[s][1][3][qi][pos] for _, _, s, pos in merged])
        return call.result(ids, dist, counts, rows, t_merge, got)


    # -- the collection -----------------------------------------------------------------------

    def stats(self) -> dict[str, Any]:
        """``{"collection", "rows", "deleted_rows", "total_rows", "dim", "metric", "dtype",
        "attributes", "shards", "per_shard": [each shard's stats]}``."""
        per = self._each("stats", lambda s: ())
        parts = [per[s] for s in range(self.shards)]
        return {"collection": self.name,
                "rows": sum(p["rows"] for p in parts),
                "deleted_rows": sum(p["deleted_rows"] for p in parts),
                "total_rows": sum(p["total_rows"] for p in parts),
                "dim": self.dim, "metric": self.metric, "dtype": self.dtype,
                "attributes": dict(self.attributes), "shards": self.shards,
                "per_shard": parts}

    @property
    def actors(self) -> list[Any]:
        """The Ray actor handle of each shard (a copy of the list: the driver replaces an
        actor it has to start anew)."""
        return list(self._actors)

    def shard_info(self) -> list[dict[str, Any]]:
        """Per shard: its actor's ``pid``, Ray ``node``, ``host``, directory (``dir``), whether
        Ray restarted it (``reconstructed``) and the schema it holds."""
        info = self._each("info", lambda s: ())
        return [info[s] for s in range(self.shards)]

    def drop(self) -> None:
        """Removes the collection from every shard, durably, and stops the actors."""
        self._each("drop", lambda s: ())
        self.close()

    def close(self) -> None:
        """Stops the actors (their databases close; everything acknowledged is durable).
        Later calls fail. The collection reopens with :meth:`open`."""
        refs = [a.close.remote() for a in self._actors]
        try:
            ray.wait(refs, num_returns=len(refs), timeout=min(self.timeout_s, 10.0))
        finally:
            self._kill()

    def _kill(self) -> None:
        for a in self._actors:
            try:
                ray.kill(a, no_restart=True)
            except Exception:  # already gone
                pass
        self._actors = []

    def __enter__(self) -> "ShardedCollection":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return "sieve.ray.ShardedCollection(%r, %r, shards=%d, dim=%d, metric=%r)" % (
            self.name, self.path, self.shards, self.dim, self.metric)
