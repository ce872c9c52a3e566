"""sieve.analyze and `sieve analyze`: the analyzers' terms and positions, equal to what the
text predicates match, and their errors."""

import json
import subprocess

import numpy as np
import pytest

import sieve
from conftest import sieve_cli


def test_english_simple_and_stemmer_terms():
    assert sieve.analyze("The runners were RUNNING, to the shoe-store!") == [
        "runner", "were", "run", "shoe", "store"]
    assert sieve.analyze("The runners were RUNNING", positions=True) == [
        ("runner", 1), ("were", 2), ("run", 3)]
    assert sieve.analyze("The Runners", analyzer="simple") == ["the", "runners"]
    assert sieve.analyze("les chevaux", analyzer="stem:french") == ["le", "cheval"]
    assert sieve.analyze(" ,.; ") == []


def test_errors():
    with pytest.raises(sieve.InvalidArgument, match="klingon.*'english'"):
        sieve.analyze("x", analyzer="klingon")
    with pytest.raises(TypeError, match="text must be a str"):
        sieve.analyze(b"bytes")


def test_terms_are_what_match_finds(db):
    texts = ["Running shoes", "a runner ran", "shoe store", "The store"]
    c = db.create_collection("t", 1, attributes={"body": "text"})
    c.ingest(np.zeros((len(texts), 1), np.float32), attributes={"body": texts})
    for term in sorted({t for text in texts for t in sieve.analyze(text)}):
        want = [i for i, text in enumerate(texts) if term in sieve.analyze(text)]
        got = sorted(r["id"] for r in c.scan("MATCH(body, '%s')" % term, include=[]))
        assert got == want, term


def run_cli(*args, stdin=None):
    return subprocess.run([str(sieve_cli()), "analyze", *args], input=stdin,
                          capture_output=True, text=True)


def test_cli(tmp_path):
    r = run_cli("The runners", "were", "RUNNING")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {"analyzer": "english", "terms": ["runner", "were", "run"],
                                    "positions": [1, 2, 3]}
    r = run_cli("--analyzer", "simple", "--file", "-", stdin="Caf\u00e9 CAF\u00c9\n")
    assert json.loads(r.stdout)["terms"] == ["caf\u00e9", "caf\u00e9"]
    for args, message in [((), "missing the text"), (("--analyzer", "klingon", "x"), "klingon"),
                          (("--file", "/nonexistent/f"), "/nonexistent/f"),
                          (("--file", str(tmp_path)), "is a directory"),
                          (("--file", "-", "x"), "not both")]:
        r = run_cli(*args)
        assert r.returncode == 1 and r.stdout == ""
        assert len(r.stderr.splitlines()) == 1 and message in r.stderr, r.stderr
