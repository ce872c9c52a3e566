"""sieve.llama_index.SieveVectorStore end to end through LlamaIndex's VectorStoreIndex, with a
deterministic word-hashing embedding model (no network): retrieval and MetadataFilters checked
against LlamaIndex's own in-memory SimpleVectorStore over the same nodes, embedded and over
`sieve serve`; nested filters against an evaluator of the documented rules; delete by
ref_doc_id, nodes by id and filter, clear; MMR against float64 brute force; a query engine;
async; the errors for what Sieve cannot evaluate."""

import asyncio
import hashlib
import itertools

import numpy as np
import pytest

pytest.importorskip("llama_index.core")

from llama_index.core import Document, StorageContext, VectorStoreIndex  # noqa: E402
from llama_index.core.embeddings import BaseEmbedding  # noqa: E402
from llama_index.core.llms import MockLLM  # noqa: E402
from llama_index.core.schema import NodeRelationship, RelatedNodeInfo, TextNode  # noqa: E402
from llama_index.core.vector_stores.types import (FilterCondition,  # noqa: E402
                                                  FilterOperator, MetadataFilter,
                                                  MetadataFilters, VectorStoreQuery,
                                                  VectorStoreQueryMode)

import sieve  # noqa: E402
from conftest import Server  # noqa: E402
from sieve.llama_index import SieveVectorStore  # noqa: E402

DIM = 64
_names = itertools.count()


