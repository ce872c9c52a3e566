"""A client for ``sieve serve``: the collection API of :mod:`sieve` over HTTP/JSON.

Pure Python on the standard library (``http.client``). One keep-alive connection per thread
(a Client may be shared by threads); a connection the server closed while idle is replaced and
the request sent again when it cannot have been processed. Errors are the classes of
:mod:`sieve.errors`, chosen by the HTTP status, carrying the server's ``{"error": ...}``
message and ``http_status``.
"""

from __future__ import annotations

import http.client
import io
import json
import select
import threading
import urllib.parse
from typing import Any, Iterator, Mapping, Sequence, Union

import numpy as np

from . import _arrays, _columns
from ._results import Group, GroupedResult, SearchResult, pad
from ._embedded import IngestResult
from .errors import (AlreadyExists, Error, Internal, InvalidArgument, NotFound,
                     ResourceExhausted, Unauthorized, Unavailable)

_STATUS_ERRORS: dict[int, type[Error]] = {
    400: InvalidArgument,
    401: Unauthorized,
    404: NotFound,
    405: InvalidArgument,
    409: AlreadyExists,
    413: ResourceExhausted,
    500: Internal,
    503: Unavailable,
}

# Failures of a reused connection that the server closed while it was idle.
_STALE = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError,
          http.client.CannotSendRequest)


