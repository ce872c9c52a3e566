"""Schema changes, renames and aliases from Python: Collection.add_attribute / drop_attribute /
rename_attribute / rename, Database.rename_collection / set_alias / drop_alias / aliases."""

import numpy as np
import pytest

import sieve


def make(db, name="c", n=200, dim=8, first=0):
    c = db.create_collection(name, dim, attributes={"price": "float", "color": "string"})
    rng = np.random.default_rng(first + 1)
    v = rng.standard_normal((n, dim)).astype(np.float32)
    ids = np.arange(first, first + n, dtype=np.int64)
    c.ingest(v, {"price": [float(i % 7) for i in range(n)],
                 "color": ["red" if i % 2 else "blue" for i in range(n)]}, ids)
    return c, v


def test_schema_changes_reach_every_read_and_write(db):
    c, v = make(db)
    other = db["c"]  # a second object on the same collection
    assert c.add_attribute("stock", "int", default=3) == {
        "price": "float", "color": "string", "stock": "int"}
    assert other.attributes == c.attributes  # every object sees the schema as it is now
    assert c.count("stock = 3") == 200
    assert c.get([4], include="stock")[0]["stock"] == 3
    r = c.search(v[:1], k=5, filter="stock = 3 AND color = 'red'", include="stock")
    assert len(r.ids[0]) == 5 and all(row["stock"] == 3 for row in r.rows[0])
    assert c.update({"stock": 9}, filter="price = 1.0") > 0
    # An ingest after the change takes the new attribute.
    c.ingest(v[:2], {"price": [1.5, 2.5], "color": ["x", "y"], "stock": [7, None]},
             np.array([1000, 1001], dtype=np.int64))
    assert c.count("stock = 7") == 1 and c.count("stock IS NULL") == 1
    rows = list(c.scan(filter="stock = 9", include="stock"))
    assert rows and all(r["stock"] == 9 for r in rows)

    assert c.rename_attribute("price", "cost") == {"cost": "float", "color": "string",
                                                    "stock": "int"}
    assert c.count("cost = 1.0") > 0
    with pytest.raises(sieve.InvalidArgument, match="price"):
        c.count("price = 1.0")
    assert c.drop_attribute("color") == {"cost": "float", "stock": "int"}
    with pytest.raises(sieve.InvalidArgument, match="cost, stock"):
        c.get([1], include="color")
    with pytest.raises(sieve.InvalidArgument):
        c.add_attribute("cost", "int")
    with pytest.raises(sieve.InvalidArgument):
        c.add_attribute("flag", "bool", default="yes")
    with pytest.raises(sieve.InvalidArgument, match="nope"):
        c.drop_attribute("nope")
    db.check()  # raises Corruption when an invariant fails


def test_rename_keeps_objects_working_and_aliases_follow(db):
    c, _ = make(db)
    db.set_alias("live", "c")
    c.rename("c2")
    assert c.name == "c2" and c.count() == 200
    assert db.aliases() == {"live": "c2"}
    assert "c" not in db and "c2" in db
    with pytest.raises(sieve.NotFound):
        db["c"]
    db.rename_collection("c2", "c3")
    assert c.name == "c3"
    with pytest.raises(sieve.InvalidArgument, match="alias"):
        db.rename_collection("live", "x")
    with pytest.raises(sieve.AlreadyExists):
        db.rename_collection("c3", "live")


def test_aliases_switch_and_guard_names(db):
    a, _ = make(db, "a", n=100)
    b, _ = make(db, "b", n=150, first=1000)
    db.set_alias("live", "a")
    assert db["live"].count() == 100
    assert db["live"].name == "a"  # an object taken through an alias is the collection
    db.set_alias("live", "b")
    assert db["live"].count() == 150
    with pytest.raises(sieve.AlreadyExists):
        db.set_alias("a", "b")
    with pytest.raises(sieve.AlreadyExists):
        db.create_collection("live", 4)
    with pytest.raises(sieve.InvalidArgument, match="live"):
        db.drop_collection("b")  # an alias names it
    with pytest.raises(sieve.NotFound):
        db.set_alias("x", "none")
    db.drop_alias("live")
    assert db.aliases() == {}
    with pytest.raises(sieve.NotFound):
        db.drop_alias("live")
    db.drop_collection("b")
    with pytest.raises(sieve.NotFound):
        b.count()
