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
from typing import Any, Mapping, Sequence, Union

import numpy as np

from . import _arrays, _columns
from ._results import SearchResult, pad
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
                 content_type: str = "application/json", idempotent: bool = True) -> Any:
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
        return self._request("POST", path, json.dumps(obj).encode("utf-8"),
                             idempotent=idempotent)

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
                          shards: int = 1) -> "RemoteCollection":
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
        self._schema = list(self.attributes)

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

    def _alter(self, body: dict[str, Any]) -> dict[str, str]:
        r = self._client._post(self._path + "/alter", body, idempotent=False)
        self.attributes = {a["name"]: a["type"] for a in r["attributes"]}
        self._schema = list(self.attributes)
        return dict(self.attributes)

    def rename(self, new_name: str) -> None:
        """As :meth:`sieve.Collection.rename`; this object then uses the new name."""
        self._client.rename_collection(self.name, new_name)
        self.name = new_name
        self._path = "/collections/" + _quote(new_name)

    def __len__(self) -> int:
        return int(self.stats()["rows"])

    def ingest(self, vectors: Any, attributes: Any = None, ids: Any = None, *,
               upsert: bool = False, auto_ids: bool = False) -> IngestResult:
        """Adds rows, as :meth:`sieve.Collection.ingest` (``upsert``, ``auto_ids`` alike); one
        call is one atomic commit on the server. Without attributes and ids the vectors go as a
        binary ``.npy`` body (always new rows with ids assigned by the server); otherwise as
        JSON.

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
        if attributes is None and ids is None:
            r = self._client._request("POST", self._path + "/rows", _npy_bytes(v),
                                      content_type="application/x-npy", idempotent=False)
        else:
            body: dict[str, Any] = {"vectors": v.astype(np.float32).tolist()}
            if ids is not None:
                body["ids"] = _arrays.ids(ids).tolist()
            columns = _columns.normalize(attributes, self._schema, n)
            if columns is not None:
                body["attributes"] = _columns.to_rows(columns, self._schema, n)
            if upsert:
                body["upsert"] = True
            if auto_ids:
                body["auto_ids"] = True
            r = self._client._post(self._path + "/rows", body, idempotent=False)
        return IngestResult(int(r["ingested"]), int(r["rows"]), int(r.get("replaced", 0)))

    def search(self, queries: Any, k: int = 10, filter: str | None = None,
               filters: Sequence[str | None] | None = None, device: str = "auto",
               path: str = "auto", explain: bool = False) -> SearchResult:
        """As :meth:`sieve.Collection.search`: the same arguments, the same
        :class:`SearchResult` (ids -1 and the metric's worst distance where fewer than k rows
        pass). The server may run the request in one batch with others'; answers are the
        same."""
        k = _arrays.k_value(k)
        filter, per_query = _arrays.search_filters(filter, filters)
        q = _arrays.matrix(queries, "queries")
        body: dict[str, Any] = {"vectors": q.astype(np.float32).tolist(), "k": k}
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
        r = self._client._post(self._path + "/query", body)
        res = pad([(x["ids"], x["distances"]) for x in r["results"]], k, self.metric)
        res.plan = r.get("plan")
        return res

    def delete(self, ids: Any = None, filter: str | None = None) -> int:
        """As :meth:`sieve.Collection.delete`; returns the rows deleted."""
        if (ids is None) == (filter is None):
            raise InvalidArgument("give exactly one of ids or filter")
        body = {"ids": _arrays.ids(ids).tolist()} if ids is not None else {"filter": filter}
        return int(self._client._post(self._path + "/delete", body, idempotent=False)["deleted"])

    def __repr__(self) -> str:
        return "sieve.RemoteCollection(%r, dim=%d, metric=%r)" % (self.name, self.dim,
                                                                  self.metric)