class Client:
    """A connection to a ``sieve serve`` server.

    Args:
        url: ``http://HOST:PORT`` (``https://`` works too), as the server printed it in
            ``{"listening": "HOST:PORT"}``.
        token: the bearer token of a server started with ``--token-file``.
        timeout: seconds to wait for a connection or an answer.
    """

    def __init__(self, url: str, token: str | None = None, timeout: float = 60.0) -> None:
        if "://" not in url:
            url = "http://" + url
        u = urllib.parse.urlsplit(url)
        if u.scheme not in ("http", "https") or not u.hostname:
            raise InvalidArgument("url must be http://HOST:PORT, got %r" % url)
        self.url = url.rstrip("/")
        self._https = u.scheme == "https"
        self._host = u.hostname
        self._port = u.port or (443 if self._https else 80)
        self._prefix = u.path.rstrip("/")
        self._timeout = timeout
        self._headers = {"Authorization": "Bearer " + token} if token else {}
        self._local = threading.local()
        self._lock = threading.Lock()
        self._all: list[http.client.HTTPConnection] = []

    # -- connections ---------------------------------------------------------------------------

    def _connection(self) -> tuple[http.client.HTTPConnection, bool]:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            # Between requests nothing is due from the server: a readable socket means it closed
            # the connection (idle timeout), so a request is never sent on one known dead.
            sock = conn.sock
            if sock is not None and select.select([sock], [], [], 0)[0]:
                self._drop()
            else:
                return conn, True
        cls = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
        conn = cls(self._host, self._port, timeout=self._timeout)
        self._local.conn = conn
        with self._lock:
            self._all.append(conn)
        return conn, False

    def _drop(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None
            with self._lock:
                if conn in self._all:
                    self._all.remove(conn)

    def close(self) -> None:
        """Closes every connection of this client (later calls open new ones)."""
        with self._lock:
            conns, self._all = self._all, []
        for c in conns:
            c.close()
        self._local = threading.local()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _request(self, method: str, path: str, body: bytes | None = None,
                 content_type: str = "application/json", idempotent: bool = True,
                 text: bool = False) -> Any:
        headers = dict(self._headers)
        if body is not None:
            headers["Content-Type"] = content_type
        for attempt in (0, 1):
            conn, reused = self._connection()
            sent = False
            try:
                conn.request(method, self._prefix + path, body=body, headers=headers)
                sent = True
                resp = conn.getresponse()
                data = resp.read()
            except _STALE as e:
                self._drop()
                if reused and attempt == 0 and (idempotent or not sent):
                    continue
                raise Unavailable("%s %s%s: the connection failed: %s"
                                  % (method, self.url, path, e)) from e
            except (OSError, http.client.HTTPException) as e:
                self._drop()
                raise Unavailable("cannot reach %s (%s %s): %s"
                                  % (self.url, method, path, e)) from e
            if resp.getheader("Connection", "").lower() == "close":
                self._drop()
            if text and 200 <= resp.status < 300:
                return data.decode("utf-8", "replace")
            return self._answer(resp.status, data)
        raise AssertionError("unreachable")

    @staticmethod
    def _answer(status: int, data: bytes) -> Any:
        if 200 <= status < 300:
            return json.loads(data) if data else None
        message = data.decode("utf-8", "replace").strip()
        try:
            j = json.loads(data)
            if isinstance(j, dict) and "error" in j:
                message = str(j["error"])
        except ValueError:
            pass
        cls = _STATUS_ERRORS.get(status, Error)
        raise cls(message or "HTTP %d" % status, http_status=status)

    def _post(self, path: str, obj: Any, idempotent: bool = True) -> Any:
        try:
            body = json.dumps(obj, allow_nan=False).encode("utf-8")
        except ValueError as e:  # NaN or an infinity: JSON has no such number
            raise InvalidArgument("%s: %s (JSON has no NaN or infinity)" % (path, e)) from None
        return self._request("POST", path, body, idempotent=idempotent)

    # -- the API -------------------------------------------------------------------------------

    def health(self) -> dict[str, Any]:
        """``{"status": "ok"}`` when the server answers."""
        return self._request("GET", "/health")

    def collections(self) -> list[str]:
        """The names of the server's collections, sorted."""
        return self._request("GET", "/collections")["collections"]

    def create_collection(self, name: str, dim: int, metric: str = "l2", dtype: str = "f32",
                          attributes: Union[Mapping[str, str], Sequence[tuple[str, str]],
                                            None] = None,
                          shards: int = 1, bm25_k1: float = 1.5,
                          bm25_b: float = 0.75) -> "RemoteCollection":
        """Creates a collection on the server and returns it; arguments as
        :meth:`sieve.Database.create_collection`.

        Raises:
            InvalidArgument: a bad name, dim, metric, dtype or attribute list (HTTP 400).
            AlreadyExists: a collection of that name exists (HTTP 409).
        """
        pairs = list(attributes.items()) if isinstance(attributes, Mapping) else list(
            attributes or [])
        body: dict[str, Any] = {"name": name, "dim": int(dim), "metric": metric,
                                "dtype": dtype, "attributes": {str(a): str(t) for a, t in pairs},
                                "shards": int(shards)}
        if (bm25_k1, bm25_b) != (1.5, 0.75):
            body["bm25"] = {"k1": float(bm25_k1), "b": float(bm25_b)}
        self._post("/collections", body, idempotent=False)
        return RemoteCollection(self, name)

    def collection(self, name: str) -> "RemoteCollection":
        """The collection called ``name``. Raises NotFound when there is none."""
        return RemoteCollection(self, name)

    def rename_collection(self, name: str, new_name: str) -> None:
        """As :meth:`sieve.Database.rename_collection` (POST /collections/NAME/rename)."""
        self._post("/collections/" + _quote(name) + "/rename", {"to": new_name},
                   idempotent=False)

    def set_alias(self, alias: str, collection: str) -> None:
        """As :meth:`sieve.Database.set_alias` (PUT /aliases/ALIAS)."""
        self._request("PUT", "/aliases/" + _quote(alias),
                      json.dumps({"collection": collection}).encode("utf-8"))

    def drop_alias(self, alias: str) -> None:
        """As :meth:`sieve.Database.drop_alias` (DELETE /aliases/ALIAS)."""
        self._request("DELETE", "/aliases/" + _quote(alias), idempotent=False)

    def aliases(self) -> dict[str, str]:
        """As :meth:`sieve.Database.aliases` (GET /aliases)."""
        return {a["alias"]: a["collection"] for a in self._request("GET", "/aliases")["aliases"]}

    def drop_collection(self, name: str) -> None:
        """As :meth:`sieve.Database.drop_collection` (DELETE /collections/NAME): the collection
        and every row of it are gone, durably. NotFound when there is none; InvalidArgument for
        an alias, or a collection an alias names."""
        self._request("DELETE", "/collections/" + _quote(name), idempotent=False)

    def compact(self, force: bool = False) -> dict[str, Any]:
        """As :meth:`sieve.Database.compact`: compacts every collection (one POST
        /collections/NAME/compact each) and adds their figures up (notes joined)."""
        total: dict[str, Any] = {}
        notes = []
        for name in self.collections():
            r = self.collection(name).compact(force=force)
            if "note" in r:
                notes.append("%s: %s" % (name, r.pop("note")))
            for key, value in r.items():
                total[key] = total.get(key, 0) + value
        if not total:
            total = {key: 0 for key in ("bytes_before", "bytes_after", "rows_removed",
                                        "shards_rewritten", "shards_skipped",
                                        "rows_left_deleted")}
        if notes:
            total["note"] = "; ".join(notes)
        return total

    def snapshot(self) -> "RemoteSnapshot":
        """As :meth:`sieve.Database.snapshot` (POST /snapshots): a snapshot of the whole store
        on the server, for ``snapshot=`` of :meth:`RemoteCollection.search`, ``get``,
        ``count`` and ``scan``. The server releases a token no read has used for its
        ``--snapshot-idle-s`` (``idle_timeout_s``)."""
        r = self._request("POST", "/snapshots", idempotent=False)
        return RemoteSnapshot(self, str(r["snapshot"]), int(r["idle_timeout_s"]))

    def backup(self, dest: str, keep: int = 0) -> dict[str, Any]:
        """As :meth:`sieve.Database.backup` (POST /backup): backs the served store up into
        ``dest`` on the server's machine (with ``--backup-dir``: a relative path inside it)
        while it keeps serving."""
        if keep < 0:
            raise InvalidArgument(f"keep must be >= 0, not {keep}")
        return self._post("/backup", {"dest": str(dest), "keep": int(keep)}, idempotent=False)

    def metrics(self) -> str:
        """The server's Prometheus metrics text (GET /metrics)."""
        return self._request("GET", "/metrics", text=True)

    def openapi(self) -> dict[str, Any]:
        """The server's OpenAPI 3.1 document (GET /openapi.json)."""
        return self._request("GET", "/openapi.json")

    def __getitem__(self, name: str) -> "RemoteCollection":
        return RemoteCollection(self, name)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self.collections()

    def __repr__(self) -> str:
        return "sieve.Client(%r)" % self.url


def _quote(name: str) -> str:
    return urllib.parse.quote(name, safe="")


def _npy_bytes(v: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, v, allow_pickle=False)
    return buf.getvalue()


def _row(x: Mapping[str, Any]) -> dict[str, Any]:
    """A row of the server's answer ({"id", "attributes"?, "vector"?}) as the embedded API's
    dict: {"id", <attribute>: value, ..., "vector"?}."""
    row: dict[str, Any] = {"id": int(x["id"])}
    row.update(x.get("attributes") or {})
    if "vector" in x:
        row["vector"] = np.asarray(x["vector"], dtype=np.float32)
    return row


def _result_rows(result: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One query's neighbours as rows (with include), best first."""
    attributes = result.get("attributes")
    vectors = result.get("vectors")
    rows = []
    for i, id_ in enumerate(result["ids"]):
        row: dict[str, Any] = {"id": int(id_)}
        if attributes is not None:
            row.update(attributes[i])
        if vectors is not None:
            row["vector"] = np.asarray(vectors[i], dtype=np.float32)
        rows.append(row)
    return rows


class RemoteSnapshot:
    """A snapshot token of a server (:meth:`Client.snapshot`), as :class:`sieve.Snapshot` is
    of an embedded database: reads given ``snapshot=`` read the version it names. Release it
    (:meth:`release`, a ``with`` block) when done; the server also releases a token no read has
    used for ``idle_timeout_s`` seconds, after which reads given it raise NotFound."""

    def __init__(self, client: Client, token: str, idle_timeout_s: int) -> None:
        self._client = client
        self.token = token
        self.idle_timeout_s = idle_timeout_s
        self._released = False

    @property
    def released(self) -> bool:
        """Whether :meth:`release` was called."""
        return self._released

    def release(self) -> None:
        """Releases the token on the server (later calls do nothing; a token the server
        released already is not an error)."""
        if self._released:
            return
        self._released = True
        try:
            self._client._request("DELETE", "/snapshots/" + _quote(self.token),
                                  idempotent=False)
        except NotFound:
            pass

    def __enter__(self) -> "RemoteSnapshot":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.release()

    def __repr__(self) -> str:
        return "sieve.RemoteSnapshot(%r%s)" % (self.token, ", released" if self._released else "")


class RemoteCollection:
    """A collection on a server, with the methods of :class:`sieve.Collection`.

    Attributes (its schema): ``name``, ``dim``, ``metric``, ``dtype``, ``attributes``,
    ``shards``.
    """

    def __init__(self, client: Client, name: str) -> None:
        self._client = client
        self.name = name
        self._path = "/collections/" + _quote(name)
        spec = self.stats()  # NotFound for an unknown name
        self.dim: int = spec["dim"]
        self.metric: str = spec["metric"]
        self.dtype: str = spec["dtype"]
        self.shards: int = spec.get("shards", 1)
        self.attributes: dict[str, str] = dict(spec.get("attributes", {}))

    @property
    def _schema(self) -> list[str]:
        return list(self.attributes)

    @property
    def _types(self) -> list[str]:
        return list(self.attributes.values())

    def stats(self) -> dict[str, Any]:
        """As :meth:`sieve.Collection.stats`."""
        return self._client._request("GET", self._path)

    def add_attribute(self, name: str, type: str,  # noqa: A002 - the schema's word
                      default: Any = None) -> dict[str, str]:
        """As :meth:`sieve.Collection.add_attribute` (POST /collections/NAME/alter)."""
        return self._alter({"add_attribute": {"name": name, "type": type, "default": default}})

    def drop_attribute(self, name: str) -> dict[str, str]:
        """As :meth:`sieve.Collection.drop_attribute`."""
        return self._alter({"drop_attribute": name})

    def rename_attribute(self, name: str, new_name: str) -> dict[str, str]:
        """As :meth:`sieve.Collection.rename_attribute`."""
        return self._alter({"rename_attribute": {"from": name, "to": new_name}})

    def set_bm25(self, k1: float | None = None, b: float | None = None) -> tuple[float, float]:
        """As :meth:`sieve.Collection.set_bm25` (POST /collections/NAME/alter, ``set_bm25``)."""
        body: dict[str, Any] = {}
        if k1 is not None:
            body["k1"] = float(k1)
        if b is not None:
            body["b"] = float(b)
        r = self._client._post(self._path + "/alter", {"set_bm25": body}, idempotent=False)
        return (float(r["bm25"]["k1"]), float(r["bm25"]["b"]))

    def _alter(self, body: dict[str, Any]) -> dict[str, str]:
        r = self._client._post(self._path + "/alter", body, idempotent=False)
        self.attributes = {a["name"]: a["type"] for a in r["attributes"]}
        return dict(self.attributes)

    def rename(self, new_name: str) -> None:
        """As :meth:`sieve.Collection.rename`; this object then uses the new name."""
        self._client.rename_collection(self.name, new_name)
        self.name = new_name
        self._path = "/collections/" + _quote(new_name)

    def __len__(self) -> int:
        return int(self.stats()["rows"])

    def ingest(self, vectors: Any, attributes: Any = None, ids: Any = None, *,
               batch_rows: int = 0, upsert: bool = False,
               auto_ids: bool = False) -> IngestResult:
        """Adds rows, as :meth:`sieve.Collection.ingest` (``attributes``, ``ids``, ``upsert``,
        ``auto_ids`` alike). ``batch_rows`` 0 (the default) sends the whole call as one request,
        one atomic commit on the server; N > 0 sends N rows a request, each one atomic commit
        (so a large ingest fits the server's ``--max-body-bytes``), stopping at the first
        request refused: the requests before it stay. Without attributes and ids the vectors go
        as a binary ``.npy`` body (always new rows with ids assigned by the server); otherwise
        as JSON.

        Raises:
            InvalidArgument: what the embedded ingest rejects (HTTP 400).
            ResourceExhausted: the body is over the server's ``--max-body-bytes`` (HTTP 413).
        """
        v = _arrays.matrix(vectors, "vectors")
        n = v.shape[0]
        if v.shape[1] != self.dim and n > 0:
            raise InvalidArgument("vectors have %d components, collection %r has dim %d"
                                  % (v.shape[1], self.name, self.dim))
        if upsert and ids is None:
            raise InvalidArgument("upsert: every row needs an id (give ids)")
        if int(batch_rows) < 0:
            raise InvalidArgument("batch_rows must be >= 0, got %r" % (batch_rows,))
        id_array = None if ids is None else _arrays.ids(ids)
        if id_array is not None and len(id_array) != n:
            raise InvalidArgument("%d ids for %d vectors" % (len(id_array), n))
        columns = _columns.normalize(attributes, self._schema, n, self._types)
        return IngestResult(*self._send(v, id_array, columns, batch_rows, upsert, auto_ids))

    def _send(self, v: np.ndarray, id_array: np.ndarray | None, columns: Any, batch_rows: int,
              upsert: bool, auto_ids: bool) -> tuple[int, int, int]:
        """Sends checked rows (``columns`` as ``_columns.normalize`` gives them) in requests of
        ``batch_rows`` rows (0: one); (ingested, live rows after, replaced)."""
        n = v.shape[0]
        rows = _columns.to_rows(columns, self._schema, n)
        step = int(batch_rows) or max(n, 1)
        ingested = replaced = 0
        live = len(self) if n == 0 else 0
        for begin in range(0, n, step):
            end = min(n, begin + step)
            if rows is None and id_array is None:
                r = self._client._request("POST", self._path + "/rows", _npy_bytes(v[begin:end]),
                                          content_type="application/x-npy", idempotent=False)
            else:
                body: dict[str, Any] = {"vectors": v[begin:end].astype(np.float32).tolist()}
                if id_array is not None:
                    body["ids"] = id_array[begin:end].tolist()
                if rows is not None:
                    body["attributes"] = rows[begin:end]
                if upsert:
                    body["upsert"] = True
                # Past the first request the collection has the first one's rows.
                if auto_ids or (id_array is None and begin > 0):
                    body["auto_ids"] = True
                r = self._client._post(self._path + "/rows", body, idempotent=False)
            ingested += int(r["ingested"])
            replaced += int(r.get("replaced", 0))
            live = int(r["rows"])
        return ingested, live, replaced

    def _write_batch(self, v: Any, ids: Any, columns: Any, batch_rows: int, upsert: bool,
                     auto_ids: bool, validate_only: bool) -> tuple[int, int | None, int]:
        # The server has no check-only request: a batch is checked here (columns, types, ids)
        # and by the server as it commits.
        if validate_only:
            return 0, None, 0
        return self._send(np.asarray(v), ids, columns, batch_rows, upsert, auto_ids)

    def ingest_arrow(self, data: Any, vector_column: str = "vector",
                     id_column: str | None = None, *, columns: Sequence[str] | None = None,
                     batch_rows: int = 65536, upsert: bool = False,
                     auto_ids: bool = False) -> IngestResult:
        """As :meth:`sieve.Collection.ingest_arrow` (the same data, columns and errors), each
        record batch sent as requests of ``batch_rows`` rows. Every batch's columns, types and
        ids are checked here first where ``data`` can be read twice (a table or record batch);
        the server checks each request as it commits it, so a request it refuses leaves the
        ones before it committed (the error says which rows were)."""
        from . import _arrow

        batches, replayable = _arrow.table_batches(data)
        ingested, rows, replaced = _arrow.ingest_batches(
            self._write_batch, batches, replayable, vector_column=vector_column,
            id_column=id_column, columns=columns, dim=self.dim, schema=self._schema,
            batch_rows=batch_rows, upsert=upsert, auto_ids=auto_ids)
        return IngestResult(ingested, len(self) if rows is None else rows, replaced)

    def ingest_parquet(self, path: Any, vector_column: str = "vector",
                       id_column: str | None = None, *, columns: Sequence[str] | None = None,
                       batch_rows: int = 65536, upsert: bool = False,
                       auto_ids: bool = False) -> IngestResult:
        """As :meth:`sieve.Collection.ingest_parquet`, read here (``pyarrow.parquet``) and sent
        as :meth:`ingest_arrow` sends a table: the whole file is checked here before the first
        request, then each batch is sent."""
        from . import _arrow

        batches = _arrow.parquet_batches(path, vector_column, id_column, columns, batch_rows)
        ingested, rows, replaced = _arrow.ingest_batches(
            self._write_batch, batches, True, vector_column=vector_column, id_column=id_column,
            columns=columns, dim=self.dim, schema=self._schema, batch_rows=batch_rows,
            upsert=upsert, auto_ids=auto_ids)
        return IngestResult(ingested, len(self) if rows is None else rows, replaced)

    def upsert(self, vectors: Any, attributes: Any = None, ids: Any = None, *,
               batch_rows: int = 0) -> IngestResult:
        """``ingest(..., upsert=True)``: replaces the live rows with these ids, inserts the
        rest."""
        return self.ingest(vectors, attributes, ids, batch_rows=batch_rows, upsert=True)

    def search(self, queries: Any = None, k: int = 10, filter: str | None = None,
               filters: Sequence[str | None] | None = None, device: str = "auto",
               path: str = "auto", explain: bool = False,
               include: str | Sequence[str] | None = None, *,
               snapshot: "RemoteSnapshot | None" = None, text: str | None = None,
               text_field: str | None = None, fusion: str = "rrf", rrf_c: float = 60.0,
               vector_weight: float = 1.0, text_weight: float = 1.0, depth: int = 0,
               group_by: str | None = None, group_size: int = 1,
               group_strategy: str = "auto", radius: float | None = None,
               limit: int | None = None, offset: int | None = None,
               after: str | Sequence[str | None] | None = None
               ) -> SearchResult | GroupedResult:
        """As :meth:`sieve.Collection.search`: the same arguments, the same
        :class:`SearchResult` (ids -1 and the metric's worst distance where fewer than k rows
        pass; with ``include``, ``result.rows``; ``limit_reached`` with ``radius``, ``next``
        with ``offset`` or ``after``), or with ``group_by`` the same :class:`GroupedResult`.
        The server may run the request in one batch with others' (never a grouped request, a
        range search or a page); answers are the same."""
        k = _arrays.k_value(k)
        radius, limit, offset, after = _arrays.range_and_pages(radius, limit, offset, after)
        include = _arrays.include_text(include)
        filter, per_query = _arrays.search_filters(filter, filters)
        text_query = text is not None or text_field is not None
        body: dict[str, Any] = {"k": k}
        if queries is not None or not text_query:
            q = _arrays.matrix(queries, "queries")
            body["vectors"] = q.astype(np.float32).tolist()
        if text_query:
            body["text_field"] = text_field
            body["text"] = text
            body["fusion"] = {"method": fusion, "rrf_c": float(rrf_c),
                              "vector_weight": float(vector_weight),
                              "text_weight": float(text_weight),
                              "depth": _arrays.depth_value(depth)}
        if filter is not None:
            body["filter"] = filter
        if per_query is not None:
            body["filters"] = per_query
        if device != "auto":
            body["device"] = device
        if path != "auto":
            body["path"] = path
        if explain:
            body["explain"] = True
        if include:
            body["include"] = include
        if group_by is not None:
            by, size, strategy = _arrays.group_args(group_by, group_size, group_strategy)
            body["group_by"] = by
            body["group_size"] = size
            if strategy != "auto":
                body["group_strategy"] = strategy
        if radius is not None:
            body["radius"] = radius
            body["limit"] = limit
            del body["k"]
        if offset is not None:
            body["offset"] = offset
        if after is not None:
            body["after"] = after
        self._snapshot(body, snapshot)
        r = self._client._post(self._path + "/query", body)
        if group_by is not None:
            return GroupedResult(
                [[Group(g["value"], g["ids"], g["distances"],
                        _result_rows(g) if include else None) for g in x["groups"]]
                 for x in r["results"]], r.get("plan"))
        if text_query:  # float64 scores, larger is better, -inf where missing
            res = pad([(x["ids"], x["distances"]) for x in r["results"]], k, "ip", np.float64)
        else:
            width = k
            if radius is not None:
                width = max([len(x["ids"]) for x in r["results"]], default=0)
            res = pad([(x["ids"], x["distances"]) for x in r["results"]], width, self.metric)
        res.plan = r.get("plan")
        if include:
            res.rows = [_result_rows(x) for x in r["results"]]
        if radius is not None:
            res.limit_reached = [bool(x["limit_reached"]) for x in r["results"]]
        if offset is not None or after is not None:
            res.next = [x.get("next") for x in r["results"]]
        return res

    def get(self, ids: Any, include: str | Sequence[str] = "*", *,
            snapshot: "RemoteSnapshot | None" = None) -> list[dict[str, Any] | None]:
        """As :meth:`sieve.Collection.get` (POST .../get): a dict per id (``{"id",
        <attribute>: value, ..., "vector"?}``, the vector a float32 array), None for an id
        without a live row. At most 100,000 ids a call (the server's limit)."""
        body: dict[str, Any] = {"ids": _arrays.ids(ids).tolist(),
                                "include": _arrays.include_text(include, "*")}
        self._snapshot(body, snapshot)
        r = self._client._post(self._path + "/get", body)
        return [_row(x) if x.get("found") else None for x in r["rows"]]

    def count(self, filter: str | None = None, *,
              snapshot: "RemoteSnapshot | None" = None) -> int:
        """As :meth:`sieve.Collection.count` (POST .../count)."""
        body: dict[str, Any] = {"filter": filter or ""}
        self._snapshot(body, snapshot)
        return int(self._client._post(self._path + "/count", body)["count"])

    def scan(self, filter: str | None = None, include: str | Sequence[str] = "*",
             page_rows: int = 10000, *,
             snapshot: "RemoteSnapshot | None" = None) -> Iterator[dict[str, Any]]:
        """As :meth:`sieve.Collection.scan` (POST .../scroll, ``page_rows`` 1 to 100,000 a
        page): every live row passing ``filter`` in ascending id order, dicts as :meth:`get`'s.
        Every page reads one version: ``snapshot``'s when given, else a snapshot the server
        opens at the first page and releases with the last (or this iterator releases when it
        is closed or collected before)."""
        body: dict[str, Any] = {"filter": filter or "",
                                "include": _arrays.include_text(include, "*"),
                                "limit": int(page_rows)}
        own = None
        if snapshot is None:
            body["snapshot"] = True
        else:
            self._snapshot(body, snapshot)
        done = False
        try:
            while True:
                r = self._client._post(self._path + "/scroll", body)
                if own is None and snapshot is None and r.get("snapshot"):
                    own = str(r["snapshot"])
                    body["snapshot"] = own
                for x in r["rows"]:
                    yield _row(x)
                if r.get("next") is None:
                    done = True
                    return
                body["after"] = int(r["next"])
        finally:
            # A scroll the server opened a snapshot for releases it with its last page.
            if own is not None and not done:
                try:
                    self._client._request("DELETE", "/snapshots/" + _quote(own),
                                          idempotent=False)
                except Error:
                    pass  # expired or released already: nothing to release

    def update(self, set: Mapping[str, Any], ids: Any = None,  # noqa: A002 - the API's word
               filter: str | None = None) -> int:
        """As :meth:`sieve.Collection.update` (POST .../update): sets attributes of the live
        rows with these ids or passing ``filter`` (exactly one), in one atomic durable commit.
        Returns the rows updated."""
        if (ids is None) == (filter is None):
            raise InvalidArgument("give exactly one of ids or filter")
        body: dict[str, Any] = {"set": {str(k): _columns.jsonable(_columns.value_for(
            v, self.attributes.get(str(k)))) for k, v in set.items()}}
        if ids is not None:
            body["ids"] = _arrays.ids(ids).tolist()
        else:
            body["filter"] = filter
        return int(self._client._post(self._path + "/update", body, idempotent=False)["updated"])

    def compact(self, force: bool = False) -> dict[str, Any]:
        """As :meth:`sieve.Collection.compact` (POST .../compact)."""
        return dict(self._client._post(self._path + "/compact", {"force": bool(force)},
                                       idempotent=False))

    def delete(self, ids: Any = None, filter: str | None = None) -> int:
        """As :meth:`sieve.Collection.delete`; returns the rows deleted."""
        if (ids is None) == (filter is None):
            raise InvalidArgument("give exactly one of ids or filter")
        body = {"ids": _arrays.ids(ids).tolist()} if ids is not None else {"filter": filter}
        return int(self._client._post(self._path + "/delete", body, idempotent=False)["deleted"])

    def _snapshot(self, body: dict[str, Any], snapshot: "RemoteSnapshot | None") -> None:
        if snapshot is None:
            return
        if not isinstance(snapshot, RemoteSnapshot):
            raise TypeError("snapshot must be a sieve.RemoteSnapshot (Client.snapshot()), not %s"
                            % type(snapshot).__name__)
        if snapshot._client is not self._client and snapshot._client.url != self._client.url:
            raise InvalidArgument("snapshot %r is of another server (%s)"
                                  % (snapshot.token, snapshot._client.url))
        body["snapshot"] = snapshot.token

    def __repr__(self) -> str:
        return "sieve.RemoteCollection(%r, dim=%d, metric=%r)" % (self.name, self.dim,
                                                                  self.metric)


