"""Documents in a Sieve collection: what :mod:`sieve.langchain` and :mod:`sieve.llama_index`
share, over an embedded :class:`sieve.Collection` or a server's :class:`sieve.RemoteCollection`.

A document is one row: its string key hashed to the row id (:func:`row_id`) and kept in a
string attribute to tell hash collisions apart, its text in another, and its metadata as typed
attributes (:class:`MetadataCodec`): a metadata key is an attribute of its own (escaped when it
is no valid attribute name, :func:`attribute_name`), with the Sieve type of its values; what no
attribute can hold (None, empty lists, dicts, lists of non-strings, values of another type than
the key's attribute where that is allowed) goes into one JSON string attribute, so metadata
comes back as it went in. docs/integrations.md is the user's account of these rules.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import re
import threading
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping, Sequence

import numpy as np

from . import _embedded
from .client import Client, RemoteCollection
from .errors import AlreadyExists, InvalidArgument, NotFound, NotSupported

TYPES = ("int", "float", "string", "bool", "tags")
NEW_KEY_POLICIES = ("add", "json", "error")

_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1
_PLAIN = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")
# The filter language's keywords and the row id: never an attribute's name.
_RESERVED_WORDS = {"and", "or", "not", "in", "between", "contains", "is", "null", "true",
                   "false", "id"}
_MAX_NAME = 128


def row_id(key: str) -> int:
    """The row id of a document key: the first 63 bits of its BLAKE2b-64 hash."""
    digest = hashlib.blake2b(key.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "little") & _INT64_MAX


def attribute_name(key: str, reserved: Sequence[str] = ()) -> str | None:
    """The attribute that holds metadata key ``key``: the key itself when it is a valid name
    (a letter, then letters, digits and ``_``; not a filter keyword nor ``id``) and not one of
    the store's ``reserved`` attributes; otherwise ``_`` and the key escaped (``_`` as ``__``,
    a character outside ``[A-Za-z0-9]`` as ``_x`` and its UTF-8 bytes in hex), so ``id`` is
    ``_id`` and ``file-name`` is ``_file_x2dname``. None when that is over 128 characters."""
    if (_PLAIN.match(key) and len(key) <= _MAX_NAME and key.lower() not in _RESERVED_WORDS
            and key not in reserved):
        return key
    out = ["_"]
    for ch in key:
        if ch.isascii() and ch.isalnum():
            out.append(ch)
        elif ch == "_":
            out.append("__")
        else:
            out.extend("_x%02x" % b for b in ch.encode("utf-8"))
    name = "".join(out)
    return name if len(name) <= _MAX_NAME else None


def _decoded_key(name: str) -> str | None:
    """The metadata key whose escaped attribute is ``name`` (None: not an escaped name)."""
    if not name.startswith("_"):
        return None
    raw = bytearray()
    i, n = 1, len(name)
    while i < n:
        ch = name[i]
        if ch != "_":
            raw += ch.encode("ascii", "replace")
            i += 1
        elif name.startswith("__", i):
            raw += b"_"
            i += 2
        elif name.startswith("_x", i) and re.fullmatch(r"[0-9a-f]{2}", name[i + 2:i + 4]):
            raw.append(int(name[i + 2:i + 4], 16))
            i += 4
        else:
            return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _value_kind(v: Any) -> str | None:
    """The attribute type a metadata value fits, or None for a value only JSON keeps."""
    t = type(v)
    if t is str:
        return "string"
    if t is int:
        return "int" if _INT64_MIN <= v <= _INT64_MAX else None
    if t is float:
        return "float"
    if isinstance(v, (bool, np.bool_)):
        return "bool"
    if isinstance(v, (int, np.integer)):
        return "int" if _INT64_MIN <= int(v) <= _INT64_MAX else None
    if isinstance(v, (float, np.floating)):
        return "float"
    if isinstance(v, str):
        return "string"
    if isinstance(v, (list, tuple)) and v and all(isinstance(x, str) for x in v):
        return "tags"
    return None


def _fit(v: Any, kind: str, type_: str) -> tuple[bool, Any]:
    """``v`` (of ``kind``) as a value of an attribute of ``type_``: (fits, value)."""
    if kind == type_:
        if kind == "bool":
            return True, bool(v)
        if kind == "int":
            return True, int(v)
        if kind == "float":
            return True, float(v)
        if kind == "tags":
            return True, list(v)
        return True, str(v)
    if type_ == "float" and kind == "int" and int(float(v)) == int(v):
        return True, float(v)
    if type_ == "int" and kind == "float" and math.isfinite(v) and float(v).is_integer() \
            and _INT64_MIN <= int(v) <= _INT64_MAX:
        return True, int(v)
    return False, None


def _json_value(v: Any, where: str) -> Any:
    """``v`` as JSON can hold it (numpy scalars and arrays as Python's), else an error."""
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, np.ndarray):
        return v.tolist()
    try:
        json.dumps(v, allow_nan=True)
    except (TypeError, ValueError) as e:
        raise InvalidArgument("%s: %s cannot be stored: metadata values are str, int, float, "
                              "bool, lists of strings or JSON values (%s)"
                              % (where, type(v).__name__, e)) from None
    return v


