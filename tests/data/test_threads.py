"""One iterator shared by threads delivers every element exactly once (tf.data's iterators
are thread-safe): 8 threads x 20,000 next() calls over range(20000) took 61,616 elements,
with duplicates, before the iterator held a lock around each step."""

import sys
import threading

import numpy as np
import pytest

import autograph as ag
from autograph.data import Dataset


def _drain_in_threads(it, threads=8, calls=20_000):
    got = [[] for _ in range(threads)]
    errors = []
    start = threading.Barrier(threads)

    def work(out):
        try:
            start.wait()
            for _ in range(calls):
                try:
                    out.append(next(it))
                except StopIteration:
                    return
        except BaseException as exc:   # noqa: BLE001 (reported below)
            errors.append(exc)
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)        # switch threads as often as possible
    try:
        pool = [threading.Thread(target=work, args=(out,)) for out in got]
        for t in pool:
            t.start()
        for t in pool:
            t.join()
    finally:
        sys.setswitchinterval(old)
    assert not errors, errors
    return got


def test_eight_threads_share_one_iterator_over_range():
    got = _drain_in_threads(iter(Dataset.range(20_000)))
    flat = [int(x) for part in got for x in part]
    assert len(flat) == 20_000 and sorted(flat) == list(range(20_000))
    for part in got:                   # each thread sees an increasing subsequence
        assert all(int(a) < int(b) for a, b in zip(part, part[1:]))


@pytest.mark.parametrize("name", ["map_filter_batch", "shuffle_repeat", "generator_prefetch"])
def test_threads_over_pipelines(name):
    n = 3000
    if name == "map_filter_batch":
        ds = Dataset.range(n).map(lambda x: x * 2).filter(lambda x: x % 3 != 0).batch(7)
        want = [x * 2 for x in range(n) if (x * 2) % 3 != 0]
    elif name == "shuffle_repeat":
        ds = Dataset.range(n).shuffle(100, seed=1).repeat(2)
        want = list(range(n)) * 2
    else:
        ds = Dataset.from_generator(lambda: iter(range(n)),
                                    ag.TensorSpec((), np.int64)).prefetch(4)
        want = list(range(n))
    got = _drain_in_threads(iter(ds), threads=8, calls=n)
    flat = [int(v) for part in got for x in part for v in np.ravel(x)]
    assert sorted(flat) == sorted(want)


def test_state_reads_are_consistent_under_threads():
    it = iter(Dataset.range(5000))
    states = []

    def reader():
        for _ in range(200):
            states.append(it.get_state())
    t = threading.Thread(target=reader)
    t.start()
    got = _drain_in_threads(it, threads=4, calls=5000)
    t.join()
    assert sorted(int(x) for part in got for x in part) == list(range(5000))
    for s in states:                  # a position always matches its count of elements
        if not s["done"]:
            assert s["position"][0]["data"] == [s["consumed"]]
