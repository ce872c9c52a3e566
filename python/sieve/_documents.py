"""Documents in a Sieve collection: what :mod:`sieve.langchain` and :mod:`sieve.llama_index`
share, over an embedded :class:`sieve.Collection` or a server's :class:`sieve.RemoteCollection`.

A document is one row: its string key hashed to the row id (:func:`row_id`) and kept in a
string attribute to tell hash collisions apart, its text in another, and its metadata as typed
attributes (:class:`sieve._metadata.MetadataCodec`), what no attribute holds in one JSON string
attribute, so metadata comes back as it went in. docs/integrations.md is the user's account.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import threading
import urllib.parse
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping, Sequence

import numpy as np

from . import _embedded
from ._conditions import Cond, quote, render, tests
from ._metadata import TYPES, MetadataCodec, attribute_name
from .client import Client, RemoteCollection
from .errors import AlreadyExists, InvalidArgument, NotFound

_INT64_MAX = (1 << 63) - 1


def row_id(key: str) -> int:
    """The row id of a document key: the first 63 bits of its BLAKE2b-64 hash."""
    digest = hashlib.blake2b(key.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "little") & _INT64_MAX


_REMOTE_ROWS = 4096  # rows of one write request to a server
_SCROLL_ROWS = 1000  # rows of one scroll page from a server


class _Table:
    """One collection, embedded or on a server, as the document stores use it."""

    def __init__(self, coll: Any) -> None:
        self.coll = coll
        self.remote = isinstance(coll, RemoteCollection)
        self.dim = int(coll.dim)
        self.metric = str(coll.metric)

    def _post(self, route: str, body: Mapping[str, Any]) -> Any:
        """POST /collections/NAME/ROUTE on the collection's server (the routes of
        docs/http-api.md; every one the stores use is idempotent)."""
        return self.coll._client._post("/collections/%s/%s" % (_quote(self.coll.name), route),
                                       body)

    def attributes(self) -> dict[str, str]:
        if self.remote:
            return dict(self.coll.stats().get("attributes", {}))
        return self.coll.attributes

    def add_attribute(self, name: str, type_: str) -> None:
        self.coll.add_attribute(name, type_)

    def upsert(self, vectors: np.ndarray, columns: dict[str, list[Any]], ids: np.ndarray,
               batch_rows: int | None = None) -> None:
        if not self.remote:
            self.coll.ingest(vectors, attributes=columns, ids=ids, upsert=True,
                             batch_rows=batch_rows or 65536)
            return
        # Rows by attribute name, so the server's schema now is what counts (attributes another
        # client added are not yet in RemoteCollection's copy of it); requests of at most
        # _REMOTE_ROWS rows, far below the server's body limit. An upsert is idempotent.
        names = list(columns)
        rows = [dict(zip(names, values)) for values in zip(*(columns[a] for a in names))]
        step = min(batch_rows or _REMOTE_ROWS, _REMOTE_ROWS)
        for start in range(0, len(rows), step):
            end = start + step
            body = {"ids": [int(i) for i in ids[start:end]],
                    "vectors": vectors[start:end].tolist(), "attributes": rows[start:end],
                    "upsert": True}
            self._post("rows", body)

    def get(self, ids: Sequence[int], include: Sequence[str]) -> list[dict[str, Any] | None]:
        if not len(ids):
            return []
        if not self.remote:
            return self.coll.get(list(ids), include=list(include))
        r = self._post("get",
                                    {"ids": [int(i) for i in ids], "include": list(include)})
        return [_remote_row(x) if x.get("found") else None for x in r["rows"]]

    def search(self, query: np.ndarray, k: int, filter: str | None, include: Sequence[str],
               device: str) -> list[tuple[dict[str, Any], float]]:
        """The nearest rows of one query, best first: (row dict with "id", distance)."""
        if not self.remote:
            res = self.coll.search(query, k=k, filter=filter, include=list(include),
                                   device=device)
            n = int(res.counts[0])
            return [(row, float(d)) for row, d in zip(res.rows[0][:n],
                                                      res.distances[0, :n].tolist())]
        body: dict[str, Any] = {"vectors": [query.astype(np.float32).tolist()], "k": int(k),
                                "include": list(include)}
        if filter:
            body["filter"] = filter
        if device != "auto":
            body["device"] = device
        r = self._post("query", body)["results"][0]
        vectors = r.get("vectors") or [None] * len(r["ids"])
        rows = []
        for i, attrs, v, d in zip(r["ids"], r.get("attributes") or [{}] * len(r["ids"]),
                                  vectors, r["distances"]):
            row = dict(attrs)
            row["id"] = i
            if v is not None:
                row["vector"] = np.asarray(v, dtype=np.float32)
            rows.append((row, float(d)))
        return rows

    def scan(self, filter: str | None, include: Sequence[str]) -> Iterator[dict[str, Any]]:
        if not self.remote:
            yield from self.coll.scan(filter, include=list(include))
            return
        after = None
        snapshot: Any = True  # the first page opens a snapshot the last one releases
        while True:
            body: dict[str, Any] = {"include": list(include), "limit": _SCROLL_ROWS,
                                    "snapshot": snapshot}
            if filter:
                body["filter"] = filter
            if after is not None:
                body["after"] = after
            r = self._post("scroll", body)
            snapshot = r.get("snapshot", snapshot)
            for x in r["rows"]:
                yield _remote_row(x)
            after = r.get("next")
            if after is None:
                return

    def delete(self, filter: str) -> int:
        return int(self.coll.delete(filter=filter))


class _SharedLock:
    """Many holders of ``shared()`` at once, or one of ``exclusive()`` (re-entrant for the
    thread that holds it exclusively)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._shared = 0
        self._owner: int | None = None
        self._depth = 0

    @contextlib.contextmanager
    def shared(self) -> Iterator[None]:
        me = threading.get_ident()
        with self._cond:
            if self._owner != me:
                while self._owner is not None:
                    self._cond.wait()
            self._shared += 1
        try:
            yield
        finally:
            with self._cond:
                self._shared -= 1
                self._cond.notify_all()

    @contextlib.contextmanager
    def exclusive(self) -> Iterator[None]:
        me = threading.get_ident()
        with self._cond:
            if self._owner != me:
                while self._owner is not None or self._shared:
                    self._cond.wait()
                self._owner = me
            self._depth += 1
        try:
            yield
        finally:
            with self._cond:
                self._depth -= 1
                if self._depth == 0:
                    self._owner = None
                self._cond.notify_all()