class UnfilteredMetadata(UserWarning):
    """A metadata value was stored beside its document but not in its key's attribute (its
    type does not fit), so filters on that key do not see it."""


def _kind_name(kind: str) -> str:
    return "int or float" if kind == "number" else kind


class MetadataCodec:
    """Metadata dicts to attribute columns and back, for one collection's schema.

    ``types``: the metadata attributes, ``{attribute: type}`` (every attribute of the
    collection but the store's ``reserved`` ones). ``new_keys``: what a key without an attribute
    becomes: ``"add"`` an attribute of the type of its values (a schema change,
    ``Collection.add_attribute``), ``"json"`` a value in the JSON attribute (kept, not
    filterable), ``"error"`` an InvalidArgument. A value of a filterable type that does not
    fit its key's attribute (``"x"`` for an int attribute) goes into the JSON attribute for
    that document, with an :class:`UnfilteredMetadata` warning (once per key and type); with
    ``strict`` it is an InvalidArgument.
    """

    def __init__(self, reserved: Sequence[str], extra_attribute: str, new_keys: str = "add",
                 strict: bool = False) -> None:
        if new_keys not in NEW_KEY_POLICIES:
            raise InvalidArgument("new_metadata_keys must be one of %s, got %r"
                                  % (", ".join(NEW_KEY_POLICIES), new_keys))
        self.reserved = tuple(reserved)
        self.extra_attribute = extra_attribute
        self.new_keys = new_keys
        self.strict = bool(strict)
        self.types: dict[str, str] = {}
        self._warned: set[tuple[str, str]] = set()
        self.known: set[str] = set(self.reserved) | {"id", "vector"}
        self._keys: dict[str, str] = {}  # metadata key -> attribute, for the attributes there are

    def sync(self, attributes: Mapping[str, str]) -> None:
        """Takes the collection's schema ``{attribute: type}`` (readers in other threads see
        the old one or the new one)."""
        types = {a: t for a, t in attributes.items() if a not in self.reserved}
        keys = {}
        for a in types:
            key = _decoded_key(a)
            if key is None or attribute_name(key, self.reserved) != a:
                key = a  # an attribute made outside the store: its name is its key
            keys[key] = a
        self.known = set(types) | set(self.reserved) | {"id", "vector"}
        self._keys = keys
        self.types = types

    def attribute_of(self, key: str) -> str | None:
        """The attribute holding metadata key ``key`` now (None: there is none)."""
        a = self._keys.get(key)
        if a is not None:
            return a
        a = attribute_name(key, self.reserved)
        return a if a in self.types else None

    def key_of(self, attribute: str) -> str:
        for k, a in self._keys.items():
            if a == attribute:
                return k
        return attribute

    def _resolver(self) -> Callable[[Any, int], tuple[str | None, str | None]]:
        """key -> (its attribute now or None, the attribute it would get), once per key."""
        cache: dict[str, tuple[str | None, str | None]] = {}

        def resolve(key: Any, i: int) -> tuple[str | None, str | None]:
            r = cache.get(key)
            if r is None:
                if not isinstance(key, str):
                    raise InvalidArgument("metadata of document %d: key %r is not a string"
                                          % (i, key))
                r = cache[key] = (self.attribute_of(key), attribute_name(key, self.reserved))
            return r

        return resolve

    def plan(self, metadatas: Sequence[Mapping[str, Any]]) -> dict[str, str]:
        """The attributes ``encode`` would need added for ``metadatas``: ``{attribute: type}``
        (empty unless ``new_keys="add"``), each of the type most of the key's values in
        ``metadatas`` have (ints and floats together: float; a tie: the type seen first).
        Raises InvalidArgument where ``new_keys="error"`` meets a new key, or (``strict``)
        where one batch gives a new key values of types no one attribute holds."""
        resolve = self._resolver()
        # attribute -> (key, {type: [values, first document]}) of the keys without one
        seen: dict[str, tuple[str, dict[str, list[int]]]] = {}
        for i, md in enumerate(metadatas):
            for key, v in md.items():
                have, a = resolve(key, i)
                if have is not None or a is None:
                    continue
                kind = _value_kind(v)
                if kind is None:
                    continue
                if self.new_keys == "error":
                    raise InvalidArgument(
                        "metadata of document %d: key %r has no attribute in the collection "
                        "(its metadata attributes: %s), and new_metadata_keys='error'"
                        % (i, key, ", ".join(sorted(self._keys)) or "none"))
                if self.new_keys == "json":
                    continue
                kinds = seen.setdefault(a, (key, {}))[1]
                if kind in ("int", "float"):
                    kind = "number"
                count = kinds.get(kind)
                if count is None:
                    if kinds and self.strict:
                        other, (_, first) = next(iter(kinds.items()))
                        raise InvalidArgument(
                            "metadata key %r: values of type %s (document %d) and %s (document "
                            "%d); one attribute holds one type (declare it in metadata_schema, "
                            "or let strict_metadata_types=False keep the others unfiltered)"
                            % (key, _kind_name(other), first, _kind_name(kind), i))
                    kinds[kind] = [1, i]
                else:
                    count[0] += 1
        out = {}
        for a, (key, kinds) in seen.items():
            kind = max(kinds, key=lambda k: (kinds[k][0], -kinds[k][1]))
            if kind == "number":
                floats = any(_value_kind(md.get(key)) == "float" for md in metadatas)
                kind = "float" if floats else "int"
            out[a] = kind
        return out

    def encode(self, metadatas: Sequence[Mapping[str, Any]]
               ) -> tuple[dict[str, list[Any]], list[str | None]]:
        """``metadatas`` as ``({attribute: column}, extra)``: a column per metadata attribute
        of ``types`` that any document fills (None where a document has no value) and, per
        document, the JSON of what no attribute holds (None when nothing)."""
        resolve = self._resolver()
        n = len(metadatas)
        columns: dict[str, list[Any]] = {}
        extra: list[str | None] = [None] * n
        for i, md in enumerate(metadatas):
            rest: dict[str, Any] = {}
            for key, v in md.items():
                a = resolve(key, i)[0]
                kind = _value_kind(v)
                if a is None or kind is None:
                    rest[key] = _json_value(v, "metadata %r of document %d" % (key, i))
                    continue
                ok, value = _fit(v, kind, self.types[a])
                if not ok:
                    if self.strict:
                        raise InvalidArgument(
                            "metadata %r of document %d: %r (%s) does not fit attribute %r "
                            "(%s); declare the type in metadata_schema, or let "
                            "strict_metadata_types=False keep such values unfiltered"
                            % (key, i, v, kind, a, self.types[a]))
                    if (key, kind) not in self._warned:
                        self._warned.add((key, kind))
                        warnings.warn(
                            "metadata %r: value %r (%s, document %d) does not fit attribute "
                            "%r (%s); such values are kept with the document but filters on "
                            "the key do not see them" % (key, v, kind, i, a, self.types[a]),
                            UnfilteredMetadata, stacklevel=5)
                    rest[key] = _json_value(v, "metadata %r of document %d" % (key, i))
                    continue
                col = columns.get(a)
                if col is None:
                    col = columns[a] = [None] * n
                col[i] = value
            if rest:
                extra[i] = json.dumps(rest, ensure_ascii=False, allow_nan=True)
        return columns, extra

    def decode(self, row: Mapping[str, Any]) -> dict[str, Any]:
        """The metadata of a stored row (a dict of its attributes)."""
        md: dict[str, Any] = {}
        for key, a in self._keys.items():
            v = row.get(a)
            if v is not None:
                md[key] = v
        blob = row.get(self.extra_attribute)
        if blob:
            md.update(json.loads(blob))
        return md


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
    import urllib.parse
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

    def render(self, cond: "Cond") -> str | None:
        """A condition as Sieve filter text (None: every document passes)."""
        if self._table is not None and any(
                self.codec.attribute_of(t.key) is None
                for t in _tests(cond)):
            self._refresh()  # another store or process may have added the attribute
        out = _Renderer(self).render(cond, False)
        if out is True:
            return None
        if out is False:
            return "id < 0"  # ids are never negative: nothing passes
        return out


