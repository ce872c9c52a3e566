"""LangChain's ``VectorStore`` over a Sieve collection (the extra ``langchain``:
``pip install .[langchain]``).

::

    import sieve
    from sieve.langchain import SieveVectorStore

    store = SieveVectorStore(embeddings, database=sieve.open("/tmp/db"), collection_name="docs")
    store.add_texts(["..."], metadatas=[{"source": "a.pdf", "page": 3}])
    store.similarity_search("question", k=4, filter={"page": {"$gte": 2}})

A document is a row: its id (a string) kept in the attribute ``lc_id`` and hashed to the row id,
its text in ``page_content``, each metadata key in an attribute of its own with the type of its
values (filterable, in LangChain's filter dicts or in Sieve's filter language), and what no
attribute holds in the JSON attribute ``lc_metadata``. docs/integrations.md has the rules.
"""

from __future__ import annotations

import os
import uuid
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.runnables.config import run_in_executor
from langchain_core.structured_query import (Comparator, Comparison, Operation, Operator,
                                             StructuredQuery, Visitor)
from langchain_core.vectorstores import VectorStore

from . import _conditions as C
from . import _documents as D
from ._metadata import UnfilteredMetadata
from ._embedded import Database
from ._embedded import open as _open
from .client import Client
from .errors import InvalidArgument, NotSupported

__all__ = ["SieveVectorStore", "SieveTranslator", "UnfilteredMetadata"]

KEY_ATTRIBUTE = "lc_id"
TEXT_ATTRIBUTE = "page_content"
METADATA_ATTRIBUTE = "lc_metadata"

# LangChain's filter operators (those of its PGVector and Chroma stores) and their tests.
_OPERATORS = {"$eq": "eq", "$gt": "gt", "$gte": "gte", "$lt": "lt", "$lte": "lte",
              "$in": "in", "$between": "between", "$exists": "exists",
              "$contains": "contains", "$all": "all"}
_NEGATED = {"$ne": "eq", "$nin": "in"}
_UNSUPPORTED = ("$like", "$ilike", "$regex", "$text", "$size", "$elemMatch", "$type", "$mod")


def _parse(f: Any, where: str = "filter") -> C.Cond:
    """A LangChain filter dict as a condition."""
    if not isinstance(f, Mapping):
        raise InvalidArgument("%s: expected a dict, got %r" % (where, f))
    parts: list[C.Cond] = []
    for key, value in f.items():
        if not isinstance(key, str):
            raise InvalidArgument("%s: key %r is not a string" % (where, key))
        if key in ("$and", "$or"):
            if not isinstance(value, (list, tuple)):
                raise InvalidArgument("%s: %s expects a list of filters, got %r"
                                      % (where, key, value))
            subs = [_parse(x, "%s.%s[%d]" % (where, key, i)) for i, x in enumerate(value)]
            parts.append(C.All(subs) if key == "$and" else C.Any_(subs))
        elif key == "$not":
            if isinstance(value, (list, tuple)):
                parts.append(C.Not(C.All([_parse(x, where + ".$not") for x in value])))
            else:
                parts.append(C.Not(_parse(value, where + ".$not")))
        elif key.startswith("$"):
            raise InvalidArgument("%s: %s is not an operator Sieve can evaluate (%s)"
                                  % (where, key, _operators_text()))
        elif isinstance(value, Mapping) and value and all(
                isinstance(k, str) and k.startswith("$") for k in value):
            for op, v in value.items():
                parts.append(_test(key, op, v, where))
        else:
            parts.append(_test(key, "$eq", value, where))
    return C.All(parts)


def _operators_text() -> str:
    return "filters take " + ", ".join(list(_OPERATORS) + list(_NEGATED) +
                                       ["$and", "$or", "$not"])


def _test(key: str, op: str, value: Any, where: str) -> C.Cond:
    if op in ("$eq", "$ne") and value is None:
        # {"k": None}: the key is absent (or None), as MongoDB reads it.
        c: C.Cond = C.Test(key, "exists", True, op)
        return c if op == "$ne" else C.Not(c)
    if op in ("$eq", "$ne") and isinstance(value, (list, tuple, dict)):
        raise InvalidArgument("%s: %r %s %r: compare with one value (for lists use $in, $nin, "
                              "$contains or $all)" % (where, key, op, value))
    if op in _NEGATED:
        return C.Not(C.Test(key, _NEGATED[op], value, op))
    if op in _OPERATORS:
        return C.Test(key, _OPERATORS[op], value, op)
    if op in _UNSUPPORTED:
        raise NotSupported("%s: %r: %s has no equivalent in Sieve's filter language (%s)"
                              % (where, key, op, _operators_text()))
    raise InvalidArgument("%s: %r: unknown operator %s (%s)" % (where, key, op,
                                                                _operators_text()))


