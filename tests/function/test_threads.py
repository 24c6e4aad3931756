"""A Function is safe to call from many threads at once: results match NumPy, and
concurrent first calls with one key trace once."""

import threading

import numpy as np
import pytest

import autograph as ag

N_THREADS = 8


def run_threads(target, n=N_THREADS):
    barrier = threading.Barrier(n)
    errors = []

    def body(i):
        try:
            barrier.wait()
            target(i)
        except BaseException as e:  # noqa: BLE001 - reported to the main thread below
            errors.append(e)

    threads = [threading.Thread(target=body, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def test_concurrent_first_calls_with_one_key_trace_once():
    traced = []

    @ag.function
    def f(x):
        traced.append(threading.get_ident())
        return x * 2 + 1

    results = {}

    def call(i):
        results[i] = f(np.full(3, float(i)))

    run_threads(call)
    assert len(traced) == 1
    assert f.experimental_get_tracing_count() == 1
    for i, out in results.items():
        np.testing.assert_array_equal(out, np.full(3, 2.0 * i + 1))


@pytest.mark.filterwarnings("ignore::autograph.function.RetracingWarning")
def test_mixed_signatures_under_eight_threads():
    @ag.function
    def f(x, n):
        y = x
        for _ in range(n):       # a Python loop: unrolled, n is part of the key
            y = np.tanh(y) + x
        return y

    def reference(x, n):
        y = x
        for _ in range(n):
            y = np.tanh(y) + x
        return y

    dtypes = [np.float32, np.float64]
    shapes = [(3,), (2, 2)]
    ns = [1, 2]
    keys = [(d, s, n) for d in dtypes for s in shapes for n in ns]   # 8 distinct keys

    def call(i):
        rng = np.random.default_rng(i)
        for j in range(60):
            dtype, shape, n = keys[(i + j) % len(keys)]
            x = rng.standard_normal(shape).astype(dtype)
            out = f(x, n)
            assert out.dtype == dtype
            np.testing.assert_allclose(out, reference(x, n), rtol=1e-6)

    run_threads(call)
    assert f.experimental_get_tracing_count() == len(keys)


def test_variable_updates_from_many_threads_are_all_counted():
    counter = ag.Variable(0)
    lock = threading.Lock()

    @ag.function
    def bump():
        counter.assign_add(1)

    bump()   # trace once up front
    counter.assign(0)

    def call(i):
        for _ in range(50):
            with lock:     # the read-modify-write itself is not atomic: serialise it
                bump()

    run_threads(call)
    assert int(counter.numpy()) == N_THREADS * 50
    assert bump.experimental_get_tracing_count() == 1


class Doubler:
    def __init__(self):
        self.traces = 0

    @ag.function
    def apply(self, x):
        self.traces += 1
        return x * 2


def test_concurrent_first_calls_of_a_method_share_one_bound_function():
    d = Doubler()
    bound = []

    def call(i):
        method = d.apply
        bound.append(method)
        np.testing.assert_array_equal(method(np.full(2, float(i))), np.full(2, 2.0 * i))

    run_threads(call)
    assert all(b is bound[0] for b in bound)
    assert d.traces == 1