def quote(s: str) -> str:
    """A filter-language string literal."""
    return "'" + str(s).replace("'", "''") + "'"


# -- conditions -------------------------------------------------------------------------------
#
# The frameworks' filters are parsed into these, then rendered as Sieve filter text with every
# negation pushed down to the tests, where a document without the key (its attribute null) is
# decided as the frameworks' own in-memory filters decide it: it fails a positive test and
# passes the negated one ("!=", "not in"), two-valued, whatever the nesting.


class Cond:
    pass


@dataclass
class All(Cond):
    parts: list[Cond]


@dataclass
class Any_(Cond):
    parts: list[Cond]


@dataclass
class Not(Cond):
    part: Cond


@dataclass
class Test(Cond):
    """``key op value``. ops: eq, gt, gte, lt, lte (a scalar; eq on tags: holds it); in (a
    list: equal to one, or on tags holds one); any, all (a list: tags holding one / every
    one); between (lo, hi); contains (tags holding it); exists (a non-null value; empty lists
    are stored null); empty (null, empty list or empty string). ``name`` is the operator as
    the user wrote it, for messages."""

    key: str
    op: str
    value: Any
    name: str
    # A string field of the store's that the key names when no metadata attribute has it.
    attribute: str | None = None


@dataclass
class Raw(Cond):
    """Filter text as is (two-valued on every row: never negated over a null)."""

    text: str


