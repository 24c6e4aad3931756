"""Variable updates are atomic per Variable: `assign`, `assign_add` and `assign_sub` from
many threads lose no update, eagerly and when traced graphs run (in every executor).

The tests count work (how many updates arrived), never time. A tiny thread switch interval
makes a lost update (a read and a write with another thread's write between) very likely
if the updates were not atomic.
"""

import sys
import threading

import numpy as np
import pytest

import autograph as ag
from autograph.errors import StagingError
from autograph.runtime.exec import codegen
from tests.runtime.tracing import MODES, run, trace

N_THREADS = 8
PER_THREAD = 500


@pytest.fixture(autouse=True)
def fast_switching():
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(old)


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


def test_eager_assign_add_from_threads_loses_nothing():
    v = ag.Variable(0, dtype=np.int64)

    def work(_):
        for _ in range(PER_THREAD):
            v.assign_add(1)
    run_threads(work)
    assert int(v.numpy()) == N_THREADS * PER_THREAD


def test_eager_add_and_sub_from_threads_loses_nothing():
    v = ag.Variable(np.zeros(3), dtype=np.float64)

    def work(i):
        for _ in range(PER_THREAD):
            if i % 2:
                v.assign_add(np.array([1.0, 2.0, 3.0]))
            else:
                v.assign_sub(1.0)
    run_threads(work)
    half = N_THREADS // 2 * PER_THREAD
    np.testing.assert_array_equal(v.numpy(), [0.0, half, 2.0 * half])


def test_traced_assign_add_from_threads_loses_nothing():
    v = ag.Variable(0, dtype=np.int64)

    @ag.function
    def bump(d):
        v.assign_add(d)
        return v.read_value()

    one = np.int64(1)
    bump(one)
    v.assign(0)

    def work(_):
        for _ in range(PER_THREAD):
            bump(one)
    run_threads(work)
    assert int(v.numpy()) == N_THREADS * PER_THREAD
    assert bump.experimental_get_tracing_count() == 1


def test_traced_updates_in_a_tensor_loop_from_threads():
    counter = ag.Variable(0, dtype=np.int64)
    total = ag.Variable(0.0, dtype=np.float32)

    @ag.function
    def loop(n):
        i = np.int64(0)
        while i < n:
            counter.assign_add(1)
            total.assign_sub(0.5)
            i += 1
        return i

    n = np.int64(50)
    loop(n)
    counter.assign(0)
    total.assign(0.0)

    def work(_):
        for _ in range(10):
            loop(n)
    run_threads(work)
    assert int(counter.numpy()) == N_THREADS * 10 * 50
    assert float(total.numpy()) == -0.5 * N_THREADS * 10 * 50


def test_eager_and_traced_updates_and_assigns_mix_atomically():
    """Threads add through a graph and eagerly, while others assign the same value back
    (assign holds the lock too, so it never lands between an update's read and write):
    only the adds change the count."""
    v = ag.Variable(0, dtype=np.int64)
    @ag.function
    def add():
        v.assign_add(2)
    add()
    v.assign(0)

    def work(i):
        for _ in range(PER_THREAD):
            if i % 2:
                add()
            else:
                v.assign_add(1)
    run_threads(work)
    half = N_THREADS // 2 * PER_THREAD
    assert int(v.numpy()) == half * 2 + half


@pytest.mark.parametrize("mode", MODES)
def test_update_node_in_every_executor_from_threads(mode):
    v = ag.Variable(np.zeros(2, np.float64))

    def fn(d):
        v.assign_add(d)
        v.assign_sub(d * 0.5)
        return v.read_value()

    graph, _ = trace(fn, np.ones(2))
    assert [n.op for n in graph.nodes].count("update_variable") == 2
    args = [np.ones(2)]

    def work(_):
        for _ in range(100):
            run(graph, args, mode)
    run_threads(work)
    np.testing.assert_allclose(v.numpy(), [0.5 * N_THREADS * 100] * 2)


