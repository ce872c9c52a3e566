"""WordNet glosses (Debian's wordnet-base, installed by tools/install-deps.sh) as a real corpus:
tools/wordnet.py's rows ingested with their glosses as text, MATCH, MATCH_ALL and PHRASE
counts against a brute-force scan over sieve.analyze's tokens, alone and beside other
predicates, after a delete, and the CLI's ingest and export round trip of the tool's files."""

import importlib.util
import json
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import sieve
from conftest import sieve_cli

ROOT = pathlib.Path(__file__).resolve().parents[2]
ROWS = 3000  # an even stride through the 117,659 synsets: every part of speech


def _load_tool():
    spec = importlib.util.spec_from_file_location("wordnet_tool", ROOT / "tools" / "wordnet.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


wordnet = _load_tool()
if not pathlib.Path(wordnet.SRC, "data.noun").exists():
    pytest.fail("wordnet-base is not installed (%s/data.noun): run tools/install-deps.sh"
                % wordnet.SRC, pytrace=False)

SCHEMA = {"gloss": "text", "words": "tags", "pos": "string", "lexname": "string",
          "offset": "int", "word_count": "int", "pointer_count": "int"}
# Realistic predicate texts: single words of every frequency, multi-word, stop words inside.
TEXTS = ["water", "small boat", "musical instrument", "the act of", "a person who",
         "of or relating to", "light", "cat", "move quickly", "United States", "plant genus",
         "in a careful manner", "Ireland"]


@pytest.fixture(scope="module")
def rows():
    return wordnet.subset(wordnet.read_synsets(), ROWS)


@pytest.fixture(scope="module")
def tokens(rows):
    return [sieve.analyze(r["gloss"], positions=True) for r in rows]


@pytest.fixture
def coll(db, rows):
    c = db.create_collection("wordnet", 8, attributes=SCHEMA)
    vectors = np.random.default_rng(7).standard_normal((len(rows), 8)).astype(np.float32)
    c.ingest(vectors, attributes={name: [r[name] for r in rows] for name in SCHEMA},
             ids=np.arange(len(rows)))
    return c


def oracle(tokens, op, text, live=None):
    """Ids whose gloss passes op(gloss, text), by a scan of every row's tokens."""
    query = sieve.analyze(text, positions=True)
    want = {t for t, _ in query}
    out = set()
    for i, toks in enumerate(tokens):
        if live is not None and i not in live:
            continue
        terms = {t for t, _ in toks}
        if op == "MATCH":
            ok = bool(want & terms)
        elif op == "MATCH_ALL":
            ok = want <= terms
        else:  # PHRASE: term i at p + (q_i - q_0) for some p
            at = {p: t for t, p in toks}
            q0 = query[0][1]
            ok = any(all(at.get(p + q - q0) == t for t, q in query)
                     for t0, p in toks if t0 == query[0][0])
        if ok:
            out.add(i)
    return out


def ids(coll, flt):
    return {r["id"] for r in coll.scan(flt, include=[])}


def test_tool_reads_every_synset_with_its_attributes(rows):
    every = wordnet.read_synsets()
    assert len(every) == 117659  # WordNet 3.0: 82,115 + 13,767 + 18,156 + 3,621 synsets
    first = every[0]
    assert first["words"] == ["entity"] and first["pos"] == "noun"
    assert first["lexname"] == "noun.Tops" and first["offset"] == 1740
    assert first["gloss"].startswith("that which is perceived or known or inferred")
    assert {r["pos"] for r in rows} == {"noun", "verb", "adjective", "adjective satellite",
                                        "adverb"}
    assert all(r["word_count"] == len(r["words"]) for r in rows)
    assert all("_" not in w and not w.endswith(")") for r in every for w in r["words"])


@pytest.mark.parametrize("op", ["MATCH", "MATCH_ALL", "PHRASE"])
def test_predicates_equal_a_scan_of_the_analyzed_glosses(coll, tokens, op):
    nonzero = 0
    for text in TEXTS:
        want = oracle(tokens, op, text)
        flt = "%s(gloss, '%s')" % (op, text)
        assert coll.count(flt) == len(want), flt
        assert ids(coll, flt) == want, flt
        nonzero += bool(want)
    assert nonzero >= len(TEXTS) // 2  # the texts do test something on this corpus


def test_predicates_combine_with_attributes_and_see_deletes(coll, rows, tokens):
    nouns = {i for i, r in enumerate(rows) if r["pos"] == "noun"}
    want = oracle(tokens, "MATCH", "water") & nouns
    assert want
    assert ids(coll, "MATCH(gloss, 'water') AND pos = 'noun'") == want
    plants = {i for i, r in enumerate(rows) if r["lexname"] == "noun.plant"}
    flt = "PHRASE(gloss, 'plant genus') AND NOT lexname = 'noun.plant'"
    assert ids(coll, flt) == oracle(tokens, "PHRASE", "plant genus") - plants
    gone = sorted(want)[: len(want) // 2 + 1]
    assert coll.delete(ids=gone) == len(gone)
    live = set(range(len(rows))) - set(gone)
    assert ids(coll, "MATCH(gloss, 'water')") == oracle(tokens, "MATCH", "water", live)


def test_cli_ingests_and_exports_the_tool_files(tmp_path):
    cli = sieve_cli()
    data = tmp_path / "data"
    subprocess.run([sys.executable, str(ROOT / "tools" / "wordnet.py"), "--out", str(data),
                    "--limit", "400", "--vectors", "svd", "--dim", "16", "--queries", "3"],
                   check=True, capture_output=True)
    info = json.loads((data / "vectors.json").read_text())
    assert info["method"] == "svd" and info["rows"] == 400
    vectors = np.load(data / "wordnet.npy")
    assert vectors.shape == (400, 16) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-5)
    assert np.load(data / "queries.npy").shape == (3, 16)
    db = tmp_path / "db"
    attrs = sum((["--attr", "%s:%s" % kv] for kv in SCHEMA.items()), [])
    subprocess.run([str(cli), "create", str(db), "--collection", "wn", "--dim", "16",
                    "--metric", "cosine"] + attrs, check=True, capture_output=True)
    subprocess.run([str(cli), "ingest", str(db), "--collection", "wn", "--vectors",
                    str(data / "wordnet.npy"), "--attributes", str(data / "wordnet.jsonl")],
                   check=True, capture_output=True)
    out = subprocess.run([str(cli), "export", str(db), "--collection", "wn",
                          "--include", "*,vector"], check=True, capture_output=True, text=True)
    exported = [json.loads(line) for line in out.stdout.splitlines()]
    written = [json.loads(line) for line in (data / "wordnet.jsonl").read_text().splitlines()]
    assert [r["id"] for r in exported] == list(range(400))
    for got, want, vec in zip(exported, written, vectors):
        assert np.allclose(got.pop("vector"), vec)
        got.pop("id")
        assert got == want
    # The tool's query texts search the collection with a text predicate through the CLI.
    q = subprocess.run([str(cli), "query", str(db), "--collection", "wn", "--queries",
                        str(data / "queries.npy"), "--k", "3", "--filter",
                        "MATCH(gloss, 'animal plant person') AND pos = 'noun'"],
                       check=True, capture_output=True, text=True)
    assert len(q.stdout.splitlines()) == 3