@dataclass
class Const(Cond):
    value: bool


_SQL_OPS = {"eq": "=", "gt": ">", "gte": ">=", "lt": "<", "lte": "<="}


def _tests(c: Cond) -> Iterator[Test]:
    if isinstance(c, Test):
        yield c
    elif isinstance(c, Not):
        yield from _tests(c.part)
    elif isinstance(c, (All, Any_)):
        for p in c.parts:
            yield from _tests(p)


class _Renderer:
    def __init__(self, table: DocumentTable) -> None:
        self.table = table

    def render(self, c: Cond, neg: bool) -> str | bool:
        if isinstance(c, Const):
            return c.value != neg
        if isinstance(c, Not):
            return self.render(c.part, not neg)
        if isinstance(c, Raw):
            return "NOT (%s)" % c.text if neg else "(%s)" % c.text
        if isinstance(c, (All, Any_)):
            conj = isinstance(c, All) != neg
            parts = [self.render(p, neg) for p in c.parts]
            return _join(parts, conj)
        assert isinstance(c, Test)
        return self.test(c, neg)

    def test(self, t: Test, neg: bool) -> str | bool:
        a = self.table.codec.attribute_of(t.key)
        type_ = self.table.codec.types.get(a) if a is not None else None
        if a is None and t.attribute is not None:
            a, type_ = t.attribute, "string"
        where = "filter on %r (%s)" % (t.key, t.name)
        if a is None:
            _check_values(t, where)
            # No document has the key as an attribute: every document lacks it.
            if t.op == "exists":
                return (not t.value) != neg
            return (t.op == "empty") != neg
        if t.op == "exists":
            if not isinstance(t.value, bool):
                raise InvalidArgument("%s: expects true or false, got %r" % (where, t.value))
            return "%s IS %sNULL" % (a, "" if t.value == neg else "NOT ")
        if t.op == "empty":
            text = "%s IS NULL" % a
            if type_ == "string":
                text = "(%s IS NULL OR %s = '')" % (a, a)
            return "NOT (%s)" % text if neg else text
        positive = self.positive(t, a, type_, where)
        if positive is True or positive is False:
            return positive != neg
        if not neg:
            return positive
        return "(%s IS NULL OR NOT (%s))" % (a, positive)

    def positive(self, t: Test, a: str, type_: str, where: str) -> str | bool:
        op, v = t.op, t.value
        if op in ("any", "all", "contains") and type_ != "tags":
            raise NotSupported("%s: tests a list's members; %r is a %s attribute (lists of "
                               "strings are tags attributes)" % (where, t.key, type_))
        if op in ("in", "any", "all"):
            values = _list(v, where)
            if not values:
                return "%s IS NOT NULL" % a if op == "all" else False
            if type_ == "tags":
                return _join(["%s CONTAINS %s" % (a, _literal(x, "string", where))
                              for x in dict.fromkeys(values)], op == "all")
            lits = [_literal(x, type_, where) for x in values]
            return "%s IN (%s)" % (a, ", ".join(dict.fromkeys(lits)))
        if op == "between":
            pair = _list(v, where)
            if len(pair) != 2:
                raise InvalidArgument("%s: expects [low, high], got %r" % (where, v))
            if type_ not in ("int", "float"):
                raise InvalidArgument("%s: applies to numbers; %r is a %s attribute"
                                      % (where, t.key, type_))
            return "%s BETWEEN %s AND %s" % (a, _literal(pair[0], type_, where),
                                            _literal(pair[1], type_, where))
        if type_ == "tags" and op in ("eq", "contains"):
            return "%s CONTAINS %s" % (a, _literal(v, "string", where))
        if op in _SQL_OPS:
            if op != "eq" and type_ not in ("int", "float"):
                raise InvalidArgument("%s: applies to numbers; %r is a %s attribute"
                                      % (where, t.key, type_))
            return "%s %s %s" % (a, _SQL_OPS[op], _literal(v, type_, where))
        raise InvalidArgument("%s: %r is a %s attribute" % (where, t.key, type_))