class SieveVectorStore(VectorStore):
    """A LangChain vector store in a Sieve collection: exact search, typed metadata.

    Args:
        embedding: the LangChain ``Embeddings`` for texts and queries.
        collection: a :class:`sieve.Collection` or :class:`sieve.RemoteCollection` to use
            (attributes the store needs are added at its first write); or:
        database: a :class:`sieve.Database`, a :class:`sieve.Client`, a path (opened with
            :func:`sieve.open`, closed by :meth:`close`) or an ``http://`` URL (a client), with
            ``collection_name``: the collection, used when it exists, created at the first
            write otherwise (dim from the embeddings, ``metric``, ``dtype``).
        metric: ``"cosine"`` (default), ``"l2"`` or ``"ip"``, for a collection the store
            creates; an existing collection keeps its own.
        metadata_schema: ``{metadata key: type}`` (``int``, ``float``, ``string``, ``bool``,
            ``tags``) created with the collection; other keys take the type most of their
            values have in the first write that brings them.
        new_metadata_keys: a key without an attribute: ``"add"`` (default) adds one,
            ``"json"`` keeps it in the JSON attribute (not filterable), ``"error"`` refuses the
            documents.
        strict_metadata_types: a value that does not fit its key's attribute (a string for an
            int) is kept with its document but unfiltered, with a
            :class:`UnfilteredMetadata` warning (default); True makes it an error.
        relevance_score_fn: maps a distance to a relevance (default: per metric, see
            :meth:`_select_relevance_score_fn`).
        device: ``"auto"``, ``"cpu"`` or ``"gpu"`` for searches.

    Thread-safe; async methods run the engine in an executor and embed with the embeddings'
    async methods.
    """

    def __init__(self, embedding: Embeddings, *, collection: Any = None, database: Any = None,
                 collection_name: str = "langchain", metric: str = "cosine", dtype: str = "f32",
                 metadata_schema: Mapping[str, str] | None = None,
                 new_metadata_keys: str = "add", strict_metadata_types: bool = False,
                 relevance_score_fn: Callable[[float], float] | None = None,
                 device: str = "auto") -> None:
        self._embedding = embedding
        self._owned: Database | None = None
        if isinstance(database, (str, os.PathLike)):
            text = os.fspath(database)
            if isinstance(text, str) and text.startswith(("http://", "https://")):
                database = Client(text)
            else:
                database = self._owned = _open(database)
        self._table = D.DocumentTable(
            where=database, collection=collection, name=collection_name,
            key_attribute=KEY_ATTRIBUTE, text_attribute=TEXT_ATTRIBUTE,
            extra_attribute=METADATA_ATTRIBUTE, metric=metric, dtype=dtype,
            metadata_schema=metadata_schema, new_keys=new_metadata_keys,
            strict=strict_metadata_types, device=device)
        self._relevance = relevance_score_fn

    # -- the store ----------------------------------------------------------------------------

    @property
    def embeddings(self) -> Embeddings:
        """The embeddings the store embeds texts and queries with."""
        return self._embedding

    @property
    def collection(self) -> Any:
        """The :class:`sieve.Collection` / :class:`sieve.RemoteCollection` (None until the
        first write creates it)."""
        return self._table.collection

    def close(self) -> None:
        """Closes the database the store opened from a path (nothing otherwise)."""
        if self._owned is not None:
            self._owned.close()

    def delete_collection(self) -> None:
        """Drops the collection: every document and the schema."""
        self._table.drop()

    def attribute_name(self, key: str) -> str | None:
        """The attribute that holds metadata key ``key`` (as filter text names it), or None
        when no document has it as an attribute yet."""
        return self._table.codec.attribute_of(key)

    def filter_text(self, filter: Mapping[str, Any] | str | None) -> str | None:
        """``filter`` as the Sieve filter text searches use (None: no filter)."""
        if filter is None:
            return None
        if isinstance(filter, str):
            return filter.strip() or None
        if callable(filter):
            raise InvalidArgument("filter: a Python function cannot run in the engine; give a "
                                  "filter dict ({'source': 'a.pdf', 'page': {'$gt': 3}}) or "
                                  "Sieve filter text")
        return self._table.render(_parse(filter))

    def __repr__(self) -> str:
        return "sieve.langchain.SieveVectorStore(%r, metric=%r)" % (self._table.name,
                                                                    self._table.metric)

    # -- writes -------------------------------------------------------------------------------

    def _write(self, texts: list[str], vectors: Any, metadatas: list[Mapping[str, Any]] | None,
               ids: Sequence[str | None] | None, batch_size: int | None) -> list[str]:
        n = len(texts)
        if metadatas is not None and len(metadatas) != n:
            raise InvalidArgument("%d texts but %d metadatas" % (n, len(metadatas)))
        if ids is not None and len(ids) != n:
            raise InvalidArgument("%d texts but %d ids" % (n, len(ids)))
        keys = [str(i) if i is not None and i != "" else str(uuid.uuid4())
                for i in (ids if ids is not None else [None] * n)]
        mds = [m or {} for m in metadatas] if metadatas is not None else [{}] * n
        if n:
            v = np.asarray(vectors, dtype=np.float32)
            self._table.write(keys, v, texts, mds, batch_rows=batch_size)
        return keys

    def add_texts(self, texts: Iterable[str], metadatas: list[dict] | None = None, *,
                  ids: list[str] | None = None, batch_size: int | None = None,
                  **kwargs: Any) -> list[str]:
        """Embeds and stores ``texts`` (``metadatas``: one dict each; ``ids``: one string each,
        None or absent for a new UUID). A text whose id is stored replaces that document.
        The documents commit in atomic, durable batches of ``batch_size`` (None: 65,536; over
        a server at most 4,096 a request). Returns the ids. Raises InvalidArgument for bad
        metadata or ids (nothing is written)."""
        _no_kwargs("add_texts", kwargs)
        texts = list(texts)
        vectors = self._embedding.embed_documents(texts) if texts else []
        return self._write(texts, vectors, metadatas, ids, batch_size)

    async def aadd_texts(self, texts: Iterable[str], metadatas: list[dict] | None = None, *,
                         ids: list[str] | None = None, batch_size: int | None = None,
                         **kwargs: Any) -> list[str]:
        """:meth:`add_texts`, embedding with the embeddings' ``aembed_documents``."""
        _no_kwargs("aadd_texts", kwargs)
        texts = list(texts)
        vectors = await self._embedding.aembed_documents(texts) if texts else []
        return await run_in_executor(None, self._write, texts, vectors, metadatas, ids,
                                     batch_size)

    def delete(self, ids: list[str] | None = None, *,
               filter: Mapping[str, Any] | str | None = None, **kwargs: Any) -> bool:
        """Deletes the documents with these ids (unknown ones are ignored), or those passing
        ``filter``; with neither, every document (LangChain's contract). Returns True."""
        _no_kwargs("delete", kwargs)
        if ids is not None and filter is not None:
            raise InvalidArgument("delete: give ids or filter, not both")
        if ids is not None:
            self._table.delete_keys([str(i) for i in ids])
        else:
            self._table.delete_where(self.filter_text(filter))
        return True

    async def adelete(self, ids: list[str] | None = None, *,
                      filter: Mapping[str, Any] | str | None = None, **kwargs: Any) -> bool:
        """:meth:`delete`, in an executor."""
        _no_kwargs("adelete", kwargs)
        return await run_in_executor(None, lambda: self.delete(ids, filter=filter))

    # -- reads --------------------------------------------------------------------------------

    @staticmethod
    def _document(s: D.Stored) -> Document:
        return Document(id=s.key, page_content=s.text, metadata=s.metadata)

    def get_by_ids(self, ids: Sequence[str], /) -> list[Document]:
        """The stored documents of these ids, in their order; unknown ids are left out."""
        return [self._document(s) for s in self._table.get([str(i) for i in ids])
                if s is not None]

    async def aget_by_ids(self, ids: Sequence[str], /) -> list[Document]:
        """:meth:`get_by_ids`, in an executor."""
        return await run_in_executor(None, self.get_by_ids, ids)

    def similarity_search_with_score_by_vector(
            self, embedding: Sequence[float], k: int = 4,
            filter: Mapping[str, Any] | str | None = None,
            **kwargs: Any) -> list[tuple[Document, float]]:
        """The ``k`` documents nearest ``embedding`` (exact) passing ``filter`` (a LangChain
        filter dict or Sieve filter text), best first, with Sieve's distance (l2: squared
        Euclidean; cosine: 1 - cos; ip: the inner product, larger is better)."""
        _no_kwargs("similarity_search", kwargs)
        hits = self._table.search(embedding, k, self.filter_text(filter))
        return [(self._document(s), float(s.distance)) for s in hits]

    def similarity_search_with_score(self, query: str, k: int = 4,
                                     filter: Mapping[str, Any] | str | None = None,
                                     **kwargs: Any) -> list[tuple[Document, float]]:
        """As :meth:`similarity_search_with_score_by_vector` for the embedding of ``query``."""
        return self.similarity_search_with_score_by_vector(
            self._embedding.embed_query(query), k, filter, **kwargs)

    def similarity_search(self, query: str, k: int = 4,
                          filter: Mapping[str, Any] | str | None = None,
                          **kwargs: Any) -> list[Document]:
        """The ``k`` documents nearest ``query`` passing ``filter``, best first."""
        return [d for d, _ in self.similarity_search_with_score(query, k, filter, **kwargs)]

    def similarity_search_by_vector(self, embedding: list[float], k: int = 4,
                                    filter: Mapping[str, Any] | str | None = None,
                                    **kwargs: Any) -> list[Document]:
        """The ``k`` documents nearest ``embedding`` passing ``filter``, best first."""
        return [d for d, _ in self.similarity_search_with_score_by_vector(embedding, k, filter,
                                                                          **kwargs)]

    async def asimilarity_search_with_score(self, query: str, k: int = 4,
                                            filter: Mapping[str, Any] | str | None = None,
                                            **kwargs: Any) -> list[tuple[Document, float]]:
        """:meth:`similarity_search_with_score`, embedding with ``aembed_query``."""
        vector = await self._embedding.aembed_query(query)
        return await run_in_executor(None, lambda: self.similarity_search_with_score_by_vector(
            vector, k, filter, **kwargs))

    async def asimilarity_search(self, query: str, k: int = 4,
                                 filter: Mapping[str, Any] | str | None = None,
                                 **kwargs: Any) -> list[Document]:
        """:meth:`similarity_search`, embedding with ``aembed_query``."""
        return [d for d, _ in await self.asimilarity_search_with_score(query, k, filter,
                                                                       **kwargs)]

    async def asimilarity_search_by_vector(self, embedding: list[float], k: int = 4,
                                           filter: Mapping[str, Any] | str | None = None,
                                           **kwargs: Any) -> list[Document]:
        """:meth:`similarity_search_by_vector`, in an executor."""
        return await run_in_executor(None, lambda: self.similarity_search_by_vector(
            embedding, k, filter, **kwargs))

    def max_marginal_relevance_search_by_vector(
            self, embedding: list[float], k: int = 4, fetch_k: int = 20,
            lambda_mult: float = 0.5, filter: Mapping[str, Any] | str | None = None,
            **kwargs: Any) -> list[Document]:
        """Maximal marginal relevance: the exact ``fetch_k`` nearest documents passing
        ``filter``, then ``k`` of them picked one by one for ``lambda_mult * cos(query, d) -
        (1 - lambda_mult) * max cos(d, picked)`` (1: relevance only; 0: diversity only)."""
        _no_kwargs("max_marginal_relevance_search", kwargs)
        if not isinstance(fetch_k, int) or fetch_k < k:
            raise InvalidArgument("fetch_k must be an int >= k (%r), got %r" % (k, fetch_k))
        hits = self._table.search(embedding, fetch_k, self.filter_text(filter), vectors=True)
        if not hits:
            return []
        picked = D.mmr(embedding, np.stack([s.vector for s in hits]), k, lambda_mult)
        return [self._document(hits[i]) for i in picked]

    def max_marginal_relevance_search(self, query: str, k: int = 4, fetch_k: int = 20,
                                      lambda_mult: float = 0.5,
                                      filter: Mapping[str, Any] | str | None = None,
                                      **kwargs: Any) -> list[Document]:
        """As :meth:`max_marginal_relevance_search_by_vector` for the embedding of ``query``."""
        return self.max_marginal_relevance_search_by_vector(
            self._embedding.embed_query(query), k, fetch_k, lambda_mult, filter, **kwargs)

    async def amax_marginal_relevance_search(self, query: str, k: int = 4, fetch_k: int = 20,
                                             lambda_mult: float = 0.5,
                                             filter: Mapping[str, Any] | str | None = None,
                                             **kwargs: Any) -> list[Document]:
        """:meth:`max_marginal_relevance_search`, embedding with ``aembed_query``."""
        vector = await self._embedding.aembed_query(query)
        return await run_in_executor(None, lambda: self.max_marginal_relevance_search_by_vector(
            vector, k, fetch_k, lambda_mult, filter, **kwargs))

    async def amax_marginal_relevance_search_by_vector(
            self, embedding: list[float], k: int = 4, fetch_k: int = 20,
            lambda_mult: float = 0.5, filter: Mapping[str, Any] | str | None = None,
            **kwargs: Any) -> list[Document]:
        """:meth:`max_marginal_relevance_search_by_vector`, in an executor."""
        return await run_in_executor(None, lambda: self.max_marginal_relevance_search_by_vector(
            embedding, k, fetch_k, lambda_mult, filter, **kwargs))

    def _select_relevance_score_fn(self) -> Callable[[float], float]:
        """Relevance (higher is better) from Sieve's distance: cosine ``1 - d`` (the cosine),
        ip the inner product, l2 ``1 - sqrt(d) / sqrt(2)``; in [0, 1] for unit vectors that
        are not opposed (cosine, ip) or apart by at most sqrt(2) (l2)."""
        return self._relevance or D.relevance(self._table.metric)

    # -- construction -------------------------------------------------------------------------

    @classmethod
    def from_texts(cls, texts: list[str], embedding: Embeddings,
                   metadatas: list[dict] | None = None, *, ids: list[str] | None = None,
                   **kwargs: Any) -> "SieveVectorStore":
        """A store (``kwargs``: the constructor's) holding ``texts``."""
        store = cls(embedding, **kwargs)
        store.add_texts(texts, metadatas, ids=ids)
        return store

    @classmethod
    async def afrom_texts(cls, texts: list[str], embedding: Embeddings,
                          metadatas: list[dict] | None = None, *, ids: list[str] | None = None,
                          **kwargs: Any) -> "SieveVectorStore":
        """:meth:`from_texts`, embedding with ``aembed_documents``."""
        store = cls(embedding, **kwargs)
        await store.aadd_texts(texts, metadatas, ids=ids)
        return store


