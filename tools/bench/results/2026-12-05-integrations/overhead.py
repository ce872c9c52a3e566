"""What sieve.langchain and sieve.llama_index add beside the embedded Python API: 10,000 documents
added in one call, and 1,000 single-query similarity searches with a metadata filter.

Embeddings are computed before the clock starts (a lookup table stands in for the model), so the
figures are the stores' own work: ids, metadata to attribute columns, the id-collision check,
filter translation, rows back to Documents / nodes. The three sides alternate within each round
(fresh collections for the writes), and each figure is the median over the rounds.

    PYTHONPATH=build/python build/python-env/bin/python \\
        tools/bench/results/2026-12-05-integrations/overhead.py --rounds 5 --out run.json
"""

import argparse
import json
import os
import statistics
import tempfile
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from langchain_core.embeddings import Embeddings  # noqa: E402
from llama_index.core.schema import NodeRelationship, RelatedNodeInfo, TextNode  # noqa: E402
from llama_index.core.vector_stores.types import (FilterOperator, MetadataFilter,  # noqa: E402
                                                  MetadataFilters, VectorStoreQuery)

import sieve  # noqa: E402
from sieve.langchain import SieveVectorStore as LangChainStore  # noqa: E402
from sieve.llama_index import SieveVectorStore as LlamaIndexStore  # noqa: E402


