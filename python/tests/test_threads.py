"""The GIL is released while the engine works: Python threads search in parallel (wall time
below serial on 2 cores) and other Python code runs during a search."""

import threading
import time

import numpy as np
import pytest

# Each search stays on one engine thread (rows x queries x dim below the CPU executor's split
# of 2 x 2^23), so the speed-up measured is that of the Python threads.
ROWS, DIM, NQ = 40_000, 48, 4
SEARCHES = 60


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
    """Wall time of two threads doing n calls each over one thread doing 2n: best of 3."""
    best = None
    for _ in range(3):
        t0 = time.perf_counter()
        work(2 * n)
        serial = time.perf_counter() - t0
        threads = [threading.Thread(target=work, args=(n,)) for _ in range(2)]
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        ratio = (time.perf_counter() - t0) / serial
        best = ratio if best is None else min(best, ratio)
    return best


def test_threads_search_in_parallel(coll):
    ratio = speedup_ratio(lambda n: run(coll, n), SEARCHES)
    # The control: numpy's matrix product, which releases the GIL, in the same run. On a
    # machine whose other processes leave this one a single core, nothing can run in parallel,
    # and the control says so.
    a = np.random.default_rng(5).standard_normal((200, 200))

    def matmul(n):
        for _ in range(4 * n):
            a @ a

    control = speedup_ratio(matmul, SEARCHES)
    if control > 0.85:
        pytest.skip("this process gets one core now: numpy's threads took %.2f of their serial "
                    "time (sieve's %.2f)" % (control, ratio))
    assert ratio < 0.8, "2 threads took %.2f of the serial time (numpy: %.2f)" % (ratio, control)


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
