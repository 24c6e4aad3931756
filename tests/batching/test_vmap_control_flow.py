"""vmap through control flow: a lane runs only what its own value runs.

Work is counted, not timed: the kernel of a primitive the loop body holds once is wrapped to
count the lanes it sees, so the body's executions are summed over the whole run."""

import contextlib
import signal

import numpy as np
import pytest

import autograph as ag
from autograph.batching import amortised, loops
from autograph.runtime.exec import interpreter
from benchmarks.kernel_counts import collatz, counting



@contextlib.contextmanager
def deadline(seconds):
    def fail(*_):
        raise TimeoutError("did not terminate")
    old = signal.signal(signal.SIGALRM, fail)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def test_collatz_matches_the_loop_and_runs_within_the_documented_work():
    starts = np.arange(1, 2001, dtype=np.int64)
    trips = np.array([collatz(int(n)) for n in starts])
    vm = ag.function(ag.vmap(collatz))
    np.testing.assert_array_equal(vm(starts), trips)           # compiled (codegen)
    graph = vm.get_concrete_function(starts).graph
    with counting("remainder") as seen:                         # `n % 2`, once per step
        (out,) = interpreter.run(graph, [starts])
    np.testing.assert_array_equal(out, trips)
    # collatz's body is warning-free integer arithmetic: compaction is amortised, so
    # finished lanes wait for the next compaction (amortised.py); exact compaction of a
    # loop that is not: test_vmap_amortised.py
    assert trips.sum() <= sum(seen) <= trips.sum() / amortised.KEEP_ABOVE <= 1.2 * trips.sum()


def test_masking_would_run_max_trips_times_lanes():
    # the tiny-batch fallback, on a total loop: every lane runs until the last stops
    def halve(x):
        while x > 1.0:
            x = x * 0.5
        return x
    xs = np.array([1.5, 40.0, 3.0, 1000.0])
    vm = ag.function(ag.vmap(halve))
    graph = vm.get_concrete_function(xs).graph
    with counting("multiply") as seen:
        (out,) = interpreter.run(graph, [xs])
    np.testing.assert_array_equal(out, [halve(x) for x in xs])
    trips = [int(np.ceil(np.log2(x))) for x in xs]
    assert sum(seen) == max(trips) * len(xs)          # masked: max(trips) * lanes
    xs = np.linspace(1.5, 1000, loops.MASK_MAX_LANES + 1)
    graph = ag.function(ag.vmap(halve)).get_concrete_function(xs).graph
    with counting("multiply") as seen:
        (out,) = interpreter.run(graph, [xs])
    np.testing.assert_array_equal(out, [halve(x) for x in xs])
    assert sum(seen) == sum(int(np.ceil(np.log2(x))) for x in xs)   # compacted


def test_jax_2947_a_lane_stops_under_its_own_predicate():
    # after its outer loop ends, a lane's value makes the inner loop endless: a finished
    # lane that kept running the body (masking) would never stop
    def f(x):
        total = 0
        while x > 0:
            k = x
            while k != 0:          # ends only for k >= 0 (steps of 2 from an even x)
                k = k - 2
                total += 1
            x = x - 2
        return total
    xs = np.array([0, 2, 4, 6, 10], dtype=np.int64)
    with deadline(60):
        got = ag.vmap(f)(xs)
    np.testing.assert_array_equal(got, [f(int(x)) for x in xs])


def test_cond_runs_one_branch_per_lane():
    # the other branch would never end for this lane's value (JAX runs both: jax#8409)
    def f(x):
        if x >= 0:
            while x % 3 != 0:
                x = x + 1
        else:
            x = -x
        return x
    xs = np.array([-5, 4, -1, 7, 0, 8], dtype=np.int64)
    with deadline(60):
        got = ag.vmap(f)(xs)
    np.testing.assert_array_equal(got, [f(int(x)) for x in xs])


def test_unbatched_predicate_keeps_one_loop():
    def f(x, n):
        i = 0
        while i < n:
            x = np.sin(x) + i
            i += 1
        return x
    x = np.random.default_rng(1).standard_normal((6, 2))
    got = ag.vmap(f, in_axes=(0, None))(x, np.int64(4))
    np.testing.assert_allclose(got, [f(xi, 4) for xi in x])
    graph = ag.function(ag.vmap(f, in_axes=(0, None))).get_concrete_function(
        x, np.int64(4)).graph
    assert not any(n.op == "nonzero" for n in graph.walk())   # no compaction needed


def test_loop_with_per_lane_reads_of_an_array_and_maximum_iterations():
    def f(data, start):
        i, s = start, 0.0
        while data[i] > 0 and i < 9:
            s += data[i]
            i += 1
        return s, i
    rng = np.random.default_rng(2)
    data = rng.standard_normal((7, 10))
    starts = rng.integers(0, 5, 7)
    s, i = ag.vmap(f)(data, starts)
    want = [f(d, int(k)) for d, k in zip(data, starts)]
    np.testing.assert_allclose(s, [w[0] for w in want])
    np.testing.assert_array_equal(i, [w[1] for w in want])
    s, i = ag.vmap(f, in_axes=(None, 0))(data[0], starts)
    want = [f(data[0], int(k)) for k in starts]
    np.testing.assert_allclose(s, [w[0] for w in want])


def test_while_loop_maximum_iterations_per_lane():
    def f(x):
        return ag.while_loop(lambda v: v < 100.0, lambda v: v * 2.0 + 1.0, [x],
                             maximum_iterations=5)[0]
    xs = np.array([0.0, 1.0, 50.0, 300.0, 7.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    got = ag.vmap(f)(xs)
    np.testing.assert_allclose(got, [f(x) for x in xs])


@pytest.mark.parametrize("n", [3, 12])
def test_writes_at_per_lane_positions(n):
    def f(x):
        out = np.zeros(6)
        i = 0
        while x > 1:
            x = x // 2
            out[i] = x
            i += 1
        return out
    xs = np.arange(2, 2 + n, dtype=np.int64) * 3
    np.testing.assert_array_equal(ag.vmap(f)(xs), [f(int(x)) for x in xs])