def test_codegen_emits_one_update_per_assign_add():
    v = ag.Variable(0.0)
    def fn(d):
        v.assign_add(d)
    graph, _ = trace(fn, np.float64(1.0))
    source = codegen.source_of(graph)
    assert source.count("k_update_variable(") == 1
    assert "k_read_variable(" not in source   # no separate read to race with


# -- the update means what a read, an add and an assign meant ----------------------------

DTYPE_CASES = [
    (np.int64, 3, 2),
    (np.int64, np.arange(3), np.int64(5)),
    (np.float32, np.float32(1.25), 0.1),            # a weak Python float: computed in float32
    (np.float32, np.float32(1.25), np.float64(0.1)),  # strong: float64, stored as float32
    (np.int32, np.int32(7), np.int64(3)),
    (np.float64, np.ones((2, 3)), np.arange(3.0)),   # broadcast delta
    (np.float64, 2.5, True),
    (np.complex128, 1 + 2j, 0.5),
]


@pytest.mark.parametrize("dtype,initial,delta", DTYPE_CASES)
@pytest.mark.parametrize("method", ["assign_add", "assign_sub"])
def test_traced_update_matches_eager_update(dtype, initial, delta, method):
    eager = ag.Variable(initial, dtype=dtype)
    getattr(eager, method)(delta)
    traced = ag.Variable(initial, dtype=dtype)

    @ag.function
    def f():
        getattr(traced, method)(delta)
        return traced.read_value()
    got = f()
    assert got.dtype == eager.numpy().dtype == np.dtype(dtype)
    np.testing.assert_array_equal(np.asarray(got), eager.numpy())
    np.testing.assert_array_equal(traced.numpy(), eager.numpy())


def test_traced_update_with_a_tensor_delta_matches_eager():
    v = ag.Variable(np.zeros(3, np.float32))
    @ag.function
    def f(d):
        v.assign_add(d * 2)
    f(np.array([1.0, 2.0, 3.0]))   # a float64 delta into float32: same kind, stored as float32
    w = ag.Variable(np.zeros(3, np.float32))
    w.assign_add(np.array([1.0, 2.0, 3.0]) * 2)
    np.testing.assert_array_equal(v.numpy(), w.numpy())
    assert v.numpy().dtype == np.float32


def test_update_refusals_are_the_same_as_eager():
    v = ag.Variable(np.zeros(3, np.int64))
    with pytest.raises(StagingError, match="dtype float64"):
        v.assign_add(np.ones(3))
    for method, delta, error, match in [
            ("assign_add", np.ones(3), StagingError, "dtype float64"),
            ("assign_sub", np.ones((2, 3), np.int64), StagingError, "shape"),
            ("assign_add", np.ones(4, np.int64), ValueError, "broadcast")]:
        with pytest.raises(error, match=match):   # eagerly
            getattr(v, method)(delta)

        @ag.function
        def f():
            getattr(v, method)(delta)
        with pytest.raises(error, match=match):   # while tracing
            f()
    np.testing.assert_array_equal(v.numpy(), np.zeros(3))


def test_variable_with_a_lock_can_still_be_copied():
    import copy
    v = ag.Variable(np.arange(3.0), name="w")
    w = copy.copy(v)
    w.assign_add(1.0)
    np.testing.assert_array_equal(v.numpy(), np.arange(3.0))
    np.testing.assert_array_equal(w.numpy(), np.arange(3.0) + 1)
    assert w._lock is not v._lock


@pytest.mark.parametrize("mode", MODES)
def test_reads_around_updates_stay_ordered(mode):
    """An update is a write: the optimiser never merges the reads before and after it."""
    v = ag.Variable(np.float64(1.0))

    def fn(d):
        a = v.read_value()
        v.assign_add(d)
        b = v.read_value()
        v.assign_sub(d * 3)
        c = v.read_value()
        return a, b, c

    graph, _ = trace(fn, np.float64(2.0))
    assert run(graph, [np.float64(2.0)], mode) == [1.0, 3.0, -3.0]