def _check_values(t: Test, where: str) -> None:
    """The checks a value gets without an attribute to check it against."""
    values = _list(t.value, where) if t.op in ("in", "any", "all", "between") else [t.value]
    for v in values:
        if t.op == "exists":
            if not isinstance(v, bool):
                raise InvalidArgument("%s: expects true or false, got %r" % (where, v))
        elif t.op != "empty" and _value_kind(v) not in ("bool", "int", "float", "string"):
            raise InvalidArgument("%s: %r is not a str, int, float or bool" % (where, v))


def _list(v: Any, where: str) -> list[Any]:
    if isinstance(v, (list, tuple)):
        return list(v)
    raise InvalidArgument("%s: expects a list, got %r" % (where, v))


def _literal(v: Any, type_: str, where: str) -> str:
    kind = _value_kind(v)
    if type_ == "string":
        if kind != "string":
            raise InvalidArgument("%s: the attribute holds strings, got %r" % (where, v))
        return quote(v)
    if type_ == "bool":
        if kind != "bool":
            raise InvalidArgument("%s: the attribute holds true/false, got %r" % (where, v))
        return "true" if v else "false"
    if type_ in ("int", "float"):
        if kind == "int":
            return str(int(v))
        if kind == "float" and math.isfinite(v):
            return repr(float(v))
        raise InvalidArgument("%s: the attribute holds numbers, got %r" % (where, v))
    raise InvalidArgument("%s: the attribute is %s" % (where, type_))


def _join(parts: list[str | bool], conj: bool) -> str | bool:
    """AND (conj) or OR of rendered parts, constants folded."""
    texts = []
    for p in parts:
        if p is True or p is False:
            if p != conj:
                return p  # false in an AND, true in an OR
            continue
        texts.append(p)
    if not texts:
        return conj
    if len(texts) == 1:
        return texts[0]
    return "(" + (" AND " if conj else " OR ").join(texts) + ")"


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
