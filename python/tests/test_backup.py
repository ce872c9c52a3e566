"""Backups: Database.backup, sieve.backup (beside a `sieve serve` that holds the store),
sieve.restore, sieve.verify_backup, sieve.list_backups, the server's POST /backup, and the CLI's
backup, restore, verify-backup and backups."""

import json
import pathlib
import subprocess
import urllib.request

import numpy as np
import pytest

import sieve
from conftest import Server, sieve_cli


def fill(db, n, start=0):
    items = db.collection("items") if "items" in db else db.create_collection(
        "items", dim=8, attributes={"n": "int"})
    rng = np.random.default_rng(start)
    ids = np.arange(start, start + n, dtype=np.int64)
    items.ingest(rng.standard_normal((n, 8), dtype=np.float32), ids=ids,
                 attributes={"n": ids * 3})
    return items


def test_backup_restore_verify_and_list(tmp_path):
    dest = tmp_path / "backups"
    with sieve.open(tmp_path / "db") as db:
        items = fill(db, 300)
        first = db.backup(dest)
        fill(db, 50, start=300)
        second = db.backup(dest, keep=2)
        fill(db, 50, start=350)
        third = db.backup(dest, keep=2)
        want = items.get([10, 320], include=["n"])
    assert (first["backup_id"], second["backup_id"], third["backup_id"]) == (1, 2, 3)
    assert first["files_reused"] == 0 and first["bytes_copied"] > 0
    assert second["files_reused"] > 0 and second["bytes_copied"] < first["bytes_copied"]
    assert third["purged"] == [1]
    # Flushed first and taken without write-ahead logs, vetted at the first attempt.
    assert [(b["logs"], b["attempts"]) for b in (first, second, third)] == [(False, 1)] * 3
    listing = sieve.list_backups(dest)
    assert [b["backup_id"] for b in listing["backups"]] == [2, 3]
    assert listing["leftover_files"] == 0
    assert [b["backup_id"] for b in sieve.verify_backup(dest)["backups"]] == [2, 3]

    assert sieve.restore(dest, tmp_path / "r2", backup=2)["backup_id"] == 2
    # A killed restore's directory (its process gone) is removed by the next restore there.
    (tmp_path / "latest.restore-20260101T000000Z-999999999").mkdir()
    latest = sieve.restore(dest, tmp_path / "latest")
    assert latest["backup_id"] == 3 and latest["leftovers_removed"] == 1
    assert not (tmp_path / "latest.restore-20260101T000000Z-999999999").exists()
    with sieve.open(tmp_path / "r2", create=False) as r2:
        assert r2.collection("items").count() == 350
        assert r2.collection("items").get([10, 320], include=["n"]) == want
        r2.check()  # raises Corruption on any problem
    with sieve.open(tmp_path / "latest", create=False) as latest:
        assert latest.collection("items").count() == 400
    with pytest.raises(sieve.InvalidArgument):
        sieve.restore(dest, tmp_path / "r2", backup=3)
    with pytest.raises(sieve.NotFound):
        sieve.restore(dest, tmp_path / "r1", backup=1)
    with pytest.raises(sieve.NotFound):
        sieve.list_backups(tmp_path / "nothing")

    # A flipped byte in a table file is found, and named.
    victim = max((dest / "shared_checksum").iterdir(), key=lambda p: p.stat().st_size)
    data = bytearray(victim.read_bytes())
    data[len(data) // 2] ^= 0x01
    victim.write_bytes(bytes(data))
    with pytest.raises(sieve.Corruption) as e:
        sieve.verify_backup(dest)
    assert e.value.problems


def test_read_only_database_cannot_back_up_itself(tmp_path):
    with sieve.open(tmp_path / "db") as db:
        fill(db, 10)
    with sieve.open(tmp_path / "db", read_only=True) as db:
        with pytest.raises(sieve.NotSupported):
            db.backup(tmp_path / "b")
    assert sieve.backup(tmp_path / "db", tmp_path / "b")["secondary"] is False


def post(url, body):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_backups_of_a_served_store(tmp_path):
    db_path = tmp_path / "served"
    with sieve.open(db_path) as db:
        fill(db, 200)
    server = Server(db_path)
    try:
        client = sieve.Client(server.url)
        client["items"].ingest(np.ones((5, 8), dtype=np.float32),
                               ids=np.arange(1000, 1005, dtype=np.int64))
        # The server backs up the store it serves...
        status, body = post(server.url + "/backup", {"dest": str(tmp_path / "route"), "keep": 1})
        assert status == 200, body
        assert body["backup_id"] == 1 and body["secondary"] is False
        status, body = post(server.url + "/backup", {"dest": ""})
        assert status == 400 and "dest" in body["error"]
        status, body = post(server.url + "/backup", {"dest": "x", "what": 1})
        assert status == 400
        # ... and a backup from outside reads it beside the server, through a secondary.
        outside = sieve.backup(db_path, tmp_path / "outside")
        assert outside["secondary"] is True
        cli = subprocess.run([str(sieve_cli()), "backup", str(db_path), str(tmp_path / "outside"),
                              "--keep", "1"], capture_output=True, text=True)
        assert cli.returncode == 0, cli.stderr
        line = json.loads(cli.stdout)
        assert line["backup_id"] == 2 and line["purged"] == [1] and line["secondary"] is True
        assert line["files_reused"] > 0
        client["items"].ingest(np.ones((5, 8), dtype=np.float32),
                               ids=np.arange(2000, 2005, dtype=np.int64))
    finally:
        server.stop()
    for dest, rows in (("route", 205), ("outside", 205)):
        sieve.restore(tmp_path / dest, tmp_path / ("r-" + dest))
        with sieve.open(tmp_path / ("r-" + dest), create=False) as r:
            assert r.collection("items").count() == rows
            r.check()


def test_cli_contract(tmp_path):
    cli = str(sieve_cli())
    with sieve.open(tmp_path / "db") as db:
        fill(db, 100)

    def run(*args):
        return subprocess.run([cli, *map(str, args)], capture_output=True, text=True)

    r = run("backup", tmp_path / "db", tmp_path / "b")
    assert r.returncode == 0 and json.loads(r.stdout)["backup_id"] == 1
    r = run("backups", tmp_path / "b")
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    assert r.returncode == 0 and lines[0]["backup_id"] == 1 and lines[-1]["backups"] == 1
    r = run("verify-backup", tmp_path / "b")
    assert r.returncode == 0 and json.loads(r.stdout.splitlines()[-1])["ok"] is True
    r = run("restore", tmp_path / "b", tmp_path / "r", "--backup", 1)
    assert r.returncode == 0 and json.loads(r.stdout)["backup_id"] == 1
    assert run("check", tmp_path / "r").returncode == 0
    for args in (("backup", tmp_path / "db"),                      # no DEST
                 ("backup", tmp_path / "nope", tmp_path / "b"),     # no database
                 ("backup", tmp_path / "db", tmp_path / "db" / "x"),  # DEST inside the store
                 ("restore", tmp_path / "b", tmp_path / "r"),       # DB exists
                 ("restore", tmp_path / "b", tmp_path / "r9", "--backup", 9),
                 ("verify-backup", tmp_path / "nothing")):
        r = run(*args)
        assert r.returncode == 1, args
        assert len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert r.stdout == "" or args[0] == "verify-backup"
    assert not pathlib.Path(tmp_path / "r9").exists()
