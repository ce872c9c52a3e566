"""Fixtures of the Python package's tests (run by tools/run-tests.sh).

The package under test is the one on sys.path: the build tree's (PYTHONPATH=build/python) in CI,
or an installed wheel. The server tests start the `sieve` CLI named by SIEVE_CLI (default
build/tools/sieve).
"""

import os

# One BLAS thread: the engine's CPU executor spreads a large search over the cores itself, and
# the thread tests measure Python threads, not OpenBLAS's (read when the library loads).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import json  # noqa: E402
import pathlib  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import sieve  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture
def db(tmp_path):
    d = sieve.open(tmp_path / "db")
    yield d
    d.close()


def sieve_cli() -> pathlib.Path:
    cli = pathlib.Path(os.environ.get("SIEVE_CLI", ROOT / "build" / "tools" / "sieve"))
    if not cli.is_file():
        pytest.fail("the sieve CLI is not at %s (build it, or set SIEVE_CLI)" % cli)
    return cli


class Server:
    """`sieve serve DB --create --listen 127.0.0.1:0` in a child process (an existing store is
    served as it is; a missing one is created empty)."""

    def __init__(self, db_path, *extra):
        self.proc = subprocess.Popen(
            [str(sieve_cli()), "serve", str(db_path), "--create", "--listen", "127.0.0.1:0",
             *extra],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        if not line:
            err = self.proc.stderr.read()
            self.proc.kill()
            raise RuntimeError("sieve serve did not start: " + err)
        self.address = json.loads(line)["listening"]
        self.url = "http://" + self.address

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc.stdout.close()
        self.proc.stderr.close()


@pytest.fixture
def server(tmp_path):
    s = Server(tmp_path / "served")
    yield s
    s.stop()


def oracle(rows, queries, metric, k, passing=None):
    """Brute force in float64: (ids as positions, distances) per query, best first, ties by
    position. `passing` is a bool mask of rows (or a list of masks, one per query)."""
    x = rows.astype(np.float64)
    q = queries.astype(np.float64)
    if metric == "l2":
        d = (q * q).sum(1)[:, None] + (x * x).sum(1)[None, :] - 2 * q @ x.T
        d = np.maximum(d, 0)
        key = d
    elif metric == "ip":
        d = q @ x.T
        key = -d
    else:
        qn = np.linalg.norm(q, axis=1)[:, None]
        xn = np.linalg.norm(x, axis=1)[None, :]
        with np.errstate(invalid="ignore", divide="ignore"):
            cos = np.where((qn > 0) & (xn > 0), (q @ x.T) / (qn * xn), 0.0)
        d = 1 - cos
        key = d
    out = []
    for i in range(len(q)):
        mask = passing if passing is None or isinstance(passing, np.ndarray) else passing[i]
        cand = np.arange(len(x)) if mask is None else np.flatnonzero(mask)
        order = cand[np.lexsort((cand, key[i, cand]))][:k]
        out.append((order, d[i, order]))
    return out


def assert_matches(result, expected, ids_of_position, metric, rtol=1e-5, atol=1e-4):
    """result (a SearchResult) equals the oracle's answer: the same distances, the same ids
    (rows whose distances tie at the k-th place may swap), the documented fill after them."""
    fill = -np.inf if metric == "ip" else np.inf
    k = result.ids.shape[1]
    assert result.ids.shape == result.distances.shape == (len(expected), k)
    assert result.ids.dtype == np.int64 and result.distances.dtype == np.float32
    for i, (pos, dist) in enumerate(expected):
        n = len(pos)
        assert result.counts[i] == n, "query %d: %d results, oracle %d" % (
            i, result.counts[i], n)
        np.testing.assert_allclose(result.distances[i, :n], dist, rtol=rtol, atol=atol)
        want = ids_of_position[pos]
        got = result.ids[i, :n]
        if n:
            clear = np.abs(dist - dist[-1]) > atol + rtol * abs(dist[-1])
            assert set(got[clear]) == set(want[clear]), "query %d: ids differ" % i
            assert len(set(got)) == n
        assert np.all(result.ids[i, n:] == -1)
        assert np.all(result.distances[i, n:] == fill)