def _remote_row(x: Mapping[str, Any]) -> dict[str, Any]:
    row = dict(x.get("attributes") or {})
    row["id"] = x["id"]
    if x.get("vector") is not None:
        row["vector"] = np.asarray(x["vector"], dtype=np.float32)
    return row


class _Home:
    """Where a store's collection lives: an embedded database or a server."""

    def __init__(self, where: Any) -> None:
        self.where = where
        self.remote = isinstance(where, Client)

    def find(self, name: str) -> Any | None:
        try:
            return self.where.collection(name)
        except NotFound:
            return None

    def create(self, name: str, dim: int, metric: str, dtype: str,
               attributes: Mapping[str, str]) -> Any:
        try:
            return self.where.create_collection(name, dim, metric=metric, dtype=dtype,
                                                attributes=dict(attributes))
        except AlreadyExists:  # made meanwhile by another store or process
            return self.where.collection(name)

    def drop(self, name: str) -> None:
        if self.remote:
            self.where._request("DELETE", "/collections/" + _quote(name), idempotent=False)
        else:
            self.where.drop_collection(name)


def _quote(name: str) -> str:
    return urllib.parse.quote(name, safe="")


@dataclass
class Stored:
    """A document read back: its key, text, metadata, the store's own string fields, the
    distance from the query (searches) and the vector (when asked for)."""

    key: str
    text: str
    metadata: dict[str, Any]
    fields: dict[str, Any] = field(default_factory=dict)
    distance: float | None = None
    vector: np.ndarray | None = None


def relevance(metric: str) -> Callable[[float], float]:
    """Higher-is-better relevance of a Sieve distance, as LangChain's relevance functions
    scale them for unit vectors: cosine ``1 - d`` (the cosine), ip the inner product, l2
    ``1 - sqrt(d) / sqrt(2)`` (Sieve's l2 is the squared distance)."""
    if metric == "cosine":
        return lambda d: 1.0 - d
    if metric == "ip":
        return lambda d: d
    return lambda d: 1.0 - math.sqrt(max(d, 0.0)) / math.sqrt(2.0)


