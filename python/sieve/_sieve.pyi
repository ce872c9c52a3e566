"""
Sieve's C++ engine (include/sieve/). Use the sieve package, not this module.
"""

from collections.abc import Sequence
from typing import Annotated

import numpy
from numpy.typing import NDArray


class _Collection:
    """A collection handle (DB::GetCollection): what a Collection acts on."""

    @property
    def dropped(self) -> bool:
        """Whether the collection was dropped (its calls then raise NotFound)."""

    @property
    def name(self) -> str: ...

class _Snapshot:
    """A snapshot (DB::GetSnapshot): reads given it see the store as it was."""

    @property
    def id(self) -> int:
        """Its number, unique among the database's snapshots."""

    @property
    def released(self) -> bool:
        """Whether it was released (or its database closed)."""

    def release(self) -> None:
        """DB::ReleaseSnapshot (once; later calls do nothing)."""

class _DB:
    """An open database (sieve::DB). Thread-safe."""

    def __init__(self, path: str, create: bool, error_if_exists: bool, read_only: bool, devices: Sequence[int] = [], cpu_executors: int = 1, device_memory_bytes: int = 0, first_use_mode: int = 0, first_use_time_limit_s: float = 30.0) -> None:
        """
        Opens or creates the database at path (DB::Open; devices, cpu_executors, device_memory_bytes and the first-use calibration's mode and time limit as Options' fields).
        """

    def close(self) -> None:
        """Closes the database once every running call has returned."""

    @property
    def closed(self) -> bool:
        """Whether close() was called."""

    def create_collection(self, name: str, dim: int, metric: str, dtype: str, attributes: Sequence[tuple[str, str]], shards: int, bm25_k1: float = 1.5, bm25_b: float = 0.75) -> None:
        """DB::CreateCollection."""

    def list_collections(self) -> list[str]:
        """DB::ListCollections."""

    def stats_json(self, collection: _Collection) -> str:
        """DB::GetStats as CollectionStats::ToJson."""

    def id_state(self, collection: _Collection) -> tuple:
        """DB::GetStats' (next_auto_id, rows): where ingest without ids starts."""

    def ingest(self, collection: _Collection, vectors: Annotated[NDArray, dict(shape=(None, None), order='C', device='cpu', writable=False)], ids: Annotated[NDArray[numpy.int64], dict(shape=(None,), order='C', device='cpu', writable=False)] | None, columns: object | None, batch_rows: int, upsert: bool, auto_ids: bool, validate_only: bool) -> tuple:
        """DB::Ingest or DB::Upsert; returns (ingested, live_rows, replaced)."""

    def get(self, collection: _Collection, ids: Annotated[NDArray[numpy.int64], dict(shape=(None,), order='C', device='cpu', writable=False)], include: str, snapshot: _Snapshot | None = None) -> list:
        """DB::Get; a dict per id, None for an id without a live row."""

    def count(self, collection: _Collection, filter: str, snapshot: _Snapshot | None = None) -> int:
        """DB::Count."""

    def scan(self, collection: _Collection, filter: str, include: str, after: int | None, limit: int, snapshot: _Snapshot | None = None) -> tuple:
        """DB::Scan; returns (rows, next cursor or None)."""

    def snapshot(self) -> _Snapshot:
        """DB::GetSnapshot: a snapshot of the whole store."""

    def update(self, collection: _Collection, ids: Annotated[NDArray[numpy.int64], dict(shape=(None,), order='C', device='cpu', writable=False)] | None, filter: str, set: dict) -> int:
        """DB::Update; returns the rows updated."""

    def collection(self, name: str) -> _Collection:
        """DB::GetCollection: the handle of the collection called name."""

    def drop_collection(self, name: str) -> None:
        """DB::DropCollection."""

    def set_bm25(self, collection: _Collection, k1: float, b: float) -> tuple[float, float]:
        """Collection::Alter(AlterRequest::SetBm25(k1, b)); returns (k1, b)."""

    def bm25(self, collection: _Collection) -> tuple[float, float]:
        """The collection's (bm25_k1, bm25_b)."""

    def alter(self, collection: _Collection, op: str, name: str, type: str, default: object | None, new_name: str) -> tuple:
        """
        Collection::Alter (op: add, drop or rename); returns (collection name, [(attribute, type)], rows rewritten, chunks rewritten).
        """

    def rename_collection(self, collection: _Collection, new_name: str) -> None:
        """Collection::Rename."""

    def rename(self, name: str, new_name: str) -> None:
        """DB::RenameCollection."""

    def put_alias(self, alias: str, collection: str) -> None:
        """DB::PutAlias."""

    def drop_alias(self, alias: str) -> None:
        """DB::DropAlias."""

    def list_aliases(self) -> list[tuple[str, str]]:
        """DB::ListAliases as (alias, collection) pairs."""

    def compact(self, name: str, force: bool = False) -> dict:
        """DB::Compact ("": every collection); returns its CompactResult."""

    def backup(self, dest: str, keep: int) -> str:
        """DB::Backup; returns BackupResult::ToJson()."""

    def compact_collection(self, collection: _Collection, force: bool = False) -> dict:
        """Collection::Compact; returns its CompactResult."""

    def delete_ids(self, collection: _Collection, ids: Annotated[NDArray[numpy.int64], dict(shape=(None,), order='C', device='cpu', writable=False)]) -> int:
        """DB::DeleteByIds."""

    def delete_filter(self, collection: _Collection, filter: str) -> int:
        """DB::DeleteByFilter."""

    def search(self, collection: _Collection, queries: Annotated[NDArray, dict(shape=(None, None), order='C', device='cpu', writable=False)], k: int, filter: str, filters: Sequence[str] | None, device: str, path: str, explain: bool, include: str, snapshot: _Snapshot | None = None, radius: float | None = None, limit: int = 1000, offset: int | None = None, after: Sequence[str] | None = None) -> tuple:
        """
        DB::Search; returns (ids, distances, counts, plan JSON or None, rows or None, limit_reached list or None, next cursors or None).
        """

    def search_groups(self, collection: _Collection, queries: Annotated[NDArray, dict(shape=(None, None), order='C', device='cpu', writable=False)], k: int, filter: str, filters: Sequence[str] | None, device: str, path: str, explain: bool, include: str, snapshot: _Snapshot | None, group_by: str, group_size: int, group_strategy: str) -> tuple:
        """
        DB::Search with SearchRequest::group_by; returns (per query, [(value, ids, distances, rows or None)] per group, plan JSON or None).
        """

    def search_text(self, collection: _Collection, queries: Annotated[NDArray, dict(shape=(None, None), order='C', device='cpu', writable=False)] | None, k: int, filter: str, filters: Sequence[str] | None, device: str, path: str, explain: bool, include: str, text_field: str, text: str, fusion: str, rrf_c: float, vector_weight: float, text_weight: float, depth: int, snapshot: _Snapshot | None = None) -> tuple:
        """
        DB::Search with a text query; returns (ids, scores, counts, plan JSON or None, rows or None).
        """

    def check(self) -> tuple[str | None, list[str]]:
        """DB::Check; returns (None or the Corruption message, report)."""

    def planner_thresholds_json(self, device: str) -> tuple[str, str]:
        """
        DB::GetPlannerThresholds; returns (PlannerThresholds::ToJson(), device name).
        """

    def set_planner_thresholds(self, device_name: str, json: str) -> None:
        """DB::PutPlannerThresholds from PlannerThresholds::FromJson."""

    def calibrate(self, device: str, quick: bool, store: bool, time_limit_s: float) -> tuple[str, bool, float, bool, int, str]:
        """
        The sweep and fit of `sieve calibrate`; returns (device, stored, seconds, complete, points, thresholds JSON).
        """

