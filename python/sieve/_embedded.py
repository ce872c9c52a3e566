"""The embedded API: a database opened in this process, through the extension module."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from typing import Any, Iterator, Mapping, NamedTuple, Sequence, Union

from . import _arrays, _arrow, _columns
from ._results import Group, GroupedResult, SearchResult
from . import _sieve
from ._sieve import _DB
from .errors import Corruption, InvalidArgument

AttributeTypes = Union[Mapping[str, str], Sequence[tuple[str, str]]]


class IngestResult(NamedTuple):
    """What an ingest wrote: ``ingested`` rows by this call, ``rows`` live in the collection
    afterwards, ``replaced`` of them live rows an upsert replaced."""

    ingested: int
    rows: int
    replaced: int = 0


def open(path: str | os.PathLike, create: bool = True, *,  # noqa: A001 - sieve.open
         error_if_exists: bool = False, read_only: bool = False,
         devices: Sequence[int] | None = None, cpu_executors: int = 1,
         device_memory_bytes: int = 0, first_use_calibration: str = "unknown",
         first_use_calibration_s: float = 30.0) -> "Database":
    """Opens the database at ``path``, creating it when ``create`` and there is none.

    Only one process may open a database for writing at a time. Use the result as a context
    manager, or call :meth:`Database.close`, to release it.

    ``read_only=True`` writes nothing (no file is created, changed or removed): it works on a
    read-only copy, on a full disk and while another process (``sieve serve``) has the database
    open for writing, and sees what that process had committed when it opened. Writes then
    raise NotSupported; a path without a database is NotFound.

    Devices (docs/gpu-options.md#many-gpus-one-process): a search spreads a collection's shards over
    ``devices`` (CUDA device numbers, one GPU executor each; None: every device present) or,
    on the CPU, over ``cpu_executors`` CPU executors, all searching at once;
    ``device_memory_bytes`` is the resident bytes each device may hold (0: the executor's own
    figure, else no limit).

    ``first_use_calibration`` (docs/planner.md#first-use-calibration): what the first search on
    a GPU does when the database holds no calibration for it: ``"unknown"`` calibrates GPUs
    Sieve ships no thresholds for (a short sweep, at most ``first_use_calibration_s`` seconds,
    announced on standard error and stored in the database), ``"off"`` never does, ``"always"``
    also calibrates GPUs with shipped thresholds.

    Raises:
        NotFound: there is no database at ``path`` and ``create`` is False.
        AlreadyExists / IOError: ``error_if_exists`` and one exists; the path cannot be used,
            or another process holds the database's lock.
        Corruption: its contents are damaged.
        InvalidArgument: a device number outside 0..1023, cpu_executors outside 1..1024,
            first_use_calibration not one of its three modes or a negative time limit.
    """
    p = os.fspath(path)
    if not 1 <= int(cpu_executors) <= 1024:
        raise InvalidArgument("cpu_executors must be 1 to 1024, got %r" % (cpu_executors,))
    if int(device_memory_bytes) < 0:
        raise InvalidArgument("device_memory_bytes must be >= 0, got %r" % (device_memory_bytes,))
    device_list = [int(d) for d in devices] if devices is not None else []
    if any(not 0 <= d <= 1023 for d in device_list):
        raise InvalidArgument("devices: %r holds a number that is not a CUDA device number "
                              "(0 to 1023)" % (list(devices),))
    modes = ("unknown", "off", "always")
    if first_use_calibration not in modes:
        raise InvalidArgument("first_use_calibration must be one of %s, got %r"
                              % (", ".join(modes), first_use_calibration))
    return Database(_DB(p, bool(create), bool(error_if_exists), bool(read_only), device_list,
                        int(cpu_executors), int(device_memory_bytes),
                        modes.index(first_use_calibration), float(first_use_calibration_s)), p)


class Snapshot:
    """One committed version of the whole database, for reads (:meth:`Database.snapshot`).

    Searches, gets, counts and scans given ``snapshot=`` read the rows as they were when it was
    taken, however many writes land meanwhile. It holds memory while writes go on (the images of
    the collections it has read or that were written since), so release it when done:
    :meth:`release`, a ``with`` block, or letting it be collected. Closing the database releases
    it too; a read given a released snapshot raises InvalidArgument.
    """

    def __init__(self, core: Any, db: "Database") -> None:
        self._core = core
        self._db = db

    @property
    def id(self) -> int:
        """Its number, unique among the snapshots of its database."""
        return int(self._core.id)

    @property
    def released(self) -> bool:
        """Whether it was released (or its database closed)."""
        return bool(self._core.released)

    def release(self) -> None:
        """Releases it (later calls do nothing)."""
        self._core.release()

    def __enter__(self) -> "Snapshot":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.release()

    def __repr__(self) -> str:
        return "sieve.Snapshot(%d%s)" % (self.id, ", released" if self.released else "")


def _core_snapshot(snapshot: "Snapshot | None") -> Any:
    if snapshot is None:
        return None
    if not isinstance(snapshot, Snapshot):
        raise TypeError("snapshot must be a sieve.Snapshot (Database.snapshot()), not %s"
                        % type(snapshot).__name__)
    return snapshot._core


class Database:
    """An open Sieve database: named collections of rows (a 64-bit id, a vector and typed,
    nullable attributes).

    Thread-safe: any number of threads may call it at once; the GIL is released while the
    engine works, so searches from several threads run in parallel. Get one with
    :func:`sieve.open`.
    """

    def __init__(self, db: _DB, path: str) -> None:
        self._db = db
        self.path = path

    def __enter__(self) -> "Database":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """Closes the database (after the calls still running return). Everything acknowledged
        is already durable. Later calls raise InvalidArgument."""
        self._db.close()

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._db.closed

    def create_collection(self, name: str, dim: int, metric: str = "l2", dtype: str = "f32",
                          attributes: AttributeTypes | None = None,
                          shards: int = 1, bm25_k1: float = 1.5,
                          bm25_b: float = 0.75) -> "Collection":
        """Creates a collection and returns it.

        Args:
            name: 1 to 128 characters of ``[A-Za-z0-9_-]`` starting with a letter or ``_``,
                neither a filter keyword nor ``id``.
            dim: vector length, 1 to 65536.
            metric: ``"l2"`` (squared Euclidean), ``"ip"`` (inner product, larger is better) or
                ``"cosine"`` (1 - cos).
            dtype: how vectors are stored: ``"f32"``, or ``"f16"`` (rounded to IEEE half on
                ingest; distances use the rounded values).
            attributes: ``{name: type}`` (or a list of pairs), type one of ``"int"`` (int64),
                ``"float"`` (float64), ``"string"``, ``"bool"``, ``"tags"`` (list of strings);
                every attribute is nullable. Their order is the schema's.
            shards: rows are spread over this many shards by a hash of their id.
            bm25_k1, bm25_b: BM25's parameters for text searches (``search(text=...)``): k1 0
                to 1000, b 0 to 1 (:meth:`Collection.set_bm25` changes them).

        Raises:
            InvalidArgument: a bad name, dim, metric, dtype, attribute list or BM25 parameter.
            AlreadyExists: a collection of that name exists.
        """
        pairs = list(attributes.items()) if isinstance(attributes, Mapping) else list(
            attributes or [])
        self._db.create_collection(name, int(dim), metric, dtype,
                                   [(str(a), str(t)) for a, t in pairs], int(shards),
                                   float(bm25_k1), float(bm25_b))
        return Collection(self, name)

    def drop_collection(self, name: str) -> None:
        """Removes the collection and every row of it, durably (NotFound when there is none)."""
        self._db.drop_collection(name)

    def rename_collection(self, name: str, new_name: str) -> None:
        """Renames collection ``name`` (see :meth:`Collection.rename`); ``name`` may not be an
        alias."""
        self._db.rename(name, new_name)

    def set_alias(self, alias: str, collection: str) -> None:
        """Points ``alias`` at ``collection`` (creating it, or switching it: one atomic, durable
        write). Every call that takes a collection's name takes an alias, resolved when the call
        starts, so a switch swaps a rebuilt collection in under live readers; a collection and
        an alias never share a name.

        Raises:
            AlreadyExists: ``alias`` is a collection's name.
            InvalidArgument: a bad alias name, or ``collection`` is itself an alias.
            NotFound: there is no such collection.
        """
        self._db.put_alias(alias, collection)

    def drop_alias(self, alias: str) -> None:
        """Removes ``alias`` (NotFound when there is none); the collection stays."""
        self._db.drop_alias(alias)

    def aliases(self) -> dict[str, str]:
        """``{alias: collection}``, sorted by alias."""
        return dict(self._db.list_aliases())

    def compact(self, force: bool = False) -> dict[str, Any]:
        """Compacts every collection (see :meth:`Collection.compact`)."""
        return dict(self._db.compact("", force))

    def snapshot(self) -> Snapshot:
        """Takes a snapshot of the whole database (:class:`Snapshot`): pass it as
        ``snapshot=`` to :meth:`Collection.search`, ``get``, ``count`` and ``scan`` to read one
        committed version across calls while writes go on::

            with db.snapshot() as snap:
                total = items.count(snapshot=snap)
                rows = list(items.scan(snapshot=snap))  # the same rows, however long it takes

        Cheap to take (nothing is copied then). Collections created after it are not in it;
        collections dropped after it still read as they were.
        """
        return Snapshot(self._db.snapshot(), self)

    def backup(self, dest: str | os.PathLike, keep: int = 0) -> dict[str, Any]:
        """Takes a point-in-time backup of the database into the backup directory ``dest``
        (created when missing) while it stays in use: searches and writes go on, and the backup
        holds whole commits only. Backups into the same ``dest`` are incremental (files already
        there are not copied again); ``keep`` > 0 then keeps only the newest ``keep`` backups.
        Restore with :func:`sieve.restore`; check with :func:`sieve.verify_backup`.

        Returns ``{"backup_id", "timestamp", "files_copied", "bytes_copied", "files_reused",
        "bytes_reused", "commit_seq", "purged", "attempts", "secondary", "logs"}``.

        Raises:
            NotSupported: the database was opened ``read_only`` (use :func:`sieve.backup`).
            InvalidArgument: ``dest`` is empty or inside the database.
            IOError: another backup is writing into ``dest``, or ``dest`` cannot be written.
            ResourceExhausted: ``dest``'s disk is full (no backup was made).
        """
        if keep < 0:
            raise InvalidArgument(f"keep must be >= 0, not {keep}")
        return json.loads(self._db.backup(os.fspath(dest), int(keep)))

    def collection(self, name: str) -> "Collection":
        """The collection called ``name``. Raises NotFound when there is none."""
        return Collection(self, name)

    def __getitem__(self, name: str) -> "Collection":
        return Collection(self, name)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self._db.list_collections()

    def collections(self) -> list[str]:
        """The names of the collections, sorted."""
        return self._db.list_collections()

    def check(self) -> list[str]:
        """Verifies every invariant of the store (chunks, ids, counts, delete bitmaps, attribute
        indexes) and returns the report lines.

        Raises:
            Corruption: something does not hold; ``problems`` lists what was found.
        """
        message, report = self._db.check()
        if message is not None:
            raise Corruption(message, problems=report)
        return report

    def planner_thresholds(self, device: str = "auto") -> dict[str, Any]:
        """The path-choice thresholds the planner uses on ``device`` (``"auto"``, ``"cpu"``,
        ``"gpu"``): ``{"device": executor name, "thresholds": {...}}``, the calibration stored
        for that device or its defaults (``thresholds["source"]`` says which, ``thresholds["version"]`` its format).
        docs/planner.md#planner-thresholds explains each field.

        Raises:
            Unavailable: ``device="gpu"`` and no GPU can be used.
        """
        text, name = self._db.planner_thresholds_json(device)
        return {"device": name, "thresholds": json.loads(text)}

    def set_planner_thresholds(self, device: str, thresholds: Mapping[str, Any]) -> None:
        """Stores ``thresholds`` (every field of :meth:`planner_thresholds`' ``"thresholds"``)
        as the calibration of the executor named ``device`` (``"cpu"`` or ``"gpu:<name>"``),
        durably; searches started afterwards use them.

        Raises:
            InvalidArgument: an empty name, a missing field, or values out of range.
        """
        self._db.set_planner_thresholds(device, json.dumps(dict(thresholds)))

    def calibrate(self, device: str = "auto", quick: bool = False, store: bool = True,
                  time_limit_s: float = 0) -> dict[str, Any]:
        """Measures this machine's paths and fits the planner's thresholds to them, as
        ``sieve calibrate DB [--quick]`` does: times the SDDMM, gather and dense paths of the
        device's executor on synthetic data (float16, l2, k = 64, 100 queries) over a grid of
        passing-row counts, rows and dims (docs/planner.md#sieve-calibrate), then stores
        the fit as the device's calibration; later searches on that device use it.

        Args:
            device: ``"auto"``, ``"cpu"`` or ``"gpu"``.
            quick: the smaller grid (docs/planner.md#sieve-calibrate gives its shapes).
            store: False fits without storing.
            time_limit_s: stop the sweep before its next shape once this many seconds have
                passed (0: no limit), fitting what was measured.

        Returns:
            ``{"device", "stored", "seconds", "complete", "points", "thresholds"}``.

        Raises:
            Unavailable: ``device="gpu"`` and no GPU can be used.
        """
        name, stored, seconds, complete, points, text = self._db.calibrate(
            device, bool(quick), bool(store), float(time_limit_s))
        return {"device": name, "stored": stored, "seconds": seconds, "complete": complete,
                "points": points, "thresholds": json.loads(text)}

    def __repr__(self) -> str:
        return "sieve.Database(%r%s)" % (self.path, ", closed" if self.closed else "")


class Collection:
    """One collection of a :class:`Database`. Cheap to create; thread-safe like its database.

    Attributes: ``dim``, ``metric``, ``dtype`` and ``shards`` (fixed at creation); ``name``
    and ``attributes`` (``{name: type}`` in schema order), which follow :meth:`rename` and the
    schema changes (:meth:`add_attribute`, :meth:`drop_attribute`, :meth:`rename_attribute`),
    made through any object or process.

    The object acts on one collection, not on a name: it keeps working after the collection is
    renamed, and raises NotFound once it is dropped. One taken through an alias
    (:meth:`Database.set_alias`) acts on the collection the alias named then; to follow the
    alias's switches, take a new one per use (``db["alias"]``).
    """

    def __init__(self, db: Database, name: str) -> None:
        self._db = db
        self._core = db._db
        # The engine's handle: every call acts on this collection, and raises NotFound once it
        # is dropped, also after another collection takes its name.
        self._handle = self._core.collection(name)  # NotFound for an unknown name
        spec = json.loads(self._core.stats_json(self._handle))
        self.dim: int = spec["dim"]
        self.metric: str = spec["metric"]
        self.dtype: str = spec["dtype"]
        self.shards: int = spec["shards"]

    @property
    def name(self) -> str:
        """The collection's name now (it follows :meth:`rename`)."""
        return str(self._handle.name)

    @property
    def attributes(self) -> dict[str, str]:
        """``{name: type}`` in schema order, as the schema is now."""
        return dict(json.loads(self._core.stats_json(self._handle))["attributes"])

    @property
    def _schema(self) -> list[str]:
        return list(self.attributes)

    def add_attribute(self, name: str, type: str,  # noqa: A002 - the schema's word
                      default: Any = None) -> dict[str, str]:
        """Adds attribute ``name`` of ``type`` (as :meth:`Database.create_collection` takes)
        at the end of the schema, in one atomic, durable change; rows already stored get
        ``default`` (None: null). Vectors are not rewritten. Returns the new schema
        (:attr:`attributes`).

        Raises:
            InvalidArgument: the name is taken or breaks the naming rules, an unknown type, or a
                default of the wrong type.
        """
        return self._alter("add", name, type, default, "")

    def drop_attribute(self, name: str) -> dict[str, str]:
        """Removes attribute ``name`` and gives its stored bytes and index memory back, in one
        atomic, durable change. Returns the new schema. InvalidArgument for an unknown name."""
        return self._alter("drop", name, "", None, "")

    def rename_attribute(self, name: str, new_name: str) -> dict[str, str]:
        """Renames attribute ``name`` to ``new_name`` (atomic, durable). Returns the new
        schema. InvalidArgument for an unknown name or a new name that is taken or bad."""
        return self._alter("rename", name, "", None, new_name)

    @property
    def bm25(self) -> tuple[float, float]:
        """The collection's BM25 parameters ``(k1, b)`` for text searches."""
        return tuple(self._core.bm25(self._handle))

    def set_bm25(self, k1: float | None = None, b: float | None = None) -> tuple[float, float]:
        """Sets the collection's BM25 parameters for text searches (one not given keeps its
        value), in one atomic, durable change; returns ``(k1, b)`` now. InvalidArgument for k1
        outside 0 to 1000 or b outside 0 to 1."""
        old_k1, old_b = self.bm25
        return tuple(self._core.set_bm25(self._handle, float(old_k1 if k1 is None else k1),
                                         float(old_b if b is None else b)))

    def _alter(self, op: str, name: str, type_: str, default: Any,
               new_name: str) -> dict[str, str]:
        _, attributes, _, _ = self._core.alter(self._handle, op, name, type_, default, new_name)
        return dict(attributes)

    def rename(self, new_name: str) -> None:
        """Renames the collection (atomic, durable; no row is rewritten). Aliases naming it
        follow it; this object and others on the collection keep working under the new name.

        Raises:
            InvalidArgument: a bad name.
            AlreadyExists: a collection or an alias has that name.
        """
        self._core.rename_collection(self._handle, new_name)

    def ingest(self, vectors: Any, attributes: Any = None, ids: Any = None, *,
               batch_rows: int = 65536, upsert: bool = False,
               auto_ids: bool = False, validate_only: bool = False) -> IngestResult:
        """Adds rows: one per row of ``vectors``.

        Args:
            vectors: [rows, dim] array. A C-contiguous float32 (or float16) numpy array is read
                where it lies, without a copy; anything else is converted to float32 first.
                NaN or infinite components are rejected.
            attributes: a dict ``{name: column}`` (lists with None for null, numpy arrays,
                numpy masked arrays), a ``pandas.DataFrame`` (NaN/None/NA are null) or a
                ``pyarrow.Table`` (Arrow nulls). Names the schema lacks are an error; schema
                attributes not given are null.
            ids: one int64 id per row, unique among themselves and the collection's live rows;
                without them ids continue past the largest id the collection has seen.
            batch_rows: rows per atomic, durable commit (0: the whole call in one commit).
            upsert: rows whose id is live replace that row (vector and attributes), the others
                are inserted, atomically per batch (needs ids); ``result.replaced`` counts them.
            auto_ids: lets rows without ids into a collection that already has live rows, as
                new rows with new ids (without it that is InvalidArgument, so running the same
                ingest twice cannot add every row twice).
            validate_only: check everything the call would check (including ids against the
                live rows) and write nothing; returns ``ingested == 0``. ``sieve.ray`` checks
                every shard's part this way before writing any.

        The whole input is validated before anything is written: on error nothing changes.
        Then batches of ``batch_rows`` rows commit, each durable before the next begins. The
        arrays must not change while the call runs.

        Raises:
            InvalidArgument: wrong dim, bad values, duplicate or live ids, attributes of the
                wrong type (the message names the row and attribute).
        """
        v = _arrays.matrix(vectors, "vectors")
        n = v.shape[0]
        id_array = None if ids is None else _arrays.ids(ids)
        schema = self.attributes
        columns = _columns.normalize(attributes, list(schema), n, list(schema.values()))
        if upsert and id_array is None:
            raise InvalidArgument("upsert: every row needs an id (give ids)")
        ingested, rows, replaced = self._core.ingest(self._handle, v, id_array, columns,
                                                     int(batch_rows), bool(upsert),
                                                     bool(auto_ids), bool(validate_only))
        return IngestResult(ingested, rows, replaced)

    def _write(self, v: Any, ids: Any, columns: Any, batch_rows: int, upsert: bool,
               auto_ids: bool, validate_only: bool) -> tuple[int, int, int]:
        return self._core.ingest(self._handle, v, ids, columns, int(batch_rows), bool(upsert),
                                 bool(auto_ids), bool(validate_only))

    def ingest_arrow(self, data: Any, vector_column: str = "vector",
                     id_column: str | None = None, *, columns: Sequence[str] | None = None,
                     batch_rows: int = 65536, upsert: bool = False,
                     auto_ids: bool = False) -> IngestResult:
        """Adds the rows of Arrow data: a ``pyarrow.Table`` or ``RecordBatch``, a
        ``pyarrow.RecordBatchReader``, or any object with ``__arrow_c_stream__`` (a polars
        DataFrame, a DuckDB result, ...), record batch by record batch.

        Args:
            data: the rows.
            vector_column: the column of vectors: ``fixed_size_list``, ``list`` or
                ``large_list`` of float32, float16 or float64, none null. float32 vectors
                reach the engine without a copy (a view of the column's buffer); the others are
                converted one batch at a time.
            id_column: the column of ids (integers >= 0, none null, unique), or None to have
                ids assigned as ``ingest`` does.
            columns: the attribute columns to take; default every column but the vector and id
                columns, each of which must then be an attribute (Arrow types as
                ``ingest``'s ``pyarrow.Table``; nulls are null).
            batch_rows, upsert, auto_ids: as ``ingest``.

        A table or record batch is checked whole (every batch, and the ids across batches)
        before anything is written, as ``ingest`` does. A stream can be read once only: each
        of its batches is checked and then committed before the next is read, so a bad batch
        leaves the ones before it committed (the error says which rows were).

        Raises:
            InvalidArgument: a missing column or one of the wrong type, a null vector or id, or
                what ``ingest`` refuses; the message names the column and the row (counted from
                the first row of ``data``).
        """
        batches, replayable = _arrow.table_batches(data)
        ingested, rows, replaced = _arrow.ingest_batches(
            self._write, batches, replayable, vector_column=vector_column, id_column=id_column,
            columns=columns, dim=self.dim, schema=self._schema, batch_rows=batch_rows,
            upsert=upsert, auto_ids=auto_ids)
        return IngestResult(ingested, len(self) if rows is None else rows, replaced)

    def ingest_parquet(self, path: str | os.PathLike, vector_column: str = "vector",
                       id_column: str | None = None, *, columns: Sequence[str] | None = None,
                       batch_rows: int = 65536, upsert: bool = False,
                       auto_ids: bool = False) -> IngestResult:
        """Adds the rows of a Parquet file, read with ``pyarrow.parquet`` in record batches of
        ``batch_rows`` rows (memory holds about one batch whatever the file's size). The file
        is read twice: every batch is checked (and the ids across batches) before the first is
        committed, so bad input changes nothing. Columns, types and errors as
        :meth:`ingest_arrow` (rows counted from the file's first row); only the columns
        needed are read.

        Raises:
            InvalidArgument: as :meth:`ingest_arrow`; a missing file or one that is not Parquet.
        """
        batches = _arrow.parquet_batches(path, vector_column, id_column, columns, batch_rows)
        ingested, rows, replaced = _arrow.ingest_batches(
            self._write, batches, True, vector_column=vector_column, id_column=id_column,
            columns=columns, dim=self.dim, schema=self._schema, batch_rows=batch_rows,
            upsert=upsert, auto_ids=auto_ids)
        return IngestResult(ingested, len(self) if rows is None else rows, replaced)

    def upsert(self, vectors: Any, attributes: Any = None, ids: Any = None, *,
               batch_rows: int = 65536) -> IngestResult:
        """``ingest(..., upsert=True)``: replaces the live rows with these ids, inserts the rest."""
        return self.ingest(vectors, attributes, ids, batch_rows=batch_rows, upsert=True)

    def get(self, ids: Any, include: str | Sequence[str] = "*", *,
            snapshot: Snapshot | None = None) -> list[dict[str, Any] | None]:
        """The live rows with these ids, in order: a dict ``{"id", <attribute>: value, ...,
        "vector"?}`` each (``include``: attribute names, ``"*"``, ``"vector"``, comma-separated
        or as a list), or None for an id without a live row. ``snapshot``: the rows of that
        :class:`Snapshot` rather than the latest."""
        return self._core.get(self._handle, _arrays.ids(ids), _arrays.include_text(include, "*"),
                              _core_snapshot(snapshot))

    def count(self, filter: str | None = None, *, snapshot: Snapshot | None = None) -> int:
        """The exact number of live rows passing ``filter`` (every live row without one), of
        ``snapshot`` when given."""
        return int(self._core.count(self._handle, filter or "", _core_snapshot(snapshot)))

    def scan(self, filter: str | None = None, include: str | Sequence[str] = "*",
             page_rows: int = 10000, *,
             snapshot: Snapshot | None = None) -> Iterator[dict[str, Any]]:
        """Every live row passing ``filter``, in ascending id order, read page by page (memory
        stays bounded by ``page_rows``): dicts as :meth:`get` returns them.

        Every page reads one version: ``snapshot``'s when given, else a snapshot the iterator
        takes at its first page and releases when it ends (or is closed or collected), so rows
        written while it runs are never half seen."""
        include = _arrays.include_text(include, "*")
        own = None
        core = _core_snapshot(snapshot)
        if core is None:
            own = self._core.snapshot()
            core = own
        try:
            after = None
            while True:
                rows, after = self._core.scan(self._handle, filter or "", include, after,
                                              int(page_rows), core)
                yield from rows
                if after is None:
                    return
        finally:
            if own is not None:
                own.release()

    def update(self, set: Mapping[str, Any], ids: Any = None,  # noqa: A002 - the API's word
               filter: str | None = None) -> int:
        """Sets attributes (``{"price": 3.5, "color": None}``) of the live rows with these ids
        or passing ``filter`` (give exactly one), without rewriting their vectors, in one atomic
        durable commit. Returns the rows updated."""
        if (ids is None) == (filter is None):
            raise InvalidArgument("give exactly one of ids or filter")
        id_array = None if ids is None else _arrays.ids(ids)
        types = self.attributes
        values = {k: _columns.value_for(v, types.get(k)) for k, v in dict(set).items()}
        return int(self._core.update(self._handle, id_array, filter or "", values))

    def compact(self, force: bool = False) -> dict[str, Any]:
        """Rewrites this collection's shards that hold deleted rows and gives their space back;
        ids stay. A shard whose deleted rows hold fewer bytes than its rewrite writes is left as
        it is unless ``force``. Returns ``{"bytes_before", "bytes_after", "rows_removed",
        "shards_rewritten", "shards_skipped", "rows_left_deleted"}``, and ``"note"`` (why rows
        were left, or why the store grew) when there is something to say."""
        return dict(self._core.compact_collection(self._handle, force))

    def search(self, queries: Any = None, k: int = 10, filter: str | None = None,
               filters: Sequence[str | None] | None = None, device: str = "auto",
               path: str = "auto", explain: bool = False,
               include: str | Sequence[str] | None = None, *,
               snapshot: Snapshot | None = None, text: str | None = None,
               text_field: str | None = None, fusion: str = "rrf", rrf_c: float = 60.0,
               vector_weight: float = 1.0, text_weight: float = 1.0, depth: int = 0,
               group_by: str | None = None, group_size: int = 1,
               group_strategy: str = "auto", radius: float | None = None,
               limit: int | None = None, offset: int | None = None,
               after: str | Sequence[str | None] | None = None
               ) -> SearchResult | GroupedResult:
        """Exact k-nearest-neighbour search, optionally filtered by attributes; exact BM25
        text search (``text``), or both at once, fused (hybrid); or the k best groups
        (``group_by``), a range search (``radius``), or a page of the results (``offset`` or
        ``after``).

        Args:
            queries: [queries, dim] array (one query may be 1-D). C-contiguous float32 or
                float16 is read without a copy. None with ``text``: a text-only search.
            k: neighbours per query, an int 1 to 1,000,000 (a float, bool or string is a
                TypeError, not truncated).
            filter: one filter for every query, in Sieve's filter language, e.g.
                ``"price < 20 AND color IN ('red', 'blue')"`` (docs/filter-language.md).
            filters: one filter per query instead (None or "" = none for that query).
            device: ``"auto"`` (the GPU when the build has one and a device is present),
                ``"cpu"`` or ``"gpu"``.
            path: ``"auto"`` (the planner chooses from the exact passing-row count), or
                ``"sddmm"``, ``"gather"``, ``"dense"`` to force one.
            explain: also return the plan (``result.plan``).
            include: stored fields to return with each neighbour (attribute names, ``"*"``,
                ``"vector"``, comma-separated or as a list): ``result.rows[q]`` is then a list of dicts as
                :meth:`get` returns them, best first.
            snapshot: search the rows of this :class:`Snapshot` rather than the latest
                (pages read under one snapshot hold every row exactly once).
            text: a BM25 query over the text attribute ``text_field`` (give both). Without
                ``queries``: the top k rows by BM25 among those passing ``filter`` (or the one
                entry of ``filters``), one result row whose ``distances`` are the BM25 scores
                in float64 (larger is better). With ``queries``: each query's vector top
                ``depth`` and the text query's top ``depth``, under that query's filter, fused;
                ``distances`` are the fused scores (float64, larger is better).
            fusion: ``"rrf"`` (Σ weight / (rrf_c + rank)) or ``"weighted"`` (Σ weight ·
                min-max normalized score; the vector side's l2 and cosine distances negated).
            rrf_c, vector_weight, text_weight: the fusion's constant and weights.
            depth: rows each side contributes to the fusion; 0: max(k, 100).
            group_by: an int, string, bool or tags attribute: return, per query, the k groups
                (rows sharing a value; a tags row is in the group of each of its tags; null
                values in none) whose best passing row is nearest, each with its
                ``group_size`` nearest passing rows (docs/python.md#group-by).
            group_size: rows per group, 1 to 100,000 (k × group_size at most 1,000,000).
            group_strategy: ``"auto"`` (the planner chooses from the counts),
                ``"few_groups"`` or ``"many_groups"`` to force one (docs/planner.md#group-by).
            radius: a range search: every passing row within it (l2, cosine: distance <=
                radius; ip: score >= radius), best first, ties by id, at most ``limit``
                (``k`` is not used); the float64 distance decides a row on the radius.
                ``result.limit_reached[q]`` says more rows lie within it.
            limit: with ``radius``, the most rows per query (1 to 1,000,000; default 1000).
            offset: a page: rows offset .. offset + k - 1 of each query's (distance, id)
                order (offset + k <= 1,000,000). ``result.next[q]`` is the cursor of the
                next page (None when no rows follow).
            after: a page after a cursor (``result.next`` of the page before; one string for
                one query, or a list, one per query): the k rows after it in (distance, id)
                order. ``""`` (or None in the list) starts from the first row: the first page,
                with a cursor (as ``offset=0``).

        Returns:
            A :class:`SearchResult`: ``ids`` and ``distances`` of shape [queries, k], best first;
            where fewer than k rows pass, ids -1 and distances +inf (-inf for ``ip``, and for
            text and hybrid scores) fill the row, and ``counts`` says how many are real. A range
            search's arrays are as wide as its longest result. With ``group_by``, a
            :class:`GroupedResult`: per query, a list of :class:`Group` (value, ids, distances,
            rows with ``include``), best first.

        Raises:
            InvalidArgument: wrong dim, bad k, a filter that does not parse or type-check (the
                message names the position), a filters list of the wrong length.
            Unavailable: ``device="gpu"`` and no GPU can be used.
        """
        # The common argument types are taken inline (a small search's fixed cost counts); the
        # _arrays helpers check and convert the others as ever.
        if type(k) is not int:
            k = _arrays.k_value(k)
        include = "" if include is None else _arrays.include_text(include)
        if filters is None and (filter is None or type(filter) is str):
            per_query = None
        else:
            filter, per_query = _arrays.search_filters(filter, filters)
        if text is not None or text_field is not None:
            if (group_by is not None or radius is not None or offset is not None
                    or after is not None):
                raise InvalidArgument(
                    "a text query (text, text_field) does not combine with group_by, radius, "
                    "offset or after: text and hybrid searches return the k best rows")
            q = None if queries is None else _arrays.matrix(queries, "queries")
            ids, scores, counts, plan, rows = self._core.search_text(
                self._handle, q, k, filter or "", per_query, device, path, bool(explain),
                include, text_field or "", text or "", fusion, float(rrf_c),
                float(vector_weight), float(text_weight),
                depth if type(depth) is int and -2**31 <= depth < 2**31
                else _arrays.depth_value(depth),
                None if snapshot is None else _core_snapshot(snapshot))
            result = SearchResult(ids, scores, counts, json.loads(plan) if plan else None)
            result.rows = rows
            return result
        if queries is None:
            raise InvalidArgument("search: give queries, a text query (text and text_field), "
                                  "or both")
        q = _arrays.matrix(queries, "queries")
        if group_by is not None:
            if radius is not None or offset is not None or after is not None:
                raise InvalidArgument("group_by does not combine with radius, offset or after: "
                                      "a grouped search returns the k best groups")
            by, size, strategy = _arrays.group_args(group_by, group_size, group_strategy)
            per_group, plan = self._core.search_groups(
                self._handle, q, k, filter or "", per_query, device, path, bool(explain),
                include, _core_snapshot(snapshot), by, size, strategy)
            return GroupedResult([[Group(*g) for g in groups] for groups in per_group],
                                 json.loads(plan) if plan else None)
        radius, limit, offset, after = _arrays.range_and_pages(radius, limit, offset, after)
        ids, distances, counts, plan, rows, limit_reached, next_cursors = self._core.search(
            self._handle, q, k, filter or "", per_query, device, path, bool(explain), include,
            _core_snapshot(snapshot), radius, limit, offset, after)
        result = SearchResult(ids, distances, counts, json.loads(plan) if plan else None)
        result.rows = rows
        result.limit_reached = limit_reached
        result.next = next_cursors
        return result

    def delete(self, ids: Any = None, filter: str | None = None) -> int:
        """Deletes the live rows with these ids (unknown ids are ignored), or every row passing
        ``filter``; give exactly one. Atomic and durable on return. Returns the rows deleted.

        Raises:
            InvalidArgument: both or neither given, an empty filter, a filter that does not
                parse.
        """
        if (ids is None) == (filter is None):
            raise InvalidArgument("give exactly one of ids or filter")
        if ids is not None:
            return self._core.delete_ids(self._handle, _arrays.ids(ids))
        return self._core.delete_filter(self._handle, filter)

    def stats(self) -> dict[str, Any]:
        """``{"collection", "rows" (live), "deleted_rows", "total_rows", "dim", "metric",
        "dtype", "shards", "attributes"}``, as ``sieve stats`` prints it."""
        return json.loads(self._core.stats_json(self._handle))

    def __len__(self) -> int:
        """The live rows."""
        return int(self.stats()["rows"])

    def __repr__(self) -> str:
        return "sieve.Collection(%r, dim=%d, metric=%r, dtype=%r, attributes=%r)" % (
            self.name, self.dim, self.metric, self.dtype, self.attributes)


def backup(path: str | os.PathLike, dest: str | os.PathLike, keep: int = 0,
           max_attempts: int = 8) -> dict[str, Any]:
    """Backs up the database at ``path`` into ``dest`` without keeping it open, as
    ``sieve backup`` does: also while another process (``sieve serve``, an ingest) has it open
    for writing, reading it then through a RocksDB secondary instance in a temporary directory
    (removed afterwards) and writing nothing into ``path``. A backup overtaken by the writer's
    file changes is taken again, up to ``max_attempts`` times. Returns what
    :meth:`Database.backup` returns (``"secondary"`` says which way it was read).

    Raises:
        NotFound: no database at ``path``.
        IOError: every attempt was overtaken, another backup writes into ``dest``, or a path
            cannot be used.
        InvalidArgument: ``dest`` inside the database, or ``max_attempts`` outside 1 to 100.
        ResourceExhausted: ``dest``'s disk is full.
    """
    if keep < 0:
        raise InvalidArgument(f"keep must be >= 0, not {keep}")
    scratch = tempfile.mkdtemp(prefix="sieve-backup-")
    try:
        return json.loads(_sieve.backup_store(os.fspath(path), os.fspath(dest), int(keep),
                                              scratch, int(max_attempts)))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def restore(dest: str | os.PathLike, path: str | os.PathLike,
            backup: int | None = None) -> dict[str, Any]:
    """Creates the database ``path`` from backup ``backup`` of ``dest`` (None: the newest).
    ``path`` must not exist (or be an empty directory); the backup is restored beside it and
    renamed into place only when complete, every file's checksum verified on the way. Returns
    ``{"backup_id", "files", "bytes", "commit_seq", "leftovers_removed"}`` (directories of
    killed restores into ``path`` removed first); open the result with :func:`sieve.open`.

    Raises:
        InvalidArgument: ``path`` exists and is not an empty directory.
        NotFound: ``dest`` holds no backups, or not that one.
        Corruption: a file of the backup fails its checksum.
    """
    if backup is not None and backup < 1:
        raise InvalidArgument(f"backup must be a backup id (>= 1), not {backup}")
    return json.loads(_sieve.restore_backup(os.fspath(dest), int(backup or 0), os.fspath(path)))


def _listing(dest: str | os.PathLike, verify: bool, backup: int | None) -> dict[str, Any]:
    problem, entries, summary = _sieve.list_backups(os.fspath(dest), verify, int(backup or 0))
    out = json.loads(summary)
    out["backups"] = [json.loads(e) for e in entries]
    if problem is not None:
        raise Corruption(problem, problems=[
            f"backup {e['backup_id']}: {e['problem']}" for e in out["backups"] if "problem" in e])
    return out


def list_backups(dest: str | os.PathLike) -> dict[str, Any]:
    """The backups in ``dest`` without reading their files: ``{"backups": [{"backup_id",
    "timestamp", "bytes", "files"}, ...], "corrupt": [ids whose description is unreadable],
    "leftover_files", "leftover_bytes"}`` (leftovers: files of an interrupted backup, removed by
    the next backup). Raises NotFound when ``dest`` is not a backup directory."""
    return _listing(dest, False, None)


def verify_backup(dest: str | os.PathLike, backup: int | None = None) -> dict[str, Any]:
    """Reads every file of every backup in ``dest`` (or of ``backup``) and checks its size and
    checksum. Returns what :func:`list_backups` returns, for the backups verified.

    Raises:
        Corruption: a file is missing, has the wrong size or fails its checksum, or a backup's
            description is unreadable; ``problems`` lists each backup's problem.
        NotFound: ``dest`` is not a backup directory, or holds no such backup.
    """
    return _listing(dest, True, backup)
