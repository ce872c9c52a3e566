"""LlamaIndex's vector store over a Sieve collection (the extra ``llama-index``:
``pip install .[llama-index]``).

::

    import sieve
    from llama_index.core import StorageContext, VectorStoreIndex
    from sieve.llama_index import SieveVectorStore

    store = SieveVectorStore(database=sieve.open("/tmp/db"), collection_name="docs")
    index = VectorStoreIndex.from_documents(
        documents, storage_context=StorageContext.from_defaults(vector_store=store))
    index.as_retriever(filters=MetadataFilters(filters=[...])).retrieve("question")

A node is a row: its id kept in the attribute ``node_id`` and hashed to the row id, its text in
``text``, its document's id in ``ref_doc_id``, each metadata key in an attribute of its own with
the type of its values, what no attribute holds in the JSON attribute ``metadata_json``, and the
rest of the node (relationships, templates, excluded keys) in ``node_json``.
docs/integrations.md has the rules.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any, List, Mapping, Optional, Sequence

import numpy as np
from llama_index.core.bridge.pydantic import PrivateAttr
from llama_index.core.schema import (BaseNode, Document, ImageNode, IndexNode, MetadataMode, Node,
                                     TextNode)
from llama_index.core.vector_stores.types import (BasePydanticVectorStore, FilterCondition,
                                                  FilterOperator, MetadataFilter,
                                                  MetadataFilters, VectorStoreQuery,
                                                  VectorStoreQueryMode, VectorStoreQueryResult)
from llama_index.core.vector_stores.utils import metadata_dict_to_node

from . import _conditions as C
from . import _documents as D
from ._metadata import UnfilteredMetadata
from ._embedded import open as _open
from .client import Client
from .errors import InvalidArgument, NotSupported

__all__ = ["SieveVectorStore", "UnfilteredMetadata"]

KEY_ATTRIBUTE = "node_id"
TEXT_ATTRIBUTE = "text"
METADATA_ATTRIBUTE = "metadata_json"
REF_DOC_ATTRIBUTE = "ref_doc_id"
NODE_ATTRIBUTE = "node_json"
# Filter keys that name the node's document when no metadata key has that name (the keys
# LlamaIndex's other stores keep it under).
_REF_DOC_KEYS = ("ref_doc_id", "doc_id", "document_id")

_TESTS = {FilterOperator.EQ: "eq", FilterOperator.GT: "gt", FilterOperator.GTE: "gte",
          FilterOperator.LT: "lt", FilterOperator.LTE: "lte", FilterOperator.IN: "in",
          FilterOperator.ANY: "any", FilterOperator.ALL: "all",
          FilterOperator.CONTAINS: "contains"}
_NEGATED = {FilterOperator.NE: "eq", FilterOperator.NIN: "in"}


def _filter(f: MetadataFilter) -> C.Cond:
    op = FilterOperator(f.operator)
    name = op.name
    fallback = REF_DOC_ATTRIBUTE if f.key in _REF_DOC_KEYS else None
    if op == FilterOperator.IS_EMPTY:
        return C.Test(f.key, "empty", None, name, fallback)
    value = f.value
    if value is None and op in (FilterOperator.EQ, FilterOperator.NE):
        c: C.Cond = C.Test(f.key, "exists", True, name, fallback)
        return c if op == FilterOperator.NE else C.Not(c)
    if op in (FilterOperator.IN, FilterOperator.NIN, FilterOperator.ANY,
              FilterOperator.ALL) and not isinstance(value, list):
        value = [value]
    if op in _NEGATED:
        return C.Not(C.Test(f.key, _NEGATED[op], value, name, fallback))
    if op in _TESTS:
        return C.Test(f.key, _TESTS[op], value, name, fallback)
    raise NotSupported("metadata filter on %r: operator %s (%r) has no equivalent in Sieve's "
                       "filter language; supported: %s" % (
                           f.key, name, op.value,
                           ", ".join(o.name for o in list(_TESTS) + list(_NEGATED) +
                                     [FilterOperator.IS_EMPTY])))


def _filters(filters: MetadataFilters) -> C.Cond:
    parts = [_filters(f) if isinstance(f, MetadataFilters) else _filter(f)
             for f in filters.filters]
    condition = filters.condition or FilterCondition.AND
    if condition == FilterCondition.AND:
        return C.All(parts)
    if condition == FilterCondition.OR:
        return C.Any_(parts)
    if condition == FilterCondition.NOT:
        return C.Not(C.Any_(parts))  # none of them, as LlamaIndex's own filter reads NOT
    raise NotSupported("metadata filters: condition %r" % (condition,))


class SieveVectorStore(BasePydanticVectorStore):
    """A LlamaIndex vector store in a Sieve collection: exact search, metadata as typed
    attributes, ``MetadataFilters`` evaluated by the engine.

    Args:
        collection: a :class:`sieve.Collection` or :class:`sieve.RemoteCollection` to use
            (attributes the store needs are added at its first write); or:
        database: a :class:`sieve.Database`, a :class:`sieve.Client`, a path (opened with
            :func:`sieve.open`, closed by :meth:`close`) or an ``http://`` URL (a client), with
            ``collection_name``: the collection, used when it exists, created at the first
            ``add`` otherwise (dim from the embeddings, ``metric``, ``dtype``).
        metric: ``"cosine"`` (default), ``"l2"`` or ``"ip"``, for a collection the store
            creates.
        metadata_schema, new_metadata_keys, strict_metadata_types: as
            :class:`sieve.langchain.SieveVectorStore`'s (docs/integrations.md).
        device: ``"auto"``, ``"cpu"`` or ``"gpu"`` for queries.

    Query modes: ``DEFAULT`` and ``MMR`` (``mmr_threshold``: 1 relevance only, 0 diversity
    only; default 0.5; it looks at ``mmr_prefetch_k`` or ``mmr_prefetch_factor`` (4) times
    ``similarity_top_k`` nearest nodes). Similarities: cosine ``1 - d`` (the cosine), ip the
    inner product, l2 ``1 - sqrt(d) / sqrt(2)``.
    """

    stores_text: bool = True
    flat_metadata: bool = False
    collection_name: str = "llama_index"
    metric: str = "cosine"
    dtype: str = "f32"
    device: str = "auto"

    _table: D.DocumentTable = PrivateAttr()
    _owned: Any = PrivateAttr(default=None)

    def __init__(self, collection: Any = None, *, database: Any = None,
                 collection_name: str = "llama_index", metric: str = "cosine",
                 dtype: str = "f32", metadata_schema: Optional[Mapping[str, str]] = None,
                 new_metadata_keys: str = "add", strict_metadata_types: bool = False,
                 device: str = "auto") -> None:
        super().__init__(stores_text=True, collection_name=collection_name, metric=metric,
                         dtype=dtype, device=device)
        owned = None
        if isinstance(database, (str, os.PathLike)):
            text = os.fspath(database)
            if isinstance(text, str) and text.startswith(("http://", "https://")):
                database = Client(text)
            else:
                database = owned = _open(database)
        self._owned = owned
        self._table = D.DocumentTable(
            where=database, collection=collection, name=collection_name,
            key_attribute=KEY_ATTRIBUTE, text_attribute=TEXT_ATTRIBUTE,
            extra_attribute=METADATA_ATTRIBUTE, fields=(REF_DOC_ATTRIBUTE, NODE_ATTRIBUTE),
            metric=metric, dtype=dtype, metadata_schema=metadata_schema,
            new_keys=new_metadata_keys, strict=strict_metadata_types, device=device)
        if self._table.collection is not None:
            self.collection_name = self._table.name
            self.metric = self._table.metric

    @classmethod
    def class_name(cls) -> str:
        """The name LlamaIndex serializes the store under."""
        return "SieveVectorStore"

    @property
    def client(self) -> Any:
        """The :class:`sieve.Collection` / :class:`sieve.RemoteCollection` (None until the
        first ``add`` creates it)."""
        return self._table.collection

    def close(self) -> None:
        """Closes the database the store opened from a path (nothing otherwise)."""
        if self._owned is not None:
            self._owned.close()

    def delete_collection(self) -> None:
        """Drops the collection: every node and the schema."""
        self._table.drop()

    def attribute_name(self, key: str) -> Optional[str]:
        """The attribute that holds metadata key ``key`` (as filter text names it), or None
        when no node has it as an attribute yet."""
        return self._table.codec.attribute_of(key)

    def filter_text(self, filters: Optional[MetadataFilters]) -> Optional[str]:
        """``filters`` as the Sieve filter text queries use (None: no filter)."""
        return None if filters is None else self._table.render(_filters(filters))

    # -- writes -------------------------------------------------------------------------------

    def add(self, nodes: Sequence[BaseNode], **add_kwargs: Any) -> List[str]:
        """Stores nodes (each with its embedding); a node whose id is stored replaces it.
        Returns their ids."""
        nodes = list(nodes)
        if not nodes:
            return []
        keys, vectors, texts, metadatas, refs, blobs = [], [], [], [], [], []
        for node in nodes:
            if node.embedding is None:
                raise InvalidArgument("node %r has no embedding (embed it first, or let "
                                      "VectorStoreIndex do it)" % node.node_id)
            keys.append(node.node_id)
            vectors.append(node.embedding)
            texts.append(node.get_content(metadata_mode=MetadataMode.NONE))
            metadatas.append(dict(node.metadata))
            refs.append(node.ref_doc_id)
            blobs.append(_node_json(node))
        dims = {len(v) for v in vectors}
        if len(dims) != 1:
            raise InvalidArgument("the nodes' embeddings have different lengths: %s"
                                  % sorted(dims))
        self._table.write(keys, np.asarray(vectors, dtype=np.float32), texts, metadatas,
                          {REF_DOC_ATTRIBUTE: refs, NODE_ATTRIBUTE: blobs})
        self.collection_name = self._table.name
        self.metric = self._table.metric
        return keys

    async def async_add(self, nodes: Sequence[BaseNode], **kwargs: Any) -> List[str]:
        """:meth:`add`, in a thread."""
        return await asyncio.to_thread(self.add, nodes, **kwargs)

    def delete(self, ref_doc_id: str, **delete_kwargs: Any) -> None:
        """Deletes every node of document ``ref_doc_id``."""
        self._table.delete_where("%s = %s" % (REF_DOC_ATTRIBUTE, C.quote(ref_doc_id)))

    async def adelete(self, ref_doc_id: str, **delete_kwargs: Any) -> None:
        """:meth:`delete`, in a thread."""
        await asyncio.to_thread(self.delete, ref_doc_id, **delete_kwargs)

    def _where(self, node_ids: Optional[Sequence[str]],
               filters: Optional[MetadataFilters]) -> Optional[str]:
        parts: list[C.Cond] = []
        if node_ids is not None:
            parts.append(C.Raw(self._table.keys_text([str(i) for i in node_ids])))
        if filters is not None:
            parts.append(_filters(filters))
        return self._table.render(C.All(parts)) if parts else None

    def delete_nodes(self, node_ids: Optional[List[str]] = None,
                     filters: Optional[MetadataFilters] = None, **delete_kwargs: Any) -> None:
        """Deletes the nodes with these ids and passing ``filters`` (either may be None; with
        neither, nothing is deleted: :meth:`clear` deletes every node)."""
        if node_ids is None and filters is None:
            return
        self._table.delete_where(self._where(node_ids, filters))

    async def adelete_nodes(self, node_ids: Optional[List[str]] = None,
                            filters: Optional[MetadataFilters] = None,
                            **delete_kwargs: Any) -> None:
        """:meth:`delete_nodes`, in a thread."""
        await asyncio.to_thread(self.delete_nodes, node_ids, filters)

    def clear(self) -> None:
        """Deletes every node (the collection and its schema stay)."""
        self._table.delete_where(None)

    async def aclear(self) -> None:
        """:meth:`clear`, in a thread."""
        await asyncio.to_thread(self.clear)

    # -- reads --------------------------------------------------------------------------------

    def _node(self, s: D.Stored) -> BaseNode:
        blob = s.fields.get(NODE_ATTRIBUTE)
        if blob:
            node = _load_node(blob, s.text)
        else:  # a row written by other means than this store
            node = TextNode(id_=s.key, text=s.text)
        node.metadata = s.metadata
        if s.vector is not None:
            node.embedding = s.vector.tolist()
        return node

    def get_nodes(self, node_ids: Optional[List[str]] = None,
                  filters: Optional[MetadataFilters] = None) -> List[BaseNode]:
        """The nodes with these ids (in their order; unknown ones left out) and passing
        ``filters``; with neither, every node."""
        if node_ids is not None and filters is None:
            return [self._node(s) for s in self._table.get([str(i) for i in node_ids])
                    if s is not None]
        return [self._node(s) for s in self._table.scan(self._where(node_ids, filters))]

    async def aget_nodes(self, node_ids: Optional[List[str]] = None,
                         filters: Optional[MetadataFilters] = None) -> List[BaseNode]:
        """:meth:`get_nodes`, in a thread."""
        return await asyncio.to_thread(self.get_nodes, node_ids, filters)

    def query(self, query: VectorStoreQuery, **kwargs: Any) -> VectorStoreQueryResult:
        """The ``similarity_top_k`` nodes nearest ``query_embedding`` (exact) passing
        ``filters``, and among ``doc_ids`` / ``node_ids`` when given (non-empty), best
        first."""
        mode = VectorStoreQueryMode(query.mode)
        if mode not in (VectorStoreQueryMode.DEFAULT, VectorStoreQueryMode.MMR):
            raise NotSupported("query mode %r: SieveVectorStore answers %r and %r"
                               % (mode.value, VectorStoreQueryMode.DEFAULT.value,
                                  VectorStoreQueryMode.MMR.value))
        if query.query_embedding is None:
            raise InvalidArgument("the query has no query_embedding")
        k = query.similarity_top_k
        parts: list[C.Cond] = []
        if query.doc_ids:
            parts.append(C.Raw("%s IN (%s)" % (REF_DOC_ATTRIBUTE,
                                               ", ".join(C.quote(d) for d in query.doc_ids))))
        if query.node_ids:
            parts.append(C.Raw(self._table.keys_text([str(i) for i in query.node_ids])))
        if query.filters is not None:
            parts.append(_filters(query.filters))
        where = self._table.render(C.All(parts)) if parts else None
        score = D.relevance(self._table.metric)
        if mode == VectorStoreQueryMode.MMR:
            lam = query.mmr_threshold if query.mmr_threshold is not None else \
                kwargs.get("mmr_threshold", 0.5)
            fetch = kwargs.get("mmr_prefetch_k") or \
                int(k * float(kwargs.get("mmr_prefetch_factor", 4.0)))
            hits = self._table.search(query.query_embedding, max(fetch, k), where, vectors=True)
            if hits:
                picked = D.mmr(query.query_embedding, np.stack([s.vector for s in hits]), k,
                               float(lam))
                hits = [hits[i] for i in picked]
        else:
            hits = self._table.search(query.query_embedding, k, where)
        return VectorStoreQueryResult(nodes=[self._node(s) for s in hits],
                                      similarities=[score(s.distance) for s in hits],
                                      ids=[s.key for s in hits])

    async def aquery(self, query: VectorStoreQuery, **kwargs: Any) -> VectorStoreQueryResult:
        """:meth:`query`, in a thread."""
        return await asyncio.to_thread(self.query, query, **kwargs)


def _node_json(node: BaseNode) -> str:
    """The node without its text, metadata and embedding (attributes of their own), with its
    ``class_name``."""
    return json.dumps(node.model_dump(mode="json", exclude=_APART), ensure_ascii=False)


_APART = {"embedding", "metadata", "text", "text_resource"}
_CLASSES = {c.class_name(): c for c in (TextNode, Node, IndexNode, ImageNode, Document)}


def _load_node(blob: str, text: str) -> BaseNode:
    data = json.loads(blob)
    cls = _CLASSES.get(data.get("class_name"))
    if cls is None:  # a node class of another package: LlamaIndex's own fallback
        return metadata_dict_to_node({"_node_content": blob,
                                      "_node_type": data.get("class_name")}, text=text)
    node = cls.from_dict(data)
    node.set_content(text)
    return node
