"""Compaction amortised (batching/amortised.py): a loop whose finished lanes cannot be
seen keeps them, frozen, until the running ones fall below KEEP_ABOVE of those carried.
Results equal the elements; the body's executions are counted: at most 1/KEEP_ABOVE of
the sum of trip counts."""


import numpy as np

import autograph as ag
from autograph.batching import amortised
from autograph.runtime.exec import interpreter
from benchmarks.kernel_counts import collatz, counting


def batched_graph(fn, *args, amortised_loops, **kw):
    """The batched graph, checking how many loops were amortised while it was built."""
    calls = []
    real = amortised.amortised

    def spy(*a):
        calls.append(1)
        return real(*a)
    amortised.amortised = spy
    try:
        graph = ag.function(ag.vmap(fn, **kw)).get_concrete_function(*args).graph
    finally:
        amortised.amortised = real
    assert len(calls) == amortised_loops
    return graph


def test_collatz_equals_the_elements_within_the_documented_work():
    starts = np.arange(1, 3001, dtype=np.int64)
    trips = np.array([collatz(int(n)) for n in starts])
    graph = batched_graph(collatz, starts, amortised_loops=1)
    with counting("remainder") as seen:     # once per iteration of the body
        (out,) = interpreter.run(graph, [starts])
    np.testing.assert_array_equal(out, trips)
    assert trips.sum() <= sum(seen) <= trips.sum() / amortised.KEEP_ABOVE
    compactions = sum(1 for n in graph.walk() if n.op == "nonzero")
    assert compactions <= 4      # staged once in the loop (plus the start), not per lane
    np.testing.assert_array_equal(ag.vmap(collatz)(starts), trips)   # codegen too


def test_a_per_lane_range_and_batched_captures():
    def f(x, n, m):
        k = 0
        for i in range(n):          # a per-lane limit
            x = (x * 3 + m) % 1000
            k = k + (x & 1)
        return x, k
    x = np.arange(20, dtype=np.int64) * 7
    n = np.arange(20, dtype=np.int64) % 6 * 4
    m = np.arange(20, dtype=np.int64) - 10
    graph = batched_graph(f, x, n, m, amortised_loops=1)
    assert any(node.op == "nonzero" for node in graph.walk())
    got = ag.vmap(f)(x, n, m)
    want = [f(int(a), int(b), int(c)) for a, b, c in zip(x, n, m)]
    np.testing.assert_array_equal(got[0], [a for a, _ in want])
    np.testing.assert_array_equal(got[1], [b for _, b in want])
    got = ag.vmap(f, in_axes=(0, 0, None))(x, n, np.int64(3))
    want = [f(int(a), int(b), 3) for a, b in zip(x, n)]
    np.testing.assert_array_equal(got[0], [a for a, _ in want])


def test_a_loop_that_is_not_warning_free_still_compacts_every_iteration():
    def f(x):
        while x > 1.0:
            x = np.sqrt(x) - 0.5      # float: a finished lane's sqrt could warn
        return x
    xs = np.linspace(0.5, 50.0, 40)
    with counting("sqrt") as seen:
        (out,) = interpreter.run(batched_graph(f, xs, amortised_loops=0), [xs])
    want = [f(x) for x in xs]
    np.testing.assert_allclose(out, want, rtol=1e-12)
    trips = []
    for x in xs:
        t = 0
        while x > 1.0:
            x, t = np.sqrt(x) - 0.5, t + 1
        trips.append(t)
    assert sum(seen) == sum(trips)      # exactly: no finished lane runs


def test_vector_loop_variables_are_frozen_per_lane():
    def f(v, n):
        while n > 0:
            v = v * 3 % 7 + n
            n = n - 1
        return v, n
    v = np.arange(30, dtype=np.int64).reshape(10, 3)
    n = np.array([0, 5, 1, 9, 2, 2, 7, 0, 3, 4], dtype=np.int64)
    graph = batched_graph(f, v, n, amortised_loops=1)
    got = interpreter.run(graph, [v, n])
    want = [f(v[k], int(n[k])) for k in range(10)]
    np.testing.assert_array_equal(got[0], np.stack([a for a, _ in want]))
    np.testing.assert_array_equal(got[1], [b for _, b in want])
