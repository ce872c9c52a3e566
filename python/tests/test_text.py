"""Text attributes from Python: MATCH, MATCH_ALL and PHRASE after ingest, update, upsert, delete
and compaction, the texts back through get and include, and bad declarations as exceptions."""

import numpy as np
import pytest

import sieve

BODY = ["Red running shoes for men", "Shoes of running", "running boots", None,
        "New York new shoes", "The quick brown fox", "", "caf\u00e9 CAF\u00c9"]
IDS = np.arange(10, 10 + len(BODY))


@pytest.fixture
def coll(db):
    c = db.create_collection("docs", 2, attributes={"body": "text", "title": "text:simple",
                                                    "n": "int"})
    c.ingest(np.ones((len(BODY), 2), np.float32),
             attributes={"body": BODY, "title": BODY, "n": list(range(len(BODY)))}, ids=IDS)
    return c


def ids_of(coll, flt):
    res = coll.search(np.zeros(2, np.float32), k=len(BODY) + 5, filter=flt)
    return sorted(res.ids[0, : res.counts[0]].tolist())


def test_predicates_and_schema(coll):
    assert coll.attributes == {"body": "text:english", "title": "text:simple", "n": "int"}
    assert ids_of(coll, "MATCH(body, 'shoe')") == [10, 11, 14]
    assert ids_of(coll, "MATCH(title, 'shoe')") == []  # simple: no stemming
    assert ids_of(coll, "MATCH_ALL(body, 'running shoes')") == [10, 11]
    assert ids_of(coll, "PHRASE(body, 'running shoes')") == [10]
    assert ids_of(coll, "PHRASE(body, 'shoes for running')") == [11]
    assert ids_of(coll, "MATCH(body, 'Caf\u00e9')") == [17]
    assert ids_of(coll, "NOT MATCH(body, 'the')") == [10, 11, 12, 14, 15, 16, 17]
    assert ids_of(coll, "MATCH(body, 'shoe') AND n > 1") == [14]
    assert coll.count("body IS NULL") == 1
    rows = coll.get([10, 13, 99], include=["body"])
    assert rows == [{"id": 10, "body": BODY[0]}, {"id": 13, "body": None}, None]


def test_writes_are_reflected_at_once(coll):
    assert coll.update({"body": "trail running boots"}, filter="PHRASE(body, 'new york')") == 1
    assert ids_of(coll, "MATCH(body, 'york')") == []
    assert ids_of(coll, "MATCH_ALL(body, 'trail boot')") == [14]
    coll.upsert(np.ones((1, 2), np.float32), attributes={"body": ["New York boots"]}, ids=[10])
    assert ids_of(coll, "MATCH(body, 'york')") == [10]
    assert ids_of(coll, "PHRASE(body, 'running shoes')") == []
    assert coll.delete(filter="MATCH(body, 'boot')") == 3
    assert ids_of(coll, "MATCH(body, 'boot')") == []
    coll.compact(force=True)
    assert ids_of(coll, "MATCH(body, 'run')") == [11]


def test_bad_declarations_and_filters_raise(db):
    with pytest.raises(sieve.InvalidArgument, match="unknown text analyzer"):
        db.create_collection("bad", 2, attributes={"b": "text:klingon"})
    c = db.create_collection("ok", 2, attributes={"b": "text:stem:french", "s": "string"})
    c.ingest(np.ones((1, 2), np.float32), attributes={"b": ["Les chevaux"], "s": ["x"]})
    assert c.count("MATCH(b, 'cheval')") == 1
    with pytest.raises(sieve.InvalidArgument, match="position 7: MATCH applies only to text"):
        c.count("MATCH(s, 'x')")
    with pytest.raises(sieve.InvalidArgument, match="is text: test it with MATCH"):
        c.count("b = 'x'")
    with pytest.raises(sieve.InvalidArgument):
        c.ingest(np.ones((1, 2), np.float32), attributes={"b": [3], "s": ["x"]})
    c.add_attribute("note", "text:simple", default="Hello World")
    assert c.count("PHRASE(note, 'hello world')") == 1