def _raise_status(code: int, message: str) -> None:
    """
    Raises the exception of sieve::Status::Code `code` as an engine call would (for tests of the status → exception mapping, which user input cannot reach for every code).
    """

def backup_store(path: str, dest: str, keep: int, secondary_dir: str, max_attempts: int) -> str:
    """DB::BackupStore; returns BackupResult::ToJson()."""

def restore_backup(dest: str, backup_id: int, path: str) -> str:
    """DB::RestoreBackup; returns RestoreResult::ToJson()."""

def list_backups(dest: str, verify: bool, backup_id: int) -> tuple[str | None, list[str], str]:
    """
    DB::ListBackups, or DB::VerifyBackup when verify; returns (None or the Corruption message, sieve::BackupEntry::ToJson() per backup, sieve::BackupListing::ToJson()).
    """

def analyze(text: str, analyzer: str) -> tuple[list[str], list[int]]:
    """sieve::AnalyzeText; returns (terms, positions)."""

def _last_engine_seconds() -> float:
    """
    How long the last DB::Ingest or DB::Search call took inside the engine (for the benchmarks that set the C++ API's time beside the Python call's).
    """

def _last_input_pointers() -> dict:
    """
    The addresses last handed to the engine as RowBatch::vectors and SearchRequest::queries (for tests that check arrays cross without a copy).
    """
