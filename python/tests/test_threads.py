"""The GIL is released while the engine works: Python threads search in parallel (wall time
below serial on 2 cores) and other Python code runs during a search."""

import hashlib
import threading
import time

import numpy as np
import pytest

# Each search stays on one engine thread (rows x queries x dim below the CPU executor's split
# of 2 x 2^23), so the speed-up measured is that of the Python threads.
ROWS, DIM, NQ = 40_000, 48, 4
SEARCHES = 60
ROUNDS = 8


@pytest.fixture(scope="module")
def coll(tmp_path_factory):
    import sieve

    db = sieve.open(tmp_path_factory.mktemp("threads") / "db")
    c = db.create_collection("t", DIM)
    rng = np.random.default_rng(3)
    c.ingest(rng.standard_normal((ROWS, DIM)).astype(np.float32), batch_rows=0)
    c._queries = rng.standard_normal((NQ, DIM)).astype(np.float32)
    c.search(c._queries, k=10, path="dense")  # loads the collection
    yield c
    db.close()


def run(coll, n):
    for _ in range(n):
        coll.search(coll._queries, k=10, path="dense")


def speedup_ratio(work, n):
    """Wall time of two threads doing n calls each over one thread doing 2n."""
    t0 = time.perf_counter()
    work(2 * n)
    serial = time.perf_counter() - t0
    threads = [threading.Thread(target=work, args=(n,)) for _ in range(2)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return (time.perf_counter() - t0) / serial


def test_threads_search_in_parallel(coll):
    # The control: SHA-256 over a 1 MiB buffer, which releases the GIL and runs on one thread,
    # measured in the same rounds. A wall-time ratio on a shared 2-core machine is noisy, so the
    # test takes up to ROUNDS rounds and passes at the first where two threads took under 0.8 of
    # the serial time. An engine that held the GIL could not get under 1.0 in any round; when the
    # control never gets under 0.8 either, this process had one core throughout and the test
    # cannot tell.
    buf = np.random.default_rng(5).bytes(1 << 20)

    def sha(n):
        for _ in range(4 * n):
            hashlib.sha256(buf).digest()

    ratios, controls = [], []
    for _ in range(ROUNDS):
        ratios.append(speedup_ratio(lambda n: run(coll, n), SEARCHES))
        if ratios[-1] < 0.8:
            return
        controls.append(speedup_ratio(sha, SEARCHES))
    if min(controls) >= 0.8:
        pytest.skip("this process had one core: two hashing threads took %.2f of their serial "
                    "time at best (sieve's searches %.2f)" % (min(controls), min(ratios)))
    pytest.fail("two threads' searches took %s of the serial time in %d rounds (hashing: %s)" %
                (" ".join("%.2f" % r for r in ratios), ROUNDS,
                 " ".join("%.2f" % c for c in controls)))


def test_python_runs_while_a_search_runs(coll):
    big = np.random.default_rng(4).standard_normal((256, DIM)).astype(np.float32)
    done = threading.Event()
    ticks = 0

    def search():
        for _ in range(5):
            coll.search(big, k=100, path="dense")
        done.set()

    t = threading.Thread(target=search)
    t0 = time.perf_counter()
    t.start()
    while not done.is_set():
        ticks += 1
    t.join()
    elapsed = time.perf_counter() - t0
    # Holding the GIL, the engine would let this loop run only between searches (a handful of
    # switch intervals); released, it spins throughout.
    assert elapsed > 0.05
    assert ticks > 50_000 * elapsed, (ticks, elapsed)