class DocumentTable:
    """The documents of one collection. Thread-safe.

    Args:
        where: a :class:`sieve.Database` or :class:`sieve.Client` holding (or to hold)
            collection ``name``; or None with ``collection``.
        collection: a :class:`sieve.Collection` or :class:`sieve.RemoteCollection` to use.
        key_attribute, text_attribute, extra_attribute: the store's string attributes for the
            document key, the text and the metadata JSON; ``fields``: its other string
            attributes. None of them is a metadata key's attribute.
        metric, dtype: of a collection this table creates (at its first write, with the
            dimension of the first vectors).
        metadata_schema: ``{metadata key: type}`` declared up front; ``new_keys``, ``strict``:
            as :class:`MetadataCodec`'s.
    """

    def __init__(self, *, where: Any, collection: Any, name: str, key_attribute: str,
                 text_attribute: str, extra_attribute: str, fields: Sequence[str] = (),
                 metric: str = "cosine", dtype: str = "f32",
                 metadata_schema: Mapping[str, str] | None = None, new_keys: str = "add",
                 strict: bool = False, device: str = "auto") -> None:
        if collection is not None and where is not None:
            raise InvalidArgument("give a collection or a database (or client), not both")
        if collection is None and where is None:
            raise InvalidArgument("give a collection, or a database (sieve.open) or a client "
                                  "(sieve.Client) and a collection name")
        if collection is not None and not isinstance(collection, (_embedded.Collection,
                                                                  RemoteCollection)):
            raise TypeError("collection must be a sieve.Collection or sieve.RemoteCollection, "
                            "not %s" % type(collection).__name__)
        if where is not None and not isinstance(where, (_embedded.Database, Client)):
            raise TypeError("database must be a sieve.Database, a sieve.Client or a path, "
                            "not %s" % type(where).__name__)
        self.key_attribute = key_attribute
        self.text_attribute = text_attribute
        self.fields = tuple(fields)
        self.own = (key_attribute, text_attribute, extra_attribute) + self.fields
        self.codec = MetadataCodec(self.own, extra_attribute, new_keys, strict)
        self.declared: dict[str, str] = {}
        for key, t in (metadata_schema or {}).items():
            if t not in TYPES:
                raise InvalidArgument("metadata_schema: %r has type %r; types are %s"
                                      % (key, t, ", ".join(TYPES)))
            a = attribute_name(str(key), self.own)
            if a is None:
                raise InvalidArgument("metadata_schema: key %r is too long for an attribute"
                                      % (key,))
            self.declared[a] = t
        self.metric = metric
        self.dtype = dtype
        self.device = device
        if where is None:
            where = collection._client if isinstance(collection, RemoteCollection) else \
                collection._db
        self._home = _Home(where)
        self._name = name if collection is None else collection.name
        self._lock = threading.RLock()
        self._schema = _SharedLock()
        self._table: _Table | None = None
        self._ready = False  # the store's attributes and the declared ones are there
        if collection is not None:
            self._attach(collection)
        else:
            found = self._home.find(name)
            if found is not None:
                self._attach(found)

    # -- the collection -----------------------------------------------------------------------

    @property
    def collection(self) -> Any:
        """The collection (None until the first write creates it)."""
        return None if self._table is None else self._table.coll

    @property
    def name(self) -> str:
        return self._name

    def _attach(self, coll: Any) -> None:
        table = _Table(coll)
        self.codec.sync(table.attributes())
        self._table = table
        self.metric = table.metric

    def _refresh(self) -> None:
        if self._table is not None:
            self.codec.sync(self._table.attributes())

    def _writable(self, dim: int) -> _Table:
        """The collection, created (dim ``dim``) when missing, with every attribute the store
        and its declared schema need."""
        with self._lock:
            if self._table is None:
                attrs = {a: "string" for a in self.own}
                attrs.update(self.declared)
                self._attach(self._home.create(self._name, dim, self.metric, self.dtype, attrs))
            table = self._table
            if table.dim != dim:
                raise InvalidArgument("the embeddings have %d dimensions, collection %r has %d"
                                      % (dim, self._name, table.dim))
            if not self._ready:
                have = table.attributes()
                for a in self.own:
                    self._add(table, have, a, "string")
                for a, t in self.declared.items():
                    self._add(table, have, a, t)
                self.codec.sync(table.attributes())
                self._ready = True
            return table

    def _add(self, table: _Table, have: Mapping[str, str], a: str, t: str) -> None:
        if a in have:
            if have[a] != t:
                raise InvalidArgument("collection %r: attribute %r is %s, the store needs %s"
                                      % (self._name, a, have[a], t))
            return
        try:
            table.add_attribute(a, t)
        except InvalidArgument:
            now = table.attributes()  # added meanwhile by another store or process?
            if now.get(a) != t:
                raise

    def drop(self) -> None:
        """Drops the collection (every document and the schema). NotFound when missing."""
        with self._lock:
            self._home.drop(self._name)
            self._table = None
            self._ready = False
            self.codec.sync({})

    # -- writes -------------------------------------------------------------------------------

    def write(self, keys: Sequence[str], vectors: Any, texts: Sequence[str],
              metadatas: Sequence[Mapping[str, Any]],
              fields: Mapping[str, Sequence[Any]] | None = None,
              batch_rows: int | None = None) -> None:
        """Writes documents: each replaces the document of its key when there is one. Keys
        repeated in one call keep their last document. They commit in atomic batches of
        ``batch_rows`` (None: the ingest default). Raises InvalidArgument (nothing is written)
        for bad metadata, or when a key's row id is held by another key."""
        n = len(keys)
        if n == 0:
            return
        if batch_rows is not None and (isinstance(batch_rows, bool) or
                                       not isinstance(batch_rows, int) or batch_rows < 1):
            raise InvalidArgument("batch_size must be a positive int, got %r" % (batch_rows,))
        v = np.asarray(vectors, dtype=np.float32)
        if v.ndim != 2 or v.shape[0] != n:
            raise InvalidArgument("%d keys but vectors of shape %s" % (n, v.shape))
        if len(texts) != n or len(metadatas) != n:
            raise InvalidArgument("%d keys, %d texts and %d metadatas: one each per document"
                                  % (n, len(texts), len(metadatas)))
        last: dict[str, int] = {}
        for i, k in enumerate(keys):
            last[k] = i
        keep = sorted(last.values())
        if len(keep) < n:
            keys = [keys[i] for i in keep]
            v = v[keep]
            texts = [texts[i] for i in keep]
            metadatas = [metadatas[i] for i in keep]
            fields = {a: [col[i] for i in keep] for a, col in (fields or {}).items()}
        ids = np.fromiter((row_id(k) for k in keys), dtype=np.int64, count=len(keys))
        if len(np.unique(ids)) < len(ids):
            seen: dict[int, str] = {}
            for k, i in zip(keys, ids.tolist()):
                if i in seen:
                    raise InvalidArgument("keys %r and %r hash to the same row id %d; change "
                                          "one of them" % (seen[i], k, i))
                seen[i] = k
        table = self._writable(v.shape[1])
        for stored, k, i in zip(table.get(ids.tolist(), [self.key_attribute]), keys,
                                ids.tolist()):
            if stored is not None and stored.get(self.key_attribute) not in (k, None):
                raise InvalidArgument("key %r hashes to row id %d, which holds key %r; change "
                                      "one of them" % (k, i, stored[self.key_attribute]))
        for attempt in (0, 1):
            with self._schema.exclusive():
                if self.codec.plan(metadatas):
                    self._refresh()
                    for a, t in self.codec.plan(metadatas).items():
                        self._add(table, table.attributes(), a, t)
                    self._refresh()
                columns, extra = self.codec.encode(metadatas)
                seen = dict(self.codec.types)
            columns[self.key_attribute] = list(keys)
            columns[self.text_attribute] = [str(t) for t in texts]
            columns[self.codec.extra_attribute] = extra
            for a, col in (fields or {}).items():
                columns[a] = list(col)
            # Schema changes of this table wait for the write (an ingest reads the schema
            # before the engine takes its columns); one made elsewhere meanwhile fails it, and
            # it is encoded again once.
            with self._schema.shared():
                try:
                    table.upsert(v, columns, ids, batch_rows)
                    return
                except InvalidArgument:
                    self._refresh()
                    if attempt == 1 or self.codec.types == seen:
                        raise

    def keys_text(self, keys: Sequence[str]) -> str:
        """Filter text passing exactly the documents of these keys."""
        if not keys:
            return "id < 0"
        keys = list(dict.fromkeys(keys))
        return "id IN (%s) AND %s IN (%s)" % (", ".join(str(row_id(k)) for k in keys),
                                             self.key_attribute,
                                             ", ".join(quote(k) for k in keys))

    def delete_keys(self, keys: Sequence[str]) -> int:
        """Deletes the documents of these keys (unknown keys are ignored); the count."""
        if self._table is None or not keys:
            return 0
        keys = list(dict.fromkeys(keys))
        total = 0
        for start in range(0, len(keys), 10000):
            total += self._table.delete(self.keys_text(keys[start:start + 10000]))
        return total

    def delete_where(self, filter: str | None) -> int:
        """Deletes the documents passing ``filter`` (None: every document); the count."""
        if self._table is None:
            return 0
        return self._table.delete(filter or "id >= 0")

    # -- reads --------------------------------------------------------------------------------

    def _known(self, rows: Sequence[Mapping[str, Any] | None]) -> None:
        """Takes the schema again when rows hold attributes this table has not seen (added by
        another store or process)."""
        for row in rows:
            if row is not None:
                if not row.keys() <= self.codec.known:
                    self._refresh()
                return

    def _stored(self, row: Mapping[str, Any], distance: float | None = None) -> Stored:
        return Stored(key=row.get(self.key_attribute) or str(row["id"]),
                      text=row.get(self.text_attribute) or "",
                      metadata=self.codec.decode(row),
                      fields={a: row.get(a) for a in self.fields},
                      distance=distance, vector=row.get("vector"))

    def get(self, keys: Sequence[str], vectors: bool = False) -> list[Stored | None]:
        """The documents of these keys, in order (None where there is none)."""
        if self._table is None or not keys:
            return [None] * len(keys)
        rows = self._table.get([row_id(k) for k in keys], ["*", "vector"] if vectors else ["*"])
        self._known(rows)
        out: list[Stored | None] = []
        for k, row in zip(keys, rows):
            ok = row is not None and row.get(self.key_attribute) in (k, None)
            out.append(self._stored(row) if ok else None)
        return out

    def scan(self, filter: str | None, vectors: bool = False) -> Iterator[Stored]:
        if self._table is None:
            return
        first = True
        for row in self._table.scan(filter, ["*", "vector"] if vectors else ["*"]):
            if first:
                self._known([row])
                first = False
            yield self._stored(row)

    def search(self, query: Any, k: int, filter: str | None,
               vectors: bool = False) -> list[Stored]:
        """The ``k`` documents nearest ``query`` passing ``filter``, best first."""
        if self._table is None:
            return []
        q = np.asarray(query, dtype=np.float32).reshape(-1)
        if q.shape[0] != self._table.dim:
            raise InvalidArgument("the query embedding has %d dimensions, collection %r has %d"
                                  % (q.shape[0], self._name, self._table.dim))
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise InvalidArgument("k must be a positive int, got %r" % (k,))
        include = ["*", "vector"] if vectors else ["*"]
        hits = self._table.search(q, int(k), filter, include, self.device)
        self._known([row for row, _ in hits[:1]])
        return [self._stored(row, d) for row, d in hits]

    # -- filters ------------------------------------------------------------------------------

    def render(self, cond: Cond) -> str | None:
        """A condition as Sieve filter text (None: every document passes)."""
        if self._table is not None and any(self.codec.attribute_of(t.key) is None
                                           for t in tests(cond)):
            self._refresh()  # another store or process may have added the attribute
        out = render(cond, self.codec)
        if out is True:
            return None
        if out is False:
            return "id < 0"  # ids are never negative: nothing passes
        return out