class Table(Embeddings):
    """Embeddings looked up by text: no model time inside the clock."""

    def __init__(self, texts, vectors):
        self.map = {t: v for t, v in zip(texts, vectors.tolist())}

    def embed_documents(self, texts):
        return [self.map[t] for t in texts]

    def embed_query(self, text):
        return self.map[text]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=10000)
    ap.add_argument("--searches", type=int, default=1000)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--out")
    a = ap.parse_args()

    rng = np.random.default_rng(0)
    n, dim = a.docs, a.dim
    vectors = rng.standard_normal((n, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    texts = ["document %d: %s" % (i, "lorem ipsum " * 20) for i in range(n)]
    sources = ["file%03d.pdf" % (i % 200) for i in range(n)]
    pages = [int(i % 100) for i in range(n)]
    years = [int(1990 + i % 35) for i in range(n)]
    metadatas = [{"source": s, "page": p, "year": y} for s, p, y in zip(sources, pages, years)]
    ids = ["doc-%d" % i for i in range(n)]
    queries = rng.standard_normal((a.searches, dim)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    qtexts = ["query %d" % i for i in range(a.searches)]
    emb = Table(texts + qtexts, np.vstack([vectors, queries]))

    def nodes():
        out = []
        for i in range(n):
            node = TextNode(id_=ids[i], text=texts[i], metadata=metadatas[i],
                            embedding=vectors[i].tolist())
            node.relationships[NodeRelationship.SOURCE] = RelatedNodeInfo(node_id=sources[i])
            out.append(node)
        return out

    work = tempfile.mkdtemp(prefix="sieve-integrations-")
    db = sieve.open(os.path.join(work, "db"))
    attrs = {"page_content": "string", "source": "string", "page": "int", "year": "int"}
    lists = emb.embed_documents(texts)
    times = {k: [] for k in ("add.lists", "add.api", "add.langchain", "add.llama_index",
                             "search.api",
                             "search.api_include", "search.langchain",
                             "search.langchain_text", "search.llama_index")}
    # The filter passes 40 % of the rows: page < 40, and year >= 1990 (every row).
    sieve_filter = "page < 40 AND year >= 1990"
    lc_filter = {"page": {"$lt": 40}, "year": {"$gte": 1990}}
    li_filter = MetadataFilters(filters=[
        MetadataFilter(key="page", value=40, operator=FilterOperator.LT),
        MetadataFilter(key="year", value=1990, operator=FilterOperator.GTE)])
    for r in range(a.rounds):
        li_nodes = nodes()
        t0 = time.perf_counter()
        np.asarray(lists, dtype=np.float32)
        times["add.lists"].append(time.perf_counter() - t0)
        sides = ["api", "langchain", "llama_index"]
        sides = sides[r % 3:] + sides[:r % 3]
        stores = {}
        for side in sides:
            name = "%s%d" % (side.replace("_", ""), r)
            t0 = time.perf_counter()
            if side == "api":
                coll = db.create_collection(name, dim=dim, metric="cosine", attributes=attrs)
                coll.ingest(vectors, attributes={"page_content": texts, "source": sources,
                                                 "page": pages, "year": years},
                            ids=np.arange(n, dtype=np.int64))
                stores[side] = coll
            elif side == "langchain":
                store = LangChainStore(emb, database=db, collection_name=name)
                store.add_texts(texts, metadatas, ids=ids)
                stores[side] = store
            else:
                store = LlamaIndexStore(database=db, collection_name=name)
                store.add(li_nodes)
                stores[side] = store
            times["add." + side].append(time.perf_counter() - t0)
        coll, lc, li = stores["api"], stores["langchain"], stores["llama_index"]
        qlist = queries.tolist()

        def run(kind):
            t0 = time.perf_counter()
            for i in range(a.searches):
                if kind == "api":
                    coll.search(queries[i], k=a.k, filter=sieve_filter)
                elif kind == "api_include":
                    coll.search(queries[i], k=a.k, filter=sieve_filter, include="*")
                elif kind == "langchain":
                    lc.similarity_search_by_vector(qlist[i], k=a.k, filter=lc_filter)
                elif kind == "langchain_text":
                    lc.similarity_search(qtexts[i], k=a.k, filter=lc_filter)
                else:
                    li.query(VectorStoreQuery(query_embedding=qlist[i], similarity_top_k=a.k,
                                              filters=li_filter))
            times["search." + kind].append(time.perf_counter() - t0)

        kinds = ["api", "api_include", "langchain", "langchain_text", "llama_index"]
        for kind in kinds[r % 5:] + kinds[:r % 5]:
            run(kind)
        # The answers agree: the same ids for one query on every side.
        want = coll.search(queries[0], k=a.k, filter=sieve_filter).ids[0].tolist()
        got_lc = [int(d.id.split("-")[1])
                  for d in lc.similarity_search_by_vector(qlist[0], k=a.k, filter=lc_filter)]
        got_li = [int(i.split("-")[1]) for i in li.query(VectorStoreQuery(
            query_embedding=qlist[0], similarity_top_k=a.k, filters=li_filter)).ids]
        assert want == got_lc == got_li, (want, got_lc, got_li)
        for s in stores.values():
            if isinstance(s, sieve.Collection):
                db.drop_collection(s.name)
            else:
                s.delete_collection()
    db.close()

    med = {k: statistics.median(v) for k, v in times.items()}
    print("%d docs x %d dims, %d searches, k=%d, %d rounds (medians)" % (
        n, dim, a.searches, a.k, a.rounds))
    print("| what | seconds | per item | vs API |")
    print("|---|---|---|---|")
    rows = [("add: Collection.ingest", "add.api", n, "add.api"),
            ("add: embeddings as lists to one float32 array (inside both stores' add)",
             "add.lists", n, "add.api"),
            ("add: LangChain add_texts", "add.langchain", n, "add.api"),
            ("add: LlamaIndex add", "add.llama_index", n, "add.api"),
            ("search: Collection.search", "search.api", a.searches, "search.api"),
            ("search: Collection.search include='*'", "search.api_include", a.searches,
             "search.api"),
            ("search: LangChain similarity_search_by_vector", "search.langchain", a.searches,
             "search.api_include"),
            ("search: LangChain similarity_search (table lookup embedding)",
             "search.langchain_text", a.searches, "search.api_include"),
            ("search: LlamaIndex query", "search.llama_index", a.searches,
             "search.api_include")]
    for label, key, count, base in rows:
        print("| %s | %.3f | %.1f µs | %s |" % (
            label, med[key], med[key] / count * 1e6,
            "%+.0f %% (vs %s)" % ((med[key] / med[base] - 1) * 100, base)
            if key not in (base, "add.lists") else "-"))
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"args": vars(a), "times": times, "medians": med}, f, indent=1)


if __name__ == "__main__":
    main()