def _no_kwargs(call: str, kwargs: Mapping[str, Any]) -> None:
    if kwargs:
        raise TypeError("%s: unexpected argument %r" % (call, sorted(kwargs)[0]))


class SieveTranslator(Visitor):
    """Turns a LangChain ``StructuredQuery`` (the self-query retriever's) into the filter dicts
    :class:`SieveVectorStore` takes: ``SelfQueryRetriever(...,
    structured_query_translator=SieveTranslator())``."""

    allowed_operators = (Operator.AND, Operator.OR, Operator.NOT)
    allowed_comparators = (Comparator.EQ, Comparator.NE, Comparator.GT, Comparator.GTE,
                           Comparator.LT, Comparator.LTE, Comparator.IN, Comparator.NIN,
                           Comparator.CONTAIN)

    def visit_operation(self, operation: Operation) -> dict[str, Any]:
        """AND, OR, NOT as ``$and``, ``$or``, ``$not``."""
        args = [a.accept(self) for a in operation.arguments]
        if operation.operator == Operator.NOT:
            return {"$not": args[0] if len(args) == 1 else {"$and": args}}
        return {"$and" if operation.operator == Operator.AND else "$or": args}

    def visit_comparison(self, comparison: Comparison) -> dict[str, Any]:
        """``{attribute: {"$op": value}}`` (``contain`` as ``$contains``)."""
        self._validate_func(comparison.comparator)
        op = "$contains" if comparison.comparator == Comparator.CONTAIN else \
            "$" + comparison.comparator.value
        return {comparison.attribute: {op: comparison.value}}

    def visit_structured_query(self, structured_query: StructuredQuery
                               ) -> tuple[str, dict[str, Any]]:
        """The query and the search keyword arguments (``filter``)."""
        kwargs = {}
        if structured_query.filter is not None:
            kwargs["filter"] = structured_query.filter.accept(self)
        return structured_query.query, kwargs