class WordHashEmbedding(BaseEmbedding):
    """Deterministic: a text is the unit sum of one-hot vectors of its words' hashes."""

    def _vector(self, text: str) -> list[float]:
        v = np.zeros(DIM)
        for word in text.lower().split():
            word = word.strip(".,;:?!'\"")
            v[int(hashlib.blake2b(word.encode(), digest_size=4).hexdigest(), 16) % DIM] += 1.0
        n = np.linalg.norm(v)
        return (v / n if n else v).tolist()

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._vector(query)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._vector(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._vector(text)


EMBED = WordHashEmbedding(model_name="word-hash")
WORDS = ("apple banana cherry grape lemon mango olive peach pear plum quince river stone "
         "cloud storm winter summer autumn spring north south east west").split()
GENRES = ["sf", "drama", "", "it's"]
TAGS = ["a", "b", "c", "d"]


def make_nodes(n, seed):
    """Nodes of 5 documents with metadata of every kind, some keys missing."""
    rng = np.random.default_rng(seed)
    nodes = []
    for i in range(n):
        md = {}
        if rng.random() < 0.8:
            md["year"] = int(rng.integers(1990, 2000))
        if rng.random() < 0.8:
            md["score"] = float(np.round(rng.normal(), 2))
        if rng.random() < 0.8:
            md["genre"] = GENRES[int(rng.integers(0, 4))]
        r = rng.random()
        if r < 0.6:
            md["tags"] = sorted({TAGS[int(j)] for j in rng.integers(0, 4, int(rng.integers(1, 4)))})
        elif r < 0.7:
            md["tags"] = []
        text = " ".join(WORDS[int(j)] for j in rng.integers(0, len(WORDS), 6))
        node = TextNode(id_="node-%d" % i, text=text, metadata=md)
        node.relationships[NodeRelationship.SOURCE] = RelatedNodeInfo(node_id="doc-%d" % (i % 5))
        nodes.append(node)
    return nodes


def random_filter(rng):
    """A flat MetadataFilters of tests both stores evaluate the same way."""
    def one():
        key = ["year", "score", "genre", "tags", "missing"][int(rng.integers(0, 5))]
        if key in ("year", "score", "missing"):
            val = (lambda: int(rng.integers(1990, 2000))) if key != "score" else \
                (lambda: float(np.round(rng.normal(), 1)))
            op = [FilterOperator.EQ, FilterOperator.NE, FilterOperator.GT, FilterOperator.GTE,
                  FilterOperator.LT, FilterOperator.LTE, FilterOperator.IN, FilterOperator.NIN,
                  FilterOperator.IS_EMPTY][int(rng.integers(0, 9))]
        elif key == "genre":
            val = lambda: GENRES[int(rng.integers(0, 4))]  # noqa: E731
            op = [FilterOperator.EQ, FilterOperator.NE, FilterOperator.IN, FilterOperator.NIN,
                  FilterOperator.IS_EMPTY][int(rng.integers(0, 5))]
        else:
            val = lambda: TAGS[int(rng.integers(0, 4))]  # noqa: E731
            op = [FilterOperator.ANY, FilterOperator.ALL, FilterOperator.CONTAINS,
                  FilterOperator.IS_EMPTY][int(rng.integers(0, 4))]
        if op in (FilterOperator.IN, FilterOperator.NIN, FilterOperator.ANY, FilterOperator.ALL):
            value = [val() for _ in range(int(rng.integers(1, 4)))]
        elif op == FilterOperator.IS_EMPTY:
            value = None
        else:
            value = val()
        return MetadataFilter(key=key, value=value, operator=op)

    condition = [FilterCondition.AND, FilterCondition.OR,
                 FilterCondition.NOT][int(rng.integers(0, 3))]
    return MetadataFilters(filters=[one() for _ in range(int(rng.integers(1, 4)))],
                           condition=condition)


def build(store, nodes):
    context = StorageContext.from_defaults(vector_store=store) if store is not None else None
    return VectorStoreIndex([n.model_copy() for n in nodes], storage_context=context,
                            embed_model=EMBED)


def retrieved(index, query, k, **kwargs):
    return [(r.node.node_id, r.score) for r in
            index.as_retriever(similarity_top_k=k, **kwargs).retrieve(query)]


def assert_like_llama_index(store, n, seed, filters):
    nodes = make_nodes(n, seed)
    ours, theirs = build(store, nodes), build(None, nodes)
    rng = np.random.default_rng(seed + 1)
    for q in ["apple river storm", "winter pear", "olive"]:
        got, want = retrieved(ours, q, 10), retrieved(theirs, q, 10)
        assert [s for _, s in got] == pytest.approx([s for _, s in want], abs=1e-5)
        # The same nodes at each score (nodes tied at the k-th place may differ).
        last = want[-1][1]
        assert {i for i, s in got if s > last + 1e-5} == {i for i, s in want if s > last + 1e-5}
    for _ in range(filters):
        f = random_filter(rng)
        got = {i for i, _ in retrieved(ours, "apple", n, filters=f)}
        want = {i for i, _ in retrieved(theirs, "apple", n, filters=f)}
        assert got == want, "%r (%s)" % (f, store.filter_text(f))
    return ours, nodes


def test_index_and_filters_like_llama_indexs_own_store(tmp_path):
    with sieve.open(tmp_path / "db") as db:
        store = SieveVectorStore(database=db, collection_name="nodes")
        _, nodes = assert_like_llama_index(store, 150, seed=5, filters=300)
        assert db["nodes"].attributes == {
            "node_id": "string", "text": "string", "metadata_json": "string",
            "ref_doc_id": "string", "node_json": "string", "year": "int", "score": "float",
            "genre": "string", "tags": "tags"}
        got = store.get_nodes(node_ids=["node-3", "node-1", "nope"])
        assert [(g.node_id, g.text, g.metadata, g.ref_doc_id) for g in got] == [
            (n.node_id, n.text, n.metadata, n.ref_doc_id) for n in (nodes[3], nodes[1])]


def test_index_and_filters_over_a_server(tmp_path):
    server = Server(tmp_path / "served")
    try:
        store = SieveVectorStore(database=server.url, collection_name="nodes")
        assert_like_llama_index(store, 60, seed=6, filters=60)
        assert isinstance(store.client, sieve.RemoteCollection)
        store.delete_collection()
        assert "nodes" not in sieve.Client(server.url)
    finally:
        server.stop()


def test_remote_writes_and_reads_in_pieces(tmp_path, monkeypatch):
    import sieve._documents as documents
    monkeypatch.setattr(documents, "_REMOTE_ROWS", 64)
    monkeypatch.setattr(documents, "_SCROLL_ROWS", 50)
    server = Server(tmp_path / "served")
    try:
        store = SieveVectorStore(database=server.url, collection_name="pieces")
        nodes = make_nodes(300, seed=11)
        build(store, nodes)
        assert len(store.client) == 300
        f = MetadataFilters(filters=[MetadataFilter(key="year", value=1995,
                                                    operator=FilterOperator.GTE)])
        got = store.get_nodes(filters=f)
        want = [n for n in nodes if n.metadata.get("year", 0) >= 1995]
        assert len(want) > 100
        assert sorted(g.node_id for g in got) == sorted(n.node_id for n in want)
        assert {g.node_id: g.metadata for g in got} == {n.node_id: n.metadata for n in want}
    finally:
        server.stop()


def holds(md, f):
    """The documented rules for nested filters (LlamaIndex's own store takes no nesting)."""
    results = [holds(md, x) if isinstance(x, MetadataFilters) else check(md.get(x.key), x)
               for x in f.filters]
    if f.condition == FilterCondition.OR:
        return any(results)
    if f.condition == FilterCondition.NOT:
        return not any(results)
    return all(results)


def check(x, f):
    op, v = f.operator, f.value
    if op == FilterOperator.IS_EMPTY:
        return x in (None, "", [])
    if x is None or x == []:
        return op in (FilterOperator.NE, FilterOperator.NIN)
    if op == FilterOperator.NE:
        return x != v
    if op == FilterOperator.NIN:
        return x not in v
    if isinstance(x, list):
        return {FilterOperator.ANY: lambda: any(e in x for e in v),
                FilterOperator.ALL: lambda: all(e in x for e in v),
                FilterOperator.CONTAINS: lambda: v in x}[op]()
    return {FilterOperator.EQ: lambda: x == v, FilterOperator.GT: lambda: x > v,
            FilterOperator.GTE: lambda: x >= v, FilterOperator.LT: lambda: x < v,
            FilterOperator.LTE: lambda: x <= v, FilterOperator.IN: lambda: x in v}[op]()


def test_nested_filters(tmp_path):
    nodes = make_nodes(120, seed=7)
    with sieve.open(tmp_path / "db") as db:
        store = SieveVectorStore(database=db)
        index = build(store, nodes)
        rng = np.random.default_rng(8)
        for _ in range(150):
            f = MetadataFilters(filters=[random_filter(rng), random_filter(rng),
                                         random_filter(rng).filters[0]],
                                condition=[FilterCondition.AND, FilterCondition.OR,
                                           FilterCondition.NOT][int(rng.integers(0, 3))])
            got = {i for i, _ in retrieved(index, "apple", len(nodes), filters=f)}
            want = {n.node_id for n in nodes if holds(n.metadata, f)}
            assert got == want, store.filter_text(f)
        # doc_ids and node_ids narrow a query; with filters all three hold
        q = EMBED.get_query_embedding("apple")
        f = MetadataFilters(filters=[MetadataFilter(key="year", value=1995,
                                                    operator=FilterOperator.LT)])
        some = [n.node_id for n in nodes[:40]]
        res = store.query(VectorStoreQuery(query_embedding=q, similarity_top_k=200,
                                           doc_ids=["doc-1", "doc-3"], node_ids=some, filters=f))
        assert set(res.ids) == {n.node_id for n in nodes[:40] if n.ref_doc_id in ("doc-1", "doc-3")
                                and n.metadata.get("year", 9999) < 1995}
        assert len(res.ids) > 3 and res.ids == [n.node_id for n in res.nodes]
        assert res.similarities == sorted(res.similarities, reverse=True)
        # the document of a node, under the keys LlamaIndex's stores use for it
        for key in ("ref_doc_id", "doc_id", "document_id"):
            f = MetadataFilters(filters=[MetadataFilter(key=key, value="doc-2")])
            assert {n.node_id for n in store.get_nodes(filters=f)} == \
                {n.node_id for n in nodes if n.ref_doc_id == "doc-2"}


def test_delete_by_document_nodes_and_clear(tmp_path):
    with sieve.open(tmp_path / "db") as db:
        store = SieveVectorStore(database=db)
        docs = [Document(text="apples are red fruit", metadata={"kind": "fruit"}, doc_id="d1"),
                Document(text="bananas are yellow fruit", metadata={"kind": "fruit"},
                         doc_id="d2"),
                Document(text="carrots are orange roots", metadata={"kind": "veg"},
                         doc_id="d3")]
        index = VectorStoreIndex.from_documents(
            docs, storage_context=StorageContext.from_defaults(vector_store=store),
            embed_model=EMBED)
        coll = db["llama_index"]
        assert len(coll) == 3
        index.delete_ref_doc("d1")
        assert len(coll) == 2
        assert sorted(r.node.ref_doc_id for r in index.as_retriever(
            similarity_top_k=3).retrieve("red apples")) == ["d2", "d3"]
        store.delete_nodes(filters=MetadataFilters(filters=[
            MetadataFilter(key="kind", value="veg")]))
        assert [n.ref_doc_id for n in store.get_nodes()] == ["d2"]
        [node] = store.get_nodes()
        store.delete_nodes(node_ids=["other"])
        assert len(coll) == 1
        store.delete_nodes(node_ids=[node.node_id])
        assert len(coll) == 0
        index.insert(docs[0])
        store.clear()
        assert len(coll) == 0 and store.get_nodes() == []


def test_query_modes_mmr_and_errors(tmp_path):
    nodes = make_nodes(80, seed=9)
    with sieve.open(tmp_path / "db") as db:
        store = SieveVectorStore(database=db, metric="cosine")
        index = build(store, nodes)
        vectors = np.asarray([EMBED.get_text_embedding(n.get_content(metadata_mode="embed"))
                              for n in nodes])
        q = np.asarray(EMBED.get_query_embedding("apple river"))
        for lam in (0.5, 0.2, 1.0):
            got = [i for i, _ in retrieved(
                index, "apple river", 5, vector_store_query_mode="mmr",
                vector_store_kwargs={"mmr_threshold": lam, "mmr_prefetch_k": 80})]
            assert got == [nodes[i].node_id for i in mmr_oracle(vectors, q, 5, lam)]
        got = store.query(VectorStoreQuery(query_embedding=q.tolist(), similarity_top_k=3,
                                           mode=VectorStoreQueryMode.MMR, mmr_threshold=0.4))
        assert len(got.nodes) == 3 and got.ids == [n.node_id for n in got.nodes]
        with pytest.raises(sieve.NotSupported, match="query mode 'hybrid'"):
            store.query(VectorStoreQuery(query_embedding=q.tolist(),
                                         mode=VectorStoreQueryMode.HYBRID))
        with pytest.raises(sieve.InvalidArgument, match="no query_embedding"):
            store.query(VectorStoreQuery(query_str="apple"))
        for op in (FilterOperator.TEXT_MATCH, FilterOperator.TEXT_MATCH_INSENSITIVE):
            with pytest.raises(sieve.NotSupported, match="operator %s" % op.name):
                store.filter_text(MetadataFilters(filters=[
                    MetadataFilter(key="genre", value="x", operator=op)]))
        with pytest.raises(sieve.NotSupported, match=r"\(CONTAINS\).*'genre' is a string"):
            store.filter_text(MetadataFilters(filters=[
                MetadataFilter(key="genre", value="s", operator=FilterOperator.CONTAINS)]))
        with pytest.raises(sieve.InvalidArgument, match=r"'year'.*numbers, got 'x'"):
            store.filter_text(MetadataFilters(filters=[MetadataFilter(key="year", value="x")]))
        with pytest.raises(sieve.InvalidArgument, match="node 'bare' has no embedding"):
            store.add([TextNode(id_="bare", text="x")])


def mmr_oracle(vectors, q, k, lam):
    """Maximal marginal relevance by its definition, in float64, over every node."""
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    rel = unit @ (q / np.linalg.norm(q))
    picked = [int(np.argmax(rel))]
    while len(picked) < k:
        best, best_i = -np.inf, -1
        for i in range(len(unit)):
            if i in picked:
                continue
            s = lam * rel[i] - (1 - lam) * max(float(unit[i] @ unit[j]) for j in picked)
            if s > best:
                best, best_i = s, i
        picked.append(best_i)
    return picked


def test_query_engine_and_async(tmp_path):
    docs = [Document(text="The river flows north past the stone bridge.", doc_id="a",
                     metadata={"region": "north", "year": 2001}),
            Document(text="Summer storms cross the south plains.", doc_id="b",
                     metadata={"region": "south", "year": 2010})]
    with sieve.open(tmp_path / "db") as db:
        store = SieveVectorStore(database=db, collection_name="qe")

        async def run():
            index = VectorStoreIndex.from_documents(
                docs, storage_context=StorageContext.from_defaults(vector_store=store),
                embed_model=EMBED, use_async=True)
            nodes = await index.as_retriever(similarity_top_k=1).aretrieve("river bridge")
            assert [n.node.ref_doc_id for n in nodes] == ["a"]
            f = MetadataFilters(filters=[MetadataFilter(key="year", value=2005,
                                                        operator=FilterOperator.GT)])
            nodes = await index.as_retriever(similarity_top_k=2, filters=f).aretrieve("river")
            assert [n.node.ref_doc_id for n in nodes] == ["b"]
            assert len(await store.aget_nodes(filters=f)) == 1
            await store.adelete("a")
            assert [n.ref_doc_id for n in await store.aget_nodes()] == ["b"]
            await store.adelete_nodes(filters=f)
            assert await store.aget_nodes() == []
            await store.async_add([TextNode(id_="x", text="t", embedding=[0.0] * DIM)])
            await store.aclear()
            assert len(db["qe"]) == 0

        asyncio.run(run())
        index = VectorStoreIndex.from_documents(
            docs, storage_context=StorageContext.from_defaults(vector_store=store),
            embed_model=EMBED)
        engine = index.as_query_engine(llm=MockLLM(), similarity_top_k=1,
                                       filters=MetadataFilters(filters=[
                                           MetadataFilter(key="region", value="south")]))
        response = engine.query("Where do storms go?")
        assert [n.node.ref_doc_id for n in response.source_nodes] == ["b"]
        assert "Summer storms" in response.source_nodes[0].node.get_content()


def test_nodes_come_back_as_they_went_in(tmp_path):
    from llama_index.core.schema import Document as LlamaDocument, IndexNode
    text = TextNode(id_="t", text="a text", metadata={"page": 2, "file name": "a b.pdf"},
                    excluded_llm_metadata_keys=["page"], start_char_idx=3, end_char_idx=9,
                    embedding=[1.0, 0.0, 0.0])
    text.relationships[NodeRelationship.SOURCE] = RelatedNodeInfo(node_id="doc", hash="h")
    text.relationships[NodeRelationship.NEXT] = RelatedNodeInfo(node_id="t2")
    index_node = IndexNode(id_="i", text="an index node", index_id="other", metadata={},
                           embedding=[0.0, 1.0, 0.0])
    document = LlamaDocument(id_="d", text="a whole document", metadata={"tags": ["x", "y"]},
                             embedding=[0.0, 0.0, 1.0])
    with sieve.open(tmp_path / "db") as db:
        store = SieveVectorStore(database=db)
        store.add([text, index_node, document])
        got = store.get_nodes(node_ids=["t", "i", "d"])
        assert [type(g) for g in got] == [TextNode, IndexNode, LlamaDocument]
        for g, want in zip(got, [text, index_node, document]):
            g.embedding = want.embedding  # not read back unless asked for (MMR)
            assert g == want
        assert got[0].ref_doc_id == "doc" and got[0].get_content(metadata_mode="llm") == \
            "file name: a b.pdf\n\na text"
        assert db["llama_index"].attributes["_file_x20name"] == "string"
        assert store.attribute_name("file name") == "_file_x20name"