def mmr(query: Any, candidates: np.ndarray, k: int, lambda_mult: float) -> list[int]:
    """Maximal marginal relevance over ``candidates`` (rows, best first), exactly in float64:
    picks ``k`` indices, each maximizing ``lambda_mult * cos(query, c) - (1 - lambda_mult) *
    max cos(c, picked)``; ties go to the earlier candidate."""
    if not 0.0 <= lambda_mult <= 1.0:
        raise InvalidArgument("lambda_mult must be 0 to 1, got %r" % (lambda_mult,))
    n = len(candidates)
    if n == 0 or k <= 0:
        return []
    c = np.asarray(candidates, dtype=np.float64)
    q = np.asarray(query, dtype=np.float64).reshape(-1)

    def unit(x: np.ndarray) -> np.ndarray:
        norm = np.linalg.norm(x, axis=-1, keepdims=True)
        return np.divide(x, norm, out=np.zeros_like(x), where=norm > 0)

    c = unit(c)
    to_query = c @ unit(q)
    redundancy = np.zeros(n)  # max cos to the picked ones
    picked: list[int] = []
    free = np.ones(n, dtype=bool)
    for step in range(min(k, n)):
        score = to_query if step == 0 else lambda_mult * to_query - (1.0 - lambda_mult) * redundancy
        score = np.where(free, score, -np.inf)
        i = int(np.argmax(score))
        picked.append(i)
        free[i] = False
        sim = c @ c[i]
        redundancy = sim if step == 0 else np.maximum(redundancy, sim)
    return picked
