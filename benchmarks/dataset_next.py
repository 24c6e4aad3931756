"""Per-element cost of eager `next()` on an ag.data iterator (single thread).

    python -m benchmarks.dataset_next            # this checkout
    PYTHONPATH=/tmp/old python benchmarks/dataset_next.py   # another tree, for before/after

Each pipeline is drained 5 times; the best time per element is printed (a shared machine's
noise only adds time; CPU time, not wall time). The number to read for the iterator's own overhead is `range`: the
stages there do one comparison and one addition per element. The lock that makes an
iterator safe to share between threads (autograph/data/iterator.py) is measured alone too.
"""

import threading
import time

import numpy as np


def _best_per_element(make, rounds=9):
    best = float("inf")
    for _ in range(rounds):
        it = iter(make())
        n = 0
        t = time.process_time()    # CPU time: a loaded machine's waits do not count
        for _ in it:
            n += 1
        best = min(best, (time.process_time() - t) / max(n, 1))
    return best


def main():
    from autograph.data import Dataset
    n = 100_000
    cases = {
        "range": lambda: Dataset.range(n),
        "from_tensor_slices": lambda: Dataset.from_tensor_slices(np.arange(float(n))),
        "slices.batch(32)": lambda: Dataset.from_tensor_slices(np.ones((32 * 3000, 8))).batch(32),
        "range.map": lambda: Dataset.range(n // 5).map(lambda x: x + 1),
        "range.repeat(2)": lambda: Dataset.range(n // 2).repeat(2),
    }
    for name, make in cases.items():
        print(f"{name:24s} {_best_per_element(make) * 1e6:8.2f} us per next()")
    lock = threading.Lock()
    t = time.process_time()
    for _ in range(n):
        with lock:
            pass
    with_lock = time.process_time() - t
    t = time.process_time()
    for _ in range(n):
        pass
    print(f"{'uncontended lock':24s} {(with_lock - (time.process_time() - t)) / n * 1e6:8.3f} "
          f"us per with-block")


if __name__ == "__main__":
    main()
